//! The `#[rkb(...)]` attribute model: what each key means, where it may be
//! written, and the checks that make misuse a compile error with a span and a
//! suggestion. Code generation (`api.rs`) only sees checked [`Spec`]s.
//!
//! The keys mirror controller-gen's markers (`+kubebuilder:validation:*`,
//! `+listType`, `+kubebuilder:printcolumn`, ...) with Rust spellings; rkb-core's key
//! table (`rkb_core::attributes::rkb`) says what each writes, where and how it is
//! parsed.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use rkb_core::schema::{NULLABLE_ASKED, Shape};
use syn::Attribute;

use crate::ctxt::Ctxt;
use crate::keys::Keys;
use crate::meta::{self, Entry, Number, Value};

use cel::{external_docs, validation};
use checks::{check_bounds, check_regex, check_shapes, check_topology};
use crd::crd_entry;
use keys::{allowed, misplaced, names, place_name, unknown_key};
use rkb_core::attributes::rkb::{self as table, Key, Kind};
use values::{flag, ident_value, literals, number, one_of, string, strings};

mod cel;
mod checks;
mod crd;
mod groups;
mod keys;
mod values;

pub(crate) use groups::{FieldGroup, field_groups};

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
    pub kube: Vec<KubeEntry>,
    /// Set when `scale(...)` was given, for the status-subresource check.
    pub scale_span: Option<Span>,
    /// `exactly_one_of` and its kin, checked against the struct's fields by
    /// [`field_groups`] before they become rules.
    pub groups: Vec<FieldGroup>,
}

/// One entry of the generated `#[kube(...)]`, e.g. `shortname = "mc"`.
pub(crate) struct KubeEntry {
    /// The kube key it sets, e.g. `shortname`.
    pub key: &'static str,
    /// The whole entry.
    pub tokens: TokenStream,
}

impl ToTokens for KubeEntry {
    fn to_tokens(&self, out: &mut TokenStream) {
        self.tokens.to_tokens(out);
    }
}

impl Spec {
    fn push_kube(&mut self, key: &'static str, tokens: TokenStream) {
        self.kube.push(KubeEntry { key, tokens });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
            && self.keywords.is_empty()
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
    let (names, repeatable) = names();
    let mut keys = Keys::new(format!("#[rkb(...)] on {}", place_name(place)), &names, &[])
        .repeatable(&repeatable);
    let mut cross = CrossKeys::default();
    for entry in entries {
        let name = entry.name();
        let def = table::find(&name);
        if let Some(def) = def
            && !allowed(def, place)
        {
            cx.error_at(entry.key.span(), misplaced(def, place));
            continue;
        }
        let span = entry.key.span();
        if keys
            .accept_or(cx, &name, span, |_| unknown_key(&name, place))
            .is_none()
        {
            continue;
        }
        let def = def.expect("accepted keys are known");
        add_entry(cx, entry, def, &mut spec, &mut cross);
    }
    let seen = keys.given();
    check_bounds(cx, &cross.numbers, seen);
    check_topology(cx, cross.list_map_keys, cross.list_type.as_ref());
    spec.shape = check_shapes(cx, &cross.shapes, seen);
    spec
}

/// What the checks across keys need to know of the entries.
#[derive(Default)]
struct CrossKeys {
    numbers: Vec<(&'static str, Number, Span)>,
    list_type: Option<(String, Span)>,
    list_map_keys: Option<Span>,
    shapes: Vec<(&'static str, Span)>,
}

/// Parses one entry's value by its key's kind and adds it to `spec`.
fn add_entry(cx: &mut Ctxt, entry: &Entry, def: &Key, spec: &mut Spec, cross: &mut CrossKeys) {
    let name = entry.name();
    match def.kind {
        Kind::Number | Kind::Positive | Kind::Count => {
            if let Some(n) = number(cx, entry, def.kind) {
                spec.keywords.push((keyword(def), n.tokens.clone()));
                cross.numbers.push((def.name, n, entry.value_span()));
            }
        }
        Kind::Flag => add_flag(cx, entry, def, spec, cross),
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
        Kind::Crd => crd_entry(cx, entry, spec),
        Kind::FieldGroup => {
            if let Some(names) = strings(cx, entry, &format!("`{name} = [\"cron\", \"interval\"]`"))
            {
                spec.groups
                    .push(FieldGroup::new(def.name, entry.key.span(), names));
            }
        }
        Kind::Pattern
        | Kind::Format
        | Kind::Literals
        | Kind::Json
        | Kind::ListType
        | Kind::MapType
        | Kind::Strings
        | Kind::Text
        | Kind::ExternalDocs => {
            if let Some(value) = keyword_value(cx, entry, def, cross) {
                spec.keywords.push((keyword(def), value));
            }
        }
    }
}

/// The schema keyword `def` sets from its value.
fn keyword(def: &Key) -> &'static str {
    def.keyword()
        .expect("a key of a value kind writes a keyword")
}

/// A flag: a keyword set to `true`, a shape, or a CEL rule.
fn add_flag(cx: &mut Ctxt, entry: &Entry, def: &Key, spec: &mut Spec, cross: &mut CrossKeys) {
    if !flag(cx, entry) {
        return;
    }
    match def.name {
        shape @ ("int_or_string" | "schemaless" | "embedded_resource") => {
            cross.shapes.push((shape, entry.key.span()));
        }
        // controller-gen's `+k8s:immutable`: a transition rule, which the
        // API server checks on updates only.
        "immutable" => spec
            .validations
            .push(quote!({"rule": "self == oldSelf", "message": "value is immutable"})),
        // Marked for the repair, which tells it from the `Option`s schemars marks.
        "nullable" => spec.keywords.push((NULLABLE_ASKED, quote!(true))),
        _ => spec.keywords.push((keyword(def), quote!(true))),
    }
}

/// The value of a key that sets its keyword from a string, a list or an identifier.
fn keyword_value(
    cx: &mut Ctxt,
    entry: &Entry,
    def: &Key,
    cross: &mut CrossKeys,
) -> Option<TokenStream> {
    let name = entry.name();
    match def.kind {
        Kind::Pattern => {
            let lit = string(cx, entry, "`pattern = \"^[a-z]+$\"`")?;
            check_regex(cx, &lit);
            Some(lit.to_token_stream())
        }
        Kind::Format => {
            let lit = string(cx, entry, "`format = \"date-time\"`")?;
            one_of(cx, &lit, rkb_core::schema::FORMATS, "format").then(|| lit.to_token_stream())
        }
        Kind::Literals => literals(cx, entry).map(|items| quote!([#(#items),*])),
        Kind::Json => match &entry.value {
            Value::Assign(tokens) => Some(tokens.clone()),
            _ => {
                cx.error_at(
                    entry.span(),
                    format!(
                        "`{name}` takes a value, serialized to JSON: e.g. `{name} = 1`, \
                         `{name} = \"text\"`, `{name} = [\"a\"]` or `{name} = MyEnum::Variant`"
                    ),
                );
                None
            }
        },
        Kind::ListType | Kind::MapType => {
            let value = ident_value(cx, entry, def.kind.choices())?.to_string();
            if def.kind == Kind::ListType {
                cross.list_type = Some((value.clone(), entry.key.span()));
            }
            Some(quote!(#value))
        }
        Kind::Strings => {
            let values = strings(cx, entry, "`list_map_keys = [\"name\"]`")?;
            cross.list_map_keys = Some(entry.key.span());
            Some(quote!([#(#values),*]))
        }
        Kind::Text => {
            let lit = string(cx, entry, &format!("`{name} = \"Replicas\"`"))?;
            if lit.value().trim().is_empty() {
                cx.error_spanned(&lit, format!("`{name}` must not be empty"));
                return None;
            }
            Some(lit.to_token_stream())
        }
        Kind::ExternalDocs => external_docs(cx, entry),
        // The other kinds are parsed by `add_entry`.
        _ => None,
    }
}

#[cfg(test)]
mod tests;
