// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The Schema API (shapes.example.org/v1), written by `rkb create api --external-crd` from the CRD in
//! config/external-crds/: another project defines this kind and owns its CRD, which
//! this project does not install. Run the command again (with --force) when the CRD
//! changes; the test below fails while these types derive another schema.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// What an object of kind Schema holds besides metadata and status, which kube's derive
// puts at its top level (`no_spec`): the CRD does not require a spec.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "shapes.example.org",
    version = "v1",
    kind = "Schema",
    plural = "schemas",
    namespaced,
    no_spec,
    derive = "Default",
    derive = "PartialEq",
    doc = "A Schema a registry serves."
)]
pub struct SchemaFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SchemaSpec>,
}

/// A reference, whose fields the API server prunes.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SchemaSpecReferences {}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SchemaSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<BTreeMap<String, serde_json::Value>>>,
    #[serde(rename = "labelSets", default, skip_serializing_if = "Option::is_none")]
    pub label_sets: Option<Vec<BTreeMap<String, String>>>,
    /// Other schemas this one names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Vec<SchemaSpecReferences>>,
    /// A count without a format.
    #[schemars(schema_with = "integer")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
}

/// An integer without a format, as the CRD has it (Rust's integers have one).
fn integer(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "integer" })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema rkb derives from these types is the external CRD's; the differences
    /// listed are what `#[rkb(...)]` cannot express, which the command reported.
    #[test]
    fn types_derive_the_external_crd() {
        let derived = rkb_runtime::crd::<Schema>().unwrap_or_else(|error| panic!("{error}"));
        let external = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/external-crds/shapes.example.org_schemas.yaml"
        ));
        let left_out: &[(&str, &str)] = &[
            (
                ".spec.extensions[]",
                "`x-kubernetes-preserve-unknown-fields` on list items or map values without properties",
            ),
            (
                ".spec.extensions[]",
                "`additionalProperties`: list items or map values that keep unknown fields are a map of any values here, whose schema says so",
            ),
            (
                ".spec.extensions[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.labelSets[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
        ];
        rkb_runtime::testing::external::assert_same_schema(&derived, external, "v1", left_out);
    }
}
