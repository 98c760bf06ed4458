//! The refusals of `rkb delete`: no such API or webhook (with the entry most likely
//! meant), a named controller the kind lacks, an API other parts of the project still
//! need, and webhooks the kind does not have.

use anyhow::bail;

use super::webhook_flags;
use crate::cli::{DeleteApiArgs, DeleteWebhookArgs, Gvk};
use crate::commands::derive::{Derived, derive};
use crate::project::{self, Project, Webhooks};
use crate::scaffold::Changes;

/// Every check of `delete api`, in this order: PROJECT has the API (`entry`), the named
/// controller asked for, or else nothing else needs the API. Returns the entry.
pub(super) fn api<'p>(
    args: &DeleteApiArgs,
    project: &Project,
    entry: Option<&'p project::Resource>,
    changes: &Changes,
) -> anyhow::Result<&'p project::Resource> {
    let Some(entry) = entry else {
        let has_api = project::Resource::has_api_scaffold;
        bail!(
            "no API {}/{} {} in PROJECT{}, so there is nothing to delete.\n  accepted: {}{}",
            args.gvk.group,
            args.gvk.version,
            args.gvk.kind,
            meant_note(project, &args.gvk, has_api),
            listed(project, has_api),
            meant_example(project, &args.gvk, has_api, "rkb delete api", ""),
        );
    };
    match &args.controller_name {
        Some(name) => named_controller(entry, name)?,
        None => api_unused(project, entry, changes)?,
    }
    Ok(entry)
}

/// The kind has the named controller `delete api --controller-name` deletes.
fn named_controller(entry: &project::Resource, name: &str) -> anyhow::Result<()> {
    if !entry.controllers.iter().any(|c| c.name == name) {
        let named: Vec<&str> = entry.controllers.iter().map(|c| c.name.as_str()).collect();
        bail!(
            "{}/{} {} has no controller named {name:?} in PROJECT.\n  accepted: {}\n  \
             example:  rkb delete api --group {} --version {} --kind {} --controller-name <name> \
             (without --controller-name: the API with all its controllers)",
            entry.group,
            entry.version,
            entry.kind,
            if named.is_empty() {
                "none: the kind has no named controllers".to_owned()
            } else {
                named.join(", ")
            },
            entry.group,
            entry.version,
            entry.kind,
        );
    }
    Ok(())
}

/// Refuses to delete an API that other parts of the project still need: its own
/// webhooks, another version's conversion webhook, or the kind's storage version.
fn api_unused(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<()> {
    let (group, version, kind) = (&entry.group, &entry.version, &entry.kind);
    if let Some(hooks) = &entry.webhooks {
        bail!(
            "{group}/{version} {kind} has webhooks (see PROJECT), whose code names its type; \
             delete them first.\n  \
             example:  rkb delete webhook --group {group} --version {version} --kind {kind} {}",
            webhook_flags(hooks).join(" ")
        );
    }
    let hub = project.resources.iter().find(|r| {
        r.group == *group
            && r.kind == *kind
            && r.webhooks
                .as_ref()
                .is_some_and(|w| w.conversion && w.spoke.contains(version))
    });
    if let Some(hub) = hub {
        let others: Vec<&str> = hub
            .webhooks
            .iter()
            .flat_map(|w| &w.spoke)
            .filter(|s| *s != version)
            .map(String::as_str)
            .collect();
        let regenerate = if others.is_empty() {
            format!(
                "delete the conversion webhook:  rkb delete webhook --group {group} --version {} --kind {kind} --conversion",
                hub.version
            )
        } else {
            format!(
                "regenerate it without this spoke:  rkb create webhook --group {group} --version {} --kind {kind} \
                 --conversion --spoke {} --force",
                hub.version,
                others.join(",")
            )
        };
        bail!(
            "{group}/{version} {kind} is a spoke of the conversion webhook of {group}/{} {kind}, \
             whose code converts it; first {regenerate}",
            hub.version
        );
    }
    // The first version of a kind is its storage version; later ones say `storage = false`
    // in their types, and a CRD needs exactly one.
    let versions: Vec<&project::Resource> = project
        .resources
        .iter()
        .filter(|r| r.group == *group && r.kind == *kind && r.api.is_some() && !r.core)
        .collect();
    if entry.api.is_some() && versions.len() > 1 && versions[0].gvk() == entry.gvk() {
        let mut still_not_storage = Vec::new();
        for other in &versions[1..] {
            let Derived { layout, .. } = derive(project, other.gvk(), None, changes)?;
            let types = layout.types_file;
            if changes
                .read(&types)?
                .is_none_or(|text| text.contains("storage = false"))
            {
                still_not_storage.push((other.version.as_str(), types));
            }
        }
        if still_not_storage.len() == versions.len() - 1 {
            let (next, types) = &still_not_storage[0];
            bail!(
                "{group}/{version} is the storage version of {kind} (the one the API server \
                 stores objects in), and its other versions ({}) are not; a CRD needs exactly one \
                 storage version.\n  \
                 Make another version the storage version first, e.g. {next}: remove `storage = false` \
                 from `#[rkb_runtime::api(...)]` in {types} (and migrate stored objects), then run \
                 `{}` again",
                still_not_storage
                    .iter()
                    .map(|(v, _)| *v)
                    .collect::<Vec<_>>()
                    .join(", "),
                format_args!("rkb delete api --group {group} --version {version} --kind {kind}")
            );
        }
    }
    Ok(())
}

/// PROJECT's `entry` of the kind whose webhooks `delete webhook` deletes, which must exist.
pub(super) fn webhook_entry<'p>(
    project: &Project,
    args: &DeleteWebhookArgs,
    entry: Option<&'p project::Resource>,
) -> anyhow::Result<&'p project::Resource> {
    if let Some(entry) = entry {
        return Ok(entry);
    }
    let has_webhooks = |r: &project::Resource| r.webhooks.is_some();
    let flags: String = [
        (args.webhooks.defaulting, " --defaulting"),
        (
            args.webhooks.programmatic_validation,
            " --programmatic-validation",
        ),
        (args.webhooks.conversion, " --conversion"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    bail!(
        "no webhooks for {}/{} {} in PROJECT{}, so there is nothing to delete.\n  \
         accepted (kinds with webhooks): {}{}",
        args.gvk.group,
        args.gvk.version,
        args.gvk.kind,
        meant_note(project, &args.gvk, has_webhooks),
        listed(project, has_webhooks),
        meant_example(
            project,
            &args.gvk,
            has_webhooks,
            "rkb delete webhook",
            &flags
        ),
    );
}

/// At least one webhook asked, and only webhooks the kind `has`.
pub(super) fn webhooks_asked(
    args: &DeleteWebhookArgs,
    has: &Webhooks,
    asked: &Webhooks,
    command: &str,
) -> anyhow::Result<()> {
    let absent: Vec<&str> = [
        (asked.defaulting && !has.defaulting, "--defaulting"),
        (
            asked.validation && !has.validation,
            "--programmatic-validation",
        ),
        (asked.conversion && !has.conversion, "--conversion"),
    ]
    .into_iter()
    .filter_map(|(absent, flag)| absent.then_some(flag))
    .collect();
    if !webhook_flags(asked).is_empty() && absent.is_empty() {
        return Ok(());
    }
    let what = if absent.is_empty() {
        "no webhook chosen: say which of the kind's webhooks to delete".to_owned()
    } else {
        format!(
            "{}/{} {} has no webhook of {} (see PROJECT)",
            args.gvk.group,
            args.gvk.version,
            args.gvk.kind,
            absent.join(", ")
        )
    };
    // The example deletes what was asked and exists, or else one webhook the kind has,
    // never more than was asked.
    let asked_and_there: Vec<&str> = webhook_flags(asked)
        .into_iter()
        .filter(|flag| !absent.contains(flag))
        .collect();
    let example = if asked_and_there.is_empty() {
        webhook_flags(has)
            .first()
            .copied()
            .unwrap_or_default()
            .to_owned()
    } else {
        asked_and_there.join(" ")
    };
    bail!(
        "{what}.\n  accepted: {}\n  example:  {command} {example}",
        webhook_flags(has).join(", "),
    );
}

/// ` (kinds are case-sensitive, and PROJECT has Memcached ...)`: the entry that `fits` and
/// `gvk` most likely meant, or nothing.
fn meant_note(project: &Project, gvk: &Gvk, fits: impl Fn(&project::Resource) -> bool) -> String {
    crate::commands::meant::meant(project, gvk, fits)
        .map_or_else(String::new, |m| format!(" ({})", m.note))
}

/// The example of a refusal: `command` for the entry `gvk` most likely meant, with the
/// `flags` given, or nothing when no entry comes close (an example for another kind would
/// delete what the user did not ask for).
fn meant_example(
    project: &Project,
    gvk: &Gvk,
    fits: impl Fn(&project::Resource) -> bool,
    command: &str,
    flags: &str,
) -> String {
    crate::commands::meant::meant(project, gvk, fits).map_or_else(String::new, |m| {
        format!("\n  example:  {command} {}{flags}", m.flags())
    })
}

/// PROJECT's entries that `filter` accepts, as flags.
fn listed(project: &Project, filter: impl Fn(&project::Resource) -> bool) -> String {
    let known: Vec<String> = project
        .resources
        .iter()
        .filter(|r| filter(r))
        .map(|r| {
            format!(
                "--group {} --version {} --kind {}",
                r.group, r.version, r.kind
            )
        })
        .collect();
    if known.is_empty() {
        "none: PROJECT lists no such API".to_owned()
    } else {
        known.join("; ")
    }
}
