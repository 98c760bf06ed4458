//! What generated operators run on, reached through `rkb-runtime`.
//!
//! - [`manager::Manager`]: runs the controllers with leader election, metrics, health
//!   probes and graceful shutdown, like controller-runtime's manager.
//! - [`client`]: typed namespaced and cluster-scoped clients, and listers over a
//!   watch-fed cache.
//! - [`backoff::ErrorBackoff`]: per-object exponential requeue delays.
//! - [`events::Events`]: Events recorded off the reconcile path.
//! - [`webhook`]: defaulting, validating and conversion webhooks the manager serves.
//! - [`migrate`]: storage version migration of CRDs (`--migrate-storage`).

pub mod backoff;
pub mod cache;
pub mod client;
pub mod events;
pub mod manager;
pub mod migrate;
mod serve;
mod sync;
pub mod webhook;

pub use client::{ClusterApi, Lister, NamespacedApi, TypedApi};
pub use manager::Manager;
