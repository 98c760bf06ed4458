//! `#[rkb_runtime::webhook(...)]` on an `impl Defaulter<K> for T` or `impl Validator<K>
//! for T` block: controller-gen's `+kubebuilder:webhook` marker. The settings are checked
//! here, with spans, by rkb-core's rules, and become the impl's `settings()`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ItemImpl;

use crate::ctxt::Ctxt;
use crate::meta::{self, Entry, Value};
use crate::suggest;
use rkb_core::webhook::{self as rules, Operation};

const KEYS: &[&str] = &[
    "path",
    "name",
    "failure_policy",
    "side_effects",
    "operations",
    "match_policy",
    "timeout_seconds",
];

/// controller-gen's marker keys, for "did you mean" hints.
const ALIASES: &[(&str, &str)] = &[
    ("failurePolicy", "failure_policy"),
    ("sideEffects", "side_effects"),
    ("verbs", "operations"),
    ("matchPolicy", "match_policy"),
    ("timeoutSeconds", "timeout_seconds"),
    ("timeout", "timeout_seconds"),
];

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    let mut item: ItemImpl = syn::parse2(input).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[rkb_runtime::webhook] goes on an `impl Defaulter<Kind> for ...` or \
             `impl Validator<Kind> for ...` block",
        )
    })?;
    let mut cx = Ctxt::default();
    let trait_name = item
        .trait_
        .as_ref()
        .and_then(|(_, path, _)| path.segments.last())
        .map(|segment| segment.ident.to_string());
    if !matches!(trait_name.as_deref(), Some("Defaulter" | "Validator")) {
        cx.error_at(
            item.impl_token.span,
            "#[rkb_runtime::webhook] goes on an `impl Defaulter<Kind> for ...` or \
             `impl Validator<Kind> for ...` block",
        );
    }
    if let Some(existing) = item
        .items
        .iter()
        .find(|i| matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "settings"))
    {
        cx.error_spanned(
            existing,
            "this impl defines settings() itself; the #[rkb_runtime::webhook] attribute \
             writes it: remove one of the two",
        );
    }
    let entries = meta::parse_entries(args)?;
    let settings = settings(&mut cx, &entries);
    cx.check()?;
    let function: syn::ImplItemFn = syn::parse2(quote! {
        fn settings() -> ::rkb_runtime::webhook::Settings {
            #settings
        }
    })?;
    item.items.push(syn::ImplItem::Fn(function));
    Ok(quote!(#item))
}

fn string(cx: &mut Ctxt, entry: &Entry) -> Option<(String, Span)> {
    match &entry.value {
        Value::Assign(tokens) => match meta::as_str(tokens) {
            Some(lit) => Some((lit.value(), lit.span())),
            None => {
                cx.error_at(
                    entry.value_span(),
                    format!(
                        "`{}` takes a string, e.g. {}",
                        entry.name(),
                        example(&entry.name())
                    ),
                );
                None
            }
        },
        _ => {
            cx.error_at(
                entry.span(),
                format!(
                    "`{}` takes a value: {}",
                    entry.name(),
                    example(&entry.name())
                ),
            );
            None
        }
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "path" => "path = \"/validate-cache-example-com-v1alpha1-memcached\"",
        "name" => "name = \"vmemcached-v1alpha1.kb.io\"",
        "failure_policy" => "failure_policy = \"fail\" or \"ignore\"",
        "side_effects" => "side_effects = \"none\" or \"none_on_dry_run\"",
        "match_policy" => "match_policy = \"exact\" or \"equivalent\"",
        "timeout_seconds" => "timeout_seconds = 10",
        _ => "operations(create, update, delete)",
    }
}

/// `value` folded (case, `_`, `-`) and matched against `choices`.
fn choice<'a>(
    cx: &mut Ctxt,
    key: &str,
    value: &str,
    span: Span,
    choices: &[(&str, &'a str)],
) -> Option<&'a str> {
    let folded: String = value
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    let found = choices.iter().find(|(spelling, _)| *spelling == folded);
    if found.is_none() {
        cx.error_at(
            span,
            format!("`{key}` cannot be {value:?}: use {}", example(key)),
        );
    }
    found.map(|(_, variant)| *variant)
}

fn settings(
    cx: &mut Ctxt,
    entries: &syn::punctuated::Punctuated<Entry, syn::Token![,]>,
) -> TokenStream {
    let mut seen: Vec<String> = Vec::new();
    let mut path = quote!(::core::option::Option::None);
    let mut name = quote!(::core::option::Option::None);
    let mut failure = quote!(Fail);
    let mut side_effects = quote!(None);
    let mut match_policy = quote!(Equivalent);
    let mut timeout = quote!(::core::option::Option::None);
    let mut operations = vec![quote!(Create), quote!(Update)];
    for entry in entries {
        let key = entry.name();
        if !KEYS.contains(&key.as_str()) {
            let hint = suggest::intended_key(&key, ALIASES, KEYS);
            cx.error_at(
                entry.key.span(),
                suggest::unknown_key(&key, "#[rkb_runtime::webhook(...)]", hint, KEYS),
            );
            continue;
        }
        if seen.contains(&key) {
            cx.error_at(entry.key.span(), format!("`{key}` is given twice"));
            continue;
        }
        seen.push(key.clone());
        match key.as_str() {
            "path" => {
                if let Some((value, span)) = string(cx, entry) {
                    match rules::check_path(&value) {
                        Ok(()) => path = quote!(::core::option::Option::Some(#value.to_owned())),
                        Err(error) => cx.error_at(span, error),
                    }
                }
            }
            "name" => {
                if let Some((value, span)) = string(cx, entry) {
                    match rules::check_name(&value) {
                        Ok(()) => name = quote!(::core::option::Option::Some(#value.to_owned())),
                        Err(error) => cx.error_at(span, error),
                    }
                }
            }
            "failure_policy" => {
                if let Some((value, span)) = string(cx, entry)
                    && let Some(v) = choice(
                        cx,
                        &key,
                        &value,
                        span,
                        &[("fail", "Fail"), ("ignore", "Ignore")],
                    )
                {
                    let v = syn::Ident::new(v, span);
                    failure = quote!(#v);
                }
            }
            "side_effects" => {
                if let Some((value, span)) = string(cx, entry)
                    && let Some(v) = choice(
                        cx,
                        &key,
                        &value,
                        span,
                        &[("none", "None"), ("noneondryrun", "NoneOnDryRun")],
                    )
                {
                    let v = syn::Ident::new(v, span);
                    side_effects = quote!(#v);
                }
            }
            "match_policy" => {
                if let Some((value, span)) = string(cx, entry)
                    && let Some(v) = choice(
                        cx,
                        &key,
                        &value,
                        span,
                        &[("exact", "Exact"), ("equivalent", "Equivalent")],
                    )
                {
                    let v = syn::Ident::new(v, span);
                    match_policy = quote!(#v);
                }
            }
            "timeout_seconds" => match &entry.value {
                Value::Assign(tokens) => match meta::as_number(tokens) {
                    Some(n) if n.is_integer && n.value >= 0.0 => {
                        match rules::check_timeout(n.value as u64) {
                            Ok(seconds) => {
                                timeout = quote!(::core::option::Option::Some(#seconds));
                            }
                            Err(error) => cx.error_at(meta::span_of(tokens), error),
                        }
                    }
                    _ => cx.error_at(
                        entry.value_span(),
                        "`timeout_seconds` takes a whole number of seconds from 1 to 30",
                    ),
                },
                _ => cx.error_at(
                    entry.span(),
                    "`timeout_seconds` takes a value: timeout_seconds = 10",
                ),
            },
            _ => match &entry.value {
                Value::Nested(_, items) => {
                    let mut parsed = Vec::new();
                    for item in items {
                        let op_name = item.name();
                        match (Operation::parse(&op_name), &item.value) {
                            (Some(op), Value::Flag) => {
                                if parsed.contains(&op) {
                                    cx.error_at(
                                        item.key.span(),
                                        rules::SettingError::DuplicateOperation(op),
                                    );
                                }
                                parsed.push(op);
                            }
                            _ => cx.error_at(
                                item.span(),
                                format!(
                                    "unknown operation `{op_name}`: use create, update, delete \
                                     or connect"
                                ),
                            ),
                        }
                    }
                    if items.is_empty() {
                        cx.error_at(entry.span(), rules::SettingError::NoOperations);
                    }
                    operations = parsed
                        .iter()
                        .map(|op| {
                            let variant = match op {
                                Operation::Create => "Create",
                                Operation::Update => "Update",
                                Operation::Delete => "Delete",
                                Operation::Connect => "Connect",
                            };
                            let ident = syn::Ident::new(variant, Span::call_site());
                            quote!(#ident)
                        })
                        .collect();
                }
                _ => cx.error_at(
                    entry.span(),
                    "`operations` takes a list: operations(create, update, delete)",
                ),
            },
        }
    }
    quote! {
        ::rkb_runtime::webhook::Settings {
            path: #path,
            name: #name,
            failure_policy: ::rkb_runtime::webhook::FailurePolicy::#failure,
            side_effects: ::rkb_runtime::webhook::SideEffects::#side_effects,
            operations: ::std::vec![#(::rkb_runtime::webhook::RuleOperation::#operations),*],
            match_policy: ::rkb_runtime::webhook::MatchPolicy::#match_policy,
            timeout_seconds: #timeout,
        }
    }
}
