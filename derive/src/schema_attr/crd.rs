//! CRD keys on the spec struct, translated into kube's `#[kube(...)]` syntax.

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

use super::Spec;
use super::values::{ident_value, number, one_of, string, strings};
use crate::ctxt::Ctxt;
use crate::keys::Keys;
use crate::meta::{self, Entry, Value};
use rkb_core::attributes::rkb::Kind;

pub(super) const COLUMN_TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];

pub(super) const COLUMN_FORMATS: &[&str] = &[
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

pub(super) fn crd_entry(cx: &mut Ctxt, entry: &Entry, spec: &mut Spec) {
    match entry.name().as_str() {
        "printcolumn" => {
            if let Some(tokens) = printcolumn(cx, entry) {
                spec.push_kube("printcolumn", tokens);
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
                    spec.push_kube(kube_key, quote!(#key = #value));
                }
            }
        }
        "selectable" => {
            if let Some(values) = strings(cx, entry, "`selectable = [\".spec.color\"]`") {
                for value in values {
                    if check_json_path(cx, &value, "selectable") {
                        spec.push_kube("selectable", quote!(selectable = #value));
                    }
                }
            }
        }
        "scale" => {
            if let Some(tokens) = scale(cx, entry) {
                spec.push_kube("scale", tokens);
                spec.scale_span = Some(entry.key.span());
            }
        }
        name @ ("storage" | "served") => {
            let kube_key = if name == "storage" {
                "storage"
            } else {
                "served"
            };
            let key = &entry.key;
            match &entry.value {
                Value::Flag => spec.push_kube(kube_key, quote!(#key = true)),
                Value::Assign(t) if meta::as_bool(t).is_some() => {
                    let b = meta::as_bool(t).unwrap_or(true);
                    spec.push_kube(kube_key, quote!(#key = #b));
                }
                _ => cx.error_at(
                    entry.span(),
                    format!("`{key}` takes a boolean, e.g. `{key} = false`"),
                ),
            }
        }
        "deprecated" => match &entry.value {
            Value::Flag => spec.push_kube("deprecated", quote!(deprecated)),
            Value::Assign(t) if meta::as_str(t).is_some() => {
                let warning = meta::as_str(t);
                spec.push_kube("deprecated", quote!(deprecated = #warning));
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

pub(super) fn printcolumn(cx: &mut Ctxt, entry: &Entry) -> Option<TokenStream> {
    const EXAMPLE: &str =
        "`printcolumn(name = \"Size\", type = integer, json_path = \".spec.size\")`";
    let Value::Nested(_, nested) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`printcolumn` takes its fields in parentheses, e.g. {EXAMPLE}"),
        );
        return None;
    };
    const KEYS: &[&str] = &[
        "name",
        "type",
        "json_path",
        "description",
        "format",
        "priority",
    ];
    const ALIASES: &[(&str, &str)] = &[
        ("type_", "type"),
        ("JSONPath", "json_path"),
        ("jsonPath", "json_path"),
        ("path", "json_path"),
    ];
    let mut keys = Keys::new("`printcolumn(...)`", KEYS, ALIASES);
    let mut ok = true;
    let mut out: Vec<TokenStream> = Vec::new();
    for item in nested {
        let Some(name) = keys.accept(cx, &item.name(), item.key.span()) else {
            continue;
        };
        match name {
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
                    let valid = match name {
                        "json_path" => check_json_path(cx, &lit, "json_path"),
                        "format" => one_of(cx, &lit, COLUMN_FORMATS, "column format"),
                        _ if lit.value().is_empty() => {
                            cx.error_spanned(&lit, format!("`{name}` must not be empty"));
                            false
                        }
                        _ => true,
                    };
                    let key = syn::Ident::new(name, item.key.span());
                    ok &= valid;
                    out.push(quote!(#key = #lit));
                }
                None => ok = false,
            },
        }
    }
    for required in ["name", "type", "json_path"] {
        if !keys.named(required) {
            cx.error_at(
                entry.span(),
                format!("`printcolumn` needs `{required}`, e.g. {EXAMPLE}"),
            );
            ok = false;
        }
    }
    (ok && keys.ok).then(|| quote!(printcolumn(#(#out),*)))
}

pub(super) fn scale(cx: &mut Ctxt, entry: &Entry) -> Option<TokenStream> {
    const EXAMPLE: &str =
        "`scale(spec_replicas = \".spec.replicas\", status_replicas = \".status.replicas\")`";
    let Value::Nested(_, nested) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`scale` takes its paths in parentheses, e.g. {EXAMPLE}"),
        );
        return None;
    };
    const KEYS: &[&str] = &["spec_replicas", "status_replicas", "label_selector"];
    const ALIASES: &[(&str, &str)] = &[
        ("specpath", "spec_replicas"),
        ("spec_replicas_path", "spec_replicas"),
        ("statuspath", "status_replicas"),
        ("status_replicas_path", "status_replicas"),
        ("selectorpath", "label_selector"),
        ("label_selector_path", "label_selector"),
    ];
    let mut keys = Keys::new("`scale(...)`", KEYS, ALIASES);
    let mut ok = true;
    let mut out = Vec::new();
    for item in nested {
        let Some(key) = keys.accept(cx, &item.name(), item.key.span()) else {
            continue;
        };
        let Some(lit) = string(cx, item, EXAMPLE) else {
            ok = false;
            continue;
        };
        let value = lit.value();
        let prefixes: &[&str] = match key {
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
        if ok && keys.ok && !keys.named(required) {
            cx.error_at(
                entry.span(),
                format!("`scale` needs `{required}`, e.g. {EXAMPLE}"),
            );
            ok = false;
        }
    }
    (ok && keys.ok).then(|| quote!(scale(#(#out),*)))
}

/// A JSONPath as kubectl evaluates for printer columns: starts with `.` and
/// has balanced brackets and quotes.
pub(super) fn check_json_path(cx: &mut Ctxt, lit: &LitStr, key: &str) -> bool {
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

pub(super) fn balanced(path: &str) -> bool {
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
}
