//! The files of a project that later commands insert into (`rkb init` generates them), and
//! the ones `make manifests` writes.

/// The operator's library: its modules (controllers, webhooks).
pub const LIB: &str = "src/lib.rs";
/// The manager binary: webhook serving.
pub const MAIN: &str = "src/main.rs";
/// The API crate (kubebuilder's `api/` package): the custom resource types, which the
/// operator depends on, and the generator behind `make manifests`, which builds without
/// the operator.
pub const API_CARGO: &str = "api/Cargo.toml";
/// The generator `make manifests` runs, a binary of the API crate.
pub const API_GENERATOR: &str = "api/src/bin/manifests.rs";
/// The API crate's library: a module per API group, the CRDs, and `manifests()`, what
/// `make manifests` writes (the CRDs, the RBAC rules read from the operator's sources, the
/// webhooks named by their impls, the certificates' rules).
pub const API_LIB: &str = "api/src/lib.rs";
/// The types of kinds other projects define (`create api --external-crd`), and their module.
pub const EXTERNAL_API: &str = "api/src/external";
pub const EXTERNAL_API_MOD: &str = "api/src/external/mod.rs";
/// Code of the operator as the API crate writes it: the operator names the API crate
/// `crate::api` (`crate::api::cache::v1alpha1::Memcached`), the crate itself `crate`
/// (`crate::cache::v1alpha1::Memcached`).
pub fn in_api_crate(code: &str) -> String {
    code.replace("crate::api::", "crate::")
}
/// The hack crate: asks, for the crates the API crate's build shares with the operator's,
/// the features the operator's build asks anyway, so that cargo builds each of them once.
pub const HACK_CARGO: &str = "hack/workspace-hack/Cargo.toml";
pub const HACK_LIB: &str = "hack/workspace-hack/lib.rs";
/// The controllers the manager runs, and their modules.
pub const CONTROLLERS: &str = "src/controller/mod.rs";
/// The webhooks the manager serves, and their modules (from the first webhook on).
pub const WEBHOOKS: &str = "src/webhook/mod.rs";
/// The certificates the manager keeps for its webhooks (`webhookCerts: self`): in the API
/// crate, whose generator turns their names into RBAC rules.
pub const WEBHOOK_CERTS: &str = "api/src/webhook_certs.rs";
/// The certificate the manager keeps for its metrics server (`webhookCerts: self`).
pub const METRICS_CERTS: &str = "api/src/metrics_certs.rs";
/// The manager's Deployment.
pub const MANAGER: &str = "config/manager/manager.yaml";
pub const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";
pub const CRD_KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
pub const RBAC_KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";
pub const SAMPLES_KUSTOMIZATION: &str = "config/samples/kustomization.yaml";
pub const WEBHOOK_KUSTOMIZATION: &str = "config/webhook/kustomization.yaml";
/// The ServiceMonitor's kustomization, with `# [SECTION]` lines like config/default's.
pub const PROMETHEUS_KUSTOMIZATION: &str = "config/prometheus/kustomization.yaml";
/// The overlay `make manifests` writes while RBAC rules name other namespaces, which
/// `make deploy` then builds instead of config/default.
pub const NAMESPACED_RBAC: &str = "config/namespaced-rbac";
/// The license header of new Rust files, editable by the user.
pub const BOILERPLATE: &str = "hack/boilerplate.rs.txt";

/// What `make manifests` writes from the project's code (the CRDs, the role, the webhook
/// configurations): no scaffold makes more of them than `init`'s placeholders.
pub fn written_by_make_manifests(path: &str) -> bool {
    path.starts_with("config/crd/bases/")
        || path == "config/rbac/role.yaml"
        || path == "config/webhook/manifests.yaml"
}
