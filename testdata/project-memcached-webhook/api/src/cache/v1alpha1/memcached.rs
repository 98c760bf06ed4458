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

//! The Memcached API (cache.example.com/v1alpha1): spec, status and the CRD derived from them.
//!
//! `#[rkb(...)]` attributes are controller-gen's markers in Rust: validation, defaults,
//! list types, printer columns (see `rkb_runtime::api`). Doc comments become field
//! descriptions. Run `make manifests` after editing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a Memcached.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    plural = "memcacheds",
    namespaced,
    status = "MemcachedStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[rkb(
    printcolumn(name = "Ready", type = string, json_path = ".status.conditions[?(@.type==\"Ready\")].status"),
    printcolumn(name = "Age", type = date, json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    // TODO(user): the fields users set to declare what they want.
    /// An example field; replace it with your own.
    #[rkb(min_length = 1, max_length = 63)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// The observed state of a Memcached.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// The latest observations of the object's state, one per condition type.
    #[rkb(list_type = map, list_map_keys = ["type"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_describes_the_api() {
        let crd = rkb_runtime::crd::<Memcached>().unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(crd.spec.group, "cache.example.com");
        assert_eq!(crd.spec.names.kind, "Memcached");
        assert_eq!(crd.spec.names.plural, "memcacheds");
        assert_eq!(crd.spec.scope, "Namespaced");
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        assert!(
            version
                .subresources
                .as_ref()
                .is_some_and(|s| s.status.is_some())
        );
    }
}
