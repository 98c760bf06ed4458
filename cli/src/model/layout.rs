use serde::Serialize;

use super::{EXTERNAL_API, Resource};
use crate::names;
use crate::project::Project;
use crate::scaffold::Changes;

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
