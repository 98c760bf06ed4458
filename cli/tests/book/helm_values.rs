//! reference/helm-values.md, from the chart `rkb edit --plugins helm` writes for the golden
//! webhook project switched to cert-manager (so that `certManager` is there too): every key
//! of its values.yaml, with the default rkb wrote and the comment rkb put above it.

use std::collections::BTreeMap;

use serde_yaml_ng::Value;

use super::markdown::{cell, code, table};

#[test]
fn helm_values_reference_page() {
    let golden = crate::repo().join("testdata/project-memcached-webhook");
    let dir = crate::common::switched_to_cert_manager(&golden);
    crate::common::rkb_in(dir.path(), &["edit", "--plugins", "helm"]);
    let text = std::fs::read_to_string(dir.path().join("dist/chart/values.yaml")).unwrap();
    let values: Value = serde_yaml_ng::from_str(&text).unwrap();
    let comments = comments(&text);

    let mut rows = Vec::new();
    walk(&values, "", &comments, &mut rows);
    let mut page = crate::generated_from(
        "the values.yaml `rkb edit --plugins helm` writes for testdata/project-memcached-webhook \
         switched to `webhookCerts: cert-manager`",
        "helm_values.rs",
    );
    page.push_str(
        "# Helm values\n\n\
         `rkb edit --plugins helm` writes a Helm chart of what `config/default` deploys to \
         dist/chart/ (kubebuilder's helm/v2-alpha plugin), and `make manifests` keeps it in \
         step. Its values.yaml takes its defaults from config/: installed with them, the chart \
         deploys what `make deploy` does. Each optional section of \
         config/default/kustomization.yaml (the `# [NAME]` comments) becomes a switch, on where \
         config/ has it on. `make helm` keeps the values you changed or added and adds new ones.\n\n\
         These are the values of a project with one API and its webhooks \
         (testdata/project-memcached-webhook, after `rkb edit --webhook-certs cert-manager`). A \
         project without a CRD has no `crd`, one without webhooks no `webhook` or `certManager`, \
         and one whose manager keeps its own webhook certificates (`webhookCerts: self`, the \
         default) no `certManager`.\n\n",
    );
    page.push_str(&table(&["Value", "Default", "What it sets"], &rows));
    crate::generated_page("reference/helm-values.md", &page);
}

/// A row for every value, with rkb's comment on it. A mapping with comments inside or an
/// `enable` switch is a row of its own and its keys follow (its comment goes to the switch);
/// another mapping (`manager.resources`) is one value.
fn walk(
    value: &Value,
    prefix: &str,
    comments: &BTreeMap<String, String>,
    rows: &mut Vec<Vec<String>>,
) {
    let Value::Mapping(map) = value else { return };
    for (key, value) in map {
        let path = format!("{prefix}{}", key.as_str().unwrap());
        let comment = comments.get(&path).cloned().unwrap_or_default();
        let inner = format!("{path}.");
        let switch = value.get("enable").is_some();
        if !switch && !comments.keys().any(|k| k.starts_with(&inner)) {
            let default = code(&serde_json::to_string(value).unwrap());
            rows.push(vec![code(&path), cell(&default), cell(&comment)]);
            continue;
        }
        let mut nested = Vec::new();
        walk(value, &inner, comments, &mut nested);
        let switch = nested
            .iter_mut()
            .find(|row| row[0] == code(&format!("{inner}enable")));
        match switch {
            Some(row) if row[2].is_empty() => row[2] = cell(&comment),
            _ => rows.push(vec![code(&path), String::new(), cell(&comment)]),
        }
        rows.extend(nested);
    }
}

/// The comment lines right above each key of a values.yaml, by the key's dotted path.
fn comments(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut stack: Vec<(usize, &str)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            pending.clear();
        } else if let Some(comment) = trimmed.strip_prefix('#') {
            pending.push(comment.trim());
        } else if let Some((key, _)) = trimmed
            .split_once(':')
            .filter(|_| !trimmed.starts_with('-'))
        {
            let indent = line.len() - trimmed.len();
            while stack.last().is_some_and(|(i, _)| *i >= indent) {
                stack.pop();
            }
            stack.push((indent, key));
            let path: Vec<&str> = stack.iter().map(|(_, k)| *k).collect();
            if !pending.is_empty() {
                out.insert(path.join("."), pending.join(" "));
            }
            pending.clear();
        }
    }
    out
}
