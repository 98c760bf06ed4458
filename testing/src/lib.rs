//! rkb's test kit, reached as `rkb_runtime::testing` (feature `testing`, which generated
//! projects switch on from `[dev-dependencies]`): RBAC audit ([`RbacAudit`]), fault
//! injection ([`Faults`], [`wrap`]) and a real kube-apiserver and etcd ([`envtest`]).

mod testing;

pub use testing::*;
