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
//! built the image and deployed the operator: the manager becomes Ready, and logs
//! "caches are synced" and the adds of the Pods it found. Skipped (passing) when no cluster is reachable.

use rkb_runtime::testing::e2e::{Deployed, TIMEOUT};

/// `make deploy` names the namespace and the manager's Deployment after the project.
const PROJECT: &str = "pod-watcher";

#[tokio::test]
#[ignore = "needs a cluster with the operator deployed; run by `make test-e2e`"]
async fn the_manager_becomes_ready_and_logs_pod_adds() {
    let Some(operator) = Deployed::connect(env!("CARGO_MANIFEST_DIR"), PROJECT).await else {
        return;
    };
    operator.wait_ready().await;

    // The leader logs "caches are synced" after the initial list, then onAdd for a new Pod;
    // the manager's own Pod is listed at start-up, so an add of it is logged.
    let added = format!("onAdd: {PROJECT}-system/");
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let logs = operator.manager_logs().await;
        if logs.contains("caches are synced") && logs.contains(&added) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no \"caches are synced\" and onAdd within {TIMEOUT:?}:\n{logs}"
        );
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
}
