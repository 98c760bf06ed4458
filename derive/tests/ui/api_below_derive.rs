use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[rkb_runtime::api]
#[kube(group = "example.com", version = "v1", kind = "Memcached", namespaced)]
pub struct MemcachedSpec {
    #[rkb(minimum = 1)]
    pub size: i32,
}

fn main() {}
