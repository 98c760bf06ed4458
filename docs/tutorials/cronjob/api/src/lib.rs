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

//! The API of cronjob: its custom resource types, one module per group and
//! version (kubebuilder's `api/` package), and [`crds`], the CRDs `make manifests` writes.
//! A crate of its own, so that `make manifests` builds the types without the operator.

pub mod batch;
// +rkb:scaffold:groups

/// The CRDs of this project's APIs: `make manifests` writes them to config/crd/bases/.
pub fn crds() -> Vec<Result<rkb_runtime::Crd, rkb_runtime::CrdError>> {
    vec![
        rkb_runtime::crd::<batch::v1::CronJob>(),
        // +rkb:scaffold:crds
    ]
}
