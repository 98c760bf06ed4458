use k8s_openapi::api::core::v1::ConfigMap;
use rkb_runtime::webhook::{Defaulter, Denied, Request, Validator, Warnings};

struct Checks;

#[rkb_runtime::webhook(
    path = "/validate-configmaps",
    url = "http://hooks.example.com/validate-configmaps",
    reinvocation_policy = "if_needed",
    admission_review_versions(v1beta1),
    namespace_selector = "environment in prod",
    object_selector = "",
    match_condition(name = "not-kube-system", expression = "request.namespace != 'kube-system'"),
    match_condition(name = "unfinished", expression = "request.namespace != "),
    match_condition(name = "Not valid!", expression = "true"),
    match_condition(name = "not-kube-system", expression = "true"),
    match_condition(name = "no-expression"),
    matchConditions = "true",
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
    url = "https://hooks.example.com:9443/mutate-configmaps",
    reinvocation_policy = "sometimes",
    admission_review_versions(v2, v1),
)]
impl Defaulter<ConfigMap> for Checks {
    async fn apply_defaults(&self, _: &Request, _: &mut ConfigMap) -> Result<(), Denied> {
        Ok(())
    }
}

fn main() {}
