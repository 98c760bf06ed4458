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

//! The manager of memcached-operator: runs every controller with leader election, metrics
//! and health probes until SIGTERM or SIGINT. `--help` lists the flags.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use rkb_runtime::manager::Manager;

use memcached_operator::{Args, controller};

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(error) = args.manager.init_logging() {
        eprintln!("error: {error:#}");
        return ExitCode::FAILURE;
    }
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // Non-zero, so that Kubernetes restarts the pod (e.g. after losing the lease).
            tracing::error!(error = format!("{error:#}"), "manager stopped");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let client = kube::Client::try_default().await.context(
        "cannot configure a Kubernetes client from the in-cluster service account or KUBECONFIG",
    )?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "starting manager");
    let manager = Manager::new("memcached-operator", client, args.manager);
    let manager =
        manager.metrics_certificates(memcached_operator::api::metrics_certs::certificates());
    // +rkb:scaffold:webhooks
    manager.run(controller::controllers()).await
}
