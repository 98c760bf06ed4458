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

//! The AccessPolicy API (policy.example.net/v1), written by `rkb create api --external-crd` from the CRD in
//! config/external-crds/: another project defines this kind and owns its CRD, which
//! this project does not install. Run the command again (with --force) when the CRD
//! changes; the test below fails while these types derive another schema.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// What an object of kind AccessPolicy holds besides metadata and status, which kube's derive
// puts at its top level (`no_spec`): the CRD has fields beside spec and status.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "policy.example.net",
    version = "v1",
    kind = "AccessPolicy",
    plural = "accesspolicies",
    no_spec,
    status = "AccessPolicyStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "An AccessPolicy grants subjects access to paths."
)]
pub struct AccessPolicyFields {
    /// Free-form settings for the policy's enforcer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<BTreeMap<String, String>>,
    /// The rules, each granting some verbs on some paths.
    #[rkb(min_items = 1)]
    pub rules: Vec<AccessPolicyRules>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct AccessPolicyStatus {
    /// Whether an enforcer applies the policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforced: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct AccessPolicyRules {
    /// Path prefixes the rule applies to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
    /// What the rule allows.
    #[rkb(items(enum_values = ["read", "write"]))]
    pub verbs: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema rkb derives from these types is the external CRD's; the differences
    /// listed are what `#[rkb(...)]` cannot express, which the command reported.
    #[test]
    fn types_derive_the_external_crd() {
        let derived = rkb_runtime::crd::<AccessPolicy>().unwrap_or_else(|error| panic!("{error}"));
        let external = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/external-crds/policy.example.net_accesspolicies.yaml"
        ));
        let left_out: &[(&str, &str)] = &[];
        rkb_runtime::testing::external::assert_same_schema(&derived, external, "v1", left_out);
    }
}
