//! A chart template in the making: an object's lines with the conditions under which each
//! is rendered, merged from the renders with every section on and with each one off, and
//! written out as Helm text or evaluated at given values.

use std::fmt::Write as _;

use anyhow::bail;
use serde_yaml_ng::Value;

use super::render::Key;
use super::sections::{Cond, Section};

/// One line of a template: its Helm text, the text it stands for at the defaults (what
/// kustomize printed; none for a line only values add), and when it is rendered.
#[derive(Debug, Clone)]
pub(super) struct Piece {
    pub text: String,
    pub plain: Vec<String>,
    pub conds: Vec<Cond>,
}

impl Piece {
    pub(super) fn line(text: &str) -> Self {
        Piece {
            text: text.into(),
            plain: vec![text.into()],
            conds: Vec::new(),
        }
    }

    pub(super) fn added(text: String) -> Self {
        Piece {
            text,
            plain: Vec::new(),
            conds: Vec::new(),
        }
    }

    pub(super) fn indent(&self) -> usize {
        self.text.len() - self.text.trim_start().len()
    }
}

/// A chart template in the making: one object, its condition and its lines.
#[derive(Debug, Clone)]
pub(super) struct Template {
    pub key: Key,
    pub conds: Vec<Cond>,
    pub pieces: Vec<Piece>,
}

impl Template {
    /// The template's text: Helm `if` blocks around the lines that have conditions.
    pub(super) fn helm(&self) -> String {
        let mut out = String::new();
        let object = Cond::all(&self.conds);
        if let Some(c) = &object {
            writeln!(out, "{{{{- if {} }}}}", c.helm()).unwrap();
        }
        let mut open: Option<String> = None;
        for piece in &self.pieces {
            let cond = Cond::all(&piece.conds).map(|c| c.helm());
            if cond != open {
                if open.is_some() {
                    out.push_str("{{- end }}\n");
                }
                if let Some(c) = &cond {
                    writeln!(out, "{{{{- if {c} }}}}").unwrap();
                }
                open = cond;
            }
            out.push_str(&piece.text);
            out.push('\n');
        }
        if open.is_some() {
            out.push_str("{{- end }}\n");
        }
        if object.is_some() {
            out.push_str("{{- end }}\n");
        }
        out
    }

    /// What the template renders to at `values`, as kustomize printed it (None: nothing).
    pub(super) fn plain(&self, values: &Value) -> Option<String> {
        if !self.conds.iter().all(|c| c.eval(values)) {
            return None;
        }
        let mut out = String::new();
        for piece in &self.pieces {
            if piece.conds.iter().all(|c| c.eval(values)) {
                for line in &piece.plain {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        Some(out)
    }
}

/// Lines a section's absence puts instead of lines of the text with every section on:
/// (from, to) of that text, the lines, and the sections whose absence brings them.
type Alternative = ((usize, usize), Vec<String>, Vec<Section>);

/// Merges an object's text with every section on (`full`) and with each section off
/// (`without`, `None` where the object is not there) into one template.
pub(super) fn merge(
    key: &Key,
    full: &str,
    without: &[(Section, Option<&str>)],
) -> anyhow::Result<Template> {
    let lines: Vec<&str> = full.lines().collect();
    let mut conds: Vec<Vec<Cond>> = vec![Vec::new(); lines.len()];
    let mut object = Vec::new();
    let mut alternatives: Vec<Alternative> = Vec::new();
    for (section, text) in without {
        let Some(text) = text else {
            object.push(section.cond());
            continue;
        };
        let diff = similar::TextDiff::from_lines(full, *text);
        let other: Vec<&str> = text.lines().collect();
        let ops = diff.ops();
        for (k, op) in ops.iter().enumerate() {
            let (mut old, new) = (op.old_range(), op.new_range());
            match op {
                similar::DiffOp::Equal { .. } => continue,
                similar::DiffOp::Delete { .. } => {
                    let equal = |op: Option<&similar::DiffOp>| {
                        op.filter(|op| matches!(op, similar::DiffOp::Equal { .. }))
                            .map(|op| op.old_range())
                    };
                    let lo = equal(k.checked_sub(1).and_then(|k| ops.get(k)))
                        .map_or(old.start, |r| r.start);
                    let hi = equal(ops.get(k + 1)).map_or(old.end, |r| r.end);
                    old = slide(&lines, old, lo, hi);
                }
                _ => {}
            }
            for c in &mut conds[old.clone()] {
                c.push(section.cond());
            }
            if !new.is_empty() {
                let replacement: Vec<String> = other[new].iter().map(|l| (*l).to_owned()).collect();
                match alternatives.iter_mut().find(|(range, lines, _)| {
                    *range == (old.start, old.end) && *lines == replacement
                }) {
                    Some((_, _, sections)) => sections.push(*section),
                    None => alternatives.push(((old.start, old.end), replacement, vec![*section])),
                }
            }
        }
    }
    for (i, ((a, b), _, s)) in alternatives.iter().enumerate() {
        for ((c, d), _, t) in &alternatives[i + 1..] {
            if (a < d && c < b) || (a == b && c < a && a < d) || (c == d && a < c && c < b) {
                bail!(
                    "{} {}: switching [{:?}] and [{:?}] off changes the same lines in different \
                     ways, which rkb cannot express as values; make their patches touch \
                     different lines",
                    key.kind,
                    key.name,
                    s,
                    t
                );
            }
        }
    }
    let mut pieces = Vec::new();
    let emit_at = |at: usize, pieces: &mut Vec<Piece>| {
        for ((_, b), replacement, sections) in &alternatives {
            if *b == at {
                let all: Vec<Cond> = sections.iter().map(|s| s.cond()).collect();
                let shown = Cond::Not(Box::new(Cond::all(&all).expect("one section at least")));
                for line in replacement {
                    let mut piece = Piece::line(line);
                    piece.conds.push(shown.clone());
                    pieces.push(piece);
                }
            }
        }
    };
    for (i, line) in lines.iter().enumerate() {
        emit_at(i, &mut pieces);
        let mut piece = Piece::line(line);
        piece.conds = conds[i].clone();
        pieces.push(piece);
    }
    emit_at(lines.len(), &mut pieces);
    Ok(Template {
        key: key.clone(),
        conds: object,
        pieces,
    })
}

/// Where a block of deleted `lines` is best placed among the equivalent places between
/// `lo` and `hi` (a block whose last line equals the line before it may move up, and so
/// on): where it starts at the outermost YAML level, a list item rather than the tail of
/// the one before (`readOnly: true` / `- mountPath: b` / `name: b` is the same deletion
/// as `- mountPath: b` / `name: b` / `readOnly: true`, but only the second is whole items).
fn slide(
    lines: &[&str],
    block: std::ops::Range<usize>,
    lo: usize,
    hi: usize,
) -> std::ops::Range<usize> {
    let (mut a, mut b) = (block.start, block.end);
    while a > lo && lines[a - 1] == lines[b - 1] {
        a -= 1;
        b -= 1;
    }
    let score = |a: usize| {
        let line = lines[a];
        let indent = line.len() - line.trim_start().len();
        (indent, !line.trim_start().starts_with("- "))
    };
    let mut best = a..b;
    while b < hi && lines[a] == lines[b] {
        a += 1;
        b += 1;
        if score(a) < score(best.start) {
            best = a..b;
        }
    }
    best
}

/// A CRD is installed while `crd.enable`, and kept on uninstall while `crd.keep`
/// (Helm's `helm.sh/resource-policy: keep`: deleting a CRD deletes every object of it).
pub(super) fn crd_template(template: &mut Template) {
    template
        .conds
        .push(Cond::Value(".Values.crd.enable".into()));
    let keep = Cond::Value(".Values.crd.keep".into());
    let pieces = &mut template.pieces;
    let Some(metadata) = pieces.iter().position(|p| p.text == "metadata:") else {
        return;
    };
    let mut line = Piece::added("    helm.sh/resource-policy: keep".into());
    line.conds.push(keep.clone());
    match pieces.get_mut(metadata + 1) {
        Some(next) if next.text == "  annotations:" => {
            if let Some(when) = Cond::all(&next.conds) {
                next.conds = vec![Cond::Or(vec![keep, when])];
            }
            pieces.insert(metadata + 2, line);
        }
        _ => {
            let mut head = Piece::added("  annotations:".into());
            head.conds.push(keep);
            pieces.splice(metadata + 1..metadata + 1, [head, line]);
        }
    }
}

/// A line of config/default made a line of the chart: the manager's namespace becomes
/// the release's, and the objects are managed by Helm, not kustomize.
pub(super) fn helm_line(line: &str, namespace: &str) -> String {
    let line = line.replace(
        "app.kubernetes.io/managed-by: kustomize",
        "app.kubernetes.io/managed-by: {{ .Release.Service }}",
    );
    let in_name = |c: char| c.is_ascii_alphanumeric() || c == '-';
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find(namespace) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + namespace.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_none_or(|c| !in_name(c)) && after.is_none_or(|c| !in_name(c)) {
            out.push_str("{{ .Release.Namespace }}");
        } else {
            out.push_str(namespace);
        }
        rest = &rest[at + namespace.len()..];
    }
    out.push_str(rest);
    out
}

/// Where an object's template goes, by what it is: `crd/`, `rbac/`, `manager/`,
/// `metrics/`, `webhook/`, `cert-manager/`, `prometheus/`, `network-policy/`, and
/// `extras/` for objects of the user's own.
pub(super) fn template_path(key: &Key, prefix: &str, namespace: &str) -> String {
    let name = key.name.strip_prefix(prefix).unwrap_or(&key.name);
    let dir = match key.kind.as_str() {
        "CustomResourceDefinition" => "crd",
        "ServiceAccount" | "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => "rbac",
        "Deployment" if name == "controller-manager" => "manager",
        "Service" if name.contains("metrics") => "metrics",
        "Service" if name.contains("webhook") => "webhook",
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => "webhook",
        "Certificate" | "Issuer" => "cert-manager",
        "ServiceMonitor" => "prometheus",
        "NetworkPolicy" => "network-policy",
        _ => "extras",
    };
    let file: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if key.namespace.is_empty() || key.namespace == namespace {
        format!("{dir}/{file}.yaml")
    } else {
        format!("{dir}/{file}.{}.yaml", key.namespace)
    }
}
