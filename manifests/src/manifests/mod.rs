//! The files `make manifests` owns: CRDs under `config/crd/bases/` and the
//! manager's roles in `config/rbac/role.yaml`, rendered from Rust types.
//!
//! One job a file: this one holds [`Manifests`] and the way a CRD goes to its file;
//! `merge.rs` merges the versions of a CRD, `fit.rs` is the size policy, `released.rs` the
//! breaking-change gate, `roles.rs`
//! renders the roles, `yaml.rs` writes YAML as controller-gen does, `files.rs` writes and
//! checks the files on disk, `cli.rs` is the generator's command line, and `error.rs`
//! says what can go wrong.
//!
//! A CRD from [`crate::crd()`] arrives as the JSON its schema was repaired and checked
//! in; its versions are merged, its conversion webhook added and its size fitted in that
//! same value, which becomes a typed definition once, for the file.
//!
//! A project's `src/bin/manifests.rs` is a few lines:
//!
//! ```ignore (the src/bin/manifests.rs of a project, through the rkb_runtime facade over this crate)
//! fn main() -> std::process::ExitCode {
//!     rkb_runtime::Manifests::new(
//!         vec![rkb_runtime::crd::<Memcached>()],
//!         vec![rkb_runtime::rbac_rules::<MemcachedReconciler>()],
//!     )
//!     .main()
//! }
//! ```
//!
//! [`crate::crd()`] returns a `Result`: a type whose CRD is invalid fails
//! `make manifests` with every problem of every type, not a panic.
//!
//! **Size.** A CRD that embeds big Kubernetes types (a `PodSpec` is ~100 KiB of
//! schema) soon exceeds what a client-side `kubectl apply` can store: it keeps the
//! whole object, as compact JSON, in the `kubectl.kubernetes.io/last-applied-configuration`
//! annotation, and the API server refuses an object whose annotations together exceed
//! 256 KiB. So the budget measures that JSON, not the YAML file (which is 2 to 3 times
//! bigger): by default a CRD keeps all its descriptions while it fits
//! [`DEFAULT_MAX_CRD_SIZE`]; over that, descriptions are dropped, and if it is still
//! too big, the deepest object levels of the schema become schemaless
//! (`x-kubernetes-preserve-unknown-fields`), deepest first, until it fits. Each step
//! is reported in the summary. [`Manifests::max_desc_len`] (controller-gen's
//! `crd:maxDescLen`) and [`Manifests::max_crd_size`] set the policy explicitly.
//!
//! **Breaking changes.** When `config/crd/released/` holds CRDs (the last release,
//! copied there by `make release-crds`), [`Manifests::write`] and [`Manifests::check`]
//! compare each rendered CRD with its released one ([`crate::compat`]) and fail, writing
//! nothing, on a change that would break stored objects or their clients, unless
//! `config/crd/released/allow-breaking.txt` allows it (`released.rs`).
//!
//! Every `*.yaml` file in `config/crd/bases/` belongs to `make manifests`: one
//! that no CRD renders to any more is removed by [`Manifests::write`] and
//! reported by [`Manifests::check`].
//!
//! **Roles in namespaces.** `#[rbac(namespace = "...")]` rules become a Role with a
//! RoleBinding for the manager in that namespace. `system`, the placeholder
//! `config/default` replaces with the manager's namespace, stays in `role.yaml`; any
//! other namespace goes to [`NAMESPACED_RBAC_DIR`], an overlay of `config/default`
//! that `make deploy` applies, because `config/default` would move it into the
//! manager's namespace (kustomize cannot exempt objects from its namespace).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::compat::Allowance;
use crate::crd::{Crd, CrdError};
use crate::rbac::Rule;
use crate::sources;
use crate::webhook::{self, Webhook, WebhookError};

mod cli;
mod error;
mod files;
mod fit;
mod merge;
mod released;
mod roles;
mod yaml;

pub use error::{Claim, Error};
pub use files::{Drift, Report};
pub use fit::json_size;
pub use released::{ALLOW_FILE, RELEASED_DIR};

use merge::Merged;
use yaml::yaml_document;

/// Where CRDs go, relative to the project root (controller-gen's layout).
pub const CRD_DIR: &str = "config/crd/bases";
/// Where the manager's roles go, relative to the project root.
pub const ROLE_FILE: &str = "config/rbac/role.yaml";
/// Where the manager's Roles in other namespaces than its own go, with their
/// RoleBindings: an overlay of `config/default`, whose namespace transformer would move
/// them into the manager's namespace (see [`NAMESPACED_RBAC_FILES`]).
pub const NAMESPACED_RBAC_DIR: &str = "config/namespaced-rbac";
/// The files `make manifests` owns in [`NAMESPACED_RBAC_DIR`]: written while some rule
/// names a namespace other than the manager's, removed when none does.
pub const NAMESPACED_RBAC_FILES: [&str; 2] = [
    "config/namespaced-rbac/kustomization.yaml",
    "config/namespaced-rbac/role.yaml",
];
/// The role name controller-gen uses in kubebuilder projects.
pub const DEFAULT_ROLE_NAME: &str = "manager-role";
/// The default size budget of one CRD, measured as compact JSON (what client-side
/// `kubectl apply` stores in its last-applied-configuration annotation): the API
/// server's 256 KiB limit on an object's annotations, less 1 KiB for that
/// annotation's key and any others.
pub const DEFAULT_MAX_CRD_SIZE: usize = 256 * 1024 - 1024;

/// The CRDs and RBAC rules of an operator, and the files they render to.
#[derive(Clone, Debug)]
pub struct Manifests {
    crds: Vec<Result<Crd, CrdError>>,
    rules: Vec<Rule>,
    role_name: String,
    namespaced: bool,
    max_desc_len: Option<usize>,
    max_crd_size: Option<usize>,
    webhooks: Vec<Webhook>,
    allow_breaking: Vec<Allowance>,
    /// Why [`Manifests::rules_from`] could not read its sources: rendering fails with it.
    unread: Option<sources::Error>,
    /// The webhook impls of the sources [`Manifests::rules_from`] read, and those
    /// directories: what [`webhook::Webhook::Declared`] entries are resolved against.
    webhook_impls: Vec<sources::WebhookImpl>,
    read: Vec<PathBuf>,
}

impl Manifests {
    /// `crds`: one per version of each kind, e.g. `rkb_runtime::crd::<K>()`
    /// (versions of one kind are merged; pass a hand-made CRD as `Ok(definition.into())`);
    /// `rbac`: the rules of each reconciler, e.g. `rkb_runtime::rbac_rules::<R>()`.
    pub fn new(crds: Vec<Result<Crd, CrdError>>, rbac: Vec<Vec<Rule>>) -> Self {
        Manifests {
            crds,
            rules: rbac.into_iter().flatten().collect(),
            role_name: DEFAULT_ROLE_NAME.to_owned(),
            namespaced: false,
            max_desc_len: None,
            max_crd_size: Some(DEFAULT_MAX_CRD_SIZE),
            webhooks: Vec::new(),
            allow_breaking: Vec::new(),
            unread: None,
            webhook_impls: Vec::new(),
            read: Vec::new(),
        }
    }

    /// Adds the rules of every `#[derive(Rbac)]` in the `.rs` files under `dir`, read
    /// without compiling them ([`sources::read`]) by the parser the derive macro uses. A
    /// relative `dir` is taken from the current directory; a generator that must not
    /// depend on it names the directory from `env!("CARGO_MANIFEST_DIR")`. A file that
    /// does not parse, or a wrong attribute, fails [`Manifests::render`],
    /// [`Manifests::write`] and [`Manifests::check`] with [`Error::Sources`] (each mistake
    /// at `file:line:column`, with the derive's message), and nothing is written.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let project = tempfile::tempdir()?;
    /// # std::fs::create_dir(project.path().join("src"))?;
    /// # let root = project.path();
    /// std::fs::write(
    ///     root.join("src/lib.rs"),
    ///     r#"
    ///     #[derive(rkb_runtime::Rbac)]
    ///     #[rbac(groups = ["apps"], resources = ["deployments"], verbs = [list, watch])]
    ///     pub struct DeploymentReconciler;
    ///     "#,
    /// )?;
    /// let manifests = rkb_manifests::Manifests::new(vec![], vec![]).rules_from(root.join("src"));
    /// let files = manifests.render()?;
    /// let role = &files[std::path::Path::new(rkb_manifests::manifests::ROLE_FILE)];
    /// assert!(role.contains("- deployments"), "{role}");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// The webhook impls found there are what the webhooks declared by impl
    /// ([`webhook::defaulting`], [`webhook::validating`]) take their settings from.
    pub fn rules_from(mut self, dir: impl AsRef<Path>) -> Self {
        self.read.push(dir.as_ref().to_owned());
        match sources::read(dir.as_ref()) {
            Ok(sources) => {
                self.rules.extend(sources.rules());
                self.webhook_impls.extend(sources.webhooks);
            }
            Err(error) => match &mut self.unread {
                Some(unread) => unread.diagnostics.extend(error.diagnostics),
                None => self.unread = Some(error),
            },
        }
        self
    }

    /// The operator's webhooks, e.g. `rkb_runtime::webhooks::defaulting::<K>("path::To::Impl")`
    /// (its settings read from the sources, see [`Manifests::rules_from`]) or
    /// `rkb_runtime::defaulting_webhook::<K, D>()` (from the compiled impl): admission
    /// webhooks render to `config/webhook/manifests.yaml`, a conversion webhook adds
    /// `conversion: strategy: Webhook` to its CRD.
    pub fn webhooks(mut self, webhooks: Vec<Webhook>) -> Self {
        self.webhooks = webhooks;
        self
    }

    /// The webhooks, those declared by impl with the settings of the impl the sources
    /// hold: what `config/webhook/manifests.yaml` is rendered from.
    pub fn resolved_webhooks(&self) -> Result<Vec<Webhook>, Error> {
        if let Some(unread) = &self.unread {
            return Err(Error::Sources(unread.clone()));
        }
        let read: Vec<String> = self.read.iter().map(|d| d.display().to_string()).collect();
        let read = read.join(", ");
        self.webhooks
            .iter()
            .cloned()
            .map(|hook| match &hook {
                Webhook::Declared(declared) if self.read.is_empty() => {
                    Err(WebhookError::NoSources {
                        listed_at: declared.listed_at().to_owned(),
                        resource: declared.resource_type().to_owned(),
                    }
                    .into())
                }
                _ => Ok(hook.resolve(&self.webhook_impls, &read)?),
            })
            .collect()
    }

    /// controller-gen's `crd:maxDescLen`: descriptions longer than `n` bytes
    /// are cut at a word boundary and end in `...`; `0` drops them. Without
    /// it, descriptions are kept unless a CRD exceeds its size budget.
    pub fn max_desc_len(mut self, n: usize) -> Self {
        self.max_desc_len = Some(n);
        self
    }

    /// The size budget of one CRD in bytes of compact JSON (default
    /// [`DEFAULT_MAX_CRD_SIZE`]); `None` keeps every CRD whole, however big.
    pub fn max_crd_size(mut self, bytes: Option<usize>) -> Self {
        self.max_crd_size = bytes;
        self
    }

    /// Breaking changes to the released CRDs that [`Manifests::write`] lets through and
    /// records in [`ALLOW_FILE`] (`--allow-breaking`); each must match a change found.
    pub fn allow_breaking(mut self, allowances: Vec<Allowance>) -> Self {
        self.allow_breaking = allowances;
        self
    }

    /// Names the generated `ClusterRole` and `Role`s (default `manager-role`).
    pub fn role_name(mut self, name: &str) -> Self {
        name.clone_into(&mut self.role_name);
        self
    }

    /// A namespace-scoped operator (`rkb init --namespaced`): the rules that name no
    /// namespace go into a Role in the manager's namespace instead of a ClusterRole, so the
    /// manager can do nothing outside the namespaces it is given Roles in.
    pub fn namespaced(mut self) -> Self {
        self.namespaced = true;
        self
    }

    /// Every file `make manifests` owns, path relative to the project root -> exact bytes.
    pub fn render(&self) -> Result<BTreeMap<PathBuf, String>, Error> {
        self.render_with_notes().map(|(files, _)| files)
    }

    /// The CRDs exactly as `make manifests` writes them (versions merged, size policy
    /// applied), e.g. to install them into a test API server as `make install` would.
    pub fn crds(&self) -> Result<Vec<CustomResourceDefinition>, Error> {
        Ok(self
            .fitted_crds()?
            .into_iter()
            .map(|(_, crd, _)| crd)
            .collect())
    }

    /// Every valid, merged CRD within its budget, with its file and what the size policy did.
    fn fitted_crds(
        &self,
    ) -> Result<Vec<(PathBuf, CustomResourceDefinition, Option<String>)>, Error> {
        let mut crds = Vec::new();
        let mut invalid = Vec::new();
        for crd in &self.crds {
            match crd {
                Ok(crd) => crds.push(crd.clone()),
                Err(err) => invalid.push(err.clone()),
            }
        }
        if !invalid.is_empty() {
            return Err(Error::Schema(invalid));
        }
        let mut fitted = Vec::new();
        let mut owners: BTreeMap<PathBuf, String> = BTreeMap::new();
        let mut converted = webhook::converted_crds(&self.webhooks);
        let merged = merge::merge_versions(crds)?;
        merge::check_group_names(&merged)?;
        for Merged { name, mut crd, .. } in merged {
            if converted.remove(name.as_str()) {
                webhook::add_conversion(&name, &mut crd)?;
            }
            let file = format!(
                "{}_{}.yaml",
                merge::text(&crd, "/spec/group"),
                merge::text(&crd, "/spec/names/plural")
            );
            let path = Path::new(CRD_DIR).join(file);
            if let Some(first) = owners.insert(path.clone(), name.clone()) {
                return Err(Error::FileClash {
                    first,
                    second: name,
                    path,
                });
            }
            let note = self.fit(&name, &mut crd);
            fitted.push((path, fit::typed_crd(&name, crd)?, note));
        }
        if let Some(missing) = converted.first() {
            return Err(WebhookError::NoSuchCrd((*missing).to_owned()).into());
        }
        Ok(fitted)
    }

    /// [`Manifests::render`], with what the size policy did.
    fn render_with_notes(&self) -> Result<(BTreeMap<PathBuf, String>, Vec<String>), Error> {
        let mut files = BTreeMap::new();
        let mut notes = Vec::new();
        for (path, crd, note) in self.fitted_crds()? {
            let name = crd.metadata.name.clone().unwrap_or_default();
            files.insert(path, yaml_document(&name, &crd)?);
            notes.extend(note);
        }
        files.extend(self.render_roles()?);
        let (mutating, validating) = webhook::configurations(&self.resolved_webhooks()?)?;
        let mut configurations = String::new();
        if let Some(mutating) = &mutating {
            configurations.push_str(&yaml_document("MutatingWebhookConfiguration", mutating)?);
        }
        if let Some(validating) = &validating {
            configurations.push_str(&yaml_document(
                "ValidatingWebhookConfiguration",
                validating,
            )?);
        }
        if !configurations.is_empty() {
            files.insert(PathBuf::from(webhook::WEBHOOK_FILE), configurations);
        }
        Ok((files, notes))
    }
}
