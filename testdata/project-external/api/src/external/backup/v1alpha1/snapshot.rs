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

//! The Snapshot API (backup.example.net/v1alpha1), written by `rkb create api --external-crd` from the CRD in
//! config/external-crds/: another project defines this kind and owns its CRD, which
//! this project does not install. Run the command again (with --force) when the CRD
//! changes; the test below fails while these types derive another schema.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// What an object of kind Snapshot holds besides metadata and status, which kube's derive
// puts at its top level (`no_spec`): the CRD does not require a spec.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "backup.example.net",
    version = "v1alpha1",
    kind = "Snapshot",
    plural = "snapshots",
    namespaced,
    no_spec,
    status = "SnapshotStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "A Snapshot of a volume; without a spec, of the default volume."
)]
#[rkb(printcolumn(name = "Source", type = string, json_path = ".spec.source"))]
pub struct SnapshotFields {
    /// What to snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<SnapshotSpec>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SnapshotStatus {
    /// Whether the snapshot can be restored.
    #[serde(
        rename = "readyToUse",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ready_to_use: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct SnapshotSpec {
    /// How long the snapshot is kept.
    #[rkb(minimum = 1)]
    #[serde(
        rename = "retainDays",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub retain_days: Option<i32>,
    /// The name of the volume.
    pub source: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema rkb derives from these types is the external CRD's; the differences
    /// listed are what `#[rkb(...)]` cannot express, which the command reported.
    #[test]
    fn types_derive_the_external_crd() {
        let derived = rkb_runtime::crd::<Snapshot>().unwrap_or_else(|error| panic!("{error}"));
        let external = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/external-crds/backup.example.net_snapshots.yaml"
        ));
        let left_out: &[(&str, &str)] = &[];
        rkb_runtime::testing::external::assert_same_schema(
            &derived, external, "v1alpha1", left_out,
        );
    }
}
