//! Webhook impls that `tests/sources.rs` compiles with `#[rkb_runtime::webhook]` and reads
//! with `rkb_runtime::sources`.

use k8s_openapi::api::core::v1::ConfigMap;
use rkb_runtime::webhook;
use rkb_runtime::webhook::{Defaulter, Denied, Request, Validator, Warnings};

pub struct Checks;

#[rkb_runtime::webhook(
    failure_policy = "ignore",
    side_effects = "none_on_dry_run",
    operations(create, update, delete),
    match_policy = "exact",
    timeout_seconds = 5,
    admission_review_versions(v1, v1beta1),
    namespace_selector = "environment in (prod, staging)",
    object_selector = "!skip-validation",
    match_condition(
        name = "not-kube-system",
        expression = "request.namespace != 'kube-system'"
    ),
    match_condition(name = "labelled", expression = "has(object.metadata.labels)"),
    path = "/validate-configmaps",
    name = "vconfigmap.example.com"
)]
impl Validator<ConfigMap> for Checks {
    async fn validate_create(&self, _: &Request, _: &ConfigMap) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    async fn validate_update(
        &self,
        _: &Request,
        _: &ConfigMap,
        _: &ConfigMap,
    ) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[rkb_runtime::webhook(
    reinvocation_policy = "if_needed",
    url = "https://hooks.example.com:9443/mutate"
)]
impl webhook::Defaulter<k8s_openapi::api::core::v1::ConfigMap> for Checks {
    async fn apply_defaults(&self, _: &Request, _: &mut ConfigMap) -> Result<(), Denied> {
        Ok(())
    }
}

pub struct Defaults;

/// The attribute imported, without arguments: kubebuilder's defaults.
#[webhook]
impl Defaulter<ConfigMap> for Defaults {
    async fn apply_defaults(&self, _: &Request, _: &mut ConfigMap) -> Result<(), Denied> {
        Ok(())
    }
}
