//! Derive macros for operators scaffolded by rkb.
//!
//! Use them through `rkb_runtime` (`use rkb_runtime::Rbac;`), which re-exports
//! each macro next to the trait it implements; the generated code names
//! `::rkb_runtime` paths.

mod attr;
mod ctxt;
mod rbac;
mod suggest;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Declares the Kubernetes RBAC rules a reconciler needs, the Rust counterpart
/// of controller-gen's `// +kubebuilder:rbac:...` markers.
///
/// ```ignore
/// #[derive(rkb_runtime::Rbac)]
/// #[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, list, watch])]
/// #[rbac(groups = ["core"], resources = ["configmaps"], verbs = [get], namespace = "system")]
/// #[rbac(urls = ["/metrics"], verbs = [get])]
/// struct MyReconciler;
/// ```
///
/// Keys: `groups`, `resources`, `resource_names`, `verbs`, `namespace`, `urls`.
/// `"core"` or `""` names the core API group; `namespace` turns the rule into a
/// namespaced `Role`; `urls` are non-resource URLs (cluster-scoped only).
#[proc_macro_derive(Rbac, attributes(rbac))]
pub fn derive_rbac(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    rbac::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
