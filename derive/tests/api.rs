//! What `#[rkb_runtime::api]` and `#[rkb_runtime::schema]` generate, seen through the CRD.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A custom root name.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Late",
    root = "LateRoot",
    namespaced
)]
#[rkb(short_names = ["lt"])]
pub struct LateSpec {
    #[rkb(minimum = 1)]
    pub size: i32,
}

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Widget")]
pub struct WidgetSpec {
    pub shape: Shape,
    pub pair: Pair,
}

/// Enums take field attributes on their variants' fields.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Shape {
    Circle {
        #[rkb(minimum = 0, exclusive_minimum)]
        radius: f64,
    },
    Square {
        #[rkb(maximum = 10)]
        side: f64,
    },
}

/// Tuple structs name their fields by index.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[rkb(validation(rule = "size(self) > 0"))]
pub struct Pair(#[rkb(max_length = 3)] pub String);

fn schema<K: kube::CustomResourceExt + JsonSchema>() -> serde_json::Value {
    let crd = rkb_runtime::crd::<K>().unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_value(&crd.spec.versions[0].schema).unwrap()["openAPIV3Schema"].clone()
}

#[test]
fn custom_root_names_work() {
    let crd = rkb_runtime::crd::<LateRoot>().unwrap();
    assert_eq!(crd.spec.names.short_names, Some(vec!["lt".into()]));
    assert_eq!(
        schema::<LateRoot>()["properties"]["spec"]["properties"]["size"]["minimum"],
        json!(1.0)
    );
}

#[test]
fn enum_variant_fields_and_newtypes() {
    let spec = &schema::<Widget>()["properties"]["spec"]["properties"];
    let shape = &spec["shape"]["properties"];
    assert_eq!(
        shape["circle"]["properties"]["radius"]["exclusiveMinimum"],
        json!(true)
    );
    assert_eq!(
        shape["square"]["properties"]["side"]["maximum"],
        json!(10.0)
    );
    assert_eq!(spec["pair"]["maxLength"], json!(3));
    assert_eq!(
        spec["pair"]["x-kubernetes-validations"],
        json!([{"rule": "size(self) > 0"}])
    );
}

/// controller-gen's ExactlyOneOf/AtMostOneOf/AtLeastOneOf, k8s:immutable, title,
/// externalDocs, structType on list items and an enum on a reusable string type.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Timer", namespaced)]
#[rkb(exactly_one_of = ["cron", "everyMinutes"], at_most_one_of = ["cron", "namespace"])]
#[rkb(at_least_one_of = ["cron", "max-delay"])]
#[serde(rename_all = "camelCase")]
pub struct TimerSpec {
    pub cron: Option<String>,
    pub every_minutes: Option<u32>,
    pub namespace: Option<String>,
    #[serde(rename = "max-delay")]
    pub max_delay: Option<u32>,
    #[rkb(immutable, title = "Zone")]
    pub zone: String,
    #[rkb(external_docs(url = "https://example.com/targets", description = "Targets"))]
    #[rkb(items(struct_type = atomic))]
    pub targets: Vec<Target>,
    pub mode: Mode,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Target {
    pub name: String,
}

/// A string type reused by many fields: its allowed values go with it.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[rkb(enum_values = ["fast", "slow"], title = "Mode")]
pub struct Mode(pub String);

#[test]
fn controller_gen_markers_reach_the_schema() {
    let spec = &schema::<Timer>()["properties"]["spec"];
    assert_eq!(
        spec["x-kubernetes-validations"],
        json!([
            {"rule": "[has(self.cron), has(self.everyMinutes)].filter(x, x).size() == 1",
             "message": "exactly one of cron, everyMinutes must be set"},
            {"rule": "[has(self.cron), has(self.__namespace__)].filter(x, x).size() <= 1",
             "message": "at most one of cron, namespace may be set"},
            {"rule": "[has(self.cron), has(self.max__dash__delay)].filter(x, x).size() >= 1",
             "message": "at least one of cron, max-delay must be set"},
        ])
    );
    let props = &spec["properties"];
    assert_eq!(
        props["zone"],
        json!({"type": "string", "title": "Zone",
               "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "value is immutable"}]})
    );
    assert_eq!(
        props["targets"]["externalDocs"],
        json!({"url": "https://example.com/targets", "description": "Targets"})
    );
    assert_eq!(props["targets"]["items"]["x-kubernetes-map-type"], "atomic");
    assert_eq!(props["mode"]["enum"], json!(["fast", "slow"]));
    assert_eq!(props["mode"]["title"], "Mode");
}
