//! Step one of `create api`: everything the command would do, worked out from its flags
//! and PROJECT without judging any of it. [`super::checks::all`] judges the result.

use anyhow::Context as _;

use super::{CreateApiArgs, create_webhook};
use crate::commands::derive::{Derived, New, derive};
use crate::deploy_image::ImageOptions;
use crate::model::{self, Layout};
use crate::project::{self, Project};
use crate::scaffold::Changes;
use crate::scaffold::plan::Marker;

/// What `create api` would do, derived from its flags and the project: one value that the
/// checks judge and the templates' context is made of.
pub(super) struct Resolved<'a> {
    pub args: &'a CreateApiArgs,
    /// What the flags ask for.
    pub asked: Asked<'a>,
    /// PROJECT as it is.
    pub before: &'a Project,
    /// The `--image` options as given, `None` without `--image`.
    pub image: Option<ImageOptions>,
    /// The kind: a new custom resource (or version), with `--no-resource` one of the
    /// project's types or a built-in kind. A `--no-resource` kind that is neither gets
    /// the names of a custom resource, and the checks refuse it.
    pub api: model::Resource,
    /// What `--image` recorded for the API, when `--force` without it replaces that.
    pub dropped: Option<project::DeployImageResource>,
    /// PROJECT's entry for what this command adds.
    pub entry: project::Resource,
    /// PROJECT after the command.
    pub project: Project,
    /// What the new version does with the kind's conversion webhook.
    pub conversion: Joined,
    /// Where the files go.
    pub layout: Layout,
    /// The manager's container has an `env:` list (only read for `--image`).
    pub env_list_exists: bool,
}

/// Works out everything `create api` would do; only reading the project can fail here.
pub(super) fn resolve<'a>(
    args: &'a CreateApiArgs,
    project: &'a Project,
    changes: &Changes,
) -> anyhow::Result<Resolved<'a>> {
    let image = args.image.as_ref().map(|image| ImageOptions {
        image: image.clone(),
        container_command: args.image_container_command.clone(),
        container_port: args.image_container_port.clone(),
        run_as_user: args.run_as_user.clone(),
    });
    let asked = Asked::new(args, &args.gvk.kind);
    let new = asked.resource.then_some(New {
        plural: args.plural.as_deref(),
        namespaced: !args.cluster_scoped,
    });
    let Derived {
        api, mut layout, ..
    } = derive(project, args.gvk.parts(), new, changes)?;
    if let Some(name) = asked.named {
        layout = layout.named(&api, name);
    }
    let dropped = dropped_image(args, project, &api);
    let entry = new_entry(&asked, project, &api);
    let mut planned = updated_project(args, project, &api, &entry);
    let conversion = if asked.resource {
        join_conversion(&mut planned, &api, changes)?
    } else {
        Joined::None
    };
    let env_list_exists = match &image {
        Some(_) => manager_has_env_list(changes)?,
        None => false,
    };
    Ok(Resolved {
        args,
        asked,
        before: project,
        image,
        api,
        dropped,
        entry,
        project: planned,
        conversion,
        layout,
        env_list_exists,
    })
}

/// What the flags of `create api` ask for, read once: a type, a controller, which one,
/// and whether to regenerate what exists.
#[derive(Debug, Clone, Copy)]
pub(super) struct Asked<'a> {
    /// The type (not `--no-resource`).
    pub resource: bool,
    /// A controller (not `--no-controller`).
    pub controller: bool,
    /// `--controller-name`, unless it is the default name (the lowercase kind), which is
    /// the kind's default controller.
    pub named: Option<&'a str>,
    pub force: bool,
}

impl<'a> Asked<'a> {
    /// What `args` ask for of `kind`.
    pub fn new(args: &'a CreateApiArgs, kind: &str) -> Self {
        Asked {
            resource: !args.no_resource,
            controller: !args.no_controller,
            named: args
                .controller_name
                .as_deref()
                .filter(|name| *name != project::default_controller_name(kind)),
            force: args.force,
        }
    }
}

/// What `--image` recorded for the API when `--force` without `--image` regenerates it:
/// it becomes a plain API, and its image's tests, variable and PROJECT entry go.
fn dropped_image(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
) -> Option<project::DeployImageResource> {
    if !args.force || args.image.is_some() {
        return None;
    }
    project.image(api.gvk()).cloned()
}

/// PROJECT's entry for what the command adds: the type, the default controller or a
/// named one.
fn new_entry(asked: &Asked, project: &Project, api: &model::Resource) -> project::Resource {
    let mut entry = api.entry(
        &project.domain,
        asked.resource,
        asked.controller && asked.named.is_none(),
    );
    if let Some(name) = asked.named {
        entry
            .controllers
            .push(project::NamedController { name: name.into() });
    }
    entry
}

/// PROJECT as it will be after this command.
fn updated_project(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
    entry: &project::Resource,
) -> Project {
    let mut planned = project.clone();
    planned.upsert(entry.clone());
    match &args.image {
        // A forced re-run without --image makes the API a plain one again.
        None => {
            if let Some(plugin) = &mut planned.plugins.deploy_image {
                plugin.resources.retain(|r| !api.is_image(r));
                if plugin.resources.is_empty() {
                    planned.plugins.deploy_image = None;
                }
            }
        }
        Some(image) => {
            let resource = project::DeployImageResource {
                container_command: args.image_container_command.clone(),
                container_port: args.image_container_port.clone(),
                domain: project.domain.clone(),
                group: api.group.clone(),
                image: image.clone(),
                kind: api.kind.clone(),
                run_as_user: args.run_as_user.clone(),
                version: api.version.clone(),
            };
            planned
                .plugins
                .deploy_image
                .get_or_insert_default()
                .upsert(resource);
        }
    }
    planned
}

/// What a new version of a kind does with the kind's conversion webhook.
pub(super) enum Joined {
    /// No conversion webhook, or the version is its hub or a spoke already.
    None,
    /// It becomes a spoke: the hub's webhook as its templates see it, and the version.
    Spoke(Box<create_webhook::Hook>, create_webhook::Spoke),
    /// The hub's conversion file has no markers to add it at: the command that
    /// regenerates the file with every spoke.
    Unwired(String),
}

/// A new version of a kind whose conversion webhook exists joins it as a spoke, like
/// kubebuilder's: PROJECT lists it with the hub's spokes, and its conversion goes into the
/// hub's file (see the `Marker::Spokes` entries). A file without the markers (an older
/// scaffold's) is left alone; the command says how to regenerate it.
fn join_conversion(
    project: &mut Project,
    api: &model::Resource,
    changes: &Changes,
) -> anyhow::Result<Joined> {
    let Some(hub) = project.resources.iter().find(|r| {
        r.group == api.group
            && r.kind == api.kind
            && r.version != api.version
            && r.webhooks.as_ref().is_some_and(|w| w.conversion)
    }) else {
        return Ok(Joined::None);
    };
    let webhooks = hub.webhooks.as_ref().expect("found by its webhooks");
    if webhooks.spoke.contains(&api.version) {
        return Ok(Joined::None);
    }
    let mut spokes = webhooks.spoke.clone();
    spokes.push(api.version.clone());
    spokes.sort();
    let Derived {
        api: hub_api,
        layout: hub_layout,
        ..
    } = derive(project, hub.gvk(), None, changes)?;
    let file = changes
        .read(&hub_layout.conversion_file)?
        .unwrap_or_default();
    let markers = [Marker::Spokes, Marker::SpokeImpls, Marker::SpokeTests];
    let has = |marker: Marker| {
        let tag = format!("// +rkb:scaffold:{}", marker.name());
        file.lines().any(|line| line.trim() == tag)
    };
    if !markers.into_iter().all(has) {
        return Ok(Joined::Unwired(format!(
            "rkb create webhook --group {} --version {} --kind {} --conversion --spoke {} --force",
            hub_api.group,
            hub_api.version,
            hub_api.kind,
            spokes.join(",")
        )));
    }
    let hub = project
        .resources
        .iter_mut()
        .find(|r| hub_api.is(r))
        .expect("found above");
    let webhooks = hub.webhooks.as_mut().expect("found by its webhooks");
    webhooks.spoke = spokes;
    let webhooks = webhooks.clone();
    let hook = create_webhook::Hook::new(project, &hub_api, &hub_layout, &webhooks);
    let spoke = create_webhook::Spoke::of(api);
    Ok(Joined::Spoke(Box::new(hook), spoke))
}

/// Whether the manager's container has an `env:` list, which the first image's variable
/// starts and later ones join.
pub(in crate::commands) fn manager_has_env_list(changes: &Changes) -> anyhow::Result<bool> {
    let Some(text) = changes.read(model::MANAGER)? else {
        return Ok(false);
    };
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let document = serde::Deserialize::deserialize(document)
            .with_context(|| format!("{} is not valid YAML", model::MANAGER))?;
        let serde_yaml_ng::Value::Mapping(document) = document else {
            continue;
        };
        let containers = document
            .get("spec")
            .and_then(|s| s.get("template"))
            .and_then(|t| t.get("spec"))
            .and_then(|s| s.get("containers"))
            .and_then(serde_yaml_ng::Value::as_sequence);
        let manager = containers
            .into_iter()
            .flatten()
            .find(|c| c.get("name").and_then(serde_yaml_ng::Value::as_str) == Some("manager"));
        if let Some(manager) = manager {
            // `env:` with no items left (the last image withdrawn) still holds the key.
            return Ok(manager.get("env").is_some());
        }
    }
    Ok(false)
}
