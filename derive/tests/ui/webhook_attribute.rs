use k8s_openapi::api::core::v1::ConfigMap;
use rkb_runtime::webhook::{Denied, Request, Validator, Warnings};

struct Checks;

#[rkb_runtime::webhook(
    path = "validate-configmaps",
    name = "checks.example",
    failurePolicy = "fail",
    side_effects = "sometimes",
    operations(create, patch, create),
    timeout_seconds = 60,
    match_policy = exact,
    timeout_seconds = 5,
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

#[rkb_runtime::webhook]
impl Clone for Checks {
    fn clone(&self) -> Self {
        Checks
    }
}

fn main() {}
