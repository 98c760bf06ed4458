//! `rkb delete api` and `rkb delete webhook`: undo what `create api` and `create webhook`
//! wrote for one API, which kubebuilder cannot do (kubebuilder#907).
//!
//! PROJECT records every command, and the create commands' tables (their `PLAN`s) every
//! file and insertion, so the scaffold of an API can be rendered again: the API's entries
//! are undone (its insertions removed, then its files), except what the APIs that stay,
//! and `init`, still need. A file rkb would remove must hold exactly what this rkb
//! scaffolds for the API now, else it counts as the user's (`--force` removes it anyway).

use std::io::Write;
use std::path::Path;

use anyhow::bail;

use crate::cli::{DeleteApiArgs, DeleteWebhookArgs, Gvk};
use crate::project::{self, Project, Webhooks};
use crate::scaffold::plan::{self, Kept, Rendered, Unapplied};
use crate::scaffold::{Changes, Templates};

pub fn delete_api(args: &DeleteApiArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let command = format!(
        "rkb delete api --group {} --version {} --kind {}",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    let Some(entry) = project
        .find(&args.gvk.group, &args.gvk.version, &args.gvk.kind)
        .filter(|r| r.api.is_some() || r.has_controller())
    else {
        let has_api = |r: &project::Resource| r.api.is_some() || r.has_controller();
        bail!(
            "no API {}/{} {} in PROJECT{}, so there is nothing to delete.\n  accepted: {}{}",
            args.gvk.group,
            args.gvk.version,
            args.gvk.kind,
            meant_note(&project, &args.gvk, has_api),
            listed(&project, has_api),
            meant_example(&project, &args.gvk, has_api, "rkb delete api", ""),
        );
    };
    if let Some(name) = &args.controller_name {
        return delete_named_controller(args, &project, entry, name, changes, &command, out);
    }
    check_api_unused(&project, entry, &changes)?;

    let templates = Templates::load()?;
    let mut gone = Vec::new();
    for (context, switches) in super::create_api::recorded_all(&project, entry, &changes)? {
        gone.extend(plan::render(
            super::create_api::PLAN,
            &switches,
            &templates,
            &context,
        )?);
    }
    let mut after = project.clone();
    after.resources.retain(|r| !same(r, entry));
    if let Some(plugin) = &mut after.plugins.deploy_image {
        plugin.resources.retain(|i| {
            (&i.group, &i.version, &i.kind) != (&entry.group, &entry.version, &entry.kind)
        });
        if plugin.resources.is_empty() {
            after.plugins.deploy_image = None;
        }
    }
    undo(&gone, after, args.force, &command, changes, &templates, out)?;
    writeln!(
        out,
        "\nDeleted {}/{} {}. Next: `make manifests`, which brings config/ (CRD bases, RBAC \
         role, webhook manifests) in line with what is left.",
        entry.group, entry.version, entry.kind
    )?;
    Ok(())
}

/// `delete api --controller-name`: one named controller of a kind, the kind and its other
/// controllers staying.
fn delete_named_controller(
    args: &DeleteApiArgs,
    project: &Project,
    entry: &project::Resource,
    name: &str,
    changes: Changes,
    command: &str,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let command = format!("{command} --controller-name {name}");
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
    let templates = Templates::load()?;
    let (context, switches) = super::create_api::recorded_named(project, entry, name, &changes)?;
    let gone = plan::render(super::create_api::PLAN, &switches, &templates, &context)?;
    let mut after = project.clone();
    if let Some(kind) = after.resources.iter_mut().find(|r| same(r, entry)) {
        kind.controllers.retain(|c| c.name != name);
    }
    after
        .resources
        .retain(|r| r.api.is_some() || r.has_controller() || r.webhooks.is_some());
    undo(&gone, after, args.force, &command, changes, &templates, out)?;
    writeln!(
        out,
        "\nDeleted the {name} controller of {}/{} {}. Next: `make manifests`, which brings \
         config/rbac/role.yaml in line with the controllers that are left.",
        entry.group, entry.version, entry.kind
    )?;
    Ok(())
}

pub fn delete_webhook(args: &DeleteWebhookArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let entry = webhook_entry(&project, args)?;
    let has = entry.webhooks.clone().unwrap_or_default();
    let asked = Webhooks {
        conversion: args.webhooks.conversion,
        defaulting: args.webhooks.defaulting,
        spoke: if args.webhooks.conversion {
            has.spoke.clone()
        } else {
            Vec::new()
        },
        validation: args.webhooks.programmatic_validation,
        webhook_version: has.webhook_version.clone(),
    };
    let command = format!(
        "rkb delete webhook --group {} --version {} --kind {}",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    check_webhooks_asked(args, &has, &asked, &command)?;

    let templates = Templates::load()?;
    let (context, switches) = super::create_webhook::recorded(&project, entry, &asked, &changes)?;
    let gone = plan::render(super::create_webhook::PLAN, &switches, &templates, &context)?;
    let left = Webhooks {
        conversion: has.conversion && !asked.conversion,
        defaulting: has.defaulting && !asked.defaulting,
        spoke: if asked.conversion {
            Vec::new()
        } else {
            has.spoke.clone()
        },
        validation: has.validation && !asked.validation,
        webhook_version: has.webhook_version.clone(),
    };
    let mut after = project.clone();
    if let Some(stays) = after.resources.iter_mut().find(|r| same(r, entry)) {
        stays.webhooks = (!webhook_flags(&left).is_empty()).then_some(left);
    }
    // A built-in kind that only had webhooks leaves PROJECT with its last one.
    after
        .resources
        .retain(|r| r.api.is_some() || r.has_controller() || r.webhooks.is_some());
    undo(&gone, after, args.force, &command, changes, &templates, out)?;
    let deleted: Vec<&str> = webhook_flags(&asked)
        .iter()
        .map(|f| f.trim_start_matches("--"))
        .collect();
    writeln!(
        out,
        "\nDeleted the {} webhook{} of {}/{} {}. Next: `make manifests`.",
        deleted.join(" and "),
        if deleted.len() > 1 { "s" } else { "" },
        entry.group,
        entry.version,
        entry.kind
    )?;
    Ok(())
}

/// PROJECT's entry of the kind whose webhooks `delete webhook` deletes.
fn webhook_entry<'p>(
    project: &'p Project,
    args: &DeleteWebhookArgs,
) -> anyhow::Result<&'p project::Resource> {
    if let Some(entry) = project
        .find(&args.gvk.group, &args.gvk.version, &args.gvk.kind)
        .filter(|r| r.webhooks.is_some())
    {
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

/// The webhooks of `w` as flags: `--defaulting`, `--programmatic-validation`, `--conversion`.
fn webhook_flags(w: &Webhooks) -> Vec<&'static str> {
    [
        (w.defaulting, "--defaulting"),
        (w.validation, "--programmatic-validation"),
        (w.conversion, "--conversion"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect()
}

/// At least one webhook asked, and only webhooks the kind `has`.
fn check_webhooks_asked(
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

fn same(a: &project::Resource, b: &project::Resource) -> bool {
    (&a.group, &a.version, &a.kind) == (&b.group, &b.version, &b.kind)
}

/// ` (kinds are case-sensitive, and PROJECT has Memcached ...)`: the entry that `fits` and
/// `gvk` most likely meant, or nothing.
fn meant_note(project: &Project, gvk: &Gvk, fits: impl Fn(&project::Resource) -> bool) -> String {
    super::meant::meant(project, gvk, fits).map_or_else(String::new, |m| format!(" ({})", m.note))
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
    super::meant::meant(project, gvk, fits).map_or_else(String::new, |m| {
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

/// Refuses to delete an API that other parts of the project still need: its own
/// webhooks, another version's conversion webhook, or the kind's storage version.
fn check_api_unused(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<()> {
    let (group, version, kind) = (&entry.group, &entry.version, &entry.kind);
    if let Some(hooks) = &entry.webhooks {
        let flags: Vec<&str> = [
            (hooks.defaulting, "--defaulting"),
            (hooks.validation, "--programmatic-validation"),
            (hooks.conversion, "--conversion"),
        ]
        .into_iter()
        .filter_map(|(on, flag)| on.then_some(flag))
        .collect();
        bail!(
            "{group}/{version} {kind} has webhooks (see PROJECT), whose code names its type; \
             delete them first.\n  \
             example:  rkb delete webhook --group {group} --version {version} --kind {kind} {}",
            flags.join(" ")
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
    if entry.api.is_some() && versions.len() > 1 && same(versions[0], entry) {
        let mut still_not_storage = Vec::new();
        for other in &versions[1..] {
            let api = crate::model::Resource::recorded(other);
            let types = crate::model::Layout::in_project(project, &api, changes)?.types_file;
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

/// What the APIs and webhooks in `after` (the project once the command is done) and
/// `init` still need.
fn kept(after: &Project, changes: &Changes, templates: &Templates) -> anyhow::Result<Kept> {
    let mut kept = Kept::default();
    for entry in super::init::PLAN {
        kept.file(entry.path);
    }
    // `create webhook` inserts the `replacements:` key into projects from before the
    // metrics certificate's replacements (#28); since then `init` writes it.
    kept.insertion(
        crate::model::DEFAULT_KUSTOMIZATION,
        super::create_webhook::REPLACEMENTS_KEY,
    );
    for entry in &after.resources {
        for (context, switches) in super::create_api::recorded_all(after, entry, changes)? {
            kept.extend(&plan::render(
                super::create_api::PLAN,
                &switches,
                templates,
                &context,
            )?);
        }
        if let Some(hooks) = &entry.webhooks {
            let (context, switches) =
                super::create_webhook::recorded(after, entry, hooks, changes)?;
            kept.extend(&plan::render(
                super::create_webhook::PLAN,
                &switches,
                templates,
                &context,
            )?);
        }
    }
    Ok(kept)
}

/// Removes what `gone` rendered, except what `after` (the project once the command is
/// done) and `init` still need, then [`finish`]es.
fn undo(
    gone: &[Rendered],
    after: Project,
    force: bool,
    command: &str,
    mut changes: Changes,
    templates: &Templates,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let kept = kept(&after, &changes, templates)?;
    let unapplied = plan::unapply(gone, &kept, force, &mut changes)?;
    finish(unapplied, force, command, after, changes, out)
}

/// Refuses, naming the files, when something is the user's and there is no `--force`;
/// else writes PROJECT, commits, and removes the directories left empty.
fn finish(
    unapplied: Unapplied,
    force: bool,
    command: &str,
    after: Project,
    mut changes: Changes,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let Unapplied {
        changed,
        missing,
        kept,
        warning,
    } = unapplied;
    let clean = changed.is_empty() && missing.is_empty();
    if !force && !clean {
        let mut problems: Vec<String> = changed
            .iter()
            .map(|path| format!("{path}: changed since rkb scaffolded it"))
            .collect();
        problems.extend(missing.iter().map(|(path, text)| {
            format!(
                "{path}: the lines rkb inserted are not there as it wrote them:\n      {}",
                text.trim_end().replace('\n', "\n      ")
            )
        }));
        bail!(
            "nothing was deleted: these are not as rkb scaffolded them, so they may hold your work:\n  {}\n  \
             rkb compares each with what it scaffolds for this API now (a file scaffolded by an \
             older rkb, or with another hack/boilerplate.rs.txt, counts as changed).\n  \
             To keep a changed file, move it out of the project (or commit it, to get it back from \
             version control); then run `{command}` again, or `{command} --force` to delete the \
             files as they are and leave lines not found to you",
            problems.join("\n  ")
        );
    }
    changes.create(project::FILE_NAME, after.to_yaml(), true)?;
    let root = changes.root().to_path_buf();
    let removed: Vec<String> = changes
        .pending()
        .filter(|(_, written)| *written == crate::scaffold::Written::Removed)
        .map(|(path, _)| path.to_string_lossy().into_owned())
        .collect();
    super::commit(changes, out)?;
    for path in &removed {
        remove_empty_parents(&root, Path::new(path));
    }
    for path in &kept {
        writeln!(
            out,
            "    keep {}: it holds more than rkb wrote there",
            super::display(&root, Path::new(path))
        )?;
    }
    for path in &changed {
        writeln!(out, "warning: removed {path}, which had changed (--force)")?;
    }
    for (path, text) in &missing {
        writeln!(
            out,
            "warning: {path}: rkb did not find the lines it inserted there; remove them by hand if they are there in another form:\n      {}",
            text.trim_end().replace('\n', "\n      ")
        )?;
    }
    if let Some(warning) = warning {
        writeln!(out, "warning: {warning}")?;
    }
    Ok(())
}

/// Removes the directories above `rel` that its removal left empty, as `create` made them.
fn remove_empty_parents(root: &Path, rel: &Path) {
    let mut dir = rel.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        // Fails, and stops, at the first directory that still holds something.
        if std::fs::remove_dir(root.join(d)).is_err() {
            break;
        }
        dir = d.parent();
    }
}
