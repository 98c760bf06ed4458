//! The table of `#[rkb(...)]` keys: value kind, where each may be written, aliases.

use rkb_core::schema;

use super::Place;
use crate::suggest;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Any number: `minimum = -1.5`.
    Number,
    /// A number above zero.
    Positive,
    /// A non-negative integer: lengths and counts.
    Count,
    /// A regular expression string.
    Pattern,
    /// An OpenAPI format string.
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
    /// A kube CRD key; translated by [`crd_entry`].
    Crd,
}

pub(super) struct Key {
    pub(super) name: &'static str,
    /// The OpenAPI keyword it sets; empty when it is not a plain keyword.
    pub(super) json: &'static str,
    pub(super) kind: Kind,
    pub(super) field: bool,
    pub(super) ty: bool,
    pub(super) items: bool,
}

pub(super) const fn key(
    name: &'static str,
    json: &'static str,
    kind: Kind,
    places: [bool; 3],
) -> Key {
    Key {
        name,
        json,
        kind,
        field: places[0],
        ty: places[1],
        items: places[2],
    }
}

// [field, type, items]
pub(super) const F: [bool; 3] = [true, false, false];

pub(super) const FI: [bool; 3] = [true, false, true];

pub(super) const FT: [bool; 3] = [true, true, false];

pub(super) const T: [bool; 3] = [false, true, false];

pub(super) const FTI: [bool; 3] = [true, true, true];

pub(super) const CRD: [bool; 3] = [false, false, false];

pub(super) const KEYS: &[Key] = &[
    key("minimum", "minimum", Kind::Number, FI),
    key("maximum", "maximum", Kind::Number, FI),
    key("exclusive_minimum", "exclusiveMinimum", Kind::Flag, FI),
    key("exclusive_maximum", "exclusiveMaximum", Kind::Flag, FI),
    key("multiple_of", "multipleOf", Kind::Positive, FI),
    key("min_length", "minLength", Kind::Count, FI),
    key("max_length", "maxLength", Kind::Count, FI),
    key("pattern", "pattern", Kind::Pattern, FI),
    key("format", "format", Kind::Format, FI),
    key("enum_values", "enum", Kind::Literals, FTI),
    key("min_items", "minItems", Kind::Count, F),
    key("max_items", "maxItems", Kind::Count, F),
    key("min_properties", "minProperties", Kind::Count, FT),
    key("max_properties", "maxProperties", Kind::Count, FT),
    key("default", "default", Kind::Json, F),
    key("example", "example", Kind::Json, F),
    key("nullable", schema::NULLABLE_ASKED, Kind::Flag, F),
    key("list_type", schema::LIST_TYPE, Kind::ListType, F),
    key("list_map_keys", schema::LIST_MAP_KEYS, Kind::Strings, F),
    key("map_type", schema::MAP_TYPE, Kind::MapType, FTI),
    // controller-gen's `+structType`: the same keyword, on structs.
    key("struct_type", schema::MAP_TYPE, Kind::MapType, FTI),
    key(
        "preserve_unknown_fields",
        schema::PRESERVE_UNKNOWN_FIELDS,
        Kind::Flag,
        FT,
    ),
    key("embedded_resource", "", Kind::Flag, F),
    key("int_or_string", "", Kind::Flag, F),
    key("schemaless", "", Kind::Flag, F),
    key("validation", schema::VALIDATIONS, Kind::Validation, FTI),
    key("immutable", "", Kind::Flag, F),
    key("exactly_one_of", "", Kind::FieldGroup, T),
    key("at_most_one_of", "", Kind::FieldGroup, T),
    key("at_least_one_of", "", Kind::FieldGroup, T),
    key("title", "title", Kind::Text, FT),
    key("external_docs", "externalDocs", Kind::ExternalDocs, FT),
    key("items", "", Kind::Items, F),
    key("printcolumn", "", Kind::Crd, CRD),
    key("short_names", "", Kind::Crd, CRD),
    key("categories", "", Kind::Crd, CRD),
    key("selectable", "", Kind::Crd, CRD),
    key("scale", "", Kind::Crd, CRD),
    key("storage", "", Kind::Crd, CRD),
    key("served", "", Kind::Crd, CRD),
    key("deprecated", "", Kind::Crd, CRD),
];

/// Keys that may appear more than once.
pub(super) const REPEATABLE: &[&str] = &[
    "validation",
    "printcolumn",
    "exactly_one_of",
    "at_most_one_of",
    "at_least_one_of",
];

/// Spellings people bring from controller-gen markers or kube.
pub(super) const ALIASES: &[(&str, &str)] = &[
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

pub(super) fn allowed(def: &Key, place: Place) -> bool {
    match place {
        Place::Field => def.field,
        Place::Type => def.ty,
        Place::Spec => def.ty || def.kind == Kind::Crd,
        Place::Items => def.items,
    }
}

pub(super) fn place_name(place: Place) -> &'static str {
    match place {
        Place::Field => "a field",
        Place::Type => "a type",
        Place::Spec => "the spec struct",
        Place::Items => "`items(...)`",
    }
}

pub(super) fn misplaced(def: &Key, place: Place) -> String {
    let name = def.name;
    if def.kind == Kind::Crd {
        return format!(
            "`{name}` describes the CRD: put it on the spec struct, next to \
             #[rkb_runtime::api] and #[kube(...)]"
        );
    }
    if def.kind == Kind::FieldGroup {
        return format!(
            "`{name}` names fields of a struct: put it on the struct, next to \
             #[rkb_runtime::schema] or #[rkb_runtime::api]"
        );
    }
    if def.field && !def.ty && matches!(place, Place::Type | Place::Spec) {
        return format!("`{name}` applies to a field's value: put #[rkb({name} ...)] on the field");
    }
    if place == Place::Items {
        return format!("`{name}` cannot apply to array items: put it on the field itself");
    }
    format!("`{name}` is not allowed on {}", place_name(place))
}

pub(super) fn unknown_key(name: &str, place: Place) -> String {
    let names: Vec<&str> = KEYS
        .iter()
        .filter(|k| allowed(k, place))
        .map(|k| k.name)
        .collect();
    if matches!(name, "optional" | "required") {
        return format!(
            "there is no `{name}` key: a field is optional when its type is Option<T> or it \
             has #[serde(default)], and required otherwise"
        );
    }
    if matches!(name, "skipversion" | "skip_version" | "skip") {
        return format!(
            "there is no `{name}` key: a version is in the CRD when its kind is in \
             `manifests()` (src/lib.rs); leave the version's `crd::<...>()` out there"
        );
    }
    if name == "unique_items" {
        return "`unique_items` is forbidden by Kubernetes (its validation cost is quadratic): \
                use `list_type = set` to reject duplicates"
            .to_owned();
    }
    let all: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
    let hint = suggest::intended_key(name, ALIASES, &all);
    let at = format!("#[rkb(...)] on {}", place_name(place));
    suggest::unknown_key(name, &at, hint, &names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_names_a_key() {
        for (_, key) in ALIASES {
            assert!(KEYS.iter().any(|k| k.name == *key), "{key}");
        }
    }
}
