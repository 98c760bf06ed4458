use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Memcached", namespaced)]
#[rkb(shortname = ["mc"], printcolumns(name = "Size", type = integer, json_path = ".spec.size"))]
pub struct MemcachedSpec {
    #[rkb(maxLength = 10, Minimum = 1, listMapKey = ["name"], r#enum = ["a"])]
    pub name: String,
    #[rkb(unique_items)]
    pub tags: Vec<String>,
    #[rkb(optional)]
    pub size: i32,
    #[rkb(frobnicate)]
    pub other: i32,
}

fn main() {}
