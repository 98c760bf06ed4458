//! The optional sections of config/default (`# [METRICS]`, `# [WEBHOOK]`, ...): which
//! lines of the kustomization files each one owns, whether it is on, the same text with
//! sections switched, and the Helm conditions that switch them in the chart.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::bail;
use serde_yaml_ng::Value;

use crate::model;
use crate::scaffold::read_optional;

/// The kustomization files whose `# [SECTION]` lines rkb switches.
pub(super) const KUSTOMIZATIONS: [&str; 2] = [
    model::DEFAULT_KUSTOMIZATION,
    model::PROMETHEUS_KUSTOMIZATION,
];

/// An optional section of config/default, switched by a value of the chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    Metrics,
    MetricsCerts,
    Prometheus,
    NetworkPolicy,
    Webhook,
    CertManager,
    Sharding,
}

pub(super) const SECTIONS: [Section; 7] = [
    Section::Metrics,
    Section::MetricsCerts,
    Section::Prometheus,
    Section::NetworkPolicy,
    Section::Webhook,
    Section::CertManager,
    Section::Sharding,
];

impl Section {
    /// The `# [TAG]` comments that mark its lines.
    pub(super) fn tags(self) -> &'static [&'static str] {
        match self {
            Section::Metrics => &["METRICS"],
            Section::MetricsCerts => &["METRICS-WITH-CERTS", "PROMETHEUS-WITH-CERTS"],
            Section::Prometheus => &["PROMETHEUS"],
            Section::NetworkPolicy => &["NETWORK POLICY"],
            Section::Webhook => &["WEBHOOK"],
            Section::CertManager => &["CERTMANAGER"],
            Section::Sharding => &["SHARDING"],
        }
    }

    /// Its value in values.yaml.
    pub fn path(self) -> [&'static str; 2] {
        match self {
            Section::Metrics => ["metrics", "enable"],
            Section::MetricsCerts => ["metrics", "certManager"],
            Section::Prometheus => ["prometheus", "enable"],
            Section::NetworkPolicy => ["networkPolicy", "enable"],
            Section::Webhook => ["webhook", "enable"],
            Section::CertManager => ["certManager", "enable"],
            Section::Sharding => ["sharding", "enable"],
        }
    }

    pub(super) fn cond(self) -> Cond {
        let [a, b] = self.path();
        Cond::Value(format!(".Values.{a}.{b}"))
    }

    /// The sections that cannot be on without this one.
    pub(super) fn needed_by(self) -> &'static [Section] {
        match self {
            Section::Metrics => &[Section::MetricsCerts, Section::Prometheus],
            Section::Webhook => &[Section::CertManager],
            _ => &[],
        }
    }
}

/// Which lines of a kustomization file belong to which section, and whether each is on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct LineRole {
    pub section: Option<Section>,
    /// `Some(true)` for a YAML line in effect, `Some(false)` for one commented out,
    /// `None` for an explanation or a blank line.
    pub live: Option<bool>,
}

pub(super) fn line_roles(text: &str) -> Vec<LineRole> {
    let mut current: Option<Section> = None;
    // Whether the current section has had a YAML line: a top-level key after one
    // (`replacements:` after the patch lines of [METRICS-WITH-CERTS]) ends the section;
    // before one, commented out (`#patches:` of [PROMETHEUS-WITH-CERTS]), it is the
    // section's own.
    let mut yaml_seen = false;
    let mut roles = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        let none = LineRole {
            section: None,
            live: None,
        };
        if trimmed.is_empty() {
            current = None;
            roles.push(none);
        } else if let Some(rest) = line.strip_prefix("# [") {
            let tag = rest.split(']').next().unwrap_or_default();
            current = SECTIONS.into_iter().find(|s| s.tags().contains(&tag));
            yaml_seen = false;
            roles.push(none);
        } else if line.starts_with("# +rkb:scaffold") {
            current = None;
            roles.push(none);
        } else {
            // `#- ../prometheus`, `#  target:`, `#patches:` are YAML commented out; `# Text`
            // explains.
            let (yaml, live) = match line.strip_prefix('#') {
                Some(rest)
                    if !rest.is_empty()
                        && (rest.starts_with("  ") || !rest.starts_with([' ', '#'])) =>
                {
                    (rest, false)
                }
                Some(_) => {
                    roles.push(none);
                    continue;
                }
                None => (line, true),
            };
            let top_level_key = !yaml.starts_with([' ', '-']);
            if top_level_key && yaml_seen {
                current = None;
            }
            // A key in effect is not switched: a section off leaves it with no items.
            let section = if top_level_key && live { None } else { current };
            yaml_seen = true;
            roles.push(LineRole {
                section: special(yaml, section),
                live: Some(live),
            });
        }
    }
    roles
}

/// `- ../certmanager` is listed under [WEBHOOK] but is the webhook certificate's.
fn special(yaml: &str, current: Option<Section>) -> Option<Section> {
    match current {
        Some(Section::Webhook) if yaml.trim() == "- ../certmanager" => Some(Section::CertManager),
        other => other,
    }
}

/// Which sections the project has, and which of them are on.
pub type States = BTreeMap<Section, bool>;

/// The sections of the project's kustomization files and whether each is on, refusing
/// one that is partly on.
pub(super) fn states(root: &Path) -> anyhow::Result<States> {
    let mut lines: BTreeMap<Section, (usize, usize, Vec<String>)> = BTreeMap::new();
    for file in KUSTOMIZATIONS {
        let Some(text) = read_optional(&root.join(file))? else {
            continue;
        };
        for (n, (line, role)) in text.lines().zip(line_roles(&text)).enumerate() {
            if let (Some(section), Some(live)) = (role.section, role.live) {
                let entry = lines.entry(section).or_default();
                if live {
                    entry.0 += 1;
                } else {
                    entry.1 += 1;
                }
                entry.2.push(format!("{file}:{}: {line}", n + 1));
            }
        }
    }
    let mut states = States::new();
    for (section, (live, commented, where_)) in lines {
        if live > 0 && commented > 0 {
            bail!(
                "the [{}] section is partly switched on: {live} of its lines are in effect and \
                 {commented} commented out, so rkb cannot tell whether the chart should have it \
                 on by default.\n  Switch all of its lines on or all off:\n    {}",
                section.tags().join("]/["),
                where_.join("\n    ")
            );
        }
        states.insert(section, live > 0);
    }
    Ok(states)
}

/// `text` with each section's lines switched as `on` says (sections it does not name stay).
pub(super) fn switched(text: &str, on: &States) -> String {
    let mut out = String::new();
    for (line, role) in text.lines().zip(line_roles(text)) {
        match (role.section.and_then(|s| on.get(&s)), role.live) {
            (Some(true), Some(false)) => out.push_str(&line[1..]),
            (Some(false), Some(true)) => {
                out.push('#');
                out.push_str(line);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// When a line or an object of the chart is rendered: a Helm template condition.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cond {
    Value(String),
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Not(Box<Cond>),
}

impl Cond {
    pub(super) fn all(conds: &[Cond]) -> Option<Cond> {
        match conds {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(Cond::And(many.to_vec())),
        }
    }

    pub(super) fn helm(&self) -> String {
        let operand = |c: &Cond| match c {
            Cond::Value(v) => v.clone(),
            other => format!("({})", other.helm()),
        };
        let list = |op: &str, cs: &[Cond]| {
            let parts: Vec<String> = cs.iter().map(operand).collect();
            format!("{op} {}", parts.join(" "))
        };
        match self {
            Cond::Value(v) => v.clone(),
            Cond::And(cs) => list("and", cs),
            Cond::Or(cs) => list("or", cs),
            Cond::Not(c) => format!("not {}", operand(c)),
        }
    }

    /// The condition at `values` (a missing value is false, as in Helm).
    pub(super) fn eval(&self, values: &Value) -> bool {
        match self {
            Cond::Value(v) => v
                .trim_start_matches(".Values.")
                .split('.')
                .try_fold(values, |v, k| v.get(k))
                .is_some_and(truthy),
            Cond::And(cs) => cs.iter().all(|c| c.eval(values)),
            Cond::Or(cs) => cs.iter().any(|c| c.eval(values)),
            Cond::Not(c) => !c.eval(values),
        }
    }
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Sequence(s) => !s.is_empty(),
        Value::Mapping(m) => !m.is_empty(),
        Value::Tagged(_) => true,
    }
}
