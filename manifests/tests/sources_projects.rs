//! The reader of `#[rbac]` attributes (`rkb_manifests::sources`) against every golden
//! project, example and tutorial project of this repository: the rules it finds in `src/`
//! are exactly those of the checked-in `config/rbac/role.yaml`. For the examples, whose
//! `manifests()` lists each reconciler with `rbac_rules::<R>()`, that file is the derive
//! macro's output (each project's `manifests_are_up_to_date` test holds it to the derive),
//! and the reconcilers found must be those listed. A generated project's API crate writes
//! role.yaml from the reader itself; there the comparison checks the rest of the list.
//!
//! role.yaml also holds the rules of the certificate and storage-migration functions that
//! `manifests()` lists beside the reconcilers. Rules are compared as permissions: each
//! (namespace, group, resource, name, verb), or (URL, verb). Every permission the reader
//! finds must be in role.yaml, and every permission of role.yaml must be the reader's or
//! one that a function `manifests()` calls grants, of the only shape that function
//! grants (see `Elsewhere`): a rule the reader misses or invents, a verb or a resource
//! it reads wrong, or a reconciler it does not find, fails the test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use rkb_manifests::rbac::{Rule, normalize};
use rkb_manifests::sources;
use serde::Deserialize;
use syn::punctuated::Punctuated;

/// One permission: (namespace, group, resource, name, verb), or for a non-resource URL
/// (None, "", "", Some(url), verb) with `url` set.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Permission {
    namespace: Option<String>,
    group: String,
    resource: String,
    name: Option<String>,
    url: Option<String>,
    verb: String,
}

fn permissions(rules: &[Rule]) -> BTreeSet<Permission> {
    let mut all = BTreeSet::new();
    for rule in normalize(rules) {
        for verb in &rule.verbs {
            for url in &rule.non_resource_urls {
                all.insert(Permission {
                    namespace: None,
                    group: String::new(),
                    resource: String::new(),
                    name: None,
                    url: Some(url.clone()),
                    verb: verb.clone(),
                });
            }
            let names: Vec<Option<String>> = if rule.resource_names.is_empty() {
                vec![None]
            } else {
                rule.resource_names.iter().cloned().map(Some).collect()
            };
            for group in &rule.api_groups {
                for resource in &rule.resources {
                    for name in &names {
                        all.insert(Permission {
                            namespace: rule.namespace.clone(),
                            group: group.clone(),
                            resource: resource.clone(),
                            name: name.clone(),
                            url: None,
                            verb: verb.clone(),
                        });
                    }
                }
            }
        }
    }
    all
}

/// The rules of the ClusterRole and Roles in a role.yaml.
fn role_file_rules(path: &Path) -> Vec<Rule> {
    #[derive(Deserialize)]
    struct Object {
        kind: String,
        metadata: Metadata,
        #[serde(default)]
        rules: Vec<YamlRule>,
    }
    #[derive(Deserialize)]
    struct Metadata {
        namespace: Option<String>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct YamlRule {
        #[serde(default)]
        api_groups: Vec<String>,
        #[serde(default)]
        resources: Vec<String>,
        #[serde(default)]
        resource_names: Vec<String>,
        verbs: Vec<String>,
        #[serde(default, rename = "nonResourceURLs")]
        non_resource_urls: Vec<String>,
    }
    let text = std::fs::read_to_string(path).unwrap();
    let mut rules = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let object = Object::deserialize(document).unwrap();
        if !matches!(object.kind.as_str(), "ClusterRole" | "Role") {
            continue;
        }
        let namespace = object.metadata.namespace;
        rules.extend(object.rules.into_iter().map(|rule| Rule {
            api_groups: rule.api_groups,
            resources: rule.resources,
            resource_names: rule.resource_names,
            verbs: rule.verbs,
            non_resource_urls: rule.non_resource_urls,
            namespace: namespace.clone(),
        }));
    }
    rules
}

/// What the `rbac` list of a project's `manifests()` holds besides the reconcilers' rules.
#[derive(Debug, Default)]
struct Elsewhere {
    /// `metrics_certificate_rules` or `webhook_certificate_rules`: a certificate Secret.
    certificate_secret: bool,
    /// `webhook_certificate_rules`: the webhook configurations and CRDs, by name.
    webhook_objects: bool,
    /// `storage_migration_rules::<K>`: the kinds `K`, by their last path segment.
    migrated_kinds: Vec<String>,
}

impl Elsewhere {
    /// Whether one of the functions listed grants `p`, as rkb_runtime's functions of these
    /// names do (runtime/src/lib.rs); `crds` are the project's (group, plural, kind).
    fn grants(&self, p: &Permission, crds: &[(String, String, String)]) -> bool {
        let (group, resource, verb) = (p.group.as_str(), p.resource.as_str(), p.verb.as_str());
        let secret = p.namespace.is_some()
            && group.is_empty()
            && resource == "secrets"
            && match &p.name {
                Some(_) => matches!(verb, "get" | "list" | "watch" | "update"),
                None => verb == "create",
            };
        let webhook_object = p.namespace.is_none()
            && p.name.is_some()
            && matches!(
                (group, resource),
                (
                    "admissionregistration.k8s.io",
                    "mutatingwebhookconfigurations" | "validatingwebhookconfigurations"
                ) | ("apiextensions.k8s.io", "customresourcedefinitions")
            )
            && matches!(verb, "get" | "patch");
        let migrated = |(crd_group, plural, kind): &(String, String, String)| {
            let crd = format!("{plural}.{crd_group}");
            self.migrated_kinds.contains(kind)
                && p.namespace.is_none()
                && match (group, resource, verb) {
                    ("apiextensions.k8s.io", "customresourcedefinitions", "get")
                    | ("apiextensions.k8s.io", "customresourcedefinitions/status", "patch") => {
                        p.name.as_ref() == Some(&crd)
                    }
                    (_, _, "list" | "patch") => {
                        p.name.is_none() && group == crd_group && resource == plural
                    }
                    _ => false,
                }
        };
        (self.certificate_secret && secret)
            || (self.webhook_objects && webhook_object)
            || crds.iter().any(migrated)
    }
}

/// The `rbac` list of a project's `manifests()`: the reconcilers it names (paths from the
/// crate root; none in an API crate, whose generator reads them from `src/`), what else it
/// lists, and whether the operator is namespaced. `manifests()` is in the API crate
/// (`api/src/lib.rs`) of a generated project, in `src/lib.rs` of the examples.
fn manifests_fn(project: &Path) -> (Vec<String>, Elsewhere, bool) {
    let api = project.join("api/src/lib.rs");
    let lib = if api.is_file() {
        api
    } else {
        project.join("src/lib.rs")
    };
    let text = std::fs::read_to_string(&lib).unwrap();
    let file = syn::parse_file(&text).unwrap();
    let body = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Fn(f) if f.sig.ident == "manifests" => Some(&f.block),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{} has no fn manifests()", lib.display()));
    let namespaced = body
        .to_token_stream()
        .to_string()
        .contains(". namespaced ()");
    let list = body
        .stmts
        .iter()
        .find_map(|stmt| match stmt {
            syn::Stmt::Local(local) if local.pat.to_token_stream().to_string() == "rbac" => {
                match local.init.as_ref().map(|init| &*init.expr) {
                    Some(syn::Expr::Macro(m)) => Some(m.mac.clone()),
                    _ => None,
                }
            }
            _ => None,
        })
        .expect("manifests() has `let rbac = vec![...]`");
    let calls = list
        .parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
        .unwrap();
    let mut reconcilers = Vec::new();
    let mut elsewhere = Elsewhere::default();
    for call in calls {
        let syn::Expr::Call(call) = call else {
            panic!("{}: an rbac entry that is no call", project.display());
        };
        let syn::Expr::Path(function) = &*call.func else {
            panic!("{}: an rbac entry that calls no path", project.display());
        };
        let last = function.path.segments.last().unwrap();
        let turbofish = match &last.arguments {
            syn::PathArguments::AngleBracketed(args) => args
                .args
                .first()
                .map(|arg| arg.to_token_stream().to_string().replace(' ', "")),
            _ => None,
        };
        match last.ident.to_string().as_str() {
            "rbac_rules" => reconcilers.push(turbofish.unwrap()),
            "metrics_certificate_rules" => elsewhere.certificate_secret = true,
            "webhook_certificate_rules" => {
                elsewhere.certificate_secret = true;
                elsewhere.webhook_objects = true;
            }
            "storage_migration_rules" => {
                let kind = turbofish.unwrap();
                let kind = kind.rsplit("::").next().unwrap().to_owned();
                elsewhere.migrated_kinds.push(kind);
            }
            other => panic!(
                "{}: manifests() lists the rules of `{other}`, which this test does not know: \
                 say which permissions it grants in `Elsewhere`",
                project.display()
            ),
        }
    }
    (reconcilers, elsewhere, namespaced)
}

/// (group, plural, kind) of every CRD in config/crd/bases.
fn crds(project: &Path) -> Vec<(String, String, String)> {
    #[derive(Deserialize)]
    struct Crd {
        spec: Spec,
    }
    #[derive(Deserialize)]
    struct Spec {
        group: String,
        names: Names,
    }
    #[derive(Deserialize)]
    struct Names {
        plural: String,
        kind: String,
    }
    let Ok(entries) = std::fs::read_dir(project.join("config/crd/bases")) else {
        return Vec::new();
    };
    entries
        .map(|entry| {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let crd: Crd = serde_yaml_ng::from_str(&text).unwrap();
            (crd.spec.group, crd.spec.names.plural, crd.spec.names.kind)
        })
        .collect()
}

/// The golden projects, the examples and the tutorials' projects.
fn projects() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut projects = Vec::new();
    for (dir, prefix) in [
        ("testdata", "project-"),
        ("examples", ""),
        ("docs/tutorials", ""),
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with(prefix) && path.join("src/lib.rs").is_file() {
                projects.push(path);
            }
        }
    }
    projects.sort();
    projects
}

#[test]
fn the_rules_read_from_every_projects_sources_are_those_its_derive_wrote() {
    let projects = projects();
    assert!(projects.len() >= 12, "{projects:?}");
    for project in projects {
        let name = project.display();
        let found = sources::read(&project.join("src")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (listed, elsewhere, namespaced) = manifests_fn(&project);

        // A generated project's generator reads the reconcilers; an example lists them.
        if !project.join("api/src/lib.rs").is_file() {
            let mut paths: Vec<&str> = found.reconcilers.iter().map(|r| r.path.as_str()).collect();
            let mut listed: Vec<&str> = listed.iter().map(String::as_str).collect();
            paths.sort();
            listed.sort();
            assert_eq!(
                paths, listed,
                "{name}: the reconcilers found, and manifests()'s"
            );
        } else {
            assert!(
                listed.is_empty(),
                "{name}: the API crate's manifests() lists reconcilers its sources reader adds again: {listed:?}"
            );
        }

        let mut rules = found.rules();
        if namespaced {
            // As `Manifests::namespaced` does.
            for rule in rules.iter_mut().filter(|rule| rule.namespace.is_none()) {
                rule.namespace = Some("system".to_owned());
            }
        }
        let mut rendered = role_file_rules(&project.join("config/rbac/role.yaml"));
        let elsewhere_file = project.join("config/namespaced-rbac/role.yaml");
        if elsewhere_file.is_file() {
            rendered.extend(role_file_rules(&elsewhere_file));
        }
        let read = permissions(&rules);
        let rendered = permissions(&rendered);
        let invented: Vec<_> = read.difference(&rendered).collect();
        assert!(
            invented.is_empty(),
            "{name}: not in role.yaml: {invented:#?}"
        );
        let crds = crds(&project);
        let missed: Vec<_> = rendered
            .difference(&read)
            .filter(|p| !elsewhere.grants(p, &crds))
            .collect();
        assert!(
            missed.is_empty(),
            "{name}: in role.yaml, not read: {missed:#?}"
        );
    }
}

#[test]
fn the_comparison_sees_a_missed_verb_and_an_invented_rule() {
    let rule = |verbs: &[&str]| Rule {
        api_groups: vec!["apps".into()],
        resources: vec!["deployments".into()],
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..Rule::default()
    };
    let rendered = permissions(&[rule(&["list", "watch"])]);
    let read = permissions(&[rule(&["list"])]);
    let missed: Vec<_> = rendered.difference(&read).collect();
    assert_eq!(missed.len(), 1);
    assert!(!Elsewhere::default().grants(missed[0], &[]));
    let read = permissions(&[rule(&["list", "watch", "delete"])]);
    assert_eq!(read.difference(&rendered).count(), 1);
}
