//! Code generation for `#[rkb_runtime::api]` and `#[rkb_runtime::schema]`:
//! the item comes back with its `#[rkb(...)]` attributes rewritten into what
//! the derives after it understand: `#[kube(...)]` for CRD keys and a
//! `#[schemars(transform = ...)]` per annotated type or field, which hands the
//! keywords to `rkb_runtime::schema_macro::apply` when the schema is built.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{Attribute, Fields, Item, Meta};

use crate::ctxt::Ctxt;
use crate::schema_attr::{self, Place, Spec};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Macro {
    Api,
    Schema,
}

impl Macro {
    fn name(self) -> &'static str {
        match self {
            Macro::Api => "#[rkb_runtime::api]",
            Macro::Schema => "#[rkb_runtime::schema]",
        }
    }
}

pub(crate) fn expand(
    which: Macro,
    args: TokenStream,
    item: TokenStream,
) -> syn::Result<TokenStream> {
    let mut cx = Ctxt::default();
    if !args.is_empty() {
        cx.error_spanned(
            &args,
            format!(
                "{} takes no arguments: write the keys in #[rkb(...)] attributes below it",
                which.name()
            ),
        );
    }
    let mut item: Item = syn::parse2(item)?;
    let mut order_check = TokenStream::new();
    match &mut item {
        Item::Struct(s) => {
            let ident = s.ident.to_string();
            container(
                &mut cx,
                which,
                &mut s.attrs,
                Some(&s.fields),
                &ident,
                s.ident.span(),
            );
            fields(&mut cx, &mut s.fields, &ident);
            if which == Macro::Api {
                order_check = derive_order_check(&mut s.attrs);
            }
        }
        Item::Enum(e) => {
            let ident = e.ident.to_string();
            if which == Macro::Api {
                cx.error_at(
                    e.ident.span(),
                    "#[rkb_runtime::api] goes on the spec struct of a custom resource; \
                     use #[rkb_runtime::schema] on enums",
                );
            }
            container(
                &mut cx,
                Macro::Schema,
                &mut e.attrs,
                None,
                &ident,
                e.ident.span(),
            );
            for variant in &mut e.variants {
                if variant.attrs.iter().any(is_rkb) {
                    let attr = variant.attrs.iter().find(|a| is_rkb(a));
                    cx.error_spanned(
                        attr,
                        format!(
                            "#[rkb(...)] is not supported on enum variants: a variant is not a \
                             field of the schema; put the attribute on the fields of `{}`",
                            variant.ident
                        ),
                    );
                    variant.attrs.retain(|a| !is_rkb(a));
                }
                let at = format!("{ident}::{}", variant.ident);
                fields(&mut cx, &mut variant.fields, &at);
            }
        }
        other => {
            return Err(syn::Error::new(
                item_span(other),
                format!("{} applies to structs and enums", which.name()),
            ));
        }
    }
    let mut out = item.into_token_stream();
    match cx.check() {
        Ok(()) => out.extend(order_check),
        // Keep the item (its #[rkb] attributes removed) so that the errors
        // above are the only ones, not a cascade of "cannot find type".
        Err(errors) => out.extend(errors.into_compile_error()),
    }
    Ok(out)
}

/// Attribute macros below `#[derive(...)]` run after the derives have seen
/// the item, so the attributes generated here would be silently lost. kube
/// adds a marker derive to the root type only if it sees the `#[kube(derive)]`
/// generated here; the check below fails to compile without it.
fn derive_order_check(attrs: &mut Vec<Attribute>) -> TokenStream {
    let mut kind = None;
    let mut root = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("kube")) {
        let Ok(metas) = attr
            .parse_args_with(syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated)
        else {
            continue;
        };
        for meta in metas {
            if let Meta::NameValue(nv) = meta
                && let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
            {
                if nv.path.is_ident("kind") {
                    kind = Some(s.value());
                } else if nv.path.is_ident("root") {
                    root = Some(s.value());
                }
            }
        }
    }
    let Some(root) = root.or(kind) else {
        return TokenStream::new(); // kube reports the missing kind
    };
    let Ok(root) = syn::parse_str::<syn::Ident>(&root) else {
        return TokenStream::new();
    };
    attrs.push(syn::parse_quote!(#[kube(derive = "::rkb_runtime::schema_macro::ApiMarker")]));
    quote! {
        const _: () = {
            fn rkb_api_goes_above_the_derives<T: ::rkb_runtime::schema_macro::RkbApi>() {}
            let _ = rkb_api_goes_above_the_derives::<#root>;
        };
    }
}

fn item_span(item: &Item) -> Span {
    item.span()
}

fn is_rkb(attr: &Attribute) -> bool {
    attr.path().is_ident("rkb")
}

/// `fields`: the struct's, for keys that name them; `None` for an enum.
fn container(
    cx: &mut Ctxt,
    which: Macro,
    attrs: &mut Vec<Attribute>,
    fields: Option<&Fields>,
    ident: &str,
    span: Span,
) {
    let entries = schema_attr::entries(cx, attrs);
    attrs.retain(|a| !is_rkb(a));
    let place = if which == Macro::Api {
        Place::Spec
    } else {
        Place::Type
    };
    let mut spec = schema_attr::spec(cx, &entries, place);
    let rules = schema_attr::field_groups(cx, &spec.groups, attrs, fields);
    spec.validations.extend(rules);
    if which == Macro::Api {
        check_custom_resource(cx, attrs, &mut spec, span);
        if !spec.kube.is_empty() {
            let kube = &spec.kube;
            attrs.push(syn::parse_quote!(#[kube(#(#kube),*)]));
        }
    }
    if !spec.is_empty() {
        attrs.push(transform_attr(&spec, ident));
    }
}

fn fields(cx: &mut Ctxt, fields: &mut Fields, owner: &str) {
    for (i, field) in fields.iter_mut().enumerate() {
        let entries = schema_attr::entries(cx, &field.attrs);
        field.attrs.retain(|a| !is_rkb(a));
        if entries.is_empty() {
            continue;
        }
        let spec = schema_attr::spec(cx, &entries, Place::Field);
        let name = field
            .ident
            .as_ref()
            .map_or_else(|| i.to_string(), ToString::to_string);
        if !spec.is_empty() {
            field
                .attrs
                .push(transform_attr(&spec, &format!("{owner}.{name}")));
        }
    }
}

/// `#[rkb_runtime::api]` needs the kube derive it feeds, and kube only
/// renders a scale subresource next to a status subresource.
fn check_custom_resource(cx: &mut Ctxt, attrs: &[Attribute], spec: &mut Spec, span: Span) {
    // A `#[derive]` above this attribute is not visible to it (rustc hands
    // attribute macros the item without the derives already collected), so
    // only `#[kube(...)]` is required here.
    let kube: Vec<&Attribute> = attrs.iter().filter(|a| a.path().is_ident("kube")).collect();
    if kube.is_empty() {
        cx.error_at(
            span,
            "#[rkb_runtime::api] goes on a custom resource's spec struct, with \
             #[derive(CustomResource, ...)] and #[kube(group = \"...\", version = \"...\", \
             kind = \"...\")]; use #[rkb_runtime::schema] on other types",
        );
        return;
    }
    let kube_keys: Vec<String> = kube
        .iter()
        .filter_map(|a| {
            a.parse_args_with(syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated)
                .ok()
        })
        .flatten()
        .filter_map(|m| m.path().get_ident().map(ToString::to_string))
        .collect();
    if let Some(scale) = spec.scale_span
        && !kube_keys.iter().any(|k| k == "status")
    {
        cx.error_at(
            scale,
            "`scale` needs a status subresource: add `status = \"<Kind>Status\"` to #[kube(...)] \
             (the status replicas live there)",
        );
    }
    for key in ["storage", "served", "deprecated", "scale"] {
        let ours = spec.kube.iter().any(|e| e.key == key);
        if ours && kube_keys.iter().any(|k| k == key) {
            cx.error_at(
                span,
                format!("`{key}` is set both in #[kube(...)] and in #[rkb(...)]: keep one"),
            );
            // Only this error, not kube's "Duplicate field" as well.
            spec.kube.retain(|e| e.key != key);
        }
    }
}

fn json_object(spec: &Spec) -> TokenStream {
    let mut pairs: Vec<TokenStream> = spec
        .keywords
        .iter()
        .map(|(key, value)| quote!(#key: #value))
        .collect();
    if !spec.validations.is_empty() {
        let rules = &spec.validations;
        let key = rkb_core::schema::VALIDATIONS;
        pairs.push(quote!(#key: [#(#rules),*]));
    }
    quote!({ #(#pairs),* })
}

fn transform_attr(spec: &Spec, at: &str) -> Attribute {
    let keywords = json_object(spec);
    let items = match &spec.items {
        Some(items) => {
            let object = json_object(items);
            quote!(::rkb_runtime::schema_macro::json!(#object))
        }
        None => quote!(::rkb_runtime::schema_macro::Value::Null),
    };
    let shape = quote::format_ident!("{}", spec.shape.name());
    syn::parse_quote! {
        #[schemars(transform = |schema: &mut ::rkb_runtime::schema_macro::Schema| {
            ::rkb_runtime::schema_macro::apply(
                schema,
                #at,
                ::rkb_runtime::schema_macro::json!(#keywords),
                #items,
                ::rkb_runtime::schema_macro::Shape::#shape,
            )
        })]
    }
}
