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
    let mut w = Writer::new(kind);
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    w.check_root(schema, &props);
    let spec = match props.get("spec") {
        Some(spec) => spec.clone(),
        None => {
            w.limit(
                ".spec",
                "the CRD has no spec, and kube's types always have one: the types get an empty one"
                    .into(),
            );
            Value::Object(Map::new())
        }
    };
    let status = props.get("status").cloned();
    let spec_name = format!("{kind}Spec");
    let status_name = format!("{kind}Status");
    // The spec and status first: they are what a reader looks for.
    let spec_body = w.fields(&spec, ".spec", &spec_name);
    let mut spec_keys = w.keys(&spec, ".spec", Place::Values, &type_keywords());
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
    // The spec, with the CRD's own attributes.
    let kube = kube_attributes(crd, schema, status.is_some(), &mut w);
    spec_keys.extend(w.crd_keys(crd));
    let spec_struct = render_struct(
        &spec_name,
        spec["description"].as_str(),
        &spec_keys,
        &spec_body,
        &format!(
            "#[rkb_runtime::api]\n#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]\n#[kube({})]",
            kube.join(", ")
        ),
    );
    Generated {
        source: module(crd, &w, &spec_struct, status_struct),
        limitations: w.limitations,
        sample_fields: sample_fields(&spec),
    }
}

/// Where the project keeps the CRD: `config/external-crds/<group>_<plural>.yaml`.
pub fn crd_file(crd: &ExternalCrd) -> String {
    format!("config/external-crds/{}_{}.yaml", crd.group, crd.plural)
}
