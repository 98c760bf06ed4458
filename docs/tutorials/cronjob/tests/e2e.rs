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

//! End-to-end test against the cluster of the current KUBECONFIG, after `make test-e2e` has
//! built the image and deployed the operator: the manager becomes Ready, every sample in
//! config/samples is reconciled, and a scraper bound to the metrics-reader ClusterRole gets
//! the manager's metrics. Skipped (passing) when no cluster is reachable.

use rkb_runtime::testing::e2e::Deployed;

/// `make deploy` names the namespace and the manager's Deployment after the project.
const PROJECT: &str = "cronjob";

#[tokio::test]
#[ignore = "needs a cluster with the operator deployed; run by `make test-e2e`"]
async fn the_manager_becomes_ready_and_reconciles_the_samples() {
    if let Some(operator) = Deployed::connect(env!("CARGO_MANIFEST_DIR"), PROJECT).await {
        operator.check_ready_and_samples_reconciled().await;
        operator.check_metrics_served().await;
    }
}
