//! `validation(...)`: CEL rules (`x-kubernetes-validations`).

use proc_macro2::TokenStream;
use quote::quote;

use super::values::{flag, string};
use crate::ctxt::Ctxt;
use crate::keys::Keys;
use crate::meta::{self, Entry, Value};
use crate::suggest;

pub(super) const REASONS: &[&str] = &[
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// `validation(rule = "...", message = "...", ...)`: one CEL rule.
pub(super) fn validation(cx: &mut Ctxt, entry: &Entry) -> Option<TokenStream> {
    const EXAMPLE: &str =
        "`validation(rule = \"self.min <= self.max\", message = \"min must not exceed max\")`";
    let Value::Nested(_, nested) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`validation` takes a CEL rule in parentheses, e.g. {EXAMPLE}"),
        );
        return None;
    };
    const KEYS: &[&str] = &[
        "rule",
        "message",
        "message_expression",
        "reason",
        "field_path",
        "optional_old_self",
    ];
    let mut keys = Keys::new("`validation(...)`", KEYS, &[]);
    let mut ok = true;
    let mut fields: Vec<TokenStream> = Vec::new();
    let mut have_rule = false;
    for item in nested {
        let Some(name) = keys.accept(cx, &item.name(), item.key.span()) else {
            continue;
        };
        let json_key = match name {
            "message_expression" => "messageExpression",
            "field_path" => "fieldPath",
            "optional_old_self" => "optionalOldSelf",
            other => other,
        };
        match name {
            "optional_old_self" => {
                if flag(cx, item) {
                    fields.push(quote!(#json_key: true));
                } else {
                    ok = false;
                }
            }
            "reason" => match reason(cx, item) {
                Some(reason) => fields.push(quote!(#json_key: #reason)),
                None => ok = false,
            },
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
    let ok = ok && keys.ok;
    if !have_rule && ok {
        cx.error_at(
            entry.span(),
            format!("`validation` needs a `rule`, e.g. {EXAMPLE}"),
        );
        return None;
    }
    ok.then(|| quote!({ #(#fields),* }))
}

/// `reason = FieldValueInvalid`: one of the reasons Kubernetes knows.
fn reason(cx: &mut Ctxt, item: &Entry) -> Option<String> {
    let value = match &item.value {
        Value::Assign(t) => meta::as_ident(t)
            .map(|i| (i.to_string(), i.span()))
            .or_else(|| meta::as_str(t).map(|s| (s.value(), s.span()))),
        _ => None,
    };
    match value {
        Some((reason, _)) if REASONS.contains(&reason.as_str()) => Some(reason),
        Some((reason, span)) => {
            let msg = match suggest::closest(&reason, REASONS) {
                Some(r) => format!("unknown reason `{reason}`; did you mean `{r}`?"),
                None => format!(
                    "unknown reason `{reason}`; expected one of: {}",
                    REASONS.join(", ")
                ),
            };
            cx.error_at(span, msg);
            None
        }
        None => {
            cx.error_at(
                item.value_span(),
                format!("`reason` takes one of: {}", REASONS.join(", ")),
            );
            None
        }
    }
}

/// `external_docs(url = "...", description = "...")`: controller-gen's
/// `+kubebuilder:externalDocs`, an OpenAPI `externalDocs` object.
pub(super) fn external_docs(cx: &mut Ctxt, entry: &Entry) -> Option<TokenStream> {
    const EXAMPLE: &str =
        "`external_docs(url = \"https://example.com/docs\", description = \"the guide\")`";
    let Value::Nested(_, nested) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`external_docs` takes a url and a description in parentheses, e.g. {EXAMPLE}"),
        );
        return None;
    };
    let mut keys = Keys::new("`external_docs(...)`", &["url", "description"], &[]);
    let mut fields = Vec::new();
    let mut have_url = false;
    let mut ok = true;
    for item in nested {
        let Some(name) = keys.accept(cx, &item.name(), item.key.span()) else {
            continue;
        };
        let Some(lit) = string(cx, item, EXAMPLE) else {
            ok = false;
            continue;
        };
        let value = lit.value();
        if name == "url" && !(value.starts_with("https://") || value.starts_with("http://")) {
            cx.error_spanned(
                &lit,
                "`url` is an absolute http(s) URL, e.g. \"https://example.com/docs\"",
            );
            ok = false;
            continue;
        }
        have_url |= name == "url";
        fields.push(quote!(#name: #lit));
    }
    if ok && keys.ok && !have_url {
        cx.error_at(
            entry.span(),
            format!("`external_docs` needs a `url`, e.g. {EXAMPLE}"),
        );
        return None;
    }
    (ok && keys.ok).then(|| quote!({ #(#fields),* }))
}
