//! `rkb create webhook`: defaulting, validating and conversion webhooks for a kind of the
//! project, kubebuilder v4's `create webhook`. The Rust goes to `src/webhook/` (one module
//! per kind and version, like kubebuilder's `internal/webhook/<version>/<kind>_webhook.go`),
//! registered at `+rkb:scaffold:` markers in `src/webhook/mod.rs`, `src/lib.rs` (for
//! `make manifests`) and `src/main.rs`; the first webhook also switches on the webhook
//! Service, the cert-manager certificate and the manager's webhook patch in config/default.

use std::io::Write;

use anyhow::bail;
use serde::Serialize;

use crate::cli::CreateWebhookArgs;
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::{Changes, Templates};

/// What the templates know about the kind and its webhooks.
#[derive(Debug, Serialize)]
struct Hook {
    kind: String,
    group: String,
    version: String,
    /// `cache.example.com`; empty for the core group.
    api_group: String,
    /// Rust path of the type below the crate root, e.g. `api::cache::v1alpha1::Memcached`
    /// or `k8s_openapi::api::core::v1::Pod`, as `crate::`-less `lib.rs` code names it.
    type_path: String,
    /// The same path as code inside the webhook module names it.
    use_path: String,
    namespaced: bool,
    /// The module under `crate::webhook`: `v1alpha1` or `cache::v1alpha1`.
    module: String,
    kind_snake: String,
    defaulting: bool,
    validation: bool,
    mutate_path: String,
    validate_path: String,
    /// The versions converted to and from this one, with their module names.
    spokes: Vec<Spoke>,
    crd: String,
}

#[derive(Debug, Serialize)]
struct Spoke {
    version: String,
    module: String,
    /// The spoke's type, e.g. `crate::api::cache::v1beta1::Memcached`.
    path: String,
}

pub fn create_webhook(args: &CreateWebhookArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut changes = Changes::open(&args.dir)?;
    let mut project = Project::load(&args.dir)?;
    let example = format!(
        "rkb create webhook --group {} --version {} --kind {}",
        args.group, args.version, args.kind
    );
    if !(args.defaulting || args.programmatic_validation || args.conversion) {
        bail!(
            "no webhook chosen: create webhook needs at least one of --defaulting, \
             --programmatic-validation and --conversion.\n  \
             example:  {example} --defaulting --programmatic-validation"
        );
    }
    let resource = find_resource(&project, args)?.clone();
    let before = resource.webhooks.clone().unwrap_or_default();
    check_duplicates(args, &before, &example)?;
    let spokes = if args.conversion {
        check_conversion(&project, args, &resource)?
    } else {
        Vec::new()
    };

    // The webhooks of this version after the command: what it has plus what is asked for.
    let after = project::Webhooks {
        conversion: before.conversion || args.conversion,
        defaulting: before.defaulting || args.defaulting,
        spoke: if args.conversion {
            spokes.clone()
        } else {
            before.spoke.clone()
        },
        validation: before.validation || args.programmatic_validation,
        webhook_version: "v1".into(),
    };
    let hook = describe(&project, &resource, &after);
    let first_webhook = project.resources.iter().all(|r| r.webhooks.is_none());
    let entry = project
        .resources
        .iter_mut()
        .find(|r| {
            r.group == resource.group && r.version == resource.version && r.kind == resource.kind
        })
        .expect("found above");
    entry.webhooks = Some(after.clone());

    let templates = Templates::load()?;
    let mut context = tera::Context::new();
    context.insert("hook", &hook);
    context.insert("project_name", &project.project_name);
    context.insert("crate_name", &names::crate_name(&project.project_name));
    context.insert(
        "header",
        &crate::scaffold::source_header(
            &changes.read("hack/boilerplate.rs.txt")?.unwrap_or_default(),
        ),
    );
    let render = |template: &str| templates.render(template, &context);
    // Files whose layout depends on the names, formatted before commit.
    let mut to_format: Vec<String> = vec!["src/lib.rs".into(), "src/main.rs".into()];

    // Modules: src/webhook/mod.rs, [group/mod.rs,] version/mod.rs.
    changes.insert_sorted_at_marker("src/lib.rs", "modules", "pub mod webhook;")?;
    changes.ensure("src/webhook/mod.rs", || render("webhook/mod.rs.tera"))?;
    to_format.push("src/webhook/mod.rs".into());
    let mut parent = "src/webhook/mod.rs".to_owned();
    let mut dir = "src/webhook".to_owned();
    for module in hook.module.split("::") {
        changes.insert_sorted_at_marker(&parent, "modules", &format!("pub mod {module};"))?;
        dir = format!("{dir}/{module}");
        parent = format!("{dir}/mod.rs");
        let mut module_context = context.clone();
        module_context.insert("module", module);
        changes.ensure(&parent, || {
            templates.render("webhook/module.rs.tera", &module_context)
        })?;
    }
    let main_line = render("webhook/insert/main.rs.tera")?;
    changes.insert_at_marker("src/main.rs", "webhooks", &main_line)?;

    // Admission: one file per kind and version, a Defaulter and/or Validator impl each.
    let admission = after.defaulting || after.validation;
    let asks_admission = args.defaulting || args.programmatic_validation;
    if asks_admission {
        let file = format!("{dir}/{}.rs", hook.kind_snake);
        let exists = changes.exists(&file)?;
        if !exists || args.force {
            changes.create(&file, render("webhook/admission.rs.tera")?, true)?;
        } else {
            // The file holds the other admission webhook: add the new impl and its tests.
            for (wanted, name) in [
                (args.defaulting, "defaulter"),
                (args.programmatic_validation, "validator"),
            ] {
                if wanted {
                    changes.insert_at_marker(
                        &file,
                        "webhook-impls",
                        &render(&format!("webhook/{name}.rs.tera"))?,
                    )?;
                    changes.insert_at_marker(
                        &file,
                        "webhook-tests",
                        &render(&format!("webhook/{name}_tests.rs.tera"))?,
                    )?;
                }
            }
        }
        to_format.push(file);
        changes.insert_sorted_at_marker(
            &parent,
            "modules",
            &format!("pub mod {};", hook.kind_snake),
        )?;
    }
    // Registration happens once per webhook: PROJECT says which ones exist already.
    for (new, name) in [
        (args.defaulting && !before.defaulting, "defaulter"),
        (
            args.programmatic_validation && !before.validation,
            "validator",
        ),
        (args.conversion && !before.conversion, "conversion"),
    ] {
        if new {
            changes.insert_at_marker(
                "src/webhook/mod.rs",
                "webhooks",
                &render(&format!("webhook/insert/serve_{name}.rs.tera"))?,
            )?;
            changes.insert_at_marker(
                "src/lib.rs",
                "webhooks",
                &render(&format!("webhook/insert/manifest_{name}.rs.tera"))?,
            )?;
        }
    }
    if args.conversion {
        let file = format!("{dir}/{}_conversion.rs", hook.kind_snake);
        changes.create(&file, render("webhook/conversion.rs.tera")?, args.force)?;
        to_format.push(file);
        changes.insert_sorted_at_marker(
            &parent,
            "modules",
            &format!("pub mod {}_conversion;", hook.kind_snake),
        )?;
    }

    // config/: the Service, the certificate and the manager's port and volume.
    changes.ensure("config/webhook/kustomization.yaml", || {
        render("webhook/config/webhook/kustomization.yaml.tera")
    })?;
    for file in ["service", "kustomizeconfig"] {
        changes.ensure(&format!("config/webhook/{file}.yaml"), || {
            render(&format!("webhook/config/webhook/{file}.yaml.tera"))
        })?;
    }
    for file in ["certificate", "issuer", "kustomization", "kustomizeconfig"] {
        changes.ensure(&format!("config/certmanager/{file}.yaml"), || {
            render(&format!("webhook/config/certmanager/{file}.yaml.tera"))
        })?;
    }
    changes.ensure("config/default/manager_webhook_patch.yaml", || {
        render("webhook/config/default/manager_webhook_patch.yaml.tera")
    })?;
    let kustomization = "config/default/kustomization.yaml";
    changes.insert_at_marker(kustomization, "webhook", "- ../webhook\n- ../certmanager")?;
    changes.insert_at_marker(
        kustomization,
        "webhook-patches",
        &render("webhook/insert/default_patch.yaml.tera")?,
    )?;
    // cert-manager's CA injection: the certificate's DNS names from the Service, its
    // `namespace/name` into the annotation of each object the API server calls us for.
    changes.insert_at_marker(kustomization, "webhook-replacements", "replacements:")?;
    let mut injections = vec!["certificate_dns_names"];
    if admission {
        changes.insert_at_marker(
            "config/webhook/kustomization.yaml",
            "webhook-manifests",
            "- manifests.yaml",
        )?;
    }
    if after.defaulting {
        injections.push("inject_mutating");
    }
    if after.validation {
        injections.push("inject_validating");
    }
    if after.conversion {
        injections.push("inject_crd");
    }
    for injection in injections {
        changes.insert_at_marker(
            kustomization,
            "webhook-replacements",
            &render(&format!("webhook/insert/{injection}.yaml.tera"))?,
        )?;
    }

    changes.create(project::FILE_NAME, project.to_yaml(), true)?;
    let mut sources = Vec::new();
    for path in &to_format {
        sources.push(changes.read(path)?.expect("planned above"));
    }
    let (formatted, warning) = crate::scaffold::rustfmt(sources)?;
    for (path, source) in to_format.iter().zip(formatted) {
        changes.create(path, source, true)?;
    }
    super::commit(changes, out)?;
    if let Some(warning) = warning {
        writeln!(out, "warning: {warning}")?;
    }
    writeln!(
        out,
        "\nNext: implement the webhooks in src/webhook/{}/, then run `make manifests` \
         (writes config/webhook/manifests.yaml{}).",
        hook.module.replace("::", "/"),
        if args.conversion {
            " and the CRD's conversion stanza"
        } else {
            ""
        }
    )?;
    if first_webhook {
        writeln!(
            out,
            "The manager now serves HTTPS on :9443 with the certificate in \
             /tmp/k8s-webhook-server/serving-certs; `make deploy` needs cert-manager in the \
             cluster, and `make run` needs that certificate locally (or RUN_ARGS=--webhook-bind-address=0)."
        )?;
    }
    Ok(())
}

/// The PROJECT entry the webhooks are for: a custom resource of the project or a
/// built-in kind it has a controller for.
fn find_resource<'p>(
    project: &'p Project,
    args: &CreateWebhookArgs,
) -> anyhow::Result<&'p project::Resource> {
    if let Some(resource) = project
        .find(&args.group, &args.version, &args.kind)
        .filter(|r| r.api.is_some() || r.core)
    {
        return Ok(resource);
    }
    let known: Vec<String> = project
        .resources
        .iter()
        .filter(|r| r.api.is_some() || r.core)
        .map(|r| {
            format!(
                "--group {} --version {} --kind {}",
                r.group, r.version, r.kind
            )
        })
        .collect();
    bail!(
        "no API {}/{} {} in PROJECT: webhooks are for a kind this project has (run \
         `rkb create api` first).\n  accepted: {}\n  \
         example:  rkb create api --group {} --version {} --kind {}",
        args.group,
        args.version,
        args.kind,
        if known.is_empty() {
            "none yet".to_owned()
        } else {
            known.join("; ")
        },
        args.group,
        args.version,
        args.kind
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
        (args.defaulting && before.defaulting, "defaulting"),
        (
            args.programmatic_validation && before.validation,
            "validation",
        ),
        (args.conversion && before.conversion, "conversion"),
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
        args.group,
        args.version,
        args.kind,
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

/// Checks `--spoke`: other versions of the same kind, with types in this project, and no
/// conversion webhook for the kind yet. Returns the spokes, sorted and deduplicated.
fn check_conversion(
    project: &Project,
    args: &CreateWebhookArgs,
    hub: &project::Resource,
) -> anyhow::Result<Vec<String>> {
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
    if let Some(converted) = project.resources.iter().find(|r| {
        r.group == hub.group
            && r.kind == hub.kind
            && r.version != hub.version
            && r.webhooks.as_ref().is_some_and(|w| w.conversion)
    }) {
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
    let mut spokes = Vec::new();
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
        if !spokes.contains(spoke) {
            spokes.push(spoke.clone());
        }
    }
    spokes.sort();
    Ok(spokes)
}

fn describe(project: &Project, resource: &project::Resource, webhooks: &project::Webhooks) -> Hook {
    let group_module = names::module_name(&resource.group);
    let version_module = names::module_name(&resource.version);
    let api_group = if resource.core {
        crate::scaffold::builtin_kinds::find(&resource.group, &resource.version, &resource.kind)
            .map(|b| rkb_core::rbac::api_group(b.group).to_owned())
            .unwrap_or_default()
    } else {
        names::api_group(&resource.group, &resource.domain)
    };
    let type_path = resource
        .path
        .strip_prefix("crate::")
        .unwrap_or(&resource.path)
        .to_owned();
    let use_path = resource.path.clone();
    let path_group = if api_group.is_empty() {
        "core".to_owned()
    } else {
        api_group.replace('.', "-")
    };
    let lower = resource.kind.to_lowercase();
    Hook {
        module: if project.multigroup {
            format!("{group_module}::{version_module}")
        } else {
            version_module.clone()
        },
        mutate_path: format!("/mutate-{path_group}-{}-{lower}", resource.version),
        validate_path: format!("/validate-{path_group}-{}-{lower}", resource.version),
        spokes: webhooks
            .spoke
            .iter()
            .filter_map(|v| project.find(&resource.group, v, &resource.kind))
            .map(|spoke| Spoke {
                version: spoke.version.clone(),
                module: names::module_name(&spoke.version),
                path: spoke.path.clone(),
            })
            .collect(),
        namespaced: match &resource.api {
            Some(api) => api.namespaced,
            None => crate::scaffold::builtin_kinds::find(
                &resource.group,
                &resource.version,
                &resource.kind,
            )
            .is_some_and(|b| b.namespaced),
        },
        crd: format!("{}.{api_group}", resource.plural),
        kind: resource.kind.clone(),
        group: resource.group.clone(),
        version: resource.version.clone(),
        api_group,
        type_path,
        use_path,
        kind_snake: names::snake(&resource.kind),
        defaulting: webhooks.defaulting,
        validation: webhooks.validation,
    }
}
