use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Memcached", namespaced)]
#[rkb(
    printcolumn(name = "Size", type = int, json_path = "spec.size"),
    printcolumn(name = "Ready", json_path = ".status.ready[0"),
    printcolumn(name = "Age", type_ = date, json_path = ".metadata.creationTimestamp", priority = -1),
    short_names = ["MC", "mc"],
    scale(spec_replicas = ".status.size", statuspath = ".status.replicas"),
    storage = "no"
)]
pub struct MemcachedSpec {
    pub size: i32,
}

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Scaled", namespaced, storage = false)]
#[rkb(scale(spec_replicas = ".spec.replicas", status_replicas = ".status.replicas"), storage = false)]
pub struct ScaledSpec {
    pub replicas: i32,
}

fn main() {}
