//! What generated operators run on, reached through `rkb-runtime`.
//!
//! - [`manager::Manager`]: runs the controllers with leader election, metrics, health
//!   probes and graceful shutdown, like controller-runtime's manager.
//! - [`cache`]: controllers that read from their watches (status-only changes and the
//!   operator's own writes trigger no reconcile; owned objects in a lister; one watch per
//!   kind shared by the manager's controllers).
//! - [`client`]: typed namespaced and cluster-scoped clients, and listers over a
//!   watch-fed cache.
//! - [`backoff::ErrorBackoff`]: per-object exponential requeue delays.
//! - [`events::Events`]: Events recorded off the reconcile path.
//! - [`webhook`]: defaulting, validating and conversion webhooks the manager serves.
//! - [`certs`]: webhook and metrics certificates the manager provisions, injects and rotates itself.
//! - [`migrate`]: storage version migration of CRDs (`--migrate-storage`).
//! - [`shard`]: active-active replicas, each reconciling its slices (`--sharding`).
//!
//! The map of the whole API is `rkb-runtime`'s front page. In the rkb Book: [manager flags
//! and environment][flags], [observability][observability], [webhooks][webhooks], and the
//! [security model][security] the servers follow.
//!
//! [flags]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/manager.md
//! [observability]: https://github.com/rkb-rs/rkb/blob/main/docs/src/guides/observability.md
//! [webhooks]: https://github.com/rkb-rs/rkb/blob/main/docs/src/guides/webhooks.md
//! [security]: https://github.com/rkb-rs/rkb/blob/main/docs/src/security.md

pub mod backoff;
pub mod cache;
pub mod certs;
pub mod client;
pub mod events;
pub mod manager;
pub mod migrate;
mod serve;
pub mod shard;
mod sync;
pub mod webhook;

pub use client::{ClusterApi, Lister, NamespacedApi, TypedApi};
pub use manager::Manager;
