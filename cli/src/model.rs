//! The typed model of a project and of one resource in it. Every name and path a command
//! derives from PROJECT or its flags is worked out here, once: [`Resource`] owns the names
//! (modules, API group and version, Rust path), [`Layout`] the files (types, controller,
//! roles, webhooks) as the project's layout places them. Serialised, they are what the
//! templates see as `api` and `layout`, next to [`ProjectNames`].

use std::path::Path;

use rkb_core::webhook::{Kind, Settings};
use serde::Serialize;

use crate::names;
use crate::project::{self, Project};
use crate::scaffold::builtin_kinds::{self, BuiltinKind};
use crate::scaffold::{Changes, source_header};

// The files of a project that later commands insert into (`rkb init` generates them).
/// The operator's library: its modules (controllers, webhooks).
pub const LIB: &str = "src/lib.rs";
/// The manager binary: webhook serving.
pub const MAIN: &str = "src/main.rs";
/// The API crate (kubebuilder's `api/` package): the custom resource types, which the
/// operator depends on, and the generator behind `make manifests`, which builds without
/// the operator.
pub const API_CARGO: &str = "api/Cargo.toml";
/// The generator `make manifests` runs, a binary of the API crate.
pub const API_GENERATOR: &str = "api/src/bin/manifests.rs";
/// The API crate's library: a module per API group, the CRDs, and `manifests()`, what
/// `make manifests` writes (the CRDs, the RBAC rules read from the operator's sources, the
/// webhooks named by their impls, the certificates' rules).
pub const API_LIB: &str = "api/src/lib.rs";
/// The types of kinds other projects define (`create api --external-crd`), and their module.
pub const EXTERNAL_API: &str = "api/src/external";
pub const EXTERNAL_API_MOD: &str = "api/src/external/mod.rs";
/// Code of the operator as the API crate writes it: the operator names the API crate
/// `crate::api` (`crate::api::cache::v1alpha1::Memcached`), the crate itself `crate`
/// (`crate::cache::v1alpha1::Memcached`).
pub fn in_api_crate(code: &str) -> String {
    code.replace("crate::api::", "crate::")
}
/// The hack crate: asks, for the crates the API crate's build shares with the operator's,
/// the features the operator's build asks anyway, so that cargo builds each of them once.
pub const HACK_CARGO: &str = "hack/workspace-hack/Cargo.toml";
pub const HACK_LIB: &str = "hack/workspace-hack/lib.rs";
/// The controllers the manager runs, and their modules.
pub const CONTROLLERS: &str = "src/controller/mod.rs";
/// The webhooks the manager serves, and their modules (from the first webhook on).
pub const WEBHOOKS: &str = "src/webhook/mod.rs";
/// The certificates the manager keeps for its webhooks (`webhookCerts: self`): in the API
/// crate, whose generator turns their names into RBAC rules.
pub const WEBHOOK_CERTS: &str = "api/src/webhook_certs.rs";
/// The certificate the manager keeps for its metrics server (`webhookCerts: self`).
pub const METRICS_CERTS: &str = "api/src/metrics_certs.rs";
/// The manager's Deployment.
pub const MANAGER: &str = "config/manager/manager.yaml";
pub const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";
pub const CRD_KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
pub const RBAC_KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";
pub const SAMPLES_KUSTOMIZATION: &str = "config/samples/kustomization.yaml";
pub const WEBHOOK_KUSTOMIZATION: &str = "config/webhook/kustomization.yaml";
/// The ServiceMonitor's kustomization, with `# [SECTION]` lines like config/default's.
pub const PROMETHEUS_KUSTOMIZATION: &str = "config/prometheus/kustomization.yaml";
/// The overlay `make manifests` writes while RBAC rules name other namespaces, which
/// `make deploy` then builds instead of config/default.
pub const NAMESPACED_RBAC: &str = "config/namespaced-rbac";
/// The license header of new Rust files, editable by the user.
pub const BOILERPLATE: &str = "hack/boilerplate.rs.txt";

/// What `make manifests` writes from the project's code (the CRDs, the role, the webhook
/// configurations): no scaffold makes more of them than `init`'s placeholders.
pub fn written_by_make_manifests(path: &str) -> bool {
    path.starts_with("config/crd/bases/")
        || path == "config/rbac/role.yaml"
        || path == "config/webhook/manifests.yaml"
}

/// Reads PROJECT and checks it as the model checks a new resource: every name rkb derives
/// files and modules from, and each custom resource by [`Resource::check`]. An entry
/// edited by hand (a group `../x`, a path that is no Rust path, a CRD name Kubernetes
/// refuses) is refused before anything is planned, instead of becoming a file outside
/// `src/` or a CRD the API server rejects.
pub fn load(dir: &Path) -> anyhow::Result<Project> {
    let project = Project::load(dir)?;
    // Blamed on PROJECT, not on the --group that the API group joins it with.
    if let Err(invalid) = names::check_domain(&project.domain) {
        anyhow::bail!(
            "{} has the domain {:?}, which rkb cannot derive API groups from: {}.\n  accepted: {}\n  \
             Fix the entry (edited by hand?): the domain the project was created with, e.g. domain: example.com",
            project::FILE_NAME,
            project.domain,
            invalid.problem,
            invalid.accepted
        );
    }
    for entry in &project.resources {
        check_recorded(entry)?;
    }
    check_unique(&project)?;
    Ok(project)
}

/// Each group, version and kind has one entry: every command finds the first, so a second
/// one would be scaffolded, or deleted, twice.
fn check_unique(project: &Project) -> anyhow::Result<()> {
    for (i, entry) in project.resources.iter().enumerate() {
        let same = |r: &&project::Resource| {
            r.group == entry.group && r.version == entry.version && r.kind == entry.kind
        };
        if let Some(j) = project.resources[i + 1..].iter().position(|r| same(&r)) {
            anyhow::bail!(
                "{} lists {} twice (resources {} and {}): rkb keeps one entry per group, version \
                 and kind, with its API, controllers and webhooks together.\n  \
                 Merge the two entries into one (edited by hand, or a merge of two branches?) and \
                 run rkb again",
                project::FILE_NAME,
                entry.label(),
                i + 1,
                i + j + 2
            );
        }
    }
    Ok(())
}

/// The rules of a resource's names (a custom resource's by [`Resource::check`], as
/// `create api` checks a new one), and the names every entry derives paths and code from:
/// its Rust path, its domain, its spokes. Blamed on PROJECT's entry and the field, not on
/// a flag the command was not given.
fn check_recorded(entry: &project::Resource) -> anyhow::Result<()> {
    let refuse = |field: &str, value: &str, invalid: &names::InvalidInput| {
        anyhow::anyhow!(
            "{} lists {} with the {field} {value:?}, which rkb cannot derive names and paths from: \
             {}.\n  accepted: {}\n  Fix the entry (edited by hand?) and run rkb again",
            project::FILE_NAME,
            entry.label(),
            invalid.problem,
            invalid.accepted
        )
    };
    if entry.api.is_some()
        && !entry.core
        && let Err(invalid) = Resource::recorded(entry).check(&entry.domain, true)
    {
        let field = invalid.flag.trim_start_matches("--");
        return Err(refuse(field, &invalid.value, &invalid));
    }
    let spokes = entry.webhooks.iter().flat_map(|w| &w.spoke);
    let fields = [
        ("group", &entry.group, names::check_group(&entry.group, "")),
        (
            "group",
            &entry.group,
            names::check_module_name("--group", &entry.group, ""),
        ),
        (
            "version",
            &entry.version,
            names::check_version(&entry.version),
        ),
        (
            "version",
            &entry.version,
            names::check_module_name("--version", &entry.version, ""),
        ),
        ("kind", &entry.kind, names::check_kind(&entry.kind)),
        ("plural", &entry.plural, names::check_plural(&entry.plural)),
        ("path", &entry.path, names::check_rust_path(&entry.path)),
    ]
    .into_iter()
    .chain((!entry.core).then(|| ("domain", &entry.domain, names::check_domain(&entry.domain))))
    .chain(spokes.map(|spoke| ("spoke", spoke, names::check_version(spoke))));
    for (field, value, check) in fields {
        if let Err(invalid) = check {
            return Err(refuse(field, value, &invalid));
        }
    }
    Ok(())
}

/// What every template may use: the project's names and the header of new Rust files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectNames {
    pub project_name: String,
    /// `memcached_operator`.
    pub crate_name: String,
    /// The API crate's package, `memcached-operator-api`, and its crate, `memcached_operator_api`.
    pub api_package: String,
    pub api_crate: String,
    pub domain: String,
    /// The license header that starts every generated Rust file, or nothing.
    pub header: String,
    /// PROJECT's `namespaced`: the manager watches only the namespaces it is given, with
    /// Roles there (`rkb init --namespaced`).
    pub namespaced_operator: bool,
    /// PROJECT's `webhookCerts: self`: the manager keeps the metrics server's certificate
    /// (`api/src/metrics_certs.rs`), so `init`'s role.yaml already grants its Secret.
    pub metrics_certificates: bool,
}

impl ProjectNames {
    /// `boilerplate` is the text of [`BOILERPLATE`].
    pub fn new(project: &Project, boilerplate: &str) -> Self {
        ProjectNames {
            project_name: project.project_name.clone(),
            crate_name: names::crate_name(&project.project_name),
            api_package: format!("{}-api", project.project_name),
            api_crate: format!("{}_api", names::crate_name(&project.project_name)),
            domain: project.domain.clone(),
            header: source_header(boilerplate),
            namespaced_operator: project.namespaced,
            metrics_certificates: project.webhook_certs
                == Some(crate::project::WebhookCerts::SelfManaged),
        }
    }

    /// The names of a project on disk, its header read through `changes`.
    pub fn read(project: &Project, changes: &Changes) -> anyhow::Result<Self> {
        let boilerplate = changes.read(BOILERPLATE)?.unwrap_or_default();
        check_boilerplate(&boilerplate)?;
        Ok(Self::new(project, &boilerplate))
    }
}

/// The header starts every Rust file rkb generates, so it must be comments only, each one
/// closed: a line of code fails rustfmt, and an unclosed `/*` swallows the file's markers.
fn check_boilerplate(boilerplate: &str) -> anyhow::Result<()> {
    let example = "`// Copyright 2026 The Authors.`, or an empty file for no header";
    // Nesting of /* */ comments, which Rust allows.
    let mut depth = 0usize;
    for (number, line) in boilerplate.lines().enumerate() {
        let mut rest = line.trim();
        while !rest.is_empty() {
            if depth == 0 {
                if rest.starts_with("//") {
                    break;
                }
                let Some(comment) = rest.strip_prefix("/*") else {
                    anyhow::bail!(
                        "{BOILERPLATE} is not a Rust comment: line {} ({line:?}) is code, and rkb \
                         puts the file at the top of every Rust file it generates.\n  \
                         Make it a comment, e.g. {example}",
                        number + 1
                    );
                };
                depth = 1;
                rest = comment;
            }
            match (rest.find("/*"), rest.find("*/")) {
                (Some(open), close) if close.is_none_or(|close| open < close) => {
                    depth += 1;
                    rest = &rest[open + 2..];
                }
                (_, Some(close)) => {
                    depth -= 1;
                    rest = rest[close + 2..].trim_start();
                }
                (_, None) => rest = "",
            }
        }
    }
    if depth > 0 {
        anyhow::bail!(
            "{BOILERPLATE} opens a /* comment it does not close, and rkb puts the file at the top \
             of every Rust file it generates, where the comment would hide the code after it.\n  \
             Close the comment, or write the header as // lines, e.g. {example}"
        );
    }
    Ok(())
}

/// One kind in one group and version: a custom resource of the project or a built-in
/// kind, with every name the scaffold derives from it. The templates' `api`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resource {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    /// Full API group (`cache.example.com`); empty for the core group.
    pub api_group: String,
    /// `cache.example.com/v1alpha1`, or `v1` for the core group.
    pub api_version: String,
    pub namespaced: bool,
    pub kind_snake: String,
    pub group_module: String,
    pub version_module: String,
    /// Rust path of the type: `crate::api::cache::v1alpha1::Memcached`, or
    /// `k8s_openapi::api::core::v1::Pod` for a built-in kind.
    pub type_path: String,
    /// The type is a built-in Kubernetes kind (no CRD).
    pub builtin: bool,
    /// Another version of this kind already exists and stays the storage version.
    pub storage_version: Option<String>,
    /// For a built-in kind: the fields the API server requires besides metadata, as the
    /// body of a `serde_json::json!` object (the scaffolded tests' sample object).
    pub sample_fields: Option<String>,
    /// A kind another project defines, whose types `create api --external-crd` wrote
    /// from its CRD (under `crate::api::external`).
    pub external: bool,
    /// The project does not own the kind (built-in or external): its controller neither
    /// writes the status nor has the CRD installed by `make install`.
    pub foreign: bool,
    /// An external kind's CRD, kept for the tests: `config/external-crds/<group>_<plural>.yaml`.
    pub crd_file: Option<String>,
    /// The kind as objects spell it: `kind`, unless an external CRD spells it otherwise
    /// (`postgresql`, whose type is `Postgresql`).
    pub wire_kind: String,
}

impl Resource {
    fn new(group: &str, version: &str, kind: &str, api_group: String) -> Self {
        let group_module = names::module_name(group);
        let version_module = names::module_name(version);
        Resource {
            api_version: if api_group.is_empty() {
                version.to_owned()
            } else {
                format!("{api_group}/{version}")
            },
            api_group,
            type_path: format!("crate::api::{group_module}::{version_module}::{kind}"),
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: names::plural(kind),
            namespaced: true,
            kind_snake: names::snake(kind),
            group_module,
            version_module,
            builtin: false,
            storage_version: None,
            sample_fields: None,
            external: false,
            foreign: false,
            crd_file: None,
            wire_kind: kind.to_owned(),
        }
    }

    /// A kind of another project, from its CRD: `group` is the first label of the CRD's
    /// group (PROJECT's `group`), the rest its `domain`, as kubebuilder records it.
    pub fn external(crd: &crate::external::ExternalCrd) -> Self {
        let (group, _) = crd.group.split_once('.').unwrap_or((&crd.group, ""));
        let mut resource = Self::new(group, &crd.version, &crd.type_name, crd.group.clone());
        resource.type_path = format!(
            "crate::api::external::{}::{}::{}",
            resource.group_module, resource.version_module, resource.kind
        );
        resource.plural.clone_from(&crd.plural);
        resource.namespaced = crd.namespaced;
        resource.external = true;
        resource.foreign = true;
        resource.crd_file = Some(crate::external::crd_file(crd));
        resource.wire_kind.clone_from(&crd.kind);
        resource
    }

    /// A new custom resource of `project`, or a new version of one of its kinds. Every
    /// version of a kind is served by one CRD: without `plural`, a new version keeps the
    /// kind's plural, and the first version stays the storage version.
    pub fn custom(
        project: &Project,
        (group, version, kind): (&str, &str, &str),
        plural: Option<&str>,
        namespaced: bool,
    ) -> Self {
        let other_version = project.resources.iter().find(|r| {
            r.group == group && r.kind == kind && r.api.is_some() && r.version != version
        });
        let mut resource = Self::new(
            group,
            version,
            kind,
            names::api_group(group, &project.domain),
        );
        if let Some(plural) = plural.or(other_version.map(|r| r.plural.as_str())) {
            plural.clone_into(&mut resource.plural);
        }
        resource.namespaced = namespaced;
        resource.storage_version = storage_version(project, (group, version, kind));
        resource
    }

    /// A built-in Kubernetes kind.
    pub fn builtin(builtin: &BuiltinKind) -> Self {
        let api_group = rkb_core::rbac::api_group(builtin.group).to_owned();
        Resource {
            plural: builtin.plural.to_owned(),
            namespaced: builtin.namespaced,
            type_path: builtin.rust_path.to_owned(),
            builtin: true,
            foreign: true,
            sample_fields: builtin_kinds::required_fields(builtin.group, builtin.kind),
            ..Self::new(builtin.group, builtin.version, builtin.kind, api_group)
        }
    }

    /// A resource as PROJECT records it: one of the project's types, or a built-in kind.
    pub fn recorded(entry: &project::Resource) -> Self {
        if entry.core
            && let Some(builtin) = builtin_kinds::find(&entry.group, &entry.version, &entry.kind)
        {
            return Resource {
                plural: entry.plural.clone(),
                type_path: entry.path.clone(),
                ..Self::builtin(builtin)
            };
        }
        let api_group = if entry.core {
            String::new()
        } else {
            entry.api_group()
        };
        Resource {
            plural: entry.plural.clone(),
            namespaced: if entry.external {
                entry.namespaced
            } else {
                entry.api.as_ref().is_some_and(|a| a.namespaced)
            },
            type_path: entry.path.clone(),
            builtin: entry.core,
            external: entry.external,
            foreign: entry.core || entry.external,
            crd_file: entry.external.then(|| {
                format!(
                    "config/external-crds/{}_{}.yaml",
                    entry.api_group(),
                    entry.plural
                )
            }),
            ..Self::new(&entry.group, &entry.version, &entry.kind, api_group)
        }
    }

    /// PROJECT's `entry` as the project holds it: [`Self::recorded`], with the storage
    /// version the kind's first version keeps (a later version's types say they are not it).
    pub fn in_project(project: &Project, entry: &project::Resource) -> Self {
        Resource {
            storage_version: storage_version(project, entry.gvk()),
            ..Self::recorded(entry)
        }
    }

    /// The rules a new custom resource's names follow (kubebuilder's `Resource.Validate`),
    /// blamed on the flag each came from: the kind, the version, the group in `domain`, the
    /// plural (on `--kind` when derived from it, as no `--plural` was `given`), the Rust
    /// modules and the CRD name. The first broken rule is the error.
    pub fn check(&self, domain: &str, plural_given: bool) -> Result<(), names::InvalidInput> {
        names::check_kind(&self.kind)?;
        names::check_version(&self.version)?;
        names::check_group(&self.group, domain)?;
        names::check_plural(&self.plural).map_err(|invalid| {
            if plural_given {
                return invalid;
            }
            // Only a long kind gives a plural Kubernetes refuses: a kind may have 63
            // characters, and so may a plural.
            let shorter: String = self.plural.chars().take(63).collect();
            names::invalid(
                "--kind",
                &self.kind,
                format!(
                    "the plural rkb derives from it when no --plural is given, {:?}, is \
                     invalid: {}",
                    self.plural, invalid.problem
                ),
                invalid.accepted,
                format!(
                    "rkb create api --group {} --version {} --kind {} --plural {shorter}",
                    self.group, self.version, self.kind
                ),
            )
        })?;
        names::check_module_name("--group", &self.group, "--group cache")?;
        names::check_module_name("--version", &self.version, "--version v1alpha1")?;
        names::check_crd_name(&self.group, &self.crd_name())
    }

    /// PROJECT's entry for this resource: its type if `api`, its controller if `controller`.
    pub fn entry(&self, domain: &str, api: bool, controller: bool) -> project::Resource {
        project::Resource {
            api: api.then(|| project::Api {
                crd_version: "v1".into(),
                namespaced: self.namespaced,
            }),
            controller,
            controllers: Vec::new(),
            core: self.builtin,
            external: self.external,
            namespaced: self.external && self.namespaced,
            domain: if self.builtin {
                String::new()
            } else {
                domain.to_owned()
            },
            group: self.group.clone(),
            kind: self.kind.clone(),
            path: self.type_path.clone(),
            plural: self.plural.clone(),
            version: self.version.clone(),
            webhooks: None,
        }
    }

    /// The group, version and kind.
    pub fn gvk(&self) -> (&str, &str, &str) {
        (&self.group, &self.version, &self.kind)
    }

    /// Whether PROJECT's `entry` is this resource (the same group, version and kind).
    pub fn is(&self, entry: &project::Resource) -> bool {
        entry.gvk() == self.gvk()
    }

    /// Whether PROJECT's deploy-image `entry` is this resource's.
    pub fn is_image(&self, entry: &project::DeployImageResource) -> bool {
        entry.gvk() == self.gvk()
    }

    /// The CRD's name: `memcacheds.cache.example.com`.
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.api_group)
    }

    /// The path of the kind's webhook of `kind`, as the runtime derives it by default.
    pub fn webhook_path(&self, kind: Kind) -> String {
        Settings::default().path_for(kind, &self.api_group, &self.version, &self.kind)
    }
}

/// The storage version of a kind with several versions, if it is not `version`: the kind's
/// first version, which PROJECT lists first. A forced re-run of that version keeps it (it
/// must not defer to a later one).
fn storage_version(
    project: &Project,
    (group, version, kind): (&str, &str, &str),
) -> Option<String> {
    project
        .resources
        .iter()
        .find(|r| r.group == group && r.kind == kind && r.api.is_some())
        .filter(|r| r.version != version)
        .map(|r| r.version.clone())
}

/// Where a resource's files live, by the project's layout: kubebuilder's single-group
/// layout (`src/controller/<kind>.rs`) or its multigroup layout
/// (`src/controller/<group>/<kind>.rs`), where one kind may have a controller per group.
/// The templates' `layout`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// The API group's module file: `api/src/cache/mod.rs`.
    pub api_group_file: String,
    /// The version's module file: `api/src/cache/v1alpha1/mod.rs`.
    pub api_version_file: String,
    /// The kind's types: `api/src/cache/v1alpha1/memcached.rs`.
    pub types_file: String,
    /// `config/samples/cache_v1alpha1_memcached.yaml`.
    pub sample_file: String,
    /// The controller module below `crate::controller`: `memcached` or `cache::memcached`.
    pub controller_module: String,
    /// `src/controller/memcached.rs` or `src/controller/cache/memcached.rs`.
    pub controller_file: String,
    /// The group's module file in the multigroup layout: `src/controller/cache/mod.rs`.
    pub group_mod_file: Option<String>,
    /// The controller's name (its metrics label, readiness check and
    /// `--controller-concurrency` key). Group-qualified in the multigroup layout, where
    /// two groups may hold the same kind.
    pub controller_name: String,
    /// The controller module's own name (the last part of `controller_module`).
    pub controller_leaf: String,
    /// The reconciler's state type: `MemcachedReconciler`, `MemcachedBackupReconciler`.
    pub reconciler: String,
    /// The status condition the controller reports: `Ready` (the printer column), or for a
    /// named controller one of its own, `MemcachedBackupReady`.
    pub ready_condition: String,
    /// A named controller's field manager for its server-side applies, so that it and the
    /// kind's other controllers own their fields apart: each apply by one manager drops
    /// what that manager applied before and left out. `None`: the operator's default.
    pub field_manager: Option<String>,
    /// Role files are `config/rbac/<prefix>_<role>_role.yaml`, the roles `<prefix>-<role>-role`.
    pub role_prefix: String,
    /// A deploy-image controller's tests, a child module of its file in the operator's
    /// library: `src/controller/memcached/tests.rs`.
    pub controller_tests_file: String,
    /// The webhook module below `crate::webhook`: `v1alpha1` or `cache::v1alpha1`.
    pub webhook_module: String,
    /// Its directory: `src/webhook/v1alpha1` or `src/webhook/cache/v1alpha1`.
    pub webhook_dir: String,
    /// The group's webhook module in the multigroup layout (`cache`), else `None`.
    pub webhook_group_module: Option<String>,
    /// Its file: `src/webhook/cache/mod.rs`.
    pub webhook_group_file: Option<String>,
    /// The version's webhook module file: `<webhook_dir>/mod.rs`.
    pub webhook_version_file: String,
    /// The kind's admission webhooks: `<webhook_dir>/memcached.rs`.
    pub admission_file: String,
    /// The kind's conversion (its `Hub` or `Convertible` impls), beside its types in the API
    /// crate, as kubebuilder's `api/v1/memcached_conversion.go`:
    /// `api/src/cache/v1alpha1/memcached_conversion.rs`.
    pub conversion_file: String,
}

/// A controller module's file and its tests' file, a child module in the directory named
/// after it: `src/controller/cache/memcached.rs`, `src/controller/cache/memcached/tests.rs`.
fn controller_files(module: &str) -> (String, String) {
    let path = format!("src/controller/{}", module.replace("::", "/"));
    (format!("{path}.rs"), format!("{path}/tests.rs"))
}

impl Layout {
    pub fn single_group(resource: &Resource) -> Self {
        let kind_snake = &resource.kind_snake;
        Self::new(
            resource,
            kind_snake.clone(),
            None,
            resource.kind.to_lowercase(),
            kind_snake.clone(),
        )
    }

    pub fn multigroup(resource: &Resource) -> Self {
        let (group_module, kind_snake) = (&resource.group_module, &resource.kind_snake);
        Self::new(
            resource,
            format!("{group_module}::{kind_snake}"),
            Some(group_module.clone()),
            format!("{}-{}", resource.group, resource.kind.to_lowercase()),
            format!("{group_module}_{kind_snake}"),
        )
    }

    fn new(
        resource: &Resource,
        controller_module: String,
        group: Option<String>,
        controller_name: String,
        role_prefix: String,
    ) -> Self {
        let Resource {
            group_module,
            version_module,
            kind_snake,
            ..
        } = resource;
        let api = format!("api/src/{group_module}");
        let (controller_file, controller_tests_file) = controller_files(&controller_module);
        let (webhook_module, webhook_dir) = match &group {
            Some(group) => (
                format!("{group}::{version_module}"),
                format!("src/webhook/{group}/{version_module}"),
            ),
            None => (
                version_module.clone(),
                format!("src/webhook/{version_module}"),
            ),
        };
        Layout {
            api_group_file: format!("{api}/mod.rs"),
            api_version_file: format!("{api}/{version_module}/mod.rs"),
            types_file: format!("{api}/{version_module}/{kind_snake}.rs"),
            sample_file: format!(
                "config/samples/{}_{}_{}.yaml",
                resource.group,
                resource.version,
                resource.kind.to_lowercase()
            ),
            controller_file,
            controller_leaf: kind_snake.clone(),
            reconciler: format!("{}Reconciler", resource.kind),
            ready_condition: "Ready".into(),
            field_manager: None,
            controller_module,
            group_mod_file: group.as_ref().map(|g| format!("src/controller/{g}/mod.rs")),
            controller_name,
            controller_tests_file,
            role_prefix,
            webhook_group_file: group.as_ref().map(|g| format!("src/webhook/{g}/mod.rs")),
            webhook_version_file: format!("{webhook_dir}/mod.rs"),
            admission_file: format!("{webhook_dir}/{kind_snake}.rs"),
            conversion_file: format!("{api}/{version_module}/{kind_snake}_conversion.rs"),
            webhook_module,
            webhook_dir,
            webhook_group_module: group,
        }
    }

    /// The layout of a named controller of the kind (`create api --controller-name`):
    /// `src/controller/memcached_backup.rs` (`src/controller/cache/memcached_backup.rs` in
    /// the multigroup layout) with `MemcachedBackupReconciler`, named `memcached-backup`,
    /// with a status condition and a field manager of its own.
    pub fn named(mut self, resource: &Resource, name: &str) -> Self {
        let leaf = names::module_name(name);
        let multigroup = self.group_mod_file.is_some();
        // The name is the user's, unique in the project (`create api` refuses a clash), so
        // it needs no group to tell it apart, and it stays when `edit --multigroup` moves it.
        let module = if multigroup {
            format!("{}::{leaf}", resource.group_module)
        } else {
            leaf.clone()
        };
        (self.controller_file, self.controller_tests_file) = controller_files(&module);
        self.controller_module = module;
        self.controller_leaf = leaf;
        self.reconciler = format!("{}Reconciler", names::pascal(name));
        self.ready_condition = format!("{}Ready", names::pascal(name));
        self.field_manager = Some(name.to_owned());
        self.controller_name = name.to_owned();
        self
    }

    /// The layout of an external kind (`create api --external-crd`), whose types live
    /// below `api/src/external/`, apart from the project's own groups.
    pub fn external(mut self, resource: &Resource) -> Self {
        let api = format!("{EXTERNAL_API}/{}", resource.group_module);
        self.api_group_file = format!("{api}/mod.rs");
        self.api_version_file = format!("{api}/{}/mod.rs", resource.version_module);
        self.types_file = format!(
            "{api}/{}/{}.rs",
            resource.version_module, resource.kind_snake
        );
        self
    }

    /// Where `resource`'s controller lives now, as PROJECT records the layout.
    pub fn recorded(project: &Project, resource: &Resource) -> Self {
        if project.multigroup {
            Self::multigroup(resource)
        } else {
            Self::single_group(resource)
        }
    }

    /// `resource`'s layout in the project as it is on disk. In the multigroup layout, what
    /// was scaffolded before `rkb edit --multigroup` (which moves controllers only) stays
    /// where it is: a new version of a kind keeps its `config/rbac/<kind>_*` roles, and
    /// new webhooks join the kind's `src/webhook/<version>/` module.
    pub fn in_project(
        project: &Project,
        resource: &Resource,
        changes: &Changes,
    ) -> anyhow::Result<Self> {
        let mut layout = Self::recorded(project, resource);
        if !project.multigroup {
            return Ok(layout);
        }
        let single = Self::single_group(resource);
        let exists = |file: &str| changes.exists(file);
        let earlier_version = project.resources.iter().any(|r| {
            r.api.is_some()
                && r.group == resource.group
                && r.kind == resource.kind
                && r.version != resource.version
        });
        if earlier_version && layout.roles_left_single(resource, exists)? {
            layout.role_prefix = single.role_prefix;
        }
        let has_webhooks = project
            .resources
            .iter()
            .any(|r| resource.is(r) && r.webhooks.is_some());
        if has_webhooks && Self::webhooks_left_single(resource, exists)? {
            layout.webhook_module = single.webhook_module;
            layout.webhook_dir = single.webhook_dir;
            layout.webhook_group_module = None;
            layout.webhook_group_file = None;
            layout.webhook_version_file = single.webhook_version_file;
            layout.admission_file = single.admission_file;
        }
        Ok(layout)
    }

    /// Whether `resource`'s roles are where the single-group layout put them, and not where
    /// this layout puts them: scaffolded before `rkb edit --multigroup`, which moves only
    /// controllers. `exists` tells whether a file of the project is there.
    pub fn roles_left_single(
        &self,
        resource: &Resource,
        exists: impl Fn(&str) -> anyhow::Result<bool>,
    ) -> anyhow::Result<bool> {
        let single = Self::single_group(resource);
        Ok(!exists(&self.role_file("admin"))? && exists(&single.role_file("admin"))?)
    }

    /// Whether `resource`'s webhook files are where the single-group layout put them
    /// (scaffolded before `rkb edit --multigroup`); `exists` as above.
    pub fn webhooks_left_single(
        resource: &Resource,
        exists: impl Fn(&str) -> anyhow::Result<bool>,
    ) -> anyhow::Result<bool> {
        let single = Self::single_group(resource);
        exists(&single.admission_file)
    }

    /// `config/rbac/<prefix>_<role>_role.yaml`.
    pub fn role_file(&self, role: &str) -> String {
        format!("config/rbac/{}_{role}_role.yaml", self.role_prefix)
    }

    /// The manager's environment variable that names a deploy-image controller's image:
    /// `MEMCACHED_IMAGE` (group-qualified in the multigroup layout, like the roles).
    pub fn image_env(&self) -> String {
        format!("{}_IMAGE", self.role_prefix.to_uppercase())
    }
}

#[cfg(test)]
mod tests {
    use super::check_boilerplate;

    #[test]
    fn the_boilerplate_must_be_closed_comments() {
        for good in [
            "",
            "// Copyright 2026 Me.\n//\n// Apache-2.0\n",
            "/*\nCopyright 2026 Me.\n\nLicensed under ...\n*/\n",
            "/* one */ // two\n/* a /* nested */ b */\r\n// crlf\r\n",
        ] {
            assert!(check_boilerplate(good).is_ok(), "{good:?}");
        }
        for (bad, why) in [
            (
                "Copyright 2026 Me\n",
                "line 1 (\"Copyright 2026 Me\") is code",
            ),
            ("// fine\n\"quoted\"\n", "line 2"),
            ("/* done */ fn x() {}\n", "line 1"),
            ("/* Copyright 2026 Me\n", "does not close"),
            ("/* a /* b */\n", "does not close"),
        ] {
            let error = check_boilerplate(bad).unwrap_err().to_string();
            assert!(error.contains(why), "{bad:?}: {error}");
        }
    }
}
