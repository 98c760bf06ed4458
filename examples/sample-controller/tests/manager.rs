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

//! The manager binary against a real kube-apiserver (envtest), started as the source
//! document starts upstream's: `-kubeconfig=<file>`. It logs upstream's start lines, runs two
//! workers, reconciles, and on SIGTERM logs upstream's stop line and exits 0.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use kube::api::PostParams;
use rkb_runtime::testing::envtest;
use sample_controller::api::samplecontroller::v1alpha1::{Foo, FooSpec};

/// How long the test waits for the manager (generous: CI machines are loaded).
const WAIT: Duration = Duration::from_secs(60);

/// Kills the manager if the test fails before it exits.
struct Manager(Child);

impl Drop for Manager {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads lines from `lines` until one contains `wanted`; returns every line read.
fn read_until(lines: &mpsc::Receiver<String>, wanted: &str) -> Vec<String> {
    let deadline = Instant::now() + WAIT;
    let mut read = Vec::new();
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let found = line.contains(wanted);
        read.push(line);
        if found {
            return read;
        }
    }
    panic!("no line with {wanted:?} within {WAIT:?}; the manager logged:\n{read:#?}");
}

#[tokio::test]
async fn the_manager_runs_with_upstreams_flag_workers_and_log_lines() {
    let env = envtest::shared().await;
    let crds = sample_controller::manifests()
        .crds()
        .unwrap_or_else(|e| panic!("{e}"));
    env.apply().crds(crds).await.unwrap();
    let namespace = env.create_namespace().await.unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_sample-controller"))
        .arg(format!("-kubeconfig={}", env.kubeconfig_path().display()))
        // No probe server: its default port may be taken on a shared machine.
        .arg("--health-probe-bind-address=0")
        .env_remove("KUBECONFIG")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the manager starts");
    let stdout = child.stdout.take().unwrap();
    let mut manager = Manager(child);
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });

    let started = read_until(&lines, "Started workers");
    let position = |text: &str| {
        started
            .iter()
            .position(|line| line.contains(text))
            .unwrap_or_else(|| panic!("no {text:?} in {started:#?}"))
    };
    let order = [
        "Setting up event handlers",
        "Starting Foo controller",
        "Waiting for informer caches to sync",
        "Starting workers",
        "Started workers",
    ]
    .map(position);
    assert!(order.is_sorted(), "{started:#?}");
    assert!(
        started[order[3]].contains("count=2"),
        "{}",
        started[order[3]]
    );

    // It reconciles, through the API server the flag named.
    let mut object = Foo::new(
        "example-foo",
        FooSpec {
            deployment_name: "example-nginx".into(),
            replicas: 1,
        },
    );
    object.metadata.namespace = Some(namespace.clone());
    let client = env.client();
    Api::<Foo>::namespaced(client.clone(), &namespace)
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let deployments = Api::<Deployment>::namespaced(client, &namespace);
    let deadline = Instant::now() + WAIT;
    while deployments
        .get_opt("example-nginx")
        .await
        .unwrap()
        .is_none()
    {
        assert!(Instant::now() < deadline, "no Deployment within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let pid = manager.0.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    read_until(&lines, "Shutting down workers");
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = manager.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running {WAIT:?} after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status.success(), "{status}");
}
