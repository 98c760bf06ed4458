use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Memcached", namespaced)]
pub struct MemcachedSpec {
    #[rkb(minimum = "1", max_length = -1, multiple_of = 0)]
    pub size: i32,
    #[rkb(pattern = 5, format = "datetime2", nullable = false)]
    pub when: Option<String>,
    #[rkb(list_type = "map", map_type = merge)]
    pub items: Vec<String>,
    #[rkb(enum_values = [], list_map_keys = "name")]
    pub mode: String,
    #[rkb(default)]
    pub replicas: Option<i32>,
    #[rkb(pattern = "^(a|b$")]
    pub id: String,
}

fn main() {}
