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

// ANCHOR: spec
/// The desired state of a Memcached: how many memcached pods to run, and on which port.
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
    /// The number of memcached pods (the replicas of the Deployment), from 1 to 10.
    #[rkb(minimum = 1, maximum = 10)]
    pub size: i32,
    /// The port memcached listens on, in the pods and on the Service. Memcached runs as a
    /// non-root user, which cannot bind the ports below 1024: a CEL rule refuses them.
    #[rkb(
        minimum = 1,
        maximum = 65535,
        default = 11211,
        validation(
            rule = "self >= 1024",
            message = "containerPort must be 1024 or higher: memcached runs as a non-root user, which cannot bind lower ports"
        )
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_port: Option<i32>,
}
// ANCHOR_END: spec

impl MemcachedSpec {
    /// The port memcached listens on: `containerPort`, or 11211.
    pub fn port(&self) -> i32 {
        self.container_port.unwrap_or(DEFAULT_PORT)
    }
}

/// memcached's well-known port, the default of `containerPort`.
pub const DEFAULT_PORT: i32 = 11211;

/// The observed state of a Memcached.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// The names of the memcached pods, sorted.
    #[rkb(list_type = set)]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// The latest observations of the object's state, one per condition type:
    /// `Available` is `True` once every memcached pod is available.
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
        let schema = serde_json::to_value(&version.schema).unwrap();
        let size = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"];
        assert_eq!(
            (size["minimum"].as_f64(), size["maximum"].as_f64()),
            (Some(1.0), Some(10.0))
        );
        let port = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["containerPort"];
        assert_eq!(port["default"], 11211);
    }

    #[test]
    fn the_port_defaults_to_11211() {
        let spec = MemcachedSpec {
            size: 1,
            container_port: None,
        };
        assert_eq!(spec.port(), 11211);
        let spec: MemcachedSpec =
            serde_json::from_str(r#"{"size": 3, "containerPort": 11311}"#).unwrap();
        assert_eq!((spec.size, spec.port()), (3, 11311));
    }
}
