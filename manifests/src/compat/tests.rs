//! One test per rule: a released CRD and a new one that differ by exactly the change
//! the rule is about give exactly that finding, and the opposite, loosening change
//! gives none.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use super::{Finding, Rule, compare, removed};

const CRD: &str = "widgets.example.com";

/// A CRD with the given versions (`(name, served, storage, spec schema)`) and scope.
fn crd_of(scope: &str, versions: &[(&str, bool, bool, Value)]) -> CustomResourceDefinition {
    let versions: Vec<Value> = versions
        .iter()
        .map(|(name, served, storage, spec)| {
            json!({
                "name": name, "served": served, "storage": storage,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": spec},
                }},
            })
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": scope,
            "versions": versions,
        },
    }))
    .unwrap()
}

/// A namespaced CRD with one version, v1, whose `spec` has the given schema.
fn crd(spec: Value) -> CustomResourceDefinition {
    crd_of("Namespaced", &[("v1", true, true, spec)])
}

/// The object schema of `spec` with the given properties.
fn spec(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

/// Compares `old` and `new` both ways: `new` must break exactly `rule` at `location`
/// (one finding, whose old and new texts are returned), and going back must not.
fn breaks_one_way(
    old: &CustomResourceDefinition,
    new: &CustomResourceDefinition,
    rule: Rule,
    location: &str,
) -> (String, String) {
    assert_eq!(compare(old, old), vec![], "a CRD compared with itself");
    let back = compare(new, old);
    assert!(
        !back.iter().any(|f| f.rule == rule),
        "the loosening is no {rule}: {back:#?}"
    );
    only(compare(old, new), rule, location)
}

fn only(findings: Vec<Finding>, rule: Rule, location: &str) -> (String, String) {
    match findings.as_slice() {
        [one] if one.rule == rule && one.location() == location => {
            (one.old.clone(), one.new.clone())
        }
        _ => panic!("expected exactly {rule}@{location}, got {findings:#?}"),
    }
}

fn at(path: &str) -> String {
    format!("{CRD}/v1:{path}")
}

#[test]
fn crd_removed() {
    let old = crd(spec(json!({})));
    let finding = removed(&old);
    assert_eq!(finding.rule, Rule::CrdRemoved);
    assert_eq!(finding.location(), CRD);
    assert_eq!(
        (finding.old.as_str(), finding.new.as_str()),
        ("versions v1", "absent")
    );
}

#[test]
fn scope_changed() {
    let s = spec(json!({}));
    let old = crd_of("Namespaced", &[("v1", true, true, s.clone())]);
    let new = crd_of("Cluster", &[("v1", true, true, s)]);
    let (o, n) = only(compare(&old, &new), Rule::ScopeChanged, CRD);
    assert_eq!((o.as_str(), n.as_str()), ("Namespaced", "Cluster"));
    assert_eq!(compare(&new, &new), vec![]);
}

#[test]
fn version_removed() {
    let s = spec(json!({}));
    let old = crd_of(
        "Namespaced",
        &[
            ("v1", true, true, s.clone()),
            ("v1beta1", true, false, s.clone()),
        ],
    );
    let new = crd_of("Namespaced", &[("v1", true, true, s)]);
    let location = format!("{CRD}/v1beta1");
    let (o, n) = breaks_one_way(&old, &new, Rule::VersionRemoved, &location);
    assert_eq!((o.as_str(), n.as_str()), ("served", "absent"));
}

#[test]
fn version_unserved() {
    let s = spec(json!({}));
    let old = crd_of(
        "Namespaced",
        &[
            ("v1", true, true, s.clone()),
            ("v1beta1", true, false, s.clone()),
        ],
    );
    let new = crd_of(
        "Namespaced",
        &[("v1", true, true, s.clone()), ("v1beta1", false, false, s)],
    );
    let location = format!("{CRD}/v1beta1");
    breaks_one_way(&old, &new, Rule::VersionUnserved, &location);
}

#[test]
fn storage_version_changed() {
    let s = spec(json!({}));
    let old = crd_of(
        "Namespaced",
        &[
            ("v1", true, false, s.clone()),
            ("v1beta1", true, true, s.clone()),
        ],
    );
    let new = crd_of(
        "Namespaced",
        &[("v1", true, true, s.clone()), ("v1beta1", true, false, s)],
    );
    let (o, n) = only(compare(&old, &new), Rule::StorageVersionChanged, CRD);
    assert_eq!((o.as_str(), n.as_str()), ("v1beta1", "v1"));
}

#[test]
fn field_removed() {
    let old = crd(spec(
        json!({"size": {"type": "integer"}, "name": {"type": "string"}}),
    ));
    let new = crd(spec(json!({"name": {"type": "string"}})));
    let (o, n) = breaks_one_way(&old, &new, Rule::FieldRemoved, &at(".spec.size"));
    assert_eq!((o.as_str(), n.as_str()), ("integer", "absent"));
}

#[test]
fn field_removed_deep_in_lists_and_maps() {
    let item = |props: Value| json!({"type": "array", "items": spec(props)});
    let old = crd(spec(
        json!({"ports": item(json!({"name": {"type": "string"}, "port": {"type": "integer"}}))}),
    ));
    let new = crd(spec(
        json!({"ports": item(json!({"port": {"type": "integer"}}))}),
    ));
    breaks_one_way(&old, &new, Rule::FieldRemoved, &at(".spec.ports[*].name"));
    let map = |values: Value| json!({"type": "object", "additionalProperties": values});
    let old = crd(spec(json!({"labels": map(json!({"type": "string"}))})));
    let new = crd(spec(json!({"labels": {"type": "object"}})));
    breaks_one_way(&old, &new, Rule::FieldRemoved, &at(".spec.labels.*"));
}

#[test]
fn type_changed() {
    let old = crd(spec(json!({"size": {"type": "integer"}})));
    let new = crd(spec(json!({"size": {"type": "string", "maxLength": 3}})));
    let (o, n) = only(compare(&old, &new), Rule::TypeChanged, &at(".spec.size"));
    assert_eq!((o.as_str(), n.as_str()), ("integer", "string"));
    // A narrower format is a type change; a wider one, or int-or-string, is not.
    let int = |format: &str| crd(spec(json!({"size": {"type": "integer", "format": format}})));
    breaks_one_way(
        &int("int64"),
        &int("int32"),
        Rule::TypeChanged,
        &at(".spec.size"),
    );
    let int_or_string = crd(spec(json!({"size": {"x-kubernetes-int-or-string": true}})));
    assert_eq!(compare(&old, &int_or_string), vec![]);
}

#[test]
fn enum_value_removed() {
    let e = |values: Value| crd(spec(json!({"mode": {"type": "string", "enum": values}})));
    let (o, n) = breaks_one_way(
        &e(json!(["Fast", "Safe"])),
        &e(json!(["Safe"])),
        Rule::EnumValueRemoved,
        &at(".spec.mode"),
    );
    assert_eq!(
        (o.as_str(), n.as_str()),
        (r#"["Fast", "Safe"]"#, r#"["Safe"] (without ["Fast"])"#)
    );
    let free = crd(spec(json!({"mode": {"type": "string"}})));
    breaks_one_way(
        &free,
        &e(json!(["Safe"])),
        Rule::EnumValueRemoved,
        &at(".spec.mode"),
    );
}

#[test]
fn required_added() {
    let fields = json!({"size": {"type": "integer"}});
    let old = crd(spec(fields.clone()));
    let new = crd(json!({"type": "object", "properties": fields, "required": ["size"]}));
    let (o, _) = breaks_one_way(&old, &new, Rule::RequiredAdded, &at(".spec.size"));
    assert_eq!(o, "optional");
    // A new field that is required is as bad: stored objects lack it.
    let new_field = crd(json!({
        "type": "object", "required": ["mode"],
        "properties": {"size": {"type": "integer"}, "mode": {"type": "string"}},
    }));
    let (o, n) = only(
        compare(&old, &new_field),
        Rule::RequiredAdded,
        &at(".spec.mode"),
    );
    assert_eq!((o.as_str(), n.as_str()), ("absent", "required"));
    // A new required field with a default is filled in for stored objects.
    let defaulted = crd(json!({
        "type": "object", "required": ["size", "mode"],
        "properties": {"size": {"type": "integer", "default": 1}, "mode": {"type": "string", "default": "Safe"}},
    }));
    let findings = compare(&old, &defaulted);
    assert!(
        !findings.iter().any(|f| f.rule == Rule::RequiredAdded),
        "{findings:#?}"
    );
}

#[test]
fn bounds_tightened() {
    let b = |schema: Value| crd(spec(json!({"size": schema})));
    let loose = b(json!({"type": "integer", "minimum": 0, "maximum": 10}));
    let (o, n) = breaks_one_way(
        &loose,
        &b(json!({"type": "integer", "minimum": 1, "maximum": 10})),
        Rule::BoundsTightened,
        &at(".spec.size"),
    );
    assert_eq!((o.as_str(), n.as_str()), ("minimum 0", "minimum 1"));
    breaks_one_way(
        &loose,
        &b(json!({"type": "integer", "minimum": 0, "maximum": 5})),
        Rule::BoundsTightened,
        &at(".spec.size"),
    );
    let (_, n) = breaks_one_way(
        &loose,
        &b(json!({"type": "integer", "minimum": 0, "maximum": 10, "exclusiveMaximum": true})),
        Rule::BoundsTightened,
        &at(".spec.size"),
    );
    assert_eq!(n, "maximum 10 (exclusive)");
    breaks_one_way(
        &b(json!({"type": "integer"})),
        &b(json!({"type": "integer", "minimum": 0})),
        Rule::BoundsTightened,
        &at(".spec.size"),
    );
}

#[test]
fn length_tightened() {
    let s = |schema: Value| crd(spec(json!({"name": schema})));
    breaks_one_way(
        &s(json!({"type": "string", "maxLength": 63})),
        &s(json!({"type": "string", "maxLength": 8})),
        Rule::LengthTightened,
        &at(".spec.name"),
    );
    breaks_one_way(
        &s(json!({"type": "string"})),
        &s(json!({"type": "string", "minLength": 1})),
        Rule::LengthTightened,
        &at(".spec.name"),
    );
}

#[test]
fn items_tightened() {
    let l = |extra: Value| {
        let mut schema = json!({"type": "array", "items": {"type": "string"}});
        schema
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        crd(spec(json!({"hosts": schema})))
    };
    breaks_one_way(
        &l(json!({"maxItems": 5})),
        &l(json!({"maxItems": 3})),
        Rule::ItemsTightened,
        &at(".spec.hosts"),
    );
    breaks_one_way(
        &l(json!({})),
        &l(json!({"minItems": 1})),
        Rule::ItemsTightened,
        &at(".spec.hosts"),
    );
    breaks_one_way(
        &l(json!({})),
        &l(json!({"uniqueItems": true})),
        Rule::ItemsTightened,
        &at(".spec.hosts"),
    );
}

#[test]
fn properties_tightened() {
    let m = |extra: Value| {
        let mut schema = json!({"type": "object", "additionalProperties": {"type": "string"}});
        schema
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        crd(spec(json!({"labels": schema})))
    };
    breaks_one_way(
        &m(json!({})),
        &m(json!({"maxProperties": 8})),
        Rule::PropertiesTightened,
        &at(".spec.labels"),
    );
    breaks_one_way(
        &m(json!({"minProperties": 0})),
        &m(json!({"minProperties": 1})),
        Rule::PropertiesTightened,
        &at(".spec.labels"),
    );
}

#[test]
fn pattern_tightened() {
    let p = |schema: Value| crd(spec(json!({"name": schema})));
    let (o, n) = only(
        compare(
            &p(json!({"type": "string"})),
            &p(json!({"type": "string", "pattern": "^[a-z]+$"})),
        ),
        Rule::PatternTightened,
        &at(".spec.name"),
    );
    assert_eq!(
        (o.as_str(), n.as_str()),
        ("no pattern", r#"pattern "^[a-z]+$""#)
    );
    // A changed pattern may reject stored values: rkb cannot prove one regex wider.
    only(
        compare(
            &p(json!({"type": "string", "pattern": "^[a-z]+$"})),
            &p(json!({"type": "string", "pattern": "^[a-z0-9]+$"})),
        ),
        Rule::PatternTightened,
        &at(".spec.name"),
    );
    assert_eq!(
        compare(
            &p(json!({"type": "string", "pattern": "^a$"})),
            &p(json!({"type": "string"}))
        ),
        vec![]
    );
}

#[test]
fn default_changed() {
    let d = |schema: Value| crd(spec(json!({"size": schema})));
    let (o, n) = only(
        compare(
            &d(json!({"type": "integer", "default": 1})),
            &d(json!({"type": "integer", "default": 3})),
        ),
        Rule::DefaultChanged,
        &at(".spec.size"),
    );
    assert_eq!((o.as_str(), n.as_str()), ("default 1", "default 3"));
    only(
        compare(
            &d(json!({"type": "integer"})),
            &d(json!({"type": "integer", "default": 3})),
        ),
        Rule::DefaultChanged,
        &at(".spec.size"),
    );
    only(
        compare(
            &d(json!({"type": "integer", "default": 3})),
            &d(json!({"type": "integer"})),
        ),
        Rule::DefaultChanged,
        &at(".spec.size"),
    );
    // 3 and 3.0 are one default.
    assert_eq!(
        compare(
            &d(json!({"type": "number", "default": 3})),
            &d(json!({"type": "number", "default": 3.0}))
        ),
        vec![]
    );
}

#[test]
fn list_type_changed() {
    let l = |extra: Value| {
        let mut schema = json!({"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}});
        schema
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        crd(spec(json!({"ports": schema})))
    };
    let map = l(json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}));
    let (o, n) = only(
        compare(&l(json!({})), &map),
        Rule::ListTypeChanged,
        &at(".spec.ports"),
    );
    assert_eq!((o.as_str(), n.as_str()), ("atomic", "map keyed by name"));
    only(
        compare(&map, &l(json!({"x-kubernetes-list-type": "atomic"}))),
        Rule::ListTypeChanged,
        &at(".spec.ports"),
    );
    assert_eq!(
        compare(
            &l(json!({})),
            &l(json!({"x-kubernetes-list-type": "atomic"}))
        ),
        vec![]
    );
}

#[test]
fn map_type_changed() {
    let m = |extra: Value| {
        let mut schema = json!({"type": "object", "additionalProperties": {"type": "string"}});
        schema
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        crd(spec(json!({"labels": schema})))
    };
    only(
        compare(
            &m(json!({})),
            &m(json!({"x-kubernetes-map-type": "atomic"})),
        ),
        Rule::MapTypeChanged,
        &at(".spec.labels"),
    );
    assert_eq!(
        compare(
            &m(json!({})),
            &m(json!({"x-kubernetes-map-type": "granular"}))
        ),
        vec![]
    );
}

#[test]
fn cel_rule_added() {
    let c = |rules: Value| {
        crd(
            json!({"type": "object", "properties": {"size": {"type": "integer"}}, "x-kubernetes-validations": rules}),
        )
    };
    let none = c(json!([]));
    let (_, n) = breaks_one_way(
        &none,
        &c(json!([{"rule": "self.size % 2 == 0"}])),
        Rule::CelRuleAdded,
        &at(".spec"),
    );
    assert_eq!(n, r#"rule "self.size % 2 == 0""#);
    // Ratcheting rules spare stored objects.
    for ratchets in [
        json!([{"rule": "self.size >= oldSelf.size", "message": "size cannot shrink"}]),
        json!([{"rule": "!oldSelf.hasValue() || self.size % 2 == 0", "optionalOldSelf": true}]),
    ] {
        assert_eq!(compare(&none, &c(ratchets)), vec![]);
    }
}

#[test]
fn nullable_removed() {
    let n = |schema: Value| crd(spec(json!({"note": schema})));
    breaks_one_way(
        &n(json!({"type": "string", "nullable": true})),
        &n(json!({"type": "string"})),
        Rule::NullableRemoved,
        &at(".spec.note"),
    );
}

#[test]
fn unknown_fields_pruned() {
    let u = |schema: Value| crd(spec(json!({"extra": schema})));
    breaks_one_way(
        &u(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
        &u(json!({"type": "object"})),
        Rule::UnknownFieldsPruned,
        &at(".spec.extra"),
    );
}

#[test]
fn levels_made_schemaless_keep_their_fields() {
    // What the size policy does to deep levels: the fields' data is preserved, not pruned.
    let old = crd(spec(json!({
        "pod": spec(json!({"image": {"type": "string"}})),
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    })));
    let capped = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let new = crd(spec(json!({"pod": capped, "labels": capped})));
    assert_eq!(compare(&old, &new), vec![]);
    // Without preserve-unknown-fields, the same schemas prune the fields.
    let pruned = crd(spec(
        json!({"pod": {"type": "object"}, "labels": {"type": "object"}}),
    ));
    let removed: Vec<String> = compare(&old, &pruned)
        .iter()
        .map(Finding::location)
        .collect();
    assert_eq!(removed, [at(".spec.labels.*"), at(".spec.pod.image")]);
}

#[test]
fn additions_break_nothing() {
    let old = crd(spec(json!({"size": {"type": "integer"}})));
    let new = crd(spec(json!({
        "size": {"type": "integer"},
        "mode": {"type": "string", "enum": ["Fast"], "default": "Fast", "pattern": "^F", "maxLength": 4},
    })));
    assert_eq!(compare(&old, &new), vec![]);
    let s = spec(json!({}));
    let more_versions = crd_of(
        "Namespaced",
        &[("v1", true, true, s.clone()), ("v2", true, false, s)],
    );
    assert_eq!(compare(&crd(spec(json!({}))), &more_versions), vec![]);
}

#[test]
fn every_rule_has_a_test() {
    // Each rule's name appears as a test function in this file.
    let source = include_str!("tests.rs");
    for rule in Rule::ALL {
        let test = format!("fn {}()", rule.name().replace('-', "_"));
        assert!(source.contains(&test), "no test `{test}` for rule {rule}");
    }
}

/// The pairs of `testdata/compat/` (which `hack/crdify-compare.sh` also gives crdify): a
/// directory named after a rule breaks exactly that rule, once; `ok-*` breaks nothing.
#[test]
fn testdata_pairs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/compat");
    let read = |path: std::path::PathBuf| -> CustomResourceDefinition {
        serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    let mut rules_seen = std::collections::BTreeSet::new();
    let mut pairs = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let findings = compare(&read(path.join("old.yaml")), &read(path.join("new.yaml")));
        pairs += 1;
        if name.starts_with("ok-") {
            assert_eq!(findings, vec![], "{name}");
            continue;
        }
        let rule: Rule = name.parse().unwrap();
        assert!(
            matches!(findings.as_slice(), [one] if one.rule == rule),
            "{name}: {findings:#?}"
        );
        rules_seen.insert(rule);
    }
    assert!(pairs >= 26, "{pairs} pairs");
    // Every rule but crd-removed (one CRD compared with none) has a pair.
    let missing: Vec<Rule> = Rule::ALL
        .into_iter()
        .filter(|r| *r != Rule::CrdRemoved && !rules_seen.contains(r))
        .collect();
    assert_eq!(missing, vec![]);
}

#[test]
fn enum_value_added() {
    let e = |values: Value| crd(spec(json!({"mode": {"type": "string", "enum": values}})));
    let (o, n) = breaks_one_way(
        &e(json!(["Fast", "Safe"])),
        &e(json!(["Fast", "Safe", "Eco"])),
        Rule::EnumValueAdded,
        &at(".spec.mode"),
    );
    assert_eq!(
        (o.as_str(), n.as_str()),
        (
            r#"["Fast", "Safe"]"#,
            r#"["Fast", "Safe", "Eco"] (with ["Eco"])"#
        )
    );
    assert!(!Rule::EnumValueAdded.breaks());
    assert!(Rule::ALL.iter().filter(|r| !r.breaks()).count() == 1);
}
