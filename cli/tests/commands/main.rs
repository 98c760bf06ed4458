//! rkb's integration tests of its commands and of what they generate, one module per
//! concern. One test binary for all of them (the book's tests are the other), so a change
//! to rkb links one executable instead of twenty-two, and the tests of every module share
//! the runner's threads.
//!
//! The two `#[ignore]`d tests of `fresh_project` build an operator from scratch (minutes):
//! `cargo test -p rkb --test commands -- --ignored fresh_project::` runs them.

#[path = "../common/mod.rs"]
mod common;

mod alpha_generate;
mod alpha_update;
mod bad_input;
mod command_sequences;
mod controller_name;
mod conversion;
mod delete;
mod deploy_image;
mod docker_buildx;
mod external_crd;
mod fresh_project;
mod golden;
mod helm;
mod interruption;
mod kubernetes_valid;
mod multigroup;
mod namespaced_rbac;
mod plugins;
mod real_api_server;
mod security_defaults;
mod webhook_certs;
mod workflows;
