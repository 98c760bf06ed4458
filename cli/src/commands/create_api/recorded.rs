//! What `create api` scaffolded for an entry of PROJECT, rebuilt from PROJECT: what `rkb
//! delete api` undoes and what the APIs that stay keep. The scaffold is deterministic, so
//! this is what it wrote, as this rkb writes it.

use anyhow::bail;

use super::Switches;
use super::context::{Context, command_literals};
use super::external::external_context;
use crate::commands::derive::{Derived, derive};
use crate::deploy_image::ImageOptions;
use crate::model::{self, Layout, ProjectNames};
use crate::project::{self, Project};
use crate::scaffold::Changes;

/// The context `create api --external-crd` had for PROJECT's external `entry`, rebuilt
/// from the CRD the project kept.
fn recorded_external(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let api = model::Resource::recorded(entry);
    let file = api.crd_file.clone().unwrap_or_default();
    let Some(text) = changes.read(&file)? else {
        bail!(
            "PROJECT records the external API {} {}/{}, and its CRD {file} is gone; restore it \
             (or run `rkb create api --external-crd <its CRD> --force`) first",
            entry.kind,
            entry.api_group(),
            entry.version
        );
    };
    let scratch = tempfile::NamedTempFile::new()?;
    std::fs::write(scratch.path(), text)?;
    let crd = crate::external::read(scratch.path(), Some(&entry.version), Some(&entry.kind))?;
    external_context(project.clone(), api, &crd, entry.controller, changes)
}

/// The model `create api` had when it scaffolded PROJECT's `entry`, which `project` holds:
/// what `rkb delete api` undoes, and what other APIs keep. The scaffold is deterministic,
/// so this is what it wrote, as this rkb writes it.
pub(in crate::commands) fn recorded(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    if entry.external {
        return recorded_external(project, entry, changes);
    }
    let Derived {
        api, mut layout, ..
    } = derive(project, entry.gvk(), None, changes)?;
    let image = match project.image(entry.gvk()) {
        Some(i) => Some(
            ImageOptions {
                image: i.image.clone(),
                container_command: i.container_command.clone(),
                container_port: i.container_port.clone(),
                run_as_user: i.run_as_user.clone(),
            }
            .check()?,
        ),
        None => None,
    };
    if project.multigroup {
        // An API scaffolded before `rkb edit --multigroup` keeps its single-group names:
        // edit moved its controller's module, not the controller's name or the roles.
        let single = Layout::single_group(&api);
        let controllers = changes.read(model::CONTROLLERS)?.unwrap_or_default();
        let moved = entry.controller
            && controllers.contains(&format!(
                "Runnable::new(\"{}\", {}::run)",
                single.controller_name, layout.controller_module
            ));
        let single_roles =
            entry.api.is_some() && layout.roles_left_single(&api, |file| changes.exists(file))?;
        if moved || single_roles {
            layout.controller_name = single.controller_name;
            layout.role_prefix = single.role_prefix;
        }
    }
    // As a fresh scaffold of the entry: not replacing an image variant, and not a new
    // spoke (`delete api` refuses a spoke, and a hub's spokes live in the hub's file).
    let switches = Switches {
        resource: entry.api.is_some(),
        controller: entry.controller,
        image: image.is_some(),
        drop_image: false,
        grouped: layout.group_mod_file.is_some(),
        spoke: false,
        external: false,
    };
    let context = Context {
        names: ProjectNames::read(project, changes)?,
        command_literals: command_literals(image.as_ref()),
        image_env: layout.image_env(),
        // The first image's controller starts the manager's `env:` list, later ones join
        // it, and it stays while any of them does.
        env_list_exists: project
            .plugins
            .deploy_image
            .iter()
            .flat_map(|p| &p.resources)
            .any(|i| i.gvk() != entry.gvk()),
        api,
        layout,
        image,
        hook: None,
        spoke: None,
        unwired_spoke: None,
        dropped_image: None,
        external: None,
        project: project.clone(),
    };
    Ok((context, switches))
}

/// What `create api --no-resource --controller-name <name>` scaffolded for PROJECT's
/// `entry`: one named controller of the kind.
pub(in crate::commands) fn recorded_named(
    project: &Project,
    entry: &project::Resource,
    name: &str,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let (mut context, mut switches) = recorded(project, entry, changes)?;
    // Where the kind's files are, as derived, not as an API from before `edit
    // --multigroup` keeps its default controller's.
    let derived = derive(project, entry.gvk(), None, changes)?;
    context.layout = derived.layout.named(&context.api, name);
    switches.resource = false;
    switches.controller = true;
    Ok((context, switches))
}

/// Everything `create api` scaffolded for PROJECT's `entry`: the API with its default
/// controller, then each named controller.
pub(in crate::commands) fn recorded_all(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<Vec<(Context, Switches)>> {
    let mut all = vec![recorded(project, entry, changes)?];
    for named in &entry.controllers {
        all.push(recorded_named(project, entry, &named.name, changes)?);
    }
    Ok(all)
}
