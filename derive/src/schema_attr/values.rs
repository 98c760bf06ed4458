//! Value parsers: each checks one key's value and reports a mistake with its span.

use proc_macro2::TokenStream;
use syn::LitStr;

use crate::ctxt::Ctxt;
use crate::meta::{self, Entry, Number, Value};
use crate::suggest;
use rkb_core::attributes::rkb::Kind;

pub(super) fn number(cx: &mut Ctxt, entry: &Entry, kind: Kind) -> Option<Number> {
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

pub(super) fn flag(cx: &mut Ctxt, entry: &Entry) -> bool {
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

pub(super) fn string(cx: &mut Ctxt, entry: &Entry, example: &str) -> Option<LitStr> {
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

pub(super) fn one_of(cx: &mut Ctxt, lit: &LitStr, allowed: &[&str], what: &str) -> bool {
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

pub(super) fn ident_value(cx: &mut Ctxt, entry: &Entry, allowed: &[&str]) -> Option<syn::Ident> {
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

pub(super) fn literals(cx: &mut Ctxt, entry: &Entry) -> Option<Vec<TokenStream>> {
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

pub(super) fn strings(cx: &mut Ctxt, entry: &Entry, example: &str) -> Option<Vec<LitStr>> {
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
