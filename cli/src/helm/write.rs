//! dist/chart/ planned into the change set: rkb's templates (with their header and
//! digest), Chart.yaml and .helmignore once, values.yaml merged; and `make helm` in the
//! Makefile.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_yaml_ng::Value;
use sha2::{Digest as _, Sha256};

use super::render::Key;
use super::values::{merge_values, values_text};
use super::{CHART_DIR, Chart, DEFAULTS_FILE, DIGEST, HEADER, chart};
use crate::scaffold::Changes;

/// The header and digest rkb puts on a template of its own.
pub(super) fn with_header(body: &str) -> String {
    format!("{HEADER}\n{DIGEST}{}\n{body}", digest(body))
}

fn digest(body: &str) -> String {
    format!("{:x}", Sha256::digest(body.as_bytes()))
}

/// Whether `text` is a template rkb wrote (`Some`), and if so whether it is as rkb wrote it.
pub fn owned(text: &str) -> Option<bool> {
    let rest = text.strip_prefix(HEADER)?.strip_prefix('\n')?;
    let (line, body) = rest.split_once('\n').unwrap_or((rest, ""));
    let recorded = line.strip_prefix(DIGEST)?;
    Some(recorded == digest(body))
}

fn chart_yaml(project_name: &str, app_version: &str) -> String {
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

const HELMIGNORE: &str = "\
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
fn files_under(root: &Path, dir: &str) -> anyhow::Result<Vec<String>> {
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

/// Plans dist/chart/ into `changes`: the templates rkb owns (refusing to overwrite one
/// edited by hand or a file of the user's of the same name), Chart.yaml and .helmignore
/// when missing, values.yaml merged, and rkb's templates no object needs any more removed.
/// `recorded`: PROJECT records the plugin already (else a chart there is someone else's).
pub fn write(changes: &mut Changes, project_name: &str, recorded: bool) -> anyhow::Result<Written> {
    let root = changes.root().to_path_buf();
    let existing = files_under(&root, CHART_DIR)?;
    if !recorded && !existing.is_empty() {
        bail!(
            "{CHART_DIR}/ exists ({} files, e.g. {}) but PROJECT does not record rkb's helm \
             plugin, so it is not a chart rkb made; rkb writes nothing over it.\n  Move it \
             away (or delete it) and run `rkb edit --plugins helm` again",
            existing.len(),
            existing[0]
        );
    }
    let chart = chart(&root)?;
    let templates_dir = format!("{CHART_DIR}/templates/");
    check_existing(&root, &existing, &templates_dir, &chart)?;
    for file in &existing {
        if let Some(rel) = file.strip_prefix(&templates_dir)
            && !chart.templates.contains_key(rel)
            && owned(&std::fs::read_to_string(root.join(file)).unwrap_or_default()) == Some(true)
        {
            changes.remove(file)?;
        }
    }
    for (rel, text) in &chart.templates {
        changes.create(&format!("{templates_dir}{rel}"), text.clone(), true)?;
    }
    let image = &chart.values["manager"]["image"];
    let app_version = image["tag"]
        .as_str()
        .filter(|t| !t.is_empty())
        .unwrap_or("0.1.0");
    for (file, text) in [
        ("Chart.yaml", chart_yaml(project_name, app_version)),
        (".helmignore", HELMIGNORE.to_owned()),
    ] {
        let rel = format!("{CHART_DIR}/{file}");
        if !changes.exists(&rel)? {
            changes.create(&rel, text, false)?;
        }
    }
    write_values(changes, &chart.values, project_name)?;
    Ok(Written {
        objects: chart.templates.len(),
        left_out: chart.left_out,
        namespace: chart.namespace,
    })
}

/// Refuses to go on when a template rkb wrote under `templates_dir` was edited by hand, or
/// a file of the user's there has the name of one of the `chart`'s.
fn check_existing(
    root: &Path,
    existing: &[String],
    templates_dir: &str,
    chart: &Chart,
) -> anyhow::Result<()> {
    let mut edited = Vec::new();
    let mut theirs = Vec::new();
    for file in existing.iter().filter(|f| f.starts_with(templates_dir)) {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        match owned(&text) {
            Some(false) => edited.push(file.clone()),
            None if chart.templates.contains_key(&file[templates_dir.len()..]) => {
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
fn write_values(changes: &mut Changes, defaults: &Value, project_name: &str) -> anyhow::Result<()> {
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
        out.push((*line).into());
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
