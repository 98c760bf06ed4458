//! The walk over a schema that writes structs, fields and their `#[rkb(...)]` keys.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use rkb_core::schema::{EMBEDDED_RESOURCE, INT_OR_STRING, PRESERVE_UNKNOWN_FIELDS};
use serde_json::{Map, Value};

use super::item::{doc_comment, render_struct};
use super::keys::key;
use super::names::{field_name, type_part};
use super::{ExternalCrd, Limitation, Place, STRUCTURAL, item_keywords, type_keywords};

/// The module being written: its structs, the names they took, what was left out, and
/// which imports and schema functions the types need.
pub(super) struct Writer {
    pub(super) structs: Vec<String>,
    taken: BTreeSet<String>,
    pub(super) limitations: Vec<Limitation>,
    pub(super) int_or_string: bool,
    pub(super) bare_int_or_string: bool,
    pub(super) map: bool,
    pub(super) integer: bool,
    pub(super) number: bool,
}

/// What a schema's type took care of, besides the Rust type.
struct Found {
    /// Keywords the type expresses, which need no key.
    done: Vec<&'static str>,
    /// Keys the type needs (`schemaless`, `embedded_resource`, `items(...)`).
    extra: Vec<String>,
    /// The `schemars(schema_with)` function the field needs.
    with: Option<String>,
}

/// The Rust type of a schema.
enum Rust {
    /// A type used where the schema is; the keywords left are its keys there.
    Type(String),
    /// A struct written for list items or map values, which carries its keywords itself.
    Struct(String),
}

impl Writer {
    /// A writer for `kind`'s types: the root type, its status and the struct kube's derive
    /// takes (the spec, or with `flat` the fields it flattens) are taken names.
    pub(super) fn new(kind: &str, flat: bool) -> Self {
        Writer {
            structs: Vec::new(),
            taken: [
                kind.to_owned(),
                format!("{kind}{}", if flat { "Fields" } else { "Spec" }),
                format!("{kind}Status"),
            ]
            .into_iter()
            .collect(),
            limitations: Vec::new(),
            int_or_string: false,
            bare_int_or_string: false,
            map: false,
            integer: false,
            number: false,
        }
    }

    /// What the root schema has that kube's derive writes itself, as limitations: its
    /// keywords, and a `required` that names metadata or status (`fields` are the others).
    pub(super) fn check_root(&mut self, schema: &Value, fields: &Value) {
        for (key, value) in schema.as_object().into_iter().flatten() {
            match key.as_str() {
                "type" | "description" | "properties" => {}
                "required" => {
                    for name in value.as_array().into_iter().flatten() {
                        let name = name.as_str().unwrap_or_default();
                        if fields["properties"].get(name).is_none() {
                            self.limit(
                                "",
                                format!(
                                    "`required` names `{name}`: kube's derive writes apiVersion, kind, metadata and status itself, none of them required"
                                ),
                            );
                        }
                    }
                }
                _ => self.limit(
                    "",
                    format!(
                        "`{key}` on the object itself: kube's derive writes the root schema (apiVersion, kind, metadata, spec, status)"
                    ),
                ),
            }
        }
    }

    pub(super) fn limit(&mut self, path: &str, what: String) {
        self.limitations.push(Limitation {
            path: if path.is_empty() {
                ".".into()
            } else {
                path.into()
            },
            what,
        });
    }

    /// A new struct name from `hint`, unique in the module.
    fn name(&mut self, hint: &str) -> String {
        let mut name = hint.to_owned();
        let mut n = 2;
        while !self.taken.insert(name.clone()) {
            name = format!("{hint}{n}");
            n += 1;
        }
        name
    }

    /// The fields of an object schema's properties.
    pub(super) fn fields(&mut self, object: &Value, path: &str, owner: &str) -> String {
        let required: BTreeSet<&str> = object["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut out = String::new();
        let mut used = BTreeSet::new();
        for (json, node) in object["properties"].as_object().into_iter().flatten() {
            let at = format!("{path}.{json}");
            let mut field = field_name(json);
            while !used.insert(field.clone()) {
                field.push('_');
            }
            let hint = format!("{owner}{}", type_part(json));
            let (ty, mut keys, schemars) = self.value(node, &at, &hint, Place::Field);
            let optional = !required.contains(json.as_str());
            if let Some(doc) = node["description"].as_str() {
                out.push_str(&doc_comment(doc, "    "));
            }
            keys.retain(|k| !k.is_empty());
            if !keys.is_empty() {
                let _ = writeln!(out, "    #[rkb({})]", keys.join(", "));
            }
            if let Some(with) = schemars {
                let _ = writeln!(out, "    #[schemars(schema_with = {with:?})]");
            }
            let mut serde = Vec::new();
            if field.trim_start_matches("r#") != json {
                serde.push(format!("rename = {json:?}"));
            }
            if optional {
                serde.push("default".into());
                serde.push("skip_serializing_if = \"Option::is_none\"".into());
            }
            if !serde.is_empty() {
                let _ = writeln!(out, "    #[serde({})]", serde.join(", "));
            }
            let ty = if optional {
                format!("Option<{ty}>")
            } else {
                ty
            };
            let _ = writeln!(out, "    pub {field}: {ty},");
        }
        for name in &required {
            if object["properties"].get(*name).is_none() {
                self.limit(
                    path,
                    format!("`required` names `{name}`, which is not among the properties"),
                );
            }
        }
        out
    }

    /// The Rust type of a schema, the keys written where it is used (on the field, or
    /// the body of `items(...)`), and a `schemars(schema_with)` function if needed.
    fn value(
        &mut self,
        node: &Value,
        path: &str,
        hint: &str,
        place: Place,
    ) -> (String, Vec<String>, Option<String>) {
        let mut found = Found {
            done: STRUCTURAL.to_vec(),
            extra: Vec::new(),
            with: None,
        };
        let rust = match self.rust_type(node, path, hint, place, &mut found) {
            Rust::Type(rust) => rust,
            Rust::Struct(name) => return (name, found.extra, found.with),
        };
        let allowed: Vec<&str> = match place {
            Place::Field => Vec::new(),
            Place::Items | Place::Values => item_keywords(),
        };
        let mut rest = Map::new();
        for (key, value) in node.as_object().into_iter().flatten() {
            if !found.done.contains(&key.as_str()) {
                rest.insert(key.clone(), value.clone());
            }
        }
        let mut keys = found.extra;
        keys.extend(self.keys(&Value::Object(rest), path, place, &allowed));
        (rust, keys, found.with)
    }

    /// The Rust type of a schema; what it expresses goes into `found`.
    fn rust_type(
        &mut self,
        node: &Value,
        path: &str,
        hint: &str,
        place: Place,
        found: &mut Found,
    ) -> Rust {
        let ty = node["type"].as_str().unwrap_or_default();
        if node[INT_OR_STRING] == true {
            self.int_or_string = true;
            if node["description"].is_null() {
                // IntOrString's schema has k8s-openapi's description; the CRD has none.
                self.bare_int_or_string = true;
                found.with = Some("int_or_string".to_owned());
            }
            found.done.push(INT_OR_STRING);
            if is_int_or_string_any_of(&node["anyOf"]) {
                found.done.push("anyOf");
            }
            return Rust::Type("IntOrString".into());
        }
        if node[EMBEDDED_RESOURCE] == true && node["properties"].is_null() {
            found
                .done
                .extend([EMBEDDED_RESOURCE, PRESERVE_UNKNOWN_FIELDS]);
            self.embedded(path, place, found);
            return Rust::Type("serde_json::Value".into());
        }
        let rust = match ty {
            "object"
                if node["properties"].is_object() || node["additionalProperties"].is_null() =>
            {
                return self.object(node, path, hint, place, found);
            }
            "object" => self.map_of(node, path, hint),
            "array" => self.array(node, path, hint, place, found),
            "string" => "String".into(),
            "boolean" => "bool".into(),
            "integer" | "number" => self.number(ty, node, found),
            _ => self.untyped(ty, node, path, place, found),
        };
        Rust::Type(rust)
    }

    /// `embedded_resource` on a field; elsewhere a limitation.
    fn embedded(&mut self, path: &str, place: Place, found: &mut Found) {
        if place == Place::Field {
            found.extra.push("embedded_resource".into());
        } else {
            self.limit(
                path,
                "`x-kubernetes-embedded-resource` on list items or map values".into(),
            );
        }
    }

    /// An object with properties (a struct), or without (a schemaless map).
    fn object(
        &mut self,
        node: &Value,
        path: &str,
        hint: &str,
        place: Place,
        found: &mut Found,
    ) -> Rust {
        if node[EMBEDDED_RESOURCE] == true {
            found.done.push(EMBEDDED_RESOURCE);
            self.embedded(path, place, found);
        }
        if node["properties"].is_null() && node[PRESERVE_UNKNOWN_FIELDS] == true {
            self.map = true;
            found.done.push(PRESERVE_UNKNOWN_FIELDS);
            if place == Place::Field {
                found.extra.push("schemaless".into());
            } else {
                self.limit(path, "`x-kubernetes-preserve-unknown-fields` on list items or map values without properties".into());
                self.limit(path, "`additionalProperties`: list items or map values that keep unknown fields are a map of any values here, whose schema says so".into());
            }
            return Rust::Type("BTreeMap<String, serde_json::Value>".into());
        }
        let name = self.name(hint);
        let body = self.fields(node, path, &name);
        let (keys, doc) = if place == Place::Field {
            (Vec::new(), None)
        } else {
            let keywords = type_keywords();
            found.done.extend(&keywords);
            (
                self.keys(node, path, Place::Values, &keywords),
                node["description"].as_str(),
            )
        };
        self.structs.push(render_struct(
            &name,
            doc,
            &keys,
            &body,
            "#[rkb_runtime::schema]",
        ));
        if place == Place::Field {
            Rust::Type(name)
        } else {
            Rust::Struct(name)
        }
    }

    /// `additionalProperties`: a `BTreeMap` of the values' type.
    fn map_of(&mut self, node: &Value, path: &str, hint: &str) -> String {
        self.map = true;
        let values = &node["additionalProperties"];
        let inner = if values == &Value::Bool(true) {
            "serde_json::Value".to_owned()
        } else {
            let (inner, keys, w) = self.value(values, &format!("{path}.*"), hint, Place::Values);
            if w.is_some() || !keys.is_empty() {
                self.limit(
                    &format!("{path}.*"),
                    "keywords on a map's values that are no struct".into(),
                );
            }
            if !written_as_struct(values) && values["description"].is_string() {
                self.limit(&format!("{path}.*"), "`description` of a map's values that are no struct: only a struct carries one (its doc comment)".into());
            }
            inner
        };
        format!("BTreeMap<String, {inner}>")
    }

    /// A `Vec` of the items' type, with their keys in `items(...)`.
    fn array(
        &mut self,
        node: &Value,
        path: &str,
        hint: &str,
        place: Place,
        found: &mut Found,
    ) -> String {
        let items = &node["items"];
        let (inner, keys, w) = if items.is_object() {
            self.value(items, &format!("{path}[]"), hint, Place::Items)
        } else {
            self.limit(path, "an array without `items`".into());
            ("serde_json::Value".into(), Vec::new(), None)
        };
        if w.is_some() {
            self.limit(
                &format!("{path}[]"),
                "list items of integers or numbers without a format".into(),
            );
        }
        if place != Place::Field {
            if !keys.is_empty() {
                self.limit(
                    &format!("{path}[]"),
                    format!(
                        "{} on the items of a list in a list: `items(...)` reaches one level",
                        keys.join(", ")
                    ),
                );
            }
        } else if !keys.is_empty() {
            found.extra.push(format!("items({})", keys.join(", ")));
        }
        if !written_as_struct(items) && items["description"].is_string() {
            self.limit(&format!("{path}[]"), "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)".into());
        }
        format!("Vec<{inner}>")
    }

    /// An integer or number: the Rust type of its format, or a schema function without.
    fn number(&mut self, ty: &str, node: &Value, found: &mut Found) -> String {
        let rust = match (ty, node["format"].as_str()) {
            ("integer", Some("int32")) => "i32",
            ("integer", Some("int64")) => "i64",
            ("number", Some("double")) => "f64",
            ("number", Some("float")) => "f32",
            ("integer", _) => {
                self.integer = true;
                found.with = Some("integer".to_owned());
                return "i64".into();
            }
            _ => {
                self.number = true;
                found.with = Some("number".to_owned());
                return "f64".into();
            }
        };
        found.done.push("format");
        rust.into()
    }

    /// A schema without a type Rust has: any JSON value.
    fn untyped(
        &mut self,
        ty: &str,
        node: &Value,
        path: &str,
        place: Place,
        found: &mut Found,
    ) -> String {
        if node[PRESERVE_UNKNOWN_FIELDS] == true {
            found.done.push(PRESERVE_UNKNOWN_FIELDS);
            if place == Place::Field {
                found.extra.push("schemaless".into());
            } else {
                self.limit(
                    path,
                    "`x-kubernetes-preserve-unknown-fields` on list items or map values".into(),
                );
            }
        } else if !ty.is_empty() {
            self.limit(
                path,
                format!("`type: {ty}`, which Kubernetes does not know"),
            );
        } else if place == Place::Field {
            // Any value: serde_json::Value's schema, with nothing to add.
        } else {
            self.limit(path, "list items or map values without a type".into());
        }
        "serde_json::Value".into()
    }

    /// The `#[rkb(...)]` keys of a schema's keywords; those `place` cannot take (not in
    /// `allowed`, when given) or no key expresses are limitations.
    pub(super) fn keys(
        &mut self,
        node: &Value,
        path: &str,
        place: Place,
        allowed: &[&str],
    ) -> Vec<String> {
        let mut keys = Vec::new();
        for (keyword, value) in node.as_object().into_iter().flatten() {
            if STRUCTURAL.contains(&keyword.as_str()) && place != Place::Field {
                continue;
            }
            if STRUCTURAL.contains(&keyword.as_str()) {
                continue;
            }
            if !allowed.is_empty() && !allowed.contains(&keyword.as_str()) {
                self.limit(
                    path,
                    format!(
                        "`{keyword}` on {}: no #[rkb(...)] key writes it there",
                        match place {
                            Place::Items => "list items",
                            Place::Values => "map values or a struct",
                            Place::Field => "a field",
                        }
                    ),
                );
                continue;
            }
            match key(keyword, value) {
                Ok(Some(k)) => keys.push(k),
                Ok(None) => {}
                Err(why) => self.limit(path, format!("`{keyword}`: {why}")),
            }
        }
        keys
    }

    /// The spec's CRD keys: printer columns, short names, categories, selectable fields.
    pub(super) fn crd_keys(&mut self, crd: &ExternalCrd) -> Vec<String> {
        let mut keys = Vec::new();
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|s| format!("{s:?}"))
                .collect()
        };
        let short = strings(&crd.names["shortNames"]);
        if !short.is_empty() {
            keys.push(format!("short_names = [{}]", short.join(", ")));
        }
        let categories = strings(&crd.names["categories"]);
        if !categories.is_empty() {
            keys.push(format!("categories = [{}]", categories.join(", ")));
        }
        for column in crd.version_entry["additionalPrinterColumns"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let mut parts = Vec::new();
            for (json, rust) in [
                ("name", "name"),
                ("type", "type"),
                ("jsonPath", "json_path"),
                ("description", "description"),
                ("format", "format"),
                ("priority", "priority"),
            ] {
                match &column[json] {
                    Value::String(s) if rust == "type" => parts.push(format!("type = {s}")),
                    Value::String(s) => parts.push(format!("{rust} = {s:?}")),
                    Value::Number(n) => parts.push(format!("{rust} = {n}")),
                    _ => {}
                }
            }
            keys.push(format!("printcolumn({})", parts.join(", ")));
        }
        let selectable: Vec<String> = crd.version_entry["selectableFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["jsonPath"].as_str())
            .map(|s| format!("{s:?}"))
            .collect();
        if !selectable.is_empty() {
            keys.push(format!("selectable = [{}]", selectable.join(", ")));
        }
        if crd.version_entry["deprecated"] == true {
            match crd.version_entry["deprecationWarning"].as_str() {
                Some(warning) => keys.push(format!("deprecated = {warning:?}")),
                None => keys.push("deprecated".into()),
            }
        }
        keys
    }
}

/// Whether [`Writer::rust_type`] writes a struct for `node` (an object with properties, or
/// one with neither properties, `additionalProperties` nor unknown fields kept), which
/// carries the node's description as its doc comment.
fn written_as_struct(node: &Value) -> bool {
    node["type"] == "object"
        && node[INT_OR_STRING] != true
        && !(node[EMBEDDED_RESOURCE] == true && node["properties"].is_null())
        && (node["properties"].is_object()
            || (node["additionalProperties"].is_null() && node[PRESERVE_UNKNOWN_FIELDS] != true))
}

/// `anyOf: [{type: integer}, {type: string}]`, as controller-gen writes int-or-string.
fn is_int_or_string_any_of(any_of: &Value) -> bool {
    let Some(list) = any_of.as_array() else {
        return false;
    };
    let types: BTreeSet<&str> = list.iter().filter_map(|s| s["type"].as_str()).collect();
    list.len() == 2 && types == BTreeSet::from(["integer", "string"])
}
