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

//! The Foo API (samplecontroller.k8s.io/v1alpha1): spec, status and the CRD derived from them.
//!
//! `#[rkb(...)]` attributes are controller-gen's markers in Rust: validation, defaults,
//! list types, printer columns (see `rkb_runtime::api`). Doc comments become field
//! descriptions. Run `make manifests` after editing.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The desired state of a Foo: a Deployment of nginx pods, by name and size.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos",
    namespaced,
    status = "FooStatus",
    // samplecontroller.k8s.io is a group Kubernetes reserves: the API server wants this
    // annotation, which upstream's CRD carries too.
    annotation(
        "api-approved.kubernetes.io",
        "unapproved, experimental-only: the example of Kubernetes' sample-controller"
    ),
    derive = "Default",
    derive = "PartialEq"
)]
#[rkb(
    printcolumn(name = "Deployment", type = string, json_path = ".spec.deploymentName"),
    printcolumn(name = "Replicas", type = integer, json_path = ".spec.replicas"),
    printcolumn(name = "Available", type = integer, json_path = ".status.availableReplicas"),
    printcolumn(name = "Age", type = date, json_path = ".metadata.creationTimestamp"),
    scale(spec_replicas = ".spec.replicas", status_replicas = ".status.availableReplicas")
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment this Foo creates and controls, in its namespace: a DNS
    /// label.
    #[rkb(
        min_length = 1,
        max_length = 63,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
    )]
    pub deployment_name: String,
    /// The number of nginx pods, from 1 to 10.
    #[rkb(minimum = 1, maximum = 10)]
    pub replicas: i32,
}

/// The observed state of a Foo.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// The available replicas of the Deployment.
    #[serde(default)]
    pub available_replicas: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_describes_the_api() {
        let crd = rkb_runtime::crd::<Foo>().unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(crd.spec.group, "samplecontroller.k8s.io");
        assert_eq!(crd.spec.names.kind, "Foo");
        assert_eq!(crd.spec.names.plural, "foos");
        assert_eq!(crd.spec.scope, "Namespaced");
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        assert!(
            version
                .subresources
                .as_ref()
                .is_some_and(|s| s.status.is_some())
        );
        let scale = version
            .subresources
            .as_ref()
            .and_then(|s| s.scale.as_ref())
            .expect("a scale subresource");
        assert_eq!(scale.spec_replicas_path, ".spec.replicas");
        assert_eq!(scale.status_replicas_path, ".status.availableReplicas");
        let schema = serde_json::to_value(&version.schema).unwrap();
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"];
        // rkb writes the bounds as floats (`1.0`), which Kubernetes accepts for integers.
        assert_eq!(spec["replicas"]["minimum"].as_f64(), Some(1.0));
        assert_eq!(spec["replicas"]["maximum"].as_f64(), Some(10.0));
        assert_eq!(
            spec["deploymentName"]["pattern"],
            "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
        );
        let columns: Vec<&str> = version
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(columns, ["Deployment", "Replicas", "Available", "Age"]);
    }
}
