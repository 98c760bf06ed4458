//! Rust types from an external CRD's schema, with the `#[rkb(...)]` attributes that make
//! rkb derive the same schema back.

use rkb_core::attributes::rkb::keywords_where;
use serde_json::{Map, Value};

use super::ExternalCrd;
use item::render_struct;
use render::{kube_attributes, module};
use sample::sample_fields;
use writer::Writer;

mod item;
mod keys;
mod names;
mod render;
mod sample;
mod writer;

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

/// The keywords `items(...)` takes, from rkb-core's key table.
fn item_keywords() -> Vec<&'static str> {
    keywords_where(|places| places.items)
}

/// The keywords a struct takes on itself (`#[rkb(...)]` on the type).
fn type_keywords() -> Vec<&'static str> {
    keywords_where(|places| places.ty)
}

/// What the schema's structure (not a key) expresses: the Rust type, `Option`, docs.
const STRUCTURAL: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "description",
];

/// The Rust types of `crd`'s version.
pub fn types(crd: &ExternalCrd) -> Generated {
    let schema = &crd.version_entry["schema"]["openAPIV3Schema"];
    let kind = &crd.type_name;
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let fields = root_fields(schema, &props);
    let flat = !has_required_spec_alone(&fields);
    let mut w = Writer::new(kind, flat);
    w.check_root(schema, &fields);
    let status = props.get("status").cloned();
    let status_name = format!("{kind}Status");
    // What kube's derive takes (the spec, or the fields it flattens) first: it is what a
    // reader looks for.
    let (name, doc, mut keys, body) = if flat {
        let body = w.fields(&fields, "", kind);
        (format!("{kind}Fields"), None, Vec::new(), body)
    } else {
        let spec = &fields["properties"]["spec"];
        let name = format!("{kind}Spec");
        let body = w.fields(spec, ".spec", &name);
        let keys = w.keys(spec, ".spec", Place::Values, &type_keywords());
        (name, spec["description"].as_str(), keys, body)
    };
    let status_struct = status.as_ref().map(|status| {
        let body = w.fields(status, ".status", &status_name);
        let keys = w.keys(status, ".status", Place::Values, &type_keywords());
        render_struct(
            &status_name,
            status["description"].as_str(),
            &keys,
            &body,
            "#[rkb_runtime::schema]",
        )
    });
    // The struct kube's derive takes, with the CRD's own attributes.
    let kube = kube_attributes(crd, schema, status.is_some(), flat, &mut w);
    keys.extend(w.crd_keys(crd));
    let comment = if flat {
        // Not a doc comment: schemars would make it the description of the object.
        format!(
            "// What an object of kind {} holds besides metadata and status, which kube's derive\n\
             // puts at its top level (`no_spec`): the CRD {}.\n",
            crd.kind,
            if fields["properties"].get("spec").is_some() {
                "does not require a spec"
            } else {
                "has fields beside spec and status"
            }
        )
    } else {
        String::new()
    };
    let root_struct = render_struct(
        &name,
        doc,
        &keys,
        &body,
        &format!(
            "{comment}#[rkb_runtime::api]\n#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]\n#[kube({})]",
            kube.join(", ")
        ),
    );
    Generated {
        source: module(crd, &w, &root_struct, status_struct),
        limitations: w.limitations,
        sample_fields: sample_fields(&fields),
    }
}

/// What of the object's schema is neither metadata nor status (nor apiVersion and kind):
/// the spec, and any other field at the top level, with those the object requires.
fn root_fields(schema: &Value, props: &Map<String, Value>) -> Value {
    let own = |name: &str| !matches!(name, "apiVersion" | "kind" | "metadata" | "status");
    let properties: Map<String, Value> = props
        .iter()
        .filter(|(name, _)| own(name))
        .map(|(name, node)| (name.clone(), node.clone()))
        .collect();
    let required: Vec<Value> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|name| name.as_str().is_some_and(|n| properties.contains_key(n)))
        .cloned()
        .collect();
    let mut fields = Map::new();
    fields.insert("type".into(), "object".into());
    if !required.is_empty() {
        fields.insert("required".into(), Value::Array(required));
    }
    fields.insert("properties".into(), Value::Object(properties));
    Value::Object(fields)
}

/// The shape kube's derive writes by default: a required spec and nothing else beside
/// the status. Any other shape flattens a struct of the top-level fields (`no_spec`).
fn has_required_spec_alone(fields: &Value) -> bool {
    let names: Vec<&String> = fields["properties"]
        .as_object()
        .into_iter()
        .flat_map(|p| p.keys())
        .collect();
    names == ["spec"] && fields["required"] == serde_json::json!(["spec"])
}

/// Where the project keeps the CRD: `config/external-crds/<group>_<plural>.yaml`.
pub fn crd_file(crd: &ExternalCrd) -> String {
    format!("config/external-crds/{}_{}.yaml", crd.group, crd.plural)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd(schema: Value) -> ExternalCrd {
        ExternalCrd {
            group: "example.net".into(),
            kind: "Thing".into(),
            type_name: "Thing".into(),
            plural: "things".into(),
            version: "v1".into(),
            namespaced: true,
            version_entry: json!({ "name": "v1", "schema": { "openAPIV3Schema": schema } }),
            names: json!({}),
            api_approved: None,
            yaml: String::new(),
        }
    }

    fn spec() -> Value {
        json!({ "type": "object", "properties": { "size": { "type": "string" } } })
    }

    #[test]
    fn a_required_spec_alone_is_kubes_spec_and_anything_else_is_flattened() {
        let required = types(&crd(json!({
            "type": "object", "required": ["spec"], "properties": { "spec": spec() }
        })));
        assert!(
            required.source.contains("pub struct ThingSpec {"),
            "{}",
            required.source
        );
        assert!(!required.source.contains("no_spec"), "{}", required.source);

        let optional = types(&crd(
            json!({ "type": "object", "properties": { "spec": spec() } }),
        ));
        assert!(optional.source.contains("no_spec,"), "{}", optional.source);
        assert!(
            optional.source.contains("pub struct ThingFields {")
                && optional.source.contains("pub spec: Option<ThingSpec>,"),
            "{}",
            optional.source
        );
        assert_eq!(optional.limitations, []);
        assert_eq!(optional.sample_fields, None);

        let beside = types(&crd(json!({
            "type": "object", "required": ["spec", "data"],
            "properties": { "spec": spec(), "data": { "type": "string" }, "status": spec() }
        })));
        for part in [
            "no_spec,",
            "pub spec: ThingSpec,",
            "pub data: String,",
            "status = \"ThingStatus\"",
        ] {
            assert!(
                beside.source.contains(part),
                "{part:?} not in:\n{}",
                beside.source
            );
        }
        assert_eq!(beside.limitations, []);
        assert_eq!(
            beside.sample_fields.as_deref(),
            Some("\"data\": \"a\", \"spec\": {}")
        );
    }

    #[test]
    fn what_kube_writes_at_the_root_itself_cannot_be_required() {
        let generated = types(&crd(json!({
            "type": "object", "required": ["spec", "status"],
            "properties": { "spec": spec(), "status": spec() }
        })));
        assert_eq!(
            generated.limitations,
            [Limitation {
                path: ".".into(),
                what: "`required` names `status`: kube's derive writes apiVersion, kind, metadata and status itself, none of them required".into(),
            }]
        );
    }
}
