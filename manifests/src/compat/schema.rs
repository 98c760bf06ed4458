//! The changes to one version's schema: a walk over the released schema and the new one
//! side by side, through properties, list items and map values, that notes every
//! change existing objects or their clients would break on.

use std::collections::BTreeSet;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

use super::{Finding, Rule};

/// The findings of one version of one CRD.
pub(super) struct SchemaDiff<'a> {
    crd: &'a str,
    version: &'a str,
    pub(super) findings: Vec<Finding>,
}

impl<'a> SchemaDiff<'a> {
    pub(super) fn new(crd: &'a str, version: &'a str) -> Self {
        SchemaDiff {
            crd,
            version,
            findings: Vec::new(),
        }
    }

    fn push(&mut self, path: &str, rule: Rule, old: impl Into<String>, new: impl Into<String>) {
        self.findings.push(Finding {
            crd: self.crd.to_owned(),
            version: Some(self.version.to_owned()),
            path: Some(if path.is_empty() {
                ".".to_owned()
            } else {
                path.to_owned()
            }),
            rule,
            old: old.into(),
            new: new.into(),
        });
    }

    /// Compares the schemas of one field (`path`, `""` for the object itself).
    pub(super) fn compare(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        if !self.types(old, new, path) {
            // Everything below a changed type is changed with it; one finding says so.
            return;
        }
        self.default(old, new, path);
        if old.nullable == Some(true) && new.nullable != Some(true) {
            self.push(path, Rule::NullableRemoved, "nullable", "not nullable");
        }
        if old.x_kubernetes_preserve_unknown_fields == Some(true)
            && new.x_kubernetes_preserve_unknown_fields != Some(true)
        {
            self.push(
                path,
                Rule::UnknownFieldsPruned,
                "x-kubernetes-preserve-unknown-fields",
                "unknown fields pruned",
            );
        }
        self.enums(old, new, path);
        self.bounds(old, new, path);
        self.counts(old, new, path);
        if let Some(pattern) = &new.pattern
            && old.pattern.as_ref() != Some(pattern)
        {
            let old = old
                .pattern
                .as_deref()
                .map_or("no pattern".to_owned(), |p| format!("pattern {p:?}"));
            self.push(
                path,
                Rule::PatternTightened,
                old,
                format!("pattern {pattern:?}"),
            );
        }
        self.merge_types(old, new, path);
        self.rules(old, new, path);
        self.fields(old, new, path);
    }

    /// `false` when the type changed (then nothing below is compared).
    fn types(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) -> bool {
        let (old_type, new_type) = (type_of(old), type_of(new));
        let widened = new_type == "any"
            || (new_type == "int-or-string" && matches!(old_type, "integer" | "string"));
        if old_type != new_type && !widened {
            self.push(path, Rule::TypeChanged, old_type, new_type);
            return false;
        }
        if old_type == new_type
            && let Some(format) = &new.format
            && old.format.as_ref() != Some(format)
            && !widened_format(old.format.as_deref(), format)
        {
            let old = match &old.format {
                Some(f) => format!("{old_type} ({f})"),
                None => old_type.to_owned(),
            };
            self.push(
                path,
                Rule::TypeChanged,
                old,
                format!("{new_type} ({format})"),
            );
        }
        true
    }

    fn enums(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        let Some(new_values) = &new.enum_ else { return };
        match &old.enum_ {
            None => self.push(path, Rule::EnumValueRemoved, "any value", list(new_values)),
            Some(old_values) => {
                let removed: Vec<JSON> = old_values
                    .iter()
                    .filter(|v| !new_values.iter().any(|n| same(&v.0, &n.0)))
                    .cloned()
                    .collect();
                if !removed.is_empty() {
                    self.push(
                        path,
                        Rule::EnumValueRemoved,
                        list(old_values),
                        format!("{} (without {})", list(new_values), list(&removed)),
                    );
                }
                let added: Vec<JSON> = new_values
                    .iter()
                    .filter(|n| !old_values.iter().any(|v| same(&v.0, &n.0)))
                    .cloned()
                    .collect();
                if !added.is_empty() {
                    self.push(
                        path,
                        Rule::EnumValueAdded,
                        list(old_values),
                        format!("{} (with {})", list(new_values), list(&added)),
                    );
                }
            }
        }
    }

    fn bounds(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        let bound = |value: Option<f64>, exclusive: Option<bool>, name: &str| match value {
            None => format!("no {name}"),
            Some(v) if exclusive == Some(true) => format!("{name} {} (exclusive)", number(v)),
            Some(v) => format!("{name} {}", number(v)),
        };
        // Tighter: a bound where there was none, a higher minimum or lower maximum, or the
        // same one made exclusive.
        let tighter = |old: Option<f64>,
                       old_ex: Option<bool>,
                       new: Option<f64>,
                       new_ex: Option<bool>,
                       higher: bool| {
            let (old_ex, new_ex) = (old_ex == Some(true), new_ex == Some(true));
            match (old, new) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(o), Some(n)) => {
                    (if higher { n > o } else { n < o }) || (n == o && new_ex && !old_ex)
                }
            }
        };
        if tighter(
            old.minimum,
            old.exclusive_minimum,
            new.minimum,
            new.exclusive_minimum,
            true,
        ) {
            self.push(
                path,
                Rule::BoundsTightened,
                bound(old.minimum, old.exclusive_minimum, "minimum"),
                bound(new.minimum, new.exclusive_minimum, "minimum"),
            );
        }
        if tighter(
            old.maximum,
            old.exclusive_maximum,
            new.maximum,
            new.exclusive_maximum,
            false,
        ) {
            self.push(
                path,
                Rule::BoundsTightened,
                bound(old.maximum, old.exclusive_maximum, "maximum"),
                bound(new.maximum, new.exclusive_maximum, "maximum"),
            );
        }
    }

    /// The minimum and maximum counts: lengths, items, properties; and `uniqueItems`.
    fn counts(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        let checks = [
            (
                Rule::LengthTightened,
                "minLength",
                old.min_length,
                new.min_length,
                true,
            ),
            (
                Rule::LengthTightened,
                "maxLength",
                old.max_length,
                new.max_length,
                false,
            ),
            (
                Rule::ItemsTightened,
                "minItems",
                old.min_items,
                new.min_items,
                true,
            ),
            (
                Rule::ItemsTightened,
                "maxItems",
                old.max_items,
                new.max_items,
                false,
            ),
            (
                Rule::PropertiesTightened,
                "minProperties",
                old.min_properties,
                new.min_properties,
                true,
            ),
            (
                Rule::PropertiesTightened,
                "maxProperties",
                old.max_properties,
                new.max_properties,
                false,
            ),
        ];
        for (rule, name, old, new, is_min) in checks {
            let tighter = match (old, new) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some(o), Some(n)) => {
                    if is_min {
                        n > o
                    } else {
                        n < o
                    }
                }
            };
            if tighter {
                let show =
                    |v: Option<i64>| v.map_or(format!("no {name}"), |v| format!("{name} {v}"));
                self.push(path, rule, show(old), show(new));
            }
        }
        if new.unique_items == Some(true) && old.unique_items != Some(true) {
            self.push(
                path,
                Rule::ItemsTightened,
                "items may repeat",
                "uniqueItems",
            );
        }
    }

    /// `x-kubernetes-list-type`, `-list-map-keys` and `-map-type`, which server-side apply
    /// merges by; absent means atomic for lists and granular for objects.
    fn merge_types(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        let list = |s: &JSONSchemaProps| {
            let kind = s.x_kubernetes_list_type.as_deref().unwrap_or("atomic");
            match &s.x_kubernetes_list_map_keys {
                Some(keys) if kind == "map" => format!("map keyed by {}", keys.join(", ")),
                _ => kind.to_owned(),
            }
        };
        if type_of(new) == "array" && list(old) != list(new) {
            self.push(path, Rule::ListTypeChanged, list(old), list(new));
        }
        let map = |s: &JSONSchemaProps| {
            s.x_kubernetes_map_type
                .clone()
                .unwrap_or_else(|| "granular".to_owned())
        };
        if type_of(new) == "object" && map(old) != map(new) {
            self.push(path, Rule::MapTypeChanged, map(old), map(new));
        }
    }

    /// New CEL rules that hold existing objects to them: not transition rules (which
    /// compare with `oldSelf`), and without `optionalOldSelf`.
    fn rules(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        let old_rules: BTreeSet<&str> = old
            .x_kubernetes_validations
            .iter()
            .flatten()
            .map(|r| r.rule.as_str())
            .collect();
        for rule in new.x_kubernetes_validations.iter().flatten() {
            let ratchets = rule.optional_old_self == Some(true) || rule.rule.contains("oldSelf");
            if !old_rules.contains(rule.rule.as_str()) && !ratchets {
                self.push(
                    path,
                    Rule::CelRuleAdded,
                    "no such rule",
                    format!("rule {:?}", rule.rule),
                );
            }
        }
    }

    /// Properties, list items and map values: removed, newly required, or compared.
    fn fields(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        let no_properties = Default::default();
        let new_properties = new.properties.as_ref().unwrap_or(&no_properties);
        // A level made schemaless (x-kubernetes-preserve-unknown-fields, as the size policy
        // makes deep levels) keeps the fields it no longer lists: their data is not pruned.
        let keeps_unknown = new.x_kubernetes_preserve_unknown_fields == Some(true);
        for (name, old_field) in old.properties.iter().flatten() {
            let field_path = format!("{path}.{name}");
            match new_properties.get(name) {
                None if keeps_unknown => {}
                None => self.push(
                    &field_path,
                    Rule::FieldRemoved,
                    type_of(old_field),
                    "absent",
                ),
                Some(new_field) => self.compare(old_field, new_field, &field_path),
            }
        }
        let old_required: BTreeSet<&String> = old.required.iter().flatten().collect();
        for name in new.required.iter().flatten() {
            let defaulted = new_properties
                .get(name)
                .is_some_and(|f| f.default.is_some());
            if !old_required.contains(name) && !defaulted {
                let existed = old
                    .properties
                    .as_ref()
                    .is_some_and(|p| p.contains_key(name));
                self.push(
                    &format!("{path}.{name}"),
                    Rule::RequiredAdded,
                    if existed { "optional" } else { "absent" },
                    "required",
                );
            }
        }
        let items_path = format!("{path}[*]");
        if let (Some(JSONSchemaPropsOrArray::Schema(o)), Some(JSONSchemaPropsOrArray::Schema(n))) =
            (&old.items, &new.items)
        {
            self.compare(o, n, &items_path);
        }
        let values_path = format!("{path}.*");
        match (&old.additional_properties, &new.additional_properties) {
            (Some(JSONSchemaPropsOrBool::Schema(o)), Some(JSONSchemaPropsOrBool::Schema(n))) => {
                self.compare(o, n, &values_path);
            }
            _ if keeps_unknown => {}
            (
                Some(JSONSchemaPropsOrBool::Schema(o)),
                None | Some(JSONSchemaPropsOrBool::Bool(false)),
            ) => {
                self.push(&values_path, Rule::FieldRemoved, type_of(o), "absent");
            }
            (
                Some(JSONSchemaPropsOrBool::Bool(true)),
                None | Some(JSONSchemaPropsOrBool::Bool(false)),
            ) => {
                self.push(&values_path, Rule::FieldRemoved, "any", "absent");
            }
            _ => {}
        }
    }

    /// A field's default, which stored objects without the field are read with.
    fn default(&mut self, old: &JSONSchemaProps, new: &JSONSchemaProps, path: &str) {
        let show = |d: &Option<JSON>| {
            d.as_ref()
                .map_or("no default".to_owned(), |d| format!("default {}", d.0))
        };
        let unchanged = match (&old.default, &new.default) {
            (Some(o), Some(n)) => same(&o.0, &n.0),
            (None, None) => true,
            _ => false,
        };
        if !unchanged {
            self.push(
                path,
                Rule::DefaultChanged,
                show(&old.default),
                show(&new.default),
            );
        }
    }
}

/// A schema's type as findings name it: `int-or-string`, `any` for a schema without one.
fn type_of(schema: &JSONSchemaProps) -> &str {
    if schema.x_kubernetes_int_or_string == Some(true) {
        "int-or-string"
    } else {
        schema.type_.as_deref().unwrap_or("any")
    }
}

/// A format change that accepts every value the old format did.
fn widened_format(old: Option<&str>, new: &str) -> bool {
    matches!(
        (old, new),
        (Some("int32"), "int64") | (Some("float"), "double")
    )
}

/// JSON values equal as the API server compares them: `1` and `1.0` are one number.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn list(values: &[JSON]) -> String {
    let values: Vec<String> = values.iter().map(|v| v.0.to_string()).collect();
    format!("[{}]", values.join(", "))
}

fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
        format!("{}", v as i64)
    } else {
        v.to_string()
    }
}
