//! `rkb delete api` and `rkb delete webhook`: undo what `create api` and `create webhook`
//! wrote for one API, which kubebuilder cannot do (kubebuilder#907).
//!
//! PROJECT records every command, and the create commands' tables (their `PLAN`s) every
//! file and insertion, so the scaffold of an API can be rendered again: the API's entries
//! are undone (its insertions removed, then its files), except what the APIs that stay,
//! and `init`, still need. A file rkb would remove must hold exactly what this rkb
//! scaffolds for the API now, else it counts as the user's (`--force` removes it anyway).
//!
//! Three steps, as in every command: the kind is derived as `create` derives it
//! ([`derive`](super::derive)), [`checks`] refuses what cannot be deleted, and the plan is
//! the create commands' tables rendered for PROJECT's entry, undone.

mod checks;

use std::io::Write;
use std::path::Path;

use anyhow::bail;

use super::derive::{Derived, derive};
use crate::cli::{DeleteApiArgs, DeleteWebhookArgs};
use crate::project::{self, Project, Webhooks};
use crate::scaffold::plan::{self, Kept, Rendered, Unapplied};
use crate::scaffold::{Changes, Templates};

pub fn delete_api(args: &DeleteApiArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let Derived { entry, .. } = derive(&project, args.gvk.parts(), None, &changes)?;
    // What `create api` scaffolded: a type or a controller.
    let entry = entry.filter(|r| r.has_api_scaffold());
    let entry = checks::api(args, &project, entry, &changes)?;
    let command = format!(
        "rkb delete api --group {} --version {} --kind {}",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    if let Some(name) = &args.controller_name {
        return delete_named_controller(args, &project, entry, name, changes, &command, out);
    }
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
    after.resources.retain(|r| r.gvk() != entry.gvk());
    if let Some(plugin) = &mut after.plugins.deploy_image {
        plugin.resources.retain(|i| i.gvk() != entry.gvk());
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
    let templates = Templates::load()?;
    let (context, switches) = super::create_api::recorded_named(project, entry, name, &changes)?;
    let gone = plan::render(super::create_api::PLAN, &switches, &templates, &context)?;
    let mut after = project.clone();
    if let Some(kind) = after.resources.iter_mut().find(|r| r.gvk() == entry.gvk()) {
        kind.controllers.retain(|c| c.name != name);
    }
    after
        .resources
        .retain(|r| r.has_api_scaffold() || r.webhooks.is_some());
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
    let Derived { entry, .. } = derive(&project, args.gvk.parts(), None, &changes)?;
    let entry = entry.filter(|r| r.webhooks.is_some());
    let entry = checks::webhook_entry(&project, args, entry)?;
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
        defaulting_path: has.defaulting_path.clone(),
        validation_path: has.validation_path.clone(),
        webhook_version: has.webhook_version.clone(),
    };
    let command = format!(
        "rkb delete webhook --group {} --version {} --kind {}",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    checks::webhooks_asked(args, &has, &asked, &command)?;

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
        defaulting_path: has.defaulting_path.clone().filter(|_| !asked.defaulting),
        validation_path: has.validation_path.clone().filter(|_| !asked.validation),
        webhook_version: has.webhook_version.clone(),
    };
    let mut after = project.clone();
    if let Some(stays) = after.resources.iter_mut().find(|r| r.gvk() == entry.gvk()) {
        stays.webhooks = (!webhook_flags(&left).is_empty()).then_some(left);
    }
    // A built-in kind that only had webhooks leaves PROJECT with its last one.
    after
        .resources
        .retain(|r| r.has_api_scaffold() || r.webhooks.is_some());
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

/// The webhooks of `w` as flags: `--defaulting`, `--programmatic-validation`, `--conversion`.
pub(super) fn webhook_flags(w: &Webhooks) -> Vec<&'static str> {
    [
        (w.defaulting, "--defaulting"),
        (w.validation, "--programmatic-validation"),
        (w.conversion, "--conversion"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect()
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
    super::commit(changes, out)?;
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
