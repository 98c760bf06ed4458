//! What [`super::write`] plans into dist/chart/ beside the templates: the refusals of
//! templates edited by hand or of the user's, Chart.yaml and .helmignore once, values.yaml
//! merged; and `make helm` in the Makefile.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_yaml_ng::Value;

use super::render::Key;
use super::template::owned;
use super::values::{merge_values, values_text};
use crate::scaffold::Changes;

/// Where the chart goes, as kubebuilder's plugin writes it.
pub const CHART_DIR: &str = "dist/chart";
/// The defaults rkb wrote to values.yaml last, to tell them from the user's values.
pub const DEFAULTS_FILE: &str = "dist/chart/.rkb-defaults.yaml";

pub(super) fn chart_yaml(project_name: &str, app_version: &str) -> String {
    format!(
        "# Written once by `rkb edit --plugins helm`; yours to edit (version, description, ...).\n\
         apiVersion: v2\n\
         name: {project_name}\n\
         description: A Helm chart to deploy the {project_name} operator, made by rkb from its config/.\n\
         type: application\n\
         version: 0.1.0\n\
         appVersion: \"{app_version}\"\n"
    )
}

pub(super) const HELMIGNORE: &str = "\
# Patterns to ignore when building packages (helm package). Written once by rkb.
.DS_Store
.git/
.gitignore
*.swp
*.bak
*.tmp
*.orig
*~
.idea/
.vscode/
# The defaults rkb wrote last, which `make helm` tells your values from.
.rkb-defaults.yaml
";

/// The files of `dir` (relative to `root`, `/`-separated), recursively, sorted.
pub(super) fn files_under(root: &Path, dir: &str) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot list {}", d.display())),
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel: PathBuf = path.strip_prefix(root).expect("under the root").into();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What writing the chart did, for the command's report.
#[derive(Debug)]
pub struct Written {
    pub objects: usize,
    pub left_out: Vec<(Key, &'static str)>,
    pub namespace: String,
}

/// Refuses to go on when a template rkb wrote under `templates_dir` was edited by hand, or
/// a file of the user's there has the name of one of `templates`.
pub(super) fn check_existing(
    root: &Path,
    existing: &[String],
    templates_dir: &str,
    templates: &BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let mut edited = Vec::new();
    let mut theirs = Vec::new();
    for file in existing.iter().filter(|f| f.starts_with(templates_dir)) {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        match owned(&text) {
            Some(false) => edited.push(file.clone()),
            None if templates.contains_key(&file[templates_dir.len()..]) => {
                theirs.push(file.clone())
            }
            _ => {}
        }
    }
    if !edited.is_empty() {
        bail!(
            "{} changed by hand since rkb wrote {}: {}.\n  rkb regenerates its templates from \
             config/ and would lose the change, so it writes nothing. Make the change in \
             config/ or values.yaml, or in a template of your own (a new file, without rkb's \
             header), then restore or delete the file and run `make helm` again",
            if edited.len() == 1 {
                "A template was"
            } else {
                "Templates were"
            },
            if edited.len() == 1 { "it" } else { "them" },
            edited.join(", ")
        );
    }
    if !theirs.is_empty() {
        bail!(
            "{} not rkb's (no rkb header) but rkb makes a template of the same name: {}.\n  \
             rkb never overwrites a template of yours; rename it and run `make helm` again",
            if theirs.len() == 1 {
                "A template is"
            } else {
                "Templates are"
            },
            theirs.join(", ")
        );
    }
    Ok(())
}

/// Plans values.yaml, `defaults` merged with the user's values, and the defaults file that
/// tells them apart next time.
pub(super) fn write_values(
    changes: &mut Changes,
    defaults: &Value,
    project_name: &str,
) -> anyhow::Result<()> {
    let values_file = format!("{CHART_DIR}/values.yaml");
    let parse = |rel: &str| -> anyhow::Result<Option<Value>> {
        changes
            .read(rel)?
            .map(|text| {
                serde_yaml_ng::from_str::<Value>(&text).with_context(|| {
                    format!("{rel} is not YAML; fix it, then run `make helm` again")
                })
            })
            .transpose()
    };
    let current = parse(&values_file)?;
    let previous = parse(DEFAULTS_FILE)?;
    let merged = merge_values(defaults, previous.as_ref(), current.as_ref());
    if current.as_ref() != Some(&merged) {
        changes.create(&values_file, values_text(&merged, project_name), true)?;
    }
    let defaults_text = format!(
        "# The default values rkb wrote to values.yaml last: `make helm` keeps a value of\n\
         # values.yaml that differs from its default here, as yours. Written by rkb.\n{}",
        serde_yaml_ng::to_string(defaults)?
    );
    if changes.read(DEFAULTS_FILE)?.as_deref() != Some(defaults_text.as_str()) {
        changes.create(DEFAULTS_FILE, defaults_text, true)?;
    }
    Ok(())
}

/// The Makefile with `make helm` and the chart's regeneration at the end of `make
/// manifests`; `Ok(None)` if it has them already. Errs where it has no `manifests:` rule.
pub fn makefile(text: &str) -> anyhow::Result<Option<String>> {
    const REGENERATE: &str = "\tKUBECTL=$(KUBECTL) $(RKB) edit --plugins helm";
    if text.lines().any(|l| l == REGENERATE) {
        return Ok(None);
    }
    let lines: Vec<&str> = text.lines().collect();
    let rule = lines
        .iter()
        .position(|l| l.starts_with("manifests:"))
        .context("the Makefile has no `manifests:` rule")?;
    let end = (rule + 1..lines.len())
        .find(|&i| !lines[i].starts_with('\t'))
        .unwrap_or(lines.len());
    let mut out: Vec<String> = Vec::new();
    let has = |var: &str| lines.iter().any(|l| l.starts_with(var));
    for (i, line) in lines.iter().enumerate() {
        if i == rule.saturating_sub(1) && lines[i].starts_with(".PHONY") {
            // Variables the regeneration needs, for Makefiles older than them.
            for (var, line) in [
                ("RKB ?=", "RKB ?= rkb"),
                ("KUBECTL ?=", "KUBECTL ?= kubectl"),
            ] {
                if !has(var) {
                    out.push(line.into());
                }
            }
        }
        // The regeneration runs rkb: where the Makefile installs it on first use
        // (`RKB_TOOL`), manifests needs it first.
        if i == rule && has("RKB_TOOL =") && !line.contains("$(RKB_TOOL)") {
            out.push(line.replacen("manifests:", "manifests: $(RKB_TOOL)", 1));
        } else {
            out.push((*line).into());
        }
        if i + 1 == end {
            out.push(REGENERATE.into());
            out.push(String::new());
            out.push(".PHONY: helm".into());
            out.push(
                "helm: manifests ## Regenerate the Helm chart in dist/chart/ from config/ (as `make manifests` does): your values and your own templates stay."
                    .into(),
            );
        }
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    Ok(Some(joined))
}
