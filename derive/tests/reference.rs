//! The examples of the book's attribute reference (docs/src/reference/attributes.md and
//! rbac-and-webhooks.md include them by anchor), compiled and checked here.

use k8s_openapi::api::core::v1::Pod;
use kube::CustomResource;
use rkb_runtime::Rbac;
use rkb_runtime::webhook::{Denied, Request, Validator, Warnings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ANCHOR: spec
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "cache.example.com",
    version = "v1",
    kind = "Memcached",
    namespaced
)]
#[rkb(printcolumn(name = "Size", type = integer, json_path = ".spec.size"), short_names = ["mc"])]
pub struct MemcachedSpec {
    /// How many replicas to run.
    #[rkb(minimum = 1, maximum = 10, default = 1)]
    pub size: i32,
    /// Extra arguments, each at most 63 characters.
    #[rkb(list_type = atomic, items(max_length = 63))]
    #[serde(default)]
    pub args: Vec<String>,
}
// ANCHOR_END: spec

// ANCHOR: rbac
#[derive(Rbac)]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, list, watch])]
#[rbac(groups = ["core"], resources = ["configmaps"], verbs = [get], namespace = "system")]
#[rbac(urls = ["/metrics"], verbs = [get])]
struct MyReconciler;
// ANCHOR_END: rbac

struct PodWebhook;

// ANCHOR: webhook
#[rkb_runtime::webhook(
    failure_policy = "ignore",
    operations(create, update, delete),
    timeout_seconds = 5,
    namespace_selector = "environment in (prod, staging)",
    match_condition(
        name = "not-kube-system",
        expression = "request.namespace != 'kube-system'"
    )
)]
impl Validator<Pod> for PodWebhook {
    async fn validate_create(&self, _: &Request, _: &Pod) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    async fn validate_update(&self, _: &Request, _: &Pod, _: &Pod) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}
// ANCHOR_END: webhook

#[test]
fn the_examples_do_what_the_reference_says() {
    let crd = rkb_runtime::crd::<Memcached>().unwrap().into_definition();
    assert_eq!(crd.spec.names.short_names, Some(vec!["mc".to_owned()]));
    let columns = crd.spec.versions[0].additional_printer_columns.as_ref();
    assert_eq!(columns.unwrap()[0].json_path, ".spec.size");
    let rules = rkb_runtime::rbac_rules::<MyReconciler>();
    assert_eq!(rules.len(), 3);
    assert_eq!(rules[1].api_groups, [""]);
    let settings = <PodWebhook as Validator<Pod>>::settings();
    assert_eq!(settings.timeout_seconds, Some(5));
    assert_eq!(settings.operations.len(), 3);
    assert_eq!(
        settings.namespace_selector.as_deref(),
        Some("environment in (prod, staging)")
    );
    assert_eq!(settings.match_conditions[0].name, "not-kube-system");
}
