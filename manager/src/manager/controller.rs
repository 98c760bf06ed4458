//! What one controller gets from the manager, and how its kube-runtime `Controller` is run.

use std::any::Any;
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures::future::{self, BoxFuture};
use futures::{FutureExt, StreamExt, TryFuture, TryFutureExt};
use kube::runtime::controller::{self, Action, Controller};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::health::Check;
use super::metrics::Metrics;
use crate::backoff::ErrorBackoff;

/// A named task the manager starts once this replica leads: usually a controller, whose
/// function receives a [`Context`] and finishes with [`Context::run`].
pub struct Runnable {
    pub(crate) name: String,
    /// The function's path, to tell runnables apart when two have the same name.
    pub(crate) function: &'static str,
    pub(crate) start: Box<dyn FnOnce(Context) -> BoxFuture<'static, anyhow::Result<()>> + Send>,
    /// Runs on one replica only, with `--sharding` ([`Runnable::single`]).
    pub(crate) single: bool,
}

impl Runnable {
    /// `start` runs until the manager shuts down; an error stops the whole manager.
    ///
    /// `name` must be unique among the manager's runnables: it names the controller's
    /// metrics, readiness check and `--controller-concurrency`.
    pub fn new<F, Fut>(name: impl Into<String>, start: F) -> Self
    where
        F: FnOnce(Context) -> Fut + Send + 'static,
        Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        Self {
            name: name.into(),
            function: std::any::type_name::<F>(),
            start: Box::new(move |ctx| Box::pin(start(ctx))),
            single: false,
        }
    }

    /// Work that must have one writer in the cluster even with `--sharding`
    /// (controller-runtime's `NeedLeaderElection`): the sharded replicas elect one on the
    /// leader Lease, which runs it with every object in view (no slices) and hands it over
    /// when it goes. Without `--sharding` it changes nothing: every runnable runs on the
    /// leader, or everywhere without leader election.
    pub fn single(mut self) -> Self {
        self.single = true;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Debug for Runnable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runnable")
            .field("name", &self.name)
            .field("function", &self.function)
            .finish_non_exhaustive()
    }
}

/// What the manager gives one controller: a client, its settings, and the hooks that
/// [`Context::run`] wires into kube-runtime's `Controller`.
#[derive(Clone)]
pub struct Context {
    pub(crate) name: String,
    pub(crate) client: Client,
    /// What `--controller-concurrency` or `--concurrency` give this controller, if either.
    pub(crate) concurrency_flag: Option<u16>,
    /// Its concurrency when no flag gives one: `DEFAULT_CONCURRENCY` (one) unless the
    /// controller sets its own with `default_concurrency`.
    pub(crate) concurrency_default: u16,
    pub(crate) shutdown: CancellationToken,
    pub(crate) metrics: Metrics,
    pub(crate) ready: Check,
    pub(crate) cache: crate::cache::SharedCache,
    pub(crate) namespaces: crate::cache::Namespaces,
    /// With `--sharding`: the slices whose objects this replica reconciles.
    pub(crate) shard: Option<crate::shard::Gate>,
}

impl Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.name)
            .field("concurrency", &self.concurrency())
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The controller's name: its metrics label and log field.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A client for the cluster (cheap to clone).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// How many objects this controller may reconcile at once (`--concurrency`).
    pub fn concurrency(&self) -> u16 {
        self.concurrency_flag.unwrap_or(self.concurrency_default)
    }

    /// The controller's own default concurrency, for when neither `--concurrency` nor its
    /// `--controller-concurrency` is given (otherwise one): e.g. a controller whose writes
    /// cannot clash across objects, measured to converge faster with a few at once.
    pub fn default_concurrency(mut self, n: u16) -> Self {
        self.concurrency_default = n.max(1);
        self
    }

    /// Cancelled when the manager shuts down; runnables other than controllers stop on it.
    pub fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// The namespaces this controller watches (`--watch-namespace`): its watches take their
    /// APIs from [`Namespaces::apis`](crate::cache::Namespaces::apis).
    pub fn namespaces(&self) -> &crate::cache::Namespaces {
        &self.namespaces
    }

    /// The watches this manager's controllers share (`cache.owns(...)`): one watch of a
    /// kind, however many controllers own its objects.
    pub fn cache(&self) -> &crate::cache::SharedCache {
        &self.cache
    }

    /// The operator's metrics registry, to add metrics of its own.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// With `--sharding`, the slices this replica serves: [`Context::run`] reconciles only
    /// their objects (see [`crate::shard`]).
    pub fn shard(&self) -> Option<&crate::shard::Gate> {
        self.shard.as_ref()
    }

    /// Marks this runnable ready; [`Context::run`] does it once the controller's cache is
    /// synced, so only runnables that are not controllers need it.
    pub fn set_ready(&self) {
        self.ready.pass();
    }

    /// Makes the queue depth count only objects still in the controller's cache (objects
    /// deleted while waiting never reach a reconcile), and marks this runnable ready once the
    /// cache has listed: the returned task waits for that; abort it when the controller stops.
    fn follow_store<K>(
        &self,
        controller: &Controller<K>,
        queue: &super::workqueue::Queue,
    ) -> tokio::task::JoinHandle<()>
    where
        K: Clone + Resource + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Debug + Eq + Hash + Clone + Unpin + Send + Sync,
    {
        let (store, in_store) = (controller.store(), controller.store());
        queue.count_only(move || {
            in_store
                .state()
                .iter()
                .map(|o| object_key(o.as_ref()))
                .collect()
        });
        let ready = self.ready.clone();
        tokio::spawn(async move {
            // Err: the controller stopped before its first list.
            if crate::client::store_ready(&store).await.is_ok() {
                ready.pass();
            }
        })
    }

    /// Runs `controller` until the manager shuts down, with the manager's concurrency,
    /// readiness, metrics and graceful shutdown: on SIGTERM it stops taking new work and
    /// returns once in-flight reconciles have finished.
    ///
    /// A reconcile that panics does not stop the controller: the panic is logged with the
    /// object, counted in `controller_runtime_reconcile_panics_total`, and the object is
    /// retried with its own exponential backoff (`error_policy` is not called, as it takes
    /// the reconciler's error type).
    ///
    /// It replaces the controller's `Config` (concurrency comes from the flags).
    pub async fn run<K, ReconcilerFut, E, Ctx>(
        self,
        controller: Controller<K>,
        mut reconcile: impl FnMut(Arc<K>, Arc<Ctx>) -> ReconcilerFut + Send + 'static,
        error_policy: impl Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
        context: Arc<Ctx>,
    ) -> anyhow::Result<()>
    where
        K: Clone + Resource + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Debug + Eq + Hash + Clone + Unpin + Send + Sync,
        ReconcilerFut: TryFuture<Ok = Action, Error = E> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
        Ctx: Send + Sync + 'static,
    {
        tracing::info!(controller = %self.name, concurrency = self.concurrency(), "reconciling");
        let metrics = self.metrics.controller(&self.name, self.concurrency());
        let queue = metrics.queue().clone();
        let synced = self.follow_store(&controller, &queue);
        // Retries of objects whose reconcile panicked; the user's backoff lives in `Ctx`,
        // out of reach, and is fed only by `error_policy`.
        let panic_backoff = Arc::new(ErrorBackoff::<String>::new());
        let gate = self.shard.clone();
        let reconcile = {
            let panic_backoff = panic_backoff.clone();
            move |object: Arc<K>, ctx| {
                // With --sharding, only objects of a slice served here, counted in flight
                // until done, so that a slice is handed over only once drained.
                let in_slice = match gate.as_ref().map(|gate| gate.admit(object.meta())) {
                    // Its slice's holder reconciles it (every object, when it claims one).
                    Some(None) => return future::ready(Ok(Action::await_change())).left_future(),
                    in_slice => in_slice.flatten(),
                };
                let key = object_key(object.as_ref());
                let started = std::panic::catch_unwind(AssertUnwindSafe(|| reconcile(object, ctx)));
                let reconciled = catch_panic(started);
                let (metrics, panic_backoff) = (metrics.clone(), panic_backoff.clone());
                let in_flight = metrics.start(&key);
                async move {
                    let result = reconciled.await;
                    match &result {
                        Err(ReconcileError::Panicked(_)) => metrics.panicked(),
                        _ => panic_backoff.reset(&key),
                    }
                    in_flight.finish(&result);
                    drop(in_slice);
                    result
                }
                .right_future()
            }
        };
        let retries = queue.clone();
        let error_policy = move |object: Arc<K>, error: &ReconcileError<E>, ctx| {
            retries.retried();
            match error {
                ReconcileError::Failed(error) => error_policy(object, error, ctx),
                ReconcileError::Panicked(message) => {
                    let key = object_key(object.as_ref());
                    // With the UID, a recreated object starts afresh.
                    let uid = object.meta().uid.as_deref();
                    let delay = panic_backoff.next_at(key.as_str(), uid, Instant::now());
                    tracing::error!(object = %key, panic = %message, retry_in = ?delay, "reconcile panicked");
                    Action::requeue(delay)
                }
            }
        };
        let shutdown = self.shutdown.clone();
        let span = tracing::info_span!("controller", controller = %self.name);
        let controller = match &self.shard {
            Some(gate) => controller.reconcile_all_on(gate.acquisitions()),
            None => controller,
        };
        let running = controller
            .with_config(controller::Config::default().concurrency(self.concurrency()))
            .graceful_shutdown_on(async move { shutdown.cancelled().await })
            .run(reconcile, error_policy, context)
            .for_each(|result| async move {
                match result {
                    Ok(_) | Err(controller::Error::ReconcilerFailed(..)) => {} // error_policy logs it
                    Err(controller::Error::QueueError(error)) => {
                        // Typically RBAC or a missing CRD; the watcher retries with backoff.
                        tracing::warn!(%error, "watch failed");
                    }
                    Err(error) => tracing::debug!(%error, "controller event"),
                }
            })
            .instrument(span);
        // The trigger streams of `rkb_runtime::cache` report to the queue metrics.
        super::workqueue::scope(queue, running).await;
        synced.abort();
        Ok(())
    }
}

/// Why a reconcile failed: the reconciler's own error, or a panic caught in it.
#[derive(Debug, thiserror::Error)]
enum ReconcileError<E> {
    #[error(transparent)]
    Failed(E),
    #[error("reconcile panicked: {0}")]
    Panicked(String),
}

/// Turns a panic, in starting a reconcile (`started`) or in the reconcile itself, into
/// [`ReconcileError::Panicked`]. kube-runtime would otherwise re-raise it in the
/// controller's task and stop every controller.
///
/// State the reconciler shares may be left half-updated, as after an error returned
/// midway; controller-runtime recovers panics on the same terms.
fn catch_panic<F>(
    started: std::thread::Result<F>,
) -> impl Future<Output = Result<Action, ReconcileError<F::Error>>> + Send + 'static + use<F>
where
    F: TryFuture<Ok = Action> + Send + 'static,
    F::Error: Send,
{
    match started {
        Ok(reconcile) => AssertUnwindSafe(TryFutureExt::into_future(reconcile))
            .catch_unwind()
            .map(|caught| match caught {
                Ok(result) => result.map_err(ReconcileError::Failed),
                Err(payload) => Err(ReconcileError::Panicked(panic_message(&*payload))),
            })
            .left_future(),
        Err(payload) => {
            future::ready(Err(ReconcileError::Panicked(panic_message(&*payload)))).right_future()
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "(no message)".to_owned()
    }
}

/// `namespace/name`, or `name` for a cluster-scoped object: unique within one controller.
fn object_key<K: Resource>(object: &K) -> String {
    let meta = object.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    match &meta.namespace {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}
