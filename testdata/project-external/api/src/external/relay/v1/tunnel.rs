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

//! The Tunnel API (relay.example.net/v1), written by `rkb create api --external-crd` from the CRD in
//! config/external-crds/: another project defines this kind and owns its CRD, which
//! this project does not install. Run the command again (with --force) when the CRD
//! changes; the test below fails while these types derive another schema.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "relay.example.net",
    version = "v1",
    kind = "Tunnel",
    plural = "tunnels",
    namespaced,
    status = "TunnelStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Tunnel carries traffic from a local port to a remote endpoint."
)]
pub struct TunnelSpec {
    /// The remote host and port, as host:port.
    #[rkb(min_length = 1)]
    pub endpoint: String,
    /// The port the tunnel listens on.
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(rename = "localPort", default, skip_serializing_if = "Option::is_none")]
    pub local_port: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct TunnelStatus {
    /// Whether the tunnel is up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema rkb derives from these types is the external CRD's; the differences
    /// listed are what `#[rkb(...)]` cannot express, which the command reported.
    #[test]
    fn types_derive_the_external_crd() {
        let derived = rkb_runtime::crd::<Tunnel>().unwrap_or_else(|error| panic!("{error}"));
        let external = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/external-crds/relay.example.net_tunnels.yaml"
        ));
        let left_out: &[(&str, &str)] = &[];
        rkb_runtime::testing::external::assert_same_schema(&derived, external, "v1", left_out);
    }
}
