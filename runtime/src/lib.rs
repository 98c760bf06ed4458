//! Support library for operators scaffolded by rkb.
//!
//! - [`Rbac`]: declare a reconciler's RBAC rules with `#[derive(Rbac)]` and
//!   `#[rbac(...)]` attributes (controller-gen's `+kubebuilder:rbac` markers).
//! - [`Manifests`]: render CRDs and the manager's roles into `config/`, the
//!   job of `make manifests`.
//! - [`backoff::ErrorBackoff`]: per-object exponential requeue delays.
//! - [`manager::Manager`]: runs the controllers with leader election, metrics, health
//!   probes and graceful shutdown, like controller-runtime's manager.

pub mod backoff;
pub mod client;
pub mod crd;
pub mod manager;
pub mod manifests;
pub mod rbac;
pub mod schema;
#[doc(hidden)]
pub mod schema_macro;
pub mod testing;

pub use client::{ClusterApi, Lister, NamespacedApi, TypedApi};
/// The CRD of a kube-derived custom resource, checked to be structural (lets
/// generated code list CRDs without importing kube's trait).
pub use crd::{CrdError, crd};
pub use manager::Manager;
pub use manifests::Manifests;
/// The trait; the derive macro of the same name lives in the macro namespace,
/// so `use rkb_runtime::Rbac;` imports both (as with serde).
pub use rbac::Rbac;
pub use rkb_derive::Rbac;
/// `#[rkb_runtime::api]` on a custom resource's spec struct and
/// `#[rkb_runtime::schema]` on the types it contains: controller-gen's markers
/// as `#[rkb(...)]` attributes (validation, defaults, list types, printer
/// columns, ...).
pub use rkb_derive::{api, schema};

/// The RBAC rules a reconciler declared with `#[derive(Rbac)]`.
pub fn rbac_rules<R: rbac::Rbac>() -> Vec<rbac::Rule> {
    R::rbac_rules()
}
