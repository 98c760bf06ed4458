//! Checks across keys: bounds that contradict, list topology, regular expressions.

use proc_macro2::Span;
use rkb_core::schema::Shape;
use syn::LitStr;

use crate::ctxt::Ctxt;
use crate::meta::Number;

pub(super) fn check_regex(cx: &mut Ctxt, lit: &LitStr) {
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

pub(super) fn check_bounds(
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

pub(super) fn check_topology(
    cx: &mut Ctxt,
    keys: Option<Span>,
    list_type: Option<&(String, Span)>,
) {
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

/// At most one of the keys that replace a field's schema, and not
/// `int_or_string` with `preserve_unknown_fields`.
pub(super) fn check_shapes(
    cx: &mut Ctxt,
    shapes: &[(&'static str, Span)],
    seen: &[(&'static str, Span)],
) -> Shape {
    if shapes.len() > 1 {
        let names: Vec<&str> = shapes.iter().map(|(n, _)| *n).collect();
        cx.error_at(
            shapes[1].1,
            format!("`{}` exclude each other: keep one", names.join("` and `")),
        );
        return Shape::Keep;
    }
    let shape = match shapes.first() {
        None => return Shape::Keep,
        Some(("int_or_string", _)) => Shape::IntOrString,
        Some(("schemaless", _)) => Shape::Schemaless,
        Some(_) => Shape::EmbeddedResource,
    };
    if shape == Shape::IntOrString
        && let Some((_, s)) = seen.iter().find(|(n, _)| *n == "preserve_unknown_fields")
    {
        cx.error_at(
            *s,
            "`preserve_unknown_fields` and `int_or_string` exclude each other",
        );
    }
    shape
}
