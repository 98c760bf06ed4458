use k8s_openapi::api::core::v1::Node;
use rkb_runtime::{ClusterApi, NamespacedApi};

fn use_nodes(client: kube::Client) {
    let _nodes = Node::api(client.clone(), "default");
    let _all = Node::api_all(client);
}

fn main() {}
