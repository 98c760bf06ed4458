//! The versions of one kind, given as one CRD each, merged into one CRD with exactly one
//! storage version, as kube's `merge_crds` merges them; and the names of a group's CRDs
//! checked to be unique, as the API server requires. Both work on the CRDs' JSON.

use std::collections::BTreeMap;

use kube_core::crd::MergeError;
use serde_json::Value;

use crate::crd::Crd;

use super::{Claim, Error};

/// A CRD with its versions merged, and where each version came from.
pub(super) struct Merged {
    /// Its `metadata.name`.
    pub name: String,
    /// The CRD, as JSON.
    pub crd: Value,
    /// Where each version came from (see [`Crd::source`]).
    pub sources: Vec<String>,
}

/// The string at `pointer` in `crd`, or `""` when there is none.
pub(super) fn text<'a>(crd: &'a Value, pointer: &str) -> &'a str {
    crd.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Merges the CRDs that share a `metadata.name` (one per version of a kind)
/// into one CRD each, with versions sorted by name like controller-gen.
pub(super) fn merge_versions(crds: Vec<Crd>) -> Result<Vec<Merged>, Error> {
    versions_by_name(crds)?
        .into_iter()
        .map(|(name, parts)| merge_parts(name, parts))
        .collect()
}

/// One version of a CRD: where it came from, its CRD without `spec.versions`, and the
/// version.
struct Part {
    source: String,
    crd: Value,
    version: Value,
}

impl Part {
    fn version_name(&self) -> &str {
        text(&self.version, "/name")
    }
}

/// Every version of every CRD, grouped by `metadata.name`; CRDs without a name, group,
/// plural or version refused.
fn versions_by_name(crds: Vec<Crd>) -> Result<BTreeMap<String, Vec<Part>>, Error> {
    let mut by_name: BTreeMap<String, Vec<Part>> = BTreeMap::new();
    for given in crds {
        let source = given.source();
        let mut crd = given.into_json().map_err(|e| Error::InvalidCrd {
            crd: source.clone(),
            reason: format!("it does not serialize: {e}"),
        })?;
        let name = text(&crd, "/metadata/name").to_owned();
        let named = if name.is_empty() {
            format!("of kind {:?}", text(&crd, "/spec/names/kind"))
        } else {
            name.clone()
        };
        let invalid = |reason: &str| Error::InvalidCrd {
            crd: named.clone(),
            reason: reason.to_owned(),
        };
        if name.is_empty() {
            return Err(invalid("metadata.name is empty"));
        }
        if text(&crd, "/spec/group").is_empty() || text(&crd, "/spec/names/plural").is_empty() {
            return Err(invalid("spec.group and spec.names.plural must be set"));
        }
        let versions = match crd.pointer_mut("/spec/versions").map(Value::take) {
            Some(Value::Array(versions)) if !versions.is_empty() => versions,
            _ => return Err(invalid("it has no versions")),
        };
        for version in versions {
            by_name.entry(name.clone()).or_default().push(Part {
                source: source.clone(),
                crd: crd.clone(),
                version,
            });
        }
    }
    Ok(by_name)
}

/// The versions of one CRD merged into one, after checking they agree on the kind,
/// differ in version name and name exactly one storage version.
fn merge_parts(name: String, mut parts: Vec<Part>) -> Result<Merged, Error> {
    // Stable: of two parts with one version, the first given stays first.
    parts.sort_by(|a, b| a.version_name().cmp(b.version_name()));
    let kind = |part: &Part| text(&part.crd, "/spec/names/kind").to_owned();
    let first = &parts[0];
    if let Some(second) = parts.iter().find(|p| kind(p) != kind(first)) {
        return Err(Error::KindClash {
            crd: name,
            first: first.source.clone(),
            first_kind: kind(first),
            second: second.source.clone(),
            second_kind: kind(second),
        });
    }
    if let Some((a, b)) = parts
        .iter()
        .zip(&parts[1..])
        .find(|(a, b)| a.version_name() == b.version_name())
    {
        return Err(Error::DuplicateVersion {
            crd: name,
            version: a.version_name().to_owned(),
            first: a.source.clone(),
            second: b.source.clone(),
        });
    }
    let versions: Vec<String> = parts.iter().map(|p| p.version_name().to_owned()).collect();
    let storage: Vec<String> = parts
        .iter()
        .filter(|p| p.version["storage"] == Value::Bool(true))
        .map(|p| p.version_name().to_owned())
        .collect();
    let stored = match storage.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(Error::NoStorageVersion {
                crd: name,
                versions,
            });
        }
        _ => return Err(Error::MultipleStorageVersions { crd: name, storage }),
    };
    let mut sources: Vec<String> = Vec::new();
    for part in &parts {
        if !sources.contains(&part.source) {
            sources.push(part.source.clone());
        }
    }
    join(name, sources, parts, &stored)
}

/// What kube's `merge_crds` does: the storage version's CRD is the root, and the others
/// must agree with it on group, kind and scope. `parts` are sorted by version name, and so
/// are the merged CRD's versions: the file does not depend on which one is stored.
fn join(
    name: String,
    sources: Vec<String>,
    parts: Vec<Part>,
    stored: &str,
) -> Result<Merged, Error> {
    let root = parts
        .iter()
        .position(|p| p.version_name() == stored)
        .expect("the storage version is one of the parts");
    let others = parts.iter().enumerate().filter(|(i, _)| *i != root);
    for (_, part) in others {
        for (property, pointer) in [
            ("group", "/spec/group"),
            ("kind", "/spec/names/kind"),
            ("scope", "/spec/scope"),
        ] {
            if part.crd.pointer(pointer) != parts[root].crd.pointer(pointer) {
                return Err(Error::Merge {
                    crd: name,
                    sources,
                    source: MergeError::PropertyMismatch(property.to_owned()),
                });
            }
        }
    }
    let mut crd = parts[root].crd.clone();
    let versions: Vec<Value> = parts.into_iter().map(|p| p.version).collect();
    crd["spec"]["versions"] = Value::Array(versions);
    Ok(Merged { name, crd, sources })
}

/// The API server accepts a CRD's names only if no other CRD of its group uses them:
/// plural, singular and short names share one namespace, kind and list kind another
/// (the apiextensions naming controller). Reports the first clash.
pub(super) fn check_group_names(merged: &[Merged]) -> Result<(), Error> {
    // (group, what, name) -> (CRD name, its sources)
    let mut taken: BTreeMap<(&str, &'static str, &str), (&str, &[String])> = BTreeMap::new();
    for Merged { name, crd, sources } in merged {
        let names = &crd["spec"]["names"];
        let optional = |key: &str| names.get(key).and_then(Value::as_str);
        let short_names = names
            .get("shortNames")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        let resources = std::iter::once(text(names, "/plural"))
            .chain(optional("singular"))
            .chain(short_names)
            .map(|n| ("resource name", n));
        let kinds = std::iter::once(text(names, "/kind"))
            .chain(optional("listKind"))
            .map(|n| ("kind", n));
        let group = text(crd, "/spec/group");
        let mut own = BTreeMap::new();
        for (what, n) in resources.chain(kinds) {
            own.insert((group, what, n), (name.as_str(), sources.as_slice()));
        }
        for (key, mine) in own {
            if let Some(&(first_crd, first)) = taken.get(&key) {
                let (group, what, name) = key;
                let claim = |crd: &str, sources: &[String]| Claim {
                    crd: crd.to_owned(),
                    source: sources.join(", "),
                };
                return Err(Error::GroupNameClash {
                    group: group.to_owned(),
                    name: name.to_owned(),
                    what,
                    claims: Box::new([claim(first_crd, first), claim(mine.0, mine.1)]),
                });
            }
            taken.insert(key, mine);
        }
    }
    Ok(())
}
