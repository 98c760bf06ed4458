//! Step three of `create api`: what its templates see, made of what was derived and
//! checked.

use serde::Serialize;

use super::resolve::{Joined, Resolved};
use super::{Switches, create_webhook};
use crate::deploy_image::DeployImage;
use crate::model::{self, Layout, ProjectNames};
use crate::project::{self, Project};
use crate::scaffold::Changes;
use crate::scaffold::plan as scaffold_plan;

/// What the templates of `create api` see: the project, the API and where its files go.
#[derive(Debug, Serialize)]
pub(in crate::commands) struct Context {
    #[serde(flatten)]
    pub names: ProjectNames,
    pub api: model::Resource,
    pub layout: Layout,
    pub image: Option<DeployImage>,
    /// The container's command as Rust string literals.
    pub command_literals: Vec<String>,
    /// The manager's environment variable that names the image: `MEMCACHED_IMAGE`.
    pub image_env: String,
    /// The manager's container has an `env:` list: the first image starts it, later ones join it.
    pub env_list_exists: bool,
    /// The kind's conversion webhook, when the new version joins it as a spoke: its hub as
    /// the webhook templates see it (`hook`), and the new version (`spoke`).
    pub hook: Option<create_webhook::Hook>,
    pub spoke: Option<create_webhook::Spoke>,
    /// The kind's conversion webhook, when its file cannot take the new spoke (no markers):
    /// the command that regenerates it with every spoke.
    #[serde(skip)]
    pub unwired_spoke: Option<String>,
    /// What `--image` recorded for the API, when `--force` without it replaces that.
    #[serde(skip)]
    pub dropped_image: Option<project::DeployImageResource>,
    /// An external kind's types and CRD (`--external-crd`).
    pub external: Option<External>,
    /// PROJECT with the new resource.
    #[serde(skip)]
    pub project: Project,
}

/// What `--external-crd` writes besides the controller: the types and the kept CRD.
#[derive(Debug, Serialize)]
pub(in crate::commands) struct External {
    /// The Rust types, without the header.
    pub types: String,
    /// The CRD document, as the file had it.
    pub crd_yaml: String,
    /// The module file of `crate::api::external`.
    pub module_file: &'static str,
}

impl scaffold_plan::Model for Context {
    fn project(&self) -> &Project {
        &self.project
    }
}

/// The context and switches of the API `resolved` describes, which the checks passed.
pub(super) fn context(
    resolved: Resolved,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let Resolved {
        asked,
        image,
        api,
        dropped,
        project,
        conversion,
        layout,
        env_list_exists,
        ..
    } = resolved;
    let image = image.map(|options| options.check()).transpose()?;
    let switches = Switches {
        resource: asked.resource,
        controller: asked.controller,
        image: image.is_some(),
        drop_image: dropped.is_some(),
        grouped: layout.group_mod_file.is_some(),
        spoke: matches!(conversion, Joined::Spoke(..)),
        external: false,
    };
    let (hook, spoke, unwired_spoke) = match conversion {
        Joined::Spoke(hook, spoke) => (Some(*hook), Some(spoke), None),
        Joined::Unwired(command) => (None, None, Some(command)),
        Joined::None => (None, None, None),
    };
    let context = Context {
        names: ProjectNames::read(&project, changes)?,
        command_literals: command_literals(image.as_ref()),
        image_env: layout.image_env(),
        env_list_exists,
        api,
        layout,
        image,
        hook,
        spoke,
        unwired_spoke,
        dropped_image: dropped,
        external: None,
        project,
    };
    Ok((context, switches))
}

/// The container's command as Rust string literals.
pub(super) fn command_literals(image: Option<&DeployImage>) -> Vec<String> {
    image
        .iter()
        .flat_map(|i| &i.command)
        .map(|word| format!("{word:?}"))
        .collect()
}
