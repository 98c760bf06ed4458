//! Whole-CRD snapshots of the schema shapes operators use, each checked by
//! rkb's structural validator and by `kubernetes-validate --strict` against
//! Kubernetes 1.34; the types whose CRD cannot be valid must fail with a clear
//! error instead of a panic.
//!
//! Snapshots live in tests/snapshots/*.yaml, exactly as `make manifests`
//! writes them. After an intended change, regenerate them with
//! `RKB_BLESS=1 cargo test -p rkb-runtime --test integration crds::`.
//! kubernetes-validate comes from PyPI (`pip install kubernetes-validate`, or
//! `bash .ci/install-tools`); a missing tool fails the test.

#![allow(dead_code)]

use crate::cronjob;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, MicroTime, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use rkb_runtime::manifests::DEFAULT_MAX_CRD_SIZE;
use rkb_runtime::{Crd, CrdError, Manifests, crd};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// Valid shapes
// ---------------------------------------------------------------------------

/// The desired state of a Memcached: every controller-gen marker rkb knows.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    namespaced,
    status = "MemcachedStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[rkb(
    printcolumn(name = "Size", type = integer, json_path = ".spec.size", description = "Replicas wanted"),
    printcolumn(name = "Ready", type = string, json_path = ".status.conditions[?(@.type==\"Ready\")].status"),
    printcolumn(name = "Image", type = string, json_path = ".spec.image", priority = 1),
    printcolumn(name = "Age", type = date, json_path = ".metadata.creationTimestamp"),
    short_names = ["mc", "memc"],
    categories = ["all", "cache"],
    selectable = [".spec.image"],
    scale(spec_replicas = ".spec.size", status_replicas = ".status.replicas", label_selector = ".status.selector")
)]
#[rkb(validation(rule = "self.size <= self.maxSize", message = "size must not exceed maxSize", field_path = ".size", reason = FieldValueInvalid))]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    /// How many replicas to run.
    #[rkb(minimum = 0, maximum = 100, default = 1)]
    pub size: i32,
    /// The upper bound of `size`.
    #[rkb(minimum = 1, exclusive_maximum, maximum = 1000, multiple_of = 1)]
    pub max_size: i32,
    /// The container image.
    #[rkb(min_length = 1, max_length = 255, pattern = "^[a-z0-9./:@-]+$")]
    pub image: String,
    /// Extra arguments; each distinct.
    #[rkb(list_type = set, max_items = 16, items(min_length = 1, max_length = 63))]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Ports, merged by name under server-side apply.
    #[rkb(list_type = map, list_map_keys = ["name"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<Port>,
    /// How memory is sized.
    #[rkb(default = Policy::Balanced)]
    pub policy: Option<Policy>,
    /// The cache's mode, from a fixed list.
    #[rkb(enum_values = ["lru", "lfu"], default = "lru")]
    pub eviction: Option<String>,
    /// Labels copied to the pods, replaced as a whole.
    #[rkb(map_type = atomic, max_properties = 8)]
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pod_labels: BTreeMap<String, String>,
    /// A port name or number.
    #[rkb(int_or_string)]
    pub metrics_port: Option<String>,
    /// When to start, RFC 3339.
    #[rkb(format = "date-time", example = "2024-01-01T00:00:00Z")]
    pub start_after: Option<String>,
    /// Cannot change once set.
    #[rkb(validation(rule = "self == oldSelf", message = "zone is immutable"))]
    pub zone: Option<String>,
}

/// A named port.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(validation(rule = "self.port != 22", message = "port 22 is reserved"))]
pub struct Port {
    /// The port's name, unique in the list.
    #[rkb(max_length = 15, pattern = "^[a-z]([-a-z0-9]*[a-z0-9])?$")]
    pub name: String,
    #[rkb(minimum = 1, maximum = 65535)]
    pub port: i32,
}

/// How memory is sized.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub enum Policy {
    /// As little as possible.
    Small,
    #[default]
    Balanced,
    Large,
}

/// The observed state of a Memcached.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// The latest observations, one per condition type.
    #[rkb(list_type = map, list_map_keys = ["type"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    pub replicas: Option<i32>,
    pub selector: Option<String>,
}

/// Untagged enums with disjoint fields, plain and flattened.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "shapes.rkb.dev",
    version = "v1",
    kind = "Untagged",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub struct UntaggedSpec {
    pub source: Source,
    pub fallback: Option<Source>,
    #[serde(flatten)]
    pub target: Target,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Source {
    Git {
        repository: String,
        revision: Option<String>,
    },
    Image {
        image: String,
    },
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged, rename_all = "camelCase")]
pub enum Target {
    Cluster {
        #[serde(rename = "clusterName")]
        cluster_name: String,
    },
    Namespace {
        namespace: String,
    },
}

/// Externally tagged enums, as serde writes them by default.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "shapes.rkb.dev", version = "v1", kind = "Tagged", namespaced)]
pub struct TaggedSpec {
    pub action: Action,
    pub optional_action: Option<Action>,
    pub level: Level,
    pub optional_level: Option<Level>,
    pub optional_plain: Option<Plain>,
    pub levels: Vec<Level>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Restart the pods.
    Restart {
        grace_seconds: u32,
    },
    /// Scale to a replica count.
    Scale(i32),
    Notify {
        url: String,
    },
}

/// A log level.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub enum Level {
    /// Everything.
    Debug,
    /// The usual.
    Info,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Plain {
    Red,
    Green,
}

/// Built-in value types of k8s-openapi.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "shapes.rkb.dev", version = "v1", kind = "Builtin", namespaced)]
#[serde(rename_all = "camelCase")]
pub struct BuiltinSpec {
    pub port: IntOrString,
    pub optional_port: Option<IntOrString>,
    pub memory: Quantity,
    pub optional_memory: Option<Quantity>,
    pub limits: BTreeMap<String, Quantity>,
    pub ports: Vec<IntOrString>,
    pub not_before: Time,
    pub not_after: Option<Time>,
    pub renewed: Option<MicroTime>,
}

/// Maps, free-form values and flattened extra fields.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "shapes.rkb.dev", version = "v1", kind = "Free", namespaced)]
#[serde(rename_all = "camelCase")]
pub struct FreeSpec {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub limits: HashMap<String, Limit>,
    pub settings: BTreeMap<String, Value>,
    pub values: Option<Value>,
    pub any_list: Vec<Value>,
    /// A whole Kubernetes object, kept as written.
    #[rkb(embedded_resource)]
    pub template: Option<Value>,
    /// A pod spec kept schemaless, to keep the CRD small.
    #[rkb(schemaless)]
    pub pod: Option<PodSpec>,
    #[serde(flatten)]
    pub extra: HashMap<String, Value>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Limit {
    pub max: i64,
}

/// serde attributes that change the shape: rename, skip, default, numbers.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(group = "shapes.rkb.dev", version = "v1", kind = "Serde", namespaced)]
#[serde(rename_all = "kebab-case")]
pub struct SerdeSpec {
    pub two_words: String,
    #[serde(rename = "renamedField")]
    pub original: bool,
    #[serde(skip)]
    pub internal: Vec<u8>,
    #[serde(default)]
    pub defaulted: u16,
    #[serde(default = "default_replicas")]
    pub replicas: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maybe: Option<i64>,
    pub tiny: i8,
    pub big: u64,
    pub ratio: f32,
    pub precise: f64,
    pub nested: Nested,
}

fn default_replicas() -> u32 {
    3
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nested {
    pub a: Option<String>,
}

/// Two versions of a cluster-scoped kind, the older deprecated.
mod fleet {
    use super::*;

    pub mod v1 {
        use super::*;

        /// A fleet of clusters.
        #[rkb_runtime::api]
        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[kube(group = "shapes.rkb.dev", version = "v1", kind = "Fleet")]
        #[rkb(categories = ["fleet"], short_names = ["fl"])]
        pub struct FleetSpec {
            #[rkb(min_items = 1, items(pattern = "^[a-z0-9-]+$"))]
            pub clusters: Vec<String>,
        }
    }

    pub mod v1beta1 {
        use super::*;

        /// A fleet of clusters (deprecated version).
        #[rkb_runtime::api]
        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[kube(group = "shapes.rkb.dev", version = "v1beta1", kind = "Fleet")]
        #[rkb(
            storage = false,
            deprecated = "shapes.rkb.dev/v1beta1 Fleet is deprecated; use v1"
        )]
        pub struct FleetSpec {
            pub clusters: Vec<String>,
        }
    }
}

struct Case {
    name: &'static str,
    crds: Vec<Result<Crd, CrdError>>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "memcached",
            crds: vec![crd::<Memcached>()],
        },
        Case {
            name: "untagged",
            crds: vec![crd::<Untagged>()],
        },
        Case {
            name: "tagged",
            crds: vec![crd::<Tagged>()],
        },
        Case {
            name: "builtin",
            crds: vec![crd::<Builtin>()],
        },
        Case {
            name: "free",
            crds: vec![crd::<Free>()],
        },
        Case {
            name: "serde",
            crds: vec![crd::<Serde>()],
        },
        Case {
            name: "fleet",
            crds: vec![crd::<fleet::v1::Fleet>(), crd::<fleet::v1beta1::Fleet>()],
        },
        Case {
            name: "cronjob",
            crds: vec![crd::<cronjob::CronJob>()],
        },
    ]
}

/// The one CRD file a case renders to, as `make manifests` writes it.
fn render(case: &Case) -> String {
    let crds = case
        .crds
        .iter()
        .map(|c| c.clone().map_err(|e| panic!("{}: {e}", case.name)))
        .collect();
    let files = Manifests::new(crds, vec![])
        .render()
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let mut crd_files = files
        .into_iter()
        .filter(|(p, _)| p.starts_with("config/crd"));
    let (_, yaml) = crd_files.next().expect("one CRD file");
    assert!(crd_files.next().is_none());
    yaml
}

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

#[test]
fn snapshots_match_and_pass_kubernetes_validation() {
    let bless = std::env::var_os("RKB_BLESS").is_some();
    let dir = snapshot_dir();
    let mut drift = Vec::new();
    let mut files = Vec::new();
    for case in cases() {
        let yaml = render(&case);
        let path = dir.join(format!("{}.yaml", case.name));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &yaml).unwrap();
        } else {
            match std::fs::read_to_string(&path) {
                Ok(expected) if expected == yaml => {}
                Ok(_) => drift.push(format!("{} (changed)", path.display())),
                Err(_) => drift.push(format!("{} (missing)", path.display())),
            }
        }
        files.push(path);
    }
    assert!(
        drift.is_empty(),
        "CRD snapshots differ: {}\nrun `RKB_BLESS=1 cargo test -p rkb-runtime --test integration crds::` \
         after an intended change and review the diff",
        drift.join(", ")
    );
    rkb_envtest::kubernetes_validate(&files, Path::new("."));
}

#[test]
fn rendering_is_deterministic() {
    for (a, b) in cases().iter().zip(cases().iter()) {
        assert_eq!(render(a), render(b), "{}", a.name);
    }
}

// ---------------------------------------------------------------------------
// The shapes covered, each checked in the rendered CRD
// ---------------------------------------------------------------------------

/// (case, JSON pointer below the first version's openAPIV3Schema, what the
/// node must contain, the shape it shows).
fn shapes() -> Vec<(&'static str, &'static str, Value, &'static str)> {
    vec![
        (
            "memcached",
            "",
            json!({"type": "object"}),
            "root: no kube-invented description or title",
        ),
        (
            "memcached",
            "/properties/spec/properties/size",
            json!({"type": "integer", "minimum": 0, "maximum": 100, "default": 1}),
            "minimum, maximum, default",
        ),
        (
            "memcached",
            "/properties/spec/properties/maxSize",
            json!({"exclusiveMaximum": true, "multipleOf": 1}),
            "exclusive bounds, multipleOf",
        ),
        (
            "memcached",
            "/properties/spec/properties/image",
            json!({"minLength": 1, "maxLength": 255, "pattern": "^[a-z0-9./:@-]+$"}),
            "string length and pattern",
        ),
        (
            "memcached",
            "/properties/spec/properties/args",
            json!({"x-kubernetes-list-type": "set", "maxItems": 16, "items": {"minLength": 1, "maxLength": 63}}),
            "list_type = set, items(...) validations",
        ),
        (
            "memcached",
            "/properties/spec/properties/ports",
            json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
            "list_type = map",
        ),
        (
            "memcached",
            "/properties/spec/properties/ports/items",
            json!({"x-kubernetes-validations": [{"rule": "self.port != 22", "message": "port 22 is reserved"}]}),
            "type-level CEL rule on a nested type",
        ),
        (
            "memcached",
            "/properties/spec/properties/policy",
            json!({"type": "string", "default": "Balanced", "enum": ["Balanced", "Large", "Small"]}),
            "Option<Enum> with a default variant",
        ),
        (
            "memcached",
            "/properties/spec/properties/eviction",
            json!({"enum": ["lru", "lfu"], "default": "lru"}),
            "enum_values on a string",
        ),
        (
            "memcached",
            "/properties/spec/properties/podLabels",
            json!({"x-kubernetes-map-type": "atomic", "maxProperties": 8, "additionalProperties": {"type": "string"}}),
            "map_type = atomic",
        ),
        (
            "memcached",
            "/properties/spec/properties/metricsPort",
            json!({"x-kubernetes-int-or-string": true}),
            "int_or_string on a String field",
        ),
        (
            "memcached",
            "/properties/spec/properties/startAfter",
            json!({"format": "date-time", "example": "2024-01-01T00:00:00Z"}),
            "format and example",
        ),
        (
            "memcached",
            "/properties/spec/properties/zone",
            json!({"x-kubernetes-validations": [{"rule": "self == oldSelf"}]}),
            "field-level transition rule",
        ),
        (
            "memcached",
            "/properties/spec",
            json!({"x-kubernetes-validations": [{"rule": "self.size <= self.maxSize", "fieldPath": ".size", "reason": "FieldValueInvalid"}]}),
            "spec-level CEL rule with fieldPath and reason",
        ),
        (
            "memcached",
            "/properties/status/properties/conditions",
            json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}),
            "conditions keyed by type",
        ),
        (
            "untagged",
            "/properties/spec/properties/source",
            json!({"type": "object", "anyOf": [{"required": ["repository"]}, {"required": ["image"]}]}),
            "untagged enum with disjoint fields",
        ),
        (
            "untagged",
            "/properties/spec/properties/fallback",
            json!({"type": "object"}),
            "Option<untagged enum>",
        ),
        (
            "untagged",
            "/properties/spec",
            json!({"properties": {"clusterName": {"type": "string"}, "namespace": {"type": "string"}}}),
            "#[serde(flatten)] untagged enum",
        ),
        (
            "tagged",
            "/properties/spec/properties/action",
            json!({"type": "object", "oneOf": [{"required": ["restart"]}, {"required": ["scale"]}, {"required": ["notify"]}]}),
            "externally tagged enum with data",
        ),
        (
            "tagged",
            "/properties/spec/properties/optional_action",
            json!({"type": "object"}),
            "Option<externally tagged enum>",
        ),
        (
            "tagged",
            "/properties/spec/properties/level",
            json!({"type": "string", "enum": ["Debug", "Info"]}),
            "documented unit enum",
        ),
        (
            "tagged",
            "/properties/spec/properties/optional_level",
            json!({"type": "string", "enum": ["Debug", "Info"]}),
            "Option<documented unit enum>: optional, not nullable",
        ),
        (
            "tagged",
            "/properties/spec/properties/optional_plain",
            json!({"type": "string", "enum": ["red", "green"]}),
            "Option<plain enum>: no null in enum",
        ),
        (
            "tagged",
            "/properties/spec/properties/levels",
            json!({"type": "array", "items": {"type": "string"}}),
            "Vec<Enum>",
        ),
        (
            "builtin",
            "/properties/spec/properties/port",
            json!({"x-kubernetes-int-or-string": true}),
            "IntOrString",
        ),
        (
            "builtin",
            "/properties/spec/properties/optionalPort",
            json!({"x-kubernetes-int-or-string": true}),
            "Option<IntOrString>",
        ),
        (
            "builtin",
            "/properties/spec/properties/optionalMemory",
            json!({"x-kubernetes-int-or-string": true}),
            "Option<Quantity>",
        ),
        (
            "builtin",
            "/properties/spec/properties/limits",
            json!({"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": true}}),
            "map of Quantity",
        ),
        (
            "builtin",
            "/properties/spec/properties/ports",
            json!({"type": "array", "items": {"x-kubernetes-int-or-string": true}}),
            "Vec<IntOrString>",
        ),
        (
            "builtin",
            "/properties/spec/properties/notAfter",
            json!({"type": "string", "format": "date-time"}),
            "Option<Time>",
        ),
        (
            "builtin",
            "/properties/spec/properties/renewed",
            json!({"type": "string", "format": "date-time"}),
            "Option<MicroTime>",
        ),
        (
            "free",
            "/properties/spec",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            "#[serde(flatten)] HashMap: preserve unknown fields",
        ),
        (
            "free",
            "/properties/spec/properties/labels",
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            "BTreeMap<String, String>",
        ),
        (
            "free",
            "/properties/spec/properties/limits",
            json!({"additionalProperties": {"type": "object", "properties": {"max": {"type": "integer"}}}}),
            "map of structs",
        ),
        (
            "free",
            "/properties/spec/properties/settings",
            json!({"type": "object", "additionalProperties": {"x-kubernetes-preserve-unknown-fields": true}}),
            "map of serde_json::Value",
        ),
        (
            "free",
            "/properties/spec/properties/values",
            json!({"x-kubernetes-preserve-unknown-fields": true}),
            "serde_json::Value",
        ),
        (
            "free",
            "/properties/spec/properties/anyList",
            json!({"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true}}),
            "Vec<serde_json::Value>",
        ),
        (
            "free",
            "/properties/spec/properties/template",
            json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
            "embedded_resource",
        ),
        (
            "free",
            "/properties/spec/properties/pod",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
            "schemaless PodSpec",
        ),
        (
            "serde",
            "/properties/spec/properties",
            json!({"two-words": {"type": "string"}, "renamedField": {"type": "boolean"}}),
            "rename_all and rename",
        ),
        (
            "serde",
            "/properties/spec/properties/defaulted",
            json!({"default": 0, "format": "int32", "minimum": 0}),
            "#[serde(default)], u16 as int32",
        ),
        (
            "serde",
            "/properties/spec/properties/replicas",
            json!({"default": 3, "format": "int64"}),
            "#[serde(default = \"fn\")], u32 as int64",
        ),
        (
            "serde",
            "/properties/spec/properties/big",
            json!({"format": "int64", "minimum": 0}),
            "u64 as int64",
        ),
        (
            "serde",
            "/properties/spec/properties/ratio",
            json!({"type": "number", "format": "float"}),
            "f32",
        ),
        (
            "serde",
            "/properties/spec/properties/nested",
            json!({"type": "object", "properties": {"a": {}}}),
            "nested struct with deny_unknown_fields",
        ),
        (
            "fleet",
            "/properties/spec/properties/clusters",
            json!({"minItems": 1, "items": {"pattern": "^[a-z0-9-]+$"}}),
            "min_items and items(pattern)",
        ),
        (
            "cronjob",
            "/properties/spec/properties/jobTemplate/properties/spec/properties/template/properties/spec/properties/containers",
            json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                   "items": {"properties": {"ports": {"x-kubernetes-list-type": "map",
                       "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                       "items": {"properties": {"protocol": {"default": "TCP"}}}}}}}),
            "an embedded PodSpec's list-maps and defaults",
        ),
        (
            "cronjob",
            "/properties/spec/properties/jobTemplate/properties/spec/properties/template/properties/spec/properties/nodeSelector",
            json!({"x-kubernetes-map-type": "atomic"}),
            "an embedded PodSpec's atomic map",
        ),
        (
            "cronjob",
            "/properties/status/properties/active/items",
            json!({"x-kubernetes-map-type": "atomic"}),
            "ObjectReference is an atomic struct",
        ),
        (
            "cronjob",
            "/properties/status/properties/conditions/items/properties",
            json!({"status": {"enum": ["True", "False", "Unknown"]}, "type": {"maxLength": 316},
                   "reason": {"minLength": 1, "maxLength": 1024}, "message": {"maxLength": 32768},
                   "lastTransitionTime": {"format": "date-time"}}),
            "metav1.Condition's validations",
        ),
    ]
}

fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| contains(av, v))),
        (Value::Array(a), Value::Array(e)) => {
            a.len() == e.len() && a.iter().zip(e).all(|(av, ev)| contains(av, ev))
        }
        _ => actual == expected,
    }
}

#[test]
fn every_listed_shape_is_in_its_crd() {
    let rendered: BTreeMap<&str, Value> = cases()
        .iter()
        .map(|c| (c.name, serde_yaml_ng::from_str(&render(c)).unwrap()))
        .collect();
    let shapes = shapes();
    let mut missing = Vec::new();
    for (case, pointer, expected, shape) in &shapes {
        let root = &rendered[case]["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        match root.pointer(pointer) {
            Some(node) if contains(node, expected) => {}
            node => missing.push(format!(
                "{case}{pointer} ({shape}): expected {expected} in {node:?}"
            )),
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    // Only fields that ask are nullable: an Option is optional.
    assert!(
        !rendered
            .values()
            .any(|crd| crd.to_string().contains("\"nullable\"")),
        "nullable without #[rkb(nullable)]"
    );
    // The root carries neither kube's placeholder description nor a title.
    let root = &rendered["memcached"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert!(root.get("description").is_none() && root.get("title").is_none());
    println!("{} schema shapes covered", shapes.len());
    assert!(shapes.len() >= 45);
}

#[test]
fn crd_level_attributes_reach_the_crd() {
    let memcached = crd::<Memcached>().unwrap();
    let names = &memcached.spec.names;
    assert_eq!(names.short_names, Some(vec!["mc".into(), "memc".into()]));
    assert_eq!(names.categories, Some(vec!["all".into(), "cache".into()]));
    let version = &memcached.spec.versions[0];
    let columns: Vec<(&str, &str, Option<i32>)> = version
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| (c.name.as_str(), c.type_.as_str(), c.priority))
        .collect();
    assert_eq!(
        columns,
        [
            ("Size", "integer", None),
            ("Ready", "string", None),
            ("Image", "string", Some(1)),
            ("Age", "date", None)
        ]
    );
    let scale = version
        .subresources
        .as_ref()
        .unwrap()
        .scale
        .as_ref()
        .unwrap();
    assert_eq!(scale.spec_replicas_path, ".spec.size");
    assert_eq!(
        scale.label_selector_path.as_deref(),
        Some(".status.selector")
    );
    assert_eq!(
        version.selectable_fields.as_ref().unwrap()[0].json_path,
        ".spec.image"
    );

    let merged = render(&Case {
        name: "fleet",
        crds: vec![crd::<fleet::v1::Fleet>(), crd::<fleet::v1beta1::Fleet>()],
    });
    let merged: CustomResourceDefinition = serde_yaml_ng::from_str(&merged).unwrap();
    assert_eq!(merged.spec.scope, "Cluster");
    let beta = &merged.spec.versions[1];
    assert_eq!(
        (beta.name.as_str(), beta.storage, beta.deprecated),
        ("v1beta1", false, Some(true))
    );
    assert_eq!(
        beta.deprecation_warning.as_deref(),
        Some("shapes.rkb.dev/v1beta1 Fleet is deprecated; use v1")
    );
}

// ---------------------------------------------------------------------------
// Types without a valid CRD: errors, not panics
// ---------------------------------------------------------------------------

macro_rules! kind {
    ($kind:literal, $spec:ident { $($body:tt)* }) => {
        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[kube(group = "errors.rkb.dev", version = "v1", kind = $kind, namespaced)]
        pub struct $spec { $($body)* }
    };
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type")]
pub enum Internally {
    Http { url: String },
    Exec { command: Vec<String> },
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub enum Mixed {
    Off,
    On { level: i32 },
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Overlapping {
    Number { value: i32 },
    Text { value: String },
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Tree {
    pub name: String,
    pub children: Vec<Tree>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Chain {
    pub next: Option<Box<Chain>>,
}

kind!("Internal", InternalSpec { pub probe: Internally });
kind!("MixedUnit", MixedUnitSpec { pub switch: Mixed });
kind!("Overlap", OverlapSpec { pub value: Overlapping });
kind!("Recursive", RecursiveSpec { pub tree: Tree });
kind!("RecursiveOption", RecursiveOptionSpec { pub chain: Chain });
kind!("Tuple", TupleSpec { pub pair: (i32, String), pub unit: () });

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "errors.rkb.dev", version = "v1", kind = "Misused", namespaced)]
pub struct MisusedSpec {
    /// `items(...)` on a field that is not a list.
    #[rkb(items(max_length = 3))]
    pub name: String,
    /// A default of the wrong type.
    #[rkb(default = "three")]
    pub size: i32,
    /// The list key is optional.
    #[rkb(list_type = map, list_map_keys = ["name"])]
    pub entries: Vec<Entry>,
    /// A list type on a number.
    #[rkb(list_type = set)]
    pub count: i32,
    /// A string length on a list.
    #[rkb(max_length = 3)]
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Entry {
    pub name: Option<String>,
}

/// `#[rkb(nullable)]` on an `Option<Enum>`: the API server would refuse every null.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "errors.rkb.dev",
    version = "v1",
    kind = "NullableEnum",
    namespaced
)]
pub struct NullableEnumSpec {
    #[rkb(nullable)]
    pub level: Option<Level>,
}

fn error<K: kube::CustomResourceExt + JsonSchema>() -> String {
    crd::<K>().expect_err("an invalid CRD").to_string()
}

fn assert_mentions(error: &str, parts: &[&str]) {
    for part in parts {
        assert!(error.contains(part), "{part:?} not in:\n{error}");
    }
}

#[test]
fn internally_tagged_enums_are_an_error_not_a_panic() {
    assert_mentions(
        &error::<Internal>(),
        &[
            "the CRD of `integration::crds::Internal` is invalid",
            ".spec.probe: enum `Internally` is internally tagged (#[serde(tag = \"type\")])",
            "hint: use an externally tagged enum",
        ],
    );
}

#[test]
fn mixed_unit_and_data_variants_are_an_error() {
    assert_mentions(
        &error::<MixedUnit>(),
        &[
            ".spec.switch: enum `Mixed` mixes unit variants (Off)",
            "hint: give the unit variants an empty body",
        ],
    );
}

#[test]
fn overlapping_untagged_fields_are_an_error() {
    assert_mentions(
        &error::<Overlap>(),
        &[
            ".spec.value: variants of enum `Overlapping` declare field `value` with different schemas",
        ],
    );
}

#[test]
fn recursive_types_are_an_error() {
    assert_mentions(
        &error::<Recursive>(),
        &[
            ".spec.tree.children[*]: refers to `Tree` ($ref)",
            "hint: recursive types cannot be described in a CRD",
        ],
    );
    assert_mentions(
        &error::<RecursiveOption>(),
        &[".spec.chain.next: refers to `Chain` ($ref)"],
    );
}

#[test]
fn tuples_and_unit_are_an_error() {
    assert_mentions(
        &error::<Tuple>(),
        &[
            ".spec.pair: `items` must be one schema, not a list (a tuple)",
            ".spec.unit: `type` must not be empty",
            "the unit type `()` has no schema",
        ],
    );
}

#[test]
fn attribute_misuse_found_at_generation_is_an_error() {
    assert_mentions(
        &error::<Misused>(),
        &[
            "MisusedSpec.name: `items(...)` applies to lists",
            ".spec.size: default \"three\" is not of type integer",
            ".spec.entries: list map key `name` must be required or have a default",
            ".spec.count: x-kubernetes-list-type is only allowed on arrays",
            ".spec.tags: maxLength applies to string, not to an array",
            "hint: use max_items for lists",
        ],
    );
}

#[test]
fn a_nullable_enum_is_an_error() {
    assert_mentions(
        &error::<NullableEnum>(),
        &[
            ".spec.level: a nullable enum refuses null",
            "hint: leave out #[rkb(nullable)]",
        ],
    );
}

#[test]
fn manifests_report_every_invalid_type() {
    let err = Manifests::new(
        vec![crd::<Internal>(), crd::<Memcached>(), crd::<Recursive>()],
        vec![],
    )
    .render()
    .unwrap_err()
    .to_string();
    assert_mentions(&err, &["crds::Internal", "crds::Recursive"]);
    assert!(!err.contains("crds::Memcached"), "{err}");
}

// ---------------------------------------------------------------------------
// Size: the BlueGreen CRD (two PodSpecs) fits an annotation by default
// ---------------------------------------------------------------------------

#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "app.demo.kakao.com",
    version = "v1",
    kind = "BlueGreen",
    namespaced,
    status = "BlueGreenStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct BlueGreenSpec {
    /// The pods of the blue deployment.
    pub blue_spec: Option<PodSpec>,
    /// The pods of the green deployment.
    pub green_spec: Option<PodSpec>,
    /// Which deployment the service routes to.
    pub route_to: RouteTo,
}

/// A deployment colour.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub enum RouteTo {
    #[default]
    Blue,
    Green,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct BlueGreenStatus {
    #[rkb(list_type = map, list_map_keys = ["type"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

fn bluegreen(manifests: Manifests) -> (String, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let report = manifests.write(dir.path()).unwrap();
    let yaml = std::fs::read_to_string(
        dir.path()
            .join("config/crd/bases/app.demo.kakao.com_bluegreens.yaml"),
    )
    .unwrap();
    (yaml, report.notes)
}

fn json_size(yaml: &str) -> usize {
    rkb_runtime::manifests::json_size(yaml).unwrap()
}

/// Whether any object of the schema was made schemaless by the size policy.
fn has_schemaless_objects(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true))
                || map.values().any(has_schemaless_objects)
        }
        Value::Array(items) => items.iter().any(has_schemaless_objects),
        _ => false,
    }
}

#[test]
fn the_bluegreen_crd_fits_an_annotation_by_default_with_every_level_validated() {
    let full = Manifests::new(vec![crd::<BlueGreen>()], vec![]).max_crd_size(None);
    let (full, notes) = bluegreen(full);
    assert!(
        full.len() > 800 * 1024,
        "kube's CRD is {} bytes",
        full.len()
    );
    assert!(notes.is_empty());
    let full_json: Value = serde_yaml_ng::from_str(&full).unwrap();
    assert!(
        !has_schemaless_objects(&full_json),
        "PodSpec is fully typed"
    );

    let (yaml, notes) = bluegreen(Manifests::new(vec![crd::<BlueGreen>()], vec![]));
    let json: Value = serde_yaml_ng::from_str(&yaml).unwrap();
    println!(
        "BlueGreen CRD: {} bytes of YAML, {} of JSON (kube: {} of YAML, {} of JSON)",
        yaml.len(),
        json_size(&yaml),
        full.len(),
        json_size(&full)
    );
    // The budget measures the JSON: descriptions go, every level stays.
    assert!(
        json_size(&yaml) <= DEFAULT_MAX_CRD_SIZE,
        "{} bytes",
        json_size(&yaml)
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_mentions(
        &notes[0],
        &[
            "bluegreens.app.demo.kakao.com",
            "dropped its descriptions",
            "as JSON",
        ],
    );
    assert!(!notes[0].contains("schemaless"), "{}", notes[0]);
    assert!(
        !has_schemaless_objects(&json),
        "no level gave up its schema"
    );

    // What the spec says directly keeps its validation, and so does the deepest level.
    let spec = &json["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(
        spec["properties"]["routeTo"]["enum"],
        json!(["Blue", "Green"])
    );
    let containers = &spec["properties"]["blueSpec"]["properties"]["containers"];
    assert_eq!(containers["items"]["properties"]["image"]["type"], "string");
    assert_eq!(containers["items"]["required"], json!(["name"]));
    let add = &containers["items"]["properties"]["securityContext"]["properties"]["capabilities"]["properties"]
        ["add"];
    assert_eq!(add["items"]["type"], "string");
    let schema = &json["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert!(rkb_runtime::schema::check(schema).is_empty());

    let path = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(path.path(), &yaml).unwrap();
    rkb_envtest::kubernetes_validate(&[path.path()], Path::new("."));

    // Deterministic, and controller-gen's maxDescLen when asked.
    assert_eq!(
        bluegreen(Manifests::new(vec![crd::<BlueGreen>()], vec![])).0,
        yaml
    );
    let (short, _) = bluegreen(Manifests::new(vec![crd::<BlueGreen>()], vec![]).max_desc_len(40));
    assert!(
        short.contains("description: The pods of the blue deployment."),
        "kept under 40 bytes"
    );
    assert!(short.contains("..."));
    assert!(json_size(&short) <= DEFAULT_MAX_CRD_SIZE);

    // A tighter budget than descriptions alone can meet: deep levels give way.
    let (tight, notes) =
        bluegreen(Manifests::new(vec![crd::<BlueGreen>()], vec![]).max_crd_size(Some(64 * 1024)));
    assert!(
        json_size(&tight) <= 64 * 1024,
        "{} bytes",
        json_size(&tight)
    );
    assert_mentions(&notes[0], &["dropped its descriptions", "schemaless"]);
}

#[test]
fn small_crds_keep_their_descriptions() {
    let yaml = render(&Case {
        name: "memcached",
        crds: vec![crd::<Memcached>()],
    });
    assert!(yaml.contains("description: How many replicas to run."));
    assert!(yaml.len() < DEFAULT_MAX_CRD_SIZE);
}

// ---------------------------------------------------------------------------
// Groups Kubernetes reserves (found by the real API server, not by schema checks)
// ---------------------------------------------------------------------------

mod reserved {
    use super::*;

    #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[kube(
        group = "samplecontroller.k8s.io",
        version = "v1alpha1",
        kind = "Unapproved",
        namespaced
    )]
    pub struct UnapprovedSpec {
        pub replicas: i32,
    }

    #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[kube(
        group = "samplecontroller.k8s.io",
        version = "v1alpha1",
        kind = "Approved",
        namespaced,
        annotation("api-approved.kubernetes.io", "unapproved, experimental-only")
    )]
    pub struct ApprovedSpec {
        pub replicas: i32,
    }

    #[test]
    fn a_crd_in_a_reserved_group_needs_the_api_approved_annotation() {
        let err = crd::<Unapproved>().unwrap_err().to_string();
        assert_mentions(
            &err,
            &[
                "samplecontroller.k8s.io",
                "api-approved.kubernetes.io",
                "#[kube(annotation(",
            ],
        );
        let approved = crd::<Approved>().unwrap().into_definition();
        assert!(
            approved
                .metadata
                .annotations
                .unwrap()
                .contains_key("api-approved.kubernetes.io")
        );
    }
}
