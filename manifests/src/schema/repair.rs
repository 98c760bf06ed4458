//! [`fix`]: what kube leaves non-structural but has one obvious repair.

use rkb_core::schema::{NULLABLE_ASKED, PRESERVE_UNKNOWN_FIELDS as PRESERVE};
use serde_json::{Map, Value};

use super::{JUNCTORS, type_of};

/// Repairs what kube leaves non-structural but has one obvious meaning:
///
/// - a schema that says nothing about its value (a `serde_json::Value` field)
///   becomes `x-kubernetes-preserve-unknown-fields: true`, which is what
///   "anything goes" means in a structural schema;
/// - `additionalProperties: true` (a map of arbitrary values) becomes a map of
///   preserved values, as controller-gen writes `map[string]apiextensionsv1.JSON`;
/// - `nullable: true` stays only where `#[rkb(nullable)]` asked for it, as
///   controller-gen writes it only for `+nullable`, and on the items of a list of
///   `Option`s, whose nulls the API server cannot drop (see `nullability`);
/// - integer formats Kubernetes does not know (`uint8`, `uint64`, ...) become
///   `int32`/`int64`, like controller-gen's for Go's unsigned types.
pub fn fix(schema: &mut Value) {
    fix_node(schema, false, false);
}

fn fix_node(node: &mut Value, in_junctor: bool, is_item: bool) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    nullability(obj, is_item);
    if !in_junctor && says_nothing(obj) {
        obj.insert(PRESERVE.into(), Value::Bool(true));
    }
    if obj.get("additionalProperties") == Some(&Value::Bool(true))
        && !obj.contains_key("properties")
    {
        obj.insert(
            "additionalProperties".into(),
            serde_json::json!({ PRESERVE: true }),
        );
    }
    if type_of(obj) == Some("integer")
        && let Some(format) = obj.get("format").and_then(Value::as_str)
    {
        match format {
            "int8" | "int16" | "uint8" | "uint16" => {
                obj.insert("format".into(), "int32".into());
            }
            "uint32" | "uint64" | "uint" | "int" => {
                obj.insert("format".into(), "int64".into());
            }
            "int128" | "uint128" => {
                obj.remove("format");
            }
            _ => {}
        }
    }
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for prop in props.values_mut() {
            fix_node(prop, in_junctor, false);
        }
    }
    if let Some(sub) = obj.get_mut("items") {
        fix_node(sub, in_junctor, true);
    }
    if let Some(sub) = obj.get_mut("additionalProperties") {
        fix_node(sub, in_junctor, false);
    }
    for key in JUNCTORS {
        if let Some(Value::Array(subs)) = obj.get_mut(key) {
            for sub in subs {
                fix_node(sub, true, false);
            }
        }
    }
    if let Some(sub) = obj.get_mut("not") {
        fix_node(sub, true, false);
    }
}

/// schemars marks every `Option<T>` nullable, but the API server keeps an explicit
/// null of a nullable field, and validates it: `Option<Enum>` then refused `null`
/// (the enum lacks it). A field that is not nullable has its null pruned before
/// defaulting, which is what an absent `Option` means. So only a field that asks keeps
/// `nullable` (an enum that asks is refused by [`super::check`]). A list item is no
/// field: the API server keeps a null item and checks it, so the items of a
/// `Vec<Option<T>>`, which serde writes as `null` for `None`, keep schemars' `nullable`
/// (a nullable enum item is refused by the check, naming the field).
fn nullability(obj: &mut Map<String, Value>, is_item: bool) {
    let asked = obj.remove(NULLABLE_ASKED) == Some(Value::Bool(true));
    let optional_item = is_item && obj.get("nullable") == Some(&Value::Bool(true));
    if asked || optional_item {
        obj.insert("nullable".into(), Value::Bool(true));
        if let Some(Value::Array(values)) = obj.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        return;
    }
    obj.remove("nullable");
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum")
        && values.iter().any(|v| !v.is_null())
    {
        values.retain(|v| !v.is_null());
    }
}

/// A schema with annotations only: it admits any value.
fn says_nothing(obj: &Map<String, Value>) -> bool {
    const ANNOTATIONS: [&str; 5] = ["description", "title", "nullable", "default", "example"];
    obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
}
