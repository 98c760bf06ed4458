//! rkb's test kit, reached as `rkb_runtime::testing` (feature `testing`, which generated
//! projects switch on from `[dev-dependencies]`).
//!
//! Wrap any [`kube::Client`] (envtest's, a `tower-test` mock, a real cluster) with
//! [`wrap`] to
//!
//! - audit RBAC ([`RbacAudit`], in `rbac_audit.rs`): every request is recorded as the API
//!   server's authorizer sees it and checked against the project's
//!   `config/rbac/role.yaml`, so a missing rule *and* a rule nothing uses both fail the
//!   test;
//! - inject faults ([`Faults`], in `faults.rs`): conflicts (409), server errors (500),
//!   timeouts, and responses lost after the request was applied, on chosen requests, to
//!   prove a reconciler converges anyway.
//!
//! ```no_run
//! use rkb_testing::{Fault, Faults, RbacAudit};
//!
//! # async fn example() {
//! let envtest = rkb_testing::envtest::shared().await;
//! let audit = RbacAudit::default();
//! let faults = Faults::default().fail(Fault::conflict().on_verb("update").times(1));
//! let client = rkb_testing::wrap(envtest.client(), &audit, &faults);
//! // ... run the Controller (its watches too) and its reconciles with `client` ...
//! # let _ = client;
//! audit.check_role_file("config/rbac/role.yaml").unwrap();
//! # }
//! ```
//!
//! Also: a real kube-apiserver and etcd ([`envtest`], the `rkb-envtest` crate, like
//! controller-runtime's envtest), helpers for controller tests ([`controller`]: start a
//! Controller and record its reconciles, wait, read Events, drop one RBAC rule), and the
//! harness of generated end-to-end tests ([`e2e`]), property tests of conversion webhooks
//! ([`conversion`]: arbitrary objects drawn from a spoke's schema survive spoke → hub → spoke),
//! and a project's webhooks served and installed on envtest, so that its API server calls
//! them ([`webhooks`], kubebuilder's `webhook_suite_test.go`).
//!
//! The rkb Book's [Testing guide][testing] shows them at work in a generated project.
//!
//! [testing]: https://github.com/rkb-rs/rkb/blob/main/docs/src/guides/testing.md

pub mod controller;
pub mod conversion;
pub mod e2e;
pub mod external;
mod faults;
mod rbac_audit;
pub mod webhooks;
mod wrap;

pub use faults::{Fault, FaultKind, Faults};
pub use rbac_audit::{Access, AuditError, Grant, RbacAudit};
pub use rkb_envtest as envtest;
pub use wrap::wrap;

/// Locks `mutex`, poisoned or not: the audit and the fault plan are whole after every
/// update, and a test that panicked while holding one must not hide its own failure
/// behind a second panic here.
fn lock<T: ?Sized>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
