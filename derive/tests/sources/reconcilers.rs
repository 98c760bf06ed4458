//! Reconcilers that `tests/sources.rs` compiles with `#[derive(Rbac)]` and reads with
//! `rkb_runtime::sources`: each spelling of the derive, each key and value shape.

use std::marker::PhantomData;

use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [get, list, watch])]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds/status"], verbs = [patch])]
pub struct Plain;

#[derive(Clone, Debug, rkb_runtime::Rbac)]
#[rbac(groups = ["core"], resources = ["pods", "configmaps"], verbs = ["get", r#use, use])]
pub struct Qualified;

#[derive(::rkb_runtime::Rbac)]
#[rbac(groups = ["", "apps"], resources = ["deployments"], resource_names = ["a", "b"], verbs = [delete])]
#[rbac(groups = ["coordination.k8s.io"], resources = ["leases"], verbs = [get, update], namespace = "system")]
#[rbac(urls = ["/metrics", "/healthz"], verbs = [get])]
pub enum AnEnum {}

/// Doc comments and other attributes around the rules change nothing.
#[derive(Rbac)]
#[rbac(groups = ["certificates.k8s.io"], resources = ["signers"], resource_names = ["example.com/signer"], verbs = [approve])]
#[allow(dead_code)]
#[rbac(groups = ["batch"], resources = ["jobs"], verbs = [deletecollection])]
pub struct Generic<T>(PhantomData<T>);

pub mod inner {
    #[derive(super::Rbac)]
    #[rbac(groups = ["events.k8s.io"], resources = ["events"], verbs = [create, patch])]
    pub struct r#Nested;
}

/// Compiled in the test, but never in an operator: the reader skips it.
#[cfg(test)]
#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["secrets"], verbs = [list])]
pub struct OnlyInTests;
