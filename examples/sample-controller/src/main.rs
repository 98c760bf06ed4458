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

//! The manager of sample-controller: runs every controller with leader election, metrics
//! and health probes until SIGTERM or SIGINT. `--help` lists the flags.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{CommandFactory, FromArgMatches, Parser};
use kube::config::{KubeConfigOptions, Kubeconfig};
use rkb_runtime::manager::{self, Manager};

use sample_controller::controller;

/// Workers per controller unless `--concurrency` says otherwise: upstream's `main.go`
/// runs its controller with two.
const DEFAULT_WORKERS: &str = "2";

/// Manager of the sample-controller operator.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Path to a kubeconfig. Only required if out-of-cluster (upstream's `-kubeconfig`; by
    /// default the in-cluster service account, else KUBECONFIG or ~/.kube/config).
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,
    #[command(flatten)]
    manager: manager::Args,
}

impl Args {
    /// The flags, with upstream's defaults and spellings: two workers, and Go's single-dash
    /// `-kubeconfig`.
    fn parse_from(argv: impl IntoIterator<Item = OsString>) -> Result<Self, clap::Error> {
        let mut matches = Self::command()
            .mut_arg("concurrency", |arg| arg.default_value(DEFAULT_WORKERS))
            .try_get_matches_from(argv.into_iter().map(go_flag))?;
        Self::from_arg_matches_mut(&mut matches)
    }
}

/// Go's flag package takes `-kubeconfig` as well as `--kubeconfig`; clap only the latter.
fn go_flag(arg: OsString) -> OsString {
    match arg.to_str() {
        Some(flag) if flag == "-kubeconfig" || flag.starts_with("-kubeconfig=") => {
            format!("-{flag}").into()
        }
        _ => arg,
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match Args::parse_from(std::env::args_os()) {
        Ok(args) => args,
        Err(error) => error.exit(),
    };
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

async fn client(kubeconfig: Option<&PathBuf>) -> anyhow::Result<kube::Client> {
    let Some(path) = kubeconfig else {
        return kube::Client::try_default().await.context(
            "cannot configure a Kubernetes client from the in-cluster service account or KUBECONFIG",
        );
    };
    let kubeconfig =
        Kubeconfig::read_from(path).with_context(|| format!("cannot read {}", path.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("cannot use {}", path.display()))?;
    Ok(kube::Client::try_from(config)?)
}

async fn run(args: Args) -> anyhow::Result<()> {
    let client = client(args.kubeconfig.as_ref()).await?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "starting manager");
    Manager::new("sample-controller", client, args.manager)
        .run(controller::controllers())
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Args {
        Args::parse_from(argv.iter().map(OsString::from)).unwrap()
    }

    /// Catches clashing or malformed flags, which clap otherwise reports only at start-up.
    #[test]
    fn flags_are_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn two_workers_by_default_as_upstream() {
        let args = parse(&["sample-controller"]);
        assert_eq!(args.manager.concurrency_of("foo"), 2);
        let args = parse(&["sample-controller", "--concurrency=5"]);
        assert_eq!(args.manager.concurrency_of("foo"), 5);
        let args = parse(&["sample-controller", "--controller-concurrency=foo=1"]);
        assert_eq!(args.manager.concurrency_of("foo"), 1);
    }

    #[test]
    fn the_kubeconfig_flag_takes_gos_spellings() {
        for argv in [
            ["sample-controller", "-kubeconfig=/k"].as_slice(),
            &["sample-controller", "-kubeconfig", "/k"],
            &["sample-controller", "--kubeconfig=/k"],
        ] {
            assert_eq!(
                parse(argv).kubeconfig,
                Some(PathBuf::from("/k")),
                "{argv:?}"
            );
        }
        assert_eq!(parse(&["sample-controller"]).kubeconfig, None);
    }
}
