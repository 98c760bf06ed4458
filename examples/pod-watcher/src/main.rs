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

//! The manager of pod-watcher: runs every controller with leader election, metrics
//! and health probes until SIGTERM or SIGINT. `--help` lists the flags.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use kube::config::{KubeConfigOptions, Kubeconfig};
use rkb_runtime::manager::{self, Manager};

use pod_watcher::controller;

/// Manager of the pod-watcher operator.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    manager: manager::Args,
    /// The kubeconfig file to use, like the source's `-kubeconfig` flag; without it the
    /// KUBECONFIG environment variable, then `~/.kube/config`, then the in-cluster
    /// ServiceAccount.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
}

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
    let client = client(args.kubeconfig.as_deref()).await?;
    // The source's first line ("k8s-controller version UNKNOWN").
    tracing::info!("pod-watcher version {}", env!("CARGO_PKG_VERSION"));
    Manager::new("pod-watcher", client, args.manager)
        .run(controller::controllers())
        .await
}

/// A client from `--kubeconfig`, or else as kube infers it (KUBECONFIG, `~/.kube/config`,
/// the in-cluster ServiceAccount).
async fn client(kubeconfig: Option<&Path>) -> anyhow::Result<kube::Client> {
    let config = match kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("cannot use the kubeconfig {}", path.display()))?
        }
        None => kube::Config::infer().await.context(
            "cannot configure a Kubernetes client from KUBECONFIG, ~/.kube/config or the in-cluster service account",
        )?,
    };
    kube::Client::try_from(config).context("cannot make a Kubernetes client")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Catches clashing or malformed flags, which clap otherwise reports only at start-up.
    #[test]
    fn flags_are_well_formed() {
        super::Args::command().debug_assert();
    }

    #[tokio::test]
    async fn a_missing_kubeconfig_is_an_error_naming_it() {
        let Err(error) = super::client(Some(std::path::Path::new("/nonexistent/kubeconfig"))).await
        else {
            panic!("a client from a missing kubeconfig");
        };
        assert!(
            format!("{error:#}").contains("/nonexistent/kubeconfig"),
            "{error:#}"
        );
    }
}
