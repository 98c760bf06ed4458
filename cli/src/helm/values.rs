//! values.yaml: the default values of the chart (the manager's, and a switch per section
//! and per optional part), and their merge with the values the user changed.

use std::fmt::Write as _;

use anyhow::Context as _;
use serde_yaml_ng::{Mapping, Value};

use super::manager::manager_template;
use super::sections::{SECTIONS, States};
use super::template::Template;

/// The default values of the chart of `templates` (and, for the manager's Deployment, its
/// template taking them), with the sections at `states`; and whether the manager elects a
/// leader.
pub(super) fn defaults(
    templates: &mut [Template],
    states: &States,
) -> anyhow::Result<(Value, bool)> {
    let mut values = Mapping::new();
    let manager = templates
        .iter_mut()
        .find(|t| t.key.kind == "Deployment" && t.key.name.ends_with("controller-manager"))
        .context("config/default deploys no controller-manager Deployment")?;
    let manager = manager_template(manager)?;
    let leader_election = manager.leader_election;
    values.insert("manager".into(), Value::Mapping(manager.manager));
    values.insert(
        "leaderElection".into(),
        mapping([("enable", leader_election.into())]),
    );

    let has_crds = templates
        .iter()
        .any(|t| t.key.kind == "CustomResourceDefinition");
    if has_crds {
        values.insert(
            "crd".into(),
            mapping([("enable", true.into()), ("keep", true.into())]),
        );
    }
    if templates.iter().any(is_rbac_helper) {
        values.insert("rbacHelpers".into(), mapping([("enable", true.into())]));
    }
    for section in SECTIONS {
        if let Some(on) = states.get(&section) {
            let [group, key] = section.path();
            let entry = values
                .entry(group.into())
                .or_insert_with(|| Value::Mapping(Mapping::new()));
            entry
                .as_mapping_mut()
                .expect("a mapping")
                .insert(key.into(), (*on).into());
        }
    }
    if let Some(replicas) = manager.sharded_replicas
        && let Some(Value::Mapping(sharding)) = values.get_mut("sharding")
    {
        sharding.insert("replicas".into(), replicas);
    }
    Ok((Value::Mapping(values), leader_election))
}

/// Whether `template` is one of the admin, editor and viewer ClusterRoles of a kind,
/// switched by `rbacHelpers.enable`.
pub(super) fn is_rbac_helper(template: &Template) -> bool {
    template.key.kind == "ClusterRole"
        && ["-admin-role", "-editor-role", "-viewer-role"]
            .iter()
            .any(|s| template.key.name.ends_with(s))
}

pub(super) fn mapping<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Mapping(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

/// Comments of values.yaml, by the dotted path of the value.
const COMMENTS: &[(&str, &str)] = &[
    (
        "manager",
        "The manager's Deployment (config/manager/manager.yaml).",
    ),
    (
        "manager.image",
        "The manager's image: `make image` or `make docker-build` with IMG.",
    ),
    (
        "manager.image.tag",
        "Empty: the repository alone names the image (e.g. by digest).",
    ),
    (
        "manager.image.pullPolicy",
        "Empty: Kubernetes' default (Always for `latest`, else IfNotPresent).",
    ),
    (
        "manager.replicas",
        "More replicas are hot standbys: with leader election one reconciles at a time.",
    ),
    (
        "manager.resources",
        "The manager container's requests and limits.",
    ),
    ("manager.nodeSelector", "Where the manager's pod may run."),
    (
        "leaderElection",
        "--leader-elect and the Role and RoleBinding of its Lease.",
    ),
    (
        "crd",
        "The CRDs of config/crd/bases (as `make manifests` wrote them).",
    ),
    (
        "crd.keep",
        "Keep the CRDs (and so every object of them) when the release is uninstalled.",
    ),
    (
        "rbacHelpers",
        "The admin, editor and viewer ClusterRoles of each kind (config/rbac).",
    ),
    (
        "metrics",
        "[METRICS] The metrics Service (HTTPS on 8443, every scrape authenticated and authorized).",
    ),
    (
        "metrics.certManager",
        "[METRICS-WITH-CERTS] Serve metrics with a cert-manager certificate instead of a\nself-signed one (needs cert-manager); the ServiceMonitor then verifies it.",
    ),
    (
        "webhook",
        "[WEBHOOK] The webhook Service and configurations, and the manager's webhook port.",
    ),
    (
        "certManager",
        "[CERTMANAGER] The webhook's serving certificate from cert-manager (needs cert-manager)\nand its CA injected into the webhook configurations and converted CRDs.",
    ),
    (
        "prometheus",
        "[PROMETHEUS] A ServiceMonitor for the Prometheus Operator (needs its CRDs).",
    ),
    (
        "sharding",
        "[SHARDING] Every replica active, each reconciling its share of the objects: --sharding\ninstead of --leader-elect, and the Role for the shard Leases.",
    ),
    (
        "sharding.replicas",
        "The replicas with sharding on (manager.replicas without it); they share the slices.",
    ),
    (
        "networkPolicy",
        "[NETWORK POLICY] Metrics traffic only from namespaces labelled metrics=enabled, and the\nwebhook port open to the API server (needs a CNI that enforces NetworkPolicy).",
    ),
];

/// Paths whose whole value is the user's once they set it (not merged key by key).
const WHOLE: &[&str] = &[
    "manager.resources",
    "manager.nodeSelector",
    "manager.affinity",
];

/// values.yaml's content: the new `defaults`, with the values of the user's `current` file
/// that differ from what rkb wrote last (`previous`) or that rkb does not write.
pub fn merge_values(defaults: &Value, previous: Option<&Value>, current: Option<&Value>) -> Value {
    fn go(path: &str, new: &Value, old: Option<&Value>, user: Option<&Value>) -> Value {
        let Some(user) = user else {
            return new.clone();
        };
        match (new, user) {
            (Value::Mapping(new), Value::Mapping(mine)) if !WHOLE.contains(&path) => {
                let mut out = Mapping::new();
                for (key, value) in new {
                    let sub = format!(
                        "{}{}{}",
                        path,
                        if path.is_empty() { "" } else { "." },
                        key.as_str().unwrap_or_default()
                    );
                    out.insert(
                        key.clone(),
                        go(&sub, value, old.and_then(|o| o.get(key)), mine.get(key)),
                    );
                }
                for (key, value) in mine {
                    if !out.contains_key(key) {
                        out.insert(key.clone(), value.clone());
                    }
                }
                Value::Mapping(out)
            }
            _ if old == Some(user) => new.clone(),
            _ => user.clone(),
        }
    }
    go("", defaults, previous, current)
}

/// values.yaml as text: `values` with rkb's comments on the values it knows.
pub fn values_text(values: &Value, project_name: &str) -> String {
    let mut out = format!(
        "# Values of the {project_name} chart. rkb wrote their defaults from config/ (what\n\
         # `kubectl kustomize config/default` deploys); `make helm` keeps the values you change\n\
         # or add here, and adds new ones.\n"
    );
    fn emit(out: &mut String, map: &Mapping, path: &str, indent: usize) {
        for (key, value) in map {
            let key = key.as_str().unwrap_or_default();
            let full = if path.is_empty() {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            };
            if let Some((_, comment)) = COMMENTS.iter().find(|(p, _)| *p == full) {
                if indent == 0 {
                    out.push('\n');
                }
                for line in comment.lines() {
                    let _ = writeln!(out, "{:indent$}# {line}", "");
                }
            }
            match value {
                Value::Mapping(inner) if !inner.is_empty() => {
                    let _ = writeln!(out, "{:indent$}{key}:", "");
                    emit(out, inner, &full, indent + 2);
                }
                Value::Sequence(items) if !items.is_empty() => {
                    let _ = writeln!(out, "{:indent$}{key}:", "");
                    let text = serde_yaml_ng::to_string(value).unwrap_or_default();
                    for line in text.lines() {
                        let _ = writeln!(out, "{:indent$}{line}", "");
                    }
                }
                scalar => {
                    let text = serde_yaml_ng::to_string(scalar).unwrap_or_default();
                    let _ = writeln!(out, "{:indent$}{key}: {}", "", text.trim_end());
                }
            }
        }
    }
    if let Value::Mapping(map) = values {
        emit(&mut out, map, "", 0);
    }
    out
}
