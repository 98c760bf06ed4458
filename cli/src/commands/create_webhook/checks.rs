//! Step two of `create webhook`: every refusal, judged on what [`super::resolve`]
//! derived, in one written order: a webhook asked for, the paths asked for, a kind that
//! can have webhooks, no webhook it has already, and a conversion webhook that can be.

use anyhow::bail;

use super::CreateWebhookArgs;
use super::resolve::Resolved;
use crate::project::{self, Project};

/// Every check of `create webhook`, in the order above. The first refusal is the error.
pub(super) fn all(args: &CreateWebhookArgs, resolved: &Resolved) -> anyhow::Result<()> {
    let example = format!(
        "rkb create webhook --group {} --version {} --kind {}",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    some_webhook(args, &example)?;
    check_paths(args, &example)?;
    if !resolved.known {
        unknown_kind(&resolved.project, args)?;
    }
    check_duplicates(args, &resolved.before, &example)?;
    if args.webhooks.conversion {
        check_conversion(&resolved.project, args, &resolved.entry)?;
    }
    Ok(())
}

/// At least one of the webhook flags.
fn some_webhook(args: &CreateWebhookArgs, example: &str) -> anyhow::Result<()> {
    let asked = &args.webhooks;
    if asked.defaulting || asked.programmatic_validation || asked.conversion {
        return Ok(());
    }
    bail!(
        "no webhook chosen: create webhook needs at least one of --defaulting, \
         --programmatic-validation and --conversion.\n  \
         example:  {example} --defaulting --programmatic-validation"
    );
}

/// `--defaulting-path` and `--validation-path`: URL paths the API server accepts, apart
/// from each other and from the conversion webhook's.
fn check_paths(args: &CreateWebhookArgs, example: &str) -> anyhow::Result<()> {
    let given = [
        ("--defaulting-path", "--defaulting", &args.defaulting_path),
        (
            "--validation-path",
            "--programmatic-validation",
            &args.validation_path,
        ),
    ];
    for (flag, webhook, path) in given {
        let Some(path) = path else { continue };
        let example = format!("{example} {webhook} {flag} /my-custom-path");
        if let Err(error) = rkb_core::webhook::check_path(path) {
            bail!("{flag} {path:?}: {error}.\n  example:  {example}");
        }
        if path == rkb_core::webhook::CONVERSION_PATH {
            bail!(
                "{flag} {path:?}: the manager serves conversion reviews there; choose another \
                 path.\n  example:  {example}"
            );
        }
    }
    if let (Some(defaulting), Some(validation)) = (&args.defaulting_path, &args.validation_path)
        && defaulting == validation
    {
        bail!(
            "--defaulting-path and --validation-path are both {defaulting:?}: each webhook \
             needs a path of its own.\n  example:  {example} --defaulting --programmatic-validation \
             --defaulting-path /my-mutate-path --validation-path /my-validate-path"
        );
    }
    Ok(())
}

/// Refuses a kind that can have no webhooks: webhooks are for a custom resource of the
/// project, a built-in kind or an external one, and PROJECT has no such kind.
fn unknown_kind(project: &Project, args: &CreateWebhookArgs) -> anyhow::Result<()> {
    let known: Vec<String> = project
        .resources
        .iter()
        .filter(|r| r.can_have_webhooks())
        .map(|r| {
            format!(
                "--group {} --version {} --kind {}",
                r.group, r.version, r.kind
            )
        })
        .collect();
    // The kind in another case, group or version is most likely what was meant (a new
    // API of the same kind could be refused for it, too).
    let meant =
        crate::commands::meant::meant(project, &args.gvk, project::Resource::can_have_webhooks);
    let example = match &meant {
        Some(meant) => {
            let mut flags = String::new();
            for (given, flag) in [
                (args.webhooks.defaulting, " --defaulting"),
                (
                    args.webhooks.programmatic_validation,
                    " --programmatic-validation",
                ),
                (args.webhooks.conversion, " --conversion"),
            ] {
                if given {
                    flags.push_str(flag);
                }
            }
            for spoke in &args.spoke {
                flags.push_str(&format!(" --spoke {spoke}"));
            }
            format!("rkb create webhook {}{flags}", meant.flags())
        }
        None => format!(
            "rkb create api --group {} --version {} --kind {}",
            args.gvk.group, args.gvk.version, args.gvk.kind
        ),
    };
    let note = meant.map(|m| format!(" ({})", m.note)).unwrap_or_default();
    bail!(
        "no API {}/{} {} in PROJECT{note}: webhooks are for a kind this project has (run \
         `rkb create api` first).\n  accepted: {}\n  \
         example:  {example}",
        args.gvk.group,
        args.gvk.version,
        args.gvk.kind,
        if known.is_empty() {
            "none yet".to_owned()
        } else {
            known.join("; ")
        },
    );
}

/// A second webhook of a type the kind has is refused, unless `--force` regenerates it.
fn check_duplicates(
    args: &CreateWebhookArgs,
    before: &project::Webhooks,
    example: &str,
) -> anyhow::Result<()> {
    if args.force {
        return Ok(());
    }
    let duplicates: Vec<&str> = [
        (args.webhooks.defaulting && before.defaulting, "defaulting"),
        (
            args.webhooks.programmatic_validation && before.validation,
            "validation",
        ),
        (args.webhooks.conversion && before.conversion, "conversion"),
    ]
    .into_iter()
    .filter_map(|(duplicate, name)| duplicate.then_some(name))
    .collect();
    if duplicates.is_empty() {
        return Ok(());
    }
    let missing: Vec<&str> = [
        (!before.defaulting, "--defaulting"),
        (!before.validation, "--programmatic-validation"),
        (!before.conversion, "--conversion"),
    ]
    .into_iter()
    .filter_map(|(missing, flag)| missing.then_some(flag))
    .collect();
    bail!(
        "a {} webhook for {}/{} {} exists already (see PROJECT).\n  \
         accepted: {}\n  \
         example:  {example} {}",
        duplicates.join(" and "),
        args.gvk.group,
        args.gvk.version,
        args.gvk.kind,
        if missing.is_empty() {
            "nothing more: this kind has every webhook; --force regenerates their files \
             (edits in them are lost)"
                .to_owned()
        } else {
            format!(
                "the webhooks it lacks ({}), or --force to regenerate its webhook files (edits in them are lost)",
                missing.join(", ")
            )
        },
        missing.first().copied().unwrap_or("--force")
    );
}

/// A conversion webhook is the project's own CRD's: neither a built-in kind's, which the
/// API server converts, nor an external kind's, which its owner's converts.
fn check_own_kind(hub: &project::Resource) -> anyhow::Result<()> {
    if hub.external {
        bail!(
            "--conversion is for kinds this project defines; {kind} {} is an external API \
             (`create api --external-crd`), whose CRD, and the conversion between its \
             versions, belong to the project that defines it.\n  \
             accepted: --defaulting and --programmatic-validation\n  \
             example:  rkb create webhook --group {} --version {} --kind {kind} --defaulting",
            hub.api_group(),
            hub.group,
            hub.version,
            kind = hub.kind
        );
    }
    if hub.core {
        bail!(
            "--conversion is for custom resources with several versions; {}/{} {kind} is a \
             built-in Kubernetes kind, which the API server converts itself.\n  \
             accepted: --defaulting and --programmatic-validation\n  \
             example:  rkb create webhook --group {} --version {} --kind {kind} --defaulting",
            hub.group,
            hub.version,
            hub.group,
            hub.version,
            kind = hub.kind
        );
    }
    Ok(())
}

/// Checks `--conversion` and `--spoke`: a custom resource, other versions of the same
/// kind with types in this project, and no conversion webhook for the kind yet.
fn check_conversion(
    project: &Project,
    args: &CreateWebhookArgs,
    hub: &project::Resource,
) -> anyhow::Result<()> {
    check_own_kind(hub)?;
    let others: Vec<&project::Resource> = project
        .resources
        .iter()
        .filter(|r| {
            r.group == hub.group
                && r.kind == hub.kind
                && r.version != hub.version
                && r.api.is_some()
        })
        .collect();
    if others.is_empty() {
        bail!(
            "--conversion needs another version of {kind}: PROJECT has only {}/{} {kind}, and a \
             conversion webhook converts between the versions of one CRD.\n  \
             Add one first:  rkb create api --group {} --version <other version> --kind {kind} --no-controller",
            hub.group,
            hub.version,
            hub.group,
            kind = hub.kind
        );
    }
    let versions: Vec<&str> = others.iter().map(|r| r.version.as_str()).collect();
    let example = format!(
        "rkb create webhook --group {} --version {} --kind {} --conversion --spoke {}",
        hub.group, hub.version, hub.kind, versions[0]
    );
    if let Some(converted) = others
        .iter()
        .find(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion))
    {
        bail!(
            "{} already has a conversion webhook with hub {} (see PROJECT); one CRD has one \
             conversion webhook and one hub.\n  \
             To change its spokes, regenerate it:  rkb create webhook --group {} --version {} --kind {} \
             --conversion --spoke <versions> --force",
            hub.kind,
            converted.version,
            hub.group,
            converted.version,
            hub.kind
        );
    }
    if args.spoke.is_empty() {
        bail!(
            "--conversion needs --spoke: the versions of {} that convert to and from the hub {}.\n  \
             accepted: {}\n  example:  {example}",
            hub.kind,
            hub.version,
            versions.join(", ")
        );
    }
    for spoke in &args.spoke {
        if *spoke == hub.version {
            bail!(
                "--spoke {spoke} is the hub itself (--version {spoke}); a spoke is another version.\n  \
                 accepted: {}\n  example:  {example}",
                versions.join(", ")
            );
        }
        if !versions.contains(&spoke.as_str()) {
            bail!(
                "invalid --spoke {spoke:?}: {} has no version {spoke} in PROJECT.\n  \
                 accepted: {}\n  example:  {example}",
                hub.kind,
                versions.join(", ")
            );
        }
    }
    Ok(())
}
