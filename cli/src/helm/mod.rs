//! `rkb edit --plugins helm` and `make helm`: a Helm chart in `dist/chart/` made from what
//! `config/` deploys, as kubebuilder's helm/v2-alpha makes one from `make build-installer`.
//!
//! **Where the objects come from.** Not from a second, hand-kept copy of every object:
//! the chart is `kubectl kustomize` of the project's own deployment (`config/default`, or
//! the `config/namespaced-rbac` overlay `make deploy` uses while it exists), so whatever
//! the user changed in `config/` (env, labels, patches, objects of their own) is in it.
//! The CRDs and roles in it are the ones the manifests binary wrote (`make manifests`).
//!
//! **How values switch sections.** `config/default/kustomization.yaml` (and
//! `config/prometheus/kustomization.yaml`) mark each optional section with a `# [NAME]`
//! comment: `[METRICS]`, `[METRICS-WITH-CERTS]` (+ `[PROMETHEUS-WITH-CERTS]`), `[PROMETHEUS]`,
//! `[NETWORK POLICY]`, `[WEBHOOK]` and `[CERTMANAGER]`. rkb renders config/ with every section
//! on, and once more with each section off (in a copy whose lines it comments out), then
//! merges the renders line by line: an object only the section brings is wrapped in
//! `{{- if .Values.<section> }}`, a line only it brings (the manager's
//! `--metrics-cert-path`, a volume) likewise, and a line it replaces gets an `else`.
//! Rendering the merged templates at the project's own switch states (the defaults) must
//! give `kubectl kustomize config/default` back; rkb checks that before writing anything.
//!
//! **What rkb owns.** Every template it writes starts with [`HEADER`] and the digest of
//! what follows; one whose digest no longer matches was edited by hand, and rkb refuses
//! to go on rather than lose the edit. Files without the header (the user's own
//! templates) are never touched; Chart.yaml and .helmignore are written once; values.yaml
//! is merged: values the user changed or added stay, new ones are added, and a default
//! the user never changed follows `config/` (the defaults rkb wrote last are kept in
//! [`DEFAULTS_FILE`] to tell the two apart).

mod manager;
mod render;
mod sections;
mod template;
mod values;
mod write;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde_yaml_ng::Value;

use crate::model;
use crate::scaffold::{Changes, read_optional};
use render::{Doc, Renders};
use template::{Template, crd_template, helm_line, merge, template_path, with_header};

pub use render::Key;
pub use sections::{Section, States};
pub use template::{DIGEST, HEADER, owned};
pub use values::{merge_values, values_text};
pub use write::{CHART_DIR, DEFAULTS_FILE, Written, makefile};

/// What the chart is made of: the templates by path under `templates/`, the default
/// values, and the figures of the comparison with config/default.
#[derive(Debug)]
pub struct Chart {
    pub templates: BTreeMap<String, String>,
    pub values: Value,
    /// The objects of config/default the chart leaves out (the Namespace), with why.
    pub left_out: Vec<(Key, &'static str)>,
    pub namespace: String,
}

/// Renders config/ and makes the chart's templates and default values of it.
pub fn chart(root: &Path) -> anyhow::Result<Chart> {
    let renders = Renders::of(root)?;
    let namespace = manager_namespace(&renders.full)?;
    let prefix = name_prefix(root)?;
    let (mut templates, left_out) = merged(&renders)?;
    let (values, leader_election) = values::defaults(&mut templates, &renders.states)?;
    for template in &mut templates {
        switch(template, leader_election, &namespace);
    }
    check_defaults(&templates, &values, &renders.base)?;
    Ok(Chart {
        templates: by_path(&templates, &prefix, &namespace),
        values,
        left_out,
        namespace,
    })
}

/// A template per object of the render with every section on, merged with the renders
/// without each; and the objects the chart leaves out (the Namespace), with why.
#[allow(clippy::type_complexity)]
fn merged(renders: &Renders) -> anyhow::Result<(Vec<Template>, Vec<(Key, &'static str)>)> {
    let mut templates = Vec::new();
    let mut left_out = Vec::new();
    for (key, doc) in &renders.full {
        if key.kind == "Namespace" {
            if renders.base.contains_key(key) {
                left_out.push((
                    key.clone(),
                    "Helm installs into the namespace it is given: --namespace, --create-namespace",
                ));
            }
            continue;
        }
        let without: Vec<(Section, Option<&str>)> = renders
            .without
            .iter()
            .map(|(s, objects)| (*s, objects.get(key).map(|d| d.text.as_str())))
            .collect();
        templates.push(merge(key, &doc.text, &without)?);
    }
    Ok((templates, left_out))
}

/// The conditions of the chart's own switches on `template` (`crd.enable` and
/// `crd.keep`, `rbacHelpers.enable`, `leaderElection.enable`), and its lines made Helm's.
fn switch(template: &mut Template, leader_election: bool, namespace: &str) {
    if template.key.kind == "CustomResourceDefinition" {
        crd_template(template);
    }
    if values::is_rbac_helper(template) {
        template
            .conds
            .push(sections::Cond::Value(".Values.rbacHelpers.enable".into()));
    }
    if matches!(template.key.kind.as_str(), "Role" | "RoleBinding")
        && template.key.name.contains("leader-election")
        && leader_election
    {
        template.conds.push(sections::Cond::Value(
            ".Values.leaderElection.enable".into(),
        ));
    }
    for piece in &mut template.pieces {
        piece.text = helm_line(&piece.text, namespace);
    }
}

/// Refuses a chart that, rendered at its default `values`, is not config/default (`base`).
fn check_defaults(
    templates: &[Template],
    values: &Value,
    base: &BTreeMap<Key, Doc>,
) -> anyhow::Result<()> {
    let mut mismatches = Vec::new();
    for template in templates {
        let rendered = template.plain(values);
        let expected = base.get(&template.key);
        let same = match (&rendered, expected) {
            (None, None) => true,
            (Some(text), Some(doc)) => {
                serde_yaml_ng::from_str::<Value>(text).ok().as_ref() == Some(&doc.value)
            }
            _ => false,
        };
        if !same {
            mismatches.push(format!("{} {}", template.key.kind, template.key.name));
        }
    }
    if !mismatches.is_empty() {
        bail!(
            "rkb cannot make a chart whose default values deploy what config/default deploys: \
             {} would differ. The sections of config/default/kustomization.yaml combine in a way \
             rkb does not know; please report it with the kustomization",
            mismatches.join(", ")
        );
    }
    Ok(())
}

/// The templates' text by their path under `templates/`: by kind and name, with the kind
/// added where two objects would share a path.
fn by_path(templates: &[Template], prefix: &str, namespace: &str) -> BTreeMap<String, String> {
    let mut by_path = BTreeMap::new();
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    let paths: Vec<String> = templates
        .iter()
        .map(|t| template_path(&t.key, prefix, namespace))
        .collect();
    for path in &paths {
        *used.entry(path.clone()).or_default() += 1;
    }
    for (template, path) in templates.iter().zip(paths) {
        let path = if used[&path] > 1 {
            let (stem, ext) = path.rsplit_once('.').expect("a .yaml path");
            format!("{stem}-{}.{ext}", template.key.kind.to_lowercase())
        } else {
            path
        };
        by_path.insert(path, with_header(&template.helm()));
    }
    by_path
}

/// Plans dist/chart/ into `changes`: the templates rkb owns (refusing to overwrite one
/// edited by hand or a file of the user's of the same name), Chart.yaml and .helmignore
/// when missing, values.yaml merged, and rkb's templates no object needs any more removed.
/// `recorded`: PROJECT records the plugin already (else a chart there is someone else's).
pub fn write(changes: &mut Changes, project_name: &str, recorded: bool) -> anyhow::Result<Written> {
    let root = changes.root().to_path_buf();
    let existing = write::files_under(&root, CHART_DIR)?;
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
    write::check_existing(&root, &existing, &templates_dir, &chart.templates)?;
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
        ("Chart.yaml", write::chart_yaml(project_name, app_version)),
        (".helmignore", write::HELMIGNORE.to_owned()),
    ] {
        let rel = format!("{CHART_DIR}/{file}");
        if !changes.exists(&rel)? {
            changes.create(&rel, text, false)?;
        }
    }
    write::write_values(changes, &chart.values, project_name)?;
    Ok(Written {
        objects: chart.templates.len(),
        left_out: chart.left_out,
        namespace: chart.namespace,
    })
}

/// The manager's namespace: where config/default puts its ServiceAccount.
fn manager_namespace(objects: &BTreeMap<Key, Doc>) -> anyhow::Result<String> {
    objects
        .keys()
        .find(|k| k.kind == "Deployment" && k.name.ends_with("controller-manager"))
        .map(|k| k.namespace.clone())
        .filter(|n| !n.is_empty())
        .context("config/default deploys no controller-manager Deployment in a namespace")
}

/// config/default's namePrefix, which the templates' file names leave out.
fn name_prefix(root: &Path) -> anyhow::Result<String> {
    let text = read_optional(&root.join(model::DEFAULT_KUSTOMIZATION))?.unwrap_or_default();
    let value: Value = serde_yaml_ng::from_str(&text).unwrap_or(Value::Null);
    Ok(value
        .get("namePrefix")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned())
}

#[cfg(test)]
mod tests;
