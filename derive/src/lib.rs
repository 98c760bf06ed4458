//! Derive macros for operators scaffolded by rkb.
//!
//! Use them through `rkb_runtime` (`use rkb_runtime::Rbac;`), which re-exports
//! each macro next to the trait it implements; the generated code names
//! `::rkb_runtime` paths.
//!
//! - `#[rkb_runtime::api]` and `#[rkb_runtime::schema]` with `#[rkb(...)]`: controller-gen's
//!   CRD markers ([every key, with its marker][attributes]).
//! - `#[derive(Rbac)]` with `#[rbac(...)]`, and `#[rkb_runtime::webhook]`: controller-gen's
//!   `+kubebuilder:rbac` and `+kubebuilder:webhook` markers ([reference][rbac]).
//!
//! Misuse is a compile error pointing at the attribute, with a suggestion.
//!
//! [attributes]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/attributes.md
//! [rbac]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/rbac-and-webhooks.md

mod api;
mod ctxt;
mod keys;
mod meta;
mod rbac;
mod rbac_attr;
mod schema_attr;
mod suggest;
mod webhook;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Declares the Kubernetes RBAC rules a reconciler needs, the Rust counterpart
/// of controller-gen's `// +kubebuilder:rbac:...` markers.
///
/// ```
/// #[derive(rkb_runtime::Rbac)]
/// #[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, list, watch])]
/// #[rbac(groups = ["core"], resources = ["configmaps"], verbs = [get], namespace = "system")]
/// #[rbac(urls = ["/metrics"], verbs = [get])]
/// struct MyReconciler;
/// ```
///
/// Keys: `groups`, `resources`, `resource_names`, `verbs`, `namespace`, `urls`.
/// `"core"` or `""` names the core API group; `namespace` turns the rule into a
/// namespaced `Role` with a `RoleBinding` for the manager (`"system"` is the manager's
/// own namespace, as in `config/`; others are deployed by the `config/namespaced-rbac`
/// overlay that `make manifests` writes); `urls` are non-resource URLs (cluster-scoped only).
#[proc_macro_derive(Rbac, attributes(rbac))]
pub fn derive_rbac(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    rbac::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Rewrites `#[rkb(...)]` attributes on a custom resource's spec struct and
/// its fields into kube's `#[kube(...)]` and schemars attributes, the Rust
/// counterpart of controller-gen's CRD markers. Place it above the derives:
///
/// ```
/// # use kube::CustomResource;
/// # use schemars::JsonSchema;
/// # use serde::{Deserialize, Serialize};
/// #[rkb_runtime::api]
/// #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// #[kube(group = "cache.example.com", version = "v1", kind = "Memcached", namespaced, status = "MemcachedStatus")]
/// #[rkb(printcolumn(name = "Size", type = integer, json_path = ".spec.size"), short_names = ["mc"])]
/// pub struct MemcachedSpec {
///     /// How many replicas to run.
///     #[rkb(minimum = 1, maximum = 10, default = 1)]
///     pub size: i32,
/// }
/// # #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// # pub struct MemcachedStatus {}
/// ```
///
/// Spec struct keys: `printcolumn(name, type, json_path, priority, description, format)`,
/// `short_names`, `categories`, `selectable`, `scale(spec_replicas, status_replicas,
/// label_selector)`, `storage`, `served`, `deprecated`, plus the type keys below.
///
/// Type keys (also under [`macro@schema`]): `validation(rule, message, message_expression,
/// reason, field_path, optional_old_self)` (repeatable CEL rules), `exactly_one_of`,
/// `at_most_one_of`, `at_least_one_of` (JSON names of `Option` fields; repeatable),
/// `min_properties`, `max_properties`, `map_type`, `struct_type`, `enum_values`,
/// `preserve_unknown_fields`, `title`, `external_docs(url, description)`.
///
/// Field keys: `minimum`, `maximum`, `exclusive_minimum`, `exclusive_maximum`,
/// `multiple_of`, `min_length`, `max_length`, `pattern`, `format`, `enum_values`,
/// `min_items`, `max_items`, `min_properties`, `max_properties`, `default`, `example`,
/// `nullable` (an `Option` is optional, not nullable, unless this is given),
/// `list_type = atomic|set|map`, `list_map_keys`, `map_type = atomic|granular`,
/// `struct_type = atomic|granular`, `preserve_unknown_fields`, `embedded_resource`,
/// `int_or_string`, `schemaless`, `immutable`, `title`, `external_docs(...)`,
/// `validation(...)`, and `items(...)` with value validations, `map_type`/`struct_type`
/// and rules for list elements.
#[proc_macro_attribute]
pub fn api(args: TokenStream, input: TokenStream) -> TokenStream {
    api::expand(api::Macro::Api, args.into(), input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// [`macro@api`] for the types a spec or status contains: rewrites the
/// `#[rkb(...)]` attributes of a struct or enum and of its fields.
#[proc_macro_attribute]
pub fn schema(args: TokenStream, input: TokenStream) -> TokenStream {
    api::expand(api::Macro::Schema, args.into(), input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// controller-gen's `+kubebuilder:webhook` marker on an `impl Defaulter<K> for T` or
/// `impl Validator<K> for T` block:
///
/// ```
/// # use kube::CustomResource;
/// # use rkb_runtime::webhook::{Denied, Request, Validator, Warnings};
/// # use schemars::JsonSchema;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// # #[kube(group = "cache.example.com", version = "v1alpha1", kind = "Memcached", namespaced)]
/// # pub struct MemcachedSpec {}
/// # struct MemcachedWebhook;
/// #[rkb_runtime::webhook(
///     path = "/validate-cache-example-com-v1alpha1-memcached",
///     failure_policy = "fail",        // or "ignore"
///     side_effects = "none",          // or "none_on_dry_run"
///     operations(create, update, delete),
///     match_policy = "equivalent",    // or "exact"
///     timeout_seconds = 10,           // 1 to 30
///     name = "vmemcached-v1alpha1.kb.io",
/// )]
/// impl Validator<Memcached> for MemcachedWebhook {
///     async fn validate_create(&self, _: &Request, _: &Memcached) -> Result<Warnings, Denied> {
///         Ok(Warnings::new())
///     }
///     // validate_update, and validate_delete for `operations(delete)`
/// #   async fn validate_update(&self, _: &Request, _: &Memcached, _: &Memcached) -> Result<Warnings, Denied> {
/// #       Ok(Warnings::new())
/// #   }
/// }
/// ```
///
/// Every key is optional (kubebuilder's defaults); each is checked at compile time and
/// the impl gets the `settings()` the manager serves and `make manifests` renders.
#[proc_macro_attribute]
pub fn webhook(args: TokenStream, input: TokenStream) -> TokenStream {
    let original = proc_macro2::TokenStream::from(input.clone());
    match webhook::expand(args.into(), input.into()) {
        Ok(tokens) => tokens.into(),
        // Keep the impl, so that the only errors are the attribute's.
        Err(error) => {
            let error = error.into_compile_error();
            quote::quote!(#error #original).into()
        }
    }
}

/// Marks a custom resource whose derive saw `#[rkb_runtime::api]`'s output
/// (see `api::derive_order_check`); not for direct use.
#[doc(hidden)]
#[proc_macro_derive(ApiMarker)]
pub fn api_marker(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let ident = &input.ident;
    quote::quote!(impl ::rkb_runtime::schema_macro::RkbApi for #ident {}).into()
}
