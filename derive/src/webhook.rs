//! `#[rkb_runtime::webhook(...)]` on an `impl Defaulter<K> for T` or `impl Validator<K>
//! for T` block: controller-gen's `+kubebuilder:webhook` marker. rkb-core parses and checks
//! the settings (as `make manifests` does from the sources); they become the impl's
//! `settings()`.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use rkb_core::syntax::webhook::parse;
use rkb_core::webhook::{self as rules, MatchCondition, Operation, ReviewVersion};

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> syn::Result<TokenStream> {
    let (mut item, _, settings) = parse(args, input)?;
    let settings = settings_tokens(&settings);
    let function: syn::ImplItemFn = syn::parse2(quote! {
        fn settings() -> ::rkb_runtime::webhook::Settings {
            #settings
        }
    })?;
    item.items.push(syn::ImplItem::Fn(function));
    Ok(quote!(#item))
}

/// `settings` as the expression `settings()` returns: a `rkb_runtime::webhook::Settings`.
fn settings_tokens(settings: &rules::Settings) -> TokenStream {
    let variant = |name: &str| syn::Ident::new(name, Span::call_site());
    let some_string = |value: &Option<String>| match value {
        Some(value) => quote!(::core::option::Option::Some(#value.to_owned())),
        None => quote!(::core::option::Option::None),
    };
    let path = some_string(&settings.path);
    let name = some_string(&settings.name);
    // The enums' API spellings are also their variant names.
    let failure = variant(settings.failure_policy.as_str());
    let side_effects = variant(settings.side_effects.as_str());
    let match_policy = variant(settings.match_policy.as_str());
    let operations = settings.operations.iter().map(|op| {
        variant(match op {
            Operation::Create => "Create",
            Operation::Update => "Update",
            Operation::Delete => "Delete",
            Operation::Connect => "Connect",
        })
    });
    let timeout = match settings.timeout_seconds {
        Some(seconds) => quote!(::core::option::Option::Some(#seconds)),
        None => quote!(::core::option::Option::None),
    };
    let reinvocation = match settings.reinvocation_policy {
        Some(policy) => {
            let policy = variant(policy.as_str());
            quote!(::core::option::Option::Some(::rkb_runtime::webhook::ReinvocationPolicy::#policy))
        }
        None => quote!(::core::option::Option::None),
    };
    let review_versions = settings.admission_review_versions.iter().map(|version| {
        variant(match version {
            ReviewVersion::V1 => "V1",
            ReviewVersion::V1beta1 => "V1beta1",
        })
    });
    let url = some_string(&settings.url);
    let namespace_selector = some_string(&settings.namespace_selector);
    let object_selector = some_string(&settings.object_selector);
    let conditions = settings
        .match_conditions
        .iter()
        .map(|MatchCondition { name, expression }| {
            quote!(::rkb_runtime::webhook::MatchCondition {
                name: #name.to_owned(),
                expression: #expression.to_owned(),
            })
        });
    quote! {
        ::rkb_runtime::webhook::Settings {
            path: #path,
            name: #name,
            failure_policy: ::rkb_runtime::webhook::FailurePolicy::#failure,
            side_effects: ::rkb_runtime::webhook::SideEffects::#side_effects,
            operations: ::std::vec![#(::rkb_runtime::webhook::RuleOperation::#operations),*],
            match_policy: ::rkb_runtime::webhook::MatchPolicy::#match_policy,
            timeout_seconds: #timeout,
            reinvocation_policy: #reinvocation,
            admission_review_versions: ::std::vec![#(::rkb_runtime::webhook::ReviewVersion::#review_versions),*],
            url: #url,
            namespace_selector: #namespace_selector,
            object_selector: #object_selector,
            match_conditions: ::std::vec![#(#conditions),*],
        }
    }
}
