//! Structural-schema rules for CRD schemas (apiextensions.k8s.io/v1), applied
//! to the JSON of an `openAPIV3Schema`.
//!
//! kube's derive already rewrites most of what schemars emits into a
//! structural schema, but not all of it, and the API server's verdict on what
//! slips through arrives only at `make install`. [`fix`] repairs what has one
//! obvious repair, [`check`] reports the rest with the JSON path of the field,
//! and [`limit_descriptions`] / [`cap_depth`] implement the size policies of
//! [`Manifests`](crate::Manifests).
//!
//! Paths are written the way fields are addressed in objects: `.spec.size`,
//! `.spec.containers[*].name` (array items), `.spec.labels.*` (map values), and
//! `.spec.mode (oneOf[1])` for a branch of a logical junctor.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

/// One reason a schema is not a valid structural CRD schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where, e.g. `.spec.containers[*].ports`; `.` is the object itself.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it in the Rust types, when there is a usual way.
    pub hint: Option<String>,
}

impl Problem {
    fn new(path: &str, message: impl Into<String>) -> Self {
        Problem {
            path: display_path(path),
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n    hint: {hint}")?;
        }
        Ok(())
    }
}

pub(crate) fn display_path(path: &str) -> String {
    if path.is_empty() {
        ".".to_owned()
    } else {
        path.to_owned()
    }
}

const JUNCTORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
use rkb_core::schema::{
    EMBEDDED_RESOURCE as EMBEDDED, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE,
    PRESERVE_UNKNOWN_FIELDS as PRESERVE, VALIDATIONS,
};

fn flag(obj: &Map<String, Value>, key: &str) -> bool {
    obj.get(key) == Some(&Value::Bool(true))
}

fn type_of(obj: &Map<String, Value>) -> Option<&str> {
    obj.get("type").and_then(Value::as_str)
}

fn child(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

// ---------------------------------------------------------------------------
// Fixes
// ---------------------------------------------------------------------------

/// Repairs what kube leaves non-structural but has one obvious meaning:
///
/// - a schema that says nothing about its value (a `serde_json::Value` field)
///   becomes `x-kubernetes-preserve-unknown-fields: true`, which is what
///   "anything goes" means in a structural schema;
/// - `additionalProperties: true` (a map of arbitrary values) becomes a map of
///   preserved values, as controller-gen writes `map[string]apiextensionsv1.JSON`;
/// - `null` is dropped from the `enum` of a `nullable` schema (`Option<Enum>`):
///   `nullable` already admits it;
/// - integer formats Kubernetes does not know (`uint8`, `uint64`, ...) become
///   `int32`/`int64`, like controller-gen's for Go's unsigned types.
pub fn fix(schema: &mut Value) {
    fix_node(schema, false);
}

fn fix_node(node: &mut Value, in_junctor: bool) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
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
    if flag(obj, "nullable")
        && let Some(Value::Array(values)) = obj.get_mut("enum")
        && values.iter().any(|v| !v.is_null())
    {
        values.retain(|v| !v.is_null());
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
            fix_node(prop, in_junctor);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get_mut(key) {
            fix_node(sub, in_junctor);
        }
    }
    for key in JUNCTORS {
        if let Some(Value::Array(subs)) = obj.get_mut(key) {
            for sub in subs {
                fix_node(sub, true);
            }
        }
    }
    if let Some(sub) = obj.get_mut("not") {
        fix_node(sub, true);
    }
}

/// A schema with annotations only: it admits any value.
fn says_nothing(obj: &Map<String, Value>) -> bool {
    const ANNOTATIONS: [&str; 5] = ["description", "title", "nullable", "default", "example"];
    obj.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every reason the API server would reject `schema` as the `openAPIV3Schema`
/// of a CRD version: the structural-schema rules (a type everywhere, no
/// `$ref`, logical junctors with value validations only, metadata restricted to
/// `name`/`generateName`, ...), list and map topology, and defaults that do not
/// match their schema. Sorted by path, as the API server sorts them.
pub fn check(schema: &Value) -> Vec<Problem> {
    let mut out = Vec::new();
    check_node(schema, "", Level::Root, false, &mut out);
    out.sort_by(|a, b| a.path.cmp(&b.path).then(a.message.cmp(&b.message)));
    out.dedup();
    out
}

fn check_node(node: &Value, path: &str, level: Level, meta: bool, out: &mut Vec<Problem>) {
    let Some(obj) = node.as_object() else {
        out.push(Problem::new(
            path,
            "a schema must be an object, not `true`/`false`",
        ));
        return;
    };
    check_forbidden_keywords(obj, path, out);

    let ty = type_of(obj);
    let int_or_string = flag(obj, INT_OR_STRING);
    let preserve = flag(obj, PRESERVE);
    let embedded = flag(obj, EMBEDDED);
    match obj.get("type") {
        Some(Value::String(t)) if t == "null" => out.push(
            Problem::new(path, "`type: null` is not allowed")
                .hint("use `Option<T>` (nullable) instead of the unit type `()`"),
        ),
        Some(Value::String(_)) | None => {}
        Some(other) => out.push(Problem::new(
            path,
            format!("`type` must be one string, not {other}"),
        )),
    }
    if obj.get(PRESERVE) == Some(&Value::Bool(false)) {
        out.push(Problem::new(
            path,
            "x-kubernetes-preserve-unknown-fields must be true or absent",
        ));
    }
    if embedded && ty != Some("object") {
        out.push(Problem::new(
            path,
            "x-kubernetes-embedded-resource needs `type: object`",
        ));
    } else if ty.is_none() && !int_or_string && !preserve && !obj.contains_key("$ref") {
        let where_ = match level {
            Level::Root => "at the root",
            Level::Item => "for array items",
            Level::Field => "for object fields",
        };
        let hint = if obj.get("enum") == Some(&Value::Array(vec![Value::Null])) {
            "the unit type `()` has no schema: remove the field or use `Option<T>`"
        } else {
            "give the field a concrete type; for arbitrary JSON use `serde_json::Value` \
             (preserved as is), or mark it #[rkb(preserve_unknown_fields)]"
        };
        out.push(Problem::new(path, format!("`type` must not be empty {where_}")).hint(hint));
    }
    if level == Level::Root && ty.is_some_and(|t| t != "object") {
        out.push(Problem::new(path, "the root schema must be `type: object`"));
    }
    if int_or_string && preserve {
        out.push(Problem::new(
            path,
            "x-kubernetes-int-or-string and x-kubernetes-preserve-unknown-fields exclude each other",
        ));
    }
    if int_or_string && embedded {
        out.push(Problem::new(
            path,
            "x-kubernetes-int-or-string and x-kubernetes-embedded-resource exclude each other",
        ));
    }

    // arrays
    match obj.get("items") {
        Some(Value::Array(_)) => out.push(
            Problem::new(path, "`items` must be one schema, not a list (a tuple)")
                .hint("Kubernetes has no tuples: use a struct with named fields, or Vec<T>"),
        ),
        None if ty == Some("array") => {
            out.push(Problem::new(path, "an array schema needs `items`"));
        }
        _ => {}
    }
    if flag(obj, "uniqueItems") {
        out.push(
            Problem::new(
                path,
                "uniqueItems is forbidden (its validation cost is quadratic)",
            )
            .hint("use #[rkb(list_type = set)] to reject duplicates"),
        );
    }

    // objects
    let props = obj.get("properties").and_then(Value::as_object);
    if let Some(additional) = obj.get("additionalProperties") {
        if level == Level::Root {
            out.push(Problem::new(
                path,
                "additionalProperties is not allowed at the root",
            ));
        }
        if props.is_some_and(|p| !p.is_empty()) {
            out.push(
                Problem::new(path, "properties and additionalProperties exclude each other")
                    .hint("a struct cannot also be a map: a #[serde(flatten)] map should become x-kubernetes-preserve-unknown-fields"),
            );
        }
        if additional == &Value::Bool(false) {
            out.push(Problem::new(path, "additionalProperties must not be false"));
        }
        if embedded {
            out.push(Problem::new(
                path,
                "additionalProperties is not allowed with x-kubernetes-embedded-resource",
            ));
        }
    }
    if embedded && !preserve && props.is_none_or(Map::is_empty) {
        out.push(Problem::new(
            path,
            "an embedded resource without properties needs x-kubernetes-preserve-unknown-fields",
        ));
    }
    let check_meta = level == Level::Root || embedded;
    if let Some(props) = props {
        if check_meta {
            for key in ["apiVersion", "kind"] {
                if let Some(p) = props.get(key)
                    && p.get("type").and_then(Value::as_str) != Some("string")
                {
                    out.push(Problem::new(&child(path, key), "must be `type: string`"));
                }
            }
        }
        if let Some(metadata) = props.get("metadata") {
            check_metadata(metadata, &child(path, "metadata"), level, check_meta, out);
        }
    }

    check_keyword_types(obj, path, out);
    check_topology(obj, path, out);
    check_default(obj, path, meta, out);
    check_junctors(obj, path, out);

    if let Some(props) = props {
        for (name, prop) in props {
            let inside_meta = check_meta && name == "metadata";
            check_node(
                prop,
                &child(path, name),
                Level::Field,
                meta || inside_meta,
                out,
            );
        }
    }
    if let Some(items @ Value::Object(_)) = obj.get("items") {
        check_node(items, &format!("{path}[*]"), Level::Item, meta, out);
    }
    if let Some(values @ Value::Object(_)) = obj.get("additionalProperties") {
        check_node(values, &child(path, "*"), Level::Field, meta, out);
    }
}

/// Value validations that cannot apply to the node's type: the API server
/// accepts and ignores them, which hides a mistake such as `max_length` on a
/// list (meant as `max_items`).
fn check_keyword_types(obj: &Map<String, Value>, path: &str, out: &mut Vec<Problem>) {
    let Some(ty) = type_of(obj) else {
        return; // int-or-string and preserved values take any of them
    };
    const RULES: [(&str, &[&str], &str); 12] = [
        ("minLength", &["string"], "min_items for lists"),
        ("maxLength", &["string"], "max_items for lists"),
        (
            "pattern",
            &["string"],
            "items(pattern = ...) for lists of strings",
        ),
        ("minimum", &["integer", "number"], ""),
        ("maximum", &["integer", "number"], ""),
        ("exclusiveMinimum", &["integer", "number"], ""),
        ("exclusiveMaximum", &["integer", "number"], ""),
        ("multipleOf", &["integer", "number"], ""),
        ("minItems", &["array"], "min_length for strings"),
        ("maxItems", &["array"], "max_length for strings"),
        ("minProperties", &["object"], ""),
        ("maxProperties", &["object"], ""),
    ];
    let article = if matches!(ty, "array" | "integer" | "object") {
        "an"
    } else {
        "a"
    };
    for (keyword, types, instead) in RULES {
        if obj.contains_key(keyword) && !types.contains(&ty) {
            let mut problem = Problem::new(
                path,
                format!(
                    "{keyword} applies to {}, not to {article} {ty}",
                    types.join(" and ")
                ),
            );
            if !instead.is_empty() {
                problem = problem.hint(format!("use {instead}"));
            }
            out.push(problem);
        }
    }
}

fn check_forbidden_keywords(obj: &Map<String, Value>, path: &str, out: &mut Vec<Problem>) {
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        out.push(
            Problem::new(
                path,
                format!(
                    "refers to `{name}` ($ref): the type contains itself, and CRD schemas \
                     cannot refer to other schemas"
                ),
            )
            .hint(format!(
                "recursive types cannot be described in a CRD: bound the depth with \
                 separate types, or store `{name}` as serde_json::Value with \
                 #[rkb(preserve_unknown_fields)]"
            )),
        );
    }
    for (key, what) in [
        ("definitions", "definitions"),
        ("$defs", "definitions"),
        ("components", "definitions"),
        ("patternProperties", "patternProperties"),
        ("dependencies", "dependencies"),
        ("additionalItems", "additionalItems"),
        ("id", "id"),
        ("$schema", "$schema"),
    ] {
        if obj.contains_key(key) {
            out.push(Problem::new(
                path,
                format!("{what} is not supported in CRD schemas"),
            ));
        }
    }
}

fn check_metadata(
    metadata: &Value,
    path: &str,
    level: Level,
    check_meta: bool,
    out: &mut Vec<Problem>,
) {
    let Some(obj) = metadata.as_object() else {
        return;
    };
    if check_meta && type_of(obj) != Some("object") {
        out.push(Problem::new(path, "metadata must be `type: object`"));
    }
    if level != Level::Root {
        return;
    }
    // The API server owns ObjectMeta's schema: a CRD may only restrict name
    // and generateName.
    let allowed_props = ["name", "generateName"];
    let extra_keys: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !["type", "properties", "default"].contains(k))
        .collect();
    let extra_props: Vec<&str> = obj
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .map(String::as_str)
                .filter(|k| !allowed_props.contains(k))
                .collect()
        })
        .unwrap_or_default();
    if !extra_keys.is_empty() || !extra_props.is_empty() {
        let mut what: Vec<String> = extra_keys.iter().map(|k| format!("`{k}`")).collect();
        what.extend(extra_props.iter().map(|k| format!("property `{k}`")));
        out.push(Problem::new(
            path,
            format!(
                "metadata may only restrict name and generateName, not {}",
                what.join(", ")
            ),
        ));
    }
    if obj.contains_key("default") {
        out.push(Problem::new(path, "metadata must not have a default"));
    }
}

fn check_topology(obj: &Map<String, Value>, path: &str, out: &mut Vec<Problem>) {
    let ty = type_of(obj);
    let list_type = obj.get(LIST_TYPE);
    if let Some(list_type) = list_type {
        if ty != Some("array") {
            out.push(Problem::new(
                path,
                "x-kubernetes-list-type is only allowed on arrays",
            ));
        }
        let items = obj.get("items").and_then(Value::as_object);
        match list_type.as_str() {
            Some("atomic") => {}
            Some("set") => {
                if let Some(items) = items {
                    let scalar = is_scalar(items);
                    let atomic = items.get(MAP_TYPE).and_then(Value::as_str) == Some("atomic")
                        || items.get(LIST_TYPE).and_then(Value::as_str) == Some("atomic");
                    if !scalar && !atomic {
                        out.push(
                            Problem::new(
                                path,
                                "a list of type set needs scalar items (or atomic objects/lists)",
                            )
                            .hint("use list_type = map with list_map_keys for lists of objects"),
                        );
                    }
                }
            }
            Some("map") => check_list_map(obj, items, path, out),
            _ => out.push(Problem::new(
                path,
                format!("x-kubernetes-list-type must be atomic, set or map, not {list_type}"),
            )),
        }
    }
    if obj.contains_key(LIST_MAP_KEYS) && list_type.and_then(Value::as_str) != Some("map") {
        out.push(
            Problem::new(
                path,
                "x-kubernetes-list-map-keys needs x-kubernetes-list-type: map",
            )
            .hint("add #[rkb(list_type = map)]"),
        );
    }
    if let Some(map_type) = obj.get(MAP_TYPE) {
        if ty != Some("object") {
            out.push(Problem::new(
                path,
                "x-kubernetes-map-type is only allowed on objects",
            ));
        }
        if !matches!(map_type.as_str(), Some("atomic" | "granular")) {
            out.push(Problem::new(
                path,
                format!("x-kubernetes-map-type must be atomic or granular, not {map_type}"),
            ));
        }
    }
}

fn check_list_map(
    obj: &Map<String, Value>,
    items: Option<&Map<String, Value>>,
    path: &str,
    out: &mut Vec<Problem>,
) {
    let keys: Vec<&str> = obj
        .get(LIST_MAP_KEYS)
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if keys.is_empty() {
        out.push(
            Problem::new(
                path,
                "a list of type map needs x-kubernetes-list-map-keys",
            )
            .hint("add #[rkb(list_map_keys = [\"name\"])] naming the item fields that identify an entry"),
        );
    }
    let Some(items) = items else { return };
    if type_of(items) != Some("object") {
        out.push(Problem::new(path, "a list of type map needs object items"));
        return;
    }
    let props = items.get("properties").and_then(Value::as_object);
    let required: BTreeSet<&str> = items
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for key in keys {
        match props.and_then(|p| p.get(key)).and_then(Value::as_object) {
            None => out.push(Problem::new(
                path,
                format!("list map key `{key}` is not a property of the items"),
            )),
            Some(prop) => {
                if !is_scalar(prop) {
                    out.push(Problem::new(
                        path,
                        format!("list map key `{key}` must be a scalar (string, integer, number or boolean)"),
                    ));
                }
                if !required.contains(key) && !prop.contains_key("default") {
                    out.push(
                        Problem::new(
                            path,
                            format!("list map key `{key}` must be required or have a default"),
                        )
                        .hint("make the key field non-optional, or give it #[rkb(default = ...)]"),
                    );
                }
            }
        }
    }
}

fn is_scalar(obj: &Map<String, Value>) -> bool {
    matches!(
        type_of(obj),
        Some("string" | "integer" | "number" | "boolean")
    ) || flag(obj, INT_OR_STRING)
}

fn check_default(obj: &Map<String, Value>, path: &str, meta: bool, out: &mut Vec<Problem>) {
    let Some(default) = obj.get("default") else {
        return;
    };
    if meta {
        out.push(Problem::new(
            path,
            "defaults are not allowed inside object metadata",
        ));
        return;
    }
    if let Some(reason) = default_mismatch(obj, default) {
        out.push(
            Problem::new(path, format!("default {default} {reason}"))
                .hint("the API server validates defaults against the schema: make #[rkb(default = ...)] match the field's type"),
        );
    }
}

/// Why `value` cannot be a value of the schema `obj`, checked as far as the
/// API server's pruning and type checks go.
fn default_mismatch(obj: &Map<String, Value>, value: &Value) -> Option<String> {
    if value.is_null() {
        return (!flag(obj, "nullable")).then(|| "is null but the field is not nullable".into());
    }
    if flag(obj, PRESERVE) && type_of(obj).is_none() {
        return None;
    }
    if flag(obj, INT_OR_STRING) {
        return (!(value.is_i64() || value.is_u64() || value.is_string()))
            .then(|| "is neither an integer nor a string".into());
    }
    let ok = match type_of(obj)? {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    if !ok {
        return Some(format!("is not of type {}", type_of(obj)?));
    }
    if let Some(Value::Array(allowed)) = obj.get("enum")
        && !allowed.contains(value)
    {
        return Some("is not one of the allowed values".into());
    }
    if let (Value::Object(fields), Some(props)) =
        (value, obj.get("properties").and_then(Value::as_object))
        && !flag(obj, PRESERVE)
    {
        for (name, field) in fields {
            match props.get(name).and_then(Value::as_object) {
                None => {
                    return Some(format!(
                        "has the unknown field `{name}` (it would be pruned)"
                    ));
                }
                Some(schema) => {
                    if let Some(reason) = default_mismatch(schema, field) {
                        return Some(format!("has field `{name}` that {reason}"));
                    }
                }
            }
        }
    }
    if let (Value::Array(values), Some(items)) =
        (value, obj.get("items").and_then(Value::as_object))
    {
        for v in values {
            if let Some(reason) = default_mismatch(items, v) {
                return Some(format!("has an item that {reason}"));
            }
        }
    }
    None
}

fn check_junctors(obj: &Map<String, Value>, path: &str, out: &mut Vec<Problem>) {
    let int_or_string_any_of =
        obj.get("anyOf") == Some(&serde_json::json!([{ "type": "integer" }, { "type": "string" }]));
    for key in JUNCTORS {
        if key == "anyOf" && int_or_string_any_of {
            continue;
        }
        if let Some(subs) = obj.get(key).and_then(Value::as_array) {
            for (i, sub) in subs.iter().enumerate() {
                let at = format!("{} ({key}[{i}])", display_path(path));
                check_nested(sub, &at, out);
                check_complete(sub, obj, &at, out);
            }
        }
    }
    if let Some(sub) = obj.get("not") {
        let at = format!("{} (not)", display_path(path));
        check_nested(sub, &at, out);
        check_complete(sub, obj, &at, out);
    }
}

/// Inside allOf/anyOf/oneOf/not only value validations are allowed: no
/// types, annotations, defaults or Kubernetes extensions.
fn check_nested(node: &Value, path: &str, out: &mut Vec<Problem>) {
    let Some(obj) = node.as_object() else {
        return;
    };
    const FORBIDDEN: [(&str, &str); 14] = [
        ("type", "type"),
        ("additionalProperties", "additionalProperties"),
        ("default", "default"),
        ("title", "title"),
        ("description", "description"),
        ("nullable", "nullable"),
        ("externalDocs", "externalDocs"),
        (PRESERVE, PRESERVE),
        (EMBEDDED, EMBEDDED),
        (INT_OR_STRING, INT_OR_STRING),
        (LIST_MAP_KEYS, LIST_MAP_KEYS),
        (LIST_TYPE, LIST_TYPE),
        (MAP_TYPE, MAP_TYPE),
        (VALIDATIONS, VALIDATIONS),
    ];
    for (key, name) in FORBIDDEN {
        if obj.contains_key(key) {
            out.push(
                Problem::new(
                    path,
                    format!("{name} is not allowed inside allOf/anyOf/oneOf/not"),
                )
                .hint("logical junctors may only hold value validations (required, enum, pattern, ...); \
                       the types belong to the enclosing schema"),
            );
        }
    }
    check_forbidden_keywords(obj, path, out);
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        if props.contains_key("metadata") {
            out.push(Problem::new(
                path,
                "metadata must not be specified inside allOf/anyOf/oneOf/not",
            ));
        }
        for (name, prop) in props {
            check_nested(prop, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = obj.get("items") {
        check_nested(items, &format!("{path}[*]"), out);
    }
    for key in JUNCTORS {
        if let Some(subs) = obj.get(key).and_then(Value::as_array) {
            for sub in subs {
                check_nested(sub, path, out);
            }
        }
    }
    if let Some(sub) = obj.get("not") {
        check_nested(sub, path, out);
    }
}

/// Everything a junctor constrains must also be specified outside it.
fn check_complete(nested: &Value, outer: &Map<String, Value>, path: &str, out: &mut Vec<Problem>) {
    let Some(nested) = nested.as_object() else {
        return;
    };
    if let Some(props) = nested.get("properties").and_then(Value::as_object) {
        let outer_props = outer.get("properties").and_then(Value::as_object);
        for (name, prop) in props {
            match outer_props.and_then(|p| p.get(name)).and_then(Value::as_object) {
                Some(outer_prop) => check_complete(prop, outer_prop, &format!("{path}.{name}"), out),
                None if flag(outer, PRESERVE) => {}
                None => out.push(Problem::new(
                    path,
                    format!("property `{name}` is only specified inside a junctor; declare it in `properties` too"),
                )),
            }
        }
    }
    if let Some(items) = nested.get("items") {
        match outer.get("items").and_then(Value::as_object) {
            Some(outer_items) => check_complete(items, outer_items, &format!("{path}[*]"), out),
            None => out.push(Problem::new(
                path,
                "`items` is only specified inside a junctor",
            )),
        }
    }
    for key in JUNCTORS {
        if let Some(subs) = nested.get(key).and_then(Value::as_array) {
            for sub in subs {
                check_complete(sub, outer, path, out);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Size policies
// ---------------------------------------------------------------------------

/// Calls `f` on every schema node of `schema` (not on values inside
/// `default`, `enum` or `example`, which may contain keys such as
/// `description` too).
fn for_each_schema(node: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    f(obj);
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for prop in props.values_mut() {
            for_each_schema(prop, f);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = obj.get_mut(key) {
            for_each_schema(sub, f);
        }
    }
    for key in JUNCTORS {
        if let Some(Value::Array(subs)) = obj.get_mut(key) {
            for sub in subs {
                for_each_schema(sub, f);
            }
        }
    }
}

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

fn truncate(desc: &str, max: usize) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: Value) -> Vec<String> {
        check(&schema).iter().map(ToString::to_string).collect()
    }

    fn root(spec: Value) -> Value {
        json!({"type": "object", "properties": {"spec": spec}})
    }

    #[test]
    fn a_valid_schema_has_no_problems() {
        let schema = root(json!({
            "type": "object",
            "properties": {
                "size": {"type": "integer", "minimum": 0, "default": 1},
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "any": {"x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "mode": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                    "oneOf": [{"required": ["a"]}, {"required": ["b"]}]
                }
            }
        }));
        assert_eq!(messages(schema), Vec::<String>::new());
    }

    #[test]
    fn missing_types_are_reported_per_level() {
        let schema = json!({
            "properties": {"spec": {"type": "object", "properties": {
                "x": {"description": "anything"},
                "xs": {"type": "array", "items": {}}
            }}}
        });
        assert_eq!(
            messages(schema)
                .iter()
                .map(|m| m.lines().next().unwrap())
                .collect::<Vec<_>>(),
            vec![
                ".: `type` must not be empty at the root",
                ".spec.x: `type` must not be empty for object fields",
                ".spec.xs[*]: `type` must not be empty for array items",
            ]
        );
    }

    #[test]
    fn fix_preserves_untyped_values_and_cleans_enums() {
        let mut schema = root(json!({"type": "object", "properties": {
            "any": {"description": "free form"},
            "map": {"type": "object", "additionalProperties": true},
            "level": {"type": "string", "nullable": true, "enum": ["A", "B", null]},
            "count": {"type": "integer", "format": "uint64", "minimum": 0},
            "small": {"type": "integer", "format": "uint8"}
        }}));
        fix(&mut schema);
        let spec = &schema["properties"]["spec"]["properties"];
        assert_eq!(
            spec["any"],
            json!({"description": "free form", PRESERVE: true})
        );
        assert_eq!(spec["map"]["additionalProperties"], json!({PRESERVE: true}));
        assert_eq!(spec["level"]["enum"], json!(["A", "B"]));
        assert_eq!(spec["count"]["format"], "int64");
        assert_eq!(spec["small"]["format"], "int32");
        assert!(check(&schema).is_empty(), "{:?}", check(&schema));
    }

    #[test]
    fn junctors_hold_value_validations_only() {
        let schema = root(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "anyOf": [
                {"type": "object", "description": "d", "required": ["a"]},
                {"properties": {"b": {"nullable": true}}}
            ]
        }));
        let problems = messages(schema).join("\n");
        for expected in [
            ".spec (anyOf[0]): type is not allowed",
            ".spec (anyOf[0]): description is not allowed",
            ".spec (anyOf[1]).b: nullable is not allowed",
            ".spec (anyOf[1]): property `b` is only specified inside a junctor",
        ] {
            assert!(problems.contains(expected), "{expected}\nin\n{problems}");
        }
    }

    #[test]
    fn refs_tuples_unique_items_and_mixed_maps_are_reported() {
        let schema = root(json!({"type": "object", "properties": {
            "child": {"$ref": "#/components/schemas/Tree", "nullable": true},
            "pair": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]},
            "set": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "both": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}
        }}));
        let problems = messages(schema).join("\n");
        for expected in [
            ".spec.child: refers to `Tree` ($ref)",
            ".spec.pair: `items` must be one schema",
            ".spec.set: uniqueItems is forbidden",
            ".spec.both: properties and additionalProperties exclude each other",
        ] {
            assert!(problems.contains(expected), "{expected}\nin\n{problems}");
        }
    }

    #[test]
    fn metadata_may_only_restrict_names() {
        let schema = json!({"type": "object", "properties": {
            "metadata": {"type": "object", "nullable": true, "properties": {"name": {"type": "string"}, "labels": {"type": "object"}}}
        }});
        let problems = messages(schema).join("\n");
        assert!(
            problems.contains(".metadata: metadata may only restrict name and generateName, not `nullable`, property `labels`"),
            "{problems}"
        );
        let ok = json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 63}}}
        }});
        assert!(check(&ok).is_empty());
    }

    #[test]
    fn list_topology_rules() {
        let schema = root(json!({"type": "object", "properties": {
            "conditions": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type", "missing"],
                "items": {"type": "object", "properties": {"type": {"type": "string"}, "other": {"type": "string"}}}
            },
            "keysOnly": {"type": "array", "x-kubernetes-list-map-keys": ["a"], "items": {"type": "string"}},
            "objectSet": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object", "properties": {}}},
            "notAList": {"type": "string", "x-kubernetes-list-type": "atomic"},
            "weird": {"type": "object", "x-kubernetes-map-type": "merge"}
        }}));
        let problems = messages(schema).join("\n");
        for expected in [
            ".spec.conditions: list map key `type` must be required or have a default",
            ".spec.conditions: list map key `missing` is not a property of the items",
            ".spec.keysOnly: x-kubernetes-list-map-keys needs x-kubernetes-list-type: map",
            ".spec.objectSet: a list of type set needs scalar items",
            ".spec.notAList: x-kubernetes-list-type is only allowed on arrays",
            ".spec.weird: x-kubernetes-map-type must be atomic or granular",
        ] {
            assert!(problems.contains(expected), "{expected}\nin\n{problems}");
        }
    }

    #[test]
    fn keywords_must_fit_the_type() {
        let schema = root(json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "maxLength": 3},
            "size": {"type": "integer", "pattern": "^1$", "minimum": 0},
            "name": {"type": "string", "maxItems": 1, "maxLength": 3},
            "port": {"x-kubernetes-int-or-string": true, "pattern": "^[0-9a-z]+$"}
        }}));
        let problems = messages(schema).join("\n");
        for expected in [
            ".spec.tags: maxLength applies to string, not to an array\n    hint: use max_items for lists",
            ".spec.size: pattern applies to string, not to an integer",
            ".spec.name: maxItems applies to array, not to a string\n    hint: use max_length for strings",
        ] {
            assert!(problems.contains(expected), "{expected}\nin\n{problems}");
        }
        assert_eq!(
            problems.lines().filter(|l| !l.starts_with(' ')).count(),
            3,
            "{problems}"
        );
    }

    #[test]
    fn defaults_must_match_their_schema() {
        let schema = root(json!({"type": "object", "properties": {
            "size": {"type": "integer", "default": "one"},
            "mode": {"type": "string", "enum": ["A", "B"], "default": "C"},
            "conf": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": "x"}},
            "ok": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]}
        }}));
        let problems = messages(schema).join("\n");
        for expected in [
            ".spec.size: default \"one\" is not of type integer",
            ".spec.mode: default \"C\" is not one of the allowed values",
            ".spec.conf: default {\"b\":\"x\"} has the unknown field `b`",
        ] {
            assert!(problems.contains(expected), "{expected}\nin\n{problems}");
        }
        assert!(!problems.contains(".spec.ok"), "{problems}");
    }

    #[test]
    fn descriptions_are_truncated_like_controller_gen() {
        let mut schema = root(
            json!({"type": "object", "description": "The desired state of the object, in full.",
            "properties": {"description": {"type": "string", "description": "short", "default": "x"}}}),
        );
        assert_eq!(limit_descriptions(&mut schema, 20), 1);
        assert_eq!(
            schema["properties"]["spec"]["description"],
            "The desired state..."
        );
        assert_eq!(limit_descriptions(&mut schema, 0), 2);
        // A property named `description` is a schema, not an annotation.
        assert_eq!(
            schema["properties"]["spec"]["properties"]["description"],
            json!({"type": "string", "default": "x"})
        );
        assert_eq!(truncate("héllo wörld", 2), "h...");
    }

    #[test]
    fn depth_capping_keeps_list_map_keys_and_rules() {
        let mut schema = root(json!({"type": "object", "properties": {
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name", "deep"], "properties": {
                    "name": {"type": "string"},
                    "deep": {"type": "object", "properties": {"x": {"type": "string"}}}
                }}},
            "ruled": {"type": "object", "x-kubernetes-validations": [{"rule": "self.x != ''"}],
                "properties": {"x": {"type": "string"}}}
        }}));
        assert_eq!(depth(&schema), 5);
        assert_eq!(cap_depth(&mut schema, 3), 1);
        let spec = &schema["properties"]["spec"]["properties"];
        assert_eq!(
            spec["items"]["items"],
            json!({"type": "object", PRESERVE: true, "properties": {"name": {"type": "string"}}, "required": ["name"]})
        );
        assert_eq!(spec["ruled"]["properties"]["x"], json!({"type": "string"}));
        assert!(check(&schema).is_empty(), "{:?}", check(&schema));
    }
}
