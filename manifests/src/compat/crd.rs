//! The changes to a CRD as a whole and to its versions: scope, versions removed or no
//! longer served, the storage version; each version's schema then goes to `schema.rs`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps,
};

use super::schema::SchemaDiff;
use super::{Finding, Rule};

/// Every breaking change from `old` (the released CRD) to `new`, in the order of
/// [`Rule::ALL`], then by location.
pub fn compare(old: &CustomResourceDefinition, new: &CustomResourceDefinition) -> Vec<Finding> {
    let crd = old.metadata.name.clone().unwrap_or_default();
    let mut out = Vec::new();
    let finding = |version: Option<&str>, rule, old: &str, new: &str| Finding {
        crd: crd.clone(),
        version: version.map(str::to_owned),
        path: None,
        rule,
        old: old.to_owned(),
        new: new.to_owned(),
    };
    if old.spec.scope != new.spec.scope {
        out.push(finding(
            None,
            Rule::ScopeChanged,
            &old.spec.scope,
            &new.spec.scope,
        ));
    }
    let storage = |crd: &CustomResourceDefinition| {
        crd.spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map(|v| v.name.clone())
            .unwrap_or_default()
    };
    let (old_storage, new_storage) = (storage(old), storage(new));
    if old_storage != new_storage {
        out.push(finding(
            None,
            Rule::StorageVersionChanged,
            &old_storage,
            &new_storage,
        ));
    }
    for old_version in &old.spec.versions {
        let name = old_version.name.as_str();
        let served =
            |v: &CustomResourceDefinitionVersion| if v.served { "served" } else { "not served" };
        match new.spec.versions.iter().find(|v| v.name == name) {
            None => out.push(finding(
                Some(name),
                Rule::VersionRemoved,
                served(old_version),
                "absent",
            )),
            Some(new_version) => {
                if old_version.served && !new_version.served {
                    out.push(finding(
                        Some(name),
                        Rule::VersionUnserved,
                        "served",
                        "not served",
                    ));
                }
                if let (Some(old_schema), Some(new_schema)) =
                    (schema(old_version), schema(new_version))
                {
                    let mut diff = SchemaDiff::new(&crd, name);
                    diff.compare(old_schema, new_schema, "");
                    out.extend(diff.findings);
                }
            }
        }
    }
    out.sort_by_key(|f| (f.rule, f.location()));
    out
}

/// The finding for a released CRD that is no longer rendered.
pub fn removed(old: &CustomResourceDefinition) -> Finding {
    let versions: Vec<&str> = old.spec.versions.iter().map(|v| v.name.as_str()).collect();
    Finding {
        crd: old.metadata.name.clone().unwrap_or_default(),
        version: None,
        path: None,
        rule: Rule::CrdRemoved,
        old: format!("versions {}", versions.join(", ")),
        new: "absent".to_owned(),
    }
}

fn schema(version: &CustomResourceDefinitionVersion) -> Option<&JSONSchemaProps> {
    version.schema.as_ref()?.open_api_v3_schema.as_ref()
}
