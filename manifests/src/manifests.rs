//! The files `make manifests` owns: CRDs under `config/crd/bases/` and the
//! manager's roles in `config/rbac/role.yaml`, rendered from Rust types.
//!
//! A project's `src/bin/manifests.rs` is a few lines:
//!
//! ```ignore
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
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Serialize;
use serde_json::Value;

use crate::crd::{Crd, CrdError};
use crate::rbac::{self, Rule};
use crate::schema;
use crate::webhook::{self, Webhook, WebhookError};

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

/// Why manifests could not be rendered, written or checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Rust types whose CRDs are invalid (see [`crate::crd()`]).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Schema(Vec<CrdError>),
    /// A CRD has no `metadata.name`, group, plural or versions.
    #[error("invalid CRD {crd}: {reason}")]
    InvalidCrd {
        /// The CRD's name, or a placeholder when it has none.
        crd: String,
        /// What is wrong.
        reason: String,
    },
    /// The versions of a CRD name no storage version.
    #[error(
        "CRD {crd} has no storage version among its versions ({}): mark exactly one with \
         #[kube(storage = true)] (the default) on its Rust type",
        .versions.join(", ")
    )]
    NoStorageVersion {
        /// The CRD's `metadata.name`.
        crd: String,
        /// Every version of the CRD.
        versions: Vec<String>,
    },
    /// More than one version of a CRD is marked as the storage version.
    #[error(
        "CRD {crd} has more than one storage version ({}): keep storage on exactly one and \
         add #[kube(storage = false)] to the Rust types of the others",
        .storage.join(", ")
    )]
    MultipleStorageVersions {
        /// The CRD's `metadata.name`.
        crd: String,
        /// The versions marked `storage: true`.
        storage: Vec<String>,
    },
    /// Two of the CRDs given for one name carry the same version.
    #[error(
        "CRD {crd} gets version {version} from both {first} and {second}: {}",
        if .first == .second {
            "pass each version's type once"
        } else {
            "a CRD name is <plural>.<group>, so give one of the types another plural, \
             e.g. #[kube(plural = \"...\")], or another version"
        }
    )]
    DuplicateVersion {
        /// The CRD's `metadata.name`.
        crd: String,
        /// The repeated version.
        version: String,
        /// Where the first came from (see [`Crd::source`]).
        first: String,
        /// Where the second came from.
        second: String,
    },
    /// Two kinds claim one CRD name (their group and plural agree).
    #[error(
        "CRD {crd} is claimed by two kinds: {first} (kind {first_kind}) and {second} \
         (kind {second_kind}); a CRD name is <plural>.<group>, so give one of them another \
         plural, e.g. #[kube(plural = \"...\")] (`rkb create api --plural`)"
    )]
    KindClash {
        /// The CRD's `metadata.name`.
        crd: String,
        /// Where the first came from (see [`Crd::source`]).
        first: String,
        /// Its kind.
        first_kind: String,
        /// Where the second came from.
        second: String,
        /// Its kind.
        second_kind: String,
    },
    /// Two CRDs of one group share a name that the API server requires to be unique
    /// in the group (plural, singular, short name, kind or list kind).
    #[error(
        "CRDs {} ({}) and {} ({}) both use {name:?} as a {what} in group {group}: the API \
         server accepts only the first; plural, singular and short names, and kinds and \
         list kinds, must be unique within a group",
        .claims[0].source, .claims[0].crd, .claims[1].source, .claims[1].crd
    )]
    GroupNameClash {
        /// The API group.
        group: String,
        /// The name both use.
        name: String,
        /// `resource name` (plural, singular or short name) or `kind`.
        what: &'static str,
        /// The two CRDs, in the order given.
        claims: Box<[Claim; 2]>,
    },
    /// kube refused to merge the versions of a CRD (e.g. their scopes differ).
    #[error("cannot merge the versions of CRD {crd} (from {}): {source}", .sources.join(", "))]
    Merge {
        /// The CRD's `metadata.name`.
        crd: String,
        /// Where each version came from (see [`Crd::source`]).
        sources: Vec<String>,
        /// kube's reason.
        source: kube_core::crd::MergeError,
    },
    /// Two differently named CRDs would be written to the same file.
    #[error("CRDs {first} and {second} would both be written to {}", .path.display())]
    FileClash {
        /// One CRD.
        first: String,
        /// The other CRD.
        second: String,
        /// Their common file.
        path: PathBuf,
    },
    /// A hand-written rule that the API server would reject.
    #[error("invalid RBAC rule {rule:?}: {reason}")]
    InvalidRule {
        /// The rule as given.
        rule: Box<Rule>,
        /// What is wrong with it.
        #[source]
        reason: rbac::RuleError,
    },
    /// The webhooks cannot be rendered.
    #[error(transparent)]
    Webhook(#[from] WebhookError),
    /// The role name is not a valid object name.
    #[error("invalid role name {0:?}: it must be a DNS-1123 subdomain, e.g. \"manager-role\"")]
    InvalidRoleName(String),
    /// An object could not be rendered as YAML.
    #[error("cannot render {what} as YAML: {source}")]
    Yaml {
        /// The object.
        what: String,
        /// The serializer's reason.
        source: serde_yaml_ng::Error,
    },
    /// A file could not be read, written or removed.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// `read`, `write`, `remove`, ...
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS's reason.
        source: io::Error,
    },
    /// `check` found files that differ from what would be rendered.
    #[error("manifests are out of date: {}; run `make manifests`", .files.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    OutOfDate {
        /// Each file that differs, and how.
        files: Vec<Drift>,
    },
    /// Bad command-line arguments for [`Manifests::main`]: clap's message, with usage.
    #[error("{}", .0.to_string().trim_end().trim_start_matches("error: "))]
    Usage(Box<clap::Error>),
}

/// One side of a [`Error::GroupNameClash`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The CRD's `metadata.name`.
    pub crd: String,
    /// Where it came from (see [`Crd::source`]).
    pub source: String,
}

/// How a file on disk differs from the rendered manifests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    /// The file should exist but does not.
    Missing(PathBuf),
    /// The file's content differs.
    Changed(PathBuf),
    /// The file belongs to no CRD any more.
    Stale(PathBuf),
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drift::Missing(p) => write!(f, "{} (missing)", p.display()),
            Drift::Changed(p) => write!(f, "{} (changed)", p.display()),
            Drift::Stale(p) => write!(f, "{} (stale)", p.display()),
        }
    }
}

/// What [`Manifests::write`] did; paths relative to the project root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Files created or rewritten.
    pub written: Vec<PathBuf>,
    /// Files that already had the right content (left untouched).
    pub unchanged: Vec<PathBuf>,
    /// Stale CRD files removed.
    pub removed: Vec<PathBuf>,
    /// What the size policy did to fit CRDs into their budget.
    pub notes: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.written.is_empty() && self.removed.is_empty() {
            write!(f, "manifests: {} files up to date", self.unchanged.len())?;
        } else {
            write!(f, "manifests:")?;
            if !self.written.is_empty() {
                write!(f, " wrote {}", list(&self.written))?;
            }
            if !self.removed.is_empty() {
                let sep = if self.written.is_empty() { "" } else { ";" };
                write!(f, "{sep} removed {}", list(&self.removed))?;
            }
            write!(f, " ({} unchanged)", self.unchanged.len())?;
        }
        for note in &self.notes {
            write!(f, "\nnote: {note}")?;
        }
        Ok(())
    }
}

/// The flags of a project's manifests generator (`src/bin/manifests.rs`).
#[derive(Debug, clap::Parser)]
#[command(
    name = "manifests",
    about = "Writes config/crd/bases/*.yaml and config/rbac/role.yaml from the Rust types and \
             #[rbac] attributes (`make manifests`).",
    after_help = "Set both size flags in manifests() in src/lib.rs to make them stick: \
                  `make test` checks without flags."
)]
struct Args {
    /// Fail if the files are not up to date, writing nothing.
    #[arg(long)]
    check: bool,
    /// The project root.
    #[arg(long, value_name = "PROJECT_ROOT", default_value = ".")]
    dir: PathBuf,
    /// Cut descriptions to N bytes, 0 drops them (default: keep them while the CRD fits).
    #[arg(long, value_name = "N")]
    max_desc_len: Option<usize>,
    /// Size budget of one CRD in bytes of compact JSON, the form client-side `kubectl
    /// apply` stores in an annotation; 0 for none (default: 261120).
    #[arg(long, value_name = "BYTES")]
    max_crd_size: Option<usize>,
}

/// The CRDs and RBAC rules of an operator, and the files they render to.
#[derive(Clone, Debug)]
pub struct Manifests {
    crds: Vec<Result<Crd, CrdError>>,
    rules: Vec<Rule>,
    role_name: String,
    max_desc_len: Option<usize>,
    max_crd_size: Option<usize>,
    webhooks: Vec<Webhook>,
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
            max_desc_len: None,
            max_crd_size: Some(DEFAULT_MAX_CRD_SIZE),
            webhooks: Vec::new(),
        }
    }

    /// The operator's webhooks, e.g. `rkb_runtime::defaulting_webhook::<K, D>()`:
    /// admission webhooks render to `config/webhook/manifests.yaml`, a conversion
    /// webhook adds `conversion: strategy: Webhook` to its CRD.
    pub fn webhooks(mut self, webhooks: Vec<Webhook>) -> Self {
        self.webhooks = webhooks;
        self
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

    /// Names the generated `ClusterRole` and `Role`s (default `manager-role`).
    pub fn role_name(mut self, name: &str) -> Self {
        name.clone_into(&mut self.role_name);
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
        let merged = merge_versions(crds)?;
        check_group_names(&merged)?;
        for Merged { mut crd, .. } in merged {
            let name = crd.metadata.name.clone().unwrap_or_default();
            if converted.remove(name.as_str()) {
                webhook::add_conversion(&mut crd)?;
            }
            let path = Path::new(CRD_DIR)
                .join(format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural));
            if let Some(first) = owners.insert(path.clone(), name.clone()) {
                return Err(Error::FileClash {
                    first,
                    second: name,
                    path,
                });
            }
            let (crd, note) = self.fit(&name, &crd)?;
            fitted.push((path, crd, note));
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
        let (mutating, validating) = webhook::configurations(&self.webhooks)?;
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

    /// The CRD within its size budget (see the module docs), and what had to give.
    fn fit(
        &self,
        name: &str,
        crd: &CustomResourceDefinition,
    ) -> Result<(CustomResourceDefinition, Option<String>), Error> {
        let mut value = to_json(name, crd)?;
        if let Some(n) = self.max_desc_len {
            for_each_version_schema(&mut value, |s| {
                schema::limit_descriptions(s, n);
            });
        }
        let budget = match self.max_crd_size {
            Some(budget) if json_len(&value) > budget => budget,
            _ => return Ok((typed_crd(name, &value)?, None)),
        };
        let full = json_len(&value);
        let mut steps = Vec::new();
        if self.max_desc_len.is_none() {
            for_each_version_schema(&mut value, |s| {
                schema::limit_descriptions(s, 0);
            });
            steps.push("dropped its descriptions".to_owned());
            if json_len(&value) <= budget {
                let note = fit_note(name, full, json_len(&value), budget, &steps);
                return Ok((typed_crd(name, &value)?, Some(note)));
            }
        }
        let mut deepest = 0;
        for_each_version_schema(&mut value, |s| deepest = deepest.max(schema::depth(s)));
        let mut last = None;
        // Keep the spec's and status' own fields (depth 2) whatever happens.
        for depth in (2..deepest).rev() {
            let mut capped = value.clone();
            let mut count = 0;
            for_each_version_schema(&mut capped, |s| count += schema::cap_depth(s, depth));
            let step = format!(
                "made {count} object(s) below depth {depth} schemaless (x-kubernetes-preserve-unknown-fields)"
            );
            if json_len(&capped) <= budget {
                steps.push(step);
                let note = fit_note(name, full, json_len(&capped), budget, &steps);
                return Ok((typed_crd(name, &capped)?, Some(note)));
            }
            last = Some((capped, step));
        }
        if let Some((capped, step)) = last {
            steps.push(step);
            value = capped;
        }
        let mut note = fit_note(name, full, json_len(&value), budget, &steps);
        note.push_str("; still over budget: mark big embedded fields #[rkb(schemaless)]");
        Ok((typed_crd(name, &value)?, Some(note)))
    }

    /// `config/rbac/role.yaml`: the ClusterRole, and the Role in the manager's namespace
    /// ([`rbac::MANAGER_NAMESPACE`]) with its RoleBinding, which `config/default` moves
    /// there; and, when rules name other namespaces, their Roles and RoleBindings in
    /// [`NAMESPACED_RBAC_DIR`], out of reach of that namespace transformer.
    fn render_roles(&self) -> Result<Vec<(PathBuf, String)>, Error> {
        if !rkb_core::names::is_dns1123_subdomain(&self.role_name) {
            return Err(Error::InvalidRoleName(self.role_name.clone()));
        }
        for rule in &self.rules {
            rule.validate().map_err(|reason| Error::InvalidRule {
                rule: Box::new(rule.clone()),
                reason,
            })?;
        }
        let (cluster_role, roles) = rbac::roles(&self.rules, &self.role_name);
        let mut own = yaml_document("ClusterRole", &cluster_role)?;
        let mut elsewhere = String::new();
        for role in &roles {
            let in_own = role.metadata.namespace.as_deref() == Some(rbac::MANAGER_NAMESPACE);
            let out = if in_own { &mut own } else { &mut elsewhere };
            out.push_str(&yaml_document("Role", role)?);
            out.push_str(&yaml_document("RoleBinding", &rbac::role_binding(role))?);
        }
        let mut files = vec![(PathBuf::from(ROLE_FILE), own)];
        if !elsewhere.is_empty() {
            let [kustomization, role_file] = NAMESPACED_RBAC_FILES.map(PathBuf::from);
            files.push((
                kustomization,
                namespaced_rbac_kustomization(&self.role_name),
            ));
            files.push((role_file, elsewhere));
        }
        Ok(files)
    }

    /// Writes changed files only (so mtimes of unchanged files stay), and
    /// removes stale `config/crd/bases/*.yaml` files that no CRD renders to.
    /// Nothing is written if rendering fails.
    pub fn write(&self, project_root: &Path) -> Result<Report, Error> {
        let (files, notes) = self.render_with_notes()?;
        let mut report = Report {
            notes,
            ..Report::default()
        };
        for (rel, content) in &files {
            let path = project_root.join(rel);
            if read_if_exists(&path)?.as_deref() == Some(content.as_str()) {
                report.unchanged.push(rel.clone());
                continue;
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
            }
            std::fs::write(&path, content).map_err(io_err("write", &path))?;
            report.written.push(rel.clone());
        }
        for rel in stale_files(project_root, &files)? {
            let path = project_root.join(&rel);
            std::fs::remove_file(&path).map_err(io_err("remove", &path))?;
            report.removed.push(rel);
        }
        // The overlay's directory goes with its files, unless something else is in it.
        let _ = std::fs::remove_dir(project_root.join(NAMESPACED_RBAC_DIR));
        Ok(report)
    }

    /// Fails with [`Error::OutOfDate`] when any rendered file differs from
    /// disk or a stale CRD file is left; writes nothing.
    pub fn check(&self, project_root: &Path) -> Result<(), Error> {
        self.check_files(project_root).map(drop)
    }

    /// [`Manifests::check`], returning how many files are up to date.
    fn check_files(&self, project_root: &Path) -> Result<usize, Error> {
        let files = self.render()?;
        let mut drift = Vec::new();
        for (rel, content) in &files {
            match read_if_exists(&project_root.join(rel))? {
                None => drift.push(Drift::Missing(rel.clone())),
                Some(disk) if disk != *content => drift.push(Drift::Changed(rel.clone())),
                Some(_) => {}
            }
        }
        drift.extend(
            stale_files(project_root, &files)?
                .into_iter()
                .map(Drift::Stale),
        );
        if drift.is_empty() {
            Ok(files.len())
        } else {
            Err(Error::OutOfDate { files: drift })
        }
    }

    /// Entry point for the project's `src/bin/manifests.rs`: parses
    /// `[--check] [--dir <project root>]` (default `.`), writes or checks,
    /// prints a one-line summary, and fails on any error.
    pub fn main(self) -> ExitCode {
        match self.run(std::env::args().skip(1)) {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(Error::Usage(err)) => {
                // clap's own layout: "error: ...", then the usage line.
                let _ = err.print();
                ExitCode::FAILURE
            }
            Err(err) => {
                eprintln!("error: {err}");
                ExitCode::FAILURE
            }
        }
    }

    /// [`Manifests::main`] without the process: returns the summary line (or the help).
    pub fn run(&self, args: impl IntoIterator<Item = String>) -> Result<String, Error> {
        use clap::Parser as _;
        use clap::error::ErrorKind;

        let args = match Args::try_parse_from(std::iter::once("manifests".to_owned()).chain(args)) {
            Ok(args) => args,
            Err(help) if help.kind() == ErrorKind::DisplayHelp => {
                return Ok(help.render().to_string().trim_end().to_owned());
            }
            Err(err) => return Err(Error::Usage(Box::new(err))),
        };
        let mut this = self.clone();
        if let Some(len) = args.max_desc_len {
            this.max_desc_len = Some(len);
        }
        if let Some(bytes) = args.max_crd_size {
            this.max_crd_size = (bytes > 0).then_some(bytes);
        }
        if args.check {
            let count = this.check_files(&args.dir)?;
            Ok(format!("manifests: {count} files up to date"))
        } else {
            this.write(&args.dir).map(|report| report.to_string())
        }
    }
}

/// A CRD with its versions merged, and where each version came from.
struct Merged {
    crd: CustomResourceDefinition,
    sources: Vec<String>,
}

/// Merges the CRDs that share a `metadata.name` (one per version of a kind)
/// into one CRD each, with versions sorted by name like controller-gen.
fn merge_versions(crds: Vec<Crd>) -> Result<Vec<Merged>, Error> {
    versions_by_name(crds)?
        .into_iter()
        .map(|(name, parts)| merge_parts(name, parts))
        .collect()
}

/// One version of a CRD, with the source it came from.
type Part = (String, CustomResourceDefinition);

/// Every version of every CRD as a single-version CRD (what `merge_crds` takes),
/// grouped by `metadata.name`; CRDs without a name, group, plural or version refused.
fn versions_by_name(crds: Vec<Crd>) -> Result<BTreeMap<String, Vec<Part>>, Error> {
    let mut by_name: BTreeMap<String, Vec<Part>> = BTreeMap::new();
    for given in crds {
        let source = given.source();
        let crd = given.definition;
        let name = crd.metadata.name.clone().unwrap_or_default();
        let invalid = |reason: &str| Error::InvalidCrd {
            crd: if name.is_empty() {
                format!("of kind {:?}", crd.spec.names.kind)
            } else {
                name.clone()
            },
            reason: reason.to_owned(),
        };
        if name.is_empty() {
            return Err(invalid("metadata.name is empty"));
        }
        if crd.spec.group.is_empty() || crd.spec.names.plural.is_empty() {
            return Err(invalid("spec.group and spec.names.plural must be set"));
        }
        if crd.spec.versions.is_empty() {
            return Err(invalid("it has no versions"));
        }
        // merge_crds takes single-version CRDs; split any multi-version one.
        for version in &crd.spec.versions {
            let mut single = crd.clone();
            single.spec.versions = vec![version.clone()];
            by_name
                .entry(name.clone())
                .or_default()
                .push((source.clone(), single));
        }
    }
    Ok(by_name)
}

/// The versions of one CRD merged into one, after checking they agree on the kind,
/// differ in version name and name exactly one storage version.
fn merge_parts(name: String, mut parts: Vec<Part>) -> Result<Merged, Error> {
    // Stable: of two parts with one version, the first given stays first.
    parts.sort_by(|(_, a), (_, b)| a.spec.versions[0].name.cmp(&b.spec.versions[0].name));
    let (first, a) = &parts[0];
    if let Some((second, b)) = parts
        .iter()
        .find(|(_, c)| c.spec.names.kind != a.spec.names.kind)
    {
        return Err(Error::KindClash {
            crd: name,
            first: first.clone(),
            first_kind: a.spec.names.kind.clone(),
            second: second.clone(),
            second_kind: b.spec.names.kind.clone(),
        });
    }
    if let Some(((first, a), (second, _))) = parts
        .iter()
        .zip(&parts[1..])
        .find(|((_, a), (_, b))| a.spec.versions[0].name == b.spec.versions[0].name)
    {
        return Err(Error::DuplicateVersion {
            crd: name,
            version: a.spec.versions[0].name.clone(),
            first: first.clone(),
            second: second.clone(),
        });
    }
    let versions: Vec<String> = parts
        .iter()
        .map(|(_, c)| c.spec.versions[0].name.clone())
        .collect();
    let storage: Vec<String> = parts
        .iter()
        .filter(|(_, c)| c.spec.versions[0].storage)
        .map(|(_, c)| c.spec.versions[0].name.clone())
        .collect();
    let stored = match storage.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(Error::NoStorageVersion {
                crd: name,
                versions,
            });
        }
        _ => return Err(Error::MultipleStorageVersions { crd: name, storage }),
    };
    let mut sources: Vec<String> = Vec::new();
    for (source, _) in &parts {
        if !sources.contains(source) {
            sources.push(source.clone());
        }
    }
    let mut parts: Vec<CustomResourceDefinition> = parts.into_iter().map(|(_, c)| c).collect();
    let mut crd = if parts.len() == 1 {
        parts.remove(0)
    } else {
        kube_core::crd::merge_crds(parts, &stored).map_err(|source| Error::Merge {
            crd: name.clone(),
            sources: sources.clone(),
            source,
        })?
    };
    // merge_crds puts the storage version first; the file should not
    // depend on which version that is.
    crd.spec.versions.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Merged { crd, sources })
}

/// The API server accepts a CRD's names only if no other CRD of its group uses them:
/// plural, singular and short names share one namespace, kind and list kind another
/// (the apiextensions naming controller). Reports the first clash.
fn check_group_names(merged: &[Merged]) -> Result<(), Error> {
    // (group, what, name) -> (CRD name, its sources)
    let mut taken: BTreeMap<(&str, &'static str, &str), (&str, &[String])> = BTreeMap::new();
    for Merged { crd, sources } in merged {
        let names = &crd.spec.names;
        let crd_name = crd.metadata.name.as_deref().unwrap_or_default();
        let resources = std::iter::once(names.plural.as_str())
            .chain(names.singular.as_deref())
            .chain(names.short_names.iter().flatten().map(String::as_str))
            .map(|n| ("resource name", n));
        let kinds = std::iter::once(names.kind.as_str())
            .chain(names.list_kind.as_deref())
            .map(|n| ("kind", n));
        let mut own = BTreeMap::new();
        for (what, name) in resources.chain(kinds) {
            own.insert(
                (crd.spec.group.as_str(), what, name),
                (crd_name, sources.as_slice()),
            );
        }
        for (key, mine) in own {
            if let Some(&(first_crd, first)) = taken.get(&key) {
                let (group, what, name) = key;
                let claim = |crd: &str, sources: &[String]| Claim {
                    crd: crd.to_owned(),
                    source: sources.join(", "),
                };
                return Err(Error::GroupNameClash {
                    group: group.to_owned(),
                    name: name.to_owned(),
                    what,
                    claims: Box::new([claim(first_crd, first), claim(mine.0, mine.1)]),
                });
            }
            taken.insert(key, mine);
        }
    }
    Ok(())
}

fn fit_note(name: &str, full: usize, fitted: usize, budget: usize, steps: &[String]) -> String {
    format!(
        "CRD {name} is {} KiB as JSON (what client-side kubectl apply stores in an annotation), \
         over the {} KiB budget: {} ({} KiB); \
         set max_desc_len/max_crd_size in manifests() to choose otherwise",
        full / 1024,
        budget / 1024,
        steps.join(", then "),
        fitted / 1024
    )
}

/// The size of a YAML document as compact JSON: what client-side `kubectl apply`
/// stores in its last-applied-configuration annotation, and what the size budget
/// ([`DEFAULT_MAX_CRD_SIZE`]) measures.
pub fn json_size(yaml: &str) -> Result<usize, serde_yaml_ng::Error> {
    let value: Value = serde_yaml_ng::from_str(yaml)?;
    Ok(json_len(&value))
}

fn json_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |json| json.len())
}

fn to_json(name: &str, crd: &CustomResourceDefinition) -> Result<Value, Error> {
    serde_json::to_value(crd).map_err(|e| Error::InvalidCrd {
        crd: name.to_owned(),
        reason: format!("it does not serialize: {e}"),
    })
}

/// Back through the typed CRD, so that every rendering orders keys the same way.
fn typed_crd(name: &str, value: &Value) -> Result<CustomResourceDefinition, Error> {
    serde_json::from_value(value.clone()).map_err(|e| Error::InvalidCrd {
        crd: name.to_owned(),
        reason: format!("its schema does not round-trip: {e}"),
    })
}

fn for_each_version_schema(crd: &mut Value, mut f: impl FnMut(&mut Value)) {
    if let Some(Value::Array(versions)) = crd.pointer_mut("/spec/versions") {
        for version in versions {
            if let Some(schema) = version.pointer_mut("/schema/openAPIV3Schema") {
                f(schema);
            }
        }
    }
}

/// One YAML document introduced by `---`, as controller-gen writes them.
fn yaml_document<T: Serialize>(what: &str, doc: &T) -> Result<String, Error> {
    let yaml_error = |source| Error::Yaml {
        what: what.to_owned(),
        source,
    };
    // Through a Value, so that whole numbers print as integers: k8s-openapi keeps schema
    // bounds as f64, which would otherwise write `minimum: 1.0` for `#[rkb(minimum = 1)]`.
    let mut value = serde_yaml_ng::to_value(doc).map_err(yaml_error)?;
    integral_floats_to_integers(&mut value);
    let yaml = serde_yaml_ng::to_string(&value).map_err(yaml_error)?;
    Ok(format!("---\n{yaml}"))
}

fn integral_floats_to_integers(value: &mut serde_yaml_ng::Value) {
    use serde_yaml_ng::Value;
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9_007_199_254_740_992.0
            {
                *n = (f as i64).into();
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(integral_floats_to_integers),
        Value::Mapping(map) => map.values_mut().for_each(integral_floats_to_integers),
        Value::Tagged(tagged) => integral_floats_to_integers(&mut tagged.value),
        _ => {}
    }
}

fn read_if_exists(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read(path) {
        // Non-UTF-8 content can never equal a rendered file.
        Ok(bytes) => Ok(Some(String::from_utf8(bytes).unwrap_or_default())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(io_err("read", path)(err)),
    }
}

/// The files `make manifests` owns that nothing renders to any more: CRD files, and the
/// namespaced-RBAC overlay once no rule names another namespace.
fn stale_files(root: &Path, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, Error> {
    let mut stale = stale_crd_files(root, files)?;
    for rel in NAMESPACED_RBAC_FILES.map(PathBuf::from) {
        let path = root.join(&rel);
        if !files.contains_key(&rel) && path.try_exists().map_err(io_err("read", &path))? {
            stale.push(rel);
        }
    }
    Ok(stale)
}

/// `*.yaml` files in the CRD directory that `files` does not contain, sorted.
fn stale_crd_files(root: &Path, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, Error> {
    let dir = root.join(CRD_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(io_err("list", &dir)(err)),
    };
    let mut stale = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err("list", &dir))?;
        let rel = Path::new(CRD_DIR).join(entry.file_name());
        let is_yaml = rel.extension().is_some_and(|e| e == "yaml");
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_yaml && is_file && !files.contains_key(&rel) {
            stale.push(rel);
        }
    }
    stale.sort();
    Ok(stale)
}

/// `config/namespaced-rbac/kustomization.yaml`: `config/default` plus the Roles in other
/// namespaces, their names and the manager's service account taken from what
/// `config/default` made of them (its namePrefix and namespace), by kustomize replacements.
fn namespaced_rbac_kustomization(role: &str) -> String {
    let binding = rbac::binding_name(role);
    let account = rbac::MANAGER_SERVICE_ACCOUNT;
    format!(
        "# Written by `make manifests`, like role.yaml beside it: the manager with its Roles in
# namespaces other than its own, which config/default's namespace transformer would move into
# the manager's namespace. `make deploy` applies this directory while it exists.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../default
- role.yaml
# Service account, Role and RoleBinding names as config/default renders them (the
# bindings' own names last: targets are selected by the names they have so far).
replacements:
- source: {{kind: ServiceAccount, name: {account}, fieldPath: metadata.name}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [subjects.0.name]
- source: {{kind: ServiceAccount, name: {account}, fieldPath: metadata.namespace}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [subjects.0.namespace]
- source: {{kind: ClusterRole, name: {role}, fieldPath: metadata.name}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [roleRef.name]
  - select: {{kind: Role, name: {role}}}
    fieldPaths: [metadata.name]
- source: {{kind: ClusterRoleBinding, name: {binding}, fieldPath: metadata.name}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [metadata.name]
"
    )
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
    let path = path.to_owned();
    move |source| Error::Io {
        action,
        path,
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_summary() {
        let p = |s: &str| PathBuf::from(s);
        let mut report = Report {
            unchanged: vec![p("a"), p("b")],
            ..Report::default()
        };
        assert_eq!(report.to_string(), "manifests: 2 files up to date");
        report.written = vec![p("c")];
        assert_eq!(report.to_string(), "manifests: wrote c (2 unchanged)");
        report.removed = vec![p("d")];
        assert_eq!(
            report.to_string(),
            "manifests: wrote c; removed d (2 unchanged)"
        );
    }

    #[test]
    fn args() {
        let m = Manifests::new(vec![], vec![]);
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let help = m.run(args(&["--help"])).unwrap();
        assert!(help.contains("Usage: manifests [OPTIONS]"), "{help}");
        assert!(help.contains("--max-crd-size <BYTES>"), "{help}");
        let err = m.run(args(&["--bogus"])).unwrap_err().to_string();
        assert!(err.starts_with("unexpected argument '--bogus'"), "{err}");
        assert!(err.contains("Usage: manifests [OPTIONS]"), "{err}");
        let err = m.run(args(&["--dir"])).unwrap_err().to_string();
        assert!(
            err.contains("a value is required for '--dir <PROJECT_ROOT>'"),
            "{err}"
        );
        let err = m
            .run(args(&["--max-desc-len", "x"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("invalid value 'x' for '--max-desc-len <N>'"),
            "{err}"
        );
        let err = m.run(args(&["--max-crd-size"])).unwrap_err().to_string();
        assert!(
            err.contains("a value is required for '--max-crd-size <BYTES>'"),
            "{err}"
        );
        let err = m.run(args(&["--check=yes"])).unwrap_err().to_string();
        assert!(
            err.contains("unexpected value 'yes' for '--check'"),
            "{err}"
        );
    }

    #[test]
    fn notes_follow_the_summary() {
        let report = Report {
            written: vec![PathBuf::from("a")],
            notes: vec!["CRD x is big".into()],
            ..Report::default()
        };
        assert_eq!(
            report.to_string(),
            "manifests: wrote a (0 unchanged)\nnote: CRD x is big"
        );
    }
}
