//! `rkb create api`: a custom resource type and/or a reconciler, registered at the
//! `+rkb:scaffold:` markers of the project so repeated runs edit files predictably.

use std::io::Write;

use anyhow::bail;
use rkb_core::rbac;
use serde::Serialize;

use crate::cli::CreateApiArgs;
use crate::deploy_image::{DeployImage, ImageOptions};
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::plan::{Entry, IfExists, Marker, Text::*};
use crate::scaffold::{Changes, Templates, builtin_kinds};

use super::layout::Layout;

/// Everything the templates need to know about one API.
#[derive(Debug, Serialize)]
struct Api {
    group: String,
    version: String,
    kind: String,
    plural: String,
    /// Full API group (`cache.example.com`); empty for the core group.
    api_group: String,
    /// `cache.example.com/v1alpha1`, or `v1` for the core group.
    api_version: String,
    namespaced: bool,
    kind_snake: String,
    group_module: String,
    version_module: String,
    /// Rust path of the type the controller reconciles.
    type_path: String,
    /// The type is a built-in Kubernetes kind (no CRD).
    builtin: bool,
    /// Another version of this kind already exists and stays the storage version.
    storage_version: Option<String>,
    /// For a built-in kind: the fields the API server requires besides metadata, as the
    /// body of a `serde_json::json!` object (the scaffolded tests' sample object).
    sample_fields: Option<String>,
}

/// What `create api` was asked for and what the project holds: the switches of [`PLAN`].
#[derive(Debug)]
pub(super) struct Switches {
    resource: bool,
    controller: bool,
    image: bool,
    /// The multigroup layout: controllers live in a module per group.
    grouped: bool,
    /// The manager's environment names this kind's image already (`--force` with another
    /// image), so its value is changed rather than a second entry inserted.
    image_env_set: bool,
}

const ADMIN: &[(&str, &str)] = &[("role", "admin")];
const EDITOR: &[(&str, &str)] = &[("role", "editor")];
const VIEWER: &[(&str, &str)] = &[("role", "viewer")];

/// What `create api` generates. Types, controllers and samples belong to the API (refused
/// if they exist, regenerated with `--force`); module files are shared between APIs.
pub(super) const PLAN: &[Entry<Switches>] = &[
    // The types: src/api/<group>/<version>/<kind>.rs, reached through one module per level.
    Entry::insert_sorted(
        "src/api/mod.rs",
        Marker::Groups,
        Template("api/insert/api_mod.rs.tera"),
    )
    .when(|s| s.resource),
    Entry::shared(
        "src/api/{{ api.group_module }}/mod.rs",
        "api/group_mod.rs.tera",
    )
    .when(|s| s.resource),
    Entry::insert_sorted(
        "src/api/{{ api.group_module }}/mod.rs",
        Marker::Versions,
        Template("api/insert/group_mod.rs.tera"),
    )
    .when(|s| s.resource),
    Entry::shared(VERSION_MOD, "api/version_mod.rs.tera").when(|s| s.resource),
    Entry::insert_sorted(
        VERSION_MOD,
        Marker::Kinds,
        Template("api/insert/version_mod.rs.tera"),
    )
    .when(|s| s.resource),
    Entry::insert_sorted(
        VERSION_MOD,
        Marker::Exports,
        Template("api/insert/version_exports.rs.tera"),
    )
    .when(|s| s.resource),
    Entry::file(TYPES, "api/types.rs.tera")
        .rustfmt()
        .when(|s| s.resource && !s.image),
    Entry::file(TYPES, "api/deploy-image/types.rs.tera")
        .rustfmt()
        .when(|s| s.resource && s.image),
    Entry::insert(
        "src/lib.rs",
        Marker::Crds,
        Template("api/insert/lib_crds.rs.tera"),
    )
    .when(|s| s.resource),
    // config/: the sample, the CRD base and the kind's roles.
    Entry::file(SAMPLE, "api/config/sample.yaml.tera").when(|s| s.resource && !s.image),
    Entry::file(SAMPLE, "api/deploy-image/sample.yaml.tera").when(|s| s.resource && s.image),
    Entry::insert(
        "config/samples/kustomization.yaml",
        Marker::Samples,
        Template("api/insert/samples_kustomization.yaml.tera"),
    )
    .when(|s| s.resource),
    Entry::insert(
        "config/crd/kustomization.yaml",
        Marker::Crds,
        Template("api/insert/crd_kustomization.yaml.tera"),
    )
    .when(|s| s.resource),
    Entry::insert(
        "config/default/kustomization.yaml",
        Marker::Crd,
        Inline("- ../crd"),
    )
    .when(|s| s.resource),
    // Roles belong to the kind, not a version: a second version keeps the existing ones.
    Entry::file(
        "config/rbac/{{ layout.role_prefix }}_admin_role.yaml",
        KIND_ROLE,
    )
    .if_exists(IfExists::KeepUnlessForced)
    .vars(ADMIN)
    .when(|s| s.resource),
    Entry::file(
        "config/rbac/{{ layout.role_prefix }}_editor_role.yaml",
        KIND_ROLE,
    )
    .if_exists(IfExists::KeepUnlessForced)
    .vars(EDITOR)
    .when(|s| s.resource),
    Entry::file(
        "config/rbac/{{ layout.role_prefix }}_viewer_role.yaml",
        KIND_ROLE,
    )
    .if_exists(IfExists::KeepUnlessForced)
    .vars(VIEWER)
    .when(|s| s.resource),
    Entry::insert(RBAC_KUSTOMIZATION, Marker::Roles, Template(ROLE_ENTRY))
        .vars(ADMIN)
        .when(|s| s.resource),
    Entry::insert(RBAC_KUSTOMIZATION, Marker::Roles, Template(ROLE_ENTRY))
        .vars(EDITOR)
        .when(|s| s.resource),
    Entry::insert(RBAC_KUSTOMIZATION, Marker::Roles, Template(ROLE_ENTRY))
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
        "tests/{{ layout.role_prefix }}_controller.rs",
        "api/deploy-image/controller_test.rs.tera",
    )
    .rustfmt()
    .when(|s| s.controller && s.image),
    Entry::insert(
        "config/manager/manager.yaml",
        Marker::Env,
        Template("api/deploy-image/insert/manager_env.yaml.tera"),
    )
    .when(|s| s.controller && s.image && !s.image_env_set),
    Entry::insert_sorted(CONTROLLERS, Marker::Modules, Template(CONTROLLER_MOD))
        .when(|s| s.controller && !s.grouped),
    Entry::insert_sorted(
        CONTROLLERS,
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
        CONTROLLERS,
        Marker::Controllers,
        Template("api/insert/controller_run.rs.tera"),
    )
    .when(|s| s.controller),
    Entry::insert(
        "src/lib.rs",
        Marker::Rbac,
        Template("api/insert/lib_rbac.rs.tera"),
    )
    .when(|s| s.controller),
    Entry::file(project::FILE_NAME, "init/PROJECT.tera").if_exists(IfExists::Overwrite),
];

const VERSION_MOD: &str = "src/api/{{ api.group_module }}/{{ api.version_module }}/mod.rs";
const TYPES: &str =
    "src/api/{{ api.group_module }}/{{ api.version_module }}/{{ api.kind_snake }}.rs";
const SAMPLE: &str = "config/samples/{{ api.group }}_{{ api.version }}_{{ api.kind | lower }}.yaml";
const KIND_ROLE: &str = "api/config/kind_role.yaml.tera";
const RBAC_KUSTOMIZATION: &str = "config/rbac/kustomization.yaml";
const ROLE_ENTRY: &str = "api/insert/rbac_kustomization.yaml.tera";
const CONTROLLERS: &str = "src/controller/mod.rs";
const CONTROLLER_MOD: &str = "api/insert/controller_mod.rs.tera";
const MANAGER: &str = "config/manager/manager.yaml";

pub fn create_api(args: &CreateApiArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    // Locks the project first: PROJECT is read now and rewritten at the end.
    let mut changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let (resource, controller) = (args.wants_resource(), args.wants_controller());
    if !resource && !controller {
        bail!(
            "nothing to scaffold: --no-resource and --no-controller together leave no files to write.\n  \
             Drop one of them, e.g.:  rkb create api --group {} --version {} --kind {} --no-resource",
            args.group,
            args.version,
            args.kind
        );
    }
    let image = image_options(args)?;
    let api = resolve(args, &project)?;
    if !names::is_kube_version(&api.version) {
        writeln!(
            out,
            "warning: version {:?} is not of the form v1, v1alpha1 or v2beta3, so Kubernetes will sort it \
             after every such version when choosing the preferred version",
            api.version
        )?;
    }
    check_conflicts(args, &project, &api)?;
    let project = updated_project(args, &project, &api, image.is_some())?;
    let layout = if project.multigroup {
        multigroup_layout(&changes, &project, &api)?
    } else {
        Layout::single_group(&api.kind)
    };
    let image_env = format!("{}_IMAGE", layout.role_prefix.to_uppercase());
    let manager = changes.read(MANAGER)?.unwrap_or_default();
    let switches = Switches {
        resource,
        controller,
        image: image.is_some(),
        grouped: layout.group_mod_file.is_some(),
        image_env_set: image.is_some() && env_line(&manager, &image_env).is_some(),
    };

    let mut context = super::project_context(&project, &changes)?;
    context.insert("api", &api);
    context.insert("layout", &layout);
    context.insert("image", &image);
    // The container's command as Rust string literals.
    let command_literals: Vec<String> = image
        .iter()
        .flat_map(|i| &i.command)
        .map(|word| format!("{word:?}"))
        .collect();
    context.insert("command_literals", &command_literals);
    // The manager's environment variable that names the image: MEMCACHED_IMAGE
    // (group-qualified in the multigroup layout, where a kind may exist in two groups).
    context.insert("image_env", &image_env);
    // The first image starts the container's `env:` list; later ones join it.
    context.insert(
        "env_list_exists",
        &manager.lines().any(|l| l.trim() == "env:"),
    );

    if let Some(image) = image.as_ref().filter(|_| switches.image_env_set) {
        set_image_env(&mut changes, &manager, &image_env, &image.image)?;
    }
    let templates = Templates::load()?;
    super::scaffold(
        PLAN, &switches, &templates, &context, args.force, changes, out,
    )?;
    next_steps(out, &api, &layout, &switches, image.as_ref(), &image_env)
}

/// PROJECT as it will be after this command, checked as a whole before anything is planned.
fn updated_project(
    args: &CreateApiArgs,
    project: &Project,
    api: &Api,
    image: bool,
) -> anyhow::Result<Project> {
    let entry = project::Resource {
        api: args.wants_resource().then(|| project::Api {
            crd_version: "v1".into(),
            namespaced: api.namespaced,
        }),
        controller: args.wants_controller(),
        core: api.builtin,
        domain: if api.builtin {
            String::new()
        } else {
            project.domain.clone()
        },
        group: api.group.clone(),
        kind: api.kind.clone(),
        path: api.type_path.clone(),
        plural: api.plural.clone(),
        version: api.version.clone(),
        webhooks: None,
    };
    let mut planned = project.clone();
    planned.upsert(entry.clone());
    planned.check_resource_names(&entry)?;
    if image {
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

/// Tells the user what to do next, like kubebuilder's closing lines.
fn next_steps(
    out: &mut dyn Write,
    api: &Api,
    layout: &Layout,
    switches: &Switches,
    image: Option<&DeployImage>,
    image_env: &str,
) -> anyhow::Result<()> {
    if let Some(image) = image {
        writeln!(
            out,
            "\nThe {kind} controller runs {} in a Deployment per {kind}; the manager reads the image from {} \
             (config/manager/manager.yaml).\nNext: `make manifests && make test`, then `make install run` with \
             {1}={0} exported, or `make deploy`.",
            image.image,
            image_env,
            kind = api.kind
        )?;
        return Ok(());
    }
    if switches.resource {
        writeln!(
            out,
            "\nNext: define the fields of {kind}Spec and {kind}Status in src/api/{}/{}/{}.rs, then run `make manifests`.",
            api.group_module,
            api.version_module,
            api.kind_snake,
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
        args.group, args.version, args.kind
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

/// The index of the `- name: <env>` line in the manager's Deployment.
fn env_line(manager: &str, env: &str) -> Option<usize> {
    manager
        .lines()
        .position(|l| l.trim() == format!("- name: {env}"))
}

/// Changes the value of `<KIND>_IMAGE`, which config/manager/manager.yaml sets already
/// (`--force` with another image); a new variable is inserted by [`PLAN`].
fn set_image_env(
    changes: &mut Changes,
    manager: &str,
    env: &str,
    image: &str,
) -> anyhow::Result<()> {
    let at = env_line(manager, env).expect("checked by the caller");
    let mut lines: Vec<String> = manager.lines().map(str::to_owned).collect();
    let Some(value_line) = lines.get(at + 1).filter(|l| l.trim().starts_with("value:")) else {
        bail!(
            "{MANAGER} names {env} but no `value:` follows it; set it to {image:?} by hand, or remove the entry and run rkb again"
        );
    };
    let indent = value_line[..value_line.len() - value_line.trim_start().len()].to_owned();
    lines[at + 1] = format!("{indent}value: {image}");
    changes.create(MANAGER, lines.join("\n") + "\n", true)
}

/// Validates the flags and works out the names of the API: a new custom resource, or
/// with `--no-resource` a type that exists already.
fn resolve(args: &CreateApiArgs, project: &Project) -> anyhow::Result<Api> {
    names::check_kind(&args.kind)?;
    names::check_version(&args.version)?;
    if args.wants_resource() {
        return new_resource(args, project);
    }
    match project
        .find(&args.group, &args.version, &args.kind)
        .filter(|r| r.api.is_some())
    {
        Some(own) => Ok(own_resource(own)),
        None => builtin_resource(args),
    }
}

/// A type this project defined earlier, which a new controller reconciles.
fn own_resource(own: &project::Resource) -> Api {
    let api_group = names::api_group(&own.group, &own.domain);
    Api {
        api_version: format!("{api_group}/{}", own.version),
        api_group,
        group_module: names::module_name(&own.group),
        type_path: own.path.clone(),
        plural: own.plural.clone(),
        group: own.group.clone(),
        version: own.version.clone(),
        kind: own.kind.clone(),
        kind_snake: names::snake(&own.kind),
        version_module: names::module_name(&own.version),
        namespaced: own.api.as_ref().is_some_and(|a| a.namespaced),
        builtin: false,
        storage_version: None,
        sample_fields: None,
    }
}

/// A built-in Kubernetes kind, which a new controller reconciles.
fn builtin_resource(args: &CreateApiArgs) -> anyhow::Result<Api> {
    if builtin_kinds::CREATE_ONLY_KINDS.iter().any(|k| {
        k.group == rbac::display_group(&args.group)
            && k.version == args.version
            && k.kind == args.kind
    }) {
        bail!(
            "{}/{} {} is a create-only kind (a review or binding request): it cannot be listed or watched, \
             so no controller can reconcile it",
            args.group,
            args.version,
            args.kind
        );
    }
    let Some(builtin) = builtin_kinds::find(&args.group, &args.version, &args.kind) else {
        bail!(
            "--no-resource needs an existing type, and {}/{} {} is neither an API of this project nor a \
             built-in Kubernetes kind known to k8s-openapi {}.\n  \
             Built-in kinds of that group and version: {}\n  \
             example:  rkb create api --group core --version v1 --kind Pod --no-resource",
            args.group,
            args.version,
            args.kind,
            crate::K8S_OPENAPI_VERSION,
            suggestions(&args.group, &args.version)
        );
    };
    let api_group = rbac::api_group(builtin.group).to_owned();
    Ok(Api {
        api_version: if api_group.is_empty() {
            builtin.version.to_owned()
        } else {
            format!("{api_group}/{}", builtin.version)
        },
        api_group,
        group: builtin.group.to_owned(),
        version: builtin.version.to_owned(),
        kind: builtin.kind.to_owned(),
        plural: builtin.plural.to_owned(),
        namespaced: builtin.namespaced,
        group_module: names::module_name(builtin.group),
        type_path: builtin.rust_path.to_owned(),
        kind_snake: names::snake(builtin.kind),
        version_module: names::module_name(builtin.version),
        builtin: true,
        storage_version: None,
        sample_fields: builtin_kinds::required_fields(builtin.group, builtin.kind),
    })
}

/// A new custom resource (or a new version of one): its names checked and derived.
fn new_resource(args: &CreateApiArgs, project: &Project) -> anyhow::Result<Api> {
    names::check_group(&args.group, &project.domain)?;
    // Every version of a kind is served by one CRD: a new version keeps the kind's plural.
    let plural = match (&args.plural, other_version(project, args)) {
        (Some(plural), _) => plural.clone(),
        (None, Some(existing)) => existing.plural.clone(),
        (None, None) => names::plural(&args.kind),
    };
    names::check_plural(&plural)?;
    let group_module = names::module_name(&args.group);
    let version_module = names::module_name(&args.version);
    for (flag, value, module) in [
        ("--group", &args.group, &group_module),
        ("--version", &args.version, &version_module),
    ] {
        if let Some(problem) = names::module_name_problem(module) {
            bail!("invalid {flag} {value:?}: {problem}; choose another name");
        }
    }
    let api_group = names::api_group(&args.group, &project.domain);
    Ok(Api {
        api_version: format!("{api_group}/{}", args.version),
        type_path: format!(
            "crate::api::{group_module}::{version_module}::{}",
            args.kind
        ),
        api_group,
        group: args.group.clone(),
        version: args.version.clone(),
        kind: args.kind.clone(),
        plural,
        namespaced: args.wants_namespaced(),
        kind_snake: names::snake(&args.kind),
        group_module,
        version_module,
        builtin: false,
        storage_version: other_version(project, args).map(|r| r.version.clone()),
        sample_fields: None,
    })
}

/// Another version of the kind, with types in this project.
fn other_version<'p>(project: &'p Project, args: &CreateApiArgs) -> Option<&'p project::Resource> {
    project.resources.iter().find(|r| {
        r.group == args.group && r.kind == args.kind && r.version != args.version && r.api.is_some()
    })
}

/// Refuses duplicates and name clashes before anything is planned.
fn check_conflicts(args: &CreateApiArgs, project: &Project, api: &Api) -> anyhow::Result<()> {
    check_not_scaffolded(args, project, api)?;
    check_same_kind_elsewhere(args, project, api)?;
    if args.wants_resource() {
        check_rust_names(project, api)?;
    }
    Ok(())
}

/// The API (or its controller) is in PROJECT already: only `--force` regenerates it.
fn check_not_scaffolded(args: &CreateApiArgs, project: &Project, api: &Api) -> anyhow::Result<()> {
    let existing = project.find(&api.group, &api.version, &api.kind);
    if let Some(existing) = existing
        && !args.force
    {
        let what = match (
            args.wants_resource() && existing.api.is_some(),
            args.wants_controller() && existing.controller,
        ) {
            (true, _) => Some("the API"),
            (false, true) => Some("a controller for"),
            (false, false) => None,
        };
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

/// The same kind in another group (or version) would share a controller module or roles.
fn check_same_kind_elsewhere(
    args: &CreateApiArgs,
    project: &Project,
    api: &Api,
) -> anyhow::Result<()> {
    // The same kind in two groups: one `src/controller/<kind>.rs` and one set of roles per
    // kind in the single-group layout; the multigroup layout qualifies both by group.
    let same_kind_elsewhere = |r: &&project::Resource| {
        names::snake(&r.kind) == api.kind_snake
            && !(r.group == api.group && r.version == api.version && r.kind == api.kind)
            && (!project.multigroup || names::module_name(&r.group) == api.group_module)
    };
    if args.wants_controller()
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
fn check_rust_names(project: &Project, api: &Api) -> anyhow::Result<()> {
    let module_clash = project.resources.iter().find(|r| {
        r.api.is_some() && names::module_name(&r.group) == api.group_module && r.group != api.group
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
    if project.multigroup {
        Layout::multigroup(&resource.group, &resource.kind)
    } else {
        Layout::single_group(&resource.kind)
    }
}

/// The multigroup layout of a new API. Roles keep the names they already have: a kind
/// scaffolded before `rkb edit --multigroup` has `config/rbac/<kind>_*` roles, and a new
/// version of it must not add a second set.
fn multigroup_layout(changes: &Changes, project: &Project, api: &Api) -> anyhow::Result<Layout> {
    let mut layout = Layout::multigroup(&api.group, &api.kind);
    let single = Layout::single_group(&api.kind);
    let has_roles = |prefix: &str| changes.exists(&format!("config/rbac/{prefix}_admin_role.yaml"));
    let earlier_version = project.resources.iter().any(|r| {
        r.api.is_some() && r.group == api.group && r.kind == api.kind && r.version != api.version
    });
    if earlier_version && !has_roles(&layout.role_prefix)? && has_roles(&single.role_prefix)? {
        layout.role_prefix = single.role_prefix;
    }
    Ok(layout)
}
