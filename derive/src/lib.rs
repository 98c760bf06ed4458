//! Derive macros for operators scaffolded by rkb: controller-gen's markers as Rust
//! attributes, checked at compile time.
//!
//! - [`macro@api`] and [`macro@schema`]: `#[rkb(...)]` on custom resources, the CRD
//!   markers (validation, defaults, list types, printer columns, ...).
//! - [`Rbac`](derive@Rbac): `#[rbac(...)]`, the RBAC markers.
//! - [`macro@webhook`]: the webhook marker.
//!
//! Use them through `rkb_runtime` (`use rkb_runtime::Rbac;`), which re-exports
//! each macro next to the trait it implements; the generated code names
//! `::rkb_runtime` paths. The keys of each attribute are rkb-core's tables
//! (`rkb_core::attributes`), from which the book's attribute reference is rendered:
//! [every `#[rkb]` key, with its controller-gen marker][attributes], and
//! [the `#[rbac]` and webhook keys][rbac].
//!
//! Misuse is a compile error pointing at the attribute, with a suggestion.
//!
//! [attributes]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/attributes.md
//! [rbac]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/rbac-and-webhooks.md

mod api;
mod rbac;
mod schema_attr;
mod webhook;

// What every attribute's checks share, from rkb-core, where `make manifests` parses
// `#[rbac]` and the webhook attribute with the same code.
use rkb_core::syntax::{ctxt, keys, meta, suggest};

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Declares the Kubernetes RBAC rules a reconciler needs: one `#[rbac(...)]` per rule,
/// the Rust counterpart of controller-gen's `// +kubebuilder:rbac:...` markers.
/// `make manifests` gathers the rules of every reconciler into `config/rbac/role.yaml`.
///
/// ```
/// use rkb_runtime::Rbac;
///
/// #[derive(Rbac)]
/// #[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, list, watch])]
/// #[rbac(groups = ["core"], resources = ["configmaps"], verbs = [get], namespace = "system")]
/// #[rbac(urls = ["/metrics"], verbs = [get])]
/// struct MyReconciler;
///
/// let rules = rkb_runtime::rbac_rules::<MyReconciler>();
/// assert_eq!(rules[0].api_groups, ["apps"]);
/// assert_eq!(rules[1].api_groups, [""]); // "core" is the core group
/// ```
///
/// Keys (each rule is checked at compile time against the API server's rules for a
/// PolicyRule; wildcards are refused):
/// - `groups = [...]`: API groups; `"core"` or `""` is the core group.
/// - `resources = [...]`: resources of those groups, optionally with a subresource
///   (`"deployments/status"`).
/// - `resource_names = [...]`: only the objects of these names.
/// - `verbs = [...]`: what the reconciler may do; a slip away from a known verb is an error.
/// - `namespace = "..."`: a namespaced `Role` with a `RoleBinding` for the manager instead
///   of a ClusterRole rule (`"system"` is the manager's own namespace, as in `config/`;
///   others are deployed by the `config/namespaced-rbac` overlay `make manifests` writes).
/// - `urls = [...]`: non-resource URLs, in a rule of their own (cluster-scoped only).
///
/// The book's reference (`#[rbac]` and webhook attributes) gives each key's
/// controller-gen marker.
#[proc_macro_derive(Rbac, attributes(rbac))]
pub fn derive_rbac(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    rbac::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Rewrites `#[rkb(...)]` attributes on a custom resource's spec struct and its fields
/// into kube's `#[kube(...)]` and schemars attributes: the Rust counterpart of
/// controller-gen's CRD markers. Place it above the derives. Every key is checked at
/// compile time, with a span and a suggestion.
///
/// ```
/// use kube::CustomResource;
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[rkb_runtime::api]
/// #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// #[kube(group = "cache.example.com", version = "v1", kind = "Memcached", namespaced)]
/// #[rkb(printcolumn(name = "Size", type = integer, json_path = ".spec.size"), short_names = ["mc"])]
/// #[rkb(validation(rule = "self.size <= 5 || has(self.image)", message = "big ones need an image"))]
/// pub struct MemcachedSpec {
///     /// How many replicas to run.
///     #[rkb(minimum = 1, maximum = 10, default = 1)]
///     pub size: i32,
///     #[rkb(pattern = "^[a-z0-9./:-]+$", max_length = 253)]
///     pub image: Option<String>,
///     /// Extra arguments, each at most 63 characters.
///     #[rkb(list_type = atomic, max_items = 8, items(max_length = 63))]
///     #[serde(default)]
///     pub args: Vec<String>,
/// }
///
/// let crd = rkb_runtime::crd::<Memcached>().unwrap().into_definition();
/// let version = &crd.spec.versions[0];
/// let schema = version.schema.as_ref().unwrap().open_api_v3_schema.as_ref().unwrap();
/// let spec = &schema.properties.as_ref().unwrap()["spec"];
/// let size = &spec.properties.as_ref().unwrap()["size"];
/// assert_eq!(size.minimum, Some(1.0));
/// assert_eq!(crd.spec.names.short_names, Some(vec!["mc".to_owned()]));
/// ```
///
/// **On the spec struct**, the CRD's own keys: `printcolumn(name, type, json_path,
/// description, format, priority)` (one per column), `short_names`, `categories`,
/// `selectable`, `scale(spec_replicas, status_replicas, label_selector)`, `storage`,
/// `served`, `deprecated`; and every type key.
///
/// **On a struct or enum** (here or under [`macro@schema`]): `validation(rule, message,
/// message_expression, reason, field_path, optional_old_self)` (one per CEL rule),
/// `exactly_one_of`, `at_most_one_of`, `at_least_one_of` (JSON names of `Option` fields),
/// `min_properties`, `max_properties`, `map_type`, `struct_type`, `enum_values`,
/// `preserve_unknown_fields`, `title`, `external_docs(url, description)`.
///
/// **On a field**: `minimum`, `maximum`, `exclusive_minimum`, `exclusive_maximum`,
/// `multiple_of`, `min_length`, `max_length`, `pattern`, `format`, `enum_values`,
/// `min_items`, `max_items`, `min_properties`, `max_properties`, `default`, `example`,
/// `nullable` (an `Option` is optional, not nullable, without it), `list_type = atomic |
/// set | map`, `list_map_keys`, `map_type = atomic | granular`, `struct_type`,
/// `preserve_unknown_fields`, `embedded_resource`, `int_or_string`, `schemaless`,
/// `immutable`, `title`, `external_docs(...)`, `validation(...)`, and `items(...)` with
/// the value checks, `map_type`/`struct_type` and rules for the elements of a list.
///
/// A key in the wrong place is refused with the place it belongs to:
///
/// ```compile_fail
/// #[rkb_runtime::schema]
/// #[derive(Clone, Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
/// pub struct Limits {
///     #[rkb(short_names = ["l"])] // a CRD key, for the spec struct
///     pub max: i32,
/// }
/// ```
///
/// The book's reference (`#[rkb]` schema attributes) has one row per key: the schema
/// keyword it writes, where it applies, controller-gen's marker and an example. It is
/// rendered from rkb-core's key table, which this macro parses with.
#[proc_macro_attribute]
pub fn api(args: TokenStream, input: TokenStream) -> TokenStream {
    api::expand(api::Macro::Api, args.into(), input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// [`macro@api`] for the types a spec or status contains: rewrites the `#[rkb(...)]`
/// attributes of a struct or enum and of its fields (the type and field keys of
/// [`macro@api`]).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[rkb_runtime::schema]
/// #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// #[rkb(exactly_one_of = ["cron", "interval"])]
/// pub struct Schedule {
///     #[rkb(min_length = 9)]
///     pub cron: Option<String>,
///     #[rkb(minimum = 60)]
///     pub interval: Option<u32>,
/// }
/// ```
#[proc_macro_attribute]
pub fn schema(args: TokenStream, input: TokenStream) -> TokenStream {
    api::expand(api::Macro::Schema, args.into(), input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// controller-gen's `+kubebuilder:webhook` marker on an `impl Defaulter<K> for T` or
/// `impl Validator<K> for T` block:
///
/// ```no_run
/// use k8s_openapi::api::core::v1::Pod;
/// use rkb_runtime::webhook::{Denied, Request, Validator, Warnings};
///
/// struct PodWebhook;
///
/// #[rkb_runtime::webhook(
///     failure_policy = "ignore",      // or "fail", the default
///     side_effects = "none",          // or "none_on_dry_run"
///     operations(create, update),     // and delete, connect
///     match_policy = "equivalent",    // or "exact"
///     timeout_seconds = 5,            // 1 to 30
///     namespace_selector = "environment in (prod, staging)",
///     object_selector = "!skip-validation",
///     match_condition(name = "not-kube-system", expression = "request.namespace != 'kube-system'"),
/// )]
/// impl Validator<Pod> for PodWebhook {
///     async fn validate_create(&self, _: &Request, _: &Pod) -> Result<Warnings, Denied> {
///         Ok(Warnings::new())
///     }
///
///     async fn validate_update(&self, _: &Request, _: &Pod, _: &Pod) -> Result<Warnings, Denied> {
///         Ok(Warnings::new())
///     }
/// }
/// ```
///
/// Keys: `failure_policy`, `side_effects`, `operations`, `match_policy`,
/// `timeout_seconds`, `reinvocation_policy` (defaulters only), `admission_review_versions`,
/// `namespace_selector` and `object_selector` (kubectl's selector syntax),
/// `match_condition` (once per CEL condition), `path`, `url` and `name`. `path` and `name`
/// set the URL path and the webhook's name, which kubebuilder's conventions give by
/// default (`/validate-<group>-<version>-<kind>`, `v<kind>-<version>.kb.io`); `url` sends
/// the API server to a webhook out of the cluster instead of the manager's Service. Every
/// key is optional; each is checked at compile time, and the impl gets the `settings()`
/// the manager serves and `make manifests` renders.
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

#[cfg(test)]
mod tests {
    /// The macros' documentation names every key of rkb-core's tables.
    #[test]
    fn the_docs_name_every_key() {
        let docs = include_str!("lib.rs");
        let keys = rkb_core::attributes::rkb::KEYS.iter().map(|k| k.name);
        let rbac = rkb_core::attributes::rbac::KEYS.iter().map(|k| k.name);
        let webhook = rkb_core::attributes::webhook::KEYS.iter().map(|k| k.name);
        for name in keys.chain(rbac).chain(webhook) {
            assert!(
                docs.contains(&format!("`{name}")),
                "{name} is not documented"
            );
        }
    }
}
