//! Step one of `create webhook`: the kind (derived as every command derives it) and its
//! webhooks after the command, without judging any of it. [`super::checks::all`] judges
//! the result.

use crate::cli::CreateWebhookArgs;
use crate::commands::derive::{Derived, derive};
use crate::model::{self, Layout};
use crate::project::{self, Project};
use crate::scaffold::Changes;

/// What `create webhook` would do for the kind it names.
pub(super) struct Resolved {
    /// PROJECT, with an entry for a built-in kind that had none.
    pub project: Project,
    /// The kind's entry, as PROJECT has it before the command (or would, for a kind it
    /// lacks).
    pub entry: project::Resource,
    /// The kind has webhooks to have: a type of the project, a built-in or external
    /// kind's entry, or a built-in kind.
    pub known: bool,
    pub api: model::Resource,
    /// The kind's webhooks before the command.
    pub before: project::Webhooks,
    /// The webhooks of this version after the command: what it has plus what is asked for.
    pub after: project::Webhooks,
    pub layout: Layout,
}

/// Derives the kind and what its webhooks will be; only reading the project fails here.
pub(super) fn resolve(
    args: &CreateWebhookArgs,
    project: &Project,
    changes: &Changes,
) -> anyhow::Result<Resolved> {
    let Derived { entry, api, layout } = derive(project, args.gvk.parts(), None, changes)?;
    let entry = entry.filter(|r| r.can_have_webhooks());
    let known = entry.is_some() || api.builtin;
    let mut project = project.clone();
    let entry = match entry {
        Some(entry) => entry.clone(),
        // A built-in kind needs no API or controller of the project (kubebuilder's
        // `create webhook --group core --version v1 --kind Pod`): PROJECT records it as a
        // core resource with webhooks only.
        None => {
            let entry = api.entry(&project.domain, false, false);
            if api.builtin {
                project.resources.push(entry.clone());
            }
            entry
        }
    };
    let before = entry.webhooks.clone().unwrap_or_default();
    let mut spokes = args.spoke.clone();
    spokes.sort();
    spokes.dedup();
    let after = project::Webhooks {
        conversion: before.conversion || args.webhooks.conversion,
        defaulting: before.defaulting || args.webhooks.defaulting,
        spoke: if args.webhooks.conversion {
            spokes
        } else {
            before.spoke.clone()
        },
        validation: before.validation || args.webhooks.programmatic_validation,
        defaulting_path: args
            .defaulting_path
            .clone()
            .or_else(|| before.defaulting_path.clone()),
        validation_path: args
            .validation_path
            .clone()
            .or_else(|| before.validation_path.clone()),
        webhook_version: "v1".into(),
    };
    Ok(Resolved {
        project,
        entry,
        known,
        api,
        before,
        after,
        layout,
    })
}
