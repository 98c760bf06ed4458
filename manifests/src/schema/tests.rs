//! The schema rules, one case each.

use rkb_core::schema::PRESERVE_UNKNOWN_FIELDS as PRESERVE;

use super::size::truncate;
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
    assert_eq!(spec["level"], json!({"type": "string", "enum": ["A", "B"]}));
    assert_eq!(spec["count"]["format"], "int64");
    assert_eq!(spec["small"]["format"], "int32");
    assert!(check(&schema).is_empty(), "{:?}", check(&schema));
}

#[test]
fn fix_keeps_nullable_only_where_it_was_asked_for() {
    let mut schema = root(json!({"type": "object", "nullable": true, "properties": {
        "plain": {"type": "string", "nullable": true, "default": null},
        "level": {"type": "string", "nullable": true, "enum": ["A", null]},
        "asked": {"type": "string", "nullable": true, "x-rkb-nullable": true},
        "askedLevel": {"type": "string", "x-rkb-nullable": true, "enum": ["A"]},
        "list": {"type": "array", "items": {"type": "string", "nullable": true}},
        "levels": {"type": "array", "items": {"type": "string", "nullable": true, "enum": ["A", null]}},
        "required": {"type": "array", "items": {"type": "string"}}
    }}));
    fix(&mut schema);
    let spec = &schema["properties"]["spec"];
    assert_eq!(spec.get("nullable"), None);
    let props = &spec["properties"];
    assert_eq!(props["plain"], json!({"type": "string"}));
    assert_eq!(props["level"], json!({"type": "string", "enum": ["A"]}));
    assert_eq!(props["asked"], json!({"type": "string", "nullable": true}));
    assert_eq!(
        props["askedLevel"],
        json!({"type": "string", "nullable": true, "enum": ["A"]})
    );
    // A `Vec<Option<T>>`'s nulls are items the API server keeps and checks.
    assert_eq!(
        props["list"]["items"],
        json!({"type": "string", "nullable": true})
    );
    assert_eq!(props["required"]["items"], json!({"type": "string"}));
    assert_eq!(
        messages(schema),
        [
            ".spec.askedLevel: a nullable enum refuses null: the API server checks the null it \
          keeps against the enum's values\n    hint: leave out #[rkb(nullable)]: a null is then \
          dropped, as an unset Option",
            ".spec.levels[*]: a nullable enum refuses null: the API server checks the null it \
          keeps against the enum's values\n    hint: a list item cannot be dropped like a field: \
          make the list's items required (`Vec<T>` instead of `Vec<Option<T>>`)"
        ]
    );
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
