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

//! The Shape API (shapes.example.org/v1beta1), written by `rkb create api --external-crd` from the CRD in
//! config/external-crds/: another project defines this kind and owns its CRD, which
//! this project does not install. Run the command again (with --force) when the CRD
//! changes; the test below fails while these types derive another schema.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// What an object of kind Shape holds besides metadata and status, which kube's derive
// puts at its top level (`no_spec`): the CRD does not require a spec.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "shapes.example.org",
    version = "v1beta1",
    kind = "Shape",
    plural = "shapes",
    no_spec,
    status = "ShapeStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Shape holds every schema shape rkb round-trips."
)]
pub struct ShapeFields {
    /// What the shape asks for.
    #[rkb(validation(rule = "!has(self.minimum) || self.minimum <= self.size", message = "minimum must not exceed size"), validation(rule = "self.size >= 0", message_expression = "'size is negative'", reason = FieldValueInvalid, field_path = ".size"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<ShapeSpec>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ShapeStatus {
    #[rkb(format = "date-time")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ShapeSpecEither {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<String>,
}

/// One entry.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(min_properties = 1, map_type = atomic, validation(rule = "!oldSelf.hasValue() || self.name == oldSelf.value().name", optional_old_self))]
pub struct ShapeSpecEntries {
    #[rkb(external_docs(url = "https://example.org/names", description = "how names work"))]
    pub name: String,
    #[rkb(default = "plain")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ShapeSpecPodMetadata {}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ShapeSpecPod {
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<ShapeSpecPodMetadata>,
    #[rkb(schemaless)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<BTreeMap<String, serde_json::Value>>,
}

/// One target.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ShapeSpecTargets {
    #[rkb(format = "hostname")]
    pub address: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ShapeSpec {
    #[rkb(schemaless)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anything: Option<serde_json::Value>,
    #[rkb(items(enum_values = ["red", "green"], pattern = "^[a-z]+$", validation(rule = "self != 'blue'")), max_items = 4, list_type = set)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colors: Option<Vec<String>>,
    /// Anything, kept as it is.
    #[rkb(schemaless)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, serde_json::Value>>,
    /// One of two shapes, which no Rust type rkb writes expresses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub either: Option<ShapeSpecEither>,
    #[rkb(list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<ShapeSpecEntries>>,
    #[rkb(max_properties = 8, map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Vec<Vec<i64>>>,
    #[rkb(exclusive_minimum, minimum = -1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i32>,
    #[rkb(example = "hello", nullable, title = "A note")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[rkb(embedded_resource)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<ShapeSpecPod>,
    #[rkb(pattern = "^[0-9a-z]+$")]
    #[schemars(schema_with = "int_or_string")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<IntOrString>,
    /// A number without a format.
    #[rkb(maximum = 1.5)]
    #[schemars(schema_with = "number")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// A count without a format.
    #[rkb(maximum = 100, minimum = 0, multiple_of = 2)]
    #[schemars(schema_with = "integer")]
    pub size: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<BTreeMap<String, ShapeSpecTargets>>,
    /// A whole object.
    #[rkb(embedded_resource)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<serde_json::Value>,
    #[rkb(default = 0.5)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
}

/// An integer without a format, as the CRD has it (Rust's integers have one).
fn integer(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "integer" })
}

/// An int-or-string without a description, as the CRD has it (IntOrString's schema has one).
fn int_or_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "x-kubernetes-int-or-string": true })
}

/// A number without a format, as the CRD has it (Rust's floats have one).
fn number(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "number" })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema rkb derives from these types is the external CRD's; the differences
    /// listed are what `#[rkb(...)]` cannot express, which the command reported.
    #[test]
    fn types_derive_the_external_crd() {
        let derived = rkb_runtime::crd::<Shape>().unwrap_or_else(|error| panic!("{error}"));
        let external = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/external-crds/shapes.example.org_shapes.yaml"
        ));
        let left_out: &[(&str, &str)] =
            &[(".spec.either", "`oneOf`: no Rust type or key expresses it")];
        rkb_runtime::testing::external::assert_same_schema(&derived, external, "v1beta1", left_out);
    }
}
