//! config/ rendered as `make deploy` builds it: `kubectl kustomize` of a copy whose
//! sections are switched, read back as one [`Doc`] per object.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};
use serde_yaml_ng::Value;

use super::sections::{KUSTOMIZATIONS, Section, States, states, switched};
use crate::model;
use crate::scaffold::read_optional;

/// The directory every kustomization of a project is in.
const CONFIG: &str = "config";

/// The overlay `make deploy` builds without namespaced RBAC: config/default.
pub(super) fn default_overlay() -> &'static str {
    model::DEFAULT_KUSTOMIZATION
        .strip_suffix("/kustomization.yaml")
        .expect("a kustomization file")
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))?
    {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// The kubectl rkb runs: `$KUBECTL`, else `kubectl` (the Makefile passes its own).
fn kubectl() -> String {
    std::env::var("KUBECTL")
        .ok()
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "kubectl".into())
}

/// The project's deployment as `make deploy` builds it (`config/namespaced-rbac` while it
/// exists, else `config/default`), with its sections switched as `on` says.
pub(super) fn render(root: &Path, on: &States) -> anyhow::Result<String> {
    let copy = tempfile::tempdir().context("cannot make a temporary directory")?;
    copy_dir(&root.join(CONFIG), &copy.path().join(CONFIG))?;
    for file in KUSTOMIZATIONS {
        if let Some(text) = read_optional(&root.join(file))? {
            std::fs::write(copy.path().join(file), switched(&text, on))?;
        }
    }
    let namespaced = root.join(model::NAMESPACED_RBAC).join("kustomization.yaml");
    let overlay = if namespaced.is_file() {
        model::NAMESPACED_RBAC
    } else {
        default_overlay()
    };
    let kubectl = kubectl();
    let output = Command::new(&kubectl)
        .args(["kustomize", overlay])
        .current_dir(copy.path())
        .output()
        .with_context(|| {
            format!(
                "cannot run `{kubectl} kustomize`: the chart is made from what config/ deploys, \
                 as `make deploy` builds it; install kubectl (or set KUBECTL)"
            )
        })?;
    if !output.status.success() {
        let sections: Vec<String> = on
            .iter()
            .map(|(s, on)| format!("{}={on}", s.path().join(".")))
            .collect();
        bail!(
            "`{kubectl} kustomize {overlay}` failed (sections {}):\n{}\n  Fix config/ so that \
             `make deploy` builds (after `make manifests`, which writes the CRDs it lists)",
            sections.join(", "),
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    String::from_utf8(output.stdout).context("kubectl kustomize printed no UTF-8")
}

/// Which object a document is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// One object of a render: its text as kustomize printed it, and its value.
#[derive(Debug, Clone)]
pub(super) struct Doc {
    pub text: String,
    pub value: Value,
}

pub(super) fn docs(yaml: &str) -> anyhow::Result<BTreeMap<Key, Doc>> {
    let mut out = BTreeMap::new();
    let mut chunk = String::new();
    let mut chunks = Vec::new();
    for line in yaml.lines() {
        if line == "---" {
            chunks.push(std::mem::take(&mut chunk));
        } else {
            chunk.push_str(line);
            chunk.push('\n');
        }
    }
    chunks.push(chunk);
    for text in chunks {
        if text.trim().is_empty() {
            continue;
        }
        let value: Value = serde_yaml_ng::from_str(&text).context("kustomize printed bad YAML")?;
        let field = |path: &[&str]| {
            path.iter()
                .try_fold(&value, |v, k| v.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let key = Key {
            kind: field(&["kind"]),
            namespace: field(&["metadata", "namespace"]),
            name: field(&["metadata", "name"]),
        };
        out.insert(key, Doc { text, value });
    }
    Ok(out)
}

/// config/ rendered at the project's own section states (`base`), with every section on
/// (`full`), and with each one off (and the sections that need it).
pub(super) struct Renders {
    pub states: States,
    pub base: BTreeMap<Key, Doc>,
    pub full: BTreeMap<Key, Doc>,
    pub without: Vec<(Section, BTreeMap<Key, Doc>)>,
}

impl Renders {
    pub(super) fn of(root: &Path) -> anyhow::Result<Self> {
        let states = states(root)?;
        let base = docs(&render(root, &states)?)?;
        let all_on: States = states.keys().map(|s| (*s, true)).collect();
        let full = docs(&render(root, &all_on)?)?;
        let mut without = Vec::new();
        for section in states.keys() {
            let mut on = all_on.clone();
            on.insert(*section, false);
            for needing in section.needed_by() {
                if on.contains_key(needing) {
                    on.insert(*needing, false);
                }
            }
            without.push((*section, docs(&render(root, &on)?)?));
        }
        for (section, objects) in &without {
            if let Some(key) = objects.keys().find(|k| !full.contains_key(k)) {
                bail!(
                    "{} {} is deployed only with [{}] off; rkb makes the chart of the objects \
                     each section adds, not of ones it removes",
                    key.kind,
                    key.name,
                    section.tags()[0]
                );
            }
        }
        Ok(Renders {
            states,
            base,
            full,
            without,
        })
    }
}
