//! How runnables start, and what runs on one replica only under `--sharding`.
//!
//! With `--sharding` every replica runs the manager's controllers, each on its slices. Some
//! work wants one writer in the whole cluster all the same: the keeper of self-managed
//! webhook certificates, and the runnables marked [`Runnable::single`]. The sharded replicas
//! elect that writer on the leader Lease (`--leader-election-id`, the Lease `--leader-elect`
//! uses), and the holder starts them once it holds it; when it loses the Lease it exits,
//! as a leader does, and another replica takes the Lease over.

use std::future::Future;

use kube::Client;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::args::DEFAULT_CONCURRENCY;
use super::controller::{Context, Runnable};
use super::health::Readiness;
use super::metrics::Metrics;
use super::{Args, leader, reads};
use crate::shard::Gate;
use crate::shard::watch::Watches;

/// What a runnable's [`Context`] is made of, owned so that the one-writer group can start
/// its runnables once its replica holds the Lease.
#[derive(Clone)]
pub(super) struct Starter {
    pub client: Client,
    pub args: Args,
    pub shutdown: CancellationToken,
    pub metrics: Metrics,
    pub readiness: Readiness,
    pub cache: crate::cache::SharedCache,
}

impl Starter {
    /// `runnable`'s name and its run; with sharding (`gate`), its controllers' own watches
    /// follow the served slices (`shard::watch`).
    pub(super) fn start(
        &self,
        runnable: Runnable,
        gate: Option<Gate>,
        watches: Option<Watches>,
    ) -> (
        String,
        impl Future<Output = anyhow::Result<()>> + Send + 'static,
    ) {
        // Readiness follows every list and watch of the runnable's client too, not only
        // the primary store `Context::run` waits for.
        let reads = reads::Reads::default();
        let client = reads.follow(self.client.clone());
        let ctx = Context {
            concurrency_flag: self.args.concurrency_flag(&runnable.name),
            concurrency_default: DEFAULT_CONCURRENCY,
            client: match &watches {
                Some(watches) => watches.client(client),
                None => client,
            },
            shutdown: self.shutdown.clone(),
            metrics: self.metrics.clone(),
            cache: self.cache.clone(),
            namespaces: self.args.watch_namespace.clone(),
            shard: gate,
            ready: self
                .readiness
                .add_following(format!("controller/{}", runnable.name), reads),
            name: runnable.name.clone(),
        };
        tracing::info!(controller = %runnable.name, namespaces = %ctx.namespaces, "starting controller");
        let start = runnable.start;
        (runnable.name, Watches::scope(watches, start(ctx)))
    }
}

/// Makes a certificates' keeper, given its readiness check.
pub(super) type MakeKeeper = Box<dyn FnOnce(super::Check) -> crate::certs::Keeper + Send>;

/// The one-writer work of a sharded replica: the certificates' keepers by name (made once
/// the Lease is held, so that only the holder reports their readiness checks) and the
/// single runnables.
pub(super) struct OneWriter {
    pub keepers: Vec<(String, MakeKeeper)>,
    pub runnables: Vec<Runnable>,
}

impl OneWriter {
    pub(super) fn is_empty(&self) -> bool {
        self.keepers.is_empty() && self.runnables.is_empty()
    }

    /// Waits for the Lease `election` campaigns for, then runs the work until shutdown
    /// (`Ok`), until a part fails, or until the Lease is lost (`Err`).
    pub(super) async fn run(
        self,
        election: leader::Election,
        id: String,
        starter: Starter,
    ) -> anyhow::Result<()> {
        let shutdown = starter.shutdown.clone();
        tracing::info!(lease = %id, identity = election.identity(), "waiting for the Lease of the work that has one writer");
        let mut lease = tokio::select! {
            acquired = election.acquire() => acquired,
            () = shutdown.cancelled() => return Ok(()),
        };
        starter.metrics.set_leader(&id, true);
        tracing::info!(lease = %id, "running the work that has one writer on this replica");
        let mut parts = JoinSet::new();
        for (name, keeper) in self.keepers {
            let keeper = keeper(starter.readiness.add(name.clone()));
            let shutdown = shutdown.clone();
            parts.spawn(async move { (name, keeper.run(shutdown).await) });
        }
        for runnable in self.runnables {
            let (name, running) = starter.start(runnable, None, None);
            parts.spawn(async move { (name, running.await) });
        }
        let result = loop {
            tokio::select! {
                joined = parts.join_next() => match joined {
                    None => break Ok(()),
                    Some(Ok((_, Ok(())))) => {}
                    Some(Ok((name, Err(error)))) => break Err(error.context(format!("{name} failed"))),
                    Some(Err(panicked)) => break Err(anyhow::anyhow!("a runnable with one writer panicked: {panicked}")),
                },
                reason = lease.lost() => {
                    starter.metrics.set_leader(&id, false);
                    anyhow::bail!("lost the leader Lease ({reason:?}) of the work that has one writer; exiting so that only one replica does it");
                }
            }
        };
        parts.shutdown().await;
        starter.metrics.set_leader(&id, false);
        lease.release().await;
        result
    }
}
