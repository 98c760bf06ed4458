//! `create api --external-crd`: a controller for a kind another project defines, with
//! Rust types written from its CRD.

use std::io::Write;
use std::path::Path;

use anyhow::bail;

use super::checks::{check_not_scaffolded, check_same_kind_elsewhere, taken_names};
use super::context::{Context, External};
use super::resolve::Asked;
use super::{CreateApiArgs, EXTERNAL_MOD, Switches};
use crate::model::{self, Layout, ProjectNames};
use crate::names;
use crate::project::Project;
use crate::scaffold::Changes;

/// The model of `create api --external-crd`: the kind's types from its CRD, a controller
/// for it, and PROJECT's `external: true` entry.
pub(super) fn external_model(
    args: &CreateApiArgs,
    file: &Path,
    project: &Project,
    changes: &Changes,
    out: &mut dyn Write,
) -> anyhow::Result<(Context, Switches)> {
    let version = (!args.gvk.version.is_empty()).then_some(args.gvk.version.as_str());
    let kind = (!args.gvk.kind.is_empty()).then_some(args.gvk.kind.as_str());
    let crd = crate::external::read(file, version, kind)?;
    let api = model::Resource::external(&crd);
    let domain = crd.group.split_once('.').map_or("", |(_, d)| d).to_owned();
    let entry = api.entry(&domain, false, args.wants_controller());
    let mut planned = project.clone();
    planned.upsert(entry.clone());
    let kept = kept_crd(&api, changes)?;
    checks(args, file, &crd, &api, project, &planned, &entry)?;
    check_kept_crd(args, file, &crd, &api, kept.as_ref())?;
    let (context, switches) = external_context(planned, api, &crd, entry.controller, changes)?;
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

/// Every check of `create api --external-crd`, in this order: the CRD is another
/// project's, its names make Rust names, the kind is new here, and PROJECT after the
/// command (`planned`, with `entry`) is sound.
fn checks(
    args: &CreateApiArgs,
    file: &Path,
    crd: &crate::external::ExternalCrd,
    api: &model::Resource,
    project: &Project,
    planned: &Project,
    entry: &crate::project::Resource,
) -> anyhow::Result<()> {
    check_external_group(crd, project)?;
    let given = |flag: &str| !flag.is_empty();
    names::check_kind(&crd.type_name).map_err(|e| from_file(file, given(&args.gvk.kind), e))?;
    names::check_module_name("--version", &crd.version, "--version v1")
        .map_err(|e| from_file(file, given(&args.gvk.version), e))?;
    names::check_kind_not_taken(&api.kind, &taken_names(false))?;
    let asked = Asked::new(args, &api.kind);
    check_not_scaffolded(&asked, project, api)?;
    check_other_version_controller(file, &asked, project, api)?;
    check_same_kind_elsewhere(&asked, project, api)?;
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
    planned.check_resource_names_keeping(entry, "")?;
    if planned.multigroup {
        names::check_kind_not_group(&api.kind, &api.group)?;
    }
    Ok(())
}

/// One controller reconciles an external kind, whichever version it reads: another
/// version's types are added beside it without one (kubebuilder's `--controller=false`).
fn check_other_version_controller(
    file: &Path,
    asked: &Asked,
    project: &Project,
    api: &model::Resource,
) -> anyhow::Result<()> {
    let Some(other) = project.resources.iter().find(|r| {
        r.external
            && r.controller
            && r.api_group() == api.api_group
            && r.kind == api.kind
            && r.version != api.version
    }) else {
        return Ok(());
    };
    if !asked.controller {
        return Ok(());
    }
    let layout = Layout::recorded(project, &model::Resource::recorded(other));
    bail!(
        "the external kind {kind} {group} has a controller already ({}, which reconciles \
         its version {}), and a kind gets one controller module, whichever version it reads.\n  \
         To add the types of {version} beside {1}'s without a controller:  rkb create api \
         --external-crd {} --version {version} --kind {kind} --no-controller",
        layout.controller_file,
        other.version,
        file.display(),
        kind = api.kind,
        group = api.api_group,
        version = api.version,
    );
}

/// The CRD the project keeps for another version of the kind (the same file serves
/// every version), before this command replaces it.
fn kept_crd(api: &model::Resource, changes: &Changes) -> anyhow::Result<Option<(String, String)>> {
    let file = api.crd_file.clone().unwrap_or_default();
    Ok(changes.read(&file)?.map(|text| (file, text)))
}

/// Another version's types were written from the CRD the project keeps: a different CRD
/// replaces it only with `--force`, which says the kept types are to be regenerated too.
fn check_kept_crd(
    args: &CreateApiArgs,
    file: &Path,
    crd: &crate::external::ExternalCrd,
    api: &model::Resource,
    kept: Option<&(String, String)>,
) -> anyhow::Result<()> {
    let Some((kept_file, text)) = kept else {
        return Ok(());
    };
    if args.force || *text == crd.yaml {
        return Ok(());
    }
    bail!(
        "{kept_file} holds another copy of the CRD {}.{} than {}: the types of the kind's \
         other versions were written from it, and their tests compare them with it.\n  \
         To replace it, run again with --force, then regenerate the other versions' types \
         from the same file:  rkb create api --external-crd {2} --version <version> --kind {} --force",
        api.plural,
        api.api_group,
        file.display(),
        api.kind,
    );
}

/// A name the CRD gave, not a flag (none was `given`), is blamed on the CRD's file.
fn from_file(file: &Path, given: bool, invalid: names::InvalidInput) -> anyhow::Error {
    if given {
        return invalid.into();
    }
    let what = invalid.flag.trim_start_matches("--");
    let hint = if what == "version" {
        format!(
            "Choose another version the CRD serves:  rkb create api --external-crd {} --version <version>",
            file.display()
        )
    } else {
        "An external kind keeps the names its own project gave it, so rkb cannot write Rust \
         types for this one"
            .to_owned()
    };
    anyhow::anyhow!(
        "the CRD in {} has the {what} {:?} (rkb takes the CRD's own when no --{what} is given), \
         which rkb cannot derive Rust names from: {}\n  accepted: {}\n  {hint}",
        file.display(),
        invalid.value,
        invalid.problem,
        invalid.accepted,
    )
}

/// The context and switches of an external kind's scaffold, for `create api` and for
/// what `delete api` rebuilds from PROJECT and the kept CRD.
pub(super) fn external_context(
    project: Project,
    api: model::Resource,
    crd: &crate::external::ExternalCrd,
    controller: bool,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let generated = crate::external::types(crd);
    let mut api = api;
    api.sample_fields = generated.sample_fields.clone();
    // PROJECT records the type's name; the CRD, the kind's.
    api.wire_kind.clone_from(&crd.kind);
    let layout = Layout::in_project(&project, &api, changes)?.external(&api);
    let switches = Switches {
        resource: false,
        controller,
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
            crd.type_name
        );
    }
    Ok(())
}
