//! Step two of `create api`: every refusal, judged on what [`super::resolve`] derived,
//! in one written order, before anything is planned.

use std::collections::BTreeMap;

use anyhow::bail;
use rkb_core::rbac;

use super::resolve::{Asked, Resolved};
use super::{CreateApiArgs, PLAN, Switches, create_webhook, image_flags};
use crate::model::{self, Layout};
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::plan::Entry;
use crate::scaffold::{Changes, Templates, builtin_kinds};

/// Every check of `create api`, in this order: the flags together, the `--image` options,
/// the names asked for, what the project has, PROJECT after the command, the layout.
/// The first refusal is the error.
pub(super) fn all(resolved: &Resolved, changes: &Changes) -> anyhow::Result<()> {
    let Resolved {
        args,
        asked,
        before,
        api,
        ..
    } = resolved;
    something_to_scaffold(args, asked, before)?;
    image_options(resolved)?;
    if let Some(name) = &args.controller_name {
        names::check_controller_name(name)?;
    }
    names_asked(args, asked, before, api)?;
    names::check_kind_not_taken(&api.kind, &taken_names(args.image.is_some()))?;
    check_not_scaffolded(asked, before, api)?;
    check_same_kind_elsewhere(asked, before, api)?;
    check_same_scope(asked, before, api)?;
    if asked.resource {
        check_rust_names(before, api)?;
    }
    check_scope_fits_the_manager(args, asked, before, api)?;
    check_image_kept_whole(resolved)?;
    resolved
        .project
        .check_resource_names_keeping(&resolved.entry, &kept_flags(args))?;
    if resolved.project.multigroup && asked.controller {
        match asked.named {
            Some(name) => names::check_controller_name_not_group(name, &api.group)?,
            None => names::check_kind_not_group(&api.kind, &api.group)?,
        }
    }
    if asked.controller {
        check_controller_clash(asked, before, api, &resolved.layout, changes)?;
    }
    check_file_names(api, &resolved.layout)?;
    Ok(())
}

/// `--no-resource` and `--no-controller` together leave nothing to write.
fn something_to_scaffold(
    args: &CreateApiArgs,
    asked: &Asked,
    project: &Project,
) -> anyhow::Result<()> {
    if asked.resource || asked.controller {
        return Ok(());
    }
    let gvk = &args.gvk;
    // The hint must work: --no-resource only for a type that exists.
    let exists = project
        .find(&gvk.group, &gvk.version, &gvk.kind)
        .is_some_and(|r| r.api.is_some())
        || builtin_kinds::find(&gvk.group, &gvk.version, &gvk.kind).is_some();
    let (keep, what) = if exists {
        ("--no-resource", "a controller for the existing type")
    } else {
        ("--no-controller", "only the types")
    };
    bail!(
        "nothing to scaffold: --no-resource and --no-controller together leave no files to write.\n  \
         Drop one of them; for {what}:  rkb create api --group {} --version {} --kind {} {keep}",
        gvk.group,
        gvk.version,
        gvk.kind
    );
}

/// The `--image` flags: companions only with `--image`, which scaffolds a namespaced
/// type with its controller, and each option valid.
fn image_options(resolved: &Resolved) -> anyhow::Result<()> {
    let args = resolved.args;
    let example = format!(
        "rkb create api --group {} --version {} --kind {} --image memcached:1.6.26-alpine3.19",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    let Some(options) = &resolved.image else {
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
        return Ok(());
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
    options.check()?;
    Ok(())
}

/// The group, version and kind asked for: a new custom resource's names by the model's
/// rules, or with `--no-resource` a type that exists.
fn names_asked(
    args: &CreateApiArgs,
    asked: &Asked,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    if asked.resource {
        return Ok(api.check(&project.domain, args.plural.is_some())?);
    }
    let gvk = &args.gvk;
    names::check_kind(&gvk.kind)?;
    names::check_version(&gvk.version)?;
    let own = project
        .find(&gvk.group, &gvk.version, &gvk.kind)
        .is_some_and(|r| r.api.is_some());
    if own {
        return Ok(());
    }
    if builtin_kinds::CREATE_ONLY_KINDS.iter().any(|k| {
        k.group == rbac::display_group(&gvk.group) && k.version == gvk.version && k.kind == gvk.kind
    }) {
        bail!(
            "{}/{} {} is a create-only kind (a review or binding request): it cannot be listed or watched, \
             so no controller can reconcile it",
            gvk.group,
            gvk.version,
            gvk.kind
        );
    }
    if !api.builtin {
        bail!(
            "--no-resource needs an existing type, and {}/{} {} is neither an API of this project nor a \
             built-in Kubernetes kind known to k8s-openapi {}.\n  \
             Built-in kinds of that group and version: {}\n  \
             example:  rkb create api --group core --version v1 --kind Pod --no-resource",
            gvk.group,
            gvk.version,
            gvk.kind,
            crate::K8S_OPENAPI_VERSION,
            suggestions(&gvk.group, &gvk.version)
        );
    }
    Ok(())
}

/// A namespace-scoped manager's Roles cannot grant a watch of cluster-scoped objects.
fn check_scope_fits_the_manager(
    args: &CreateApiArgs,
    asked: &Asked,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    if !project.namespaced || !asked.controller || api.namespaced {
        return Ok(());
    }
    let hint = if asked.resource {
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

/// `--force` without `--image` regenerates an image API as a plain one, whole: the image
/// variant's controller and tests need its types, and its types are no plain controller's.
fn check_image_kept_whole(resolved: &Resolved) -> anyhow::Result<()> {
    let (args, api) = (resolved.args, &resolved.api);
    let Some(recorded) = &resolved.dropped else {
        return Ok(());
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
    Ok(())
}

/// The flags a refusal's example keeps: those that are not about names.
fn kept_flags(args: &CreateApiArgs) -> String {
    [
        (args.no_controller, " --no-controller"),
        (args.cluster_scoped, " --cluster-scoped"),
        (args.force, " --force"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

/// The type names a kind cannot take: what the Rust templates that bring the kind into
/// scope import and define, in the variant asked for (`--image` or not). A controller and
/// webhooks may come later, so their templates count too.
pub(super) fn taken_names(image: bool) -> BTreeMap<String, String> {
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
    let templates = api
        .filter_map(Entry::template)
        .chain(create_webhook::PLAN.iter().filter_map(Entry::template));
    let names_the_kind = |source: &str| {
        ["api.kind", "api.type_path", "hook.kind", "hook.use_path"]
            .iter()
            .any(|name| source.contains(name))
    };
    crate::scaffold::rust_text::names_taken_by(
        templates
            .filter(|t| t.ends_with(".rs.tera"))
            .filter_map(|t| Some((t, Templates::source(t)?)))
            .filter(|(_, source)| names_the_kind(source)),
    )
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
fn check_same_scope(asked: &Asked, project: &Project, api: &model::Resource) -> anyhow::Result<()> {
    if !asked.resource || api.builtin {
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
pub(super) fn check_not_scaffolded(
    asked: &Asked,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    let existing = project.find(&api.group, &api.version, &api.kind);
    if let Some(existing) = existing
        && !asked.force
    {
        let controller_exists = match asked.named {
            Some(name) => existing.has_controller_named(name),
            None => existing.controller,
        };
        let what = match (
            asked.resource && existing.api.is_some(),
            asked.controller && controller_exists,
        ) {
            (true, _) => Some("the API"),
            (false, true) => Some("a controller for"),
            (false, false) => None,
        };
        if let Some(name) = asked.named
            && what.is_some()
        {
            let (head, fix) = if asked.resource && existing.api.is_some() {
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

/// A controller's name is its metrics label and `--controller-concurrency` key, and its
/// module a file: two controllers cannot share either.
fn check_controller_clash(
    asked: &Asked,
    project: &Project,
    api: &model::Resource,
    layout: &Layout,
    changes: &Changes,
) -> anyhow::Result<()> {
    let named = asked.named;
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
    if named.is_some() && !asked.force && changes.exists(&layout.controller_file)? {
        bail!(
            "{} exists already and PROJECT records no controller there: rkb does not overwrite \
             it.\n  Move it away, or choose another --controller-name",
            layout.controller_file
        );
    }
    Ok(())
}

/// The same kind in another group (or version) would share a controller module or roles.
pub(super) fn check_same_kind_elsewhere(
    asked: &Asked,
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
    if asked.controller
        && asked.named.is_none()
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
    if asked.resource
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

/// Every controller PROJECT records, with where it lives: each kind's default controller
/// and its named ones.
fn controllers<'a>(
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
