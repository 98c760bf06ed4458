//! The vocabularies of rkb's attributes, one table each: `#[rkb(...)]` ([`rkb`]),
//! `#[rbac(...)]` ([`rbac`]) and `#[rkb_runtime::webhook(...)]` ([`webhook`]).
//!
//! Each row says what a key writes, where it may be written, the controller-gen marker
//! that does the same, an example and a line of documentation. The derive macros parse
//! with these tables, `rkb create api --external-crd` maps schema keywords back to keys
//! with them, and the book's attribute reference is rendered from them: a new key is one
//! row.

pub mod rbac;
pub mod rkb;
pub mod webhook;
