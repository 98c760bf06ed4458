//! A sample object's required fields, for the scaffolded sample and tests.

use serde_json::{Map, Value};

/// A sample's required fields beside metadata (`fields`: the object's schema without
/// it), each with the simplest value its schema allows.
pub(super) fn sample_fields(fields: &Value) -> Option<String> {
    let Value::Object(map) = sample(fields)? else {
        return None;
    };
    let entries: Vec<String> = map
        .iter()
        .map(|(name, value)| {
            let (name, value) = (
                serde_json::to_string(name).ok()?,
                serde_json::to_string(value).ok()?,
            );
            Some(format!("{name}: {value}"))
        })
        .collect::<Option<_>>()?;
    (!entries.is_empty()).then(|| entries.join(", "))
}

fn sample(node: &Value) -> Option<Value> {
    if let Some(d) = node.get("default") {
        return Some(d.clone());
    }
    if let Some(first) = node["enum"].as_array().and_then(|e| e.first()) {
        return Some(first.clone());
    }
    if node["x-kubernetes-int-or-string"] == true {
        return Some(Value::from(1));
    }
    match node["type"].as_str().unwrap_or_default() {
        "object" => {
            let mut out = Map::new();
            for name in node["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if let Some(child) = node["properties"].get(name) {
                    out.insert(name.to_owned(), sample(child)?);
                }
            }
            Some(Value::Object(out))
        }
        "array" => {
            let min = node["minItems"].as_u64().unwrap_or(0);
            if min == 0 {
                Some(Value::Array(Vec::new()))
            } else {
                Some(Value::Array(vec![sample(&node["items"])?; min as usize]))
            }
        }
        "string" => {
            let min = node["minLength"].as_u64().unwrap_or(1).max(1) as usize;
            Some(Value::from("a".repeat(min)))
        }
        "integer" | "number" => Some(node.get("minimum").cloned().unwrap_or(Value::from(1))),
        "boolean" => Some(Value::from(false)),
        _ => Some(Value::Object(Map::new())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_sample_fills_required_fields_with_the_simplest_valid_values() {
        let spec = json!({
            "type": "object",
            "required": ["name", "mode", "ref", "count", "items"],
            "properties": {
                "name": { "type": "string", "minLength": 3 },
                "mode": { "type": "string", "enum": ["Fast", "Slow"] },
                "ref": { "type": "object", "required": ["kind"], "properties": {
                    "kind": { "type": "string", "default": "Issuer" },
                    "group": { "type": "string" }
                }},
                "count": { "type": "integer", "minimum": 2 },
                "items": { "type": "array", "minItems": 1, "items": { "type": "boolean" } },
                "optional": { "type": "string" }
            }
        });
        let fields =
            json!({ "type": "object", "required": ["spec"], "properties": { "spec": spec } });
        assert_eq!(
            sample_fields(&fields).unwrap(),
            "\"spec\": {\"count\":2,\"items\":[false],\"mode\":\"Fast\",\"name\":\"aaa\",\"ref\":{\"kind\":\"Issuer\"}}"
        );
    }
}
