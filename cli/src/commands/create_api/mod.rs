//! `rkb create api`: a custom resource type and/or a reconciler, registered at the
//! `+rkb:scaffold:` markers of the project so repeated runs edit files predictably.
//!
//! Three steps, as in every command: [`resolve`] derives everything the command would do
//! (one value, nothing judged), [`checks::all`] refuses what cannot be done (every rule
//! in one written order), and [`context`] makes what the templates of [`PLAN`] see.
//! [`recorded`] rebuilds a scaffold from PROJECT for `delete api`; [`external`] is
//! `--external-crd`.

mod checks;
mod context;
mod external;
mod recorded;
mod resolve;
pub(super) use resolve::manager_has_env_list;

use std::io::Write;

use super::create_webhook;
use crate::cli::CreateApiArgs;
use crate::model;
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::plan::{
    Entry, IfExists, Marker,
    Text::{Inline, Template},
};
use crate::scaffold::{Changes, Templates};

pub(super) use context::Context;
#[cfg(test)]
pub(super) use context::External;
pub(super) use recorded::{recorded_all, recorded_named};

/// The module of external kinds' types.
const EXTERNAL_MOD: &str = model::EXTERNAL_API_MOD;

/// What `create api` was asked for and what the project holds: the switches of [`PLAN`].
#[derive(Debug)]
pub(in crate::commands) struct Switches {
    resource: bool,
    controller: bool,
    image: bool,
    /// `--force` without `--image` on an API scaffolded with it: the plain variant replaces
    /// it, so what only the image variant has goes.
    drop_image: bool,
    /// The multigroup layout: controllers live in a module per group.
    grouped: bool,
    /// The kind has a conversion webhook, and this new version becomes one of its spokes.
    spoke: bool,
    /// `--external-crd`: types written from another project's CRD, which is kept for the
    /// tests instead of going to config/crd.
    external: bool,
}

const ADMIN: &[(&str, &str)] = &[("role", "admin")];
const EDITOR: &[(&str, &str)] = &[("role", "editor")];
const VIEWER: &[(&str, &str)] = &[("role", "viewer")];

/// What `create api` generates. Types, controllers and samples belong to the API (refused
/// if they exist, regenerated with `--force`); module files are shared between APIs.
pub(super) const PLAN: &[Entry<Switches>] = &[
    // The types, in the API crate: api/src/<group>/<version>/<kind>.rs, reached through one
    // module per level (an external kind's: api/src/external/<group>/<version>/<kind>.rs).
    Entry::insert_sorted(
        model::API_LIB,
        Marker::Groups,
        Template("api/insert/api_mod.rs.tera"),
    )
    .when(|s| s.resource),
    Entry::insert_sorted(model::API_LIB, Marker::Groups, Inline("pub mod external;"))
        .when(|s| s.external),
    Entry::shared(EXTERNAL_MOD, "api/external/mod.rs.tera").when(|s| s.external),
    Entry::insert_sorted(
        EXTERNAL_MOD,
        Marker::Groups,
        Template("api/insert/api_mod.rs.tera"),
    )
    .when(|s| s.external),
    Entry::shared("{{ layout.api_group_file }}", "api/group_mod.rs.tera")
        .when(|s| s.resource || s.external),
    Entry::insert_sorted(
        "{{ layout.api_group_file }}",
        Marker::Versions,
        Template("api/insert/group_mod.rs.tera"),
    )
    .when(|s| s.resource || s.external),
    Entry::shared(VERSION_MOD, "api/version_mod.rs.tera").when(|s| s.resource || s.external),
    Entry::insert_sorted(
        VERSION_MOD,
        Marker::Kinds,
        Template("api/insert/version_mod.rs.tera"),
    )
    .when(|s| s.resource || s.external),
    Entry::insert_sorted(
        VERSION_MOD,
        Marker::Exports,
        Template("api/insert/version_exports.rs.tera"),
    )
    .when(|s| s.resource || s.external),
    Entry::file(TYPES, "api/external/types.rs.tera")
        .rustfmt()
        .when(|s| s.external),
    // The external CRD, which the controller's tests install: not config/crd's, since
    // the project does not own it. Every version of the kind keeps the same file (a
    // different one replaces it only with --force, see `external::check_kept_crd`).
    Entry::file("{{ api.crd_file }}", "api/external/crd.yaml.tera")
        .if_exists(IfExists::KeepUnlessForced)
        .when(|s| s.external),
    Entry::file(TYPES, "api/types.rs.tera")
        .rustfmt()
        .when(|s| s.resource && !s.image),
    Entry::file(TYPES, "api/deploy-image/types.rs.tera")
        .rustfmt()
        .when(|s| s.resource && s.image),
    // Formatted, as `create webhook` formats it: a long kind's line wraps the way `cargo
    // fmt` wraps it, and a later `delete webhook` does not rewrap it.
    Entry::insert(
        model::API_LIB,
        Marker::Crds,
        Template("api/insert/lib_crds.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.resource),
    // config/: the sample, the CRD base and the kind's roles.
    Entry::file(SAMPLE, "api/config/sample.yaml.tera").when(|s| s.resource && !s.image),
    Entry::file(SAMPLE, "api/deploy-image/sample.yaml.tera").when(|s| s.resource && s.image),
    Entry::insert(
        model::SAMPLES_KUSTOMIZATION,
        Marker::Samples,
        Template("api/insert/samples_kustomization.yaml.tera"),
    )
    .when(|s| s.resource),
    Entry::insert(
        model::CRD_KUSTOMIZATION,
        Marker::Crds,
        Template("api/insert/crd_kustomization.yaml.tera"),
    )
    .when(|s| s.resource),
    Entry::insert(
        model::DEFAULT_KUSTOMIZATION,
        Marker::Crd,
        Inline("- ../crd"),
    )
    .when(|s| s.resource),
    // Roles belong to the kind, not a version: a second version keeps the existing ones.
    Entry::file(ROLE, KIND_ROLE)
        .if_exists(IfExists::KeepUnlessForced)
        .vars(ADMIN)
        .when(|s| s.resource),
    Entry::file(ROLE, KIND_ROLE)
        .if_exists(IfExists::KeepUnlessForced)
        .vars(EDITOR)
        .when(|s| s.resource),
    Entry::file(ROLE, KIND_ROLE)
        .if_exists(IfExists::KeepUnlessForced)
        .vars(VIEWER)
        .when(|s| s.resource),
    Entry::insert(
        model::RBAC_KUSTOMIZATION,
        Marker::Roles,
        Template(ROLE_ENTRY),
    )
    .vars(ADMIN)
    .when(|s| s.resource),
    Entry::insert(
        model::RBAC_KUSTOMIZATION,
        Marker::Roles,
        Template(ROLE_ENTRY),
    )
    .vars(EDITOR)
    .when(|s| s.resource),
    Entry::insert(
        model::RBAC_KUSTOMIZATION,
        Marker::Roles,
        Template(ROLE_ENTRY),
    )
    .vars(VIEWER)
    .when(|s| s.resource),
    // The controller, registered with the manager and with `make manifests` (its RBAC).
    Entry::file("{{ layout.controller_file }}", "api/controller.rs.tera")
        .rustfmt()
        .when(|s| s.controller && !s.image),
    Entry::file(
        "{{ layout.controller_file }}",
        "api/deploy-image/controller.rs.tera",
    )
    .rustfmt()
    .when(|s| s.controller && s.image),
    // A complete controller's tests are longer than a skeleton's: a file of their own.
    Entry::file(
        "{{ layout.controller_tests_file }}",
        "api/deploy-image/controller_test.rs.tera",
    )
    .rustfmt()
    .when(|s| s.controller && s.image),
    // `--force` with another image changes the variable's value rather than adding another.
    Entry::upsert(
        model::MANAGER,
        Marker::Env,
        Template("api/deploy-image/insert/manager_env.yaml.tera"),
    )
    .when(|s| s.controller && s.image),
    Entry::remove("{{ layout.controller_tests_file }}").when(|s| s.drop_image),
    Entry::withdraw(
        model::MANAGER,
        Marker::Env,
        Inline("- name: {{ image_env }}"),
    )
    .when(|s| s.drop_image),
    Entry::insert_sorted(
        model::CONTROLLERS,
        Marker::Modules,
        Template(CONTROLLER_MOD),
    )
    .when(|s| s.controller && !s.grouped),
    Entry::insert_sorted(
        model::CONTROLLERS,
        Marker::Modules,
        Template("api/insert/api_mod.rs.tera"),
    )
    .when(|s| s.controller && s.grouped),
    Entry::shared(
        "{{ layout.group_mod_file }}",
        "api/controller_group_mod.rs.tera",
    )
    .when(|s| s.controller && s.grouped),
    Entry::insert_sorted(
        "{{ layout.group_mod_file }}",
        Marker::Modules,
        Template(CONTROLLER_MOD),
    )
    .when(|s| s.controller && s.grouped),
    Entry::insert(
        model::CONTROLLERS,
        Marker::Controllers,
        Template("api/insert/controller_run.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.controller),
    // A new version of a kind with a conversion webhook becomes a spoke of its hub, in the
    // hub's conversion file, as `create webhook --conversion` would have written it.
    Entry::insert(
        create_webhook::CONVERSION,
        Marker::Spokes,
        Template("webhook/insert/conversion_spoke.rs.tera"),
    )
    .when(|s| s.spoke),
    Entry::insert(
        create_webhook::CONVERSION,
        Marker::SpokeImpls,
        Template("webhook/insert/conversion_impl.rs.tera"),
    )
    .when(|s| s.spoke),
    Entry::insert(
        create_webhook::CONVERSION,
        Marker::SpokeTests,
        Template("webhook/insert/conversion_test.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.spoke),
    Entry::project(),
];

const VERSION_MOD: &str = "{{ layout.api_version_file }}";
const TYPES: &str = "{{ layout.types_file }}";
const SAMPLE: &str = "{{ layout.sample_file }}";
const ROLE: &str = "config/rbac/{{ layout.role_prefix }}_{{ role }}_role.yaml";
const KIND_ROLE: &str = "api/config/kind_role.yaml.tera";
const ROLE_ENTRY: &str = "api/insert/rbac_kustomization.yaml.tera";
pub(super) const CONTROLLER_MOD: &str = "api/insert/controller_mod.rs.tera";

pub fn create_api(args: &CreateApiArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    // Locks the project first: PROJECT is read now and rewritten at the end.
    let changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let (context, switches) = match &args.external_crd {
        Some(file) => external::external_model(args, file, &project, &changes, out)?,
        None => model(args, &project, &changes, out)?,
    };
    let templates = Templates::load()?;
    super::scaffold(
        PLAN, &switches, &templates, &context, args.force, changes, out,
    )?;
    next_steps(out, &context, &switches)
}

/// The model of the API asked for: derived, checked against the project, then the
/// templates' context and the switches of [`PLAN`].
fn model(
    args: &CreateApiArgs,
    project: &Project,
    changes: &Changes,
    out: &mut dyn Write,
) -> anyhow::Result<(Context, Switches)> {
    let resolved = resolve::resolve(args, project, changes)?;
    checks::all(&resolved, changes)?;
    let version = &resolved.api.version;
    if !names::is_kube_version(version) {
        writeln!(
            out,
            "warning: version {version:?} is not of the form v1, v1alpha1 or v2beta3, so Kubernetes will sort it \
             after every such version when choosing the preferred version",
        )?;
    }
    context::context(resolved, changes)
}

/// The `--image` flags that scaffold `recorded` again, quoted for a POSIX shell.
fn image_flags(recorded: &project::DeployImageResource) -> String {
    let quote = |value: &str| {
        let plain = |c: char| c.is_ascii_alphanumeric() || ",._/:=@+-".contains(c);
        if !value.is_empty() && value.chars().all(plain) {
            value.to_owned()
        } else {
            format!("'{}'", value.replace('\'', r"'\''"))
        }
    };
    let mut flags = format!("--image {}", quote(&recorded.image));
    for (flag, value) in [
        ("--image-container-command", &recorded.container_command),
        ("--image-container-port", &recorded.container_port),
        ("--run-as-user", &recorded.run_as_user),
    ] {
        if let Some(value) = value {
            flags.push_str(&format!(" {flag} {}", quote(value)));
        }
    }
    flags
}

/// Tells the user what to do next, like kubebuilder's closing lines.
fn next_steps(out: &mut dyn Write, context: &Context, switches: &Switches) -> anyhow::Result<()> {
    let Context { api, layout, .. } = context;
    if let (Some(hook), Some(spoke)) = (&context.hook, &context.spoke) {
        writeln!(
            out,
            "\n{} is now a spoke of the {} conversion webhook (hub {}): map its fields in {}.",
            spoke.version, hook.kind, hook.version, hook.conversion_file
        )?;
    }
    if let Some(command) = &context.unwired_spoke {
        writeln!(
            out,
            "\nwarning: {kind} has a conversion webhook, but its conversion file has no \
             `+rkb:scaffold:spokes` markers (an older rkb's scaffold, or removed), so {} is not one \
             of its spokes and the API server cannot convert {0} objects.\n  \
             To regenerate the file with every spoke (edits in it are lost):  {command}",
            api.version,
            kind = api.kind
        )?;
    }
    if let Some(dropped) = &context.dropped_image {
        writeln!(
            out,
            "\nnote: {kind} no longer deploys {}: --force without --image scaffolded it as a plain \
             API, so its image's tests, {} in {} and its PROJECT plugin entry are gone.\n  \
             To scaffold the image controller again:  rkb create api --group {} --version {} --kind {kind} {} --force",
            dropped.image,
            context.image_env,
            model::MANAGER,
            api.group,
            api.version,
            image_flags(dropped),
            kind = api.kind
        )?;
    }
    if let Some(image) = &context.image {
        writeln!(
            out,
            "\nThe {kind} controller runs {} in a Deployment per {kind}; the manager reads the image from {} \
             ({}).\nNext: `make manifests && make test`, then `make install run` with \
             {1}={0} exported, or `make deploy`.",
            image.image,
            context.image_env,
            model::MANAGER,
            kind = api.kind
        )?;
        return Ok(());
    }
    if switches.resource {
        writeln!(
            out,
            "\nNext: define the fields of {kind}Spec and {kind}Status in {}, then run `make manifests`.",
            layout.types_file,
            kind = api.kind
        )?;
    }
    if switches.controller {
        writeln!(
            out,
            "{}Implement the reconcile loop in {}; `make test` runs its tests.",
            if switches.resource { "" } else { "\nNext: " },
            layout.controller_file
        )?;
    }
    Ok(())
}
