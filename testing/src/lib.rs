//! rkb's test kit, reached as `rkb_runtime::testing` (feature `testing`, which generated
//! projects switch on from `[dev-dependencies]`): RBAC audit ([`RbacAudit`]), fault
//! injection ([`Faults`], [`wrap`]), a real kube-apiserver and etcd ([`envtest`]),
//! helpers for controller tests ([`controller`]: start a Controller and record its
//! reconciles, wait, read Events, drop one RBAC rule), and the harness of generated
//! end-to-end tests ([`e2e`]).

pub mod controller;
pub mod e2e;
mod testing;

pub use testing::*;
