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

//! The manager of memcached-operator: runs every controller until SIGTERM or SIGINT.

use anyhow::Context as _;
use clap::{Parser, ValueEnum};
use tracing_subscriber::EnvFilter;

use memcached_operator::controller;

/// Manager of the memcached-operator operator.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Log format: `text` for people, `json` for log pipelines.
    #[arg(long, value_enum, env = "LOG_FORMAT", default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Log filter in `RUST_LOG` syntax, e.g. `info` or `memcached_operator=debug,kube=info`.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    log_level: String,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let filter = EnvFilter::try_new(&args.log_level)
        .with_context(|| format!("invalid --log-level {:?}", args.log_level))?;
    let logs = tracing_subscriber::fmt().with_env_filter(filter);
    match args.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    let client = kube::Client::try_default().await.context(
        "cannot configure a Kubernetes client from the in-cluster service account or KUBECONFIG",
    )?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "starting manager");
    controller::run_all(client).await
}
