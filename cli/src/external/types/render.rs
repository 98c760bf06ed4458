//! The text of the generated module: header, imports, the schema functions, the test and
//! the root type's `#[kube]` attributes (one struct's text is `item.rs`'s).

use serde_json::Value;

use super::writer::Writer;
use super::{ExternalCrd, crd_file};

/// The whole module: header, imports, the spec, the status, the other structs, the
/// schema functions they need and the test that compares the derived schema with the CRD.
pub(super) fn module(
    crd: &ExternalCrd,
    w: &Writer,
    spec_struct: &str,
    status_struct: Option<String>,
) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "//! The {} API ({}/{}), written by `rkb create api --external-crd` from the CRD in\n\
         //! config/external-crds/: another project defines this kind and owns its CRD, which\n\
         //! this project does not install. Run the command again (with --force) when the CRD\n\
         //! changes; the test below fails while these types derive another schema.\n\n",
        crd.kind, crd.group, crd.version
    ));
    if w.map {
        out.push_str("use std::collections::BTreeMap;\n\n");
    }
    if w.int_or_string {
        out.push_str("use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\n");
    }
    out.push_str("use kube::CustomResource;\n");
    // The schema functions name schemars' types by path: a kind may be called `Schema`.
    out.push_str("use schemars::JsonSchema;\n");
    out.push_str("use serde::{Deserialize, Serialize};\n\n");
    out.push_str(spec_struct);
    if let Some(status) = status_struct {
        out.push('\n');
        out.push_str(&status);
    }
    for s in &w.structs {
        out.push('\n');
        out.push_str(s);
    }
    out.push_str(&schema_functions(w));
    out.push_str(&test(crd, w));
    out
}

/// The `schema_with` functions the fields name.
fn schema_functions(w: &Writer) -> String {
    let mut out = String::new();
    if w.integer {
        out.push_str(
            "\n/// An integer without a format, as the CRD has it (Rust's integers have one).\n\
             fn integer(_: &mut schemars::SchemaGenerator) -> schemars::Schema {\n    schemars::json_schema!({ \"type\": \"integer\" })\n}\n",
        );
    }
    if w.bare_int_or_string {
        out.push_str(
            "\n/// An int-or-string without a description, as the CRD has it (IntOrString's schema has one).\n\
             fn int_or_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {\n    schemars::json_schema!({ \"x-kubernetes-int-or-string\": true })\n}\n",
        );
    }
    if w.number {
        out.push_str(
            "\n/// A number without a format, as the CRD has it (Rust's floats have one).\n\
             fn number(_: &mut schemars::SchemaGenerator) -> schemars::Schema {\n    schemars::json_schema!({ \"type\": \"number\" })\n}\n",
        );
    }
    out
}

/// The module's test: the derived schema is the CRD's, but for what was left out.
fn test(crd: &ExternalCrd, w: &Writer) -> String {
    let allowed: Vec<String> = w
        .limitations
        .iter()
        .map(|l| format!("        ({:?}, {:?}),\n", l.path, l.what))
        .collect();
    let crd_file = crd_file(crd);
    let kind = &crd.type_name;
    format!(
        "\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n    \
         /// The schema rkb derives from these types is the external CRD's; the differences\n    \
         /// listed are what `#[rkb(...)]` cannot express, which the command reported.\n    \
         #[test]\n    fn types_derive_the_external_crd() {{\n        \
         let derived = rkb_runtime::crd::<{kind}>().unwrap_or_else(|error| panic!(\"{{error}}\"));\n        \
         let external = include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../{crd_file}\"));\n        \
         let left_out: &[(&str, &str)] = &[\n{}        ];\n        \
         rkb_runtime::testing::external::assert_same_schema(&derived, external, {:?}, left_out);\n    }}\n}}\n",
        allowed.concat(),
        crd.version
    )
}

/// The entries of the spec's `#[kube(...)]`; a root description rustdoc would run as a
/// doctest is a limitation instead.
pub(super) fn kube_attributes(
    crd: &ExternalCrd,
    schema: &Value,
    status: bool,
    flat: bool,
    w: &mut Writer,
) -> Vec<String> {
    let mut kube = vec![
        format!("group = {:?}", crd.group),
        format!("version = {:?}", crd.version),
        format!("kind = {:?}", crd.kind),
        format!("plural = {:?}", crd.plural),
    ];
    // A kind that is no Rust type name keeps its spelling on the wire; the type is named apart.
    if crd.type_name != crd.kind {
        kube.push(format!("root = {:?}", crd.type_name));
    }
    if let Some(singular) = crd.names["singular"].as_str()
        && singular != crd.kind.to_lowercase()
    {
        kube.push(format!("singular = {singular:?}"));
    }
    if crd.namespaced {
        kube.push("namespaced".into());
    }
    if flat {
        kube.push("no_spec".into());
    }
    if status {
        kube.push(format!("status = {:?}", format!("{}Status", crd.type_name)));
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
    kube
}
