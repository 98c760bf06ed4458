//! Manifests from Rust: the build-time half of rkb, reached through `rkb-runtime`.
//!
//! - [`crd()`]: the CRD of a kube-derived custom resource, repaired to be structural and
//!   checked as the API server would ([`schema`]), without panicking.
//! - [`rbac`]: the rule model behind `#[derive(Rbac)]` and its controller-gen-style
//!   rendering into the manager's `ClusterRole` and `Role`s.
//! - [`Manifests`]: writes (or checks) `config/crd/bases/` and `config/rbac/role.yaml`,
//!   the job of `make manifests`.
//! - [`sources`]: the `#[rbac(...)]` rules and webhook settings of a project's sources,
//!   read without compiling them, with the derive macros' parser
//!   ([`Manifests::rules_from`]).
//! - [`compat`]: the breaking-change gate, which compares each CRD with the one released
//!   in `config/crd/released/`.
//!
//! It links none of the manager's dependencies (HTTP server, TLS, metrics, leader
//! election), so a manifests generator built on it alone stays small.
//!
//! In the rkb Book: [`#[rkb]` attributes][attributes], [evolving an API][evolving] (the
//! gate), and why `make manifests` builds the whole operator ([a design note][design]).
//!
//! [attributes]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/attributes.md
//! [evolving]: https://github.com/rkb-rs/rkb/blob/main/docs/src/guides/evolving-an-api.md
//! [design]: https://github.com/rkb-rs/rkb/blob/main/docs/src/design/manifests-light-layout.md

pub mod compat;
pub mod crd;
pub mod manifests;
pub mod rbac;
pub mod schema;
#[doc(hidden)]
pub mod schema_macro;
pub mod sources;
pub mod webhook;

pub use crd::{Crd, CrdError, crd};
pub use manifests::Manifests;
pub use rbac::Rbac;
/// The manager's self-managed certificates as values (rkb-core's): their names make RBAC
/// rules (`rkb_runtime::webhook_certificate_rules`) without the manager.
pub use rkb_core::certs;
