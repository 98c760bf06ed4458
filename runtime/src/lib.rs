//! The support library of operators scaffolded by [rkb](https://github.com/rkb-rs/rkb), and
//! the one crate they depend on, as a kubebuilder project depends on controller-runtime.
//! Like `kube`, which fronts kube-core, kube-client and kube-runtime, it is a facade: each
//! feature brings in one of rkb's crates and re-exports it here, so generated code names
//! `rkb_runtime::...` paths only.
//!
//! How to use it in a project is the subject of the
//! [rkb Book](https://github.com/rkb-rs/rkb/blob/main/docs/src/introduction.md); this page
//! is a map of the API.
//!
//! | feature | crate | what it brings |
//! |---|---|---|
//! | `manager` (default) | `rkb-manager` | what the operator runs on: the manager, watch caches, typed clients, Events, webhooks, storage migration |
//! | `manifests` (default) | `rkb-manifests`, `rkb-derive` | CRDs, RBAC rules and webhook configurations from Rust types: what `make manifests` writes |
//! | `testing` | `rkb-testing` | the test kit, switched on from `[dev-dependencies]`: envtest, the RBAC audit, fault injection |
//!
//! # Running: the manager (feature `manager`)
//!
//! - [`Manager`] (module [`manager`]) runs the operator's controllers, each a
//!   [`manager::Runnable`], with Lease leader election, Prometheus metrics behind
//!   TokenReview and SubjectAccessReview, health probes and graceful shutdown, configured
//!   by the flags of [`manager::Args`]. A controller gets a [`manager::Context`] and hands
//!   its kube-runtime `Controller` to [`manager::Context::run`].
//! - [`cache`] builds controllers that read from their watches, as controller-runtime's
//!   cached client does: [`cache::controller`] (no reconcile for a status-only change),
//!   [`cache::owns`] (owned objects kept whole in a [`Lister`]), [`cache::OwnWrites`] (no
//!   reconcile for the operator's own writes), [`cache::SharedCache`] (one watch per kind
//!   for all controllers, from [`manager::Context::cache`]) and [`cache::Namespaces`] (the
//!   namespaces of `--watch-namespace`).
//! - [`client`]: [`NamespacedApi`] and [`ClusterApi`] give every kind typed constructors
//!   of a [`TypedApi`], with server-side apply, status apply, apply-if-changed and
//!   idempotent finalizers; a [`Lister`] reads a reflector's store.
//! - [`events::Events`] queues Events and sends them off the reconcile path.
//! - [`backoff::ErrorBackoff`]: per-object exponential requeue delays for an
//!   `error_policy`.
//! - [`mod@webhook`]: defaulting and validating webhooks ([`webhook::Defaulter`],
//!   [`webhook::Validator`], with apimachinery-style field errors from [`webhook::field`])
//!   and conversion webhooks (a [`webhook::Hub`] and a [`webhook::Convertible`] per spoke),
//!   served once registered in [`webhook::Webhooks`] with [`Manager::webhooks`].
//! - [`migrate`]: storage version migration, the manager's `--migrate-storage`
//!   ([`migrate::Migration`]), and [`storage_migration_rules`], the RBAC rules it needs.
//! - [`certs`]: webhook certificates the manager makes, injects into its webhook
//!   configurations and CRDs, and rotates itself, without cert-manager
//!   ([`Manager::webhook_certificates`]), and [`webhook_certificate_rules`], the RBAC rules
//!   it needs; likewise the metrics server's ([`Manager::metrics_certificates`],
//!   [`metrics_certificate_rules`]).
//!
//! ```no_run
//! // What a generated src/main.rs boils down to.
//! use clap::Parser;
//! use rkb_runtime::manager::{Args, Manager, Runnable};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let args = Args::parse();
//!     args.init_logging()?;
//!     let client = kube::Client::try_default().await?;
//!     let controllers = vec![Runnable::new("memcached", |ctx| async move {
//!         // A scaffolded controller builds a kube-runtime Controller with
//!         // rkb_runtime::cache and hands it to ctx.run(...), which returns at shutdown.
//!         ctx.set_ready();
//!         ctx.shutdown().cancelled().await;
//!         Ok(())
//!     })];
//!     Manager::new("memcached-operator", client, args)
//!         .run(controllers)
//!         .await?;
//!     Ok(())
//! }
//! ```
//!
//! # Describing: manifests from Rust (feature `manifests`)
//!
//! - [`macro@api`] on a custom resource's spec struct, and [`macro@schema`] on the types it
//!   contains: controller-gen's CRD markers as `#[rkb(...)]` attributes (validation,
//!   defaults, list and map types, printer columns, versions), checked at compile time.
//! - [`derive@Rbac`] with `#[rbac(...)]` on a reconciler: the RBAC rules it needs
//!   (controller-gen's `+kubebuilder:rbac`), read back with [`rbac_rules`]; the rule model
//!   is in [`rbac`].
//! - [`macro@webhook`] on an `impl Defaulter<K>` or `impl Validator<K>`: the webhook's
//!   settings (controller-gen's `+kubebuilder:webhook`).
//! - [`fn@crd`]: a kind's CRD, repaired to be structural and checked as the API server
//!   would, without panicking ([`Crd`], [`CrdError`]; the repairs are in [`mod@schema`]).
//! - [`Manifests`]: the CRDs, rules and webhooks ([`defaulting_webhook`],
//!   [`validating_webhook`], [`conversion_webhook`]) a project's `manifests()` lists, which
//!   `make manifests` writes into `config/` and the test `manifests_are_up_to_date` checks
//!   (module [`manifests`]).
//! - [`mod@sources`]: the `#[rbac(...)]` rules and webhook settings of a project's sources,
//!   read without compiling them, by the parser the macros use:
//!   [`Manifests::rules_from`] adds the rules of every `#[derive(Rbac)]` under a directory,
//!   so a manifests generator need not link the reconcilers.
//!
//! ```
//! use kube::CustomResource;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// The desired state of a Memcached.
//! #[rkb_runtime::api]
//! #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
//! #[kube(group = "cache.example.com", version = "v1alpha1", kind = "Memcached", namespaced)]
//! pub struct MemcachedSpec {
//!     /// The number of pods.
//!     #[rkb(minimum = 0, maximum = 10)]
//!     pub size: i32,
//! }
//!
//! #[derive(rkb_runtime::Rbac)]
//! #[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [list, watch])]
//! pub struct MemcachedReconciler;
//!
//! /// What `make manifests` writes.
//! pub fn manifests() -> rkb_runtime::Manifests {
//!     rkb_runtime::Manifests::new(
//!         vec![rkb_runtime::crd::<Memcached>()],
//!         vec![rkb_runtime::rbac_rules::<MemcachedReconciler>()],
//!     )
//! }
//!
//! let crds = manifests().crds().unwrap();
//! assert_eq!(crds[0].metadata.name.as_deref(), Some("memcacheds.cache.example.com"));
//! ```
//!
//! # Testing (feature `testing`)
//!
//! `rkb_runtime::testing` is the `rkb-testing` crate, which generated projects switch on
//! from `[dev-dependencies]`: `testing::envtest` starts a real kube-apiserver and etcd
//! (controller-runtime's envtest, launched from Rust); `testing::wrap` wraps a client to
//! audit its requests against `config/rbac/role.yaml` (`testing::RbacAudit`) and to inject
//! conflicts, server errors and timeouts (`testing::Faults`); `testing::controller` starts
//! a controller in a test and records its reconciles; `testing::conversion` property-tests
//! conversion webhooks. The book's
//! [Testing guide](https://github.com/rkb-rs/rkb/blob/main/docs/src/guides/testing.md)
//! shows them at work.

#[cfg(feature = "manager")]
pub use rkb_manager::{ClusterApi, Lister, NamespacedApi, TypedApi};
#[cfg(feature = "manager")]
pub use rkb_manager::{Manager, backoff, cache, certs, client, events, manager, migrate, webhook};
/// The certificates' names without the manager (the same types as `rkb_manager::certs`
/// re-exports), for an API crate whose `make manifests` turns them into RBAC rules.
#[cfg(all(feature = "manifests", not(feature = "manager")))]
pub use rkb_manifests::certs;

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
/// The webhooks an API crate's generator lists: `webhooks::defaulting::<K>("path::To::Impl")`,
/// `webhooks::validating`, `webhooks::conversion::<K>()`, without the manager.
#[cfg(feature = "manifests")]
pub use rkb_manifests::webhook as webhooks;
/// `crd` is the module and, in the value namespace, the function: the CRD of a
/// kube-derived custom resource, checked to be structural (lets generated code list
/// CRDs without importing kube's trait).
#[cfg(feature = "manifests")]
pub use rkb_manifests::{Crd, CrdError, Manifests, crd, manifests, rbac, schema, sources};

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
#[cfg(feature = "manifests")]
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
    let crd = rkb_manifests::crd::name::<K>();
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

/// The RBAC rules the manager needs to keep its own webhook certificates
/// (`Manager::webhook_certificates`, module [`certs`]), for the `rbac` list of
/// [`Manifests`]; nothing wider:
///
/// - in its namespace (the one `certs` names, else `system`, which kustomize's
///   `namespace:` replaces): `get`, `list`, `watch` and `update` on the Secret, by name;
///   and `create` on Secrets, which Kubernetes cannot restrict by name (`resourceNames`
///   never applies to `create`: the name is not known when the request is authorized), so
///   it is a rule of its own, in that namespace only, and grants no reading of other
///   Secrets;
/// - `get` and `patch` on each named Mutating/ValidatingWebhookConfiguration and CRD, by
///   name.
#[cfg(feature = "manifests")]
pub fn webhook_certificate_rules(certs: &certs::WebhookCertificates) -> Vec<rbac::Rule> {
    let mut rules = certificate_secret_rules(certs.secret_name(), certs.namespace_name());
    let named = [
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            certs.mutating_webhook_configurations(),
        ),
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            certs.validating_webhook_configurations(),
        ),
        (
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            certs.conversion_webhook_crds(),
        ),
    ];
    for (group, resource, names) in named {
        if !names.is_empty() {
            rules.push(rbac_rule(group, resource, names, &["get", "patch"]));
        }
    }
    rules
}

/// The RBAC rules the manager needs to keep its metrics server's certificate
/// ([`manager::Manager::metrics_certificates`], module [`certs`]), for the `rbac` list of
/// [`Manifests`]: those of its Secret, as in [`webhook_certificate_rules`] (`get`, `list`,
/// `watch` and `update` on it by name, and `create` on Secrets, which Kubernetes cannot
/// restrict by name, in its namespace only), and nothing else: no object holds its CA but
/// the Secret.
#[cfg(feature = "manifests")]
pub fn metrics_certificate_rules(certs: &certs::MetricsCertificates) -> Vec<rbac::Rule> {
    certificate_secret_rules(certs.secret_name(), certs.namespace_name())
}

/// The rules of a certificate Secret `secret` in `namespace` (else `system`, which
/// kustomize's `namespace:` replaces).
#[cfg(feature = "manifests")]
fn certificate_secret_rules(secret: &str, namespace: Option<&str>) -> Vec<rbac::Rule> {
    let namespace = namespace.unwrap_or("system").to_owned();
    let secret = [secret.to_owned()];
    vec![
        rbac::Rule {
            namespace: Some(namespace.clone()),
            ..rbac_rule("", "secrets", &secret, &["get", "list", "watch", "update"])
        },
        rbac::Rule {
            namespace: Some(namespace),
            ..rbac_rule("", "secrets", &[], &["create"])
        },
    ]
}

#[cfg(feature = "manifests")]
fn rbac_rule(group: &str, resource: &str, names: &[String], verbs: &[&str]) -> rbac::Rule {
    rbac::Rule {
        api_groups: vec![group.to_owned()],
        resources: vec![resource.to_owned()],
        resource_names: names.to_vec(),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..rbac::Rule::default()
    }
}
