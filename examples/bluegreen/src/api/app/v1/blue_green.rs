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

//! The BlueGreen API (app.demo.kakao.com/v1): spec, status and the CRD derived from them.
//!
//! `#[rkb(...)]` attributes are controller-gen's markers in Rust: validation, defaults,
//! list types, printer columns (see `rkb_runtime::api`). Doc comments become field
//! descriptions. Run `make manifests` after editing.

use k8s_openapi::api::core::v1::PodSpec;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which phase the Service of a BlueGreen sends traffic to.
#[rkb_runtime::schema]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum RouteTo {
    /// The pods of `blueSpec`.
    #[default]
    Blue,
    /// The pods of `greenSpec`.
    Green,
}

impl RouteTo {
    /// Both phases, blue first.
    pub const ALL: [RouteTo; 2] = [RouteTo::Blue, RouteTo::Green];

    /// The value of the `app.kubernetes.io/phase` label and the suffix of the Deployment
    /// name: `blue` or `green`.
    pub fn phase(self) -> &'static str {
        match self {
            RouteTo::Blue => "blue",
            RouteTo::Green => "green",
        }
    }
}

/// The desired state of a BlueGreen: two pod templates and which one serves traffic.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "app.demo.kakao.com",
    version = "v1",
    kind = "BlueGreen",
    plural = "bluegreens",
    namespaced,
    status = "BlueGreenStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[rkb(
    short_names = ["bg"],
    printcolumn(name = "Route", type = string, json_path = ".spec.routeTo"),
    printcolumn(name = "Serving", type = string, json_path = ".status.routeTo"),
    printcolumn(name = "Age", type = date, json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct BlueGreenSpec {
    /// The phase the Service `<name>` selects: `Blue` or `Green`.
    pub route_to: RouteTo,
    /// The pods of the blue phase, run by the Deployment `<name>-blue`; without it there is
    /// no blue Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blue_spec: Option<PodSpec>,
    /// The pods of the green phase, run by the Deployment `<name>-green`; without it there is
    /// no green Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub green_spec: Option<PodSpec>,
}

impl BlueGreenSpec {
    /// The pod spec of `phase`, if declared.
    pub fn pod_spec(&self, phase: RouteTo) -> Option<&PodSpec> {
        match phase {
            RouteTo::Blue => self.blue_spec.as_ref(),
            RouteTo::Green => self.green_spec.as_ref(),
        }
    }
}

/// The observed state of a BlueGreen.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueGreenStatus {
    /// The phase the Service selects since the last successful reconcile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_to: Option<RouteTo>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_describes_the_api() {
        let crd = rkb_runtime::crd::<BlueGreen>().unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(crd.spec.names.short_names, Some(vec!["bg".to_owned()]));
        assert_eq!(crd.spec.group, "app.demo.kakao.com");
        assert_eq!(crd.spec.names.kind, "BlueGreen");
        assert_eq!(crd.spec.names.plural, "bluegreens");
        assert_eq!(crd.spec.scope, "Namespaced");
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1");
        assert!(
            version
                .subresources
                .as_ref()
                .is_some_and(|s| s.status.is_some())
        );
        let spec = &version
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema
            .as_ref()
            .unwrap()
            .properties
            .as_ref()
            .unwrap()["spec"];
        assert_eq!(spec.required, Some(vec!["routeTo".to_owned()]));
        let route_to = &spec.properties.as_ref().unwrap()["routeTo"];
        assert_eq!(
            route_to
                .enum_
                .as_ref()
                .map(|values| values.iter().map(|v| v.0.clone()).collect::<Vec<_>>()),
            Some(vec![serde_json::json!("Blue"), serde_json::json!("Green")])
        );
    }

    /// Two embedded PodSpecs make a big CRD: as the compact JSON that a client-side
    /// `kubectl apply` stores in an annotation, it must fit the API server's 256 KiB limit
    /// on annotations (`make install` applies it server-side anyway). The real API server
    /// checks this in rkb's `cli/tests/commands/real_api_server.rs`.
    #[test]
    fn the_crd_fits_what_client_side_apply_can_store() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/crd/bases/app.demo.kakao.com_bluegreens.yaml"
        );
        let yaml = std::fs::read_to_string(path).unwrap();
        let size = rkb_runtime::manifests::json_size(&yaml).unwrap();
        assert!(
            size <= rkb_runtime::manifests::DEFAULT_MAX_CRD_SIZE,
            "{path} is {size} bytes as JSON"
        );
        assert!(
            !yaml.contains("x-kubernetes-preserve-unknown-fields"),
            "every level of the PodSpecs keeps its schema"
        );
    }
}
