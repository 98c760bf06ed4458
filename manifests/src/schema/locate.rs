//! Where things of the Rust types sit in the schema kube derives, whose subschemas are
//! inlined: found in the schema schemars makes before that (subschemas still `$ref`s
//! to named definitions), at the same JSON pointers.

use rkb_core::schema::NULLABLE_ASKED;
use serde_json::Value;

use super::JUNCTORS;

/// What [`locate`] finds, each by the JSON pointer of its node.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// k8s-openapi types, with their definition name (`io.k8s.api.core.v1.PodSpec`).
    pub k8s: Vec<(String, String)>,
    /// Fields that asked for `#[rkb(nullable)]`: kube's typed CRD drops the marker, so
    /// [`mark`] puts it back in the JSON for [`super::fix`].
    pub nullable: Vec<String>,
}

/// Walks a schema whose subschemas are `$ref`s to its named definitions.
pub fn locate(root: &Value) -> Found {
    let mut found = Found::default();
    walk(root, root, String::new(), &mut Vec::new(), &mut found);
    found
}

/// Puts the `#[rkb(nullable)]` markers of `found` into the inlined schema `root`.
pub fn mark(root: &mut Value, found: &Found) {
    for pointer in &found.nullable {
        if let Some(Value::Object(node)) = root.pointer_mut(pointer) {
            node.insert(NULLABLE_ASKED.into(), Value::Bool(true));
        }
    }
}

fn walk(root: &Value, node: &Value, pointer: String, stack: &mut Vec<String>, found: &mut Found) {
    let Some(obj) = node.as_object() else {
        return;
    };
    if obj.get(NULLABLE_ASKED) == Some(&Value::Bool(true)) {
        found.nullable.push(pointer.clone());
    }
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference).to_owned();
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer));
        if let Some(target) = target
            && !stack.contains(&name)
        {
            if name.starts_with("io.k8s.") {
                found.k8s.push((pointer.clone(), name.clone()));
            }
            stack.push(name);
            walk(root, target, pointer.clone(), stack, found);
            stack.pop();
        }
    }
    // `Option<T>` wraps T in a junctor; kube hoists enum variants' fields into the
    // enum's node, so a branch's fields sit at the node's own pointer.
    for key in JUNCTORS {
        for sub in obj.get(key).and_then(Value::as_array).into_iter().flatten() {
            walk(root, sub, pointer.clone(), stack, found);
        }
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            let escaped = name.replace('~', "~0").replace('/', "~1");
            let at = format!("{pointer}/properties/{escaped}");
            walk(root, prop, at, stack, found);
        }
    }
    if let Some(items) = obj.get("items") {
        walk(root, items, format!("{pointer}/items"), stack, found);
    }
    if let Some(values @ Value::Object(_)) = obj.get("additionalProperties") {
        let at = format!("{pointer}/additionalProperties");
        walk(root, values, at, stack, found);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nullable_markers_are_found_and_put_back() {
        let unresolved = json!({"properties": {"spec": {"$ref": "#/components/schemas/Spec"}},
        "components": {"schemas": {"Spec": {"properties": {
            "a": {"type": "string", NULLABLE_ASKED: true},
            "b": {"type": "string"}
        }}}}});
        let found = locate(&unresolved);
        assert_eq!(found.nullable, ["/properties/spec/properties/a"]);
        let mut inlined = json!({"properties": {"spec": {"properties": {"a": {}, "b": {}}}}});
        mark(&mut inlined, &found);
        assert_eq!(
            inlined["properties"]["spec"]["properties"],
            json!({"a": {NULLABLE_ASKED: true}, "b": {}})
        );
    }
}
