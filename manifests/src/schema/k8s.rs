//! Kubernetes' own schema semantics for the k8s-openapi types a CRD embeds.
//!
//! k8s-openapi's JSON schemas carry types and descriptions, but not what makes the API
//! server treat a PodSpec in a CRD as it treats one in a Deployment: list and map
//! semantics (`containers` merged by `name` and unique), defaults (`protocol: TCP`,
//! which the `[containerPort, protocol]` list-map key needs), Quantity's pattern, and
//! the validations of `metav1.Condition`. `k8s_semantics.json` holds them per
//! definition and property for the release rkb pins, written by
//! `manifests/hack/k8s-semantics.py` from that release's OpenAPI v3 spec and Go markers.

use std::sync::OnceLock;

use rkb_core::schema::{LIST_MAP_KEYS, LIST_TYPE};
use serde_json::{Map, Value};

const TABLE: &str = include_str!("../k8s_semantics.json");

fn table() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(TABLE).expect("k8s_semantics.json is JSON"))
}

/// The Kubernetes release the table was extracted from, e.g. `v1.34.4`.
pub fn kubernetes_version() -> &'static str {
    table()["kubernetes"].as_str().unwrap_or_default()
}

/// What the table says about one definition (`io.k8s.api.core.v1.ContainerPort`):
/// `self` (keywords of the definition's own schema) and `properties`.
pub fn definition(name: &str) -> Option<&'static Map<String, Value>> {
    table()["definitions"].get(name)?.as_object()
}

/// Adds the table's keywords for each definition [`locate`](super::locate) found to
/// the inlined schema `root`. What the schema already says wins.
pub fn apply(root: &mut Value, found: &[(String, String)]) {
    for (pointer, name) in found {
        let Some(definition) = definition(name) else {
            continue;
        };
        let Some(Value::Object(node)) = root.pointer_mut(pointer) else {
            continue;
        };
        if let Some(Value::Object(own)) = definition.get("self") {
            add(node, own);
        }
        let Some(Value::Object(props)) = definition.get("properties") else {
            continue;
        };
        for (prop, keywords) in props {
            if let (Some(Value::Object(schema)), Value::Object(keywords)) = (
                node.get_mut("properties").and_then(|p| p.get_mut(prop)),
                keywords,
            ) {
                add(schema, keywords);
            }
        }
    }
}

fn add(schema: &mut Map<String, Value>, keywords: &Map<String, Value>) {
    // A list type of the schema's own comes with its own keys, or none.
    let own_list_type = schema.contains_key(LIST_TYPE);
    for (key, value) in keywords {
        if own_list_type && key == LIST_MAP_KEYS {
            continue;
        }
        schema.entry(key.clone()).or_insert_with(|| value.clone());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::locate;

    #[test]
    fn the_table_holds_what_kubernetes_says_of_known_types() {
        assert!(kubernetes_version().starts_with("v1."));
        let props = |name: &str| definition(name).unwrap()["properties"].clone();
        let pod = props("io.k8s.api.core.v1.PodSpec");
        assert_eq!(
            pod["containers"],
            json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]})
        );
        assert_eq!(pod["nodeSelector"]["x-kubernetes-map-type"], "atomic");
        let container = props("io.k8s.api.core.v1.Container");
        assert_eq!(
            container["ports"]["x-kubernetes-list-map-keys"],
            json!(["containerPort", "protocol"])
        );
        assert_eq!(
            props("io.k8s.api.core.v1.ContainerPort")["protocol"]["default"],
            "TCP"
        );
        // An optional list-map key keeps its zero default; a required field gets none.
        assert_eq!(
            props("io.k8s.api.core.v1.LocalObjectReference")["name"]["default"],
            ""
        );
        assert!(
            props("io.k8s.api.core.v1.Container")
                .get("name")
                .is_none_or(|n| n.get("default").is_none())
        );
        let condition = props("io.k8s.apimachinery.pkg.apis.meta.v1.Condition");
        assert_eq!(
            condition["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );
        assert_eq!(condition["type"]["maxLength"], 316);
        assert_eq!(condition["reason"]["minLength"], 1);
        assert_eq!(condition["message"]["maxLength"], 32768);
        assert_eq!(condition["lastTransitionTime"]["format"], "date-time");
        let quantity = definition("io.k8s.apimachinery.pkg.api.resource.Quantity").unwrap();
        assert!(
            quantity["self"]["pattern"]
                .as_str()
                .unwrap()
                .contains("[KMGTPE]i")
        );
        assert_eq!(
            definition("io.k8s.api.core.v1.LocalObjectReference").unwrap()["self"],
            json!({"x-kubernetes-map-type": "atomic"})
        );
    }

    #[test]
    fn definitions_are_found_behind_refs_options_and_lists() {
        let root = json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "pod": {"anyOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}, {"type": "null"}]},
                    "mine": {"$ref": "#/components/schemas/Mine"}
                }}
            },
            "components": {"schemas": {
                "io.k8s.api.core.v1.PodSpec": {"type": "object", "properties": {
                    "containers": {"type": "array", "items": {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}}
                }},
                "io.k8s.api.core.v1.Container": {"type": "object", "properties": {"name": {"type": "string"}}},
                "Mine": {"type": "object", "properties": {"me": {"$ref": "#/components/schemas/Mine"}}}
            }}
        });
        assert_eq!(
            locate(&root).k8s,
            [
                (
                    "/properties/spec/properties/pod".to_owned(),
                    "io.k8s.api.core.v1.PodSpec".to_owned()
                ),
                (
                    "/properties/spec/properties/pod/properties/containers/items".to_owned(),
                    "io.k8s.api.core.v1.Container".to_owned()
                ),
            ]
        );
        let mut inlined = json!({"properties": {"spec": {"properties": {"pod": {
            "type": "object",
            "properties": {"containers": {"type": "array", "x-kubernetes-list-type": "atomic"}, "nodeSelector": {"type": "object"}}
        }}}}});
        apply(&mut inlined, &locate(&root).k8s);
        let pod = &inlined["properties"]["spec"]["properties"]["pod"]["properties"];
        assert_eq!(
            pod["containers"]["x-kubernetes-list-type"], "atomic",
            "the schema wins"
        );
        assert_eq!(pod["containers"].get("x-kubernetes-list-map-keys"), None);
        assert_eq!(pod["nodeSelector"]["x-kubernetes-map-type"], "atomic");
    }
}
