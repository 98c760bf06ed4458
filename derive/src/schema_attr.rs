//! The `#[rkb(...)]` attribute model: what each key means, where it may be
//! written, and the checks that make misuse a compile error with a span and a
//! suggestion. Code generation (`api.rs`) only sees checked [`Spec`]s.
//!
//! The keys mirror controller-gen's markers (`+kubebuilder:validation:*`,
//! `+listType`, `+kubebuilder:printcolumn`, ...) with Rust spellings.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{Attribute, LitStr};

use crate::ctxt::Ctxt;
use crate::meta::{self, Entry, Number, Value};
use crate::suggest;
use rkb_core::schema;

/// Where an `#[rkb(...)]` attribute is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A struct field or a field of an enum variant.
    Field,
    /// A struct or enum under `#[rkb_runtime::schema]`.
    Type,
    /// The spec struct under `#[rkb_runtime::api]`: type keys plus CRD keys.
    Spec,
    /// Inside `items(...)`: the elements of an array field.
    Items,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
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
    /// A kube CRD key; translated by [`crd_entry`].
    Crd,
}

struct Key {
    name: &'static str,
    /// The OpenAPI keyword it sets; empty when it is not a plain keyword.
    json: &'static str,
    kind: Kind,
    field: bool,
    ty: bool,
    items: bool,
}

const fn key(name: &'static str, json: &'static str, kind: Kind, places: [bool; 3]) -> Key {
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
const F: [bool; 3] = [true, false, false];
const FI: [bool; 3] = [true, false, true];
const FT: [bool; 3] = [true, true, false];
const FTI: [bool; 3] = [true, true, true];
const CRD: [bool; 3] = [false, false, false];

const KEYS: &[Key] = &[
    key("minimum", "minimum", Kind::Number, FI),
    key("maximum", "maximum", Kind::Number, FI),
    key("exclusive_minimum", "exclusiveMinimum", Kind::Flag, FI),
    key("exclusive_maximum", "exclusiveMaximum", Kind::Flag, FI),
    key("multiple_of", "multipleOf", Kind::Positive, FI),
    key("min_length", "minLength", Kind::Count, FI),
    key("max_length", "maxLength", Kind::Count, FI),
    key("pattern", "pattern", Kind::Pattern, FI),
    key("format", "format", Kind::Format, FI),
    key("enum_values", "enum", Kind::Literals, FI),
    key("min_items", "minItems", Kind::Count, F),
    key("max_items", "maxItems", Kind::Count, F),
    key("min_properties", "minProperties", Kind::Count, FT),
    key("max_properties", "maxProperties", Kind::Count, FT),
    key("default", "default", Kind::Json, F),
    key("example", "example", Kind::Json, F),
    key("nullable", "nullable", Kind::Flag, F),
    key("list_type", schema::LIST_TYPE, Kind::ListType, F),
    key("list_map_keys", schema::LIST_MAP_KEYS, Kind::Strings, F),
    key("map_type", schema::MAP_TYPE, Kind::MapType, FT),
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
const REPEATABLE: &[&str] = &["validation", "printcolumn"];

/// Spellings people bring from controller-gen markers or kube.
const ALIASES: &[(&str, &str)] = &[
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
];

/// Formats Kubernetes validates (k8s.io/kube-openapi strfmt).
const FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "date",
    "date-time",
    "datetime",
    "duration",
    "password",
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
];

const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
const COLUMN_FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "password",
    "name",
];
const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// How a field's schema is replaced rather than annotated.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Shape {
    #[default]
    Keep,
    IntOrString,
    Schemaless,
    EmbeddedResource,
}

/// The checked contents of every `#[rkb(...)]` on one field or type.
#[derive(Default)]
pub(crate) struct Spec {
    /// OpenAPI keyword -> tokens of its value for `json!`.
    pub keywords: Vec<(&'static str, TokenStream)>,
    /// `x-kubernetes-validations` entries, each a `json!` object.
    pub validations: Vec<TokenStream>,
    /// Keywords for the array's items.
    pub items: Option<Box<Spec>>,
    pub shape: Shape,
    /// Entries for a generated `#[kube(...)]` (the spec struct only).
    pub kube: Vec<TokenStream>,
    /// Set when `scale(...)` was given, for the status-subresource check.
    pub scale_span: Option<Span>,
}

impl Spec {
    pub(crate) fn is_empty(&self) -> bool {
        self.keywords.is_empty()
            && self.validations.is_empty()
            && self.items.is_none()
            && self.shape == Shape::Keep
    }
}

/// Collects the entries of every `#[rkb(...)]` in `attrs`.
pub(crate) fn entries(cx: &mut Ctxt, attrs: &[Attribute]) -> Vec<Entry> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("rkb")) {
        match attr.meta.require_list() {
            Ok(list) => match meta::parse_entries(list.tokens.clone()) {
                Ok(entries) => {
                    if entries.is_empty() {
                        cx.error_spanned(
                            attr,
                            "empty #[rkb()]: remove it or add a key, e.g. #[rkb(minimum = 0)]",
                        );
                    }
                    out.extend(entries);
                }
                Err(err) => cx.push(err),
            },
            Err(_) => cx.error_spanned(
                attr,
                "expected keys in parentheses, e.g. #[rkb(minimum = 1, maximum = 10)]",
            ),
        }
    }
    out
}

/// Checks the entries written at `place` and turns them into a [`Spec`].
pub(crate) fn spec<'a>(
    cx: &mut Ctxt,
    entries: impl IntoIterator<Item = &'a Entry>,
    place: Place,
) -> Spec {
    let mut spec = Spec::default();
    let mut list_map_keys: Option<Span> = None;
    let mut seen: Vec<(&'static str, Span)> = Vec::new();
    let mut numbers: Vec<(&'static str, Number, Span)> = Vec::new();
    let mut list_type: Option<(String, Span)> = None;
    let mut shapes: Vec<(&'static str, Span)> = Vec::new();
    for entry in entries {
        let name = entry.name();
        let Some(def) = KEYS.iter().find(|k| k.name == name) else {
            cx.error_at(entry.key.span(), unknown_key(&name, place));
            continue;
        };
        if !allowed(def, place) {
            cx.error_at(entry.key.span(), misplaced(def, place));
            continue;
        }
        if !REPEATABLE.contains(&def.name) {
            if seen.iter().any(|(n, _)| *n == def.name) {
                cx.error_at(
                    entry.key.span(),
                    format!("duplicate key `{name}`: write it once"),
                );
                continue;
            }
            seen.push((def.name, entry.key.span()));
        }
        match def.kind {
            Kind::Number | Kind::Positive | Kind::Count => {
                if let Some(n) = number(cx, entry, def.kind) {
                    spec.keywords.push((def.json, n.tokens.clone()));
                    numbers.push((def.name, n, entry.value_span()));
                }
            }
            Kind::Pattern => {
                if let Some(lit) = string(cx, entry, "`pattern = \"^[a-z]+$\"`") {
                    check_regex(cx, &lit);
                    spec.keywords.push((def.json, lit.to_token_stream()));
                }
            }
            Kind::Format => {
                if let Some(lit) = string(cx, entry, "`format = \"date-time\"`")
                    && one_of(cx, &lit, FORMATS, "format")
                {
                    spec.keywords.push((def.json, lit.to_token_stream()));
                }
            }
            Kind::Flag => {
                if flag(cx, entry) {
                    match def.name {
                        "int_or_string" => shapes.push(("int_or_string", entry.key.span())),
                        "schemaless" => shapes.push(("schemaless", entry.key.span())),
                        "embedded_resource" => {
                            shapes.push(("embedded_resource", entry.key.span()));
                        }
                        _ => spec.keywords.push((def.json, quote!(true))),
                    }
                }
            }
            Kind::Literals => {
                if let Some(items) = literals(cx, entry) {
                    spec.keywords.push((def.json, quote!([#(#items),*])));
                }
            }
            Kind::Json => match &entry.value {
                Value::Assign(tokens) => spec.keywords.push((def.json, tokens.clone())),
                _ => cx.error_at(
                    entry.span(),
                    format!(
                        "`{name}` takes a value, serialized to JSON: e.g. `{name} = 1`, \
                         `{name} = \"text\"`, `{name} = [\"a\"]` or `{name} = MyEnum::Variant`"
                    ),
                ),
            },
            Kind::ListType => {
                if let Some(ident) = ident_value(cx, entry, &["atomic", "set", "map"]) {
                    let value = ident.to_string();
                    list_type = Some((value.clone(), entry.key.span()));
                    spec.keywords.push((def.json, quote!(#value)));
                }
            }
            Kind::MapType => {
                if let Some(ident) = ident_value(cx, entry, &["atomic", "granular"]) {
                    let value = ident.to_string();
                    spec.keywords.push((def.json, quote!(#value)));
                }
            }
            Kind::Strings => {
                if let Some(values) = strings(cx, entry, "`list_map_keys = [\"name\"]`") {
                    list_map_keys = Some(entry.key.span());
                    spec.keywords.push((def.json, quote!([#(#values),*])));
                }
            }
            Kind::Validation => {
                if let Some(rule) = validation(cx, entry) {
                    spec.validations.push(rule);
                }
            }
            Kind::Items => match &entry.value {
                Value::Nested(_, nested) => {
                    spec.items = Some(Box::new(self::spec(cx, nested, Place::Items)));
                }
                _ => cx.error_at(
                    entry.span(),
                    "`items` takes validations for the array's elements in parentheses, \
                     e.g. `items(max_length = 63, pattern = \"^[a-z]+$\")`",
                ),
            },
            Kind::Crd => crd_entry(cx, entry, &mut spec),
        }
    }
    check_bounds(cx, &numbers, &seen);
    check_topology(cx, list_map_keys, list_type.as_ref());
    if shapes.len() > 1 {
        let names: Vec<&str> = shapes.iter().map(|(n, _)| *n).collect();
        cx.error_at(
            shapes[1].1,
            format!("`{}` exclude each other: keep one", names.join("` and `")),
        );
    } else if let Some((shape, _)) = shapes.first() {
        spec.shape = match *shape {
            "int_or_string" => Shape::IntOrString,
            "schemaless" => Shape::Schemaless,
            _ => Shape::EmbeddedResource,
        };
        if spec.shape == Shape::IntOrString
            && let Some((_, s)) = seen.iter().find(|(n, _)| *n == "preserve_unknown_fields")
        {
            cx.error_at(
                *s,
                "`preserve_unknown_fields` and `int_or_string` exclude each other",
            );
        }
    }
    spec
}

fn allowed(def: &Key, place: Place) -> bool {
    match place {
        Place::Field => def.field,
        Place::Type => def.ty,
        Place::Spec => def.ty || def.kind == Kind::Crd,
        Place::Items => def.items,
    }
}

fn place_name(place: Place) -> &'static str {
    match place {
        Place::Field => "a field",
        Place::Type => "a type",
        Place::Spec => "the spec struct",
        Place::Items => "`items(...)`",
    }
}

fn misplaced(def: &Key, place: Place) -> String {
    let name = def.name;
    if def.kind == Kind::Crd {
        return format!(
            "`{name}` describes the CRD: put it on the spec struct, next to \
             #[rkb_runtime::api] and #[kube(...)]"
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

fn unknown_key(name: &str, place: Place) -> String {
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

fn number(cx: &mut Ctxt, entry: &Entry, kind: Kind) -> Option<Number> {
    let name = entry.name();
    let example = match kind {
        Kind::Count => format!("`{name} = 1`"),
        _ => format!("`{name} = 1` or `{name} = 0.5`"),
    };
    let Value::Assign(tokens) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`{name}` takes a number, e.g. {example}"),
        );
        return None;
    };
    let Some(n) = meta::as_number(tokens) else {
        let hint = match meta::as_str(tokens) {
            Some(s) => format!("write it without quotes: `{name} = {}`", s.value()),
            None => format!("e.g. {example}"),
        };
        cx.error_at(
            meta::span_of(tokens),
            format!("`{name}` takes a number; {hint}"),
        );
        return None;
    };
    match kind {
        Kind::Count if !n.is_integer || n.value < 0.0 => {
            cx.error_at(
                meta::span_of(tokens),
                format!("`{name}` takes a non-negative integer, e.g. {example}"),
            );
            None
        }
        Kind::Positive if n.value <= 0.0 => {
            cx.error_at(
                meta::span_of(tokens),
                format!("`{name}` must be greater than 0"),
            );
            None
        }
        _ => Some(n),
    }
}

fn flag(cx: &mut Ctxt, entry: &Entry) -> bool {
    match &entry.value {
        Value::Flag => true,
        Value::Assign(tokens) if meta::as_bool(tokens) == Some(true) => true,
        Value::Assign(tokens) if meta::as_bool(tokens) == Some(false) => {
            cx.error_at(
                entry.span(),
                format!("remove `{}` instead of setting it to false", entry.name()),
            );
            false
        }
        _ => {
            cx.error_at(
                entry.span(),
                format!("`{0}` is a flag: write just `{0}`", entry.name()),
            );
            false
        }
    }
}

fn string(cx: &mut Ctxt, entry: &Entry, example: &str) -> Option<LitStr> {
    let name = entry.name();
    if let Value::Assign(tokens) = &entry.value
        && let Some(lit) = meta::as_str(tokens)
    {
        return Some(lit);
    }
    let span = entry.value_span();
    cx.error_at(span, format!("`{name}` takes a string, e.g. {example}"));
    None
}

fn one_of(cx: &mut Ctxt, lit: &LitStr, allowed: &[&str], what: &str) -> bool {
    let value = lit.value();
    if allowed.contains(&value.as_str()) {
        return true;
    }
    let msg = match suggest::closest(&value, allowed) {
        Some(s) => format!("unknown {what} `{value}`; did you mean `{s}`?"),
        None => format!(
            "unknown {what} `{value}`; expected one of: {}",
            allowed.join(", ")
        ),
    };
    cx.error_spanned(lit, msg);
    false
}

fn ident_value(cx: &mut Ctxt, entry: &Entry, allowed: &[&str]) -> Option<syn::Ident> {
    let name = entry.name();
    let Value::Assign(tokens) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!(
                "`{name}` takes one of: {}, e.g. `{name} = {}`",
                allowed.join(", "),
                allowed[0]
            ),
        );
        return None;
    };
    if let Some(lit) = meta::as_str(tokens) {
        let value = lit.value();
        cx.error_spanned(
            &lit,
            if allowed.contains(&value.as_str()) {
                format!("write `{name} = {value}` without quotes")
            } else {
                format!("`{name}` takes one of: {}", allowed.join(", "))
            },
        );
        return None;
    }
    let Some(ident) = meta::as_ident(tokens) else {
        cx.error_at(
            meta::span_of(tokens),
            format!("`{name}` takes one of: {}", allowed.join(", ")),
        );
        return None;
    };
    let value = ident.to_string();
    if allowed.contains(&value.as_str()) {
        return Some(ident);
    }
    let msg = match suggest::closest(&value, allowed) {
        Some(s) => format!("unknown {name} `{value}`; did you mean `{s}`?"),
        None => format!(
            "unknown {name} `{value}`; expected one of: {}",
            allowed.join(", ")
        ),
    };
    cx.error_at(ident.span(), msg);
    None
}

fn literals(cx: &mut Ctxt, entry: &Entry) -> Option<Vec<TokenStream>> {
    let name = entry.name();
    let example = format!("`{name} = [\"a\", \"b\"]`");
    let Value::Assign(tokens) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`{name}` takes a list, e.g. {example}"),
        );
        return None;
    };
    let Some(items) = meta::as_list(tokens) else {
        cx.error_at(
            meta::span_of(tokens),
            format!("`{name}` takes a list, e.g. {example}"),
        );
        return None;
    };
    if items.is_empty() {
        cx.error_at(
            meta::span_of(tokens),
            format!("`{name}` is empty; list the allowed values, e.g. {example}"),
        );
        return None;
    }
    let mut ok = true;
    for item in &items {
        let literal = meta::as_str(item).is_some()
            || meta::as_number(item).is_some()
            || meta::as_bool(item).is_some();
        if !literal {
            cx.error_at(
                meta::span_of(item),
                format!("`{name}` takes literals (strings, numbers or booleans)"),
            );
            ok = false;
        }
    }
    ok.then_some(items)
}

fn strings(cx: &mut Ctxt, entry: &Entry, example: &str) -> Option<Vec<LitStr>> {
    let name = entry.name();
    let Value::Assign(tokens) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`{name}` takes a list of strings, e.g. {example}"),
        );
        return None;
    };
    let Some(items) = meta::as_list(tokens) else {
        let hint = match meta::as_str(tokens) {
            Some(s) => format!("write `{name} = [\"{}\"]`", s.value()),
            None => format!("e.g. {example}"),
        };
        cx.error_at(
            meta::span_of(tokens),
            format!("`{name}` takes a list of strings; {hint}"),
        );
        return None;
    };
    if items.is_empty() {
        cx.error_at(
            meta::span_of(tokens),
            format!("`{name}` is empty; e.g. {example}"),
        );
        return None;
    }
    let mut out = Vec::new();
    for item in &items {
        match meta::as_str(item) {
            Some(s) if !s.value().is_empty() => out.push(s),
            _ => cx.error_at(
                meta::span_of(item),
                format!(
                    "`{name}` takes non-empty string literals: write `\"{}\"`",
                    meta::text(item)
                ),
            ),
        }
    }
    (out.len() == items.len()).then_some(out)
}

fn check_regex(cx: &mut Ctxt, lit: &LitStr) {
    // Kubernetes compiles patterns with Go's RE2; Rust's regex syntax is the
    // same family (no backreferences or lookaround), so its parser catches the
    // same mistakes.
    if let Err(err) = regex_syntax::Parser::new().parse(&lit.value()) {
        let detail = err.to_string();
        let last = detail.lines().last().unwrap_or(&detail).trim();
        let last = last.strip_prefix("error: ").unwrap_or(last);
        cx.error_spanned(lit, format!("invalid `pattern`: {last}"));
    }
}

fn check_bounds(
    cx: &mut Ctxt,
    numbers: &[(&'static str, Number, Span)],
    seen: &[(&'static str, Span)],
) {
    let get = |name: &str| numbers.iter().find(|(n, _, _)| *n == name);
    for (min, max) in [
        ("minimum", "maximum"),
        ("min_length", "max_length"),
        ("min_items", "max_items"),
        ("min_properties", "max_properties"),
    ] {
        if let (Some((_, lo, _)), Some((_, hi, span))) = (get(min), get(max))
            && lo.value > hi.value
        {
            cx.error_at(
                *span,
                format!(
                    "`{max}` ({}) is less than `{min}` ({}): no value would be valid",
                    hi.tokens, lo.tokens
                ),
            );
        }
    }
    for (flag, bound) in [
        ("exclusive_minimum", "minimum"),
        ("exclusive_maximum", "maximum"),
    ] {
        if let Some((_, span)) = seen.iter().find(|(n, _)| *n == flag)
            && get(bound).is_none()
        {
            cx.error_at(
                *span,
                format!("`{flag}` makes `{bound}` exclusive, but there is no `{bound}`: add `{bound} = ...`"),
            );
        }
    }
}

fn check_topology(cx: &mut Ctxt, keys: Option<Span>, list_type: Option<&(String, Span)>) {
    match (list_type, keys) {
        (Some((t, _)), Some(span)) if t != "map" => cx.error_at(
            span,
            format!("`list_map_keys` needs `list_type = map`, not `list_type = {t}`"),
        ),
        (None, Some(span)) => cx.error_at(
            span,
            "`list_map_keys` needs `list_type = map`: add it, e.g. \
             #[rkb(list_type = map, list_map_keys = [\"type\"])]",
        ),
        (Some((t, span)), None) if t == "map" => cx.error_at(
            *span,
            "`list_type = map` needs `list_map_keys`: name the item fields that identify an \
             entry, e.g. `list_map_keys = [\"name\"]`",
        ),
        _ => {}
    }
}

/// `validation(rule = "...", message = "...", ...)`: one CEL rule.
fn validation(cx: &mut Ctxt, entry: &Entry) -> Option<TokenStream> {
    const EXAMPLE: &str =
        "`validation(rule = \"self.min <= self.max\", message = \"min must not exceed max\")`";
    let Value::Nested(_, nested) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`validation` takes a CEL rule in parentheses, e.g. {EXAMPLE}"),
        );
        return None;
    };
    let mut fields: Vec<TokenStream> = Vec::new();
    let mut have_rule = false;
    let mut seen: Vec<String> = Vec::new();
    let mut ok = true;
    for item in nested {
        let name = item.name();
        if seen.contains(&name) {
            cx.error_at(
                item.key.span(),
                format!("duplicate key `{name}` in `validation(...)`"),
            );
            ok = false;
            continue;
        }
        seen.push(name.clone());
        let json_key = match name.as_str() {
            "rule" => "rule",
            "message" => "message",
            "message_expression" => "messageExpression",
            "reason" => "reason",
            "field_path" => "fieldPath",
            "optional_old_self" => "optionalOldSelf",
            other => {
                let keys = [
                    "rule",
                    "message",
                    "message_expression",
                    "reason",
                    "field_path",
                    "optional_old_self",
                ];
                let hint = suggest::closest(other, &keys);
                let msg = suggest::unknown_key(other, "`validation(...)`", hint, &keys);
                cx.error_at(item.key.span(), msg);
                ok = false;
                continue;
            }
        };
        match name.as_str() {
            "optional_old_self" => {
                if flag(cx, item) {
                    fields.push(quote!(#json_key: true));
                } else {
                    ok = false;
                }
            }
            "reason" => {
                let value = match &item.value {
                    Value::Assign(t) => meta::as_ident(t)
                        .map(|i| (i.to_string(), i.span()))
                        .or_else(|| meta::as_str(t).map(|s| (s.value(), s.span()))),
                    _ => None,
                };
                match value {
                    Some((reason, _)) if REASONS.contains(&reason.as_str()) => {
                        fields.push(quote!(#json_key: #reason));
                    }
                    Some((reason, span)) => {
                        let msg = match suggest::closest(&reason, REASONS) {
                            Some(r) => format!("unknown reason `{reason}`; did you mean `{r}`?"),
                            None => format!(
                                "unknown reason `{reason}`; expected one of: {}",
                                REASONS.join(", ")
                            ),
                        };
                        cx.error_at(span, msg);
                        ok = false;
                    }
                    None => {
                        cx.error_at(
                            item.value_span(),
                            format!("`reason` takes one of: {}", REASONS.join(", ")),
                        );
                        ok = false;
                    }
                }
            }
            _ => match string(cx, item, EXAMPLE) {
                Some(lit) => {
                    let value = lit.value();
                    if value.trim().is_empty() {
                        cx.error_spanned(&lit, format!("`{name}` must not be empty"));
                        ok = false;
                    } else if name == "field_path" && !value.starts_with('.') {
                        cx.error_spanned(
                            &lit,
                            format!("`field_path` is a path from the validated value and starts with `.`, e.g. \".{}\"", value.trim_start_matches('.')),
                        );
                        ok = false;
                    } else {
                        have_rule |= name == "rule";
                        fields.push(quote!(#json_key: #lit));
                    }
                }
                None => ok = false,
            },
        }
    }
    if !have_rule && ok {
        cx.error_at(
            entry.span(),
            format!("`validation` needs a `rule`, e.g. {EXAMPLE}"),
        );
        return None;
    }
    ok.then(|| quote!({ #(#fields),* }))
}

// ---------------------------------------------------------------------------
// CRD keys: translated into kube's #[kube(...)] syntax
// ---------------------------------------------------------------------------

fn crd_entry(cx: &mut Ctxt, entry: &Entry, spec: &mut Spec) {
    match entry.name().as_str() {
        "printcolumn" => {
            if let Some(tokens) = printcolumn(cx, entry) {
                spec.kube.push(tokens);
            }
        }
        "short_names" | "categories" => {
            let (kube_key, example) = if entry.name() == "short_names" {
                ("shortname", "`short_names = [\"mc\"]`")
            } else {
                ("category", "`categories = [\"all\"]`")
            };
            if let Some(values) = strings(cx, entry, example) {
                for value in values {
                    if !rkb_core::names::is_dns1123_label(&value.value()) {
                        cx.error_spanned(
                            &value,
                            format!(
                                "`{}` must be lowercase letters, digits and '-' (a DNS label), e.g. {example}",
                                value.value()
                            ),
                        );
                        continue;
                    }
                    let key = syn::Ident::new(kube_key, value.span());
                    spec.kube.push(quote!(#key = #value));
                }
            }
        }
        "selectable" => {
            if let Some(values) = strings(cx, entry, "`selectable = [\".spec.color\"]`") {
                for value in values {
                    if check_json_path(cx, &value, "selectable") {
                        spec.kube.push(quote!(selectable = #value));
                    }
                }
            }
        }
        "scale" => {
            if let Some(tokens) = scale(cx, entry) {
                spec.kube.push(tokens);
                spec.scale_span = Some(entry.key.span());
            }
        }
        "storage" | "served" => {
            let key = &entry.key;
            match &entry.value {
                Value::Flag => spec.kube.push(quote!(#key = true)),
                Value::Assign(t) if meta::as_bool(t).is_some() => {
                    let b = meta::as_bool(t).unwrap_or(true);
                    spec.kube.push(quote!(#key = #b));
                }
                _ => cx.error_at(
                    entry.span(),
                    format!("`{key}` takes a boolean, e.g. `{key} = false`"),
                ),
            }
        }
        "deprecated" => match &entry.value {
            Value::Flag => spec.kube.push(quote!(deprecated)),
            Value::Assign(t) if meta::as_str(t).is_some() => {
                let warning = meta::as_str(t);
                spec.kube.push(quote!(deprecated = #warning));
            }
            _ => cx.error_at(
                entry.span(),
                "`deprecated` is a flag, or takes the warning clients see, e.g. \
                 `deprecated = \"use v1\"`",
            ),
        },
        _ => {}
    }
}

fn printcolumn(cx: &mut Ctxt, entry: &Entry) -> Option<TokenStream> {
    const EXAMPLE: &str =
        "`printcolumn(name = \"Size\", type = integer, json_path = \".spec.size\")`";
    let Value::Nested(_, nested) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`printcolumn` takes its fields in parentheses, e.g. {EXAMPLE}"),
        );
        return None;
    };
    let keys = [
        "name",
        "type",
        "json_path",
        "description",
        "format",
        "priority",
    ];
    let mut out: Vec<TokenStream> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut ok = true;
    for item in nested {
        let name = item.name();
        if !keys.contains(&name.as_str()) {
            let alias = match name.as_str() {
                "type_" => Some("type"),
                "JSONPath" | "jsonPath" | "path" => Some("json_path"),
                _ => suggest::closest(&name, &keys),
            };
            if let Some(k) = alias {
                // The misspelt key stands in for the missing one below.
                seen.push(k.to_owned());
            }
            let msg = suggest::unknown_key(&name, "`printcolumn(...)`", alias, &keys);
            cx.error_at(item.key.span(), msg);
            ok = false;
            continue;
        }
        if seen.contains(&name) {
            cx.error_at(
                item.key.span(),
                format!("duplicate key `{name}` in `printcolumn(...)`"),
            );
            ok = false;
            continue;
        }
        seen.push(name.clone());
        match name.as_str() {
            "type" => match ident_value(cx, item, COLUMN_TYPES) {
                Some(ident) => {
                    let value = ident.to_string();
                    out.push(quote!(type_ = #value));
                }
                None => ok = false,
            },
            "priority" => match number(cx, item, Kind::Count) {
                Some(n) => {
                    let tokens = n.tokens;
                    out.push(quote!(priority = #tokens));
                }
                None => ok = false,
            },
            _ => match string(cx, item, EXAMPLE) {
                Some(lit) => {
                    let valid = match name.as_str() {
                        "json_path" => check_json_path(cx, &lit, "json_path"),
                        "format" => one_of(cx, &lit, COLUMN_FORMATS, "column format"),
                        _ if lit.value().is_empty() => {
                            cx.error_spanned(&lit, format!("`{name}` must not be empty"));
                            false
                        }
                        _ => true,
                    };
                    let key = syn::Ident::new(&name, item.key.span());
                    ok &= valid;
                    out.push(quote!(#key = #lit));
                }
                None => ok = false,
            },
        }
    }
    for required in ["name", "type", "json_path"] {
        if !seen.iter().any(|s| s == required) {
            cx.error_at(
                entry.span(),
                format!("`printcolumn` needs `{required}`, e.g. {EXAMPLE}"),
            );
            ok = false;
        }
    }
    ok.then(|| quote!(printcolumn(#(#out),*)))
}

fn scale(cx: &mut Ctxt, entry: &Entry) -> Option<TokenStream> {
    const EXAMPLE: &str =
        "`scale(spec_replicas = \".spec.replicas\", status_replicas = \".status.replicas\")`";
    let Value::Nested(_, nested) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`scale` takes its paths in parentheses, e.g. {EXAMPLE}"),
        );
        return None;
    };
    let keys = ["spec_replicas", "status_replicas", "label_selector"];
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut ok = true;
    for item in nested {
        let name = item.name();
        let Some(key) = keys.iter().find(|k| **k == name) else {
            let alias = match name.as_str() {
                "specpath" | "spec_replicas_path" => Some("spec_replicas"),
                "statuspath" | "status_replicas_path" => Some("status_replicas"),
                "selectorpath" | "label_selector_path" => Some("label_selector"),
                _ => suggest::closest(&name, &keys),
            };
            let msg = suggest::unknown_key(&name, "`scale(...)`", alias, &keys);
            cx.error_at(item.key.span(), msg);
            ok = false;
            continue;
        };
        if seen.contains(&name) {
            cx.error_at(
                item.key.span(),
                format!("duplicate key `{name}` in `scale(...)`"),
            );
            ok = false;
            continue;
        }
        seen.push(name.clone());
        let Some(lit) = string(cx, item, EXAMPLE) else {
            ok = false;
            continue;
        };
        let value = lit.value();
        let prefixes: &[&str] = match *key {
            "spec_replicas" => &[".spec."],
            "status_replicas" => &[".status."],
            _ => &[".spec.", ".status."],
        };
        if !prefixes
            .iter()
            .any(|p| value.starts_with(p) && value.len() > p.len())
        {
            cx.error_spanned(
                &lit,
                format!(
                    "`{key}` must be a path under {}, e.g. \"{}replicas\"",
                    prefixes.join(" or "),
                    prefixes[0]
                ),
            );
            ok = false;
            continue;
        }
        let kube_key = syn::Ident::new(&format!("{key}_path"), item.key.span());
        out.push(quote!(#kube_key = #lit));
    }
    for required in ["spec_replicas", "status_replicas"] {
        if ok && !seen.iter().any(|s| s == required) {
            cx.error_at(
                entry.span(),
                format!("`scale` needs `{required}`, e.g. {EXAMPLE}"),
            );
            ok = false;
        }
    }
    ok.then(|| quote!(scale(#(#out),*)))
}

/// A JSONPath as kubectl evaluates for printer columns: starts with `.` and
/// has balanced brackets and quotes.
fn check_json_path(cx: &mut Ctxt, lit: &LitStr, key: &str) -> bool {
    let path = lit.value();
    let problem = if !path.starts_with('.') {
        Some(format!(
            "`{key}` must start with `.`, e.g. \".{}\"",
            path.trim_start_matches('$').trim_start_matches('.')
        ))
    } else if path.len() < 2 {
        Some(format!("`{key}` must name a field, e.g. \".spec.size\""))
    } else if path.chars().any(char::is_whitespace) && !path.contains('"') && !path.contains('\'') {
        Some(format!("`{key}` must not contain spaces"))
    } else if !balanced(&path) {
        Some(format!("`{key}` has unbalanced brackets or quotes"))
    } else {
        None
    };
    match problem {
        Some(msg) => {
            cx.error_spanned(lit, msg);
            false
        }
        None => true,
    }
}

fn balanced(path: &str) -> bool {
    let mut stack = Vec::new();
    let mut quote: Option<char> = None;
    for c in path.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '(' | '{') => stack.push(c),
            (None, ']') if stack.pop() != Some('[') => return false,
            (None, ')') if stack.pop() != Some('(') => return false,
            (None, '}') if stack.pop() != Some('{') => return false,
            _ => {}
        }
    }
    stack.is_empty() && quote.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_must_balance() {
        assert!(balanced(".status.conditions[?(@.type==\"Ready\")].status"));
        assert!(!balanced(".spec.items[0"));
        assert!(!balanced(".spec.x)"));
        assert!(!balanced(".spec[\"x]"));
    }

    #[test]
    fn every_alias_names_a_key() {
        for (_, key) in ALIASES {
            assert!(KEYS.iter().any(|k| k.name == *key), "{key}");
        }
    }
}
