//! Code generation for `#[derive(Rbac)]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use rkb_core::syntax::rbac::{Rule, derive_rules};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    // rkb-core's parser, which `make manifests` also runs over the project's sources.
    let rules = derive_rules(&input.ident, &input.attrs)?;

    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let rules = rules.iter().map(rule);
    // `const _` keeps any helper names out of the user's namespace (as serde does).
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, clippy::all)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::rkb_runtime::rbac::Rbac for #ident #ty_generics #where_clause {
                fn rbac_rules() -> ::std::vec::Vec<::rkb_runtime::rbac::Rule> {
                    ::std::vec![#(#rules),*]
                }
            }
        };
    })
}

fn rule(rule: &Rule) -> TokenStream {
    let strings = |values: &[String]| {
        quote! { ::std::vec![#(::std::string::String::from(#values)),*] }
    };
    let api_groups = strings(&rule.groups);
    let resources = strings(&rule.resources);
    let resource_names = strings(&rule.resource_names);
    let verbs = strings(&rule.verbs);
    let non_resource_urls = strings(&rule.urls);
    let namespace = match &rule.namespace {
        Some(ns) => quote! { ::std::option::Option::Some(::std::string::String::from(#ns)) },
        None => quote! { ::std::option::Option::None },
    };
    quote! {
        ::rkb_runtime::rbac::Rule {
            api_groups: #api_groups,
            resources: #resources,
            resource_names: #resource_names,
            verbs: #verbs,
            non_resource_urls: #non_resource_urls,
            namespace: #namespace,
        }
    }
}
