//! Step three of `create webhook`: what its templates see, made of what was derived and
//! checked; and the same for what `delete webhook` rebuilds from PROJECT.

use rkb_core::webhook::Kind;
use serde::Serialize;

use super::Switches;
use super::resolve::Resolved;
use crate::cli::CreateWebhookArgs;
use crate::commands::derive::{Derived, derive};
use crate::model::{self, Layout, ProjectNames};
use crate::project::{self, Project, WebhookCerts};
use crate::scaffold::Changes;
use crate::scaffold::plan as scaffold_plan;

/// What the templates of `create webhook` see: the project, the kind's webhooks, and
/// where their files go.
#[derive(Debug, Serialize)]
pub(in crate::commands) struct Context {
    #[serde(flatten)]
    pub names: ProjectNames,
    pub hook: Hook,
    pub layout: Layout,
    /// cert-manager issues the webhooks' certificates, else the manager itself.
    pub cert_manager: bool,
    /// PROJECT with the kind's webhooks.
    #[serde(skip)]
    pub project: Project,
}

impl scaffold_plan::Model for Context {
    fn project(&self) -> &Project {
        &self.project
    }
}

/// The kind and its webhooks as the webhook templates name them, taken from the model.
#[derive(Debug, Serialize)]
pub(in crate::commands) struct Hook {
    pub kind: String,
    pub group: String,
    pub version: String,
    /// `cache.example.com`; empty for the core group.
    pub api_group: String,
    /// Rust path of the type below the crate root, e.g. `api::cache::v1alpha1::Memcached`
    /// or `k8s_openapi::api::core::v1::Pod`, as `crate::`-less `lib.rs` code names it.
    pub type_path: String,
    /// The same path as code inside the webhook module names it.
    pub use_path: String,
    pub namespaced: bool,
    /// The module under `crate::webhook`: `v1alpha1` or `cache::v1alpha1`.
    pub module: String,
    /// Its directory: `src/webhook/v1alpha1` or `src/webhook/cache/v1alpha1`.
    pub dir: String,
    /// The group's module in the multigroup layout (`cache`), else `None`.
    pub group_module: Option<String>,
    pub version_module: String,
    pub kind_snake: String,
    pub defaulting: bool,
    pub validation: bool,
    pub mutate_path: String,
    pub validate_path: String,
    /// The versions converted to and from this one, with their module names.
    pub spokes: Vec<Spoke>,
    pub crd: String,
    /// The kind's conversion file, where `create api` adds the spokes of later versions.
    pub conversion_file: String,
    /// Its module, as the operator names it: `crate::api::cache::v1alpha1::memcached_conversion`.
    pub conversion_module: String,
    /// The type's path inside the API crate, which holds the conversion:
    /// `crate::cache::v1alpha1::Memcached`.
    pub api_crate_path: String,
}

#[derive(Debug, Serialize)]
pub(in crate::commands) struct Spoke {
    pub version: String,
    pub module: String,
    /// The spoke's type, e.g. `crate::api::cache::v1beta1::Memcached`.
    pub path: String,
    /// The same inside the API crate: `crate::cache::v1beta1::Memcached`.
    pub api_crate_path: String,
}

impl Spoke {
    /// The spoke that `resource` (a version of the hub's kind) is.
    pub(in crate::commands) fn of(resource: &model::Resource) -> Self {
        Spoke {
            version: resource.version.clone(),
            module: resource.version_module.clone(),
            path: resource.type_path.clone(),
            api_crate_path: model::in_api_crate(&resource.type_path),
        }
    }
}

impl Hook {
    pub(in crate::commands) fn new(
        project: &Project,
        api: &model::Resource,
        layout: &Layout,
        webhooks: &project::Webhooks,
    ) -> Self {
        Hook {
            kind: api.kind.clone(),
            group: api.group.clone(),
            version: api.version.clone(),
            api_group: api.api_group.clone(),
            type_path: api
                .type_path
                .strip_prefix("crate::")
                .unwrap_or(&api.type_path)
                .to_owned(),
            use_path: api.type_path.clone(),
            namespaced: api.namespaced,
            module: layout.webhook_module.clone(),
            dir: layout.webhook_dir.clone(),
            group_module: layout.webhook_group_module.clone(),
            version_module: api.version_module.clone(),
            kind_snake: api.kind_snake.clone(),
            defaulting: webhooks.defaulting,
            validation: webhooks.validation,
            mutate_path: webhooks
                .defaulting_path
                .clone()
                .unwrap_or_else(|| api.webhook_path(Kind::Mutating)),
            validate_path: webhooks
                .validation_path
                .clone()
                .unwrap_or_else(|| api.webhook_path(Kind::Validating)),
            spokes: webhooks
                .spoke
                .iter()
                .filter_map(|v| project.find(&api.group, v, &api.kind))
                .map(model::Resource::recorded)
                .map(|spoke| Spoke::of(&spoke))
                .collect(),
            crd: api.crd_name(),
            conversion_file: layout.conversion_file.clone(),
            conversion_module: format!(
                "crate::api::{}::{}::{}_conversion",
                api.group_module, api.version_module, api.kind_snake
            ),
            api_crate_path: model::in_api_crate(&api.type_path),
        }
    }
}

/// The templates' context and the switches of [`PLAN`](super::PLAN) for what `resolved`
/// describes, which the checks passed.
pub(super) fn context(
    args: &CreateWebhookArgs,
    resolved: Resolved,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let Resolved {
        mut project,
        api,
        before,
        after,
        layout,
        ..
    } = resolved;
    let asked = &args.webhooks;
    let switches = Switches {
        grouped: layout.webhook_group_module.is_some(),
        defaulting: asked.defaulting,
        validation: asked.programmatic_validation,
        conversion: asked.conversion,
        has_defaulting: after.defaulting,
        has_validation: after.validation,
        has_conversion: after.conversion,
        new_defaulting: asked.defaulting && !before.defaulting,
        new_validation: asked.programmatic_validation && !before.validation,
        new_conversion: asked.conversion && !before.conversion,
        extend_admission: !args.force && changes.exists(&layout.admission_file)?,
        first_webhook: project.resources.iter().all(|r| r.webhooks.is_none()),
        cert_manager: project.webhook_certs() == WebhookCerts::CertManager,
        foreign: api.foreign,
    };
    if let Some(entry) = project.resources.iter_mut().find(|r| api.is(r)) {
        entry.webhooks = Some(after.clone());
    }
    let context = Context {
        names: ProjectNames::read(&project, changes)?,
        hook: Hook::new(&project, &api, &layout, &after),
        layout,
        cert_manager: switches.cert_manager,
        project,
    };
    Ok((context, switches))
}

/// The model `create webhook` had when it gave PROJECT's `entry` (in `project`) the
/// webhooks `asked` on top of the others it has: what `rkb delete webhook` undoes, and
/// (with every webhook asked) what the kind's webhooks keep.
pub(in crate::commands) fn recorded(
    project: &Project,
    entry: &project::Resource,
    asked: &project::Webhooks,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let has = entry.webhooks.clone().unwrap_or_default();
    let Derived { api, layout, .. } = derive(project, entry.gvk(), None, changes)?;
    let others_admit =
        (has.defaulting && !asked.defaulting) || (has.validation && !asked.validation);
    let switches = Switches {
        grouped: layout.webhook_group_module.is_some(),
        defaulting: asked.defaulting,
        validation: asked.validation,
        conversion: asked.conversion,
        has_defaulting: has.defaulting,
        has_validation: has.validation,
        has_conversion: has.conversion,
        new_defaulting: asked.defaulting,
        new_validation: asked.validation,
        new_conversion: asked.conversion,
        // The admission file holds the other webhook: this one was inserted into it.
        extend_admission: others_admit,
        first_webhook: false,
        cert_manager: project.webhook_certs() == WebhookCerts::CertManager,
        foreign: api.foreign,
    };
    let context = Context {
        names: ProjectNames::read(project, changes)?,
        hook: Hook::new(project, &api, &layout, &has),
        layout,
        cert_manager: switches.cert_manager,
        project: project.clone(),
    };
    Ok((context, switches))
}
