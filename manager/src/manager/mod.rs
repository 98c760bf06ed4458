//! The manager of an operator, like controller-runtime's: it runs the controllers with
//! Lease-based leader election, Prometheus metrics behind Kubernetes authn/authz, health
//! probes, structured logs and graceful shutdown, all configured by [`Args`] flags.
//!
//! A generated `main.rs` boils down to
//!
//! ```no_run
//! # mod controller { pub fn controllers() -> Vec<rkb_manager::manager::Runnable> { vec![] } }
//! use clap::Parser;
//! use rkb_manager::manager::{Args, Manager};
//!
//! # async fn start() -> anyhow::Result<()> {
//! let args = Args::parse();
//! args.init_logging()?;
//! let client = kube::Client::try_default().await?;
//! Manager::new("memcached-operator", client, args)
//!     .run(controller::controllers())
//!     .await
//! # }
//! ```
//!
//! and each controller hands its kube-runtime `Controller` to [`Context::run`]:
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use kube::runtime::controller::{Action, Controller};
//! use kube::runtime::watcher;
//! use rkb_manager::manager::{Context, Runnable};
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error("reconcile failed")]
//! struct Error;
//!
//! async fn reconcile(object: Arc<ConfigMap>, ctx: Arc<()>) -> Result<Action, Error> {
//!     Ok(Action::await_change())
//! }
//!
//! fn error_policy(object: Arc<ConfigMap>, error: &Error, ctx: Arc<()>) -> Action {
//!     Action::requeue(Duration::from_secs(5))
//! }
//!
//! async fn run(ctx: Context) -> anyhow::Result<()> {
//!     let objects = Api::<ConfigMap>::all(ctx.client());
//!     let controller = Controller::new(objects, watcher::Config::default());
//!     ctx.run(controller, reconcile, error_policy, Arc::new(())).await
//! }
//!
//! let controllers = vec![Runnable::new("configmap", run)];
//! ```
//!
//! # Lifecycle
//!
//! 1. The probe and metrics servers start, and the webhook server if the operator has
//!    [webhooks](crate::webhook) (on every replica); `/readyz` passes once it serves (with
//!    [`Manager::webhook_certificates`], once it serves the certificate of their Secret).
//!    With [`Manager::metrics_certificates`], the metrics server serves the certificate of
//!    their Secret (handshakes fail until it has one; readiness does not wait for it).
//! 2. With `--leader-elect`, the manager waits for the Lease; standbys stay here and take
//!    over when the leader releases it or stops renewing it.
//! 3. Every [`Runnable`] starts, and the keepers of the webhook and metrics
//!    [certificates](crate::certs) if any; `/readyz` fails until each controller's cache is synced,
//!    and whenever the last list or watch of a collection through its client failed (a
//!    watch of `.owns(...)` that RBAC forbids keeps the controller unready).
//! 4. On SIGTERM or SIGINT, controllers stop taking new work and finish in-flight reconciles
//!    (within `--graceful-shutdown-timeout`), the Lease is released so a standby takes over
//!    at once, the webhook server answers the reviews in flight and stops, and
//!    [`Manager::run`] returns `Ok`. A second signal stops at once.
//! 5. If the Lease is lost (renewals failed past the renew deadline, or another replica
//!    took it), reconciling stops at once and `run` returns an error, so the process exits
//!    non-zero and restarts as a standby — what controller-runtime does.
//!
//! With `--migrate-storage`, [`Manager::run`] does none of this: it migrates the stored
//! objects of the CRDs given to [`Manager::storage_migration`] to their storage version
//! ([`crate::migrate`]) and returns.

mod args;
mod auth;
mod certificates;
mod controller;
mod health;
pub(crate) mod leader;
mod metrics;
mod observed;
mod process_metrics;
mod reads;
mod rest_metrics;
mod single;
pub(crate) mod workqueue;

use std::sync::Arc;

use kube::Client;

use crate::certs::Check as _;
use crate::serve::{HttpVersions, TlsFiles, server, tls};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub use crate::serve::ListenAddr;
pub use args::{Args, BindAddress, Buckets, LogFormat};
pub use controller::{Context, Runnable};
pub use health::{Check, Readiness};
pub use metrics::Metrics;

/// Runs an operator's controllers; see the [module docs](self).
pub struct Manager {
    name: String,
    client: Client,
    args: Args,
    metrics: Metrics,
    readiness: Readiness,
    webhooks: Option<crate::webhook::Webhooks>,
    /// Certificates the manager makes and keeps for its webhooks itself.
    certificates: Option<crate::certs::WebhookCertificates>,
    /// Certificates the manager makes and keeps for its metrics server itself.
    metrics_certificates: Option<crate::certs::MetricsCertificates>,
    /// The CRDs `--migrate-storage` migrates.
    storage_migration: Vec<String>,
    shutdown: CancellationToken,
    /// A second signal: stop without waiting.
    abort: CancellationToken,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("name", &self.name)
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager for the operator `name` (the default Lease is `<name>-leader`).
    pub fn new(name: impl Into<String>, client: Client, args: Args) -> Self {
        let metrics = Metrics::with_rest_latency_buckets(args.rest_client_latency_buckets.bounds());
        Self {
            name: name.into(),
            client: metrics.instrument(client),
            args,
            metrics,
            readiness: Readiness::default(),
            webhooks: None,
            certificates: None,
            metrics_certificates: None,
            storage_migration: Vec::new(),
            shutdown: CancellationToken::new(),
            abort: CancellationToken::new(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The metrics registry `/metrics` serves; register the operator's own metrics here.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The readiness checks `/readyz` reports.
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    /// Serves `webhooks` on `--webhook-bind-address` on every replica (a standby answers
    /// the API server too), from start until the controllers have stopped.
    #[must_use]
    pub fn webhooks(mut self, webhooks: crate::webhook::Webhooks) -> Self {
        self.webhooks = Some(webhooks);
        self
    }

    /// Makes, injects and rotates the webhooks' certificates itself, instead of reading
    /// them from `--webhook-cert-path` (cert-manager's way): see [`crate::certs`]. Every
    /// replica serves from the Secret the certificates name; the leader writes it and the
    /// `caBundle`s.
    #[must_use]
    pub fn webhook_certificates(mut self, certificates: crate::certs::WebhookCertificates) -> Self {
        self.certificates = Some(certificates);
        self
    }

    /// Makes and rotates the metrics server's certificate itself, in the Secret the
    /// certificates name, so that a scraper can verify it against the Secret's `ca.crt`:
    /// see [`crate::certs`] and [`MetricsCertificates`](crate::certs::MetricsCertificates)
    /// for when it applies. Every replica serves from the Secret; the leader writes it.
    #[must_use]
    pub fn metrics_certificates(mut self, certificates: crate::certs::MetricsCertificates) -> Self {
        self.metrics_certificates = Some(certificates);
        self
    }

    /// The CRDs (`<plural>.<group>`, see [`crate::migrate::crd_name`]) whose stored objects
    /// `--migrate-storage` rewrites at their storage version before trimming
    /// `status.storedVersions`; the operator's own CRDs, as a rule.
    #[must_use]
    pub fn storage_migration(mut self, crds: impl IntoIterator<Item = String>) -> Self {
        self.storage_migration.extend(crds);
        self
    }

    /// Cancelling this token shuts the manager down gracefully, as SIGTERM does.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// The Lease name: `--leader-election-id`, or `<name>-leader`.
    pub fn leader_election_id(&self) -> String {
        self.args
            .leader_election_id
            .clone()
            .unwrap_or_else(|| format!("{}-leader", self.name))
    }

    /// Where the Leases live: `--leader-election-namespace`, or the client's namespace.
    fn lease_namespace(&self) -> String {
        self.args
            .leader_election_namespace
            .clone()
            .unwrap_or_else(|| self.client.default_namespace().to_owned())
    }

    /// Runs `runnables` until shutdown (`Ok`) or until one fails or the Lease is lost (`Err`).
    pub async fn run(
        mut self,
        runnables: impl IntoIterator<Item = Runnable>,
    ) -> anyhow::Result<()> {
        if self.args.migrate_storage {
            return self.migrate_storage().await;
        }
        let runnables: Vec<Runnable> = runnables.into_iter().collect();
        check_unique_names(&runnables)?;
        // Servers and the signal handler; aborted when `run` returns.
        // Refuse unsafe leader-election timing before binding anything.
        let timing = if self.args.leader_elect || self.args.sharding {
            Some(leader::Timing::from_args(&self.args)?)
        } else {
            None
        };
        if let Some(certificates) = &self.certificates {
            certificates.check()?;
        }
        let slices = if self.args.sharding {
            if self.args.leader_elect {
                anyhow::bail!(
                    "--sharding and --leader-elect: with --sharding every replica reconciles its own \
                     slices and needs no leader; drop --leader-elect"
                );
            }
            Some(crate::shard::Slices::new(self.args.sharding_slices)?)
        } else {
            None
        };
        let keeps_metrics_certificates = self.keeps_metrics_certificates()?;
        let http = HttpVersions::from_flag(self.args.enable_http2)?;
        let mut background = JoinSet::new();
        let certificates = self.watch_certificates(keeps_metrics_certificates, &mut background);
        self.start_servers(http, certificates.metrics.as_ref(), &mut background)
            .await?;
        let webhooks = self
            .start_webhooks(http, certificates.webhook.as_ref(), &mut background)
            .await?;
        watch_signals(self.shutdown.clone(), self.abort.clone(), &mut background);

        let result = self
            .lead_and_run(runnables, timing, slices, certificates)
            .await;
        if let Some((stop, server)) = webhooks {
            // Last, as in controller-runtime: conversion and admission keep working while
            // the controllers finish. In-flight reviews are answered, then the server stops.
            stop.cancel();
            tokio::select! {
                _ = server => tracing::info!("webhook server drained"),
                () = tokio::time::sleep(self.args.graceful_shutdown_timeout) => {
                    tracing::warn!("webhook reviews still in flight after --graceful-shutdown-timeout");
                }
                () = self.abort.cancelled() => {}
            }
        }
        result
    }

    /// `--migrate-storage`: no servers, no Lease (the migration is idempotent, and the trim
    /// of `status.storedVersions` has the CRD's resourceVersion as a precondition, so two at
    /// once do no harm), no controllers.
    async fn migrate_storage(&self) -> anyhow::Result<()> {
        if self.storage_migration.is_empty() {
            anyhow::bail!(
                "--migrate-storage: this operator names no CRDs to migrate; give the Manager \
                 `.storage_migration([rkb_runtime::migrate::crd_name::<Kind>()])` in main.rs"
            );
        }
        let migration = crate::migrate::Migration::new(self.client.clone())
            .requests_per_second(self.args.migrate_storage_qps);
        let results = tokio::select! {
            results = migration.run(&self.storage_migration) => results,
            () = self.shutdown.cancelled() => anyhow::bail!("--migrate-storage stopped before it finished; run it again"),
        };
        let mut failed = Vec::new();
        for (crd, result) in results {
            if let Err(error) = result {
                tracing::error!(%crd, error = %error, "storage version migration failed");
                failed.push(crd);
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            anyhow::bail!(
                "--migrate-storage: {} not migrated (their status.storedVersions is unchanged); \
                 see the errors above and run it again",
                failed.join(", ")
            )
        }
    }

    /// Waits for the Lease (with leader election), then runs `runnables` until shutdown.
    async fn lead_and_run(
        &self,
        runnables: Vec<Runnable>,
        timing: Option<leader::Timing>,
        slices: Option<crate::shard::Slices>,
        certificates: certificates::Watches,
    ) -> anyhow::Result<()> {
        let mut lease = None;
        let mut sharding = None;
        if let (Some(timing), Some(slices)) = (timing, slices) {
            let namespace = self.lease_namespace();
            sharding = Some(crate::shard::membership::Sharding::start(
                self.client.clone(),
                &namespace,
                &self.name,
                timing,
                slices,
            ));
        } else if let Some(timing) = timing {
            let id = self.leader_election_id();
            let namespace = self.lease_namespace();
            self.metrics.set_leader(&id, false);
            let election = leader::Election::new(self.client.clone(), &namespace, &id, timing);
            tracing::info!(lease = %id, %namespace, identity = election.identity(), "waiting to become the leader");
            tokio::select! {
                acquired = election.acquire() => {
                    lease = Some(acquired);
                    self.metrics.set_leader(&id, true);
                    tracing::info!(lease = %id, "became the leader");
                }
                () = self.shutdown.cancelled() => {
                    tracing::info!("shut down while on standby");
                    return Ok(());
                }
            }
        }

        if runnables.is_empty() {
            tracing::warn!("no controllers yet: add one with `rkb create api`");
        }
        let mut tasks = JoinSet::new();
        let sharded = sharding
            .as_ref()
            .map(crate::shard::membership::Sharding::gate)
            .zip(timing);
        self.start_runnables(&mut tasks, runnables, certificates, sharded);

        let result = self
            .supervise(&mut tasks, lease.as_mut(), sharding.as_mut())
            .await;
        // Nothing may reconcile any more once the Lease is released (or lost).
        tasks.shutdown().await;
        self.hand_over(sharding, lease).await;
        if result.is_ok() {
            tracing::info!("stopped gracefully");
        }
        result
    }

    /// Starts the runnables and the certificates' keeper in `tasks`; with sharding (the
    /// replica's gate and the Lease timing), the runnables on their slices and the work
    /// with one writer ([`Runnable::single`], the keeper) once elected.
    fn start_runnables(
        &self,
        tasks: &mut JoinSet<(String, anyhow::Result<()>)>,
        runnables: Vec<Runnable>,
        certificates: certificates::Watches,
        sharded: Option<(crate::shard::Gate, leader::Timing)>,
    ) {
        let starter = self.starter();
        let keepers = self.certificates_keepers(certificates);
        let runnables = match sharded {
            // Every replica runs here: the work with one writer is elected among them.
            Some((_, timing)) => {
                let (runnables, sharded) = runnables.into_iter().partition(|r| r.single);
                let one_writer = single::OneWriter { keepers, runnables };
                if !one_writer.is_empty() {
                    let id = self.leader_election_id();
                    let namespace = self.lease_namespace();
                    let election =
                        leader::Election::new(self.client.clone(), &namespace, &id, timing);
                    let starter = starter.clone();
                    let run = one_writer.run(election, id, starter);
                    tasks.spawn(async move { ("one writer".to_owned(), run.await) });
                }
                sharded
            }
            // On the leader, or on every replica without leader election.
            None => {
                for (name, keeper) in keepers {
                    let keeper = keeper(self.readiness.add(name.clone()));
                    let shutdown = self.shutdown.clone();
                    tasks.spawn(async move { (name, keeper.run(shutdown).await) });
                }
                runnables
            }
        };
        let gate = sharded.map(|(gate, _)| gate);
        let watches = gate.clone().map(crate::shard::watch::Watches::new);
        for runnable in runnables {
            let (name, running) = starter.start(runnable, gate.clone(), watches.clone());
            tasks.spawn(async move { (name, running.await) });
        }
    }

    /// What the runnables' contexts are made of, on one shared cache.
    fn starter(&self) -> single::Starter {
        single::Starter {
            client: self.client.clone(),
            args: self.args.clone(),
            shutdown: self.shutdown.clone(),
            metrics: self.metrics.clone(),
            readiness: self.readiness.clone(),
            cache: crate::cache::SharedCache::new(self.shutdown.clone()),
        }
    }

    /// Hands the replica's slices or the leader Lease over once the controllers have
    /// drained, rather than when they expire; a second signal cuts it short.
    async fn hand_over(
        &self,
        sharding: Option<crate::shard::membership::Sharding>,
        lease: Option<leader::Leadership>,
    ) {
        if let Some(sharding) = sharding {
            // The controllers have drained: hand every slice over now.
            tokio::select! {
                () = sharding.leave() => {}
                () = self.abort.cancelled() => tracing::warn!("second signal: not releasing this replica's slices; they move once its Lease expires"),
            }
        }
        if let Some(lease) = lease {
            self.metrics.set_leader(&self.leader_election_id(), false);
            // Hand over now rather than after the lease duration (client-go's
            // ReleaseOnCancel); bounded by the renew deadline, cut short by a second signal.
            tokio::select! {
                () = lease.release() => {}
                () = self.abort.cancelled() => tracing::warn!("second signal: not releasing the leader Lease; it will expire"),
            }
        }
    }

    /// Waits for every runnable; the first failure stops the others gracefully and is
    /// returned. Dropping `tasks` on an early return aborts what still runs.
    async fn supervise(
        &self,
        tasks: &mut JoinSet<(String, anyhow::Result<()>)>,
        mut lease: Option<&mut leader::Leadership>,
        mut sharding: Option<&mut crate::shard::membership::Sharding>,
    ) -> anyhow::Result<()> {
        let timeout = self.args.graceful_shutdown_timeout;
        let deadline = async {
            self.shutdown.cancelled().await;
            tokio::time::sleep(timeout).await;
        };
        tokio::pin!(deadline);
        let mut failure = None;
        loop {
            tokio::select! {
                // With nothing (left) to run, keep serving probes and metrics until shutdown.
                () = self.shutdown.cancelled(), if tasks.is_empty() => break,
                Some(joined) = tasks.join_next() => match joined {
                    Ok((name, Ok(()))) if !self.shutdown.is_cancelled() && sharding.is_some() => {
                        // It would hold its slices and serve none: hand them over instead.
                        tracing::error!(controller = %name, "controller stopped before shutdown; with --sharding its slices would go unserved: shutting down");
                        failure.get_or_insert(anyhow::anyhow!("controller {name} stopped before shutdown, leaving this replica's slices unserved"));
                        self.shutdown.cancel();
                    }
                    Ok((name, Ok(()))) => {
                        if !self.shutdown.is_cancelled() {
                            tracing::warn!(controller = %name, "controller stopped before shutdown");
                        }
                    }
                    Ok((name, Err(error))) => {
                        tracing::error!(controller = %name, error = format!("{error:#}"), "controller failed; shutting down");
                        failure.get_or_insert(error.context(format!("controller {name} failed")));
                        self.shutdown.cancel();
                    }
                    Err(panicked) => {
                        failure.get_or_insert(anyhow::anyhow!("a controller panicked: {panicked}"));
                        self.shutdown.cancel();
                    }
                },
                reason = async {
                    match lease.as_deref_mut() {
                        Some(lease) => lease.lost().await,
                        None => std::future::pending().await,
                    }
                } => {
                    self.metrics.set_leader(&self.leader_election_id(), false);
                    tracing::error!(reason = ?reason, "lost the leader Lease: stopping every controller now");
                    // Another replica may already lead: stop reconciling now, not gracefully.
                    anyhow::bail!("lost the leader Lease ({reason:?}); exiting so that only the new leader reconciles");
                }
                () = async {
                    match sharding.as_deref_mut() {
                        Some(sharding) => sharding.lost().await,
                        None => std::future::pending().await,
                    }
                } => {
                    tracing::error!("this replica's shard Lease was not renewed within the renew deadline: stopping every controller now");
                    // Other replicas take its slices once its Lease expires: stop now.
                    anyhow::bail!("lost this replica's shard Lease; exiting so that other replicas take over its slices");
                }
                () = &mut deadline => {
                    anyhow::bail!("in-flight reconciles did not finish within --graceful-shutdown-timeout={}", humantime::format_duration(timeout));
                }
                () = self.abort.cancelled() => anyhow::bail!("stopped by a second signal without waiting for in-flight reconciles"),
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// Binds the webhook server, if there are webhooks, and serves it until the returned
    /// token is cancelled; `/readyz` fails until it accepts connections.
    async fn start_webhooks(
        &mut self,
        http: HttpVersions,
        certificates: Option<&crate::certs::SecretWatch>,
        background: &mut JoinSet<()>,
    ) -> anyhow::Result<Option<(CancellationToken, tokio::task::JoinHandle<()>)>> {
        let Some(webhooks) = self.webhooks.take().filter(|w| !w.is_empty()) else {
            return Ok(None);
        };
        let Some(addr) = self.args.webhook_bind_address.0 else {
            tracing::warn!("--webhook-bind-address=0: not serving the webhooks");
            return Ok(None);
        };
        let paths = webhooks.paths().join(", ");
        let webhooks = webhooks.http_versions(http);
        let server = match certificates {
            // Handshakes fail, and the replica is not ready, until the Secret has a certificate.
            Some(watch) => {
                let served = Arc::new(crate::certs::Served::default());
                let loaded = self.readiness.add("webhook-certificate");
                background.spawn(crate::certs::serve_from(
                    watch.clone(),
                    served.clone(),
                    Some(loaded),
                ));
                webhooks.bind_swappable(addr, served).await?
            }
            None => {
                let dir = &self.args.webhook_cert_path;
                let files = TlsFiles::new(
                    dir,
                    &self.args.webhook_cert_name,
                    &self.args.webhook_cert_key,
                );
                webhooks.bind(addr, &files).await?
            }
        };
        let server = server.ready_with({
            let check = self.readiness.add("webhook");
            move || check.pass()
        });
        let addr = server.local_addr()?;
        tracing::info!(%addr, %paths, "serving webhooks on https://{addr}");
        let stop = CancellationToken::new();
        let task = tokio::spawn(server.serve(stop.clone()));
        Ok(Some((stop, task)))
    }

    /// Binds the probe and metrics servers now, so a taken port fails the start. With
    /// `certificates`, the metrics server serves the certificate of their Secret.
    async fn start_servers(
        &self,
        http: HttpVersions,
        certificates: Option<&crate::certs::SecretWatch>,
        servers: &mut JoinSet<()>,
    ) -> anyhow::Result<()> {
        if let Some(addr) = self.args.health_probe_bind_address.0 {
            let listener = server::bind(addr, "health probes").await?;
            // The bound address: the port differs from the flag's when that asks for port 0.
            let addr = listener.local_addr()?;
            let readiness = self.readiness.clone();
            servers.spawn(server::serve_apart(listener, "probes", move |request| {
                let response = health::respond(request.method(), request.uri().path(), &readiness);
                std::future::ready(response)
            }));
            tracing::info!(%addr, "serving health probes on /healthz and /readyz");
        }
        if let Some(addr) = self.args.metrics_bind_address.0 {
            let listener = server::bind(addr, "metrics").await?;
            let addr = listener.local_addr()?;
            let (tls, authorizer) = if self.args.metrics_secure {
                let acceptor = if let Some(watch) = certificates {
                    // Handshakes fail until the Secret has a certificate.
                    let served = Arc::new(crate::certs::Served::default());
                    servers.spawn(crate::certs::serve_from(
                        watch.clone(),
                        served.clone(),
                        None,
                    ));
                    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
                    tls::acceptor_with(served, provider, http)?
                } else {
                    let files = self.args.metrics_cert_path.as_ref().map(|dir| {
                        TlsFiles::new(
                            dir,
                            &self.args.metrics_cert_name,
                            &self.args.metrics_cert_key,
                        )
                    });
                    let (acceptor, reload) = tls::acceptor(files, &["localhost"], "metrics", http)?;
                    if let Some(reload) = reload {
                        servers.spawn(reload);
                    }
                    acceptor
                };
                (
                    Some(acceptor),
                    Some(Arc::new(auth::Authorizer::new(
                        self.client.clone(),
                        &self.metrics,
                    ))),
                )
            } else {
                (None, None)
            };
            let metrics = self.metrics.clone();
            servers.spawn(server::serve(listener, tls, move |request| {
                let metrics = metrics.clone();
                let authorizer = authorizer.clone();
                async move { serve_metrics(request, &metrics, authorizer.as_deref()).await }
            }));
            let scheme = if self.args.metrics_secure {
                "https"
            } else {
                "http"
            };
            tracing::info!(%addr, secure = self.args.metrics_secure, "serving metrics on {scheme}://{addr}/metrics");
        }
        Ok(())
    }
}

async fn serve_metrics(
    request: server::Request,
    metrics: &Metrics,
    authorizer: Option<&auth::Authorizer>,
) -> server::Response {
    use http::{HeaderValue, Method, StatusCode, header};

    let path = request.uri().path();
    if path != "/metrics" {
        return server::text(StatusCode::NOT_FOUND, "not found: try /metrics\n");
    }
    if request.method() != Method::GET {
        return server::text(StatusCode::METHOD_NOT_ALLOWED, "only GET\n");
    }
    if let Some(authorizer) = authorizer
        && let Err(denied) = authorizer.check(request.headers(), "get", path).await
    {
        if let auth::Denied::Failed(reason) = &denied {
            tracing::warn!(%reason, "cannot authorize a metrics scrape");
        }
        let mut response = server::text(denied.status(), denied.body());
        if denied == auth::Denied::Busy {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, auth::RETRY_AFTER_SECONDS.into());
        }
        return response;
    }
    let mut response = server::text(StatusCode::OK, metrics.encode());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}

/// Refuses two runnables with one name: they would share one readiness check, one set of
/// metrics and one `--controller-concurrency` (e.g. the kinds `FooBar` and `Foobar`, both
/// `foobar`), as controller-runtime refuses them.
fn check_unique_names(runnables: &[Runnable]) -> anyhow::Result<()> {
    let mut seen = std::collections::HashMap::new();
    for runnable in runnables {
        if let Some(first) = seen.insert(runnable.name.as_str(), runnable.function) {
            anyhow::bail!(
                "two controllers are named {:?}: {first} and {}; rename one, as controller \
                 names label their metrics, readiness checks and --controller-concurrency",
                runnable.name,
                runnable.function,
            );
        }
    }
    Ok(())
}

/// First SIGTERM/SIGINT: graceful shutdown. Second: stop at once.
fn watch_signals(shutdown: CancellationToken, abort: CancellationToken, tasks: &mut JoinSet<()>) {
    tasks.spawn(async move {
        #[cfg(unix)]
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let mut signal = async || {
            #[cfg(unix)]
            if let Some(terminate) = terminate.as_mut() {
                tokio::select! {
                    _ = terminate.recv() => return "SIGTERM",
                    _ = tokio::signal::ctrl_c() => return "SIGINT",
                }
            }
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        };
        let first = signal().await;
        tracing::info!(
            signal = first,
            "shutting down: finishing in-flight reconciles"
        );
        shutdown.cancel();
        let second = signal().await;
        tracing::warn!(signal = second, "second signal: stopping now");
        abort.cancel();
    });
}

#[cfg(test)]
mod tests;
