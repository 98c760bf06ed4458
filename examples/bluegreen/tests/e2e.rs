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

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::api::{ListParams, LogParams};
use kube::runtime::wait::{Condition, await_condition};
use kube::{Api, Client};

const NAMESPACE: &str = "bluegreen-example-system";
const DEPLOYMENT: &str = "bluegreen-example-controller-manager";
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

fn kubectl(args: &[&str]) -> String {
    let output = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
#[ignore = "needs a cluster with the operator deployed; run by `make test-e2e`"]
async fn the_manager_becomes_ready_and_reconciles_the_samples() {
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

    if kubectl(&["kustomize", "config/samples"]).trim().is_empty() {
        eprintln!("e2e: no samples yet (add an API with `rkb create api`)");
        return;
    }
    // `-o name` prints `<kind>.<group>/<name>` for each sample.
    let applied = kubectl(&["apply", "-k", "config/samples", "-o", "name"]);
    let samples: Vec<&str> = applied
        .lines()
        .filter_map(|line| line.split_once('/').map(|(_, name)| name))
        .collect();
    let pods = Api::<Pod>::namespaced(client, NAMESPACE);
    let selector = ListParams::default().labels("control-plane=controller-manager");
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        // The scaffolded reconciler logs "reconciled" with the object; the leader does it.
        let mut logs = String::new();
        for pod in pods.list(&selector).await.expect("pods can be listed") {
            let name = pod.metadata.name.unwrap_or_default();
            logs += &pods
                .logs(&name, &LogParams::default())
                .await
                .unwrap_or_default();
        }
        let pending: Vec<&&str> = samples
            .iter()
            .filter(|name| {
                !logs
                    .lines()
                    .any(|l| l.contains("reconciled") && l.contains(**name))
            })
            .collect();
        if pending.is_empty() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not reconciled within {TIMEOUT:?}: {pending:?}\n{logs}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    // The sample routes to Blue: its Service selects the blue pods, and both Deployments exist.
    let sample = "blue-green-sample";
    let namespace = client_namespace();
    let services = Api::<Service>::namespaced(pods.into_client(), &namespace);
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
    let deployments = Api::<Deployment>::namespaced(services.into_client(), &namespace);
    for phase in ["blue", "green"] {
        deployments
            .get(&format!("{sample}-{phase}"))
            .await
            .unwrap_or_else(|e| panic!("the {phase} Deployment exists: {e}"));
    }
    kubectl(&["delete", "--ignore-not-found", "-k", "config/samples"]);
}

/// The namespace `kubectl apply` put the samples in: the current context's.
fn client_namespace() -> String {
    let ns = kubectl(&["config", "view", "--minify", "-o", "jsonpath={..namespace}"]);
    if ns.trim().is_empty() {
        "default".into()
    } else {
        ns.trim().into()
    }
}
