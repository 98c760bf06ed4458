use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Memcached", namespaced)]
pub struct MemcachedSpec {
    #[rkb(minimum = 10, maximum = 1)]
    pub size: i32,
    #[rkb(min_length = 5, max_length = 2, exclusive_minimum)]
    pub name: String,
    #[rkb(list_map_keys = ["name"])]
    pub ports: Vec<Port>,
    #[rkb(list_type = map)]
    pub volumes: Vec<Port>,
    #[rkb(list_type = set, list_map_keys = ["name"])]
    pub mounts: Vec<Port>,
    #[rkb(int_or_string, schemaless)]
    pub port: Option<String>,
    #[rkb(minimum = 1)]
    #[rkb(minimum = 2)]
    pub twice: i32,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Port {
    pub name: String,
}

fn main() {}
