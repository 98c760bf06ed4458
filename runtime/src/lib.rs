//! Support library for operators scaffolded by rkb.
//!
//! - [`Rbac`]: declare a reconciler's RBAC rules with `#[derive(Rbac)]` and
//!   `#[rbac(...)]` attributes (controller-gen's `+kubebuilder:rbac` markers).
//! - [`Manifests`]: render CRDs and the manager's roles into `config/`, the
//!   job of `make manifests`.
//! - [`backoff::ErrorBackoff`]: per-object exponential requeue delays.

pub mod backoff;
pub mod manifests;
pub mod rbac;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

pub use manifests::Manifests;
/// The trait; the derive macro of the same name lives in the macro namespace,
/// so `use rkb_runtime::Rbac;` imports both (as with serde).
pub use rbac::Rbac;
pub use rkb_derive::Rbac;

/// The CRD of a kube-derived custom resource (lets generated code list CRDs
/// without importing the trait).
pub fn crd<K: kube::CustomResourceExt>() -> CustomResourceDefinition {
    K::crd()
}

/// The RBAC rules a reconciler declared with `#[derive(Rbac)]`.
pub fn rbac_rules<R: rbac::Rbac>() -> Vec<rbac::Rule> {
    R::rbac_rules()
}
