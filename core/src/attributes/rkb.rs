//! The keys of `#[rkb(...)]`: controller-gen's CRD markers with Rust spellings.

use crate::schema::{
    EMBEDDED_RESOURCE, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, PRESERVE_UNKNOWN_FIELDS,
    VALIDATIONS,
};

/// One key of `#[rkb(...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key as written: `min_length`.
    pub name: &'static str,
    /// What it puts into the CRD.
    pub writes: Writes,
    /// The shape of its value, which decides how it is parsed.
    pub kind: Kind,
    pub places: Places,
    /// Whether it may be written more than once (one CEL rule, one column each).
    pub repeatable: bool,
    /// The controller-gen marker that does the same.
    pub marker: &'static str,
    /// The key as one writes it, with its value: `min_length = 1`.
    pub example: &'static str,
    /// The schema `example` writes, as JSON, for a key that writes [`Writes::Keyword`];
    /// empty otherwise.
    pub schema: &'static str,
    /// What it is for, in a line.
    pub doc: &'static str,
}

/// What a key puts into the CRD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// This schema keyword, set from the key's value; the key `create api
    /// --external-crd` writes for the keyword.
    Keyword(&'static str),
    /// What the named key writes: controller-gen's other spelling (`+structType` for
    /// `+mapType`). The keyword maps back to the named key.
    SameAs(&'static str),
    /// Schema keywords the key implies without taking them from its value: the field's
    /// [`crate::schema::Shape`], or a CEL rule.
    Implies(&'static [&'static str]),
    /// Fields of the CRD rather than of the schema (dotted paths below a version or the
    /// CRD's spec).
    Crd(&'static [&'static str]),
}

/// The shape of a key's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Any number: `minimum = -1.5`.
    Number,
    /// A number above zero.
    Positive,
    /// A non-negative integer: lengths and counts.
    Count,
    /// A regular expression string.
    Pattern,
    /// An OpenAPI format string, one of [`crate::schema::FORMATS`].
    Format,
    /// A key without value.
    Flag,
    /// A list of literals.
    Literals,
    /// Any expression, serialized to JSON.
    Json,
    /// `atomic`, `set` or `map`.
    ListType,
    /// `atomic` or `granular`.
    MapType,
    /// A list of strings.
    Strings,
    /// `validation(rule = ..., message = ..., ...)`.
    Validation,
    /// `items(...)`.
    Items,
    /// A non-empty string: `title = "..."`.
    Text,
    /// `external_docs(url = "...", description = "...")`.
    ExternalDocs,
    /// A list of field names: `exactly_one_of = ["a", "b"]`.
    FieldGroup,
    /// A key of the CRD rather than of the schema, on the spec struct; each parses its
    /// own value.
    Crd,
}

impl Kind {
    /// The values an identifier-valued kind takes.
    pub const fn choices(self) -> &'static [&'static str] {
        match self {
            Kind::ListType => &["atomic", "set", "map"],
            Kind::MapType => &["atomic", "granular"],
            _ => &[],
        }
    }
}

/// Where a key may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Places {
    /// On a struct field, or a field of an enum variant.
    pub field: bool,
    /// On a struct or enum under `#[rkb_runtime::schema]`, or on the spec struct.
    pub ty: bool,
    /// Inside `items(...)`, for the elements of a list.
    pub items: bool,
    /// On the spec struct under `#[rkb_runtime::api]` only: the CRD's own keys.
    pub spec: bool,
}

const FIELD: Places = Places {
    field: true,
    ty: false,
    items: false,
    spec: false,
};
const FIELD_ITEMS: Places = Places {
    items: true,
    ..FIELD
};
const FIELD_TYPE: Places = Places { ty: true, ..FIELD };
const TYPE: Places = Places {
    field: false,
    ..FIELD_TYPE
};
const ANYWHERE: Places = Places {
    items: true,
    ..FIELD_TYPE
};
const SPEC: Places = Places {
    field: false,
    spec: true,
    ..FIELD
};

impl Key {
    /// The schema keyword this key's value sets, [`Writes::SameAs`] followed.
    pub fn keyword(&self) -> Option<&'static str> {
        match self.writes {
            Writes::Keyword(keyword) => Some(keyword),
            Writes::SameAs(other) => find(other).and_then(|key| key.keyword()),
            Writes::Implies(_) | Writes::Crd(_) => None,
        }
    }
}

/// The key named `name`.
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.name == name)
}

/// The key that writes the schema keyword `keyword` from its value: the inverse of
/// [`Key::keyword`], which `create api --external-crd` uses.
pub fn for_keyword(keyword: &str) -> Option<&'static Key> {
    KEYS.iter()
        .find(|key| matches!(key.writes, Writes::Keyword(k) if k == keyword))
}

/// The schema keywords set from a key's value that may be written where `allowed` says.
pub fn keywords_where(allowed: impl Fn(&Places) -> bool) -> Vec<&'static str> {
    KEYS.iter()
        .filter(|key| allowed(&key.places))
        .filter_map(|key| match key.writes {
            Writes::Keyword(keyword) => Some(keyword),
            _ => None,
        })
        .collect()
}

/// Spellings people bring from controller-gen markers or kube, and the key each means:
/// suggested for an unknown key.
pub const ALIASES: &[(&str, &str)] = &[
    ("enum", "enum_values"),
    ("r#enum", "enum_values"),
    ("XValidation", "validation"),
    ("x_validation", "validation"),
    ("cel", "validation"),
    ("rule", "validation"),
    ("shortname", "short_names"),
    ("shortName", "short_names"),
    ("category", "categories"),
    ("printcolumns", "printcolumn"),
    ("listMapKey", "list_map_keys"),
    ("list_map_key", "list_map_keys"),
    ("Schemaless", "schemaless"),
    ("storageversion", "storage"),
    ("ExactlyOneOf", "exactly_one_of"),
    ("AtMostOneOf", "at_most_one_of"),
    ("AtLeastOneOf", "at_least_one_of"),
    ("one_of", "exactly_one_of"),
    ("externalDocs", "external_docs"),
    ("structType", "struct_type"),
    ("mapType", "map_type"),
    ("listType", "list_type"),
    ("k8s_immutable", "immutable"),
];

/// Every key, in the order the reference lists them.
pub const KEYS: &[Key] = &[
    Key {
        name: "minimum",
        writes: Writes::Keyword("minimum"),
        kind: Kind::Number,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:Minimum",
        example: "minimum = 0",
        schema: r#"{"minimum":0}"#,
        doc: "The smallest value a number may take.",
    },
    Key {
        name: "maximum",
        writes: Writes::Keyword("maximum"),
        kind: Kind::Number,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:Maximum",
        example: "maximum = 10",
        schema: r#"{"maximum":10}"#,
        doc: "The largest value a number may take.",
    },
    Key {
        name: "exclusive_minimum",
        writes: Writes::Keyword("exclusiveMinimum"),
        kind: Kind::Flag,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:ExclusiveMinimum",
        example: "exclusive_minimum, minimum = 0",
        schema: r#"{"exclusiveMinimum":true,"minimum":0}"#,
        doc: "Makes `minimum` exclusive: the value must be greater.",
    },
    Key {
        name: "exclusive_maximum",
        writes: Writes::Keyword("exclusiveMaximum"),
        kind: Kind::Flag,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:ExclusiveMaximum",
        example: "exclusive_maximum, maximum = 10",
        schema: r#"{"exclusiveMaximum":true,"maximum":10}"#,
        doc: "Makes `maximum` exclusive: the value must be smaller.",
    },
    Key {
        name: "multiple_of",
        writes: Writes::Keyword("multipleOf"),
        kind: Kind::Positive,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:MultipleOf",
        example: "multiple_of = 2",
        schema: r#"{"multipleOf":2}"#,
        doc: "A number must be a multiple of this (greater than 0).",
    },
    Key {
        name: "min_length",
        writes: Writes::Keyword("minLength"),
        kind: Kind::Count,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:MinLength",
        example: "min_length = 1",
        schema: r#"{"minLength":1}"#,
        doc: "The fewest characters a string may have.",
    },
    Key {
        name: "max_length",
        writes: Writes::Keyword("maxLength"),
        kind: Kind::Count,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:MaxLength",
        example: "max_length = 63",
        schema: r#"{"maxLength":63}"#,
        doc: "The most characters a string may have; it also bounds the cost of CEL rules.",
    },
    Key {
        name: "pattern",
        writes: Writes::Keyword("pattern"),
        kind: Kind::Pattern,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:Pattern",
        example: r#"pattern = "^[a-z]+$""#,
        schema: r#"{"pattern":"^[a-z]+$"}"#,
        doc: "A regular expression a string must match, checked at compile time.",
    },
    Key {
        name: "format",
        writes: Writes::Keyword("format"),
        kind: Kind::Format,
        places: FIELD_ITEMS,
        repeatable: false,
        marker: "+kubebuilder:validation:Format",
        example: r#"format = "date-time""#,
        schema: r#"{"format":"date-time"}"#,
        doc: "A string format Kubernetes validates (`date-time`, `email`, `uuid`, ...).",
    },
    Key {
        name: "enum_values",
        writes: Writes::Keyword("enum"),
        kind: Kind::Literals,
        places: ANYWHERE,
        repeatable: false,
        marker: "+kubebuilder:validation:Enum",
        example: r#"enum_values = ["a", "b"]"#,
        schema: r#"{"enum":["a","b"]}"#,
        doc: "The values allowed, for a type that is no Rust enum (a Rust enum lists its own).",
    },
    Key {
        name: "min_items",
        writes: Writes::Keyword("minItems"),
        kind: Kind::Count,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:validation:MinItems",
        example: "min_items = 1",
        schema: r#"{"minItems":1}"#,
        doc: "The fewest elements a list may have.",
    },
    Key {
        name: "max_items",
        writes: Writes::Keyword("maxItems"),
        kind: Kind::Count,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:validation:MaxItems",
        example: "max_items = 10",
        schema: r#"{"maxItems":10}"#,
        doc: "The most elements a list may have.",
    },
    Key {
        name: "min_properties",
        writes: Writes::Keyword("minProperties"),
        kind: Kind::Count,
        places: FIELD_TYPE,
        repeatable: false,
        marker: "+kubebuilder:validation:MinProperties",
        example: "min_properties = 1",
        schema: r#"{"minProperties":1}"#,
        doc: "The fewest entries a map or fields an object may have.",
    },
    Key {
        name: "max_properties",
        writes: Writes::Keyword("maxProperties"),
        kind: Kind::Count,
        places: FIELD_TYPE,
        repeatable: false,
        marker: "+kubebuilder:validation:MaxProperties",
        example: "max_properties = 10",
        schema: r#"{"maxProperties":10}"#,
        doc: "The most entries a map or fields an object may have.",
    },
    Key {
        name: "default",
        writes: Writes::Keyword("default"),
        kind: Kind::Json,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:default",
        example: "default = 1",
        schema: r#"{"default":1}"#,
        doc: "The value the API server fills in; any expression, serialized to JSON \
              (`default = Policy::Allow`). `#[serde(default)]` writes one too.",
    },
    Key {
        name: "example",
        writes: Writes::Keyword("example"),
        kind: Kind::Json,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:example",
        example: r#"example = "nginx:1.27""#,
        schema: r#"{"example":"nginx:1.27"}"#,
        doc: "An example value for readers of the schema; any expression, serialized to JSON.",
    },
    Key {
        name: "nullable",
        writes: Writes::Keyword("nullable"),
        kind: Kind::Flag,
        places: FIELD,
        repeatable: false,
        marker: "+nullable",
        example: "nullable",
        schema: r#"{"nullable":true}"#,
        doc: "Lets the field be `null`; an `Option` is optional, not nullable, without it.",
    },
    Key {
        name: "list_type",
        writes: Writes::Keyword(LIST_TYPE),
        kind: Kind::ListType,
        places: FIELD,
        repeatable: false,
        marker: "+listType",
        example: "list_type = set",
        schema: r#"{"x-kubernetes-list-type":"set"}"#,
        doc: "How server-side apply merges a list: `atomic`, `set` (no duplicates) or `map`.",
    },
    Key {
        name: "list_map_keys",
        writes: Writes::Keyword(LIST_MAP_KEYS),
        kind: Kind::Strings,
        places: FIELD,
        repeatable: false,
        marker: "+listMapKey",
        example: r#"list_map_keys = ["name"], list_type = map"#,
        schema: r#"{"x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map"}"#,
        doc: "The item fields that identify an entry of a `list_type = map` list.",
    },
    Key {
        name: "map_type",
        writes: Writes::Keyword(MAP_TYPE),
        kind: Kind::MapType,
        places: ANYWHERE,
        repeatable: false,
        marker: "+mapType",
        example: "map_type = atomic",
        schema: r#"{"x-kubernetes-map-type":"atomic"}"#,
        doc: "How server-side apply merges a map or struct: `atomic` (replaced whole) or \
              `granular`.",
    },
    Key {
        name: "struct_type",
        writes: Writes::SameAs("map_type"),
        kind: Kind::MapType,
        places: ANYWHERE,
        repeatable: false,
        marker: "+structType",
        example: "struct_type = atomic",
        schema: r#"{"x-kubernetes-map-type":"atomic"}"#,
        doc: "`map_type` as controller-gen spells it for structs.",
    },
    Key {
        name: "preserve_unknown_fields",
        writes: Writes::Keyword(PRESERVE_UNKNOWN_FIELDS),
        kind: Kind::Flag,
        places: FIELD_TYPE,
        repeatable: false,
        marker: "+kubebuilder:pruning:PreserveUnknownFields",
        example: "preserve_unknown_fields",
        schema: r#"{"x-kubernetes-preserve-unknown-fields":true}"#,
        doc: "Keeps fields the schema does not name instead of pruning them.",
    },
    Key {
        name: "embedded_resource",
        writes: Writes::Implies(&[EMBEDDED_RESOURCE, PRESERVE_UNKNOWN_FIELDS]),
        kind: Kind::Flag,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:validation:EmbeddedResource",
        example: "embedded_resource",
        schema: "",
        doc: "The field holds a whole Kubernetes object (apiVersion, kind, metadata).",
    },
    Key {
        name: "int_or_string",
        writes: Writes::Implies(&[INT_OR_STRING]),
        kind: Kind::Flag,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:validation:XIntOrString",
        example: "int_or_string",
        schema: "",
        doc: "The field takes an integer or a string, as k8s-openapi's `IntOrString` does.",
    },
    Key {
        name: "schemaless",
        writes: Writes::Implies(&[PRESERVE_UNKNOWN_FIELDS]),
        kind: Kind::Flag,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:validation:Schemaless",
        example: "schemaless",
        schema: "",
        doc: "The field takes any value, kept as is: its Rust type's schema is left out.",
    },
    Key {
        name: "validation",
        writes: Writes::Keyword(VALIDATIONS),
        kind: Kind::Validation,
        places: ANYWHERE,
        repeatable: true,
        marker: "+kubebuilder:validation:XValidation",
        example: r#"validation(rule = "self.min <= self.max", message = "min must not exceed max")"#,
        schema: r#"{"x-kubernetes-validations":[{"rule":"self.min <= self.max","message":"min must not exceed max"}]}"#,
        doc: "A CEL rule, with `message`, `message_expression`, `reason`, `field_path` and \
              `optional_old_self`; one per rule.",
    },
    Key {
        name: "immutable",
        writes: Writes::Implies(&[VALIDATIONS]),
        kind: Kind::Flag,
        places: FIELD,
        repeatable: false,
        marker: "+k8s:immutable",
        example: "immutable",
        schema: "",
        doc: "The value cannot change once set: the rule `self == oldSelf`.",
    },
    Key {
        name: "exactly_one_of",
        writes: Writes::Implies(&[VALIDATIONS]),
        kind: Kind::FieldGroup,
        places: TYPE,
        repeatable: true,
        marker: "+kubebuilder:validation:ExactlyOneOf",
        example: r#"exactly_one_of = ["cron", "interval"]"#,
        schema: "",
        doc: "Exactly one of these `Option` fields (JSON names) is set: a CEL rule.",
    },
    Key {
        name: "at_most_one_of",
        writes: Writes::Implies(&[VALIDATIONS]),
        kind: Kind::FieldGroup,
        places: TYPE,
        repeatable: true,
        marker: "+kubebuilder:validation:AtMostOneOf",
        example: r#"at_most_one_of = ["cron", "interval"]"#,
        schema: "",
        doc: "At most one of these `Option` fields (JSON names) is set: a CEL rule.",
    },
    Key {
        name: "at_least_one_of",
        writes: Writes::Implies(&[VALIDATIONS]),
        kind: Kind::FieldGroup,
        places: TYPE,
        repeatable: true,
        marker: "+kubebuilder:validation:AtLeastOneOf",
        example: r#"at_least_one_of = ["cron", "interval"]"#,
        schema: "",
        doc: "At least one of these `Option` fields (JSON names) is set: a CEL rule.",
    },
    Key {
        name: "title",
        writes: Writes::Keyword("title"),
        kind: Kind::Text,
        places: FIELD_TYPE,
        repeatable: false,
        marker: "+kubebuilder:title",
        example: r#"title = "Replicas""#,
        schema: r#"{"title":"Replicas"}"#,
        doc: "A short title for the schema.",
    },
    Key {
        name: "external_docs",
        writes: Writes::Keyword("externalDocs"),
        kind: Kind::ExternalDocs,
        places: FIELD_TYPE,
        repeatable: false,
        marker: "+kubebuilder:externalDocs",
        example: r#"external_docs(url = "https://example.com/docs", description = "The guide")"#,
        schema: r#"{"externalDocs":{"url":"https://example.com/docs","description":"The guide"}}"#,
        doc: "A link to more documentation.",
    },
    Key {
        name: "items",
        writes: Writes::Implies(&["items"]),
        kind: Kind::Items,
        places: FIELD,
        repeatable: false,
        marker: "+kubebuilder:validation:items:...",
        example: r#"items(max_length = 63, pattern = "^[a-z]+$")"#,
        schema: "",
        doc: "Keys for the elements of a list: value checks, `map_type`/`struct_type` and \
              CEL rules.",
    },
    Key {
        name: "printcolumn",
        writes: Writes::Crd(&["additionalPrinterColumns"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: true,
        marker: "+kubebuilder:printcolumn",
        example: r#"printcolumn(name = "Size", type = integer, json_path = ".spec.size")"#,
        schema: "",
        doc: "A column of `kubectl get`, with `description`, `format` and `priority`; one \
              per column.",
    },
    Key {
        name: "short_names",
        writes: Writes::Crd(&["names.shortNames"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: false,
        marker: "+kubebuilder:resource:shortName",
        example: r#"short_names = ["mc"]"#,
        schema: "",
        doc: "Short names for `kubectl get mc`.",
    },
    Key {
        name: "categories",
        writes: Writes::Crd(&["names.categories"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: false,
        marker: "+kubebuilder:resource:categories",
        example: r#"categories = ["all"]"#,
        schema: "",
        doc: "Groups the kind is listed in, as `kubectl get all`.",
    },
    Key {
        name: "selectable",
        writes: Writes::Crd(&["selectableFields"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: false,
        marker: "+kubebuilder:selectablefield",
        example: r#"selectable = [".spec.color"]"#,
        schema: "",
        doc: "Fields `kubectl get --field-selector` can select on.",
    },
    Key {
        name: "scale",
        writes: Writes::Crd(&["subresources.scale"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: false,
        marker: "+kubebuilder:subresource:scale",
        example: r#"scale(spec_replicas = ".spec.replicas", status_replicas = ".status.replicas")"#,
        schema: "",
        doc: "The scale subresource, with `label_selector`; needs a status.",
    },
    Key {
        name: "storage",
        writes: Writes::Crd(&["storage"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: false,
        marker: "+kubebuilder:storageversion",
        example: "storage = false",
        schema: "",
        doc: "Whether the API server stores this version; with several versions, \
              `storage = false` on all but one.",
    },
    Key {
        name: "served",
        writes: Writes::Crd(&["served"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: false,
        marker: "+kubebuilder:unservedversion",
        example: "served = false",
        schema: "",
        doc: "Whether the API server serves this version.",
    },
    Key {
        name: "deprecated",
        writes: Writes::Crd(&["deprecated", "deprecationWarning"]),
        kind: Kind::Crd,
        places: SPEC,
        repeatable: false,
        marker: "+kubebuilder:deprecatedversion",
        example: r#"deprecated = "use v1""#,
        schema: "",
        doc: "Marks this version deprecated, with the warning clients see.",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_alias_names_a_key() {
        for (i, key) in KEYS.iter().enumerate() {
            assert!(
                KEYS[..i].iter().all(|k| k.name != key.name),
                "{} twice",
                key.name
            );
        }
        for (alias, key) in ALIASES {
            assert!(find(key).is_some(), "{alias} -> {key}");
            assert!(find(alias).is_none(), "{alias} is a key");
        }
    }

    /// key -> keyword -> key, for every key that sets a keyword from its value.
    #[test]
    fn every_keyword_maps_back_to_its_key() {
        for key in KEYS {
            let Some(keyword) = key.keyword() else {
                assert!(
                    key.schema.is_empty(),
                    "{}: a schema without keyword",
                    key.name
                );
                continue;
            };
            let back = for_keyword(keyword).unwrap_or_else(|| panic!("{keyword}"));
            match key.writes {
                Writes::SameAs(other) => assert_eq!(back.name, other),
                _ => assert_eq!(back.name, key.name),
            }
            assert!(
                key.schema.contains(&format!("\"{keyword}\":")),
                "{}: its schema example does not set {keyword}",
                key.name
            );
        }
    }

    #[test]
    fn examples_start_with_their_key_and_markers_are_controller_gens() {
        for key in KEYS {
            assert!(key.example.starts_with(key.name), "{}", key.example);
            assert!(key.marker.starts_with('+'), "{}", key.marker);
            assert!(key.doc.ends_with('.'), "{}", key.doc);
            assert!(
                key.places.field || key.places.ty || key.places.items || key.places.spec,
                "{} goes nowhere",
                key.name
            );
            assert_eq!(key.places.spec, key.kind == Kind::Crd, "{}", key.name);
        }
    }
}
