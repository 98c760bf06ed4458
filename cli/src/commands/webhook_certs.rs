//! `rkb edit --webhook-certs self|cert-manager`: switches where an existing project's webhook
//! certificates come from.
//!
//! What differs between the two is `create webhook`'s own table, rendered for every kind's
//! webhooks once as PROJECT says now and once with the other choice: what only the first
//! has comes out (as `delete` takes it out, so a file or insertion that is not as rkb wrote
//! it stops the switch), what only the second has goes in, and PROJECT records the choice.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use anyhow::bail;

use crate::cli::EditArgs;
use crate::project::{self, Project, WebhookCerts};
use crate::scaffold::plan::{self, Kept, Rendered, Unapplied};
use crate::scaffold::{Changes, Templates, Written};

pub(super) fn switch(args: &EditArgs, to: WebhookCerts, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let from = project.webhook_certs();
    let project_file = args.dir.join(project::FILE_NAME);
    if project.webhook_certs == Some(to) {
        writeln!(
            out,
            "{} has webhookCerts: {} already; nothing to change.",
            project_file.display(),
            to.as_str()
        )?;
        return Ok(());
    }
    if project.namespaced && to == WebhookCerts::SelfManaged {
        bail!("{}", WebhookCerts::NOT_NAMESPACED);
    }
    let mut after = project.clone();
    after.webhook_certs = Some(to);

    let templates = Templates::load()?;
    let before = rendered(&project, &changes, &templates)?;
    let now = rendered(&after, &changes, &templates)?;
    let before_keys: BTreeSet<_> = before.iter().map(key).collect();
    let now_keys: BTreeSet<_> = now.iter().map(key).collect();
    let gone = unique(before.iter().filter(|r| !now_keys.contains(&key(r))));
    let added = unique(now.iter().filter(|r| !before_keys.contains(&key(r))));

    let unapplied = plan::unapply(&gone, &Kept::default(), false, &mut changes)?;
    refuse_edited(&unapplied, from, to)?;
    let formatted = plan::apply_rendered(&added, &mut changes)?;
    changes.create(project::FILE_NAME, after.to_yaml(), true)?;
    let root = changes.root().to_path_buf();
    let removed: Vec<String> = changes
        .pending()
        .filter(|(_, written)| *written == Written::Removed)
        .map(|(path, _)| path.to_string_lossy().into_owned())
        .collect();
    super::commit(changes, out)?;
    for path in &removed {
        super::delete::remove_empty_parents(&root, Path::new(path));
    }
    for warning in [unapplied.warning, formatted].into_iter().flatten() {
        writeln!(out, "warning: {warning}")?;
    }
    let has_webhooks = after.resources.iter().any(|r| r.webhooks.is_some());
    writeln!(
        out,
        "\nThe webhooks' certificates now come from {}.{}",
        match to {
            WebhookCerts::SelfManaged => "the manager itself (src/webhook/certs.rs)",
            WebhookCerts::CertManager => "cert-manager (config/certmanager/)",
        },
        if has_webhooks {
            " Next: `make manifests` (the manager's RBAC, and the Helm chart if the project has one)."
        } else {
            " `rkb create webhook` scaffolds them that way."
        }
    )?;
    Ok(())
}

/// What `create webhook` rendered for every kind of `project` with webhooks, as `project`
/// says its certificates come.
fn rendered(
    project: &Project,
    changes: &Changes,
    templates: &Templates,
) -> anyhow::Result<Vec<Rendered>> {
    let mut all = Vec::new();
    for entry in &project.resources {
        if let Some(hooks) = &entry.webhooks {
            let (context, switches) =
                super::create_webhook::recorded(project, entry, hooks, changes)?;
            all.extend(plan::render(
                super::create_webhook::PLAN,
                &switches,
                templates,
                &context,
            )?);
        }
    }
    Ok(all)
}

/// What tells one rendered file or insertion from another.
fn key(r: &Rendered) -> (String, String, String) {
    (r.path.clone(), r.text.clone(), format!("{:?}", r.action))
}

/// Each file or insertion once (two kinds share the configurations' lines).
fn unique<'a>(rendered: impl Iterator<Item = &'a Rendered>) -> Vec<Rendered> {
    let mut seen = BTreeSet::new();
    rendered.filter(|r| seen.insert(key(r))).cloned().collect()
}

/// Refuses, naming them, when parts of the old way are not as rkb wrote them: they may hold
/// the user's work, which a switch would lose.
fn refuse_edited(
    unapplied: &Unapplied,
    from: WebhookCerts,
    to: WebhookCerts,
) -> anyhow::Result<()> {
    let mut problems: Vec<String> = unapplied
        .changed
        .iter()
        .chain(&unapplied.kept)
        .map(|path| format!("{path}: changed since rkb scaffolded it"))
        .collect();
    problems.extend(unapplied.missing.iter().map(|(path, text)| {
        format!(
            "{path}: the lines rkb inserted are not there as it wrote them:\n      {}",
            text.trim_end().replace('\n', "\n      ")
        )
    }));
    if problems.is_empty() {
        return Ok(());
    }
    bail!(
        "nothing was changed: switching the webhook certificates from {} to {} takes these \
         out, and they are not as rkb scaffolded them, so they may hold your work:\n  {}\n  \
         Keep what you need of them elsewhere, then delete those files and lines (or put back \
         what rkb wrote) and run `rkb edit --webhook-certs {}` again; or make the whole switch \
         by hand, as the book's webhooks guide describes, and set `webhookCerts: {}` in PROJECT",
        from.as_str(),
        to.as_str(),
        problems.join("\n  "),
        to.as_str(),
        to.as_str()
    )
}
