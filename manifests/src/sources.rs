//! The RBAC rules and webhook settings a project's sources declare, read without compiling
//! them, as controller-gen reads `+kubebuilder:rbac` and `+kubebuilder:webhook` markers.
//!
//! [`read`] parses every `.rs` file under a directory and finds
//!
//! - every struct, enum or union that derives `Rbac` (`#[derive(Rbac)]`,
//!   `#[derive(rkb_runtime::Rbac)]`, any path ending in `Rbac`), with the rules of its
//!   `#[rbac(...)]` attributes;
//! - every impl carrying `#[rkb_runtime::webhook(...)]` (or `#[webhook(...)]` on an `impl
//!   Defaulter<K>` or `impl Validator<K>`), with the kind of webhook, the resource and self
//!   types as written, and its settings.
//!
//! The attributes are parsed by rkb-core's parser, the one `#[derive(Rbac)]` and the
//! webhook attribute run at compile time: a rule means the same to both, and a mistake
//! gets the derive's message, here at `file:line:column`.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let src = tempfile::tempdir()?;
//! std::fs::create_dir(src.path().join("controller"))?;
//! let reconciler = r#"
//!     #[derive(rkb_runtime::Rbac)]
//!     #[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [list, watch])]
//!     pub struct MemcachedReconciler;
//! "#;
//! std::fs::write(src.path().join("controller/memcached.rs"), reconciler)?;
//!
//! let sources = rkb_manifests::sources::read(src.path())?;
//! let found = &sources.reconcilers[0];
//! assert_eq!(found.path, "controller::memcached::MemcachedReconciler");
//! assert_eq!(found.rules[0].verbs, ["list", "watch"]);
//!
//! // A mistake gets the derive's message, where it is.
//! std::fs::write(src.path().join("controller/memcached.rs"), reconciler.replace("watch", "wacth"))?;
//! let error = rkb_manifests::sources::read(src.path()).unwrap_err().to_string();
//! assert!(error.ends_with("memcached.rs:3:87: unknown verb `wacth`; did you mean `watch`?"), "{error}");
//! # Ok(())
//! # }
//! ```
//!
//! **What it cannot see.** It reads the sources as written, not as the compiler expands
//! them, so:
//!
//! - an item or module under `#[cfg(test)]` is skipped (it is never in the operator), but
//!   every other `#[cfg(...)]` is read as if it were on: a rule behind a feature that the
//!   operator's build leaves off is still read;
//! - `#[cfg_attr(..., rbac(...))]`, and items a macro generates (`macro_rules!` or a
//!   procedural macro) or declares inside a function body, are not read;
//! - every `.rs` file under the directory is read, also one no `mod` declares, except a
//!   file of a `#[cfg(test)] mod name;`.
//!
//! It checks what the derive checks but the CEL syntax of a webhook's `match_condition`
//! expressions: only the derive parses those (rkb-core's `cel` feature, which rkb-manifests
//! does not ask for), so a mistake in one is refused when the operator next compiles (`make
//! test`, `make build`) and by the API server, not by `make manifests`.
//!
//! A rule it misses is missing from `config/rbac/role.yaml`, and the RBAC audit of the
//! project's tests (`rkb_runtime::testing::RbacAudit`) reports the request it denies.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::ToTokens;
use rkb_core::syntax;
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, Item, Meta, Token};

pub use rkb_core::webhook::{Kind, Settings};

use crate::rbac::Rule;

/// What a project's sources declare for `make manifests`, in the order of their files
/// (sorted by path) and of the items in each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources {
    /// Every item that derives `Rbac`.
    pub reconcilers: Vec<Reconciler>,
    /// Every impl carrying the webhook attribute.
    pub webhooks: Vec<WebhookImpl>,
}

/// An item that derives `Rbac`, and its rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reconciler {
    /// Its path from the crate root, as the files' layout gives it, e.g.
    /// `controller::memcached::MemcachedReconciler` for `src/controller/memcached.rs`.
    pub path: String,
    /// The file it is declared in, below the directory read.
    pub file: PathBuf,
    /// Its `#[rbac(...)]` rules, in order: what `rkb_runtime::rbac_rules::<R>()` returns.
    pub rules: Vec<Rule>,
}

/// An `impl Defaulter<K> for T` or `impl Validator<K> for T` carrying the webhook attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookImpl {
    /// `Mutating` for a `Defaulter`, `Validating` for a `Validator`.
    pub kind: Kind,
    /// The resource type `K`, as written in the impl, e.g. `Memcached` or
    /// `api::cache::v1alpha1::Memcached`.
    pub resource: String,
    /// The self type `T`, as written, e.g. `MemcachedWebhook`.
    pub self_type: String,
    /// The module of the impl, as the files' layout gives it, e.g. `webhook::v1alpha1::memcached`.
    pub module: String,
    /// The file it is in, below the directory read.
    pub file: PathBuf,
    /// The attribute's settings: what the impl's `settings()` returns.
    pub settings: Settings,
}

impl Sources {
    /// The rules of every reconciler, in order: for
    /// [`Manifests::new`](crate::Manifests::new)'s `rbac` list.
    pub fn rules(&self) -> Vec<Rule> {
        self.reconcilers
            .iter()
            .flat_map(|reconciler| reconciler.rules.iter().cloned())
            .collect()
    }
}

/// One mistake in the sources, where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file, below the directory read (the directory itself when it cannot be read).
    pub file: PathBuf,
    /// 1-based line, or 0 when the mistake is the whole file's (it cannot be read).
    pub line: usize,
    /// 1-based column, in characters, as rustc counts them.
    pub column: usize,
    /// What is wrong: for an attribute, the derive macro's message.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file.display(), self.message),
            line => write!(
                f,
                "{}:{line}:{}: {}",
                self.file.display(),
                self.column,
                self.message
            ),
        }
    }
}

/// Why the sources could not be read: every mistake of every file, one a line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    /// The mistakes, by file, each file's in the order the derive macros report them.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.diagnostics.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

/// The rules and webhook settings declared in the `.rs` files under `dir` (see the
/// [module](self)); every mistake of every file when any file cannot be read or parsed, or
/// any attribute is wrong.
pub fn read(dir: &Path) -> Result<Sources, Error> {
    let mut diagnostics = Vec::new();
    let mut files = Vec::new();
    for file in rust_files(dir, &mut diagnostics) {
        match fs::read_to_string(&file) {
            Ok(text) => match syn::parse_file(&text) {
                Ok(syntax) => files.push((file, syntax)),
                Err(error) => diagnostics.extend(located(&file, error)),
            },
            Err(error) => diagnostics.push(unreadable(&file, &error)),
        }
    }
    let test_only = test_only_files(dir, &files);
    let mut sources = Sources::default();
    for (file, syntax) in &files {
        if test_only.iter().any(|skipped| file.starts_with(skipped)) {
            continue;
        }
        let module = module_path(dir, file);
        let mut errors = Vec::new();
        visit(&syntax.items, &module, file, &mut sources, &mut errors);
        for error in errors {
            diagnostics.extend(located(file, error));
        }
    }
    if diagnostics.is_empty() {
        Ok(sources)
    } else {
        Err(Error { diagnostics })
    }
}

/// The items of one module (a file, or an inline `mod { ... }`).
fn visit(
    items: &[Item],
    module: &[String],
    file: &Path,
    sources: &mut Sources,
    errors: &mut Vec<syn::Error>,
) {
    for item in items {
        let attrs = attributes(item);
        if attrs.iter().any(is_cfg_test) {
            continue;
        }
        if let Item::Mod(inline) = item
            && let Some((_, items)) = &inline.content
        {
            let mut inner = module.to_vec();
            inner.push(name(&inline.ident));
            visit(items, &inner, file, sources, errors);
            continue;
        }
        if let Some(ident) = derives_rbac(item) {
            match syntax::rbac::derive_rules(ident, attrs) {
                Ok(rules) => sources.reconcilers.push(Reconciler {
                    path: join(module, Some(ident)),
                    file: file.to_owned(),
                    rules: rules.into_iter().map(rule).collect(),
                }),
                Err(error) => errors.push(error),
            }
        }
        if let Some(attr) = webhook_attribute(item) {
            match webhook(item, attr) {
                Ok(found) => sources.webhooks.push(WebhookImpl {
                    module: join(module, None),
                    file: file.to_owned(),
                    ..found
                }),
                Err(error) => errors.push(error),
            }
        }
    }
}

/// The impl `item` carrying the webhook attribute `attr`, parsed from the macro's arguments
/// and input as the compiler hands them over (the item without the attribute); its module
/// and file left for the caller.
fn webhook(item: &Item, attr: &Attribute) -> syn::Result<WebhookImpl> {
    let args = match &attr.meta {
        Meta::Path(_) => TokenStream::new(),
        Meta::List(list) => list.tokens.clone(),
        Meta::NameValue(_) => {
            return Err(syn::Error::new_spanned(
                attr,
                "expected #[rkb_runtime::webhook] or #[rkb_runtime::webhook(...)]",
            ));
        }
    };
    let mut input = item.clone();
    if let Item::Impl(block) = &mut input {
        block.attrs.retain(|a| a != attr);
    }
    let (block, kind, settings) = syntax::webhook::parse(args, input.into_token_stream())?;
    let resource = block
        .trait_
        .as_ref()
        .and_then(|(_, path, _)| path.segments.last())
        .and_then(|segment| match &segment.arguments {
            syn::PathArguments::AngleBracketed(args) => args.args.first().map(text),
            _ => None,
        })
        .unwrap_or_default();
    Ok(WebhookImpl {
        kind,
        resource,
        self_type: text(&block.self_ty),
        module: String::new(),
        file: PathBuf::new(),
        settings,
    })
}

/// `tokens` as Rust writes them: `api::v1::Memcached`, `Vec<Pod>`.
fn text(tokens: impl ToTokens) -> String {
    let spaced = tokens.to_token_stream().to_string();
    [
        (" :: ", "::"),
        (":: ", "::"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
    ]
    .iter()
    .fold(spaced, |text, (from, to)| text.replace(from, to))
}

fn rule(rule: syntax::rbac::Rule) -> Rule {
    Rule {
        api_groups: rule.groups,
        resources: rule.resources,
        resource_names: rule.resource_names,
        verbs: rule.verbs,
        non_resource_urls: rule.urls,
        namespace: rule.namespace,
    }
}

fn attributes(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]`, exactly.
fn is_cfg_test(attr: &Attribute) -> bool {
    attr.path().is_ident("cfg")
        && attr
            .parse_args::<Ident>()
            .is_ok_and(|ident| ident == "test")
}

/// The name of a struct, enum or union with `Rbac` (any path to it) among its derives.
fn derives_rbac(item: &Item) -> Option<&Ident> {
    let (ident, attrs) = match item {
        Item::Struct(i) => (&i.ident, &i.attrs),
        Item::Enum(i) => (&i.ident, &i.attrs),
        Item::Union(i) => (&i.ident, &i.attrs),
        _ => return None,
    };
    let derives_it = |attr: &Attribute| {
        attr.path().is_ident("derive")
            && attr
                .parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)
                .is_ok_and(|paths| {
                    paths
                        .iter()
                        .any(|path| path.segments.last().is_some_and(|s| s.ident == "Rbac"))
                })
    };
    attrs.iter().any(derives_it).then_some(ident)
}

/// The webhook attribute of `item`: `rkb_runtime::webhook` (or `rkb_derive::webhook`)
/// anywhere, where a misplaced one is reported as the compiler would; a bare `webhook` on
/// an impl of `Defaulter` or `Validator` only, since another crate's attribute may have
/// that name.
fn webhook_attribute(item: &Item) -> Option<&Attribute> {
    attributes(item).iter().find(|attr| {
        let names: Vec<String> = attr
            .path()
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        match names.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["rkb_runtime" | "rkb_derive", "webhook"] => true,
            ["webhook"] => matches!(item, Item::Impl(block)
                if syntax::webhook::trait_kind(block).is_some()),
            _ => false,
        }
    })
}

/// The identifier without `r#`.
fn name(ident: &Ident) -> String {
    ident.unraw().to_string()
}

/// `module::Name`, or the module alone.
fn join(module: &[String], name: Option<&Ident>) -> String {
    let mut parts = module.to_vec();
    parts.extend(name.map(self::name));
    parts.join("::")
}

/// The module of `file`, from the crate root `dir`: `controller/memcached.rs` and
/// `controller/memcached/mod.rs` are `controller::memcached`; `lib.rs` and `main.rs` the
/// root.
fn module_path(dir: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(dir).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let root = parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main");
    if root || parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

/// The files and directories of the modules that `#[cfg(test)] mod name;` declares.
fn test_only_files(dir: &Path, files: &[(PathBuf, syn::File)]) -> Vec<PathBuf> {
    let mut skipped = Vec::new();
    for (file, syntax) in files {
        let module_dir = dir.join(module_path(dir, file).join("/"));
        for item in &syntax.items {
            if let Item::Mod(declared) = item
                && declared.content.is_none()
                && declared.attrs.iter().any(is_cfg_test)
            {
                let name = name(&declared.ident);
                skipped.push(module_dir.join(format!("{name}.rs")));
                skipped.push(module_dir.join(name));
            }
        }
    }
    skipped
}

/// Every `.rs` file under `dir`, sorted by path.
fn rust_files(dir: &Path, diagnostics: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let mut entries = match fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .collect::<Vec<_>>(),
        Err(error) => {
            diagnostics.push(unreadable(dir, &error));
            return Vec::new();
        }
    };
    entries.sort();
    let mut files = Vec::new();
    for path in entries {
        if path.is_dir() {
            files.extend(rust_files(&path, diagnostics));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

fn unreadable(path: &Path, error: &io::Error) -> Diagnostic {
    Diagnostic {
        file: path.to_owned(),
        line: 0,
        column: 0,
        message: format!("cannot read it: {error}"),
    }
}

/// Each message of `error`, at the start of its span.
fn located(file: &Path, error: syn::Error) -> Vec<Diagnostic> {
    error
        .into_iter()
        .map(|error| {
            let start = error.span().start();
            Diagnostic {
                file: file.to_owned(),
                line: start.line,
                column: start.column + 1,
                message: error.to_string(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with `files` (path, text), read.
    fn read_files(files: &[(&str, &str)]) -> Result<Sources, Error> {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        read(dir.path()).map_err(|mut error| {
            for diagnostic in &mut error.diagnostics {
                let relative = diagnostic.file.strip_prefix(dir.path()).unwrap();
                diagnostic.file = relative.to_owned();
            }
            error
        })
    }

    const RECONCILER: &str = r#"
        #[derive(Rbac)]
        #[rbac(groups = ["apps"], resources = ["deployments"], verbs = [list])]
        pub struct Reconciler;
    "#;

    #[test]
    fn paths_follow_the_files_and_inline_modules() {
        let inline = format!("pub mod inner {{ {RECONCILER} }}");
        let sources = read_files(&[
            ("lib.rs", RECONCILER),
            ("controller/mod.rs", RECONCILER),
            ("controller/memcached.rs", &inline),
            ("bin/manifests.rs", "fn main() {}"),
        ])
        .unwrap();
        let paths: Vec<&str> = sources
            .reconcilers
            .iter()
            .map(|r| r.path.as_str())
            .collect();
        assert_eq!(
            paths,
            [
                "controller::memcached::inner::Reconciler",
                "controller::Reconciler",
                "Reconciler",
            ]
        );
        assert_eq!(sources.rules().len(), 3);
    }

    #[test]
    fn test_only_items_and_modules_are_skipped() {
        let sources = read_files(&[
            (
                "lib.rs",
                &format!("#[cfg(test)] mod tests;\n#[cfg(test)] mod inline {{ {RECONCILER} }}"),
            ),
            ("tests.rs", RECONCILER),
            ("tests/more.rs", RECONCILER),
            ("other.rs", &format!("#[cfg(test)]{RECONCILER}")),
            // Only `cfg(test)` is known to be off in the operator.
            (
                "featured.rs",
                &format!("#[cfg(feature = \"x\")]{RECONCILER}"),
            ),
        ])
        .unwrap();
        let paths: Vec<&str> = sources
            .reconcilers
            .iter()
            .map(|r| r.path.as_str())
            .collect();
        assert_eq!(paths, ["featured::Reconciler"]);
    }

    #[test]
    fn every_mistake_of_every_file_is_located() {
        let error = read_files(&[
            ("a.rs", "fn broken( {"),
            ("b.rs", &RECONCILER.replace("list", "lsit")),
            ("c.rs", "#[derive(Clone, rkb_runtime::Rbac)]\nstruct Empty;"),
        ])
        .unwrap_err();
        let lines: Vec<String> = error.diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(lines[0].starts_with("a.rs:1:"), "{}", lines[0]);
        assert_eq!(
            lines[1],
            "b.rs:3:73: unknown verb `lsit`; did you mean `list`?"
        );
        assert!(
            lines[2].starts_with("c.rs:2:8: #[derive(Rbac)] on `Empty` declares no permissions"),
            "{}",
            lines[2]
        );
        assert_eq!(error.to_string(), lines.join("\n"));
    }

    #[test]
    fn a_missing_directory_is_an_error_not_no_rules() {
        let error = read(Path::new("/nonexistent/src")).unwrap_err();
        assert_eq!(error.diagnostics.len(), 1);
        assert!(
            error
                .to_string()
                .starts_with("/nonexistent/src: cannot read it:"),
            "{error}"
        );
    }

    #[test]
    fn webhooks_are_found_by_their_attribute() {
        let sources = read_files(&[(
            "webhook.rs",
            r#"
            use rkb_runtime::webhook;

            #[rkb_runtime::webhook(timeout_seconds = 3)]
            impl webhook::Validator<api::v1::Memcached> for Checks {}

            #[webhook]
            impl Defaulter<Memcached> for crate::Checks {}

            // Another crate's attribute of the same name, elsewhere than on a webhook.
            #[webhook]
            fn handler() {}
            "#,
        )])
        .unwrap();
        let found: Vec<_> = sources
            .webhooks
            .iter()
            .map(|w| {
                (
                    w.kind,
                    w.resource.as_str(),
                    w.self_type.as_str(),
                    w.module.as_str(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (Kind::Validating, "api::v1::Memcached", "Checks", "webhook"),
                (Kind::Mutating, "Memcached", "crate::Checks", "webhook"),
            ]
        );
        assert_eq!(sources.webhooks[0].settings.timeout_seconds, Some(3));
        assert_eq!(sources.webhooks[1].settings, Settings::default());
    }

    #[test]
    fn a_misplaced_webhook_attribute_is_reported_as_the_macro_does() {
        let error = read_files(&[(
            "lib.rs",
            "#[rkb_runtime::webhook]\nimpl Clone for X {}\n#[rkb_runtime::webhook = \"x\"]\nimpl Validator<K> for X {}",
        )])
        .unwrap_err();
        let lines: Vec<String> = error.diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "lib.rs:2:1: #[rkb_runtime::webhook] goes on an `impl Defaulter<Kind> for ...` \
                 or `impl Validator<Kind> for ...` block",
                "lib.rs:3:1: expected #[rkb_runtime::webhook] or #[rkb_runtime::webhook(...)]",
            ]
        );
    }

    #[test]
    fn manifests_from_unreadable_sources_fail_and_write_nothing() {
        let project = tempfile::tempdir().unwrap();
        fs::create_dir(project.path().join("src")).unwrap();
        fs::write(
            project.path().join("src/lib.rs"),
            RECONCILER.replace("list", "lsit"),
        )
        .unwrap();
        let manifests =
            crate::Manifests::new(vec![], vec![]).rules_from(project.path().join("src"));
        let error = manifests.write(project.path()).unwrap_err();
        assert!(
            matches!(error, crate::manifests::Error::Sources(_)),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .ends_with("lib.rs:3:73: unknown verb `lsit`; did you mean `list`?"),
            "{error}"
        );
        assert!(!project.path().join("config").exists());
    }

    /// An operator's webhook file as `rkb create webhook` writes it, with a path of its own.
    const WEBHOOK: &str = r#"
        use k8s_openapi::api::core::v1::ConfigMap;
        pub struct ConfigMapWebhook;
        #[rkb_runtime::webhook(path = "/mutate-configmaps", failure_policy = "ignore")]
        impl webhook::Defaulter<ConfigMap> for ConfigMapWebhook {}
    "#;

    /// The manifests of an operator whose src/webhook/configmap.rs is `source`, with `webhooks`.
    fn declared(source: &str, webhooks: Vec<crate::webhook::Webhook>) -> crate::Manifests {
        let project = tempfile::tempdir().unwrap();
        fs::create_dir_all(project.path().join("src/webhook")).unwrap();
        fs::write(project.path().join("src/webhook/configmap.rs"), source).unwrap();
        crate::Manifests::new(vec![], vec![])
            .rules_from(project.path().join("src"))
            .webhooks(webhooks)
    }

    #[test]
    fn a_webhook_declared_by_its_impl_gets_the_impls_settings() {
        use crate::webhook::{self, Webhook};
        use k8s_openapi::api::core::v1::ConfigMap;

        let manifests = declared(
            WEBHOOK,
            vec![webhook::defaulting::<ConfigMap>(
                "webhook::configmap::ConfigMapWebhook",
            )],
        );
        let resolved = manifests.resolved_webhooks().unwrap();
        let [Webhook::Admission { kind, settings, .. }] = resolved.as_slice() else {
            panic!("{resolved:?}");
        };
        assert_eq!(*kind, Kind::Mutating);
        assert_eq!(settings.path.as_deref(), Some("/mutate-configmaps"));
        let files = manifests.render().unwrap();
        let configuration = &files[Path::new(crate::webhook::WEBHOOK_FILE)];
        assert!(
            configuration.contains("path: /mutate-configmaps")
                && configuration.contains("failurePolicy: Ignore"),
            "{configuration}"
        );
    }

    #[test]
    fn a_webhook_declared_by_a_missing_or_wrong_impl_is_refused_with_what_was_found() {
        use crate::webhook;
        use k8s_openapi::api::core::v1::{ConfigMap, Secret};

        let refused = |source: &str, hook: crate::webhook::Webhook| {
            declared(source, vec![hook])
                .resolved_webhooks()
                .unwrap_err()
                .to_string()
        };
        // No such impl: the line of the registration, what was looked for, what was found.
        let error = refused(
            WEBHOOK,
            webhook::defaulting::<ConfigMap>("webhook::configmaps::ConfigMapWebhook"),
        );
        assert!(error.starts_with(&format!("{}:", file!())), "{error}");
        assert!(
            error.contains("looked for as `impl Defaulter<ConfigMap> for ConfigMapWebhook`")
                && error.contains(
                    "there is no webhook impl for ConfigMapWebhook in module webhook::configmaps"
                )
                && error.contains("impl Defaulter<ConfigMap> for ConfigMapWebhook in ")
                && error.contains("(module webhook::configmap)"),
            "{error}"
        );
        // Another kind: the impl is a Defaulter, listed as a validating webhook.
        let error = refused(
            WEBHOOK,
            webhook::validating::<ConfigMap>("webhook::configmap::ConfigMapWebhook"),
        );
        assert!(
            error.contains("has no `impl Validator<ConfigMap>`")
                && error.contains("list it with `webhooks::defaulting` instead"),
            "{error}"
        );
        // Another resource: the impl is for ConfigMap, listed for Secret.
        let error = refused(
            WEBHOOK,
            webhook::defaulting::<Secret>("webhook::configmap::ConfigMapWebhook"),
        );
        assert!(error.contains("are not for a type named Secret"), "{error}");
        // No sources read at all.
        let error = crate::Manifests::new(vec![], vec![])
            .webhooks(vec![webhook::defaulting::<ConfigMap>("webhook::X")])
            .render()
            .unwrap_err()
            .to_string();
        assert!(error.contains("add `.rules_from("), "{error}");
    }
}
