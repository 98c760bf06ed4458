use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Memcached", namespaced)]
#[rkb(minimum = 1)]
pub struct MemcachedSpec {
    #[rkb(printcolumn(name = "Size", type = integer, json_path = ".spec.size"))]
    pub size: i32,
    #[rkb(validation(message = "no rule"), validation(rule = "self > 0", reason = Invalid, field_path = "size", color = "red"))]
    pub other: i32,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[rkb(short_names = ["x"])]
pub enum Mode {
    #[rkb(minimum = 1)]
    Fast,
    Slow,
}

#[rkb_runtime::api]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct NotAResource {
    pub size: i32,
}

#[rkb_runtime::api(crd)]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Argued", namespaced)]
pub struct ArguedSpec {
    pub size: i32,
}

fn main() {}
