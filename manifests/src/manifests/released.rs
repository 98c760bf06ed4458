//! The breaking-change gate on disk: the CRDs of the last release in [`RELEASED_DIR`]
//! (written by `make release-crds`, [`Manifests::release`]), the changes the project
//! allows in [`ALLOW_FILE`], and [`Manifests::gate`], which compares the rendered CRDs
//! with the released ones ([`crate::compat`]) before anything is written.
//!
//! The allowances live in a file beside the CRDs they relax, not in PROJECT: they are
//! about one release's CRDs and go with them (`make release-crds` clears them), the
//! manifests generator reads them without knowing PROJECT's format, and a reviewer sees
//! each one, with its reason, as a line of the diff.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::compat::{self, Allowance, Breaking, Finding};

use super::error::{io_err, read_if_exists};
use super::{CRD_DIR, Error, Manifests};

/// Where `make release-crds` keeps the CRDs of the last release, relative to the project
/// root; `make manifests` compares with them when there are any.
pub const RELEASED_DIR: &str = "config/crd/released";
/// The breaking changes the project allows, one `<rule>@<location>` a line.
pub const ALLOW_FILE: &str = "config/crd/released/allow-breaking.txt";

const ALLOW_FILE_HEADER: &str = "\
# Breaking changes to the CRDs released in this directory that `make manifests` allows:
# one <rule>@<location> a line, as its error message gives them, and why after a #.
# `make manifests ALLOW_BREAKING=...` adds lines; `make release-crds` clears them.
";

/// What the gate found: nothing to compare with, or how many CRDs it compared and what
/// it let through.
#[derive(Debug, Default)]
pub(super) struct Gate {
    /// Released CRDs compared (0: none, no gate).
    pub compared: usize,
    /// Findings that an allowance accepted.
    pub allowed: Vec<Finding>,
    /// Allowances in [`ALLOW_FILE`] that accept nothing any more.
    pub unused: Vec<Allowance>,
    /// Changes that break no stored object but are worth a look (see [`compat::Rule::breaks`]).
    pub warnings: Vec<Finding>,
}

impl Gate {
    /// The line the summary gets, if the gate ran.
    pub fn note(&self) -> Option<String> {
        if self.compared == 0 {
            return None;
        }
        let mut note = format!(
            "compared {} CRD{} with {RELEASED_DIR}/: ",
            self.compared,
            if self.compared == 1 { "" } else { "s" }
        );
        match self.allowed.len() {
            0 => note.push_str("no breaking change"),
            1 => note.push_str(&format!("1 breaking change, allowed in {ALLOW_FILE}")),
            n => note.push_str(&format!("{n} breaking changes, allowed in {ALLOW_FILE}")),
        }
        for warning in &self.warnings {
            note.push_str(&format!("\nnote: {}", compat::Line(warning)));
        }
        for unused in &self.unused {
            note.push_str(&format!(
                "\nnote: {ALLOW_FILE} allows {unused}, which is no change any more; remove the line"
            ));
        }
        Some(note)
    }
}

impl Manifests {
    /// Compares the CRDs among `files` (as [`Manifests::render`] gives them) with the
    /// released ones under `project_root`: fails with [`Error::Breaking`] on a change that
    /// neither [`ALLOW_FILE`] nor `extra` allows, and with [`Error::UnusedAllowance`] on
    /// an `extra` allowance that accepts no change. No released CRDs: no gate.
    pub(super) fn gate(
        project_root: &Path,
        files: &BTreeMap<PathBuf, String>,
        extra: &[Allowance],
    ) -> Result<Gate, Error> {
        let released = released_crds(project_root)?;
        let mut findings = Vec::new();
        if !released.is_empty() {
            let mut rendered = BTreeMap::new();
            for (path, text) in files.iter().filter(|(p, _)| p.starts_with(CRD_DIR)) {
                let crd = parse_crd(text).map_err(|reason| Error::InvalidCrd {
                    crd: path.display().to_string(),
                    reason,
                })?;
                rendered.insert(crd.metadata.name.clone().unwrap_or_default(), crd);
            }
            for (_, old) in &released {
                match rendered.get(old.metadata.name.as_deref().unwrap_or_default()) {
                    Some(new) => findings.extend(compat::compare(old, new)),
                    None => findings.push(compat::removed(old)),
                }
            }
        }
        let (findings, warnings): (Vec<Finding>, Vec<Finding>) =
            findings.into_iter().partition(|f| f.rule.breaks());
        let recorded = allowances(project_root)?;
        if let Some(unmatched) = extra
            .iter()
            .find(|a| !findings.iter().any(|f| a.accepts(f)))
        {
            return Err(Error::UnusedAllowance {
                allowance: unmatched.clone(),
                findings: findings.iter().map(|f| f.allowance().to_string()).collect(),
            });
        }
        let (allowed, breaking): (Vec<Finding>, Vec<Finding>) = findings
            .into_iter()
            .partition(|f| recorded.iter().chain(extra).any(|a| a.accepts(f)));
        if !breaking.is_empty() {
            return Err(Error::Breaking(Breaking {
                released: format!("{RELEASED_DIR}/"),
                allow_file: ALLOW_FILE.to_owned(),
                findings: breaking,
            }));
        }
        let unused = recorded
            .into_iter()
            .filter(|a| !allowed.iter().any(|f| a.accepts(f)))
            .collect();
        Ok(Gate {
            compared: released.len(),
            allowed,
            unused,
            warnings,
        })
    }

    /// `make release-crds`: makes the CRDs `make manifests` writes the released ones,
    /// removes released CRDs no longer rendered and clears [`ALLOW_FILE`]. Run after a
    /// successful [`Manifests::write`], so the release passed the gate.
    pub fn release(&self, project_root: &Path) -> Result<Vec<PathBuf>, Error> {
        let files = self.render()?;
        let dir = project_root.join(RELEASED_DIR);
        std::fs::create_dir_all(&dir).map_err(io_err("create", &dir))?;
        let mut released = Vec::new();
        for (rel, content) in files.iter().filter(|(p, _)| p.starts_with(CRD_DIR)) {
            let name = rel.file_name().expect("a CRD file has a name");
            let target = Path::new(RELEASED_DIR).join(name);
            let path = project_root.join(&target);
            std::fs::write(&path, content).map_err(io_err("write", &path))?;
            released.push(target);
        }
        for (rel, _) in released_crds(project_root)? {
            if !released.contains(&rel) {
                let path = project_root.join(&rel);
                std::fs::remove_file(&path).map_err(io_err("remove", &path))?;
            }
        }
        let allow = project_root.join(ALLOW_FILE);
        match std::fs::remove_file(&allow) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => {
                return Err(io_err("remove", &allow)(err));
            }
            _ => {}
        }
        Ok(released)
    }
}

/// Adds `new` to [`ALLOW_FILE`] (created with its header), skipping what it holds.
pub(super) fn record(project_root: &Path, new: &[Allowance]) -> Result<(), Error> {
    if new.is_empty() {
        return Ok(());
    }
    let path = project_root.join(ALLOW_FILE);
    let mut text = read_if_exists(&path)?.unwrap_or_else(|| ALLOW_FILE_HEADER.to_owned());
    let recorded = allowances(project_root)?;
    for allowance in new {
        if !recorded.contains(allowance) {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("{allowance}\n"));
        }
    }
    std::fs::write(&path, text).map_err(io_err("write", &path))
}

/// The `*.yaml` files of [`RELEASED_DIR`], path relative to the project root, each a CRD.
fn released_crds(root: &Path) -> Result<Vec<(PathBuf, CustomResourceDefinition)>, Error> {
    let dir = root.join(RELEASED_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(io_err("list", &dir)(err)),
    };
    let mut crds = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err("list", &dir))?;
        let rel = Path::new(RELEASED_DIR).join(entry.file_name());
        if rel.extension().is_none_or(|e| e != "yaml")
            || !entry.file_type().is_ok_and(|t| t.is_file())
        {
            continue;
        }
        let path = root.join(&rel);
        let text = std::fs::read_to_string(&path).map_err(io_err("read", &path))?;
        let crd = parse_crd(&text).map_err(|reason| Error::Released {
            path: rel.clone(),
            reason,
        })?;
        crds.push((rel, crd));
    }
    crds.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(crds)
}

fn parse_crd(text: &str) -> Result<CustomResourceDefinition, String> {
    let crd: CustomResourceDefinition = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    if crd.metadata.name.as_deref().unwrap_or_default().is_empty() {
        return Err("it has no metadata.name".to_owned());
    }
    Ok(crd)
}

/// The allowances of [`ALLOW_FILE`]: a line each, `#` to the end of a line a comment.
fn allowances(root: &Path) -> Result<Vec<Allowance>, Error> {
    let path = root.join(ALLOW_FILE);
    let Some(text) = read_if_exists(&path)? else {
        return Ok(Vec::new());
    };
    let mut allowances = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let allowance = line.parse().map_err(|source| Error::AllowFile {
            path: PathBuf::from(ALLOW_FILE),
            line: n + 1,
            source,
        })?;
        allowances.push(allowance);
    }
    Ok(allowances)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The manifests of a Widget CRD whose `spec` has the given properties.
    fn widgets(properties: Value) -> Manifests {
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": properties},
                    }}},
                }],
            },
        }))
        .unwrap();
        Manifests::new(vec![Ok(crd.into())], vec![])
    }

    fn run(m: &Manifests, dir: &Path, args: &[&str]) -> Result<String, Error> {
        let dir = dir.display().to_string();
        let args = ["--dir", dir.as_str()]
            .into_iter()
            .chain(args.iter().copied())
            .map(str::to_owned);
        m.run(args)
    }

    const BASE: &str = "config/crd/bases/example.com_widgets.yaml";

    #[test]
    fn the_gate_from_release_to_allowance() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let v1 = widgets(json!({"size": {"type": "integer"}, "mode": {"type": "string"}}));
        // No released CRDs: no gate, whatever changes.
        run(&v1, root, &[]).unwrap();
        let summary = run(&widgets(json!({})), root, &[]).unwrap();
        assert!(!summary.contains("compared"), "{summary}");
        assert!(!root.join(RELEASED_DIR).exists());

        let summary = run(&v1, root, &["--release-crds"]).unwrap();
        assert!(
            summary.ends_with("released 1 CRD to config/crd/released/: `make manifests` now fails on breaking changes to them"),
            "{summary}"
        );
        let released =
            std::fs::read_to_string(root.join(RELEASED_DIR).join("example.com_widgets.yaml"))
                .unwrap();
        assert_eq!(released, std::fs::read_to_string(root.join(BASE)).unwrap());
        let summary = run(&v1, root, &[]).unwrap();
        assert!(
            summary.contains("note: compared 1 CRD with config/crd/released/: no breaking change"),
            "{summary}"
        );

        // A removed field fails the run and writes nothing; --check fails too.
        let v2 = widgets(json!({"mode": {"type": "string"}}));
        let err = run(&v2, root, &[]).unwrap_err().to_string();
        let key = "field-removed@widgets.example.com/v1:.spec.size";
        assert!(err.starts_with("1 breaking change to the CRDs released in config/crd/released/:\n  widgets.example.com v1 .spec.size: field-removed (integer -> absent): "), "{err}");
        assert!(
            err.contains(&format!("or allow it: ALLOW_BREAKING={key}\n")),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(root.join(BASE)).unwrap(), released);
        assert!(matches!(v2.check(root), Err(Error::Breaking(_))));

        // An allowance that matches nothing is refused, naming what would match.
        let err = run(
            &v2,
            root,
            &[
                "--allow-breaking",
                "field-removed@widgets.example.com/v1:.spec.sise",
            ],
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            format!(
                "--allow-breaking field-removed@widgets.example.com/v1:.spec.sise matches no breaking change; the changes found are: {key}"
            )
        );
        let err = run(&v2, root, &["--allow-breaking", "gone@x"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown rule \"gone\""), "{err}");
        let err = run(&v2, root, &["--check", "--allow-breaking", key])
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot be used with"), "{err}");

        // Allowed: recorded, written, and later runs and --check pass.
        let summary = run(&v2, root, &["--allow-breaking", key]).unwrap();
        assert!(
            summary.contains(
                "compared 1 CRD with config/crd/released/: 1 breaking change, allowed in config/crd/released/allow-breaking.txt"
            ),
            "{summary}"
        );
        let allow = std::fs::read_to_string(root.join(ALLOW_FILE)).unwrap();
        assert_eq!(allow, format!("{ALLOW_FILE_HEADER}{key}\n"));
        run(&v2, root, &["--allow-breaking", key]).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join(ALLOW_FILE)).unwrap(),
            allow,
            "recorded once"
        );
        v2.check(root).unwrap();
        std::fs::write(
            root.join(ALLOW_FILE),
            format!("{allow}\n# the field moved to .spec.replicas\n"),
        )
        .unwrap();
        v2.check(root).unwrap();

        // Going back to the released CRD leaves the allowance unused: a note says so.
        let summary = run(&v1, root, &[]).unwrap();
        assert!(
            summary.contains(&format!(
                "note: {ALLOW_FILE} allows {key}, which is no change any more; remove the line"
            )),
            "{summary}"
        );

        // A bad line names the file and line.
        std::fs::write(root.join(ALLOW_FILE), "field-removed\n").unwrap();
        let err = v1.check(root).unwrap_err().to_string();
        assert!(err.starts_with("config/crd/released/allow-breaking.txt:1: \"field-removed\" is not <rule>@<location>"), "{err}");

        // Releasing v2 makes it the baseline and clears the allowances.
        std::fs::write(root.join(ALLOW_FILE), format!("{key}\n")).unwrap();
        run(&v2, root, &["--release-crds"]).unwrap();
        assert!(!root.join(ALLOW_FILE).exists());
        v2.check(root).unwrap();
        assert!(
            matches!(v1.check(root), Err(Error::OutOfDate { .. })),
            "adding a field back breaks nothing"
        );
    }

    #[test]
    fn an_enum_value_added_is_a_note_not_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mode = |values: Value| widgets(json!({"mode": {"type": "string", "enum": values}}));
        run(&mode(json!(["Fast", "Safe"])), root, &["--release-crds"]).unwrap();
        let summary = run(&mode(json!(["Fast", "Safe", "Eco"])), root, &[]).unwrap();
        assert!(
            summary.contains(
                "\nnote: widgets.example.com v1 .spec.mode: enum-value-added ([\"Fast\", \"Safe\"] -> \
                 [\"Fast\", \"Safe\", \"Eco\"] (with [\"Eco\"])): stored objects stay valid"
            ),
            "{summary}"
        );
        let err = run(
            &mode(json!(["Fast", "Eco"])),
            root,
            &[
                "--allow-breaking",
                "enum-value-added@widgets.example.com/v1:.spec.mode",
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.ends_with(
                "the changes found are: enum-value-removed@widgets.example.com/v1:.spec.mode"
            ),
            "a note needs no allowance: {err}"
        );
    }

    #[test]
    fn a_crd_no_longer_rendered_and_a_broken_release() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let v1 = widgets(json!({}));
        run(&v1, root, &["--release-crds"]).unwrap();
        let none = Manifests::new(vec![], vec![]);
        let err = run(&none, root, &[]).unwrap_err().to_string();
        assert!(
            err.contains("  widgets.example.com: crd-removed (versions v1 -> absent): "),
            "{err}"
        );
        let summary = run(
            &none,
            root,
            &["--allow-breaking", "crd-removed@widgets.example.com"],
        )
        .unwrap();
        assert!(
            summary
                .contains("compared 1 CRD with config/crd/released/: 1 breaking change, allowed"),
            "{summary}"
        );
        let released = root.join(RELEASED_DIR).join("example.com_widgets.yaml");
        std::fs::write(&released, "---\nkind: CustomResourceDefinition\n").unwrap();
        let err = run(&v1, root, &[]).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "cannot read the released CRD config/crd/released/example.com_widgets.yaml: "
            ),
            "{err}"
        );
    }
}
