use rkb_core::webhook::{Kind, Settings};
use serde::Serialize;

use crate::names;
use crate::project::{self, Project};
use crate::scaffold::builtin_kinds::{self, BuiltinKind};

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
