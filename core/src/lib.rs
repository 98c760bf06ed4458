//! Kubernetes' rules as rkb checks them, in one place: the CLI (`rkb init`, `rkb create
//! api`), the derive macros (at compile time, with spans) and the runtime crates (when
//! `make manifests` renders roles) all ask this crate, so they cannot drift apart.
//!
//! - [`attributes`]: the keys of `#[rkb(...)]`, `#[rbac(...)]` and
//!   `#[rkb_runtime::webhook(...)]`, one table each, with controller-gen's markers.
//! - [`certs`]: the manager's self-managed certificates as values (Secret, Service,
//!   the objects that trust them), which `make manifests` turns into RBAC rules.
//! - [`names`]: DNS-1123 labels and subdomains, DNS-1035 labels.
//! - [`rbac`]: verbs (the known ones plus custom ones, as the API server allows), API
//!   group spellings (`core` is `""`), resource names, and the shape of a PolicyRule.
//! - [`schema`]: the `x-kubernetes-*` OpenAPI extension keywords, and the [`schema::Shape`]
//!   a field's schema takes under `#[rkb(...)]`.
//! - [`webhook`]: admission webhook settings (path or url, name, failure policy, timeout,
//!   selectors, match conditions, ...).
//! - `syntax` (feature `syn`): the parsers of `#[rbac(...)]` and the webhook attribute,
//!   which the derive macros run at compile time and `make manifests` runs over a
//!   project's sources.
//!
//! No dependencies by default, so it is linked by a proc-macro crate as well as by
//! operators; the `syn` feature brings the attribute parsers (on in rkb-derive and
//! rkb-manifests), and the `cel` feature a CEL parser for webhooks' match conditions (on in
//! rkb-derive only: they are checked at compile time, and the sources reader of `make
//! manifests` does not link the parser).
//!
//! Operators do not depend on it directly: `rkb-runtime` is their crate. How rkb's crates
//! fit together: [the rkb Book][crates].
//!
//! [crates]: https://github.com/rkb-rs/rkb/blob/main/docs/src/introduction.md#the-crates

pub mod attributes;
pub mod certs;
pub mod names;
pub mod rbac;
pub mod schema;
#[cfg(feature = "syn")]
pub mod syntax;
pub mod webhook;
