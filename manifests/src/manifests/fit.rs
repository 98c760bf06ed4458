//! The size policy (see the module docs of [`super`]): descriptions cut or dropped and
//! the deepest levels made schemaless until a CRD's JSON fits its budget, worked out on
//! the CRD's JSON.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use crate::schema;

#[cfg(doc)]
use super::DEFAULT_MAX_CRD_SIZE;
use super::{Error, Manifests};

impl Manifests {
    /// Fits the CRD into its size budget (see the module docs of [`super`]), in place;
    /// returns what had to give, if anything did.
    pub(super) fn fit(&self, name: &str, crd: &mut Value) -> Option<String> {
        if let Some(n) = self.max_desc_len {
            for_each_version_schema(crd, |s| {
                schema::limit_descriptions(s, n);
            });
        }
        let full = json_len(crd);
        let budget = self.max_crd_size.filter(|&budget| full > budget)?;
        let mut steps = Vec::new();
        if self.max_desc_len.is_none() {
            for_each_version_schema(crd, |s| {
                schema::limit_descriptions(s, 0);
            });
            steps.push("dropped its descriptions".to_owned());
            if json_len(crd) <= budget {
                return Some(fit_note(name, full, json_len(crd), budget, &steps));
            }
        }
        let mut deepest = 0;
        for_each_version_schema(crd, |s| deepest = deepest.max(schema::depth(s)));
        let mut last = None;
        // Keep the spec's and status' own fields (depth 2) whatever happens.
        for depth in (2..deepest).rev() {
            let mut capped = crd.clone();
            let mut count = 0;
            for_each_version_schema(&mut capped, |s| count += schema::cap_depth(s, depth));
            let step = format!(
                "made {count} object(s) below depth {depth} schemaless (x-kubernetes-preserve-unknown-fields)"
            );
            if json_len(&capped) <= budget {
                steps.push(step);
                *crd = capped;
                return Some(fit_note(name, full, json_len(crd), budget, &steps));
            }
            last = Some((capped, step));
        }
        if let Some((capped, step)) = last {
            steps.push(step);
            *crd = capped;
        }
        let mut note = fit_note(name, full, json_len(crd), budget, &steps);
        note.push_str("; still over budget: mark big embedded fields #[rkb(schemaless)]");
        Some(note)
    }
}

/// The typed definition of a CRD's JSON, made once, at the end: every rendering then
/// orders keys the same way (the typed definition's order).
pub(super) fn typed_crd(name: &str, crd: Value) -> Result<CustomResourceDefinition, Error> {
    serde_json::from_value(crd).map_err(|e| Error::InvalidCrd {
        crd: name.to_owned(),
        reason: format!("its schema does not round-trip: {e}"),
    })
}

fn fit_note(name: &str, full: usize, fitted: usize, budget: usize, steps: &[String]) -> String {
    format!(
        "CRD {name} is {} KiB as JSON (what client-side kubectl apply stores in an annotation), \
         over the {} KiB budget: {} ({} KiB); \
         set max_desc_len/max_crd_size in manifests() to choose otherwise",
        full / 1024,
        budget / 1024,
        steps.join(", then "),
        fitted / 1024
    )
}

/// The size of a YAML document as compact JSON: what client-side `kubectl apply`
/// stores in its last-applied-configuration annotation, and what the size budget
/// ([`DEFAULT_MAX_CRD_SIZE`]) measures.
pub fn json_size(yaml: &str) -> Result<usize, serde_yaml_ng::Error> {
    let value: Value = serde_yaml_ng::from_str(yaml)?;
    Ok(json_len(&value))
}

fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |json| json.len())
}

fn for_each_version_schema(crd: &mut Value, mut f: impl FnMut(&mut Value)) {
    if let Some(Value::Array(versions)) = crd.pointer_mut("/spec/versions") {
        for version in versions {
            if let Some(schema) = version.pointer_mut("/schema/openAPIV3Schema") {
                f(schema);
            }
        }
    }
}
