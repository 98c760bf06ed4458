//! `rkb create api --external-crd`: a kind another project defines, read from its CRD.
//!
//! [`read`] picks the CustomResourceDefinition and version asked for out of a YAML file
//! and refuses what is not one; [`types`] writes the Rust types whose derived schema is
//! the CRD's, and lists what of the schema `#[rkb(...)]` cannot express, by JSON path.

use std::path::Path;

use anyhow::{Context as _, bail};
use serde_json::Value;

mod types;

pub use types::{Generated, Limitation, crd_file, types};

/// One version of an external CRD, as the command uses it.
#[derive(Debug, Clone)]
pub struct ExternalCrd {
    /// The CRD's `spec.group`: `cert-manager.io`.
    pub group: String,
    /// The kind on the wire, as the CRD spells it (`Certificate`, or `postgresql`).
    pub kind: String,
    /// The Rust name of the kind's type: the kind, its first letter (and each after a `-`)
    /// upper-cased, since Kubernetes accepts a lowercase kind and Rust types are
    /// UpperCamelCase (`postgresql` is `Postgresql`).
    pub type_name: String,
    pub plural: String,
    pub version: String,
    pub namespaced: bool,
    /// The chosen version's entry of `spec.versions` (schema, printer columns, ...).
    pub version_entry: Value,
    /// The CRD's other names: `shortNames`, `categories`.
    pub names: Value,
    /// The CRD's `api-approved.kubernetes.io` annotation, which a group Kubernetes
    /// reserves (`*.k8s.io`) needs.
    pub api_approved: Option<String>,
    /// The CRD document itself, as YAML, which the project keeps for its tests.
    pub yaml: String,
}

const CRD_EXAMPLE: &str = "rkb create api --external-crd cert-manager.io_certificates.yaml --version v1 --kind Certificate";

/// Reads the CRD of `kind` (or the file's only CRD) at `version` (or its storage version).
pub fn read(file: &Path, version: Option<&str>, kind: Option<&str>) -> anyhow::Result<ExternalCrd> {
    let text = std::fs::read_to_string(file).with_context(|| {
        format!(
            "cannot read --external-crd {}: give the path of a YAML file holding a \
             CustomResourceDefinition, e.g.  {CRD_EXAMPLE}",
            file.display()
        )
    })?;
    let mut crds = Vec::new();
    let mut others = Vec::new();
    for (index, document) in split_documents(&text).into_iter().enumerate() {
        let value: Value = match serde_yaml_ng::from_str(&document) {
            Ok(v) => v,
            Err(error) => bail!(
                "--external-crd {}: document {} is not valid YAML ({error}); the file must hold \
                 apiextensions.k8s.io/v1 CustomResourceDefinitions, e.g. what `kubectl get crd \
                 certificates.cert-manager.io -o yaml` prints",
                file.display(),
                index + 1
            ),
        };
        if value.is_null() {
            continue;
        }
        let api_version = value["apiVersion"].as_str().unwrap_or_default();
        let doc_kind = value["kind"].as_str().unwrap_or_default();
        if doc_kind == "CustomResourceDefinition" && api_version == "apiextensions.k8s.io/v1" {
            crds.push((value, document));
        } else {
            others.push(format!(
                "{} {}",
                if api_version.is_empty() {
                    "(no apiVersion)"
                } else {
                    api_version
                },
                if doc_kind.is_empty() {
                    "(no kind)"
                } else {
                    doc_kind
                }
            ));
        }
    }
    if crds.is_empty() {
        bail!(
            "--external-crd {} holds no apiextensions.k8s.io/v1 CustomResourceDefinition (found: {}).\n  \
             Give the CRD of the kind to reconcile, e.g.  {CRD_EXAMPLE}",
            file.display(),
            if others.is_empty() {
                "nothing".to_owned()
            } else {
                others.join(", ")
            }
        );
    }
    let kinds: Vec<String> = crds
        .iter()
        .map(|(c, _)| {
            c["spec"]["names"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let chosen = match kind {
        // The kind as the CRD spells it, or as PROJECT records it (its Rust name).
        Some(kind) => match kinds.iter().position(|k| k == kind || type_name(k) == kind) {
            Some(i) => i,
            None => bail!(
                "--external-crd {} has no CRD of kind {kind}; its kinds: {}.\n  \
                 Pass one of them with --kind, e.g.  --kind {}",
                file.display(),
                kinds.join(", "),
                kinds[0]
            ),
        },
        None if crds.len() == 1 => 0,
        None => bail!(
            "--external-crd {} holds {} CRDs ({}); say which kind to reconcile with --kind, \
             e.g.  rkb create api --external-crd {} --kind {}",
            file.display(),
            crds.len(),
            kinds.join(", "),
            file.display(),
            kinds[0]
        ),
    };
    let (crd, yaml) = crds.swap_remove(chosen);
    from_crd(file, crd, yaml, version)
}

fn from_crd(
    file: &Path,
    crd: Value,
    yaml: String,
    version: Option<&str>,
) -> anyhow::Result<ExternalCrd> {
    let spec = &crd["spec"];
    let text = |v: &Value, what: &str| -> anyhow::Result<String> {
        match v.as_str() {
            Some(s) if !s.is_empty() => Ok(s.to_owned()),
            _ => bail!(
                "--external-crd {}: the CRD has no {what}; a CustomResourceDefinition names its \
                 group, kind and plural (spec.group, spec.names.kind, spec.names.plural)",
                file.display()
            ),
        }
    };
    let group = text(&spec["group"], "spec.group")?;
    let kind = text(&spec["names"]["kind"], "spec.names.kind")?;
    let plural = text(&spec["names"]["plural"], "spec.names.plural")?;
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = versions.iter().filter_map(|v| v["name"].as_str()).collect();
    let entry = match version {
        Some(version) => versions.iter().find(|v| v["name"] == version),
        None => versions
            .iter()
            .find(|v| v["storage"] == true)
            .or(versions.first()),
    };
    let Some(entry) = entry.cloned() else {
        bail!(
            "the CRD {plural}.{group} in {} has no version {}; its versions: {}.\n  \
             Pass one of them with --version, e.g.  rkb create api --external-crd {} --kind {kind} --version {}",
            file.display(),
            version.unwrap_or("(none listed)"),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            },
            file.display(),
            names.first().unwrap_or(&"v1")
        );
    };
    if !entry["schema"]["openAPIV3Schema"].is_object() {
        bail!(
            "version {} of the CRD {plural}.{group} in {} has no schema \
             (versions[].schema.openAPIV3Schema), so there is nothing to write types from",
            entry["name"].as_str().unwrap_or_default(),
            file.display()
        );
    }
    Ok(ExternalCrd {
        version: entry["name"].as_str().unwrap_or_default().to_owned(),
        namespaced: spec["scope"] != "Cluster",
        names: spec["names"].clone(),
        api_approved: crd["metadata"]["annotations"]["api-approved.kubernetes.io"]
            .as_str()
            .map(str::to_owned),
        version_entry: entry,
        group,
        type_name: type_name(&kind),
        kind,
        plural,
        yaml,
    })
}

/// The Rust type name of `kind`: UpperCamelCase, as Kubernetes does not require it.
pub fn type_name(kind: &str) -> String {
    kind.split('-')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

/// The documents of a multi-document YAML text, each as its own text.
fn split_documents(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in text.lines() {
        if line == "---" || line.starts_with("--- ") {
            out.push(String::new());
        } else if line == "..." {
            continue;
        } else {
            let last = out.last_mut().expect("one document at least");
            last.push_str(line);
            last.push('\n');
        }
    }
    out.retain(|d| {
        d.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::{split_documents, type_name};

    #[test]
    fn a_kind_gets_an_upper_camel_case_type_name() {
        assert_eq!(type_name("Certificate"), "Certificate");
        assert_eq!(type_name("postgresql"), "Postgresql");
        assert_eq!(type_name("etcdCluster"), "EtcdCluster");
        assert_eq!(type_name("backup-job"), "BackupJob");
    }

    #[test]
    fn documents_split_at_their_markers_and_comments_alone_are_none() {
        let text = "# only a comment\n---\na: 1\n--- # second\nb: 2\n...\n---\n\n";
        assert_eq!(split_documents(text), ["a: 1\n", "b: 2\n"]);
        assert_eq!(split_documents("a: 1\n"), ["a: 1\n"]);
    }
}
