//! rkb-manager's integration tests on a real API server (envtest), one module per concern
//! in one test binary (linked once rather than once per module). Each module keeps a
//! control plane of its own (`rkb_envtest::shared_by(module_path!())`), as when each was
//! a binary: their leases, CRDs and watches stay apart.

mod cache;
mod client;
mod metrics;
mod readiness;
mod sharding;
mod shared_cache;
mod watch_namespace;
