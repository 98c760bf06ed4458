//! `rkb create api`: a custom resource type and/or a reconciler, registered at the
//! `+rkb:scaffold:` markers of the project so repeated runs edit files predictably.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::bail;
use rkb_core::rbac;
use serde::Serialize;

use super::create_webhook;
use crate::cli::CreateApiArgs;
use crate::deploy_image::{DeployImage, ImageOptions};
use crate::model::{self, Layout, ProjectNames};
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::plan::{
    self as scaffold_plan, Entry, IfExists, Marker,
    Text::{Inline, Template},
};
use crate::scaffold::{Changes, Templates, builtin_kinds};

/// What the templates of `create api` see: the project, the API and where its files go.
#[derive(Debug, Serialize)]
pub(super) struct Context {
    #[serde(flatten)]
    pub names: ProjectNames,
    pub api: model::Resource,
    pub layout: Layout,
    pub image: Option<DeployImage>,
    /// The container's command as Rust string literals.
    pub command_literals: Vec<String>,
    /// The manager's environment variable that names the image: `MEMCACHED_IMAGE`.
    pub image_env: String,
    /// The manager's container has an `env:` list: the first image starts it, later ones join it.
    pub env_list_exists: bool,
    /// The kind's conversion webhook, when the new version joins it as a spoke: its hub as
    /// the webhook templates see it (`hook`), and the new version (`spoke`).
    pub hook: Option<create_webhook::Hook>,
    pub spoke: Option<create_webhook::Spoke>,
    /// The kind's conversion webhook, when its file cannot take the new spoke (no markers):
    /// the command that regenerates it with every spoke.
    #[serde(skip)]
    pub unwired_spoke: Option<String>,
    /// What `--image` recorded for the API, when `--force` without it replaces that.
    #[serde(skip)]
    pub dropped_image: Option<project::DeployImageResource>,
    /// An external kind's types and CRD (`--external-crd`).
    pub external: Option<External>,
    /// PROJECT with the new resource.
    #[serde(skip)]
    pub project: Project,
}

/// What `--external-crd` writes besides the controller: the types and the kept CRD.
#[derive(Debug, Serialize)]
pub(super) struct External {
    /// The Rust types, without the header.
    pub types: String,
    /// The CRD document, as the file had it.
    pub crd_yaml: String,
    /// The module file of `crate::api::external`.
    pub module_file: &'static str,
}

/// The module of external kinds' types.
const EXTERNAL_MOD: &str = "src/api/external/mod.rs";

impl scaffold_plan::Model for Context {
    fn project(&self) -> &Project {
        &self.project
    }
}

/// What `create api` was asked for and what the project holds: the switches of [`PLAN`].
#[derive(Debug)]
pub(super) struct Switches {
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
    // The types: src/api/<group>/<version>/<kind>.rs, reached through one module per level
    // (an external kind's: src/api/external/<group>/<version>/<kind>.rs).
    Entry::insert_sorted(
        model::API_GROUPS,
        Marker::Groups,
        Template("api/insert/api_mod.rs.tera"),
    )
    .when(|s| s.resource),
    Entry::insert_sorted(
        model::API_GROUPS,
        Marker::Groups,
        Inline("pub mod external;"),
    )
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
    // the project does not own it.
    Entry::file("{{ api.crd_file }}", "api/external/crd.yaml.tera").when(|s| s.external),
    Entry::file(TYPES, "api/types.rs.tera")
        .rustfmt()
        .when(|s| s.resource && !s.image),
    Entry::file(TYPES, "api/deploy-image/types.rs.tera")
        .rustfmt()
        .when(|s| s.resource && s.image),
    // Formatted, as `create webhook` formats it: a long kind's line wraps the way `cargo
    // fmt` wraps it, and a later `delete webhook` does not rewrap it.
    Entry::insert(
        model::LIB,
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
    Entry::insert(
        model::LIB,
        Marker::Rbac,
        Template("api/insert/lib_rbac.rs.tera"),
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
        Some(file) => external_model(args, file, &project, &changes, out)?,
        None => model(args, &project, &changes, out)?,
    };
    let templates = Templates::load()?;
    super::scaffold(
        PLAN, &switches, &templates, &context, args.force, changes, out,
    )?;
    next_steps(out, &context, &switches)
}

/// The model of the API asked for, checked against the project: the templates' context
/// and the switches of [`PLAN`].
fn model(
    args: &CreateApiArgs,
    project: &Project,
    changes: &Changes,
    out: &mut dyn Write,
) -> anyhow::Result<(Context, Switches)> {
    let (resource, controller) = (args.wants_resource(), args.wants_controller());
    if !resource && !controller {
        // The hint must work: --no-resource only for a type that exists.
        let exists = project
            .find(&args.gvk.group, &args.gvk.version, &args.gvk.kind)
            .is_some_and(|r| r.api.is_some())
            || builtin_kinds::find(&args.gvk.group, &args.gvk.version, &args.gvk.kind).is_some();
        let (keep, what) = if exists {
            ("--no-resource", "a controller for the existing type")
        } else {
            ("--no-controller", "only the types")
        };
        bail!(
            "nothing to scaffold: --no-resource and --no-controller together leave no files to write.\n  \
             Drop one of them; for {what}:  rkb create api --group {} --version {} --kind {} {keep}",
            args.gvk.group,
            args.gvk.version,
            args.gvk.kind
        );
    }
    let image = image_options(args)?;
    if let Some(name) = &args.controller_name {
        names::check_controller_name(name)?;
    }
    let api = resolve(args, project)?;
    let named = controller_name(args, &api);
    names::check_kind_not_taken(&api.kind, &taken_names(image.is_some()))?;
    if !names::is_kube_version(&api.version) {
        writeln!(
            out,
            "warning: version {:?} is not of the form v1, v1alpha1 or v2beta3, so Kubernetes will sort it \
             after every such version when choosing the preferred version",
            api.version
        )?;
    }
    check_conflicts(args, project, &api)?;
    if project.namespaced && controller && !api.namespaced {
        let hint = if args.wants_resource() {
            format!(
                "Scaffold the type without a controller:  rkb create api --group {} --version {} --kind {} --no-controller{}",
                args.gvk.group,
                args.gvk.version,
                args.gvk.kind,
                if args.cluster_scoped {
                    " --cluster-scoped"
                } else {
                    ""
                }
            )
        } else {
            "Only namespaced kinds can have a controller here, e.g.:  rkb create api --group core --version v1 --kind Pod --no-resource".to_owned()
        };
        bail!(
            "{} is cluster-scoped, and this project's manager is namespace-scoped (PROJECT: \
             `namespaced: true`, from `rkb init --namespaced`): its Roles cannot grant a watch of \
             cluster-scoped objects.\n  {hint}",
            api.kind
        );
    }
    let dropped = dropped_image(args, project, &api, image.is_some())?;
    let before = project;
    let mut project = updated_project(args, project, &api, image.is_some())?;
    let conversion = if args.wants_resource() {
        join_conversion(&mut project, &api, changes)?
    } else {
        Joined::None
    };
    if project.multigroup && controller {
        match named {
            Some(name) => names::check_controller_name_not_group(name, &api.group)?,
            None => names::check_kind_not_group(&api.kind, &api.group)?,
        }
    }
    let mut layout = Layout::in_project(&project, &api, changes)?;
    if let Some(name) = named {
        layout = layout.named(&api, name);
    }
    if controller {
        check_controller_clash(args, before, &api, &layout, changes)?;
    }
    check_file_names(&api, &layout)?;
    let manager = changes.read(model::MANAGER)?.unwrap_or_default();
    let switches = Switches {
        resource,
        controller,
        image: image.is_some(),
        drop_image: dropped.is_some(),
        grouped: layout.group_mod_file.is_some(),
        spoke: matches!(conversion, Joined::Spoke(..)),
        external: false,
    };
    let (hook, spoke, unwired_spoke) = match conversion {
        Joined::Spoke(hook, spoke) => (Some(*hook), Some(spoke), None),
        Joined::Unwired(command) => (None, None, Some(command)),
        Joined::None => (None, None, None),
    };
    let context = Context {
        names: ProjectNames::read(&project, changes)?,
        command_literals: image
            .iter()
            .flat_map(|i| &i.command)
            .map(|word| format!("{word:?}"))
            .collect(),
        image_env: layout.image_env(),
        env_list_exists: manager.lines().any(|l| l.trim() == "env:"),
        api,
        layout,
        image,
        hook,
        spoke,
        unwired_spoke,
        dropped_image: dropped,
        external: None,
        project,
    };
    Ok((context, switches))
}

/// The model of `create api --external-crd`: the kind's types from its CRD, a controller
/// for it, and PROJECT's `external: true` entry.
fn external_model(
    args: &CreateApiArgs,
    file: &std::path::Path,
    project: &Project,
    changes: &Changes,
    out: &mut dyn Write,
) -> anyhow::Result<(Context, Switches)> {
    let version = (!args.gvk.version.is_empty()).then_some(args.gvk.version.as_str());
    let kind = (!args.gvk.kind.is_empty()).then_some(args.gvk.kind.as_str());
    let crd = crate::external::read(file, version, kind)?;
    check_external_group(&crd, project)?;
    names::check_kind(&crd.kind)?;
    names::check_module_name("--version", &crd.version, "--version v1")?;
    let api = model::Resource::external(&crd);
    names::check_kind_not_taken(&api.kind, &taken_names(false))?;
    check_not_scaffolded(args, project, &api)?;
    check_same_kind_elsewhere(args, project, &api)?;
    if let Some(other) = project.resources.iter().find(|r| {
        r.external
            && model::Resource::recorded(r).group_module == api.group_module
            && r.api_group() != api.api_group
    }) {
        bail!(
            "the external groups {} and {} would share the Rust module \
             crate::api::external::{}; rkb names an external group's module after its first \
             label, so one of them cannot be added to this project",
            other.api_group(),
            api.api_group,
            api.group_module
        );
    }
    let domain = crd.group.split_once('.').map_or("", |(_, d)| d).to_owned();
    let mut project = project.clone();
    let entry = api.entry(&domain, false, true);
    project.upsert(entry.clone());
    project.check_resource_names_keeping(&entry, "")?;
    if project.multigroup {
        names::check_kind_not_group(&api.kind, &api.group)?;
    }
    let (context, switches) = external_context(project, api, &crd, changes)?;
    let limitations = crate::external::types(&crd).limitations;
    if limitations.is_empty() {
        writeln!(
            out,
            "The types of {} {}/{} express its whole schema.",
            crd.kind, crd.group, crd.version
        )?;
    } else {
        writeln!(
            out,
            "warning: the types of {} {}/{} leave out what #[rkb(...)] cannot express ({} place{}; \
             the types' test lists them too):",
            crd.kind,
            crd.group,
            crd.version,
            limitations.len(),
            if limitations.len() == 1 { "" } else { "s" }
        )?;
        for limitation in &limitations {
            writeln!(out, "  {}: {}", limitation.path, limitation.what)?;
        }
    }
    Ok((context, switches))
}

/// The context and switches of an external kind's scaffold, for `create api` and for
/// what `delete api` rebuilds from PROJECT and the kept CRD.
fn external_context(
    project: Project,
    api: model::Resource,
    crd: &crate::external::ExternalCrd,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let generated = crate::external::types(crd);
    let mut api = api;
    api.sample_fields = generated.sample_fields.clone();
    let mut layout = Layout::in_project(&project, &api, changes)?;
    for path in [
        &mut layout.api_group_file,
        &mut layout.api_version_file,
        &mut layout.types_file,
    ] {
        *path = path.replacen("src/api/", "src/api/external/", 1);
    }
    let switches = Switches {
        resource: false,
        controller: true,
        image: false,
        drop_image: false,
        grouped: layout.group_mod_file.is_some(),
        spoke: false,
        external: true,
    };
    let context = Context {
        names: ProjectNames::read(&project, changes)?,
        command_literals: Vec::new(),
        image_env: layout.image_env(),
        env_list_exists: false,
        api,
        layout,
        image: None,
        hook: None,
        spoke: None,
        unwired_spoke: None,
        dropped_image: None,
        external: Some(External {
            types: generated.source,
            crd_yaml: crd.yaml.clone(),
            module_file: EXTERNAL_MOD,
        }),
        project,
    };
    Ok((context, switches))
}

/// An external CRD's group is not one this project serves (`<group>.<domain>`): those
/// kinds are the project's own, made with `create api --group`.
fn check_external_group(
    crd: &crate::external::ExternalCrd,
    project: &Project,
) -> anyhow::Result<()> {
    let own = !project.domain.is_empty()
        && (crd.group == project.domain || crd.group.ends_with(&format!(".{}", project.domain)));
    if own {
        let group = crd
            .group
            .strip_suffix(&format!(".{}", project.domain))
            .unwrap_or(&crd.group);
        bail!(
            "the CRD {}.{} is in this project's domain {} (group {}), so it is not external: \
             the project's own kinds are written in Rust and their CRDs derived from them.\n  \
             To add the kind to this project:  rkb create api --group {group} --version {} --kind {}\n  \
             --external-crd is for kinds another project defines, e.g. cert-manager.io's Certificate",
            crd.plural,
            crd.group,
            project.domain,
            crd.group,
            crd.version,
            crd.kind
        );
    }
    Ok(())
}

/// The context `create api --external-crd` had for PROJECT's external `entry`, rebuilt
/// from the CRD the project kept.
fn recorded_external(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let api = model::Resource::recorded(entry);
    let file = api.crd_file.clone().unwrap_or_default();
    let Some(text) = changes.read(&file)? else {
        bail!(
            "PROJECT records the external API {} {}/{}, and its CRD {file} is gone; restore it \
             (or run `rkb create api --external-crd <its CRD> --force`) first",
            entry.kind,
            entry.api_group(),
            entry.version
        );
    };
    let scratch = tempfile::NamedTempFile::new()?;
    std::fs::write(scratch.path(), text)?;
    let crd = crate::external::read(scratch.path(), Some(&entry.version), Some(&entry.kind))?;
    external_context(project.clone(), api, &crd, changes)
}

/// The model `create api` had when it scaffolded PROJECT's `entry`, which `project` holds:
/// what `rkb delete api` undoes, and what other APIs keep. The scaffold is deterministic,
/// so this is what it wrote, as this rkb writes it.
pub(super) fn recorded(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    if entry.external {
        return recorded_external(project, entry, changes);
    }
    let api = match &entry.api {
        Some(recorded) if !entry.core => model::Resource::custom(
            project,
            (&entry.group, &entry.version, &entry.kind),
            Some(&entry.plural),
            recorded.namespaced,
        ),
        _ => model::Resource::recorded(entry),
    };
    let images = project
        .plugins
        .deploy_image
        .iter()
        .flat_map(|p| &p.resources);
    let same = |i: &&project::DeployImageResource| {
        i.group == entry.group && i.version == entry.version && i.kind == entry.kind
    };
    let image = match images.clone().find(same) {
        Some(i) => Some(
            ImageOptions {
                image: i.image.clone(),
                container_command: i.container_command.clone(),
                container_port: i.container_port.clone(),
                run_as_user: i.run_as_user.clone(),
            }
            .check()?,
        ),
        None => None,
    };
    let mut layout = Layout::in_project(project, &api, changes)?;
    if project.multigroup {
        // An API scaffolded before `rkb edit --multigroup` keeps its single-group names:
        // edit moved its controller's module, not the controller's name or the roles.
        let single = Layout::single_group(&api);
        let controllers = changes.read(model::CONTROLLERS)?.unwrap_or_default();
        let moved = entry.controller
            && controllers.contains(&format!(
                "Runnable::new(\"{}\", {}::run)",
                single.controller_name, layout.controller_module
            ));
        let single_roles = entry.api.is_some()
            && changes.exists(&single.role_file("admin"))?
            && !changes.exists(&layout.role_file("admin"))?;
        if moved || single_roles {
            layout.controller_name = single.controller_name;
            layout.role_prefix = single.role_prefix;
            layout.controller_tests_file = single.controller_tests_file;
        }
    }
    // As a fresh scaffold of the entry: not replacing an image variant, and not a new
    // spoke (`delete api` refuses a spoke, and a hub's spokes live in the hub's file).
    let switches = Switches {
        resource: entry.api.is_some(),
        controller: entry.controller,
        image: image.is_some(),
        drop_image: false,
        grouped: layout.group_mod_file.is_some(),
        spoke: false,
        external: false,
    };
    let context = Context {
        names: ProjectNames::read(project, changes)?,
        command_literals: image
            .iter()
            .flat_map(|i| &i.command)
            .map(|word| format!("{word:?}"))
            .collect(),
        image_env: layout.image_env(),
        // The first image's controller starts the manager's `env:` list, later ones join
        // it, and it stays while any of them does.
        env_list_exists: images.filter(|i| !same(i)).count() > 0,
        api,
        layout,
        image,
        hook: None,
        spoke: None,
        unwired_spoke: None,
        dropped_image: None,
        external: None,
        project: project.clone(),
    };
    Ok((context, switches))
}

/// What `create api --no-resource --controller-name <name>` scaffolded for PROJECT's
/// `entry`: one named controller of the kind.
pub(super) fn recorded_named(
    project: &Project,
    entry: &project::Resource,
    name: &str,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let (mut context, mut switches) = recorded(project, entry, changes)?;
    context.layout = Layout::in_project(project, &context.api, changes)?.named(&context.api, name);
    switches.resource = false;
    switches.controller = true;
    Ok((context, switches))
}

/// Everything `create api` scaffolded for PROJECT's `entry`: the API with its default
/// controller, then each named controller.
pub(super) fn recorded_all(
    project: &Project,
    entry: &project::Resource,
    changes: &Changes,
) -> anyhow::Result<Vec<(Context, Switches)>> {
    let mut all = vec![recorded(project, entry, changes)?];
    for named in &entry.controllers {
        all.push(recorded_named(project, entry, &named.name, changes)?);
    }
    Ok(all)
}

/// The type names a kind cannot take: what the Rust templates that bring the kind into
/// scope import and define, in the variant asked for (`--image` or not). A controller and
/// webhooks may come later, so their templates count too.
fn taken_names(image: bool) -> BTreeMap<String, String> {
    let variant = Switches {
        resource: true,
        controller: true,
        image,
        drop_image: false,
        grouped: false,
        spoke: false,
        external: false,
    };
    let api = PLAN.iter().filter(|e| (e.when)(&variant));
    let templates = api.filter_map(Entry::template).chain(
        super::create_webhook::PLAN
            .iter()
            .filter_map(Entry::template),
    );
    let names_the_kind = |source: &str| {
        ["api.kind", "api.type_path", "hook.kind", "hook.use_path"]
            .iter()
            .any(|name| source.contains(name))
    };
    names::names_taken_by(
        templates
            .filter(|t| t.ends_with(".rs.tera"))
            .filter_map(|t| Some((t, Templates::source(t)?)))
            .filter(|(_, source)| names_the_kind(source)),
    )
}

/// PROJECT as it will be after this command, checked as a whole before anything is planned.
fn updated_project(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
    image: bool,
) -> anyhow::Result<Project> {
    let named = controller_name(args, api);
    let mut entry = api.entry(
        &project.domain,
        args.wants_resource(),
        args.wants_controller() && named.is_none(),
    );
    if let Some(name) = named {
        entry
            .controllers
            .push(project::NamedController { name: name.into() });
    }
    let mut planned = project.clone();
    planned.upsert(entry.clone());
    // The examples of a refusal keep the flags that are not about names.
    let kept: String = [
        (args.no_controller, " --no-controller"),
        (args.cluster_scoped, " --cluster-scoped"),
        (args.force, " --force"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    planned.check_resource_names_keeping(&entry, &kept)?;
    if !image {
        // A forced re-run without --image makes the API a plain one again.
        if let Some(plugin) = &mut planned.plugins.deploy_image {
            plugin.resources.retain(|r| !api.is_image(r));
            if plugin.resources.is_empty() {
                planned.plugins.deploy_image = None;
            }
        }
    } else {
        let resource = project::DeployImageResource {
            container_command: args.image_container_command.clone(),
            container_port: args.image_container_port.clone(),
            domain: project.domain.clone(),
            group: api.group.clone(),
            image: args.image.clone().unwrap_or_default(),
            kind: api.kind.clone(),
            run_as_user: args.run_as_user.clone(),
            version: api.version.clone(),
        };
        planned
            .plugins
            .deploy_image
            .get_or_insert_default()
            .upsert(resource);
    }
    Ok(planned)
}

/// What a new version of a kind does with the kind's conversion webhook.
enum Joined {
    /// No conversion webhook, or the version is its hub or a spoke already.
    None,
    /// It becomes a spoke: the hub's webhook as its templates see it, and the version.
    Spoke(Box<create_webhook::Hook>, create_webhook::Spoke),
    /// The hub's conversion file has no markers to add it at: the command that
    /// regenerates the file with every spoke.
    Unwired(String),
}

/// A new version of a kind whose conversion webhook exists joins it as a spoke, like
/// kubebuilder's: PROJECT lists it with the hub's spokes, and its conversion goes into the
/// hub's file (see the `Marker::Spokes` entries). A file without the markers (an older
/// scaffold's) is left alone; the command says how to regenerate it.
fn join_conversion(
    project: &mut Project,
    api: &model::Resource,
    changes: &Changes,
) -> anyhow::Result<Joined> {
    let Some(hub) = project.resources.iter_mut().find(|r| {
        r.group == api.group
            && r.kind == api.kind
            && r.version != api.version
            && r.webhooks.as_ref().is_some_and(|w| w.conversion)
    }) else {
        return Ok(Joined::None);
    };
    let webhooks = hub.webhooks.as_mut().expect("found by its webhooks");
    if webhooks.spoke.contains(&api.version) {
        return Ok(Joined::None);
    }
    let mut spokes = webhooks.spoke.clone();
    spokes.push(api.version.clone());
    spokes.sort();
    let hub_api = model::Resource::recorded(hub);
    let hub_layout = Layout::in_project(project, &hub_api, changes)?;
    let file = changes
        .read(&hub_layout.conversion_file)?
        .unwrap_or_default();
    let markers = [Marker::Spokes, Marker::SpokeImpls, Marker::SpokeTests];
    let has = |marker: Marker| {
        let tag = format!("// +rkb:scaffold:{}", marker.name());
        file.lines().any(|line| line.trim() == tag)
    };
    if !markers.into_iter().all(has) {
        return Ok(Joined::Unwired(format!(
            "rkb create webhook --group {} --version {} --kind {} --conversion --spoke {} --force",
            hub_api.group,
            hub_api.version,
            hub_api.kind,
            spokes.join(",")
        )));
    }
    let hub = project
        .resources
        .iter_mut()
        .find(|r| hub_api.is(r))
        .expect("found above");
    let webhooks = hub.webhooks.as_mut().expect("found by its webhooks");
    webhooks.spoke = spokes;
    let webhooks = webhooks.clone();
    let hook = create_webhook::Hook::new(project, &hub_api, &hub_layout, &webhooks);
    let spoke = create_webhook::Spoke {
        version: api.version.clone(),
        module: api.version_module.clone(),
        path: api.type_path.clone(),
    };
    Ok(Joined::Spoke(Box::new(hook), spoke))
}

/// What `--image` recorded for the API when `--force` without `--image` regenerates it:
/// it becomes a plain API, its image's tests, variable and PROJECT entry go. Regenerating
/// only its types or only its controller is refused: the image variant's controller and
/// tests need its types, and its types are no plain controller's.
fn dropped_image(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
    image: bool,
) -> anyhow::Result<Option<project::DeployImageResource>> {
    let recorded = project
        .plugins
        .deploy_image
        .iter()
        .flat_map(|p| &p.resources)
        .find(|r| api.is_image(r));
    let Some(recorded) = recorded.filter(|_| args.force && !image) else {
        return Ok(None);
    };
    if let Some(flag) = [
        (args.no_resource, "--no-resource"),
        (args.no_controller, "--no-controller"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
    {
        let command = format!(
            "rkb create api --group {} --version {} --kind {}",
            api.group, api.version, api.kind
        );
        bail!(
            "{} {}/{} was scaffolded with --image {} (PROJECT, plugin {}): its types, controller \
             and tests go together, so --force {flag} cannot regenerate one part of them.\n  \
             To regenerate it as it is:  {command} {} --force\n  \
             To make it a plain API (its image's tests, variable in {} and PROJECT entry go):  \
             {command} --force",
            api.kind,
            api.group,
            api.version,
            recorded.image,
            project::DEPLOY_IMAGE_PLUGIN,
            image_flags(recorded),
            model::MANAGER,
        );
    }
    Ok(Some(recorded.clone()))
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

/// The `--image` options, checked; `None` without `--image`.
fn image_options(args: &CreateApiArgs) -> anyhow::Result<Option<DeployImage>> {
    let example = format!(
        "rkb create api --group {} --version {} --kind {} --image memcached:1.6.26-alpine3.19",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    let Some(image) = &args.image else {
        let companions = [
            ("--image-container-command", &args.image_container_command),
            ("--image-container-port", &args.image_container_port),
            ("--run-as-user", &args.run_as_user),
        ];
        if let Some((flag, _)) = companions.iter().find(|(_, value)| value.is_some()) {
            bail!(
                "{flag} configures the container of `--image`, and no --image was given.\n  \
                 Add the image the controller deploys, e.g.:  {example}"
            );
        }
        return Ok(None);
    };
    // The deploy-image controller reconciles its own namespaced type.
    for (refused, flag) in [
        (args.no_resource, "--no-resource"),
        (args.no_controller, "--no-controller"),
        (args.cluster_scoped, "--cluster-scoped"),
    ] {
        if refused {
            bail!(
                "--image scaffolds a namespaced resource together with the controller that deploys the image, \
                 so it cannot be combined with {flag}.\n  \
                 Drop {flag}, e.g.:  {example}"
            );
        }
    }
    let options = ImageOptions {
        image: image.clone(),
        container_command: args.image_container_command.clone(),
        container_port: args.image_container_port.clone(),
        run_as_user: args.run_as_user.clone(),
    };
    Ok(Some(options.check()?))
}

/// Validates the flags and works out the names of the API: a new custom resource, or
/// with `--no-resource` a type that exists already.
fn resolve(args: &CreateApiArgs, project: &Project) -> anyhow::Result<model::Resource> {
    names::check_kind(&args.gvk.kind)?;
    names::check_version(&args.gvk.version)?;
    if args.wants_resource() {
        return new_resource(args, project);
    }
    match project
        .find(&args.gvk.group, &args.gvk.version, &args.gvk.kind)
        .filter(|r| r.api.is_some())
    {
        Some(own) => Ok(model::Resource::recorded(own)),
        None => builtin_resource(args),
    }
}

/// A built-in Kubernetes kind, which a new controller reconciles.
fn builtin_resource(args: &CreateApiArgs) -> anyhow::Result<model::Resource> {
    if builtin_kinds::CREATE_ONLY_KINDS.iter().any(|k| {
        k.group == rbac::display_group(&args.gvk.group)
            && k.version == args.gvk.version
            && k.kind == args.gvk.kind
    }) {
        bail!(
            "{}/{} {} is a create-only kind (a review or binding request): it cannot be listed or watched, \
             so no controller can reconcile it",
            args.gvk.group,
            args.gvk.version,
            args.gvk.kind
        );
    }
    let Some(builtin) = builtin_kinds::find(&args.gvk.group, &args.gvk.version, &args.gvk.kind)
    else {
        bail!(
            "--no-resource needs an existing type, and {}/{} {} is neither an API of this project nor a \
             built-in Kubernetes kind known to k8s-openapi {}.\n  \
             Built-in kinds of that group and version: {}\n  \
             example:  rkb create api --group core --version v1 --kind Pod --no-resource",
            args.gvk.group,
            args.gvk.version,
            args.gvk.kind,
            crate::K8S_OPENAPI_VERSION,
            suggestions(&args.gvk.group, &args.gvk.version)
        );
    };
    Ok(model::Resource::builtin(builtin))
}

/// A new custom resource (or a new version of one): its names checked and derived.
fn new_resource(args: &CreateApiArgs, project: &Project) -> anyhow::Result<model::Resource> {
    names::check_group(&args.gvk.group, &project.domain)?;
    let api = model::Resource::custom(
        project,
        (&args.gvk.group, &args.gvk.version, &args.gvk.kind),
        args.plural.as_deref(),
        args.wants_namespaced(),
    );
    names::check_plural(&api.plural)?;
    names::check_module_name("--group", &api.group, "--group cache")?;
    names::check_module_name("--version", &api.version, "--version v1alpha1")?;
    names::check_crd_name(&api.group, &api.crd_name())?;
    Ok(api)
}

/// Refuses duplicates and name clashes before anything is planned.
fn check_conflicts(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    check_not_scaffolded(args, project, api)?;
    check_same_kind_elsewhere(args, project, api)?;
    check_same_scope(args, project, api)?;
    if args.wants_resource() {
        check_rust_names(project, api)?;
    }
    Ok(())
}

const GROUP_FILE_RULE: &str = "a group short enough for the files named after it \
                               (config/samples/<group>_<version>_<kind>.yaml; in the multigroup \
                               layout config/rbac/<group>_<kind>_<role>_role.yaml) to fit the file \
                               system's limit on names";

/// A group can be a valid API group of up to 253 characters and still make a file name no
/// file system takes: refused here, by its flag, rather than by the OS at commit. (A
/// version and a kind have at most 63 characters, so only the group can be too long.)
fn check_file_names(api: &model::Resource, layout: &Layout) -> anyhow::Result<()> {
    use crate::scaffold::{FILE_NAME_MAX, NAME_MAX, STAGING_EXTRA};
    let files = [
        &layout.sample_file,
        &layout.types_file,
        &layout.controller_file,
        &layout.controller_tests_file,
        &layout.role_file("viewer"),
    ];
    for file in files {
        let name = file.rsplit('/').next().unwrap_or(file).len();
        if name > FILE_NAME_MAX {
            let over = name - FILE_NAME_MAX;
            Err(names::invalid(
                "--group",
                &api.group,
                format!(
                    "the file {file} would have a name of {name} bytes, {over} more than rkb can \
                     write ({FILE_NAME_MAX}: file systems take {NAME_MAX}, and rkb stages each file \
                     under a name {STAGING_EXTRA} bytes longer); with this --version and --kind, \
                     the group may have at most {} characters",
                    api.group.len().saturating_sub(over)
                ),
                GROUP_FILE_RULE,
                "--group cache",
            ))?;
        }
    }
    Ok(())
}

/// Every version of a kind is served by one CRD, which has one scope.
fn check_same_scope(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    if !args.wants_resource() || api.builtin {
        return Ok(());
    }
    let other = project
        .resources
        .iter()
        .find(|r| r.group == api.group && r.kind == api.kind && r.version != api.version);
    if let Some(other) = other
        && let Some(recorded) = &other.api
        && recorded.namespaced != api.namespaced
    {
        let (theirs, flag) = if recorded.namespaced {
            ("namespaced", "--namespaced (the default)")
        } else {
            ("cluster-scoped", "--cluster-scoped")
        };
        bail!(
            "{} {}/{} is {theirs}, and every version of a kind is served by one CRD with one scope; \
             {}/{} cannot be {}.\n  \
             Create it with {flag}:  rkb create api --group {} --version {} --kind {}{}",
            api.kind,
            other.group,
            other.version,
            api.group,
            api.version,
            if api.namespaced {
                "namespaced"
            } else {
                "cluster-scoped"
            },
            api.group,
            api.version,
            api.kind,
            if recorded.namespaced {
                ""
            } else {
                " --cluster-scoped"
            }
        );
    }
    Ok(())
}

/// The API (or its controller) is in PROJECT already: only `--force` regenerates it.
fn check_not_scaffolded(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    let existing = project.find(&api.group, &api.version, &api.kind);
    if let Some(existing) = existing
        && !args.force
    {
        let controller_exists = match controller_name(args, api) {
            Some(name) => existing.has_controller_named(name),
            None => existing.controller,
        };
        let what = match (
            args.wants_resource() && existing.api.is_some(),
            args.wants_controller() && controller_exists,
        ) {
            (true, _) => Some("the API"),
            (false, true) => Some("a controller for"),
            (false, false) => None,
        };
        if let Some(name) = controller_name(args, api)
            && what.is_some()
        {
            let (head, fix) = if args.wants_resource() && existing.api.is_some() {
                (
                    "exists already; a controller of its own is added to an existing API with \
                     --no-resource"
                        .to_owned(),
                    format!("--no-resource --controller-name {name}"),
                )
            } else {
                (
                    format!(
                        "has a controller named {name} already; choose another name, or run \
                         with --force to regenerate its files (edits in them are lost)"
                    ),
                    format!("--no-resource --controller-name {name}-2"),
                )
            };
            bail!(
                "{}/{} {} {head}.\n  example:  rkb create api --group {} --version {} --kind {} {fix}",
                api.group,
                api.version,
                api.kind,
                api.group,
                api.version,
                api.kind,
            );
        }
        if let Some(what) = what {
            bail!(
                "{what} {}/{} {} already exists in PROJECT; run with --force to regenerate the files rkb owns \
                 for it (its types, controller, sample and roles: edits in them are lost)",
                api.group,
                api.version,
                api.kind
            );
        }
    }
    Ok(())
}

/// `--controller-name`, unless it is the default name (the lowercase kind), which is the
/// kind's default controller.
fn controller_name<'a>(args: &'a CreateApiArgs, api: &model::Resource) -> Option<&'a str> {
    args.controller_name
        .as_deref()
        .filter(|name| *name != project::default_controller_name(&api.kind))
}

/// Every controller PROJECT records, with where it lives: each kind's default controller
/// and its named ones.
pub(super) fn controllers<'a>(
    project: &'a Project,
) -> impl Iterator<Item = (&'a project::Resource, Option<&'a str>, Layout)> + 'a {
    project.resources.iter().flat_map(move |r| {
        let api = model::Resource::recorded(r);
        let layout = Layout::recorded(project, &api);
        let default = r.controller.then(|| (r, None, layout.clone()));
        let named = r.controllers.iter().map(move |c| {
            let named = layout.clone().named(&api, &c.name);
            (r, Some(c.name.as_str()), named)
        });
        default.into_iter().chain(named)
    })
}

/// A controller's name is its metrics label and `--controller-concurrency` key, and its
/// module a file: two controllers cannot share either.
fn check_controller_clash(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
    layout: &Layout,
    changes: &Changes,
) -> anyhow::Result<()> {
    let named = controller_name(args, api);
    for (entry, name, other) in controllers(project) {
        // The same controller again: check_not_scaffolded refused it unless --force.
        if api.is(entry) && name == named {
            continue;
        }
        let clash = if other.controller_name == layout.controller_name {
            format!("the name {:?}", layout.controller_name)
        } else if other.controller_module == layout.controller_module {
            format!("the module {}", layout.controller_file)
        } else {
            continue;
        };
        bail!(
            "{clash} is taken by the controller {:?} of {}/{} {}: a controller's name is its \
             metrics label and --controller-concurrency key, and its module a file of its own.\n  \
             accepted: a --controller-name no other controller has or maps to (taken: {})\n  \
             example:  rkb create api --group {} --version {} --kind {} --no-resource --controller-name {}-backup",
            other.controller_name,
            entry.group,
            entry.version,
            entry.kind,
            controllers(project)
                .map(|(_, _, l)| l.controller_name)
                .collect::<Vec<_>>()
                .join(", "),
            api.group,
            api.version,
            api.kind,
            api.kind.to_lowercase(),
        );
    }
    // A module file PROJECT does not know of (the user's own) is not overwritten.
    if named.is_some() && !args.force && changes.exists(&layout.controller_file)? {
        bail!(
            "{} exists already and PROJECT records no controller there: rkb does not overwrite \
             it.\n  Move it away, or choose another --controller-name",
            layout.controller_file
        );
    }
    Ok(())
}

/// The same kind in another group (or version) would share a controller module or roles.
fn check_same_kind_elsewhere(
    args: &CreateApiArgs,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    // The same kind in two groups: one `src/controller/<kind>.rs` and one set of roles per
    // kind in the single-group layout; the multigroup layout qualifies both by group.
    let same_kind_elsewhere = |r: &&project::Resource| {
        let other = model::Resource::recorded(r);
        other.kind_snake == api.kind_snake
            && !api.is(r)
            && (!project.multigroup || other.group_module == api.group_module)
    };
    // A named controller has a module of its own: `check_controller_clash` judges it.
    if args.wants_controller()
        && controller_name(args, api).is_none()
        && let Some(other) = project
            .resources
            .iter()
            .filter(|r| r.controller)
            .find(same_kind_elsewhere)
    {
        if other.group == api.group || project.multigroup {
            bail!(
                "a controller for {kind} exists already ({}, for {}/{}); one kind gets one \
                 controller module per group.\n  \
                 To add only the types of another version:  rkb create api --group {} --version {} --kind {kind} --no-controller",
                existing_layout(project, other).controller_file,
                other.group,
                other.version,
                api.group,
                api.version,
                kind = api.kind
            );
        }
        bail!(
            "a controller for {kind} exists already in group {} ({}), and this project keeps one \
             controller module per kind.\n  \
             To give each group its own controllers, switch to the multigroup layout first:  rkb edit --multigroup",
            other.group,
            existing_layout(project, other).controller_file,
            kind = api.kind
        );
    }
    if args.wants_resource()
        && !project.multigroup
        && let Some(other) = project
            .resources
            .iter()
            .filter(|r| r.api.is_some() && r.group != api.group)
            .find(same_kind_elsewhere)
    {
        bail!(
            "kind {} exists already in group {}; in this project's layout both would share the \
             roles config/rbac/{}_*_role.yaml.\n  \
             To hold one kind in several groups, switch to the multigroup layout first:  rkb edit --multigroup",
            api.kind,
            other.group,
            api.kind_snake
        );
    }
    Ok(())
}

/// Two groups may not share a Rust module, nor a kind be a generated type of another
/// (`FooSpec` beside `Foo`) in one version module.
fn check_rust_names(project: &Project, api: &model::Resource) -> anyhow::Result<()> {
    let module_clash = project.resources.iter().find(|r| {
        r.api.is_some()
            && model::Resource::recorded(r).group_module == api.group_module
            && r.group != api.group
    });
    if let Some(other) = module_clash {
        bail!(
            "groups {:?} and {:?} would share the Rust module `{}`; choose another --group",
            other.group,
            api.group,
            api.group_module
        );
    }
    let type_clash = project.resources.iter().find(|r| {
        r.group == api.group && r.version == api.version && r.api.is_some() && {
            let (a, b) = (&r.kind, &api.kind);
            ["Spec", "Status", "Reconciler"]
                .iter()
                .any(|s| *a == format!("{b}{s}") || *b == format!("{a}{s}"))
        }
    });
    if let Some(other) = type_clash {
        bail!(
            "kinds {} and {} clash in module {}::{}: one is a generated type of the other \
             ({0}Spec, {0}Status); choose another --kind",
            other.kind,
            api.kind,
            api.group_module,
            api.version_module
        );
    }
    Ok(())
}

fn suggestions(group: &str, version: &str) -> String {
    let group = rbac::display_group(group);
    let kinds: Vec<&str> = builtin_kinds::BUILTIN_KINDS
        .iter()
        .filter(|k| k.group == group && k.version == version)
        .map(|k| k.kind)
        .collect();
    if kinds.is_empty() {
        let mut versions: Vec<String> = builtin_kinds::BUILTIN_KINDS
            .iter()
            .filter(|k| k.group == group)
            .map(|k| k.version.to_owned())
            .collect();
        versions.dedup();
        if versions.is_empty() {
            "none (unknown group; the legacy group is spelled `core`)".into()
        } else {
            format!("none; that group has versions {}", versions.join(", "))
        }
    } else {
        kinds.join(", ")
    }
}

/// Where an API's controller lives now, as PROJECT records the layout.
fn existing_layout(project: &Project, resource: &project::Resource) -> Layout {
    Layout::recorded(project, &model::Resource::recorded(resource))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_cannot_take_a_name_the_templates_import_or_define() {
        let (plain, image) = (taken_names(false), taken_names(true));
        for name in [
            "Time",
            "Condition",
            "Api",
            "Client",
            "Context",
            "Error",
            "Hub",
        ] {
            assert!(plain.contains_key(name), "{name}: {plain:?}");
        }
        for name in [
            "Container",
            "Deployment",
            "DeploymentSpec",
            "Quantity",
            "Event",
        ] {
            assert!(image.contains_key(name), "{name}");
            assert!(!plain.contains_key(name), "{name}");
        }
        let why = &plain["Time"];
        assert!(
            why.starts_with("api/controller.rs.tera imports it") && why.contains("E0252"),
            "{why}"
        );
        assert!(plain["Error"].contains("defines it"), "{}", plain["Error"]);
        // The kind itself, and what only names it, take nothing.
        for name in ["Memcached", "NamespacedApi2", "Spec", "Reconciler"] {
            assert!(
                !image.contains_key(name) && !plain.contains_key(name),
                "{name}"
            );
        }
        // A built-in kind's name is not the user's to choose: none may be taken.
        for builtin in builtin_kinds::BUILTIN_KINDS {
            assert!(!plain.contains_key(builtin.kind), "{}", builtin.kind);
        }
    }
}
