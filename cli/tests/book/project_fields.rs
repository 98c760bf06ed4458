//! reference/project.md, from the structs of cli/src/project.rs: each field PROJECT holds,
//! with its serde name, its type and its doc comment. The keys are checked against a
//! maximal PROJECT serialised by the real structs, and kubebuilder's equivalent of each
//! comes from [`KUBEBUILDER`], which must name exactly those keys.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToLowerCamelCase;
use rkb::project::{
    Api, DeployImagePlugin, DeployImageResource, NamedController, Plugins, Project, Resource,
    WebhookCerts, Webhooks,
};
use serde_yaml_ng::Value;
use syn::{Fields, GenericArgument, Item, ItemStruct, PathArguments, Type};

use super::markdown::{cell, code, table};

/// kubebuilder's field for each key (its v4 PROJECT file), by the key's path.
const KUBEBUILDER: &[(&str, &str)] = &[
    ("cliVersion", "`cliVersion`"),
    ("domain", "`domain`"),
    ("layout", "`layout` (`go.kubebuilder.io/v4`)"),
    ("multigroup", "`multigroup`"),
    ("namespaced", "`namespaced`"),
    ("plugins", "`plugins`"),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\"",
        "`plugins.\"deploy-image.go.kubebuilder.io/v1-alpha\"`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources",
        "`resources`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].containerCommand",
        "`options.containerCommand`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].containerPort",
        "`options.containerPort`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].domain",
        "`domain`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].group",
        "`group`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].image",
        "`options.image`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].kind",
        "`kind`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].runAsUser",
        "`options.runAsUser`",
    ),
    (
        "plugins.\"deploy-image.rkb.io/v1-alpha\".resources[].version",
        "`version`",
    ),
    (
        "plugins.\"autoupdate.rkb.io/v1-alpha\"",
        "`plugins.\"autoupdate.kubebuilder.io/v1-alpha\"`",
    ),
    (
        "plugins.\"grafana.rkb.io/v1-alpha\"",
        "`plugins.\"grafana.kubebuilder.io/v1-alpha\"`",
    ),
    (
        "plugins.\"helm.rkb.io/v1-alpha\"",
        "`plugins.\"helm.kubebuilder.io/v2-alpha\"` (which records `manifests` and `output`)",
    ),
    ("projectName", "`projectName`"),
    ("resources", "`resources`"),
    ("resources[].api", "`api`"),
    ("resources[].api.crdVersion", "`crdVersion`"),
    ("resources[].api.namespaced", "`namespaced`"),
    ("resources[].controller", "`controller`"),
    ("resources[].controllers", "`controllers`"),
    ("resources[].controllers[].name", "`name`"),
    ("resources[].core", "`core`"),
    ("resources[].domain", "`domain`"),
    ("resources[].external", "`external`"),
    ("resources[].group", "`group`"),
    ("resources[].kind", "`kind`"),
    (
        "resources[].namespaced",
        "none: kubebuilder records no scope for an external kind",
    ),
    ("resources[].path", "`path`, the Go import path"),
    (
        "resources[].plural",
        "`plural` (written only when irregular)",
    ),
    ("resources[].version", "`version`"),
    ("resources[].webhooks", "`webhooks`"),
    ("resources[].webhooks.conversion", "`conversion`"),
    ("resources[].webhooks.defaulting", "`defaulting`"),
    ("resources[].webhooks.spoke", "`spoke`"),
    ("resources[].webhooks.validation", "`validation`"),
    ("resources[].webhooks.defaultingPath", "`defaultingPath`"),
    ("resources[].webhooks.validationPath", "`validationPath`"),
    ("resources[].webhooks.webhookVersion", "`webhookVersion`"),
    ("version", "`version`"),
    (
        "webhookCerts",
        "none: kubebuilder's webhooks take their certificates from cert-manager",
    ),
];

/// One key of PROJECT, as the structs define it.
struct Row {
    path: String,
    kind: &'static str,
    doc: String,
}

#[test]
fn project_reference_page() {
    let source = std::fs::read_to_string(crate::repo().join("cli/src/project.rs")).unwrap();
    let file = syn::parse_file(&source).unwrap();
    let structs: BTreeMap<String, &ItemStruct> = file
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Struct(s) => Some((s.ident.to_string(), s)),
            _ => None,
        })
        .collect();
    let enums: BTreeSet<String> = file
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Enum(e) => Some(e.ident.to_string()),
            _ => None,
        })
        .collect();
    let mut rows = Vec::new();
    walk(&structs, &enums, "Project", "", &mut rows);

    let keys: BTreeSet<String> = rows.iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        keys,
        serialised_keys(),
        "the keys read from cli/src/project.rs differ from those of a PROJECT the structs write"
    );
    let known: BTreeSet<String> = KUBEBUILDER.iter().map(|(k, _)| k.to_string()).collect();
    let missing: Vec<_> = keys.difference(&known).collect();
    let stale: Vec<_> = known.difference(&keys).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "KUBEBUILDER in cli/tests/book/project_fields.rs has no row for {missing:?} and rows for \
         keys PROJECT no longer has: {stale:?}"
    );

    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let kubebuilder = KUBEBUILDER.iter().find(|(k, _)| *k == row.path).unwrap().1;
            vec![
                code(&row.path),
                row.kind.to_owned(),
                cell(&row.doc),
                cell(kubebuilder),
            ]
        })
        .collect();
    let mut page = crate::generated_from(
        "the structs of cli/src/project.rs (serde names, types, doc comments)",
        "project_fields.rs",
    );
    page.push_str(
        "# PROJECT fields\n\n\
         `PROJECT`, at the root of a project, records what rkb scaffolded, so that later \
         commands edit the project predictably and `rkb alpha generate` can scaffold it again. \
         Its format is kubebuilder's (`version: \"3\"`), and its keys sort alphabetically as \
         kubebuilder writes them. rkb writes it; edit it only to undo something by hand. Keys \
         rkb does not know (another tool's) survive its rewrites.\n\n\
         A path like `resources[].api.namespaced` is the key `namespaced` of the `api` of each \
         item of `resources`.\n\n",
    );
    page.push_str(&table(
        &["Key", "Type", "Meaning", "kubebuilder"],
        &table_rows,
    ));
    page.push_str(
        "\nkubebuilder keys rkb does not write: `repo` (the Go module), `resources[].module`, \
         `resources[].api.ssa`, and `webhooks.defaultingPath` / `validationPath`.\n",
    );
    crate::generated_page("reference/project.md", &page);
}

/// The rows of struct `name`'s fields under `prefix`, recursing into the structs they hold.
fn walk(
    structs: &BTreeMap<String, &ItemStruct>,
    enums: &BTreeSet<String>,
    name: &str,
    prefix: &str,
    rows: &mut Vec<Row>,
) {
    let item = structs[name];
    let camel = serde_args(&item.attrs).contains(&("rename_all".into(), "camelCase".into()));
    let Fields::Named(fields) = &item.fields else {
        panic!("{name} has no named fields")
    };
    for field in &fields.named {
        let serde = serde_args(&field.attrs);
        if serde.iter().any(|(k, _)| k == "flatten") {
            continue; // other tools' keys
        }
        let ident = field.ident.as_ref().unwrap().to_string();
        let key = match serde.iter().find(|(k, _)| k == "rename") {
            Some((_, renamed)) => renamed.clone(),
            None if camel => ident.to_lower_camel_case(),
            None => ident.clone(),
        };
        let key = quoted(&key);
        let path = format!("{prefix}{key}");
        let doc = doc_comment(&field.attrs);
        assert!(
            !doc.is_empty(),
            "{name}::{ident} (PROJECT's {path}) has no doc comment"
        );
        let (kind, inner) = match kind_of(&field.ty) {
            // An enum of the file (e.g. `webhookCerts`) is written as one of its names.
            ("map", Some(inner)) if enums.contains(&inner) => ("string", None),
            other => other,
        };
        rows.push(Row {
            path: path.clone(),
            kind,
            doc,
        });
        if let Some(inner) = inner.filter(|i| structs.contains_key(i)) {
            let nested = if kind.starts_with("list") { "[]." } else { "." };
            walk(structs, enums, &inner, &format!("{path}{nested}"), rows);
        }
    }
}

/// The YAML type of a field, and the struct it holds (in an `Option` or a `Vec`), if any.
fn kind_of(ty: &Type) -> (&'static str, Option<String>) {
    let Type::Path(path) = ty else {
        panic!("unexpected type {ty:?}")
    };
    let last = path.path.segments.last().unwrap();
    let argument = match &last.arguments {
        PathArguments::AngleBracketed(a) => a.args.iter().find_map(|a| match a {
            GenericArgument::Type(Type::Path(p)) => Some(p.path.segments.last()?.ident.to_string()),
            _ => None,
        }),
        _ => None,
    };
    match (last.ident.to_string().as_str(), argument.as_deref()) {
        ("String", _) => ("string", None),
        ("bool", _) => ("boolean", None),
        ("Vec", Some("String")) => ("list of strings", None),
        ("Vec", inner) => ("list of maps", inner.map(str::to_owned)),
        ("Option", Some("String")) => ("string", None),
        ("Option", inner) => ("map", inner.map(str::to_owned)),
        ("BTreeMap", _) => ("map", None),
        (other, _) => ("map", Some(other.to_owned())),
    }
}

/// A `#[serde(...)]` attribute's arguments, as (name, value or "").
fn serde_args(attrs: &[syn::Attribute]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let name = meta.path.get_ident().unwrap().to_string();
            let value = match meta.value() {
                Ok(value) => match value.parse::<syn::Expr>()? {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => s.value(),
                    _ => String::new(),
                },
                Err(_) => String::new(),
            };
            out.push((name, value));
            Ok(())
        })
        .unwrap();
    }
    out
}

/// The first paragraph of the `///` comment (the rest is for rkb's developers), on one
/// line, with rustdoc's link brackets taken off.
fn doc_comment(attrs: &[syn::Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .take_while(|line| !line.is_empty())
        .collect();
    lines.join(" ").replace("[`", "`").replace("`]", "`")
}

/// The key paths of a PROJECT in which every key is set, as the real structs write it. A
/// field added to a struct breaks this literal, so it is added here too.
fn serialised_keys() -> BTreeSet<String> {
    let webhooks = Webhooks {
        conversion: true,
        defaulting: true,
        spoke: vec!["v1alpha1".into()],
        validation: true,
        defaulting_path: Some("/my-mutate-path".into()),
        validation_path: Some("/my-validate-path".into()),
        webhook_version: "v1".into(),
    };
    let resource = Resource {
        api: Some(Api {
            crd_version: "v1".into(),
            namespaced: true,
        }),
        controller: true,
        controllers: Vec::new(),
        core: true,
        domain: "example.com".into(),
        external: true,
        group: "cache".into(),
        kind: "Memcached".into(),
        namespaced: true,
        path: "demo::api::cache::v1::Memcached".into(),
        plural: "memcacheds".into(),
        version: "v1".into(),
        webhooks: Some(webhooks),
    };
    // On disk, named controllers replace `controller: true`: one resource of each.
    let named = Resource {
        controller: false,
        controllers: vec![NamedController {
            name: "backup".into(),
        }],
        ..resource.clone()
    };
    let image = DeployImageResource {
        container_command: Some("memcached".into()),
        container_port: Some("11211".into()),
        domain: "example.com".into(),
        group: "cache".into(),
        image: "memcached:1.6".into(),
        kind: "Memcached".into(),
        run_as_user: Some("1001".into()),
        version: "v1".into(),
    };
    let project = Project {
        multigroup: true,
        namespaced: true,
        plugins: Plugins {
            deploy_image: Some(DeployImagePlugin {
                resources: vec![image],
            }),
            grafana: Some(BTreeMap::new()),
            helm: Some(BTreeMap::new()),
            autoupdate: Some(BTreeMap::new()),
            other: BTreeMap::new(),
        },
        resources: vec![resource, named],
        webhook_certs: Some(WebhookCerts::SelfManaged),
        ..Project::new("example.com", "demo")
    };
    let value: Value = serde_yaml_ng::from_str(&project.to_yaml()).unwrap();
    let mut keys = BTreeSet::new();
    fn collect(value: &Value, prefix: &str, keys: &mut BTreeSet<String>) {
        let Value::Mapping(map) = value else { return };
        for (key, value) in map {
            let path = format!("{prefix}{}", quoted(key.as_str().unwrap()));
            keys.insert(path.clone());
            match value {
                Value::Sequence(items) => {
                    for item in items {
                        collect(item, &format!("{path}[]."), keys);
                    }
                }
                _ => collect(value, &format!("{path}."), keys),
            }
        }
    }
    collect(&value, "", &mut keys);
    keys
}

/// A key as a path shows it: quoted where it has dots or slashes (a plugin's key).
fn quoted(key: &str) -> String {
    if key.contains(['.', '/']) {
        format!("\"{key}\"")
    } else {
        key.to_owned()
    }
}
