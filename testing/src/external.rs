//! Whether the types `rkb create api --external-crd` wrote derive the external CRD's
//! schema: a structural diff of the two, which the types' own test runs.

use std::collections::BTreeSet;
use std::fmt;

use rkb_manifests::Crd;
use serde_json::{Map, Value};

/// Where the derived schema differs from the input's by construction, whatever the CRD:
/// kube's derive writes the object's root, and rkb's `crd()` what it always writes.
/// `(JSON path, reason)`; a path ending in `.` covers everything below it.
pub const ALWAYS_DIFFERENT: &[(&str, &str)] = &[
    (
        ".apiVersion.",
        "kube's derive writes the root's apiVersion, kind and metadata, not the input's",
    ),
    (
        ".kind.",
        "kube's derive writes the root's apiVersion, kind and metadata, not the input's",
    ),
    (
        ".metadata.",
        "kube's derive writes the root's apiVersion, kind and metadata, not the input's",
    ),
    (
        ".required",
        "kube's derive makes spec required; controller-gen does so only when the Go field is",
    ),
];

/// How two spellings of one schema are made alike before comparing (equivalences, not
/// differences): an int-or-string's `anyOf: [integer, string]`, which controller-gen
/// writes and the API server needs no more than the flag (k8s-openapi's IntOrString
/// writes the flag alone).
fn normalise(node: &mut Map<String, Value>) {
    if node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
        && let Some(Value::Array(any_of)) = node.get("anyOf")
    {
        let types: BTreeSet<&str> = any_of.iter().filter_map(|s| s["type"].as_str()).collect();
        if any_of.len() == 2 && types == BTreeSet::from(["integer", "string"]) {
            node.remove("anyOf");
        }
    }
}

/// One keyword that differs, at a JSON path into the version's schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// `.spec.rules[].matches`: `[]` for list items, `.*` for map values.
    pub path: String,
    pub keyword: String,
    /// The input's value, `None` when only the derived schema has the keyword.
    pub input: Option<Value>,
    /// The derived value, `None` when only the input has it.
    pub derived: Option<Value>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Value>| match v {
            Some(v) => {
                let text = v.to_string();
                if text.len() > 120 {
                    format!("{}...", &text[..text.floor_char_boundary(117)])
                } else {
                    text
                }
            }
            None => "(absent)".to_owned(),
        };
        write!(
            f,
            "{} `{}`: input {}, derived {}",
            if self.path.is_empty() {
                "."
            } else {
                &self.path
            },
            self.keyword,
            show(&self.input),
            show(&self.derived)
        )
    }
}

/// Every keyword where `derived` differs from `input` (two `openAPIV3Schema`s).
pub fn schema_differences(input: &Value, derived: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk("", input, derived, &mut out);
    out
}

fn walk(path: &str, input: &Value, derived: &Value, out: &mut Vec<Difference>) {
    let (Some(input), Some(derived)) = (input.as_object(), derived.as_object()) else {
        if input != derived {
            out.push(Difference {
                path: path.to_owned(),
                keyword: "(schema)".into(),
                input: Some(input.clone()),
                derived: Some(derived.clone()),
            });
        }
        return;
    };
    let (mut input, mut derived) = (input.clone(), derived.clone());
    normalise(&mut input);
    normalise(&mut derived);
    let keys: BTreeSet<&String> = input.keys().chain(derived.keys()).collect();
    for key in keys {
        let (a, b) = (input.get(key), derived.get(key));
        match (key.as_str(), a, b) {
            ("properties", Some(Value::Object(a)), Some(Value::Object(b))) => {
                let names: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                for name in names {
                    let at = format!("{path}.{name}");
                    match (a.get(name), b.get(name)) {
                        (Some(x), Some(y)) => walk(&at, x, y, out),
                        (x, y) => out.push(Difference {
                            path: at,
                            keyword: "(property)".into(),
                            input: x.map(|_| Value::from("present")),
                            derived: y.map(|_| Value::from("present")),
                        }),
                    }
                }
            }
            ("items", Some(x), Some(y)) => walk(&format!("{path}[]"), x, y, out),
            ("additionalProperties", Some(x @ Value::Object(_)), Some(y @ Value::Object(_))) => {
                walk(&format!("{path}.*"), x, y, out)
            }
            ("required", Some(Value::Array(x)), Some(Value::Array(y))) => {
                let (x, y): (BTreeSet<String>, BTreeSet<String>) = (
                    x.iter().map(Value::to_string).collect(),
                    y.iter().map(Value::to_string).collect(),
                );
                if x != y {
                    out.push(difference(path, key, a, b));
                }
            }
            // JSONSchemaProps' bounds are float64s: `0` and `0.0` are one value.
            (_, Some(Value::Number(x)), Some(Value::Number(y))) if x.as_f64() == y.as_f64() => {}
            _ if a != b => out.push(difference(path, key, a, b)),
            _ => {}
        }
    }
}

fn difference(path: &str, keyword: &str, a: Option<&Value>, b: Option<&Value>) -> Difference {
    Difference {
        path: path.to_owned(),
        keyword: keyword.to_owned(),
        input: a.cloned(),
        derived: b.cloned(),
    }
}

/// Whether `reasons` (`(path, reason)`, [`ALWAYS_DIFFERENT`] or what the command
/// reported) explain `difference`: the same path, or one ending in `.` above it.
///
/// A reason that starts with a keyword in backticks (`` `pattern`: ... ``) explains only
/// that keyword there.
fn explained(difference: &Difference, reasons: &[(&str, &str)]) -> bool {
    let path = difference.path.as_str();
    let keyword_matches = |why: &str| {
        why.strip_prefix('`')
            .and_then(|rest| rest.split_once('`'))
            .is_none_or(|(keyword, _)| {
                keyword == difference.keyword || keyword.starts_with("type: ")
            })
    };
    reasons
        .iter()
        .filter(|(_, why)| keyword_matches(why))
        .any(|(at, _)| match at.strip_suffix('.') {
            Some(above) if !above.is_empty() => {
                path == above
                    || path.starts_with(&format!("{above}."))
                    || path.starts_with(&format!("{above}["))
            }
            _ if *at == ".required" => path.is_empty() && difference.keyword == "required",
            _ => *at == path || (*at == "." && path.is_empty()),
        })
}

/// The schema of `version` in a CRD YAML text.
fn schema_of(yaml: &str, version: &str) -> Value {
    let crd: Value = serde_yaml_ng::from_str(yaml)
        .unwrap_or_else(|e| panic!("the external CRD is not YAML: {e}"));
    version_schema(&crd, version)
}

fn version_schema(crd: &Value, version: &str) -> Value {
    crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == version)
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .unwrap_or_else(|| panic!("the CRD has no version {version}"))
}

/// Fails, listing each difference, unless the schema of `version` that rkb derived from
/// the types (`derived`) equals the external CRD's (`external_yaml`), but for what
/// [`ALWAYS_DIFFERENT`] and `left_out` (what the command reported it could not express)
/// explain. With `RKB_EXTERNAL_DERIVED_DIR` set, also writes the derived CRD there as
/// `<name>.json`, for scripts that count what the round trip kept.
pub fn assert_same_schema(
    derived: &Crd,
    external_yaml: &str,
    version: &str,
    left_out: &[(&str, &str)],
) {
    let derived = serde_json::to_value(&**derived).expect("a CRD serializes");
    if let Some(dir) = std::env::var_os("RKB_EXTERNAL_DERIVED_DIR") {
        let name = derived["metadata"]["name"].as_str().unwrap_or("crd");
        let file = std::path::Path::new(&dir).join(format!("{name}.json"));
        std::fs::write(&file, serde_json::to_string_pretty(&derived).unwrap())
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    }
    let input = schema_of(external_yaml, version);
    let derived = version_schema(&derived, version);
    let reasons: Vec<(&str, &str)> = ALWAYS_DIFFERENT.iter().chain(left_out).copied().collect();
    let unexplained: Vec<String> = schema_differences(&input, &derived)
        .iter()
        .filter(|d| !explained(d, &reasons))
        .map(|d| format!("  {d}"))
        .collect();
    assert!(
        unexplained.is_empty(),
        "the types derive a schema that differs from the external CRD's in {} places \
         (regenerate them with `rkb create api --external-crd <file> --force`):\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn differences_of(input: &Value, derived: &Value) -> Vec<Difference> {
        schema_differences(input, derived)
    }

    #[test]
    fn every_keyword_that_differs_is_listed_with_its_path() {
        let input = json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["a", "b"],
                    "properties": {
                        "a": { "type": "string", "pattern": "^x$" },
                        "b": { "type": "array", "items": { "type": "integer", "maximum": 3 } },
                        "port": { "x-kubernetes-int-or-string": true, "anyOf": [{ "type": "integer" }, { "type": "string" }] },
                        "gone": { "type": "boolean" }
                    }
                }
            }
        });
        let derived = json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["b", "a"],
                    "properties": {
                        "a": { "type": "string" },
                        "b": { "type": "array", "items": { "type": "integer", "maximum": 4 } },
                        "port": { "x-kubernetes-int-or-string": true }
                    }
                }
            }
        });
        let found: Vec<String> = schema_differences(&input, &derived)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                ".spec.a `pattern`: input \"^x$\", derived (absent)",
                ".spec.b[] `maximum`: input 3, derived 4",
                ".spec.gone `(property)`: input \"present\", derived (absent)",
            ]
        );
        let reasons = [(".spec.a", "no key")];
        assert!(explained(
            &differences_of(&input, &derived)[0],
            &[(".spec.a", "`pattern`: no key")]
        ));
        assert!(!explained(
            &differences_of(&input, &derived)[0],
            &[(".spec.a", "`format`: no key")]
        ));
        let differences = schema_differences(&input, &derived);
        assert!(explained(&differences[0], &reasons));
        assert!(!explained(&differences[1], &reasons));
        assert!(explained(&differences[2], &[(".spec.", "all of it")]));
        assert!(!explained(&differences[2], &[(".status.", "all of it")]));
    }
}
