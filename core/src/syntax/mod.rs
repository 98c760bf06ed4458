//! The parsers of `#[rbac(...)]` and `#[rkb_runtime::webhook(...)]` (feature `syn`): one
//! parser that the derive macros run at compile time and `make manifests` runs over a
//! project's sources, so a rule or a webhook setting means the same to both, with the same
//! errors at the same places.
//!
//! - [`rbac::derive_rules`]: the rules of an item that derives `Rbac`.
//! - [`webhook::parse`]: the settings of the webhook attribute on an impl.
//! - [`ctxt`], [`keys`], [`meta`] and [`suggest`]: what every attribute's checks share
//!   (the derive macros' `#[rkb(...)]` too): errors gathered with their spans, so one
//!   build reports every mistake (as serde_derive does); known and repeated keys; a
//!   lenient `key = value` grammar; "did you mean" hints.
//!
//! These are rkb's own building blocks, public so that rkb-derive (a proc-macro crate,
//! which no crate can depend on as a library) and rkb-manifests share them.

pub mod ctxt;
pub mod keys;
pub mod meta;
pub mod rbac;
pub mod suggest;
pub mod webhook;
