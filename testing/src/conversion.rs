//! Conversion round trips, property-tested: arbitrary objects of a spoke version, drawn
//! from its CRD's schema (types, enums, bounds, lengths, item and property counts,
//! patterns, nullable fields), must come back unchanged from spoke → hub → spoke.
//! `rkb create webhook --conversion` scaffolds one such test per spoke:
//!
//! ```ignore (a test that rkb create webhook --conversion writes into a project, with its versions)
//! #[test]
//! fn v1beta1_objects_drawn_from_its_schema_survive_the_hub() {
//!     rkb_runtime::testing::conversion::assert_round_trips(|spoke: v1beta1::Memcached| {
//!         v1beta1::Memcached::from_hub(spoke.to_hub()?)
//!     });
//! }
//! ```
//!
//! A failure names the first field that differs (`.spec.ports[0].name`), with its value
//! before and after, and the smallest object proptest found that shows it. An object the
//! schema accepts but the Rust type cannot read is a failure too: the API server would
//! store it, and the operator could not. CEL rules (`x-kubernetes-validations`) are not
//! drawn from: conversions should not depend on them.
//!
//! The cases are drawn from a fixed seed, so a run is reproducible; set
//! `RKB_CONVERSION_CASES` to draw more (default 256).

use std::fmt;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use kube::CustomResourceExt;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// How many objects [`assert_round_trips`] draws unless `RKB_CONVERSION_CASES` says.
pub const DEFAULT_CASES: u32 = 256;

/// Below this depth, optional fields are left out and lists and maps are as short as
/// their bounds allow, so that deep schemas (an embedded `PodSpec`) stay small.
const MAX_DEPTH: usize = 6;

/// Panics, naming the field, unless every object drawn from `S`'s schema survives
/// `through_hub` (spoke → hub → spoke) unchanged.
pub fn assert_round_trips<S, E>(through_hub: impl Fn(S) -> Result<S, E>)
where
    S: CustomResourceExt + JsonSchema + Serialize + DeserializeOwned + Clone,
    E: fmt::Display,
{
    let cases = std::env::var("RKB_CONVERSION_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    if let Err(failure) = round_trips(cases, through_hub) {
        panic!("{failure}");
    }
}

/// [`assert_round_trips`] with a number of cases, returning the failure (boxed: it holds
/// the object).
pub fn round_trips<S, E>(
    cases: u32,
    through_hub: impl Fn(S) -> Result<S, E>,
) -> Result<(), Box<RoundTripFailure>>
where
    S: CustomResourceExt + JsonSchema + Serialize + DeserializeOwned + Clone,
    E: fmt::Display,
{
    let crd = rkb_manifests::crd::<S>().map_err(|e| {
        Box::new(RoundTripFailure {
            kind: S::crd_name().to_owned(),
            problem: Problem::Schema(e.to_string()),
            object: Value::Null,
        })
    })?;
    let version = &crd.spec.versions[0];
    let schema = version
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.clone())
        .unwrap_or_default();
    let namespaced = crd.spec.scope == "Namespaced";
    let api_version = format!("{}/{}", crd.spec.group, version.name);
    let kind = crd.spec.names.kind.clone();
    let strategy = objects(&schema).prop_map(move |mut object| {
        if let Value::Object(fields) = &mut object {
            fields.insert("apiVersion".into(), json!(api_version));
            fields.insert("kind".into(), json!(kind));
            let mut metadata = json!({"name": "drawn"});
            if namespaced {
                metadata["namespace"] = json!("default");
            }
            fields.insert("metadata".into(), metadata);
        }
        object
    });
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let result = runner.run(&strategy, |object| {
        check(&object, &through_hub).map_err(|p| TestCaseError::fail(p.to_string()))
    });
    let failure = match result {
        Ok(()) => return Ok(()),
        Err(TestError::Fail(_, object)) => RoundTripFailure {
            kind: S::crd_name().to_owned(),
            problem: check(&object, &through_hub).expect_err("the minimal case fails"),
            object,
        },
        Err(TestError::Abort(reason)) => RoundTripFailure {
            kind: S::crd_name().to_owned(),
            problem: Problem::Schema(reason.to_string()),
            object: Value::Null,
        },
    };
    Err(Box::new(failure))
}

/// One object through the hub and back.
fn check<S, E>(object: &Value, through_hub: &impl Fn(S) -> Result<S, E>) -> Result<(), Problem>
where
    S: Serialize + DeserializeOwned + Clone,
    E: fmt::Display,
{
    let spoke: S =
        serde_json::from_value(object.clone()).map_err(|e| Problem::Unreadable(e.to_string()))?;
    let before = serde_json::to_value(&spoke).map_err(|e| Problem::Unreadable(e.to_string()))?;
    let back = through_hub(spoke).map_err(|e| Problem::Conversion(e.to_string()))?;
    let after = serde_json::to_value(&back).map_err(|e| Problem::Unreadable(e.to_string()))?;
    match first_difference(&before, &after, String::new()) {
        None => Ok(()),
        Some((field, before, after)) => Err(Problem::Differs {
            field,
            before,
            after,
        }),
    }
}

/// Why a round trip failed, and the smallest object that shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundTripFailure {
    /// The CRD, e.g. `memcacheds.cache.example.com`.
    pub kind: String,
    /// What went wrong.
    pub problem: Problem,
    /// The object drawn (`null` when none could be).
    pub object: Value,
}

/// What went wrong in a round trip.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// A field came back different: its path (`.spec.size`), before and after (`None`:
    /// absent).
    Differs {
        /// The field's path.
        field: String,
        /// Its value before the trip.
        before: Option<Value>,
        /// Its value after.
        after: Option<Value>,
    },
    /// The conversion refused the object.
    Conversion(String),
    /// The schema accepts the object but the Rust type cannot read (or write) it.
    Unreadable(String),
    /// No object could be drawn: the CRD is invalid, or its schema admits nothing.
    Schema(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Value>| v.as_ref().map_or("absent".to_owned(), Value::to_string);
        match self {
            Problem::Differs {
                field,
                before,
                after,
            } => write!(
                f,
                "{field} differs after spoke -> hub -> spoke: {} before, {} after; map it in \
                 Convertible::to_hub and from_hub (keep what the hub cannot hold with \
                 rkb_runtime::webhook::{{preserve, restore}})",
                show(before),
                show(after)
            ),
            Problem::Conversion(e) => write!(f, "the conversion refused it: {e}"),
            Problem::Unreadable(e) => write!(
                f,
                "the schema accepts it but the Rust type cannot read it ({e}): the API server \
                 would store such objects and the operator could not read them; bring the \
                 type and its #[rkb(...)] bounds in line"
            ),
            Problem::Schema(e) => write!(f, "no object can be drawn from the schema: {e}"),
        }
    }
}

impl fmt::Display for RoundTripFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.problem)?;
        if !self.object.is_null() {
            write!(f, "\n  smallest object that shows it: {}", self.object)?;
        }
        Ok(())
    }
}

/// The first place where `a` and `b` differ: its path, and the values there.
fn first_difference(
    a: &Value,
    b: &Value,
    path: String,
) -> Option<(String, Option<Value>, Option<Value>)> {
    let here = |path: String| {
        if path.is_empty() {
            ".".to_owned()
        } else {
            path
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let path = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => first_difference(v, w, path),
                    (v, w) => Some((path, v.cloned(), w.cloned())),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w, format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some((here(path), Some(a.clone()), Some(b.clone()))),
    }
}

/// Arbitrary values valid for `schema`: its type, enum, bounds, lengths, item and
/// property counts, pattern and nullability (not its CEL rules).
pub fn objects(schema: &JSONSchemaProps) -> BoxedStrategy<Value> {
    value(schema, 0)
}

fn value(schema: &JSONSchemaProps, depth: usize) -> BoxedStrategy<Value> {
    let inner = non_null(schema, depth);
    if schema.nullable == Some(true) {
        prop_oneof![1 => Just(Value::Null), 4 => inner].boxed()
    } else {
        inner
    }
}

fn non_null(schema: &JSONSchemaProps, depth: usize) -> BoxedStrategy<Value> {
    if let Some(values) = &schema.enum_ {
        let values: Vec<Value> = values.iter().map(|v| v.0.clone()).collect();
        return proptest::sample::select(values).boxed();
    }
    if schema.x_kubernetes_int_or_string == Some(true) {
        let number = integer(schema).prop_map(Value::from);
        return prop_oneof![number, string(schema)].boxed();
    }
    match schema.type_.as_deref() {
        Some("object") => object(schema, depth),
        Some("array") => array(schema, depth),
        Some("string") => string(schema),
        Some("integer") => integer(schema).prop_map(Value::from).boxed(),
        Some("number") => number(schema),
        Some("boolean") => any::<bool>().prop_map(Value::from).boxed(),
        _ if schema.x_kubernetes_preserve_unknown_fields == Some(true) => small_map(0, 2),
        _ => Just(json!({})).boxed(),
    }
}

fn object(schema: &JSONSchemaProps, depth: usize) -> BoxedStrategy<Value> {
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = &schema.additional_properties {
        let (min, max) = counts(schema.min_properties, schema.max_properties, depth);
        let values = value(values, depth + 1);
        return proptest::collection::btree_map("[a-z]{1,6}", values, min..=max)
            .prop_map(|map| Value::Object(map.into_iter().collect()))
            .boxed();
    }
    let Some(properties) = &schema.properties else {
        if schema.x_kubernetes_preserve_unknown_fields == Some(true) {
            return small_map(0, 2);
        }
        return Just(json!({})).boxed();
    };
    let required = schema.required.clone().unwrap_or_default();
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = properties
        .iter()
        .map(|(name, field)| {
            let name = name.clone();
            let field = value(field, depth + 1);
            if required.contains(&name) {
                field.prop_map(move |v| Some((name.clone(), v))).boxed()
            } else if depth >= MAX_DEPTH {
                Just(None).boxed()
            } else {
                proptest::option::of(field.prop_map(move |v| (name.clone(), v))).boxed()
            }
        })
        .collect();
    fields
        .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect::<Map<_, _>>()))
        .boxed()
}

fn array(schema: &JSONSchemaProps, depth: usize) -> BoxedStrategy<Value> {
    let items = match &schema.items {
        Some(JSONSchemaPropsOrArray::Schema(items)) => value(items, depth + 1),
        _ => Just(json!({})).boxed(),
    };
    let (min, max) = counts(schema.min_items, schema.max_items, depth);
    // Sets and maps hold each item (each key) once, as uniqueItems asks.
    let keys = match schema.x_kubernetes_list_type.as_deref() {
        Some("map") => Some(
            schema
                .x_kubernetes_list_map_keys
                .clone()
                .unwrap_or_default(),
        ),
        Some("set") => Some(Vec::new()),
        _ if schema.unique_items == Some(true) => Some(Vec::new()),
        _ => None,
    };
    proptest::collection::vec(items, min..=max)
        .prop_filter("list items must be unique", move |items| match &keys {
            None => true,
            Some(keys) => {
                let key = |item: &Value| -> Value {
                    if keys.is_empty() {
                        item.clone()
                    } else {
                        Value::Array(keys.iter().map(|k| item[k].clone()).collect())
                    }
                };
                let mut seen: Vec<Value> = Vec::new();
                items.iter().all(|item| {
                    let k = key(item);
                    let new = !seen.contains(&k);
                    seen.push(k);
                    new
                })
            }
        })
        .prop_map(Value::Array)
        .boxed()
}

fn string(schema: &JSONSchemaProps) -> BoxedStrategy<Value> {
    let min = schema.min_length.unwrap_or(0).max(0) as usize;
    let max = schema
        .max_length
        .map_or(min + 12, |m| (m.max(0) as usize).min(min + 12));
    if let Some(pattern) = &schema.pattern {
        let unanchored = pattern.strip_prefix('^').unwrap_or(pattern);
        let unanchored = unanchored.strip_suffix('$').unwrap_or(unanchored);
        if let Ok(strings) = proptest::string::string_regex(unanchored) {
            return strings
                .prop_filter("length within minLength and maxLength", move |s| {
                    (min..=max.max(min)).contains(&s.chars().count())
                })
                .prop_map(Value::from)
                .boxed();
        }
    }
    let fixed = |values: &[&str]| {
        proptest::sample::select(values.iter().map(|v| json!(v)).collect::<Vec<_>>()).boxed()
    };
    match schema.format.as_deref() {
        Some("date-time") => fixed(&["2024-01-31T12:00:00Z", "1999-12-31T23:59:59Z"]),
        Some("date") => fixed(&["2024-01-31", "1999-12-31"]),
        Some("byte") => fixed(&["", "aGVsbG8="]),
        _ => proptest::string::string_regex(&format!("[a-zA-Z0-9 ._-]{{{min},{}}}", max.max(min)))
            .expect("a character class with a count is a valid regex")
            .prop_map(Value::from)
            .boxed(),
    }
}

fn integer(schema: &JSONSchemaProps) -> BoxedStrategy<i64> {
    let (lo, hi) = if schema.format.as_deref() == Some("int32") {
        (i64::from(i32::MIN), i64::from(i32::MAX))
    } else {
        (i64::MIN, i64::MAX)
    };
    let mut min = schema
        .minimum
        .map_or(lo, |m| m.ceil().max(lo as f64) as i64);
    let mut max = schema
        .maximum
        .map_or(hi, |m| m.floor().min(hi as f64) as i64);
    if schema.exclusive_minimum == Some(true) && schema.minimum.is_some_and(|m| m == min as f64) {
        min = min.saturating_add(1);
    }
    if schema.exclusive_maximum == Some(true) && schema.maximum.is_some_and(|m| m == max as f64) {
        max = max.saturating_sub(1);
    }
    let step = schema.multiple_of.map_or(1, |m| (m as i64).max(1));
    if min > max {
        return Just(min).boxed();
    }
    // Mostly small numbers and the bounds themselves, where conversions go wrong.
    let small = (min.max(-1000)..=max.min(1000).max(min.max(-1000))).boxed();
    prop_oneof![4 => small, 1 => Just(min), 1 => Just(max), 1 => min..=max]
        .prop_map(move |n| {
            // multipleOf: the multiple at or below n, or the next one up if that is below min.
            let down = n - n.rem_euclid(step);
            if down >= min {
                down
            } else {
                down.saturating_add(step)
            }
        })
        .boxed()
}

fn number(schema: &JSONSchemaProps) -> BoxedStrategy<Value> {
    let min = schema.minimum.unwrap_or(-1e6);
    let max = schema.maximum.unwrap_or(1e6).max(min);
    let exclusive =
        schema.exclusive_minimum == Some(true) || schema.exclusive_maximum == Some(true);
    (min..=max)
        .prop_filter("exclusive bounds", move |n| {
            !exclusive || (*n > min && *n < max)
        })
        .prop_map(Value::from)
        .boxed()
}

/// A map of a few short keys to short strings, for schemaless objects.
fn small_map(min: usize, max: usize) -> BoxedStrategy<Value> {
    proptest::collection::btree_map("[a-z]{1,6}", "[a-z]{0,6}".prop_map(Value::from), min..=max)
        .prop_map(|map| Value::Object(map.into_iter().collect()))
        .boxed()
}

/// The count bounds of a list or map, kept small: at most three more than the minimum,
/// and the minimum itself below [`MAX_DEPTH`].
fn counts(min: Option<i64>, max: Option<i64>, depth: usize) -> (usize, usize) {
    let min = min.unwrap_or(0).max(0) as usize;
    let cap = if depth >= MAX_DEPTH { min } else { min + 3 };
    let max = max.map_or(cap, |m| (m.max(0) as usize).min(cap)).max(min);
    (min, max)
}

#[cfg(test)]
mod tests {
    use kube::CustomResource;
    use serde::Deserialize;

    use super::*;

    /// A spoke with bounds, an enum, a pattern, a list map and a map.
    #[derive(
        CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema,
    )]
    #[kube(group = "example.com", version = "v2", kind = "Widget", namespaced)]
    #[serde(rename_all = "camelCase")]
    pub struct WidgetSpec {
        #[schemars(range(min = 1, max = 9))]
        pub size: i32,
        pub mode: Mode,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(regex(pattern = r"^[a-z][a-z0-9-]{0,11}$"))]
        pub host: Option<String>,
        #[serde(default)]
        #[schemars(length(max = 2))]
        pub ports: Vec<Port>,
        #[serde(default)]
        pub labels: std::collections::BTreeMap<String, String>,
    }

    #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
    pub enum Mode {
        #[default]
        Fast,
        Safe,
    }

    #[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
    pub struct Port {
        pub name: String,
        pub port: u16,
    }

    /// Every object drawn respects the schema's bounds, enum and pattern.
    #[test]
    fn objects_respect_the_schema() {
        let crd = rkb_manifests::crd::<Widget>().unwrap();
        let schema = crd.spec.versions[0]
            .schema
            .clone()
            .unwrap()
            .open_api_v3_schema
            .unwrap();
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        );
        let strategy = objects(&schema);
        let (mut hosts, mut ports) = (0, 0);
        for _ in 0..200 {
            let object = strategy.new_tree(&mut runner).unwrap().current();
            let spec = &object["spec"];
            let size = spec["size"].as_i64().unwrap();
            assert!((1..=9).contains(&size), "{object}");
            assert!(
                ["Fast", "Safe"].contains(&spec["mode"].as_str().unwrap()),
                "{object}"
            );
            if let Some(host) = spec.get("host").and_then(Value::as_str) {
                hosts += 1;
                assert!(
                    host.len() <= 12 && host.starts_with(|c: char| c.is_ascii_lowercase()),
                    "{object}"
                );
            }
            if let Some(list) = spec.get("ports").and_then(Value::as_array) {
                ports += list.len();
                assert!(list.len() <= 2, "{object}");
            }
            serde_json::from_value::<WidgetSpec>(spec.clone())
                .unwrap_or_else(|e| panic!("{e}: {object}"));
        }
        assert!(hosts > 0 && ports > 0, "optional fields are drawn too");
    }

    #[test]
    fn a_faithful_conversion_round_trips() {
        round_trips(64, |w: Widget| Ok::<_, String>(w)).unwrap();
    }

    #[test]
    fn a_lost_field_is_named() {
        let failure = round_trips(64, |mut w: Widget| {
            // A hub without ports: they are lost on the way.
            w.spec.ports.clear();
            Ok::<_, String>(w)
        })
        .unwrap_err();
        let Problem::Differs {
            field,
            before,
            after,
        } = &failure.problem
        else {
            panic!("{failure}");
        };
        assert_eq!(field, ".spec.ports");
        assert_eq!(after.as_ref(), Some(&json!([])));
        // proptest shrinks to one port with the smallest values.
        assert_eq!(
            before.as_ref(),
            Some(&json!([{"name": "", "port": 0}])),
            "{failure}"
        );
        let message = failure.to_string();
        assert!(
            message.starts_with("widgets.example.com: .spec.ports differs after spoke -> hub -> spoke: [{\"name\":\"\",\"port\":0}] before, [] after; map it in Convertible::to_hub"),
            "{message}"
        );
        assert!(
            message.contains("\n  smallest object that shows it: {"),
            "{message}"
        );
    }

    #[test]
    fn a_refused_conversion_and_a_changed_value_are_named() {
        let failure = round_trips(64, |w: Widget| {
            if w.spec.size > 5 {
                Err("size over 5".to_owned())
            } else {
                Ok(w)
            }
        })
        .unwrap_err();
        assert_eq!(failure.problem, Problem::Conversion("size over 5".into()));
        assert_eq!(
            failure.object["spec"]["size"],
            json!(6),
            "shrunk to the first size refused"
        );
        let failure = round_trips(64, |mut w: Widget| {
            w.spec.mode = Mode::Fast;
            Ok::<_, String>(w)
        })
        .unwrap_err();
        assert_eq!(
            failure.problem,
            Problem::Differs {
                field: ".spec.mode".into(),
                before: Some(json!("Safe")),
                after: Some(json!("Fast")),
            }
        );
    }
}
