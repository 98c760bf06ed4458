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

//! The controllers of memcached-operator, one module per reconciled kind.

use futures::future::{BoxFuture, try_join_all};
use kube::Client;

pub mod memcached;
// +rkb:scaffold:modules

/// Starts one controller; the future runs until shutdown.
pub type Start = fn(Client) -> BoxFuture<'static, anyhow::Result<()>>;

/// Every controller of this operator, by name; `rkb create api` adds to this list.
pub fn controllers() -> Vec<(&'static str, Start)> {
    vec![
        ("memcached", |client| Box::pin(memcached::run(client))),
        // +rkb:scaffold:controllers
    ]
}

/// Runs every controller until the process receives SIGTERM or SIGINT.
pub async fn run_all(client: Client) -> anyhow::Result<()> {
    let controllers = controllers();
    if controllers.is_empty() {
        tracing::warn!("no controllers yet: add one with `rkb create api`");
        tokio::signal::ctrl_c().await?;
        return Ok(());
    }
    try_join_all(controllers.into_iter().map(|(name, start)| {
        tracing::info!(controller = name, "starting controller");
        start(client.clone())
    }))
    .await?;
    Ok(())
}
