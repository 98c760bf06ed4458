//! `rkb edit --webhook-certs self|cert-manager`: switches where an existing project's webhook
//! and metrics certificates come from.
//!
//! What differs between the two is [`METRICS_PLAN`], `init`'s parts for the metrics
//! certificate, and `create webhook`'s own table, rendered for every kind's webhooks, each
//! once as PROJECT says now and once with the other choice: what only the first has comes
//! out (as `delete` takes it out, so a file or insertion that is not as rkb wrote it stops
//! the switch), what only the second has goes in, and PROJECT records the choice.

use std::collections::BTreeSet;
use std::io::Write;

use anyhow::bail;
use serde::Serialize;

use crate::cli::EditArgs;
use crate::model::{self, ProjectNames};
use crate::project::{self, Project, WebhookCerts};
use crate::scaffold::plan::{self, Entry, Kept, Marker, Rendered, Text, Unapplied};
use crate::scaffold::{Changes, Templates};

/// Whether the manager makes its metrics certificate itself (`webhookCerts: self`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Metrics {
    pub self_managed: bool,
}

/// What [`METRICS_PLAN`]'s templates see.
#[derive(Debug, Serialize)]
pub(super) struct MetricsContext<'a> {
    #[serde(flatten)]
    pub names: &'a ProjectNames,
    pub self_managed_metrics: bool,
    #[serde(skip)]
    pub project: &'a Project,
}

impl plan::Model for MetricsContext<'_> {
    fn project(&self) -> &Project {
        self.project
    }
}

const METRICS_CERTS: &str = model::METRICS_CERTS;

/// `init`'s parts that follow where the certificates come from, as `init` writes them and
/// [`switch`] rewrites them: with `self`, `api/src/metrics_certs.rs` names the Secret and the
/// metrics Service, the manager gets it, `make manifests` the RBAC it needs, and the
/// ServiceMonitor verifies the certificate against the Secret's CA. They come with `init`,
/// not with the first webhook: every project serves metrics.
pub(super) const METRICS_PLAN: &[Entry<Metrics>] = &[
    Entry::shared(METRICS_CERTS, "init/api/metrics_certs.rs.tera")
        .rustfmt()
        .when(|m| m.self_managed),
    Entry::insert_sorted(model::API_LIB, Marker::Modules, Text::Inline("pub mod metrics_certs;"))
        .rustfmt()
        .when(|m| m.self_managed),
    Entry::insert(
        model::API_LIB,
        Marker::WebhookRbac,
        Text::Inline("rkb_runtime::metrics_certificate_rules(&metrics_certs::certificates()),"),
    )
    .rustfmt()
    .when(|m| m.self_managed),
    Entry::insert(
        model::MAIN,
        Marker::Webhooks,
        Text::Inline(
            "let manager = manager.metrics_certificates({{ crate_name }}::api::metrics_certs::certificates());",
        ),
    )
    .rustfmt()
    .when(|m| m.self_managed),
    Entry::shared(
        "config/prometheus/monitor.yaml",
        "init/config/prometheus/monitor.yaml.tera",
    ),
];

/// Whether `project` has the manager's own metrics certificate: `webhookCerts: self`, and
/// `api/src/metrics_certs.rs`, which a project from before that came with `self` lacks.
fn has_metrics(project: &Project, changes: &Changes) -> anyhow::Result<bool> {
    Ok(project.webhook_certs() == WebhookCerts::SelfManaged && changes.exists(METRICS_CERTS)?)
}

/// [`METRICS_PLAN`] rendered for `project`, with or without the manager's own metrics
/// certificate.
fn metrics_rendered(
    project: &Project,
    names: &ProjectNames,
    templates: &Templates,
    self_managed: bool,
) -> anyhow::Result<Vec<Rendered>> {
    let context = MetricsContext {
        names,
        self_managed_metrics: self_managed,
        project,
    };
    plan::render(METRICS_PLAN, &Metrics { self_managed }, templates, &context)
}

pub(super) fn switch(args: &EditArgs, to: WebhookCerts, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let from = project.webhook_certs();
    let project_file = args.dir.join(project::FILE_NAME);
    let templates = Templates::load()?;
    if project.webhook_certs == Some(to)
        && to == WebhookCerts::SelfManaged
        && !changes.exists(METRICS_CERTS)?
    {
        return add_metrics_certificate(&project, &templates, changes, out);
    }
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

    let names = ProjectNames::read(&project, &changes)?;
    let before = [
        metrics_rendered(
            &project,
            &names,
            &templates,
            has_metrics(&project, &changes)?,
        )?,
        rendered(&project, &changes, &templates)?,
    ]
    .concat();
    let now = [
        metrics_rendered(
            &after,
            &names,
            &templates,
            after.webhook_certs() == WebhookCerts::SelfManaged,
        )?,
        rendered(&after, &changes, &templates)?,
    ]
    .concat();
    let warnings = swap(&before, &now, from, to, &mut changes)?;
    super::replace_placeholder_role(&mut changes, &templates, &names, &project, &after)?;
    changes.create(project::FILE_NAME, after.to_yaml(), true)?;
    super::commit(changes, out)?;
    for warning in warnings {
        writeln!(out, "warning: {warning}")?;
    }
    let has_webhooks = after.resources.iter().any(|r| r.webhooks.is_some());
    writeln!(
        out,
        "\nThe webhooks' certificates now come from {}.{} Next: `make manifests` (the \
         manager's RBAC, and the Helm chart if the project has one).",
        match to {
            WebhookCerts::SelfManaged => {
                "the manager itself (api/src/webhook_certs.rs), and so does the metrics server's \
                 (api/src/metrics_certs.rs), which the ServiceMonitor verifies"
            }
            WebhookCerts::CertManager => {
                "cert-manager (config/certmanager/), and the metrics server's certificate is \
                 self-signed unless config/default's [METRICS-WITH-CERTS] switches on \
                 cert-manager's"
            }
        },
        if has_webhooks {
            ""
        } else {
            " `rkb create webhook` scaffolds them that way."
        }
    )?;
    Ok(())
}

/// `edit --webhook-certs self` on a `self` project from before the metrics certificate:
/// adds it, as `init` writes it now (the upgrade).
fn add_metrics_certificate(
    project: &Project,
    templates: &Templates,
    mut changes: Changes,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let names = ProjectNames::read(project, &changes)?;
    let warnings = swap(
        &metrics_rendered(project, &names, templates, false)?,
        &metrics_rendered(project, &names, templates, true)?,
        WebhookCerts::SelfManaged,
        WebhookCerts::SelfManaged,
        &mut changes,
    )?;
    super::commit(changes, out)?;
    for warning in warnings {
        writeln!(out, "warning: {warning}")?;
    }
    writeln!(
        out,
        "\nThe manager now makes the metrics server's certificate too (api/src/metrics_certs.rs), \
         which the ServiceMonitor verifies. Next: `make manifests` (its Secret's RBAC)."
    )?;
    Ok(())
}

/// Takes out what only `before` has and puts in what only `now` has; refuses, changing
/// nothing, when a part to take out is not as rkb wrote it. Returns rustfmt's warnings.
fn swap(
    before: &[Rendered],
    now: &[Rendered],
    from: WebhookCerts,
    to: WebhookCerts,
    changes: &mut Changes,
) -> anyhow::Result<Vec<String>> {
    let before_keys: BTreeSet<_> = before.iter().map(key).collect();
    let now_keys: BTreeSet<_> = now.iter().map(key).collect();
    // An insertion that goes in above one already there in `now`'s order (the metrics
    // option above the webhooks' in main.rs) takes that one out and puts it back after
    // itself, so that the lines are in the order a fresh scaffold has them.
    let mut moved = BTreeSet::new();
    for (i, r) in now.iter().enumerate() {
        let plan::Action::AtMarker(marker, _) = r.action else {
            continue;
        };
        if before_keys.contains(&key(r)) {
            continue;
        }
        for later in &now[i + 1..] {
            let same_place = later.path == r.path
                && matches!(later.action, plan::Action::AtMarker(m, _) if m == marker);
            if same_place && before_keys.contains(&key(later)) {
                moved.insert(key(later));
            }
        }
    }
    let gone = unique(
        before
            .iter()
            .filter(|r| !now_keys.contains(&key(r)) || moved.contains(&key(r))),
    );
    let added = unique(
        now.iter()
            .filter(|r| !before_keys.contains(&key(r)) || moved.contains(&key(r))),
    );
    let unapplied = plan::unapply(&gone, &Kept::default(), false, changes)?;
    refuse_edited(&unapplied, from, to)?;
    let formatted = plan::apply_rendered(&added, changes)?;
    Ok([unapplied.warning, formatted]
        .into_iter()
        .flatten()
        .collect())
}

/// Switches only the metrics certificate's parts ([`METRICS_PLAN`]) from what `before`
/// says to what `after` says: for `edit --namespaced`, which moves a project without
/// webhooks to cert-manager. Returns rustfmt's warnings.
pub(super) fn switch_metrics(
    before: &Project,
    after: &Project,
    templates: &Templates,
    changes: &mut Changes,
) -> anyhow::Result<Vec<String>> {
    let names = ProjectNames::read(before, changes)?;
    swap(
        &metrics_rendered(before, &names, templates, has_metrics(before, changes)?)?,
        &metrics_rendered(
            after,
            &names,
            templates,
            after.webhook_certs() == WebhookCerts::SelfManaged,
        )?,
        before.webhook_certs(),
        after.webhook_certs(),
        changes,
    )
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
