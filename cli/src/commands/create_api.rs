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

pub fn create_api(args: &CreateApiArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    // Locks the project first: PROJECT is read now and rewritten at the end.
    let mut changes = Changes::open(&args.dir)?;
    let project = Project::load(&args.dir)?;
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
    let entry = project::Resource {
        api: resource.then(|| project::Api {
            crd_version: "v1".into(),
            namespaced: api.namespaced,
        }),
        controller,
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
    // The project as it will be, checked as a whole before anything is planned.
    let mut planned = project.clone();
    planned.upsert(entry.clone());
    planned.check_resource_names(&entry)?;
    if image.is_some() {
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
    let project = planned;

    let layout = if project.multigroup {
        multigroup_layout(&changes, &project, &api)?
    } else {
        Layout::single_group(&api.kind)
    };

    let templates = Templates::load()?;
    let mut context = tera::Context::new();
    context.insert("api", &api);
    context.insert("layout", &layout);
    context.insert("project_name", &project.project_name);
    context.insert("crate_name", &names::crate_name(&project.project_name));
    context.insert("domain", &project.domain);
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
    context.insert(
        "image_env",
        &format!("{}_IMAGE", layout.role_prefix.to_uppercase()),
    );
    context.insert(
        "header",
        &crate::scaffold::source_header(
            &changes.read("hack/boilerplate.rs.txt")?.unwrap_or_default(),
        ),
    );
    let render = |template: &str| templates.render(template, &context);
    // New sources whose line wrapping depends on the names: formatted before commit.
    let mut sources_to_format = Vec::new();
    let path = |template: &str| templates.render_str(template, &context);

    if resource {
        changes.insert_sorted_at_marker(
            "src/api/mod.rs",
            "groups",
            &render("api/insert/api_mod.rs.tera")?,
        )?;
        let group_mod = path("src/api/{{ api.group_module }}/mod.rs")?;
        changes.ensure(&group_mod, || render("api/group_mod.rs.tera"))?;
        changes.insert_sorted_at_marker(
            &group_mod,
            "versions",
            &render("api/insert/group_mod.rs.tera")?,
        )?;
        let version_mod = path("src/api/{{ api.group_module }}/{{ api.version_module }}/mod.rs")?;
        changes.ensure(&version_mod, || render("api/version_mod.rs.tera"))?;
        changes.insert_sorted_at_marker(
            &version_mod,
            "kinds",
            &render("api/insert/version_mod.rs.tera")?,
        )?;
        changes.insert_sorted_at_marker(
            &version_mod,
            "exports",
            &render("api/insert/version_exports.rs.tera")?,
        )?;
        let types = path(
            "src/api/{{ api.group_module }}/{{ api.version_module }}/{{ api.kind_snake }}.rs",
        )?;
        let types_template = if image.is_some() {
            "api/deploy-image/types.rs.tera"
        } else {
            "api/types.rs.tera"
        };
        changes.create(&types, render(types_template)?, args.force)?;
        sources_to_format.push(types);
        changes.insert_at_marker(
            "src/lib.rs",
            "crds",
            &render("api/insert/lib_crds.rs.tera")?,
        )?;

        let sample =
            path("config/samples/{{ api.group }}_{{ api.version }}_{{ api.kind | lower }}.yaml")?;
        let sample_template = if image.is_some() {
            "api/deploy-image/sample.yaml.tera"
        } else {
            "api/config/sample.yaml.tera"
        };
        changes.create(&sample, render(sample_template)?, args.force)?;
        changes.insert_at_marker(
            "config/samples/kustomization.yaml",
            "samples",
            &render("api/insert/samples_kustomization.yaml.tera")?,
        )?;
        changes.insert_at_marker(
            "config/crd/kustomization.yaml",
            "crds",
            &render("api/insert/crd_kustomization.yaml.tera")?,
        )?;
        changes.insert_at_marker("config/default/kustomization.yaml", "crd", "- ../crd")?;
        for role in ["admin", "editor", "viewer"] {
            scaffold_kind_role(&templates, &mut changes, &context, role, args.force)?;
        }
    }
    if controller {
        let reconciler = &layout.controller_file;
        if image.is_some() {
            changes.create(
                reconciler,
                render("api/deploy-image/controller.rs.tera")?,
                args.force,
            )?;
            // The tests of a complete controller are longer than a skeleton's: a file of
            // their own, as integration tests of the crate.
            let tests = path("tests/{{ layout.role_prefix }}_controller.rs")?;
            changes.create(
                &tests,
                render("api/deploy-image/controller_test.rs.tera")?,
                args.force,
            )?;
            sources_to_format.push(tests);
            set_image_env(&mut changes, &templates, &context)?;
        } else {
            changes.create(reconciler, render("api/controller.rs.tera")?, args.force)?;
        }
        sources_to_format.push(reconciler.clone());
        let kind_module = render("api/insert/controller_mod.rs.tera")?;
        match &layout.group_mod_file {
            None => {
                changes.insert_sorted_at_marker("src/controller/mod.rs", "modules", &kind_module)?
            }
            Some(group_mod) => {
                changes.insert_sorted_at_marker(
                    "src/controller/mod.rs",
                    "modules",
                    &render("api/insert/api_mod.rs.tera")?,
                )?;
                changes.ensure(group_mod, || render("api/controller_group_mod.rs.tera"))?;
                changes.insert_sorted_at_marker(group_mod, "modules", &kind_module)?;
            }
        }
        changes.insert_at_marker(
            "src/controller/mod.rs",
            "controllers",
            &render("api/insert/controller_run.rs.tera")?,
        )?;
        changes.insert_at_marker(
            "src/lib.rs",
            "rbac",
            &render("api/insert/lib_rbac.rs.tera")?,
        )?;
    }

    changes.create(project::FILE_NAME, project.to_yaml(), true)?;
    let mut sources = Vec::new();
    for path in &sources_to_format {
        sources.push(changes.read(path)?.expect("planned above"));
    }
    let (formatted, warning) = crate::scaffold::rustfmt(sources)?;
    for (path, source) in sources_to_format.iter().zip(formatted) {
        changes.create(path, source, true)?;
    }
    super::commit(changes, out)?;
    if let Some(warning) = warning {
        writeln!(out, "warning: {warning}")?;
    }
    if let Some(image) = &image {
        writeln!(
            out,
            "\nThe {kind} controller runs {} in a Deployment per {kind}; the manager reads the image from {} \
             (config/manager/manager.yaml).\nNext: `make manifests && make test`, then `make install run` with \
             {1}={0} exported, or `make deploy`.",
            image.image,
            context
                .get("image_env")
                .and_then(|v| v.as_str())
                .unwrap_or_default(),
            kind = api.kind
        )?;
        return Ok(());
    }
    if resource {
        writeln!(
            out,
            "\nNext: define the fields of {kind}Spec and {kind}Status in src/api/{}/{}/{}.rs, then run `make manifests`.",
            api.group_module,
            api.version_module,
            api.kind_snake,
            kind = api.kind
        )?;
    }
    if controller {
        writeln!(
            out,
            "{}Implement the reconcile loop in {}; `make test` runs its tests.",
            if resource { "" } else { "\nNext: " },
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

/// Adds `<KIND>_IMAGE` to the manager's environment in config/manager/manager.yaml, or
/// changes its value when it is there already (`--force` with another image).
fn set_image_env(
    changes: &mut Changes,
    templates: &Templates,
    context: &tera::Context,
) -> anyhow::Result<()> {
    const MANAGER: &str = "config/manager/manager.yaml";
    let name = context
        .get("image_env")
        .and_then(|v| v.as_str())
        .expect("set above")
        .to_owned();
    let value = templates.render_str("{{ image.image }}", context)?;
    let content = changes.read(MANAGER)?.unwrap_or_default();
    let lines: Vec<&str> = content.lines().collect();
    if let Some(at) = lines
        .iter()
        .position(|l| l.trim() == format!("- name: {name}"))
    {
        let Some(value_line) = lines.get(at + 1).filter(|l| l.trim().starts_with("value:")) else {
            bail!(
                "{MANAGER} names {name} but no `value:` follows it; set it to {value:?} by hand, or remove the entry and run rkb again"
            );
        };
        let indent = &value_line[..value_line.len() - value_line.trim_start().len()];
        let mut updated: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        updated[at + 1] = format!("{indent}value: {value}");
        changes.create(MANAGER, updated.join("\n") + "\n", true)?;
        return Ok(());
    }
    let mut context = context.clone();
    // The first image starts the container's `env:` list; later ones join it.
    context.insert("env_list_exists", &lines.iter().any(|l| l.trim() == "env:"));
    changes.insert_at_marker(
        MANAGER,
        "env",
        &templates.render("api/deploy-image/insert/manager_env.yaml.tera", &context)?,
    )
}

fn scaffold_kind_role(
    templates: &Templates,
    changes: &mut Changes,
    context: &tera::Context,
    role: &str,
    force: bool,
) -> anyhow::Result<()> {
    let mut context = context.clone();
    context.insert("role", role);
    // No wildcards even for admins: a verb added to Kubernetes later is never granted silently.
    let verbs: &[&str] = match role {
        "admin" => &[
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ],
        "editor" => &[
            "create", "delete", "get", "list", "patch", "update", "watch",
        ],
        _ => &["get", "list", "watch"],
    };
    context.insert("verbs", verbs);
    let path = templates.render_str(
        "config/rbac/{{ layout.role_prefix }}_{{ role }}_role.yaml",
        &context,
    )?;
    let role = templates.render("api/config/kind_role.yaml.tera", &context)?;
    // Roles belong to the kind, not a version: a second version keeps the existing ones.
    if force {
        changes.create(&path, role, true)?;
    } else {
        changes.ensure(&path, || Ok(role))?;
    }
    changes.insert_at_marker(
        "config/rbac/kustomization.yaml",
        "roles",
        &templates.render("api/insert/rbac_kustomization.yaml.tera", &context)?,
    )
}

/// Validates the flags and works out the names of the API.
fn resolve(args: &CreateApiArgs, project: &Project) -> anyhow::Result<Api> {
    names::check_kind(&args.kind)?;
    names::check_version(&args.version)?;
    let kind_snake = names::snake(&args.kind);
    let version_module = names::module_name(&args.version);

    if !args.wants_resource() {
        // A controller for a type that exists already: this project's, or a built-in kind.
        if let Some(own) = project
            .find(&args.group, &args.version, &args.kind)
            .filter(|r| r.api.is_some())
        {
            let namespaced = own.api.as_ref().is_some_and(|a| a.namespaced);
            return Ok(Api {
                api_group: names::api_group(&own.group, &own.domain),
                api_version: format!(
                    "{}/{}",
                    names::api_group(&own.group, &own.domain),
                    own.version
                ),
                group_module: names::module_name(&own.group),
                type_path: own.path.clone(),
                plural: own.plural.clone(),
                group: own.group.clone(),
                version: own.version.clone(),
                kind: own.kind.clone(),
                kind_snake,
                version_module,
                namespaced,
                builtin: false,
                storage_version: None,
                sample_fields: None,
            });
        }
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
        return Ok(Api {
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
            kind_snake,
            version_module,
            builtin: true,
            storage_version: None,
            sample_fields: builtin_kinds::required_fields(builtin.group, builtin.kind),
        });
    }

    names::check_group(&args.group, &project.domain)?;
    // Every version of a kind is served by one CRD: a new version keeps the kind's plural.
    let plural = match (&args.plural, other_version(project, args)) {
        (Some(plural), _) => plural.clone(),
        (None, Some(existing)) => existing.plural.clone(),
        (None, None) => names::plural(&args.kind),
    };
    names::check_plural(&plural)?;
    let group_module = names::module_name(&args.group);
    for (flag, value, module) in [
        ("--group", &args.group, &group_module),
        ("--version", &args.version, &version_module),
    ] {
        if let Some(problem) = names::module_name_problem(module) {
            bail!("invalid {flag} {value:?}: {problem}; choose another name");
        }
    }
    let api_group = names::api_group(&args.group, &project.domain);
    let storage_version = other_version(project, args).map(|r| r.version.clone());
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
        kind_snake,
        group_module,
        version_module,
        builtin: false,
        storage_version,
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
    if args.wants_resource() {
        let module_clash = project.resources.iter().find(|r| {
            r.api.is_some()
                && names::module_name(&r.group) == api.group_module
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
