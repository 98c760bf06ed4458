//! Rust types from an external CRD's schema, with the `#[rkb(...)]` attributes that make
//! rkb derive the same schema back.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use heck::{ToSnakeCase, ToUpperCamelCase};
use serde_json::{Map, Value};

use super::ExternalCrd;

/// Part of the schema no `#[rkb(...)]` key or Rust type expresses: left out of the types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limitation {
    /// Where, as a JSON path into the version's `openAPIV3Schema`: `.spec.rules[].matches`.
    pub path: String,
    /// What was left out, and why.
    pub what: String,
}

/// The generated module and what it could not express.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The Rust source of the types (without header), rustfmt-formatted by the plan.
    pub source: String,
    pub limitations: Vec<Limitation>,
    /// The fields a sample object needs besides metadata, as the body of a
    /// `serde_json::json!` object: the required fields with the simplest valid values.
    pub sample_fields: Option<String>,
}

/// Where a schema sits, which decides where its keywords can be written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A struct field: every field key.
    Field,
    /// The items of a list: `items(...)` for scalars, the struct's own keys for objects.
    Items,
    /// The values of a map: only a struct's own keys.
    Values,
}

/// Keys `items(...)` takes, by OpenAPI keyword.
const ITEM_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "enum",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// Keys a struct takes on itself (`#[rkb(...)]` on the type), by OpenAPI keyword.
const TYPE_KEYWORDS: &[&str] = &[
    "enum",
    "minProperties",
    "maxProperties",
    "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
    "title",
    "externalDocs",
];

/// What the schema's structure (not a key) expresses: the Rust type, `Option`, docs.
const STRUCTURAL: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "description",
];

struct Writer {
    structs: Vec<String>,
    taken: BTreeSet<String>,
    limitations: Vec<Limitation>,
    int_or_string: bool,
    bare_int_or_string: bool,
    map: bool,
    integer: bool,
    number: bool,
}

/// The Rust types of `crd`'s version.
pub fn types(crd: &ExternalCrd) -> Generated {
    let schema = &crd.version_entry["schema"]["openAPIV3Schema"];
    let kind = &crd.kind;
    let mut w = Writer {
        structs: Vec::new(),
        taken: [kind.clone(), format!("{kind}Spec"), format!("{kind}Status")]
            .into_iter()
            .collect(),
        limitations: Vec::new(),
        int_or_string: false,
        bare_int_or_string: false,
        map: false,
        integer: false,
        number: false,
    };
    let empty = Value::Object(Map::new());
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (key, value) in schema.as_object().into_iter().flatten() {
        match key.as_str() {
            "type" | "description" | "properties" => {}
            "required" if value.as_array().is_some_and(|r| r.iter().all(|f| f == "spec")) => {}
            _ => w.limit(
                "",
                format!(
                    "`{key}` on the object itself: kube's derive writes the root schema (apiVersion, kind, metadata, spec, status)"
                ),
            ),
        }
    }
    for key in props.keys() {
        if !matches!(
            key.as_str(),
            "apiVersion" | "kind" | "metadata" | "spec" | "status"
        ) {
            w.limit(
                &format!(".{key}"),
                "a top-level field besides spec and status: kube's types have only those".into(),
            );
        }
    }
    let spec = match props.get("spec") {
        Some(spec) => spec.clone(),
        None => {
            w.limit(
                ".spec",
                "the CRD has no spec, and kube's types always have one: the types get an empty one"
                    .into(),
            );
            empty.clone()
        }
    };
    let status = props.get("status").cloned();
    let spec_name = format!("{kind}Spec");
    let status_name = format!("{kind}Status");
    // The spec and status first: they are what a reader looks for.
    let spec_body = w.fields(&spec, ".spec", &spec_name);
    let spec_keys = w.keys(&spec, ".spec", Place::Values, TYPE_KEYWORDS);
    let status_struct = status.as_ref().map(|status| {
        let body = w.fields(status, ".status", &status_name);
        let keys = w.keys(status, ".status", Place::Values, TYPE_KEYWORDS);
        render_struct(
            &status_name,
            status["description"].as_str(),
            &keys,
            &body,
            "#[rkb_runtime::schema]",
        )
    });

    let mut out = String::new();
    out.push_str(&format!(
        "//! The {kind} API ({}/{}), written by `rkb create api --external-crd` from the CRD in\n\
         //! config/external-crds/: another project defines this kind and owns its CRD, which\n\
         //! this project does not install. Run the command again (with --force) when the CRD\n\
         //! changes; the test below fails while these types derive another schema.\n\n",
        crd.group, crd.version
    ));
    if w.map {
        out.push_str("use std::collections::BTreeMap;\n\n");
    }
    if w.int_or_string {
        out.push_str("use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\n");
    }
    out.push_str("use kube::CustomResource;\n");
    if w.integer || w.number || w.bare_int_or_string {
        out.push_str("use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};\n");
    } else {
        out.push_str("use schemars::JsonSchema;\n");
    }
    out.push_str("use serde::{Deserialize, Serialize};\n\n");

    // The spec, with the CRD's own attributes.
    let mut kube = vec![
        format!("group = {:?}", crd.group),
        format!("version = {:?}", crd.version),
        format!("kind = {:?}", crd.kind),
        format!("plural = {:?}", crd.plural),
    ];
    if let Some(singular) = crd.names["singular"].as_str()
        && singular != crd.kind.to_lowercase()
    {
        kube.push(format!("singular = {singular:?}"));
    }
    if crd.namespaced {
        kube.push("namespaced".into());
    }
    if status.is_some() {
        kube.push(format!("status = {status_name:?}"));
    }
    if let Some(approved) = &crd.api_approved {
        kube.push(format!(
            "annotation(\"api-approved.kubernetes.io\", {approved:?})"
        ));
    }
    kube.push("derive = \"Default\"".into());
    kube.push("derive = \"PartialEq\"".into());
    if let Some(doc) = schema["description"].as_str() {
        if doc.contains("```")
            || doc
                .lines()
                .any(|l| l.starts_with("    ") || l.starts_with('\t'))
        {
            // kube's `doc` is a doc comment of the root type, whose code rustdoc would run.
            w.limit(
                "",
                "`description` of the object itself: it holds a code block, which rustdoc would run as a doctest of the root type kube derives".into(),
            );
        } else {
            kube.push(format!("doc = {doc:?}"));
        }
    }
    let mut spec_attrs = spec_keys;
    spec_attrs.extend(w.crd_keys(crd));
    let spec_struct = render_struct(
        &spec_name,
        spec["description"].as_str(),
        &spec_attrs,
        &spec_body,
        &format!(
            "#[rkb_runtime::api]\n#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]\n#[kube({})]",
            kube.join(", ")
        ),
    );
    out.push_str(&spec_struct);
    if let Some(status) = status_struct {
        out.push('\n');
        out.push_str(&status);
    }
    for s in &w.structs {
        out.push('\n');
        out.push_str(s);
    }
    if w.integer {
        out.push_str(
            "\n/// An integer without a format, as the CRD has it (Rust's integers have one).\n\
             fn integer(_: &mut SchemaGenerator) -> Schema {\n    json_schema!({ \"type\": \"integer\" })\n}\n",
        );
    }
    if w.bare_int_or_string {
        out.push_str(
            "\n/// An int-or-string without a description, as the CRD has it (IntOrString's schema has one).\n\
             fn int_or_string(_: &mut SchemaGenerator) -> Schema {\n    json_schema!({ \"x-kubernetes-int-or-string\": true })\n}\n",
        );
    }
    if w.number {
        out.push_str(
            "\n/// A number without a format, as the CRD has it (Rust's floats have one).\n\
             fn number(_: &mut SchemaGenerator) -> Schema {\n    json_schema!({ \"type\": \"number\" })\n}\n",
        );
    }
    let allowed: Vec<String> = w
        .limitations
        .iter()
        .map(|l| format!("        ({:?}, {:?}),\n", l.path, l.what))
        .collect();
    let crd_file = crd_file(crd);
    let _ = write!(
        out,
        "\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n    \
         /// The schema rkb derives from these types is the external CRD's; the differences\n    \
         /// listed are what `#[rkb(...)]` cannot express, which the command reported.\n    \
         #[test]\n    fn types_derive_the_external_crd() {{\n        \
         let derived = rkb_runtime::crd::<{kind}>().unwrap_or_else(|error| panic!(\"{{error}}\"));\n        \
         let external = include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/{crd_file}\"));\n        \
         let left_out: &[(&str, &str)] = &[\n{}        ];\n        \
         rkb_runtime::testing::external::assert_same_schema(&derived, external, {:?}, left_out);\n    }}\n}}\n",
        allowed.concat(),
        crd.version
    );
    Generated {
        source: out,
        limitations: w.limitations,
        sample_fields: sample_fields(&spec),
    }
}

/// Where the project keeps the CRD: `config/external-crds/<group>_<plural>.yaml`.
pub fn crd_file(crd: &ExternalCrd) -> String {
    format!("config/external-crds/{}_{}.yaml", crd.group, crd.plural)
}

fn render_struct(name: &str, doc: Option<&str>, keys: &[String], body: &str, head: &str) -> String {
    let mut out = String::new();
    let doc = doc.map(|d| doc_comment(d, "")).unwrap_or_default();
    // A `#[schemars]` attribute goes after the derive that introduces it.
    let after = doc.starts_with("#[");
    if !after {
        out.push_str(&doc);
    }
    out.push_str(head);
    out.push('\n');
    if head == "#[rkb_runtime::schema]" {
        out.push_str(
            "#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]\n",
        );
    }
    if after {
        out.push_str(&doc);
    }
    if !keys.is_empty() {
        let _ = writeln!(out, "#[rkb({})]", keys.join(", "));
    }
    let _ = write!(out, "pub struct {name} {{\n{body}}}\n");
    out
}

/// `///` lines for a description that survives them unchanged (schemars joins the lines
/// with `\n` after taking one space off each) and holds no code block; else schemars'
/// `description` attribute.
fn doc_comment(text: &str, indent: &str) -> String {
    let plain = !text.is_empty()
        && text
            .lines()
            .all(|l| l == l.trim_end() && !l.contains('\r') && !l.starts_with(char::is_whitespace))
        && !text.ends_with('\n')
        && !text.contains("```")
        && text.split('\n').count() == text.lines().count();
    if plain {
        text.lines()
            .map(|l| {
                if l.is_empty() {
                    format!("{indent}///\n")
                } else {
                    format!("{indent}/// {l}\n")
                }
            })
            .collect()
    } else {
        // Not a doc comment: rustdoc would run its code blocks as doctests.
        format!("{indent}#[schemars(description = {text:?})]\n")
    }
}

impl Writer {
    fn limit(&mut self, path: &str, what: String) {
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
    fn fields(&mut self, object: &Value, path: &str, owner: &str) -> String {
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
        let ty = node["type"].as_str().unwrap_or_default();
        let flag = |key: &str| node[key] == true;
        let mut done: Vec<&str> = STRUCTURAL.to_vec();
        let mut extra: Vec<String> = Vec::new();
        let mut with = None;
        let rust: String;
        if flag("x-kubernetes-int-or-string") {
            self.int_or_string = true;
            rust = "IntOrString".into();
            if node["description"].is_null() {
                // IntOrString's schema has k8s-openapi's description; the CRD has none.
                self.bare_int_or_string = true;
                with = Some("int_or_string".to_owned());
            }
            done.push("x-kubernetes-int-or-string");
            if is_int_or_string_any_of(&node["anyOf"]) {
                done.push("anyOf");
            }
        } else if flag("x-kubernetes-embedded-resource") && node["properties"].is_null() {
            rust = "serde_json::Value".into();
            done.extend([
                "x-kubernetes-embedded-resource",
                "x-kubernetes-preserve-unknown-fields",
            ]);
            if place == Place::Field {
                extra.push("embedded_resource".into());
            } else {
                self.limit(
                    path,
                    "`x-kubernetes-embedded-resource` on list items or map values".into(),
                );
            }
        } else {
            match ty {
                "object"
                    if node["properties"].is_object() || node["additionalProperties"].is_null() =>
                {
                    if flag("x-kubernetes-embedded-resource") {
                        done.push("x-kubernetes-embedded-resource");
                        if place == Place::Field {
                            extra.push("embedded_resource".into());
                        } else {
                            self.limit(
                                path,
                                "`x-kubernetes-embedded-resource` on list items or map values"
                                    .into(),
                            );
                        }
                    }
                    if node["properties"].is_null() && flag("x-kubernetes-preserve-unknown-fields")
                    {
                        self.map = true;
                        rust = "BTreeMap<String, serde_json::Value>".into();
                        done.push("x-kubernetes-preserve-unknown-fields");
                        if place == Place::Field {
                            extra.push("schemaless".into());
                        } else {
                            self.limit(path, "`x-kubernetes-preserve-unknown-fields` on list items or map values without properties".into());
                        }
                    } else {
                        let name = self.name(hint);
                        let body = self.fields(node, path, &name);
                        let (keys, doc) = if place == Place::Field {
                            (Vec::new(), None)
                        } else {
                            done.extend(TYPE_KEYWORDS);
                            (
                                self.keys(node, path, Place::Values, TYPE_KEYWORDS),
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
                        if place != Place::Field {
                            // The struct carries its keywords itself.
                            return (name, extra, with);
                        }
                        rust = name;
                    }
                }
                "object" => {
                    self.map = true;
                    let values = &node["additionalProperties"];
                    let inner = if values == &Value::Bool(true) {
                        "serde_json::Value".to_owned()
                    } else {
                        let (inner, keys, w) =
                            self.value(values, &format!("{path}.*"), hint, Place::Values);
                        if w.is_some() || !keys.is_empty() {
                            self.limit(
                                &format!("{path}.*"),
                                "keywords on a map's values that are no struct".into(),
                            );
                        }
                        if !values["properties"].is_object() && values["description"].is_string() {
                            self.limit(&format!("{path}.*"), "`description` of a map's values: only a struct's values carry one (its doc comment)".into());
                        }
                        inner
                    };
                    rust = format!("BTreeMap<String, {inner}>");
                }
                "array" => {
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
                        extra.push(format!("items({})", keys.join(", ")));
                    }
                    if items["type"].as_str().is_none_or(|t| t != "object")
                        && items["description"].is_string()
                    {
                        self.limit(&format!("{path}[]"), "`description` of list items that are no objects: only a struct's items carry one (its doc comment)".into());
                    }
                    rust = format!("Vec<{inner}>");
                }
                "string" => rust = "String".into(),
                "boolean" => rust = "bool".into(),
                "integer" => match node["format"].as_str() {
                    Some("int32") => {
                        rust = "i32".into();
                        done.push("format");
                    }
                    Some("int64") => {
                        rust = "i64".into();
                        done.push("format");
                    }
                    _ => {
                        rust = "i64".into();
                        self.integer = true;
                        with = Some("integer".to_owned());
                    }
                },
                "number" => match node["format"].as_str() {
                    Some("double") => {
                        rust = "f64".into();
                        done.push("format");
                    }
                    Some("float") => {
                        rust = "f32".into();
                        done.push("format");
                    }
                    _ => {
                        rust = "f64".into();
                        self.number = true;
                        with = Some("number".to_owned());
                    }
                },
                _ => {
                    rust = "serde_json::Value".into();
                    if flag("x-kubernetes-preserve-unknown-fields") {
                        done.push("x-kubernetes-preserve-unknown-fields");
                        if place == Place::Field {
                            extra.push("schemaless".into());
                        } else {
                            self.limit(path, "`x-kubernetes-preserve-unknown-fields` on list items or map values".into());
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
                }
            }
        }
        let allowed: Vec<&str> = match place {
            Place::Field => Vec::new(),
            Place::Items | Place::Values => ITEM_KEYWORDS.to_vec(),
        };
        let mut rest = Map::new();
        for (key, value) in node.as_object().into_iter().flatten() {
            if !done.contains(&key.as_str()) {
                rest.insert(key.clone(), value.clone());
            }
        }
        let mut keys = extra;
        keys.extend(self.keys(&Value::Object(rest), path, place, &allowed));
        (rust, keys, with)
    }

    /// The `#[rkb(...)]` keys of a schema's keywords; those `place` cannot take (not in
    /// `allowed`, when given) or no key expresses are limitations.
    fn keys(&mut self, node: &Value, path: &str, place: Place, allowed: &[&str]) -> Vec<String> {
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
    fn crd_keys(&mut self, crd: &ExternalCrd) -> Vec<String> {
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

/// The `#[rkb(...)]` key for one keyword, `None` when it needs none.
fn key(keyword: &str, value: &Value) -> Result<Option<String>, String> {
    let number = |name: &str| match value {
        Value::Number(n) => Ok(Some(format!("{name} = {n}"))),
        _ => Err(format!("not a number: {value}")),
    };
    let count = |name: &str| match value.as_u64() {
        Some(n) => Ok(Some(format!("{name} = {n}"))),
        None => Err(format!("not a count: {value}")),
    };
    let text = |name: &str| match value.as_str() {
        Some(s) => Ok(Some(format!("{name} = {s:?}"))),
        None => Err(format!("not a string: {value}")),
    };
    match keyword {
        "minimum" => number("minimum"),
        "maximum" => number("maximum"),
        "multipleOf" => number("multiple_of"),
        "exclusiveMinimum" | "exclusiveMaximum" => match value {
            Value::Bool(true) => Ok(Some(
                if keyword == "exclusiveMinimum" {
                    "exclusive_minimum"
                } else {
                    "exclusive_maximum"
                }
                .into(),
            )),
            _ => Err("only `true` has a key".into()),
        },
        "minLength" => count("min_length"),
        "maxLength" => count("max_length"),
        "minItems" => count("min_items"),
        "maxItems" => count("max_items"),
        "minProperties" => count("min_properties"),
        "maxProperties" => count("max_properties"),
        "pattern" => match value.as_str() {
            Some(p) if regex_ok(p) => text("pattern"),
            Some(_) => Err("a regular expression rkb's derive cannot parse".into()),
            None => Err("not a string".into()),
        },
        "format" => match value.as_str() {
            Some(f) if rkb_core::schema::FORMATS.contains(&f) => text("format"),
            Some(f) => Err(format!(
                "`{f}` is no format Kubernetes validates (rkb accepts: {})",
                rkb_core::schema::FORMATS.join(", ")
            )),
            None => Err("not a string".into()),
        },
        "title" => text("title"),
        "enum" => {
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
            Ok(Some(format!("enum_values = [{}]", literals.join(", "))))
        }
        "default" | "example" => Ok(Some(format!("{keyword} = {}", json_tokens(value)))),
        "nullable" => match value {
            Value::Bool(true) => Ok(Some("nullable".into())),
            Value::Bool(false) => {
                Err("`nullable: false` is the default; rkb does not write it".into())
            }
            _ => Err("not a boolean".into()),
        },
        "x-kubernetes-list-type" => match value.as_str() {
            Some(t @ ("atomic" | "set" | "map")) => Ok(Some(format!("list_type = {t}"))),
            _ => Err(format!("unknown list type {value}")),
        },
        "x-kubernetes-list-map-keys" => {
            let keys: Vec<String> = value
                .as_array()
                .ok_or("not a list")?
                .iter()
                .map(|k| k.as_str().map(|s| format!("{s:?}")).ok_or("not a string"))
                .collect::<Result<_, _>>()?;
            Ok(Some(format!("list_map_keys = [{}]", keys.join(", "))))
        }
        "x-kubernetes-map-type" => match value.as_str() {
            Some(t @ ("atomic" | "granular")) => Ok(Some(format!("map_type = {t}"))),
            _ => Err(format!("unknown map type {value}")),
        },
        "x-kubernetes-preserve-unknown-fields" => match value {
            Value::Bool(true) => Ok(Some("preserve_unknown_fields".into())),
            _ => Err("only `true` has a key".into()),
        },
        "x-kubernetes-validations" => {
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
                out.push(format!("validation({})", parts.join(", ")));
            }
            Ok(Some(out.join(", ")))
        }
        "externalDocs" => {
            let mut parts = Vec::new();
            if let Some(url) = value["url"].as_str() {
                parts.push(format!("url = {url:?}"));
            }
            if let Some(d) = value["description"].as_str() {
                parts.push(format!("description = {d:?}"));
            }
            Ok(Some(format!("external_docs({})", parts.join(", "))))
        }
        "x-kubernetes-int-or-string" | "x-kubernetes-embedded-resource" => {
            Err("on a schema of this shape".into())
        }
        "anyOf" | "oneOf" | "allOf" | "not" => Err("no Rust type or key expresses it".into()),
        _ => Err("no #[rkb(...)] key writes it".into()),
    }
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

/// `anyOf: [{type: integer}, {type: string}]`, as controller-gen writes int-or-string.
fn is_int_or_string_any_of(any_of: &Value) -> bool {
    let Some(list) = any_of.as_array() else {
        return false;
    };
    let types: BTreeSet<&str> = list.iter().filter_map(|s| s["type"].as_str()).collect();
    list.len() == 2 && types == BTreeSet::from(["integer", "string"])
}

/// The Rust field for a JSON property: snake_case, a raw identifier for a keyword.
fn field_name(json: &str) -> String {
    let mut snake: String = json
        .to_snake_case()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        snake.insert(0, '_');
    }
    match snake.as_str() {
        "self" | "super" | "crate" | "Self" => format!("{snake}_"),
        "as" | "break" | "const" | "continue" | "else" | "enum" | "extern" | "false" | "fn"
        | "for" | "if" | "impl" | "in" | "let" | "loop" | "match" | "mod" | "move" | "mut"
        | "pub" | "ref" | "return" | "static" | "struct" | "trait" | "true" | "type" | "unsafe"
        | "use" | "where" | "while" | "async" | "await" | "dyn" | "abstract" | "become" | "box"
        | "do" | "final" | "macro" | "override" | "priv" | "typeof" | "unsized" | "virtual"
        | "yield" | "try" | "gen" => format!("r#{snake}"),
        _ => snake,
    }
}

/// A property's part of a struct name: `issuerRef` -> `IssuerRef`.
fn type_part(json: &str) -> String {
    let part = json.to_upper_camel_case();
    let part: String = part.chars().filter(char::is_ascii_alphanumeric).collect();
    if part.is_empty() {
        "Field".into()
    } else {
        part
    }
}

/// A sample's required fields, each with the simplest value its schema allows.
fn sample_fields(spec: &Value) -> Option<String> {
    let value = sample(spec)?;
    let Value::Object(map) = &value else {
        return None;
    };
    if map.is_empty() {
        return Some("\"spec\": {}".into());
    }
    Some(format!("\"spec\": {}", serde_json::to_string(&value).ok()?))
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
    fn descriptions_are_doc_comments_unless_rustdoc_or_schemars_would_change_them() {
        assert_eq!(
            doc_comment("One line.\n\nTwo.", ""),
            "/// One line.\n///\n/// Two.\n"
        );
        for text in [
            "A fence:\n```\ncode\n```",
            "Trailing space \nhere",
            "\tindented",
            "ends\n",
        ] {
            assert_eq!(
                doc_comment(text, "    "),
                format!("    #[schemars(description = {text:?})]\n"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn properties_become_rust_fields() {
        assert_eq!(field_name("issuerRef"), "issuer_ref");
        assert_eq!(field_name("type"), "r#type");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("9lives"), "_9lives");
        assert_eq!(field_name("x-forwarded.for"), "x_forwarded_for");
        assert_eq!(type_part("issuerRef"), "IssuerRef");
        assert_eq!(type_part("$ref"), "Ref");
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
        assert!(
            key("oneOf", &json!([]))
                .unwrap_err()
                .contains("no Rust type or key")
        );
    }

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
        assert_eq!(
            sample_fields(&spec).unwrap(),
            "\"spec\": {\"count\":2,\"items\":[false],\"mode\":\"Fast\",\"name\":\"aaa\",\"ref\":{\"kind\":\"Issuer\"}}"
        );
    }
}
