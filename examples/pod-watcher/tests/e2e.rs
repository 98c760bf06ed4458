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

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, LogParams};
use kube::runtime::wait::{Condition, await_condition};
use kube::{Api, Client};

const NAMESPACE: &str = "pod-watcher-system";
const DEPLOYMENT: &str = "pod-watcher-controller-manager";
const TIMEOUT: Duration = Duration::from_secs(180);

/// A client for a reachable cluster, or `None` (with a note) to skip.
async fn cluster() -> Option<Client> {
    let client = match Client::try_default().await {
        Ok(client) => client,
        Err(error) => {
            eprintln!("e2e: skipped: no Kubernetes client configuration ({error})");
            return None;
        }
    };
    match tokio::time::timeout(Duration::from_secs(10), client.apiserver_version()).await {
        Ok(Ok(_)) => Some(client),
        _ => {
            eprintln!("e2e: skipped: the cluster of the current KUBECONFIG is not reachable");
            None
        }
    }
}

fn available() -> impl Condition<Deployment> {
    |deployment: Option<&Deployment>| {
        deployment
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.ready_replicas)
            .is_some_and(|ready| ready >= 1)
    }
}

#[tokio::test]
#[ignore = "needs a cluster with the operator deployed; run by `make test-e2e`"]
async fn the_manager_becomes_ready_and_logs_pod_adds() {
    let Some(client) = cluster().await else {
        return;
    };
    let deployments = Api::<Deployment>::namespaced(client.clone(), NAMESPACE);
    tokio::time::timeout(
        TIMEOUT,
        await_condition(deployments, DEPLOYMENT, available()),
    )
    .await
    .unwrap_or_else(|_| panic!("{NAMESPACE}/{DEPLOYMENT} not Ready within {TIMEOUT:?}"))
    .expect("the Deployment can be watched");

    // The leader logs "caches are synced" after the initial list, then onAdd for a new Pod.
    let pods = Api::<Pod>::namespaced(client, NAMESPACE);
    let selector = ListParams::default().labels("control-plane=controller-manager");
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let mut logs = String::new();
        for pod in pods.list(&selector).await.expect("pods can be listed") {
            let name = pod.metadata.name.unwrap_or_default();
            logs += &pods
                .logs(&name, &LogParams::default())
                .await
                .unwrap_or_default();
        }
        // The manager's own Pod is listed at start-up: an add of it is logged.
        if logs.contains("caches are synced") && logs.contains(&format!("onAdd: {NAMESPACE}/")) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no \"caches are synced\" and onAdd within {TIMEOUT:?}:\n{logs}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}
