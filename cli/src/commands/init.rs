//! `rkb init`: a new operator project that builds and passes its tests as generated.

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde::Serialize;

use crate::cli::{InitArgs, License, RkbSource};
use crate::model::{self, ProjectNames};
use crate::names;
use crate::project::{self, Project, WebhookCerts};
use crate::rkb_crates;
use crate::scaffold::{Changes, Entry, IfExists, Templates, plan};

/// What the templates of `rkb init` see.
#[derive(Debug, Serialize)]
pub(super) struct Context {
    #[serde(flatten)]
    pub names: ProjectNames,
    pub owner: Option<String>,
    pub apache2: bool,
    /// The header from `--license-file`, as comment lines, instead of owner and license.
    pub license_header: Option<String>,
    /// The version requirement on rkb's crates (`0.2`).
    pub rkb_requirement: String,
    /// What `.cargo/config.toml` patches rkb's crates to, for `--rkb-source path`.
    pub rkb_source_kind: Option<&'static str>,
    pub rkb_crates: Vec<rkb_crates::Patch>,
    pub kube_version: &'static str,
    pub k8s_openapi_version: &'static str,
    pub k8s_api_feature: &'static str,
    /// The envtest release the Makefile records (`ENVTEST_K8S_VERSION`), e.g. `1.37.2`.
    pub envtest_k8s_version: &'static str,
    /// The project is a cargo workspace of its own (operator, API crate, hack crate); false
    /// inside another workspace, which lists them as members instead.
    pub own_workspace: bool,
    #[serde(skip)]
    pub project: Project,
}

impl plan::Model for Context {
    fn project(&self) -> &Project {
        &self.project
    }
}

/// Where the webhooks' certificates come from: `--webhook-certs`, else the manager itself,
/// except in a namespace-scoped operator, which cannot make them.
fn webhook_certs(args: &InitArgs) -> anyhow::Result<WebhookCerts> {
    match (args.webhook_certs, args.namespaced) {
        (Some(WebhookCerts::SelfManaged), true) => {
            bail!("{}", WebhookCerts::NOT_NAMESPACED)
        }
        (Some(certs), _) => Ok(certs),
        (None, true) => Ok(WebhookCerts::CertManager),
        (None, false) => Ok(WebhookCerts::SelfManaged),
    }
}

/// What `init` was asked for, as far as it changes the files written.
#[derive(Debug, Clone, Copy)]
pub(super) struct Switches {
    /// rkb's crates come from an rkb source on this machine: `.cargo/config.toml` patches them.
    pub patch: bool,
    /// A namespace-scoped operator: no ClusterRoleBinding (role.yaml binds its Role).
    pub namespaced: bool,
}

/// Files of a new project. A file already there (a README, a .gitignore) is the user's:
/// it is kept as it is.
pub(super) const PLAN: &[Entry<Switches>] = &[
    Entry::project().if_exists(IfExists::Keep),
    Entry::shared("Cargo.toml", "init/Cargo.toml.tera"),
    Entry::shared(".cargo/config.toml", "init/cargo/config.toml.tera").when(|on| on.patch),
    Entry::shared("README.md", "init/README.md.tera"),
    Entry::shared("Makefile", "init/Makefile.tera"),
    Entry::shared("Dockerfile", "init/Dockerfile.tera"),
    Entry::shared(".dockerignore", "init/dockerignore.tera"),
    Entry::shared(".gitignore", "init/gitignore.tera"),
    Entry::shared("AGENTS.md", "init/AGENTS.md.tera"),
    Entry::shared("rustfmt.toml", "init/rustfmt.toml.tera"),
    Entry::shared("clippy.toml", "init/clippy.toml.tera"),
    Entry::shared(
        ".github/workflows/lint.yml",
        "init/github/workflows/lint.yml.tera",
    ),
    Entry::shared(
        ".github/workflows/test.yml",
        "init/github/workflows/test.yml.tera",
    ),
    Entry::shared(
        ".github/workflows/test-e2e.yml",
        "init/github/workflows/test-e2e.yml.tera",
    ),
    Entry::shared(
        ".devcontainer/devcontainer.json",
        "init/devcontainer/devcontainer.json.tera",
    ),
    Entry::shared(model::BOILERPLATE, "init/boilerplate.rs.txt.tera"),
    Entry::shared(model::MAIN, "init/src/main.rs.tera"),
    Entry::shared(model::LIB, "init/src/lib.rs.tera"),
    Entry::shared(model::API_CARGO, "init/api/Cargo.toml.tera"),
    Entry::shared(model::API_LIB, "init/api/lib.rs.tera"),
    Entry::shared(
        model::HACK_CARGO,
        "init/hack/workspace-hack/Cargo.toml.tera",
    ),
    Entry::shared(model::HACK_LIB, "init/hack/workspace-hack/lib.rs.tera"),
    Entry::shared(model::CONTROLLERS, "init/src/controller/mod.rs.tera"),
    Entry::shared(model::API_GENERATOR, "init/api/bin/manifests.rs.tera"),
    Entry::shared(
        model::DEFAULT_KUSTOMIZATION,
        "init/config/default/kustomization.yaml.tera",
    ),
    Entry::shared(
        "config/manager/kustomization.yaml",
        "init/config/manager/kustomization.yaml.tera",
    ),
    Entry::shared(model::MANAGER, "init/config/manager/manager.yaml.tera"),
    Entry::shared(
        model::RBAC_KUSTOMIZATION,
        "init/config/rbac/kustomization.yaml.tera",
    ),
    Entry::shared(
        "config/rbac/service_account.yaml",
        "init/config/rbac/service_account.yaml.tera",
    ),
    Entry::shared("config/rbac/role.yaml", "init/config/rbac/role.yaml.tera"),
    Entry::shared(
        "config/rbac/role_binding.yaml",
        "init/config/rbac/role_binding.yaml.tera",
    )
    .when(|on| !on.namespaced),
    Entry::shared(
        model::CRD_KUSTOMIZATION,
        "init/config/crd/kustomization.yaml.tera",
    ),
    Entry::shared(
        model::SAMPLES_KUSTOMIZATION,
        "init/config/samples/kustomization.yaml.tera",
    ),
    Entry::shared("tests/e2e.rs", "init/tests/e2e.rs.tera"),
    Entry::shared(
        "config/default/metrics_service.yaml",
        "init/config/default/metrics_service.yaml.tera",
    ),
    Entry::shared(
        "config/default/manager_metrics_patch.yaml",
        "init/config/default/manager_metrics_patch.yaml.tera",
    ),
    Entry::shared(
        "config/rbac/leader_election_role.yaml",
        "init/config/rbac/leader_election_role.yaml.tera",
    ),
    Entry::shared(
        "config/rbac/leader_election_role_binding.yaml",
        "init/config/rbac/leader_election_role_binding.yaml.tera",
    ),
    Entry::shared(
        "config/rbac/metrics_auth_role.yaml",
        "init/config/rbac/metrics_auth_role.yaml.tera",
    ),
    Entry::shared(
        "config/rbac/metrics_auth_role_binding.yaml",
        "init/config/rbac/metrics_auth_role_binding.yaml.tera",
    ),
    Entry::shared(
        "config/rbac/metrics_reader_role.yaml",
        "init/config/rbac/metrics_reader_role.yaml.tera",
    ),
    Entry::shared(
        "config/network-policy/kustomization.yaml",
        "init/config/network-policy/kustomization.yaml.tera",
    ),
    Entry::shared(
        "config/network-policy/allow-metrics-traffic.yaml",
        "init/config/network-policy/allow-metrics-traffic.yaml.tera",
    ),
    Entry::shared(
        "config/sharding/kustomization.yaml",
        "init/config/sharding/kustomization.yaml.tera",
    ),
    Entry::shared(
        "config/sharding/manager_sharding_patch.yaml",
        "init/config/sharding/manager_sharding_patch.yaml.tera",
    ),
    Entry::shared(
        "config/sharding/shard_role.yaml",
        "init/config/sharding/shard_role.yaml.tera",
    ),
    Entry::shared(
        "config/sharding/shard_role_binding.yaml",
        "init/config/sharding/shard_role_binding.yaml.tera",
    ),
    Entry::shared(
        "config/default/cert_metrics_manager_patch.yaml",
        "init/config/default/cert_metrics_manager_patch.yaml.tera",
    ),
    Entry::shared(
        "config/default/metrics_certificate_replacements.yaml",
        "init/config/default/metrics_certificate_replacements.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager-metrics/kustomization.yaml",
        "init/config/certmanager-metrics/kustomization.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager-metrics/issuer.yaml",
        "init/config/certmanager-metrics/issuer.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager-metrics/certificate.yaml",
        "init/config/certmanager-metrics/certificate.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager-metrics/kustomizeconfig.yaml",
        "init/config/certmanager-metrics/kustomizeconfig.yaml.tera",
    ),
    Entry::shared(
        "config/prometheus/monitor_tls_patch.yaml",
        "init/config/prometheus/monitor_tls_patch.yaml.tera",
    ),
    Entry::shared(
        "config/prometheus/kustomization.yaml",
        "init/config/prometheus/kustomization.yaml.tera",
    ),
    // config/prometheus/monitor.yaml follows the certificates: webhook_certs::METRICS_PLAN.
];

/// What `init` refuses to scaffold over: signs of an existing project.
const PROJECT_MARKERS: &[&str] = &[project::FILE_NAME, "Cargo.toml", "Makefile", "src"];

pub fn init(args: &InitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    names::check_domain(&args.domain)?;
    let project_name = match &args.project_name {
        Some(name) => name.clone(),
        None => default_project_name(&args.dir)?,
    };
    names::check_project_name(&project_name)?;
    if let Some(owner) = &args.owner {
        names::check_owner(owner)?;
    }
    let webhook_certs = webhook_certs(args)?;
    // Opened first: an interrupted earlier `rkb init` is undone (or finished) before the
    // directory is judged, so a retry is not refused for the files it had left.
    let mut changes = Changes::open(&args.dir)?;
    refuse_an_existing_project(args)?;
    let templates = Templates::load()?;
    let context = context(args, &templates, project_name, webhook_certs)?;

    let switches = Switches {
        patch: context.rkb_source_kind.is_some(),
        namespaced: args.namespaced,
    };
    let applied = plan::apply(PLAN, &switches, &templates, &context, false, &mut changes)?;
    // A namespace-scoped operator's parts that `rkb edit --namespaced` switches, written the
    // same way.
    let scope = super::namespaced::Scope {
        namespaced: args.namespaced,
    };
    let scoped = super::namespaced::Context {
        names: &context.names,
        env_list_exists: false,
        project: &context.project,
    };
    plan::apply(
        super::namespaced::PLAN,
        &scope,
        &templates,
        &scoped,
        false,
        &mut changes,
    )?;
    // The metrics certificate's parts that `rkb edit --webhook-certs` switches, written the
    // same way.
    let self_managed = context.project.webhook_certs == Some(WebhookCerts::SelfManaged);
    let metrics = super::webhook_certs::MetricsContext {
        names: &context.names,
        self_managed_metrics: self_managed,
        project: &context.project,
    };
    plan::apply(
        super::webhook_certs::METRICS_PLAN,
        &super::webhook_certs::Metrics { self_managed },
        &templates,
        &metrics,
        false,
        &mut changes,
    )?;
    super::commit(changes, out)?;
    if let Some(warning) = &applied.warning {
        writeln!(out, "warning: {warning}")?;
    }
    for path in applied.kept {
        writeln!(out, "{:>8} {path} (exists; left as it was)", "keep")?;
    }
    if !context.own_workspace
        && let Some(workspace) = enclosing_workspace(&args.dir)?
    {
        writeln!(
            out,
            "\nnote: {} is inside the cargo workspace of {}, so it has no [workspace] of its own: \
             that workspace's members must list it, its api/ and its hack/workspace-hack/",
            args.dir.display(),
            workspace.display()
        )?;
    }
    add_plugins(args, out)?;
    writeln!(
        out,
        "\nNext: add an API with\n  rkb create api --group <group> --version v1alpha1 --kind <Kind>{}",
        if args.dir == Path::new(".") {
            String::new()
        } else {
            format!(" --dir {}", args.dir.display())
        }
    )?;
    Ok(())
}

/// `init` scaffolds into a directory without a project only.
fn refuse_an_existing_project(args: &InitArgs) -> anyhow::Result<()> {
    let found: Vec<&str> = PROJECT_MARKERS
        .iter()
        .copied()
        .filter(|f| args.dir.join(f).exists())
        .collect();
    if !found.is_empty() {
        bail!(
            "{} already holds a project ({} found); `rkb init` only scaffolds into a directory without \
             PROJECT, Cargo.toml, Makefile or src/.\n  \
             To add an API to an existing rkb project, run:  rkb create api --group <group> --version <version> --kind <Kind>\n  \
             To start afresh, use another directory:          {} --dir <new-dir>",
            args.dir.display(),
            found.join(", "),
            retry(args)
        );
    }
    Ok(())
}

/// The new project and what its templates read, header included: the license header comes
/// from `--license-file` or the boilerplate, rendered from this same context.
fn context(
    args: &InitArgs,
    templates: &Templates,
    project_name: String,
    webhook_certs: WebhookCerts,
) -> anyhow::Result<Context> {
    let license_header = args
        .license_file
        .as_deref()
        .map(license_header)
        .transpose()?;
    let (rkb_source_kind, rkb_crates) = match rkb_patches(args)? {
        Some((kind, patches)) => (Some(kind.describe()), patches),
        None => (None, Vec::new()),
    };
    let mut project = Project::new(&args.domain, &project_name);
    project.multigroup = args.multigroup;
    project.namespaced = args.namespaced;
    project.webhook_certs = Some(webhook_certs);
    let mut context = Context {
        // The header comes from the boilerplate, rendered below.
        names: ProjectNames::new(&project, ""),
        owner: args.owner.clone(),
        apache2: args.license == License::Apache2,
        license_header,
        rkb_requirement: rkb_crates::requirement(),
        rkb_source_kind,
        rkb_crates,
        kube_version: crate::KUBE_VERSION,
        k8s_openapi_version: crate::K8S_OPENAPI_VERSION,
        k8s_api_feature: crate::K8S_API_FEATURE,
        envtest_k8s_version: envtest_k8s_version(),
        own_workspace: enclosing_workspace(&args.dir)?.is_none(),
        project,
    };
    // The generated Cargo.toml itself says which crate names the project cannot take.
    let cargo_toml = templates.render_model("init/Cargo.toml.tera", &context)?;
    names::check_project_name_not_a_dependency(&project_name, &dependencies(&cargo_toml)?)
        .map_err(|e| match &args.project_name {
            Some(_) => e,
            None => from_directory_name(e, &directory_name(&args.dir)),
        })?;
    let boilerplate = templates.render_model("init/boilerplate.rs.txt.tera", &context)?;
    context.names = ProjectNames::new(&context.project, &boilerplate);
    Ok(context)
}

/// The `Cargo.toml` of the cargo workspace `dir` would be in, as `cargo new` finds it: the
/// nearest directory above with a `[workspace]` table.
pub(super) fn enclosing_workspace(dir: &Path) -> anyhow::Result<Option<std::path::PathBuf>> {
    let dir = std::path::absolute(dir)
        .with_context(|| format!("cannot resolve the directory {}", dir.display()))?;
    for ancestor in dir.ancestors().skip(1) {
        let manifest = ancestor.join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let table: toml::Table = toml::from_str(&text).with_context(|| {
            format!(
                "{} (the Cargo.toml of a directory above the project) is not valid TOML; \
                 rkb reads it to tell whether the project joins its workspace",
                manifest.display()
            )
        })?;
        if table.contains_key("workspace") {
            return Ok(Some(manifest));
        }
    }
    Ok(None)
}

/// kubebuilder's `init --plugins`: what `rkb edit --plugins` adds; the chart waits for the
/// first `make manifests`, as there is nothing to chart yet.
fn add_plugins(args: &InitArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let plugins = args.optional_plugins();
    if plugins.is_empty() {
        return Ok(());
    }
    let edit = crate::cli::EditArgs {
        multigroup: None,
        plugins,
        no_chart: true,
        webhook_certs: None,
        namespaced: None,
        dir: args.dir.clone(),
        kubebuilder: Default::default(),
    };
    super::edit::edit(&edit, out)
}

/// The header of `--license-file`: the file as it is when it is a Rust comment (`//` lines or
/// one `/* */` block, as kubebuilder's Go headers are), else each of its lines made a `//`
/// comment.
fn license_header(file: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file).with_context(|| {
        format!(
            "cannot read --license-file {}: give a text file with the header for generated \
             sources, e.g.  rkb init --domain example.com --license-file hack/header.txt",
            file.display()
        )
    })?;
    let text = text.trim_end();
    if text.trim().is_empty() {
        bail!(
            "--license-file {} is empty; for sources without a header, pass --license none \
             instead, e.g.  rkb init --domain example.com --license none",
            file.display()
        );
    }
    // A Go header is a /* */ block, which Rust has too.
    let block = text.trim_start().starts_with("/*") && text.ends_with("*/");
    let commented = block
        || text.lines().all(|line| {
            let line = line.trim_start();
            line.is_empty() || line.starts_with("//")
        });
    let header = if commented {
        format!("{text}\n")
    } else {
        text.lines()
            .map(|line| match line.trim_end() {
                "" => "//\n".to_owned(),
                line => format!("// {line}\n"),
            })
            .collect()
    };
    Ok(header)
}

/// The envtest release new projects record: the newest `rkb setup-envtest` builds, as
/// `ENVTEST_K8S_VERSION` spells it (no `v`).
pub(crate) fn envtest_k8s_version() -> &'static str {
    super::setup_envtest::default_release()
        .version
        .trim_start_matches('v')
}

fn default_project_name(dir: &Path) -> anyhow::Result<String> {
    let directory = directory_name(dir);
    let name = directory.to_ascii_lowercase();
    names::check_project_name(&name).map_err(|e| from_directory_name(e, &directory))?;
    Ok(name)
}

/// The name of `dir` itself, as the default project name starts from it.
fn directory_name(dir: &Path) -> String {
    std::path::absolute(dir)
        .ok()
        .and_then(|dir| {
            dir.components()
                .next_back()
                .and_then(|c| c.as_os_str().to_str().map(str::to_owned))
        })
        .unwrap_or_default()
}

/// A project name taken from the directory is refused: say where it came from, blame no
/// flag the user did not pass, and suggest a name made from the directory's if one works.
fn from_directory_name(mut e: names::InvalidInput, directory: &str) -> names::InvalidInput {
    e.flag = "project name";
    e.problem = format!(
        "no --project-name was given, so it would be the directory's name, and the directory \
         name {directory:?} cannot be the project name ({}); pass --project-name",
        e.problem
    );
    let mut suggestion = String::new();
    for c in directory.to_ascii_lowercase().chars() {
        match c {
            'a'..='z' | '0'..='9' => suggestion.push(c),
            _ if !suggestion.is_empty() && !suggestion.ends_with('-') => suggestion.push('-'),
            _ => {}
        }
    }
    suggestion.truncate(names::PROJECT_NAME_MAX);
    let suggestion = suggestion.trim_end_matches('-');
    if suggestion != e.value && names::check_project_name(suggestion).is_ok() {
        e.example = format!("--project-name {suggestion}");
    }
    e
}

/// The dependencies a rendered Cargo.toml declares, by the names it gives them (the
/// keys of `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]` and their
/// `[target.*]` forms, plus the `package` a key renames).
fn dependencies(cargo_toml: &str) -> anyhow::Result<Vec<String>> {
    const SECTIONS: &[&str] = &["dependencies", "dev-dependencies", "build-dependencies"];
    let manifest: toml::Table = cargo_toml
        .parse()
        .context("the generated Cargo.toml is not valid TOML (a bug in rkb's templates)")?;
    let targets = manifest
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flat_map(|targets| targets.values().filter_map(toml::Value::as_table));
    let mut names = Vec::new();
    for table in std::iter::once(&manifest).chain(targets) {
        for section in SECTIONS {
            let Some(deps) = table.get(*section).and_then(toml::Value::as_table) else {
                continue;
            };
            for (key, spec) in deps {
                names.push(key.clone());
                if let Some(package) = spec.get("package").and_then(toml::Value::as_str) {
                    names.push(package.to_owned());
                }
            }
        }
    }
    Ok(names)
}

/// The environment variable that stands for `--rkb-path`. Read here rather than by clap,
/// so that an error says which of the two it came from, and `--rkb-source registry` is not
/// refused for a default the user may not remember exporting.
const RKB_PATH_ENV: &str = "RKB_PATH";

/// The `[patch.crates-io]` entries for `--rkb-source path` (none for `registry`).
fn rkb_patches(
    args: &InitArgs,
) -> anyhow::Result<Option<(rkb_crates::SourceKind, Vec<rkb_crates::Patch>)>> {
    if args.rkb_source == RkbSource::Registry {
        // $RKB_PATH is a default for `path`; only a --rkb-path given with it contradicts.
        if let Some(path) = &args.rkb_path {
            bail!(
                "--rkb-path {} was given with --rkb-source registry, which takes rkb's crates from \
                 the registry and uses no path.\n  \
                 Drop one of them:  {retry} --rkb-source registry\n  \
                 or:                {retry} --rkb-path {}",
                path.display(),
                path.display(),
                retry = retry(args)
            );
        }
        return Ok(None);
    }
    let from_env = std::env::var_os(RKB_PATH_ENV).filter(|v| !v.is_empty());
    if args.rkb_path.is_none()
        && let Some(path) = from_env
    {
        let path = std::path::PathBuf::from(path);
        return rkb_crates::locate(&path, &args.dir, &retry(args))
            .map(Some)
            .with_context(|| {
                format!(
                    "{RKB_PATH_ENV}={} is set in the environment, and rkb takes it as --rkb-path; \
                     unset it, or pass --rkb-path to choose another source",
                    path.display()
                )
            });
    }
    let source = match (&args.rkb_path, rkb_crates::default_source()) {
        (Some(path), _) => path.clone(),
        (None, Some(checkout)) => checkout,
        (None, None) => bail!(
            "no rkb source to take rkb's crates from: this rkb was not built from a checkout that \
             still exists, and rkb's crates are not on crates.io yet.\n  \
             Pass one:  {retry} --rkb-path /path/to/rkb  (a checkout, or unpacked .crate files; or set RKB_PATH)\n  \
             or, once they are published:  {retry} --rkb-source registry",
            retry = retry(args)
        ),
    };
    rkb_crates::locate(&source, &args.dir, &retry(args)).map(Some)
}

/// The user's `rkb init` for a hint to complete: the domain and the flags a retry keeps
/// (the header's --owner aside: it needs quoting, and the default works).
fn retry(args: &InitArgs) -> String {
    let mut command = format!("rkb init --domain {}", args.domain);
    if let Some(name) = &args.project_name {
        command.push_str(&format!(" --project-name {name}"));
    }
    if args.license == License::None {
        command.push_str(" --license none");
    }
    if args.multigroup {
        command.push_str(" --multigroup");
    }
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_come_from_every_dependency_table() {
        let manifest = r#"
[package]
name = "op"

[dependencies]
kube = "5"
rkb-runtime = { path = "../runtime" }
json = { package = "serde_json", version = "1" }

[dev-dependencies]
tower-test = "0.4"

[target.'cfg(unix)'.build-dependencies]
cc = "1"
"#;
        let mut found = dependencies(manifest).unwrap();
        found.sort();
        assert_eq!(
            found,
            [
                "cc",
                "json",
                "kube",
                "rkb-runtime",
                "serde_json",
                "tower-test"
            ]
        );
        assert!(dependencies("[dependencies\n").is_err());
    }
}
