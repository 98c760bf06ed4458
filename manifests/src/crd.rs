//! [`crd`]: a kube-derived type's CRD, checked to be one the API server accepts.
//!
//! kube's `CustomResourceExt::crd()` panics when its schema rewriter meets a
//! type it cannot make structural (internally tagged enums, enums mixing unit
//! and data variants, ...), and returns schemas the API server rejects for
//! others (recursive types, tuples, `serde_json::Value`). [`crd`] turns both
//! into a [`CrdError`] that names the Rust type, the field and a fix, and
//! repairs what has one obvious repair (see [`schema::fix`]).

use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::panic::{self, UnwindSafe};
use std::sync::{Once, OnceLock};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_core::CustomResourceExt;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use crate::schema::{self, Problem};

/// Why a Rust type does not give a valid CRD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrdError {
    /// The Rust type, e.g. `my_operator::api::cache::v1alpha1::Memcached`.
    pub rust_type: String,
    /// Every problem found, each with its field path.
    pub problems: Vec<Problem>,
}

impl fmt::Display for CrdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the CRD of `{}` is invalid:", self.rust_type)?;
        for problem in &self.problems {
            let text = problem.to_string().replace('\n', "\n  ");
            write!(f, "\n  {text}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CrdError {}

/// A CRD and the Rust type it was generated from, so that [`crate::Manifests`] can
/// name the types behind a clash (two kinds claiming one CRD name, say).
///
/// It dereferences to the [`CustomResourceDefinition`], so code that reads
/// `crd::<K>()?.spec` works as it did when `crd` returned the definition itself.
///
/// A derived CRD is kept as the JSON its schema was repaired and checked in:
/// [`crate::Manifests`] merges its versions and fits it to its size budget in that
/// same value, and makes the typed definition once, at the end. The typed view is
/// made from the JSON only when asked for (dereferencing it).
#[derive(Clone, Debug)]
pub struct Crd {
    /// The Rust type, e.g. `my_operator::api::cache::v1alpha1::Memcached`;
    /// `None` for a hand-made CRD.
    pub rust_type: Option<String>,
    form: Form,
}

/// What a [`Crd`] holds: JSON from [`crd`], or a typed definition (hand-made, or
/// changed through `DerefMut`).
#[derive(Clone, Debug)]
enum Form {
    /// The JSON of a typed definition, with its typed view once made.
    Json(Value, OnceLock<Box<CustomResourceDefinition>>),
    Typed(Box<CustomResourceDefinition>),
}

impl Crd {
    /// Where the CRD came from, for messages: `` `path::Type` `` or "a hand-made CRD".
    pub fn source(&self) -> String {
        match &self.rust_type {
            Some(rust_type) => format!("`{rust_type}`"),
            None => "a hand-made CRD".to_owned(),
        }
    }

    /// The definition, without its origin.
    pub fn into_definition(self) -> CustomResourceDefinition {
        match self.form {
            Form::Json(value, typed) => typed
                .into_inner()
                .map_or_else(|| typed_view(value), |typed| *typed),
            Form::Typed(definition) => *definition,
        }
    }

    /// The definition as JSON, what [`crate::Manifests`] works on.
    pub(crate) fn into_json(self) -> Result<Value, serde_json::Error> {
        match self.form {
            Form::Json(value, _) => Ok(value),
            Form::Typed(definition) => serde_json::to_value(definition),
        }
    }
}

/// The typed view of JSON that [`crd`] made from a typed definition: its repairs
/// write only keywords of the typed schema (`x-kubernetes-preserve-unknown-fields`,
/// an `additionalProperties` schema, known formats), so it always reads back.
fn typed_view(value: Value) -> CustomResourceDefinition {
    serde_json::from_value(value).expect("a repaired CRD reads back as the typed CRD it came from")
}

impl std::ops::Deref for Crd {
    type Target = CustomResourceDefinition;

    fn deref(&self) -> &CustomResourceDefinition {
        match &self.form {
            Form::Json(value, typed) => typed.get_or_init(|| Box::new(typed_view(value.clone()))),
            Form::Typed(definition) => definition,
        }
    }
}

impl std::ops::DerefMut for Crd {
    fn deref_mut(&mut self) -> &mut CustomResourceDefinition {
        if let Form::Json(value, typed) = &mut self.form {
            let definition = typed
                .take()
                .unwrap_or_else(|| Box::new(typed_view(std::mem::take(value))));
            self.form = Form::Typed(definition);
        }
        match &mut self.form {
            Form::Typed(definition) => definition,
            Form::Json(..) => unreachable!("made typed above"),
        }
    }
}

/// Two CRDs are equal when their origin and definition are.
impl PartialEq for Crd {
    fn eq(&self, other: &Self) -> bool {
        self.rust_type == other.rust_type && **self == **other
    }
}

/// A hand-made CRD, e.g. `Ok(definition.into())` beside `crd::<K>()`.
impl From<CustomResourceDefinition> for Crd {
    fn from(definition: CustomResourceDefinition) -> Self {
        Crd {
            rust_type: None,
            form: Form::Typed(Box::new(definition)),
        }
    }
}

/// The name of `K`'s CRD, `<plural>.<group>` (any version of the kind gives the same),
/// without the manager (whose `migrate::crd_name` is the same).
pub fn name<K: kube_core::Resource<DynamicType = ()>>() -> String {
    format!("{}.{}", K::plural(&()), K::group(&()))
}

/// The CRD of a kube-derived custom resource, made structural where that has
/// one obvious fix and checked against the API server's schema rules.
///
/// Never panics (unless the binary is built with `panic = "abort"`): kube's
/// panics become a [`CrdError`] naming the enum or field at fault. The
/// description kube invents for the root ("Auto-generated derived type for
/// ...") and the root title (the Rust type name) are removed.
pub fn crd<K>() -> Result<Crd, CrdError>
where
    K: CustomResourceExt + JsonSchema,
{
    let rust_type = std::any::type_name::<K>().to_owned();
    // Attribute mistakes are recorded while the schema is generated.
    crate::schema_macro::take_errors();
    let crd = quietly(K::crd);
    let mut problems = crate::schema_macro::take_errors();
    let crd = match crd {
        Ok(crd) => crd,
        Err(panic) => {
            problems.extend(diagnose::<K>(&panic));
            crate::schema_macro::take_errors();
            return Err(CrdError {
                rust_type,
                problems,
            });
        }
    };
    let found = schema::locate(&unresolved_schema::<K>());
    // That second generation recorded the attribute mistakes again.
    crate::schema_macro::take_errors();
    match tidy(crd, &found) {
        Ok(value) if problems.is_empty() => Ok(Crd {
            rust_type: Some(rust_type),
            form: Form::Json(value, OnceLock::new()),
        }),
        Ok(_) => Err(CrdError {
            rust_type,
            problems,
        }),
        Err(more) => {
            problems.extend(more);
            Err(CrdError {
                rust_type,
                problems,
            })
        }
    }
}

/// Fixes and checks the schema of every version of a CRD, in its JSON: the form
/// [`crate::Manifests`] goes on working in. `found` says where k8s-openapi types sit
/// (see [`schema::k8s`]) and which fields asked to be nullable.
fn tidy(crd: CustomResourceDefinition, found: &schema::Found) -> Result<Value, Vec<Problem>> {
    let mut value = serde_json::to_value(&crd).map_err(|e| vec![serialization(e)])?;
    let many = crd.spec.versions.len() > 1;
    let mut problems: Vec<Problem> = unapproved_protected_group(&crd).into_iter().collect();
    if let Some(Value::Array(versions)) = value.pointer_mut("/spec/versions") {
        for version in versions {
            let name = version["name"].as_str().unwrap_or_default().to_owned();
            let Some(root) = version.pointer_mut("/schema/openAPIV3Schema") else {
                continue;
            };
            strip_generated_annotations(root);
            schema::k8s::apply(root, &found.k8s);
            schema::mark(root, found);
            schema::fix(root);
            for mut problem in schema::check(root) {
                if many {
                    problem.path = format!("{} (version {name})", problem.path);
                }
                problems.push(problem);
            }
        }
    }
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(problems)
    }
}

/// The annotation the API server requires of CRDs in the groups Kubernetes reserves.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// `k8s.io`, `kubernetes.io` and their subdomains belong to Kubernetes: the API server
/// refuses a CRD there unless it carries [`API_APPROVED_ANNOTATION`] (a link to the
/// approved API review, or a value starting with `unapproved`).
fn unapproved_protected_group(crd: &CustomResourceDefinition) -> Option<Problem> {
    let group = crd.spec.group.as_str();
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|domain| group == *domain || group.ends_with(&format!(".{domain}")));
    let annotated = crd
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(API_APPROVED_ANNOTATION));
    (protected && !annotated).then(|| Problem {
        path: ".".into(),
        message: format!(
            "the API group {group} is one Kubernetes reserves (*.k8s.io, *.kubernetes.io): the API server \
             refuses its CRD without the annotation {API_APPROVED_ANNOTATION}"
        ),
        hint: Some(format!(
            "use a group of your own domain, or, as upstream's sample-controller does, add \
             #[kube(annotation(\"{API_APPROVED_ANNOTATION}\", \"unapproved, experimental-only\"))]"
        )),
    })
}

fn serialization(err: serde_json::Error) -> Problem {
    Problem {
        path: ".".into(),
        message: format!("the CRD does not serialize to JSON: {err}"),
        hint: None,
    }
}

/// kube documents the root with the spec type's name; neither says more
/// than the kind already does.
fn strip_generated_annotations(root: &mut Value) {
    let Some(obj) = root.as_object_mut() else {
        return;
    };
    if obj
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| {
            d.trim_start()
                .starts_with("Auto-generated derived type for ")
        })
    {
        obj.remove("description");
    }
    obj.remove("title");
}

// ---------------------------------------------------------------------------
// Panics
// ---------------------------------------------------------------------------

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, returning its panic message instead of unwinding, without the
/// panic hook printing it. The hook is wrapped once and stays silent only on
/// the calling thread while `f` runs, so other threads' panics still print.
fn quietly<T>(f: impl FnOnce() -> T + UnwindSafe) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let result = panic::catch_unwind(f);
    QUIET.with(|q| q.set(false));
    result.map_err(panic_message)
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// The schema schemars produces before kube's rewrite, with subschemas kept as
/// named definitions: where a Rust or k8s-openapi type sits has its name.
fn unresolved_schema<K: JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::openapi3()
        .with(|s| s.meta_schema = None)
        .with_transform(schemars::transform::AddNullable::default())
        .into_generator()
        .into_root_schema_for::<K>()
        .to_value()
}

/// Finds what made kube's schema rewriter panic, by walking the schema
/// schemars produces before the rewrite, so that errors can name the Rust type.
fn diagnose<K: JsonSchema>(panic: &str) -> Vec<Problem> {
    let root = unresolved_schema::<K>();
    let mut out = Vec::new();
    let mut stack = Vec::new();
    diagnose_node(&root, &root, "", &mut stack, &mut out);
    if out.is_empty() {
        let first_line = panic.lines().next().unwrap_or(panic);
        out.push(Problem {
            path: ".".into(),
            message: format!("kube could not make the schema structural: {first_line}"),
            hint: Some(
                "look for enums whose variants disagree on a field's type; \
                 only externally tagged enums and #[serde(untagged)] enums with disjoint \
                 fields have structural schemas"
                    .into(),
            ),
        });
    }
    out
}

fn resolve<'a>(root: &'a Value, node: &'a Value) -> (&'a Value, Option<String>) {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap_or(reference).to_owned();
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| root.pointer(pointer))
                .unwrap_or(node);
            (target, Some(name))
        }
        None => (node, None),
    }
}

fn diagnose_node(
    root: &Value,
    node: &Value,
    path: &str,
    stack: &mut Vec<String>,
    out: &mut Vec<Problem>,
) {
    let (node, name) = resolve(root, node);
    if let Some(name) = &name {
        if stack.contains(name) {
            return; // recursion: reported by the structural check when kube gets that far
        }
        stack.push(name.clone());
    }
    let type_name = name.clone().or_else(|| stack.last().cloned());
    if let Some(obj) = node.as_object() {
        for key in ["oneOf", "anyOf"] {
            if let Some(variants) = obj.get(key).and_then(Value::as_array) {
                let variants: Vec<&Value> = variants.iter().map(|v| resolve(root, v).0).collect();
                if let Some(problem) = variant_conflict(&variants, path, type_name.as_deref()) {
                    out.push(problem);
                }
                for variant in &variants {
                    diagnose_children(root, variant, path, stack, out);
                }
            }
        }
        diagnose_children(root, node, path, stack, out);
    }
    if name.is_some() {
        stack.pop();
    }
}

fn diagnose_children(
    root: &Value,
    node: &Value,
    path: &str,
    stack: &mut Vec<String>,
    out: &mut Vec<Problem>,
) {
    let Some(obj) = node.as_object() else {
        return;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            diagnose_node(root, prop, &format!("{path}.{name}"), stack, out);
        }
    }
    if let Some(items) = obj.get("items") {
        diagnose_node(root, items, &format!("{path}[*]"), stack, out);
    }
    if let Some(values @ Value::Object(_)) = obj.get("additionalProperties") {
        diagnose_node(root, values, &format!("{path}.*"), stack, out);
    }
}

/// The two shapes kube's rewriter panics on: variants of different JSON types
/// (unit and data variants mixed), and variants that give one property
/// different schemas (internally or adjacently tagged enums, untagged enums
/// with overlapping fields).
fn variant_conflict(variants: &[&Value], path: &str, type_name: Option<&str>) -> Option<Problem> {
    let what = type_name.map_or_else(|| "this enum".to_owned(), |n| format!("enum `{n}`"));
    let at = schema::display_path(path);
    let types: Vec<&str> = variants
        .iter()
        .filter_map(|v| v.get("type").and_then(Value::as_str))
        .collect();
    if types.iter().any(|t| *t != types[0]) {
        let units: Vec<String> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) == Some("string"))
            .filter_map(|v| v.get("enum").and_then(Value::as_array))
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        return Some(Problem {
            path: at,
            message: format!(
                "{what} mixes unit variants ({}) with variants that carry data: a \
                 structural schema gives a field exactly one type",
                units.join(", ")
            ),
            hint: Some(
                "give the unit variants an empty body (`Variant {}`) so that every variant \
                 is an object, or move them into an enum of their own"
                    .into(),
            ),
        });
    }
    let mut seen: Map<String, Value> = Map::new();
    for variant in variants {
        let Some(props) = variant.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (prop, schema) in props {
            match seen.get(prop) {
                Some(first) if !same_ignoring_docs(first, schema) => {
                    let tag = is_constant(first) && is_constant(schema);
                    return Some(if tag {
                        Problem {
                            path: at,
                            message: format!(
                                "{what} is internally tagged (#[serde(tag = \"{prop}\")]): \
                                 each variant gives `{prop}` a different constant, which \
                                 kube cannot express as one structural schema"
                            ),
                            hint: Some(
                                "use an externally tagged enum (remove #[serde(tag)]; each \
                                 variant becomes an optional field named after it), or \
                                 #[serde(untagged)] with variants whose fields do not overlap"
                                    .into(),
                            ),
                        }
                    } else {
                        Problem {
                            path: at,
                            message: format!(
                                "variants of {what} declare field `{prop}` with different \
                                 schemas; a structural schema has one schema per field"
                            ),
                            hint: Some(
                                "give the fields distinct names, or the same type in every variant"
                                    .into(),
                            ),
                        }
                    });
                }
                Some(_) => {}
                None => {
                    seen.insert(prop.clone(), schema.clone());
                }
            }
        }
    }
    None
}

fn is_constant(schema: &Value) -> bool {
    schema.get("const").is_some()
        || schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.len() == 1)
}

fn same_ignoring_docs(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(obj) = v.as_object_mut() {
            obj.remove("description");
            obj.remove("title");
        }
        v
    };
    strip(a) == strip(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quietly_returns_the_panic_message() {
        assert_eq!(quietly(|| 1), Ok(1));
        assert_eq!(
            quietly(|| -> u8 { panic!("boom {}", 1) }),
            Err("boom 1".to_owned())
        );
        assert_eq!(
            quietly(|| -> u8 { panic!("static") }),
            Err("static".to_owned())
        );
    }

    #[test]
    fn a_crd_kept_as_json_reads_and_changes_as_a_typed_one() {
        let mut typed = CustomResourceDefinition::default();
        typed.metadata.name = Some("foos.example.com".into());
        typed.spec.group = "example.com".into();
        let value = serde_json::to_value(&typed).unwrap();
        let mut crd = Crd {
            rust_type: Some("a::Foo".into()),
            form: Form::Json(value.clone(), OnceLock::new()),
        };
        assert_eq!(crd.spec.group, "example.com");
        assert_eq!(crd.clone().into_json().unwrap(), value);
        let same = Crd {
            rust_type: Some("a::Foo".into()),
            ..Crd::from(typed)
        };
        assert_eq!(crd, same);
        crd.spec.group = "example.org".into();
        assert_eq!(crd.clone().into_definition().spec.group, "example.org");
        assert_eq!(crd.into_json().unwrap()["spec"]["group"], "example.org");
    }

    #[test]
    fn error_lists_every_problem_with_hints() {
        let err = CrdError {
            rust_type: "a::Foo".into(),
            problems: vec![Problem {
                path: ".spec.x".into(),
                message: "bad".into(),
                hint: Some("fix it".into()),
            }],
        };
        assert_eq!(
            err.to_string(),
            "the CRD of `a::Foo` is invalid:\n  .spec.x: bad\n      hint: fix it"
        );
    }
}
