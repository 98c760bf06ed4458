//! [`check`]: every reason the API server would reject a schema.

use std::collections::BTreeSet;

use rkb_core::schema::{
    EMBEDDED_RESOURCE as EMBEDDED, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE,
    PRESERVE_UNKNOWN_FIELDS as PRESERVE, VALIDATIONS,
};
use serde_json::{Map, Value};

use super::{JUNCTORS, Problem, child, display_path, flag, type_of};

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
    check_type(obj, path, level, out);
    check_array(obj, path, out);
    // The root and embedded resources carry apiVersion, kind and metadata.
    let check_meta = level == Level::Root || flag(obj, EMBEDDED);
    check_object(obj, path, level, check_meta, out);
    check_keyword_types(obj, path, out);
    check_topology(obj, path, out);
    check_default(obj, path, meta, out);
    check_nullable_enum(obj, path, out);
    check_junctors(obj, path, out);

    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
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

/// `type` (present, one string, not null; `object` at the root) and the
/// vendor extensions that stand in for it or exclude each other.
fn check_type(obj: &Map<String, Value>, path: &str, level: Level, out: &mut Vec<Problem>) {
    let ty = type_of(obj);
    let int_or_string = flag(obj, INT_OR_STRING);
    let preserve = flag(obj, PRESERVE);
    let embedded = flag(obj, EMBEDDED);
    match obj.get("type") {
        Some(Value::String(t)) if t == "null" => out.push(
            Problem::new(path, "`type: null` is not allowed")
                .hint("use `Option<T>` (an optional field) instead of the unit type `()`"),
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
}

/// `items`: one schema, present on arrays; no `uniqueItems`.
fn check_array(obj: &Map<String, Value>, path: &str, out: &mut Vec<Problem>) {
    match obj.get("items") {
        Some(Value::Array(_)) => out.push(
            Problem::new(path, "`items` must be one schema, not a list (a tuple)")
                .hint("Kubernetes has no tuples: use a struct with named fields, or Vec<T>"),
        ),
        None if type_of(obj) == Some("array") => {
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
}

/// `properties` against `additionalProperties`, embedded resources, and where
/// `check_meta` holds, the types of apiVersion and kind and what metadata may say.
fn check_object(
    obj: &Map<String, Value>,
    path: &str,
    level: Level,
    check_meta: bool,
    out: &mut Vec<Problem>,
) {
    let embedded = flag(obj, EMBEDDED);
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
    if embedded && !flag(obj, PRESERVE) && props.is_none_or(Map::is_empty) {
        out.push(Problem::new(
            path,
            "an embedded resource without properties needs x-kubernetes-preserve-unknown-fields",
        ));
    }
    let Some(props) = props else {
        return;
    };
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

/// The API server keeps a null of a nullable field and checks it against the enum,
/// which cannot hold null (a null in a CRD's `enum` does not match it): every null
/// would be refused (Kubernetes 1.34, `runtime/tests/integration/api_server.rs`).
fn check_nullable_enum(obj: &Map<String, Value>, path: &str, out: &mut Vec<Problem>) {
    if flag(obj, "nullable") && obj.contains_key("enum") {
        // A list item is no field: its null cannot be dropped, only the Option removed.
        let hint = if path.ends_with("[*]") {
            "a list item cannot be dropped like a field: make the list's items required \
             (`Vec<T>` instead of `Vec<Option<T>>`)"
        } else {
            "leave out #[rkb(nullable)]: a null is then dropped, as an unset Option"
        };
        out.push(
            Problem::new(
                path,
                "a nullable enum refuses null: the API server checks the null it keeps against \
                 the enum's values",
            )
            .hint(hint),
        );
    }
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
