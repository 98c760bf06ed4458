//! The size policies of [`Manifests`](crate::Manifests): shorter descriptions, capped depth.

use rkb_core::schema::{
    EMBEDDED_RESOURCE as EMBEDDED, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE,
    PRESERVE_UNKNOWN_FIELDS as PRESERVE, VALIDATIONS,
};
use serde_json::{Map, Value};

use super::{for_each_schema, type_of};

/// controller-gen's `crd:maxDescLen`: descriptions longer than `max` bytes are
/// cut at the last whitespace before `max` and end in `...`; `0` removes them.
/// Returns how many descriptions changed.
pub fn limit_descriptions(schema: &mut Value, max: usize) -> usize {
    let mut changed = 0;
    for_each_schema(schema, &mut |obj| {
        let Some(Value::String(desc)) = obj.get_mut("description") else {
            return;
        };
        if max == 0 {
            obj.remove("description");
            changed += 1;
        } else if desc.len() > max {
            *desc = truncate(desc, max);
            changed += 1;
        }
    });
    changed
}

pub(super) fn truncate(desc: &str, max: usize) -> String {
    let mut end = max;
    while !desc.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &desc[..end];
    // Prefer a word boundary, as controller-gen does.
    let cut = match cut.rfind(char::is_whitespace) {
        Some(i) if i > 0 => cut[..i].trim_end(),
        _ => cut,
    };
    format!("{cut}...")
}

/// The depth of the deepest schema node: the root is 0, `.spec` is 1.
pub fn depth(schema: &Value) -> usize {
    fn walk(node: &Value, d: usize) -> usize {
        let Some(obj) = node.as_object() else {
            return d;
        };
        let mut max = d;
        if let Some(props) = obj.get("properties").and_then(Value::as_object) {
            for prop in props.values() {
                max = max.max(walk(prop, d + 1));
            }
        }
        for key in ["items", "additionalProperties"] {
            if let Some(sub) = obj.get(key) {
                max = max.max(walk(sub, d + 1));
            }
        }
        max
    }
    walk(schema, 0)
}

/// Replaces every object schema deeper than `max_depth` by a schemaless
/// object (`x-kubernetes-preserve-unknown-fields`), keeping what the levels
/// above rely on: list-map keys of list items, nullability, map types and
/// embedded-resource markers. Subtrees with CEL rules are left whole, as the
/// rules would lose the fields they refer to. Returns how many subtrees were
/// replaced.
pub fn cap_depth(schema: &mut Value, max_depth: usize) -> usize {
    fn walk(node: &mut Value, d: usize, max: usize, keep_keys: &[String]) -> usize {
        let Some(obj) = node.as_object_mut() else {
            return 0;
        };
        let is_object = type_of(obj) == Some("object")
            && (obj.contains_key("properties")
                || obj
                    .get("additionalProperties")
                    .is_some_and(Value::is_object));
        if d >= max && is_object && !has_rules(obj) {
            let mut capped = Map::new();
            capped.insert("type".into(), "object".into());
            for key in ["description", "nullable", EMBEDDED, MAP_TYPE] {
                if let Some(v) = obj.get(key) {
                    capped.insert(key.into(), v.clone());
                }
            }
            capped.insert(PRESERVE.into(), Value::Bool(true));
            if !keep_keys.is_empty() {
                // List-map items keep their keys: the API server merges entries by them.
                let props = obj.get("properties").and_then(Value::as_object);
                let kept: Map<String, Value> = keep_keys
                    .iter()
                    .filter_map(|k| Some((k.clone(), props?.get(k)?.clone())))
                    .collect();
                capped.insert("properties".into(), Value::Object(kept));
                let required: Vec<Value> = obj
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| {
                        r.iter()
                            .filter(|v| {
                                v.as_str().is_some_and(|s| keep_keys.iter().any(|k| k == s))
                            })
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default();
                if !required.is_empty() {
                    capped.insert("required".into(), Value::Array(required));
                }
            }
            *obj = capped;
            return 1;
        }
        let mut count = 0;
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            for prop in props.values_mut() {
                count += walk(prop, d + 1, max, &[]);
            }
        }
        let item_keys: Vec<String> = if obj.get(LIST_TYPE).and_then(Value::as_str) == Some("map") {
            obj.get(LIST_MAP_KEYS)
                .and_then(Value::as_array)
                .map(|k| {
                    k.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        if let Some(items) = obj.get_mut("items") {
            count += walk(items, d + 1, max, &item_keys);
        }
        if let Some(values) = obj.get_mut("additionalProperties") {
            count += walk(values, d + 1, max, &[]);
        }
        count
    }
    walk(schema, 0, max_depth, &[])
}

fn has_rules(obj: &Map<String, Value>) -> bool {
    let mut found = false;
    let mut copy = Value::Object(obj.clone());
    for_each_schema(&mut copy, &mut |o| found |= o.contains_key(VALIDATIONS));
    found
}
