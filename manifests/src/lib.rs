//! Manifests from Rust: the build-time half of rkb, reached through `rkb-runtime`.
//!
//! - [`crd()`]: the CRD of a kube-derived custom resource, repaired to be structural and
//!   checked as the API server would ([`schema`]), without panicking.
//! - [`rbac`]: the rule model behind `#[derive(Rbac)]` and its controller-gen-style
//!   rendering into the manager's `ClusterRole` and `Role`s.
//! - [`Manifests`]: writes (or checks) `config/crd/bases/` and `config/rbac/role.yaml`,
//!   the job of `make manifests`.
//!
//! It links none of the manager's dependencies (HTTP server, TLS, metrics, leader
//! election), so a manifests generator built on it alone stays small.

pub mod compat;
pub mod crd;
pub mod manifests;
pub mod rbac;
pub mod schema;
#[doc(hidden)]
pub mod schema_macro;
pub mod webhook;

pub use crd::{Crd, CrdError, crd};
pub use manifests::Manifests;
pub use rbac::Rbac;
