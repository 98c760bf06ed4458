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

//! The manager of secret-sync: runs every controller with leader election, metrics
//! and health probes until SIGTERM or SIGINT. `--help` lists the flags.

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use rkb_runtime::manager::{self, Manager};

use secret_sync::controller;
use secret_sync::controller::secret::Settings;

/// Manager of the secret-sync operator.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    manager: manager::Args,
    /// Namespaces that get no copies of the secretsync Secrets (comma-separated; the
    /// source namespace `secretsync` never does).
    #[arg(
        long,
        env = "SECRET_SYNC_BLOCKLIST",
        value_name = "NAMESPACES",
        value_delimiter = ',',
        default_values = secret_sync::controller::secret::DEFAULT_BLOCKLIST
    )]
    blocklist: Vec<String>,
    /// The namespace whose Secrets of type k8s.ziwon.dev/secretsync are copied.
    #[arg(long, env = "SECRET_SYNC_SOURCE_NAMESPACE", value_name = "NAMESPACE", default_value = secret_sync::controller::secret::SOURCE_NAMESPACE)]
    source_namespace: String,
    /// Only namespaces matching this label selector get copies (e.g. `team`, `env=dev`);
    /// every namespace but the blocklist when not given.
    #[arg(long, env = "SECRET_SYNC_NAMESPACE_SELECTOR", value_name = "SELECTOR")]
    namespace_selector: Option<String>,
}

impl Args {
    fn settings(&self) -> Settings {
        Settings {
            source_namespace: self.source_namespace.clone(),
            blocklist: self.blocklist.iter().cloned().collect(),
            namespace_selector: self.namespace_selector.clone(),
        }
    }
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
    let client = kube::Client::try_default().await.context(
        "cannot configure a Kubernetes client from the in-cluster service account or KUBECONFIG",
    )?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "starting manager");
    let settings = args.settings();
    Manager::new("secret-sync", client, args.manager)
        .run(controller::controllers(settings))
        .await
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Catches clashing or malformed flags, which clap otherwise reports only at start-up.
    #[test]
    fn flags_are_well_formed() {
        super::Args::command().debug_assert();
    }

    #[test]
    fn the_blocklist_defaults_to_kube_system_and_kube_public() {
        use clap::Parser;
        let args = super::Args::parse_from(["secret-sync"]);
        assert_eq!(args.blocklist, ["kube-system", "kube-public"]);
        assert_eq!(args.settings().source_namespace, "secretsync");
        assert_eq!(args.settings().namespace_selector, None);
        let args = super::Args::parse_from(["secret-sync", "--blocklist=a,b"]);
        assert_eq!(args.blocklist, ["a", "b"]);
    }
}
