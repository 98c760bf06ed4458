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
//! built the image and deployed the operator: the manager becomes Ready, and every sample in
//! config/samples is reconciled. Skipped (passing) when no cluster is reachable.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::Api;
use rkb_runtime::testing::e2e::Deployed;

/// `make deploy` names the namespace and the manager's Deployment after the project.
const PROJECT: &str = "bluegreen-example";

#[tokio::test]
#[ignore = "needs a cluster with the operator deployed; run by `make test-e2e`"]
async fn the_manager_becomes_ready_and_reconciles_the_samples() {
    let Some(operator) = Deployed::connect(env!("CARGO_MANIFEST_DIR"), PROJECT).await else {
        return;
    };
    operator.wait_ready().await;
    let samples = operator.apply_samples();
    operator.wait_reconciled(&samples).await;

    // The sample routes to Blue: its Service selects the blue pods, and both Deployments exist.
    let sample = "blue-green-sample";
    let namespace = client_namespace(&operator);
    let services = Api::<Service>::namespaced(operator.client(), &namespace);
    let service = services
        .get(sample)
        .await
        .expect("the sample's Service exists");
    let selector = service.spec.and_then(|s| s.selector).unwrap_or_default();
    assert_eq!(
        selector.get("app.kubernetes.io/phase").map(String::as_str),
        Some("blue"),
        "{selector:?}"
    );
    let deployments = Api::<Deployment>::namespaced(operator.client(), &namespace);
    for phase in ["blue", "green"] {
        deployments
            .get(&format!("{sample}-{phase}"))
            .await
            .unwrap_or_else(|e| panic!("the {phase} Deployment exists: {e}"));
    }
    operator.delete_samples();
}

/// The namespace `kubectl apply` put the samples in: the current context's.
fn client_namespace(operator: &Deployed) -> String {
    let ns = operator.kubectl(&["config", "view", "--minify", "-o", "jsonpath={..namespace}"]);
    if ns.trim().is_empty() {
        "default".into()
    } else {
        ns.trim().into()
    }
}
