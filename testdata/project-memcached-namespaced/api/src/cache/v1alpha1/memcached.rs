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
//! Each Memcached runs `size` pods of the image in `MEMCACHED_IMAGE` (config/manager).
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
    printcolumn(name = "Size", type = integer, json_path = ".spec.size"),
    printcolumn(name = "Available", type = string, json_path = ".status.conditions[?(@.type==\"Available\")].status"),
    printcolumn(name = "Age", type = date, json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    /// The number of pods (the replicas of the Deployment), from 0 to 10.
    #[rkb(minimum = 0, maximum = 10)]
    pub size: i32,
    /// The port the container listens on [default: 11211].
    #[rkb(minimum = 1, maximum = 65535, default = 11211)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_port: Option<i32>,
}

impl MemcachedSpec {
    /// The port the container listens on: `containerPort`, or its default.
    pub fn port(&self) -> i32 {
        self.container_port.unwrap_or(DEFAULT_CONTAINER_PORT)
    }
}

/// The default of `containerPort` (`rkb create api --image-container-port`).
pub const DEFAULT_CONTAINER_PORT: i32 = 11211;

/// The observed state of a Memcached.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// The latest observations of the object's state, one per condition type: `Available`
    /// (every pod is available), `Progressing` (the Deployment is being created or scaled)
    /// and `Degraded` (the last reconcile failed, or the object is being deleted).
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
        assert_eq!(crd.spec.names.plural, "memcacheds");
        assert_eq!(crd.spec.scope, "Namespaced");
        let version = &crd.spec.versions[0];
        assert!(
            version
                .subresources
                .as_ref()
                .is_some_and(|s| s.status.is_some())
        );
        let schema = serde_json::to_value(&version.schema).unwrap();
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["properties"]["size"]["maximum"], 10.0);
        assert_eq!(spec["required"], serde_json::json!(["size"]));
    }
}
