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
