//! Schema keywords back to `#[rkb(...)]` keys, by rkb-core's key table: the key that
//! writes a keyword, with the keyword's value spelled as that key's kind takes it.

use rkb_core::attributes::rkb::{self as table, Kind};
use rkb_core::schema::{EMBEDDED_RESOURCE, FORMATS, INT_OR_STRING};
use serde_json::Value;

/// The `#[rkb(...)]` key for one keyword, `None` when it needs none.
pub(super) fn key(keyword: &str, value: &Value) -> Result<Option<String>, String> {
    let Some(key) = table::for_keyword(keyword) else {
        return Err(match keyword {
            INT_OR_STRING | EMBEDDED_RESOURCE => "on a schema of this shape",
            "anyOf" | "oneOf" | "allOf" | "not" => "no Rust type or key expresses it",
            _ => "no #[rkb(...)] key writes it",
        }
        .into());
    };
    let name = key.name;
    let text = |what: &str| match value.as_str() {
        Some(s) => Ok(Some(format!("{name} = {s:?}"))),
        None => Err(what.into()),
    };
    match key.kind {
        Kind::Number | Kind::Positive => match value {
            Value::Number(n) => Ok(Some(format!("{name} = {n}"))),
            _ => Err(format!("not a number: {value}")),
        },
        Kind::Count => match value.as_u64() {
            Some(n) => Ok(Some(format!("{name} = {n}"))),
            None => Err(format!("not a count: {value}")),
        },
        Kind::Flag => flag(name, value),
        Kind::Pattern => match value.as_str() {
            Some(p) if regex_ok(p) => text("not a string"),
            Some(_) => Err("a regular expression rkb's derive cannot parse".into()),
            None => Err("not a string".into()),
        },
        Kind::Format => match value.as_str() {
            Some(f) if FORMATS.contains(&f) => text("not a string"),
            Some(f) => Err(format!(
                "`{f}` is no format Kubernetes validates (rkb accepts: {})",
                FORMATS.join(", ")
            )),
            None => Err("not a string".into()),
        },
        Kind::Text => text(&format!("not a string: {value}")),
        Kind::Literals => literals(name, value),
        Kind::Json => Ok(Some(format!("{name} = {}", json_tokens(value)))),
        Kind::ListType | Kind::MapType => match value.as_str() {
            Some(t) if key.kind.choices().contains(&t) => Ok(Some(format!("{name} = {t}"))),
            _ if key.kind == Kind::ListType => Err(format!("unknown list type {value}")),
            _ => Err(format!("unknown map type {value}")),
        },
        Kind::Strings => {
            let keys: Vec<String> = value
                .as_array()
                .ok_or("not a list")?
                .iter()
                .map(|k| k.as_str().map(|s| format!("{s:?}")).ok_or("not a string"))
                .collect::<Result<_, _>>()?;
            Ok(Some(format!("{name} = [{}]", keys.join(", "))))
        }
        Kind::Validation => validations(name, value),
        Kind::ExternalDocs => Ok(Some(external_docs(name, value))),
        Kind::Items | Kind::FieldGroup | Kind::Crd => Err("no #[rkb(...)] key writes it".into()),
    }
}

/// A flag key: only `true` has one.
fn flag(name: &str, value: &Value) -> Result<Option<String>, String> {
    match value {
        Value::Bool(true) => Ok(Some(name.into())),
        Value::Bool(false) if name == "nullable" => {
            Err("`nullable: false` is the default; rkb does not write it".into())
        }
        _ if name == "nullable" => Err("not a boolean".into()),
        _ => Err("only `true` has a key".into()),
    }
}

fn literals(name: &str, value: &Value) -> Result<Option<String>, String> {
    let values = value.as_array().ok_or("not a list")?;
    let mut literals = Vec::new();
    for v in values {
        match v {
            Value::String(s) => literals.push(format!("{s:?}")),
            Value::Number(n) => literals.push(n.to_string()),
            Value::Bool(b) => literals.push(b.to_string()),
            other => {
                return Err(format!(
                    "`{other}` among the values: only strings, numbers and booleans have a key"
                ));
            }
        }
    }
    Ok(Some(format!("{name} = [{}]", literals.join(", "))))
}

/// `x-kubernetes-validations`: one `validation(...)` per rule.
fn validations(name: &str, value: &Value) -> Result<Option<String>, String> {
    let rules = value.as_array().ok_or("not a list")?;
    let mut out = Vec::new();
    for rule in rules {
        let mut parts = Vec::new();
        for (json, rust) in [
            ("rule", "rule"),
            ("message", "message"),
            ("messageExpression", "message_expression"),
            ("reason", "reason"),
            ("fieldPath", "field_path"),
        ] {
            if let Some(s) = rule[json].as_str() {
                if rust == "reason" {
                    parts.push(format!("reason = {s}"));
                } else {
                    parts.push(format!("{rust} = {s:?}"));
                }
            }
        }
        if rule["optionalOldSelf"] == true {
            parts.push("optional_old_self".into());
        }
        out.push(format!("{name}({})", parts.join(", ")));
    }
    Ok(Some(out.join(", ")))
}

fn external_docs(name: &str, value: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(url) = value["url"].as_str() {
        parts.push(format!("url = {url:?}"));
    }
    if let Some(d) = value["description"].as_str() {
        parts.push(format!("description = {d:?}"));
    }
    format!("{name}({})", parts.join(", "))
}

/// A JSON value as tokens for `json!`: JSON's own syntax, which the macro takes.
fn json_tokens(value: &Value) -> String {
    serde_json::to_string(value).expect("JSON values serialize")
}

/// Patterns the derive's regex check accepts: Go's RE2 syntax, without the constructs
/// Rust's parser refuses that RE2 has (none in practice; kept as the place to add them).
fn regex_ok(pattern: &str) -> bool {
    !pattern.contains("(?P=") && !pattern.contains("\\C")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// key -> keyword -> key for every key of the table that sets a keyword: the JSON
    /// its example writes maps back to the example.
    #[test]
    fn every_keyword_maps_back_to_the_key_that_writes_it() {
        let mut checked = 0;
        for def in table::KEYS {
            let Some(keyword) = def.keyword() else {
                continue;
            };
            let schema: Value = serde_json::from_str(def.schema)
                .unwrap_or_else(|e| panic!("{}: schema {:?}: {e}", def.name, def.schema));
            let back = key(keyword, &schema[keyword])
                .unwrap_or_else(|e| panic!("{}: {e}", def.name))
                .unwrap();
            let expected = match def.writes {
                table::Writes::SameAs(other) => table::find(other).unwrap().example,
                _ => def.example,
            };
            // An example may need a second key (`list_type = map` for its keys).
            assert!(
                expected == back || expected.starts_with(&format!("{back}, ")),
                "{}: {keyword} maps back to `{back}`, not `{expected}`",
                def.name
            );
            checked += 1;
        }
        assert!(checked > 0);
    }

    #[test]
    fn each_keyword_becomes_its_key_or_a_reason() {
        let rule = json!([{
            "rule": "self.a <= self.b", "message": "a", "messageExpression": "'b'",
            "reason": "FieldValueForbidden", "fieldPath": ".a", "optionalOldSelf": true
        }]);
        assert_eq!(
            key("x-kubernetes-validations", &rule).unwrap().unwrap(),
            "validation(rule = \"self.a <= self.b\", message = \"a\", message_expression = \"'b'\", \
             reason = FieldValueForbidden, field_path = \".a\", optional_old_self)"
        );
        assert_eq!(
            key("default", &json!({"a": [1, "x"]})).unwrap().unwrap(),
            "default = {\"a\":[1,\"x\"]}"
        );
        assert_eq!(
            key("enum", &json!(["a", 1, true])).unwrap().unwrap(),
            "enum_values = [\"a\", 1, true]"
        );
        assert!(key("enum", &json!([{"a": 1}])).is_err());
        assert!(
            key("format", &json!("int-or-string"))
                .unwrap_err()
                .contains("no format Kubernetes validates")
        );
        assert!(key("exclusiveMinimum", &json!(false)).is_err());
        assert_eq!(
            key("nullable", &json!(false)).unwrap_err(),
            "`nullable: false` is the default; rkb does not write it"
        );
        assert!(
            key("oneOf", &json!([]))
                .unwrap_err()
                .contains("no Rust type or key")
        );
        assert_eq!(
            key(INT_OR_STRING, &json!(true)).unwrap_err(),
            "on a schema of this shape"
        );
    }
}
