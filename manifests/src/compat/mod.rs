//! The breaking-change gate: a released CRD compared with the one rendered now.
//!
//! Operators live for years, and users' clusters keep the objects they stored. A change
//! to a Rust type can make those objects invalid (a new required field, a tightened
//! bound, a narrowed enum), lose their data (a removed field, pruned unknown fields),
//! change what they mean (a new default), or make them unreachable (a version no longer
//! served, a storage version moved without rewriting them). `make manifests` compares
//! each CRD it renders with the last released one, kept in [`RELEASED_DIR`], and fails on
//! every such change that the project has not allowed.
//!
//! The model ([`Rule`], [`Finding`], [`Allowance`]) is apart from the comparison
//! (`crd.rs` for the CRD and its versions, `schema.rs` for each version's schema) and from
//! the reporting ([`Breaking`], one line per finding with what to do).
//!
//! [`RELEASED_DIR`]: crate::manifests::RELEASED_DIR

mod crd;
mod finding;
mod report;
mod rule;
mod schema;
#[cfg(test)]
mod tests;

pub use crd::{compare, removed};
pub use finding::{Allowance, AllowanceError, Finding};
pub use report::{Breaking, Line};
pub use rule::{Rule, UnknownRule};
