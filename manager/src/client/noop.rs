//! Whether a server-side apply would change anything: a controller that reads its objects
//! from a watch cache can skip the request when the cached object already holds what it
//! would send, as controller-runtime's cached reads let Go operators do.
//!
//! An apply by field manager `m` changes nothing when (1) every field it sends already has
//! that value, and (2) `m` owns no field it leaves out (the API server would remove such a
//! field). (1) compares the body with the cached object; (2) walks `m`'s entry of
//! `metadata.managedFields` (the `FieldsV1` set: `f:` fields, `k:` list-map keys, `v:` set
//! values, `i:` indices) against the body. Anything the comparison cannot tell (another
//! manager's entries in a list, a value the API server normalised) counts as a change:
//! the apply is sent, which is always correct, only not free.

use serde_json::{Map, Value};

/// The apply of `body` (as [`super::TypedApi::apply`] would send it) by field manager
/// `manager` to the object `cached` (as the API server last returned it, managedFields
/// included) would leave the object as it is.
pub fn apply_changes_nothing(body: &Value, cached: &Value, manager: &str) -> bool {
    let Some(owned) = owned_fields(cached, manager) else {
        return false; // nothing owned yet: the apply would take ownership
    };
    let mut sent = body.clone();
    if let Some(fields) = sent.as_object_mut() {
        // Type identifiers, not fields: never listed in managedFields.
        fields.remove("apiVersion");
        fields.remove("kind");
    }
    holds(cached, &sent) && sends_all(owned, &sent)
}

/// The `FieldsV1` of `manager`'s apply to the main resource, if it made one.
fn owned_fields<'a>(cached: &'a Value, manager: &str) -> Option<&'a Map<String, Value>> {
    cached
        .pointer("/metadata/managedFields")?
        .as_array()?
        .iter()
        .find(|entry| {
            entry["manager"] == manager
                && entry["operation"] == "Apply"
                && entry
                    .get("subresource")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
        })?
        .get("fieldsV1")?
        .as_object()
}

/// `actual` has every field of `wanted` with its value. Lists are compared element by
/// element: an element someone else added makes them differ.
fn holds(actual: &Value, wanted: &Value) -> bool {
    match (actual, wanted) {
        (Value::Object(actual), Value::Object(wanted)) => {
            wanted.iter().all(|(key, wanted)| match actual.get(key) {
                Some(actual) => holds(actual, wanted),
                None => wanted.is_null(),
            })
        }
        (Value::Array(actual), Value::Array(wanted)) => {
            actual.len() == wanted.len() && actual.iter().zip(wanted).all(|(a, w)| holds(a, w))
        }
        (actual, wanted) => actual == wanted,
    }
}

/// Every field in the owned set `owned` is in `sent`: applying `sent` removes none.
fn sends_all(owned: &Map<String, Value>, sent: &Value) -> bool {
    owned.iter().all(|(key, nested)| {
        let nested = nested.as_object();
        let within = |value: &Value| nested.is_none_or(|nested| sends_all(nested, value));
        if key == "." {
            return true; // the element itself, which is being sent
        }
        if let Some(field) = key.strip_prefix("f:") {
            return sent.get(field).is_some_and(|v| !v.is_null() && within(v));
        }
        let Some(items) = sent.as_array() else {
            return false;
        };
        if let Some(key) = key.strip_prefix("k:") {
            let Ok(Value::Object(key)) = serde_json::from_str::<Value>(key) else {
                return false;
            };
            let matches = |item: &&Value| key.iter().all(|(k, v)| item.get(k) == Some(v));
            return items.iter().find(matches).is_some_and(within);
        }
        if let Some(value) = key.strip_prefix("v:") {
            return serde_json::from_str::<Value>(value).is_ok_and(|v| items.contains(&v));
        }
        if let Some(index) = key.strip_prefix("i:") {
            return index
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .is_some_and(within);
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ME: &str = "memcached-operator";

    /// A Deployment as the API server returns it after `ME` applied `sent()`: defaults
    /// filled in, and another manager's field.
    fn cached() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "cache", "namespace": "default", "resourceVersion": "7", "uid": "u1",
                "labels": { "app": "cache", "team": "web" },
                "managedFields": [
                    { "manager": ME, "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                      "fieldsV1": { "f:metadata": { "f:labels": { "f:app": {} } },
                        "f:spec": { "f:replicas": {}, "f:template": { "f:spec": { "f:containers": {
                          "k:{\"name\":\"app\"}": { ".": {}, "f:image": {}, "f:name": {},
                            "f:args": {} } } } } } } },
                    { "manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                      "fieldsV1": { "f:metadata": { "f:labels": { "f:team": {} } } } },
                    { "manager": ME, "operation": "Apply", "subresource": "status", "apiVersion": "apps/v1",
                      "fieldsType": "FieldsV1", "fieldsV1": { "f:status": { "f:note": {} } } }
                ]
            },
            "spec": {
                "replicas": 3,
                "template": { "spec": { "containers": [
                    { "name": "app", "image": "memcached:1.6", "args": ["-m", "64"],
                      "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log" }
                ] } }
            },
            "status": { "replicas": 3 }
        })
    }

    fn sent() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": "cache", "namespace": "default", "labels": { "app": "cache" } },
            "spec": {
                "replicas": 3,
                "template": { "spec": { "containers": [
                    { "name": "app", "image": "memcached:1.6", "args": ["-m", "64"] }
                ] } }
            }
        })
    }

    #[test]
    fn an_apply_of_what_is_there_changes_nothing() {
        assert!(apply_changes_nothing(&sent(), &cached(), ME));
    }

    #[test]
    fn a_changed_or_new_value_is_a_change() {
        let mut scaled = sent();
        scaled["spec"]["replicas"] = json!(5);
        assert!(!apply_changes_nothing(&scaled, &cached(), ME));
        let mut new_field = sent();
        new_field["spec"]["paused"] = json!(true);
        assert!(!apply_changes_nothing(&new_field, &cached(), ME));
        let mut new_arg = sent();
        new_arg["spec"]["template"]["spec"]["containers"][0]["args"] = json!(["-m", "64", "-v"]);
        assert!(!apply_changes_nothing(&new_arg, &cached(), ME));
    }

    #[test]
    fn a_field_no_longer_sent_is_a_change_as_the_apply_removes_it() {
        let mut without_args = sent();
        let container = &mut without_args["spec"]["template"]["spec"]["containers"][0];
        container.as_object_mut().unwrap().remove("args");
        assert!(!apply_changes_nothing(&without_args, &cached(), ME));
        let mut without_label = sent();
        without_label["metadata"]["labels"] = json!({});
        assert!(!apply_changes_nothing(&without_label, &cached(), ME));
    }

    #[test]
    fn another_managers_fields_and_server_defaults_are_no_change() {
        // `team` (kubectl's) and `imagePullPolicy` (defaulted) are not in what ME sends.
        let cached = cached();
        assert_eq!(cached["metadata"]["labels"]["team"], "web");
        assert!(apply_changes_nothing(&sent(), &cached, ME));
    }

    #[test]
    fn a_manager_that_never_applied_must_apply() {
        assert!(!apply_changes_nothing(&sent(), &cached(), "someone-else"));
        let mut status_only = cached();
        status_only["metadata"]["managedFields"]
            .as_array_mut()
            .unwrap()
            .remove(0);
        assert!(!apply_changes_nothing(&sent(), &status_only, ME));
    }

    #[test]
    fn a_container_someone_else_added_is_a_change_in_doubt() {
        let mut cached = cached();
        let containers = cached["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap();
        containers.push(json!({ "name": "sidecar", "image": "envoy" }));
        assert!(!apply_changes_nothing(&sent(), &cached, ME));
    }

    #[test]
    fn owned_set_values_and_indices_are_checked() {
        let owned =
            json!({ "f:finalizers": { "v:\"a/b\"": {} }, "f:ports": { "i:0": { "f:port": {} } } });
        let owned = owned.as_object().unwrap();
        assert!(sends_all(
            owned,
            &json!({ "finalizers": ["a/b"], "ports": [{ "port": 80 }] })
        ));
        assert!(!sends_all(
            owned,
            &json!({ "finalizers": ["c/d"], "ports": [{ "port": 80 }] })
        ));
        assert!(!sends_all(
            owned,
            &json!({ "finalizers": ["a/b"], "ports": [{}] })
        ));
        assert!(!sends_all(owned, &json!({ "finalizers": ["a/b"] })));
    }
}
