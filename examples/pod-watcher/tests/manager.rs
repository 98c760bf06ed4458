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
//! document starts its controller: with the kubeconfig given by flag (`--kubeconfig=<file>`,
//! no KUBECONFIG, no `~/.kube/config`). It logs the source's start lines in the source's
//! order, and on SIGTERM its stop line, and exits 0.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rkb_runtime::testing::envtest;

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
    panic!(
        "no line with {wanted:?} (within {WAIT:?} or before the manager exited); it logged:\n{read:#?}"
    );
}

#[tokio::test]
async fn the_manager_uses_the_kubeconfig_flag_and_logs_the_sources_lines() {
    let env = envtest::shared().await;
    // An empty home: without the flag there is no kubeconfig to fall back on.
    let home = std::env::temp_dir().join(format!("pod-watcher-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pod-watcher"))
        .arg(format!("--kubeconfig={}", env.kubeconfig_path().display()))
        // No probe server: its default port may be taken on a shared machine.
        .arg("--health-probe-bind-address=0")
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", &home)
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

    let started = read_until(&lines, "waiting for stop signal");
    let position = |text: &str| {
        started
            .iter()
            .position(|line| line.contains(text))
            .unwrap_or_else(|| panic!("no {text:?} in {started:#?}"))
    };
    let order = [
        concat!("pod-watcher version ", env!("CARGO_PKG_VERSION")),
        "waiting for cache sync",
        "caches are synced",
        "waiting for stop signal",
    ]
    .map(position);
    assert!(order.is_sorted(), "{started:#?}");

    let pid = manager.0.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    read_until(&lines, "received stop signal");
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
    let _ = std::fs::remove_dir_all(&home);
    assert!(status.success(), "{status}");
}
