//! Support library for operators scaffolded by rkb: the one crate generated projects
//! depend on, a facade over one crate per job (as `kube` fronts kube-core, kube-client
//! and kube-runtime).
//!
//! - [`Rbac`]: declare a reconciler's RBAC rules with `#[derive(Rbac)]` and
//!   `#[rbac(...)]` attributes (controller-gen's `+kubebuilder:rbac` markers).
//! - [`Manifests`]: render CRDs and the manager's roles into `config/`, the
//!   job of `make manifests` (feature `manifests`, crate `rkb-manifests`).
//! - [`backoff::ErrorBackoff`]: per-object exponential requeue delays.
//! - [`events::Events`]: Events recorded off the reconcile path, in order (feature
//!   `manager`).
//! - [`manager::Manager`]: runs the controllers with leader election, metrics, health
//!   probes and graceful shutdown, like controller-runtime's manager (feature `manager`,
//!   crate `rkb-manager`).
//! - [`webhook`](mod@webhook): defaulting, validating and conversion webhooks the manager serves
//!   (feature `manager`).
//! - [`migrate`]: storage version migration of CRDs, the manager's `--migrate-storage`
//!   (feature `manager`), and [`storage_migration_rules`], the RBAC rules it needs.
//! - `testing`: envtest, RBAC audit and fault injection for tests (feature `testing`,
//!   crate `rkb-testing`), switched on from `[dev-dependencies]`.

#[cfg(feature = "manager")]
pub use rkb_manager::{ClusterApi, Lister, NamespacedApi, TypedApi};
#[cfg(feature = "manager")]
pub use rkb_manager::{Manager, backoff, cache, client, events, manager, migrate, webhook};

#[cfg(feature = "manifests")]
pub use rkb_derive::Rbac;
/// `#[rkb_runtime::webhook(...)]` on an `impl Defaulter<K>` or `impl Validator<K>`:
/// controller-gen's `+kubebuilder:webhook` marker (path, failure policy, side effects,
/// operations, match policy, timeout), checked at compile time.
#[cfg(all(feature = "manager", feature = "manifests"))]
pub use rkb_derive::webhook;
/// `#[rkb_runtime::api]` on a custom resource's spec struct and
/// `#[rkb_runtime::schema]` on the types it contains: controller-gen's markers
/// as `#[rkb(...)]` attributes (validation, defaults, list types, printer
/// columns, ...).
#[cfg(feature = "manifests")]
pub use rkb_derive::{api, schema};
/// The trait; the derive macro of the same name lives in the macro namespace,
/// so `use rkb_runtime::Rbac;` imports both (as with serde).
#[cfg(feature = "manifests")]
pub use rkb_manifests::Rbac;
#[doc(hidden)]
#[cfg(feature = "manifests")]
pub use rkb_manifests::schema_macro;
/// `crd` is the module and, in the value namespace, the function: the CRD of a
/// kube-derived custom resource, checked to be structural (lets generated code list
/// CRDs without importing kube's trait).
#[cfg(feature = "manifests")]
pub use rkb_manifests::{Crd, CrdError, Manifests, crd, manifests, rbac, schema};

#[cfg(feature = "testing")]
pub use rkb_testing as testing;

/// The RBAC rules a reconciler declared with `#[derive(Rbac)]`.
#[cfg(feature = "manifests")]
pub fn rbac_rules<R: rbac::Rbac>() -> Vec<rbac::Rule> {
    R::rbac_rules()
}

/// The defaulting webhook `D` serves for `K`, for [`Manifests::webhooks`]: rendered into
/// `config/webhook/manifests.yaml` with the settings of its `#[webhook(...)]` attribute.
#[cfg(all(feature = "manager", feature = "manifests"))]
pub fn defaulting_webhook<K, D>() -> rkb_manifests::webhook::Webhook
where
    K: rkb_manifests::webhook::Resource<DynamicType = ()>,
    D: webhook::Defaulter<K>,
{
    rkb_manifests::webhook::Webhook::admission::<K>(webhook::Kind::Mutating, D::settings())
}

/// The validating webhook `V` serves for `K`, for [`Manifests::webhooks`].
#[cfg(all(feature = "manager", feature = "manifests"))]
pub fn validating_webhook<K, V>() -> rkb_manifests::webhook::Webhook
where
    K: rkb_manifests::webhook::Resource<DynamicType = ()>,
    V: webhook::Validator<K>,
{
    rkb_manifests::webhook::Webhook::admission::<K>(webhook::Kind::Validating, V::settings())
}

/// Conversion of the CRD whose hub (storage version) is `H`, for [`Manifests::webhooks`]:
/// the CRD gets `conversion: strategy: Webhook`.
#[cfg(all(feature = "manager", feature = "manifests"))]
pub fn conversion_webhook<H: webhook::Hub>() -> rkb_manifests::webhook::Webhook {
    rkb_manifests::webhook::Webhook::conversion::<H>()
}

/// The RBAC rules [`migrate`] (the manager's `--migrate-storage`) needs for `K`'s CRD, for
/// the `rbac` list of [`Manifests`]: `get` on the CRD and `patch` on its status (by name),
/// `list` and `patch` on the resource (in every namespace). Add them only when the operator
/// migrates storage: the controllers need none of them.
#[cfg(all(feature = "manager", feature = "manifests"))]
pub fn storage_migration_rules<K>() -> Vec<rbac::Rule>
where
    K: rkb_manifests::webhook::Resource<DynamicType = ()>,
{
    let rule = |group: &str, resource: String, names: Vec<String>, verbs: &[&str]| rbac::Rule {
        api_groups: vec![group.to_owned()],
        resources: vec![resource],
        resource_names: names,
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..rbac::Rule::default()
    };
    let crd = migrate::crd_name::<K>();
    vec![
        rule(
            "apiextensions.k8s.io",
            "customresourcedefinitions".into(),
            vec![crd.clone()],
            &["get"],
        ),
        rule(
            "apiextensions.k8s.io",
            "customresourcedefinitions/status".into(),
            vec![crd],
            &["patch"],
        ),
        rule(
            &K::group(&()),
            K::plural(&()).into_owned(),
            Vec::new(),
            &["list", "patch"],
        ),
    ]
}
