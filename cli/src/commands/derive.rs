//! Step one of every command that names a kind (`create api`, `create webhook`, `delete`,
//! and what `delete` rebuilds from PROJECT): what `--group/--version/--kind` mean in the
//! project, derived once and judged by the command's own checks after.

use crate::cli::Gvk;
use crate::model::{self, Layout};
use crate::project::{self, Project};
use crate::scaffold::{Changes, builtin_kinds};

/// A kind as a command sees it: PROJECT's entry, the resource with every name derived
/// from it, and where its files are in the project.
pub(super) struct Derived<'p> {
    /// PROJECT's entry of the group, version and kind, if it has one.
    pub entry: Option<&'p project::Resource>,
    /// The kind's names: see [`resource`].
    pub api: model::Resource,
    /// Where its files are.
    pub layout: Layout,
}

/// A new custom resource, or a new version of a kind (`create api` with a type).
pub(super) struct New<'a> {
    /// `--plural`; without it, the kind's plural (or the one derived from the kind).
    pub plural: Option<&'a str>,
    pub namespaced: bool,
}

impl Gvk {
    /// The group, version and kind as given.
    pub fn parts(&self) -> (&str, &str, &str) {
        (&self.group, &self.version, &self.kind)
    }
}

/// Derives the kind `gvk` names in `project`: with `new`, a new custom resource (or
/// version); else the kind as the project has it (see [`resource`]). Only reading the
/// project fails here.
pub(super) fn derive<'p>(
    project: &'p Project,
    gvk: (&str, &str, &str),
    new: Option<New>,
    changes: &Changes,
) -> anyhow::Result<Derived<'p>> {
    let entry = project.find(gvk.0, gvk.1, gvk.2);
    let api = match new {
        Some(New { plural, namespaced }) => {
            model::Resource::custom(project, gvk, plural, namespaced)
        }
        None => resource(project, gvk, entry),
    };
    let layout = Layout::in_project(project, &api, changes)?;
    Ok(Derived { entry, api, layout })
}

/// The kind `gvk` names, as the project has it: PROJECT's entry of a type or of a built-in
/// kind; else a built-in kind; else PROJECT's entry of another sort (an external kind's).
/// A kind that is none of these gets the names of a new custom resource, which the
/// command's checks refuse.
fn resource(
    project: &Project,
    gvk: (&str, &str, &str),
    entry: Option<&project::Resource>,
) -> model::Resource {
    let builtin = builtin_kinds::find(gvk.0, gvk.1, gvk.2);
    match (entry, builtin) {
        (Some(entry), _) if entry.api.is_some() || entry.core => {
            model::Resource::in_project(project, entry)
        }
        (_, Some(builtin)) => model::Resource::builtin(builtin),
        (Some(entry), None) => model::Resource::in_project(project, entry),
        (None, None) => model::Resource::custom(project, gvk, None, true),
    }
}
