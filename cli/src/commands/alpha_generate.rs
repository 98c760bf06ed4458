//! `rkb alpha generate`: scaffolds a project again, with this rkb, from its PROJECT file,
//! like kubebuilder's `alpha generate`.
//!
//! It replays what PROJECT records as in-process calls of the other commands (`init`,
//! every `create api` in PROJECT's order, then every `create webhook`), into an output
//! directory that is absent or empty; the input is only read. The boilerplate,
//! `.cargo/config.toml` and the grafana plugin's list of custom metrics of the input are
//! copied first, so the headers of the generated files, the source of rkb's crates and the
//! custom metrics' dashboard stay as they were.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::Parser;

use crate::cli::{AlphaGenerateArgs, Cli};
use crate::model;
use crate::project::{self, Project, Resource};

/// The input's files kept as they are: the license header and the source of rkb's crates.
const CARGO_CONFIG: &str = ".cargo/config.toml";

pub fn alpha_generate(args: &AlphaGenerateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let input = &args.input_dir;
    let output = args
        .output_dir
        .clone()
        .unwrap_or_else(|| generated_beside(input));
    let project = super::load_project(input, out)?;
    check_plugins(&project, input)?;
    let kept = Kept::read(&project, input)?;
    let created = prepare_output(input, &output)?;

    let steps = replay(&project, input, kept.boilerplate.as_deref(), &output);
    let result = kept
        .write(&output)
        .and_then(|()| run_steps(&steps, input, out))
        .and_then(|()| keep_order(&project, &output));
    if let Err(error) = result {
        undo(&output, created);
        return Err(error.context(format!(
            "nothing was left in {}; {} is unchanged",
            output.display(),
            input.display()
        )));
    }
    // The chart is made of the project's CRDs, which `make manifests` writes: the helm
    // plugin is replayed after it (or, without it, left to the next `make manifests`).
    if args.no_manifests {
        replay_helm(&project, &output, true, out)?;
        writeln!(
            out,
            "\n{} scaffolded again from {} in {}. Next: `make manifests` there (skipped: --no-manifests).",
            project.project_name,
            input.join(project::FILE_NAME).display(),
            output.display()
        )?;
        return Ok(());
    }
    make_manifests(&output, out)?;
    replay_helm(&project, &output, false, out)?;
    writeln!(
        out,
        "\n{} scaffolded again from {} in {}.",
        project.project_name,
        input.join(project::FILE_NAME).display(),
        output.display()
    )?;
    Ok(())
}

/// The input's files the output keeps as they are: the license header, the source of rkb's
/// crates and the grafana plugin's list of custom metrics (the user's: the replayed plugin
/// makes their dashboard of it).
struct Kept {
    boilerplate: Option<String>,
    cargo_config: Option<String>,
    custom_metrics: Option<String>,
}

impl Kept {
    fn read(project: &Project, input: &Path) -> anyhow::Result<Self> {
        let read = |path: &str| crate::scaffold::read_optional(&input.join(path));
        Ok(Self {
            boilerplate: read(model::BOILERPLATE)?,
            cargo_config: read(CARGO_CONFIG)?,
            custom_metrics: match project.plugins.grafana {
                Some(_) => read(crate::grafana::CONFIG)?,
                None => None,
            },
        })
    }

    fn write(&self, output: &Path) -> anyhow::Result<()> {
        for (path, text) in [
            (model::BOILERPLATE, &self.boilerplate),
            (CARGO_CONFIG, &self.cargo_config),
            (crate::grafana::CONFIG, &self.custom_metrics),
        ] {
            if let Some(text) = text {
                write_new(&output.join(path), text)?;
            }
        }
        Ok(())
    }
}

/// Runs each replayed command in-process, as the user would have typed it.
fn run_steps(steps: &[Vec<String>], input: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
    for step in steps {
        writeln!(out, "$ {}", shown(step))?;
        // Its `init` passes --rkb-source registry, so $RKB_PATH does not count.
        let cli = Cli::try_parse_from(step)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("cannot replay `{}`", shown(step)))?;
        super::run(cli, out).with_context(|| {
            format!(
                "replaying {} failed at `{}`",
                input.join(project::FILE_NAME).display(),
                shown(step)
            )
        })?;
    }
    Ok(())
}

/// `rkb edit --plugins helm` in the output, when the input has the plugin.
fn replay_helm(
    project: &Project,
    output: &Path,
    no_chart: bool,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if project.plugins.helm.is_none() {
        return Ok(());
    }
    let dir = output.to_string_lossy().into_owned();
    let mut step = vec!["rkb", "edit", "--dir", &dir, "--plugins", "helm"];
    if no_chart {
        step.push("--no-chart");
    }
    let step: Vec<String> = step.into_iter().map(String::from).collect();
    writeln!(out, "$ {}", shown(&step))?;
    let cli = Cli::try_parse_from(&step).map_err(|e| anyhow::anyhow!("{e}"))?;
    super::run(cli, out).with_context(|| format!("replaying `{}` failed", shown(&step)))
}

fn make_manifests(output: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "$ make manifests  (in {})", output.display())?;
    let status = std::process::Command::new("make")
        .arg("manifests")
        .current_dir(output)
        .status()
        .context("cannot run `make`: install make, or pass --no-manifests and run it later")?;
    if !status.success() {
        bail!(
            "`make manifests` failed in {} ({status}); the scaffold is there: fix the cause and \
             run `make manifests` in it again",
            output.display()
        );
    }
    Ok(())
}

/// Puts the output PROJECT's resources in the input's order: a built-in kind with webhooks
/// only is recorded by its `create webhook`, which the replay runs after every API.
fn keep_order(input: &Project, output: &Path) -> anyhow::Result<()> {
    let mut generated = Project::load(output)?;
    let position = |r: &Resource| {
        input
            .resources
            .iter()
            .position(|i| i.group == r.group && i.version == r.version && i.kind == r.kind)
    };
    generated
        .resources
        .sort_by_key(|r| position(r).unwrap_or(usize::MAX));
    let path = output.join(project::FILE_NAME);
    std::fs::write(&path, generated.to_yaml())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `<input>-generated`, beside the input.
fn generated_beside(input: &Path) -> PathBuf {
    let absolute = std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf());
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "project".into());
    absolute.with_file_name(format!("{name}-generated"))
}

/// Refuses plugins rkb does not know: replaying without them would drop what they made.
fn check_plugins(project: &Project, input: &Path) -> anyhow::Result<()> {
    if let Some(key) = project.plugins.other.keys().next() {
        bail!(
            "{} records options of the plugin {key:?}, which this rkb does not know, so it cannot \
             scaffold what that plugin made.\n  \
             rkb knows the plugin \"deploy-image.rkb.io/v1-alpha\" (`rkb create api --image`). \
             Remove the {key:?} entry from a copy of the project if what it made may be dropped, \
             or use the tool that wrote it",
            input.join(project::FILE_NAME).display()
        );
    }
    Ok(())
}

/// Checks that `output` is absent or an empty directory outside the input, then creates
/// it; returns whether it was created (so a failed replay removes it again).
fn prepare_output(input: &Path, output: &Path) -> anyhow::Result<bool> {
    let input_abs = input
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", input.display()))?;
    if resolved(output)?.starts_with(&input_abs) {
        bail!(
            "the output directory {} is inside the input project {}; `rkb alpha generate` never \
             writes into its input.\n  Pick a directory outside it, e.g.  --output-dir {}",
            output.display(),
            input.display(),
            generated_beside(input).display()
        );
    }
    match std::fs::read_dir(output) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "the output directory {} is not empty; `rkb alpha generate` only writes into an \
                     absent or empty directory, so nothing of yours is overwritten.\n  \
                     Pick a new one (--output-dir {}), or empty this one first",
                    output.display(),
                    generated_beside(input).display()
                );
            }
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(output)
                .with_context(|| format!("cannot create {}", output.display()))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => bail!(
            "the output directory {} is a file; pass a directory that is absent or empty",
            output.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", output.display())),
    }
}

/// `path` made absolute through its nearest existing ancestor (symlinks resolved).
fn resolved(path: &Path) -> anyhow::Result<PathBuf> {
    let absolute =
        std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let Some(parent) = existing.parent() else {
            return Ok(absolute);
        };
        rest.push(existing.file_name().unwrap_or_default().to_owned());
        existing = parent;
    }
    let mut out = existing.canonicalize()?;
    out.extend(rest.iter().rev());
    Ok(out)
}

fn write_new(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Removes what a failed replay wrote: the directory it created, or the contents of the
/// empty one it was given.
fn undo(output: &Path, created: bool) {
    if created {
        let _ = std::fs::remove_dir_all(output);
        return;
    }
    if let Ok(entries) = std::fs::read_dir(output) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

pub(super) fn shown(step: &[String]) -> String {
    step.iter()
        .map(|word| {
            if word.is_empty() || word.contains(|c: char| c.is_whitespace() || c == '"') {
                format!("{word:?}")
            } else {
                word.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The rkb invocations that scaffold `project` again in `output`, in order. `input` is
/// read for where the multigroup layout began (see [`multigroup_from`]).
pub(super) fn replay(
    project: &Project,
    input: &Path,
    boilerplate: Option<&str>,
    output: &Path,
) -> Vec<Vec<String>> {
    let replay = Replay {
        project,
        input,
        dir: output.to_string_lossy().into_owned(),
    };
    let mut init = replay.init(boilerplate);
    // PROJECT's resources are in creation order. Webhooks come after the APIs of their
    // layout (a conversion webhook needs its spokes).
    let resources = &project.resources;
    let mut steps = Vec::new();
    match multigroup_from(project, input) {
        None => {
            steps.push(init);
            steps.extend(replay.resources(resources));
        }
        Some(0) => {
            init.push("--multigroup".into());
            steps.push(init);
            steps.extend(replay.resources(resources));
        }
        Some(at) => {
            let (before, after) = resources.split_at(at);
            steps.push(init);
            steps.extend(replay.resources(before));
            steps.push(words(&[
                "rkb",
                "edit",
                "--dir",
                &replay.dir,
                "--multigroup",
            ]));
            steps.extend(replay.resources(after));
        }
    }
    let plugins = [
        ("grafana", project.plugins.grafana.is_some()),
        ("autoupdate", project.plugins.autoupdate.is_some()),
    ];
    for (plugin, recorded) in plugins {
        if recorded {
            steps.push(words(&[
                "rkb",
                "edit",
                "--dir",
                &replay.dir,
                "--plugins",
                plugin,
            ]));
        }
    }
    steps
}

/// The words of a command line, owned.
fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

/// What [`replay`] builds its steps from: PROJECT, the input directory and the output's.
struct Replay<'a> {
    project: &'a Project,
    input: &'a Path,
    /// The output directory, as the steps' `--dir`.
    dir: String,
}

impl Replay<'_> {
    /// `rkb init` with the input's domain, name, header and scope.
    fn init(&self, boilerplate: Option<&str>) -> Vec<String> {
        let project = self.project;
        let mut init = words(&["rkb", "init", "--dir", &self.dir]);
        init.extend(words(&[
            "--domain",
            &project.domain,
            "--project-name",
            &project.project_name,
        ]));
        let (owner, apache2) = header_options(boilerplate);
        if let Some(owner) = owner {
            init.extend(words(&["--owner", &owner]));
        }
        if !apache2 {
            init.extend(words(&["--license", "none"]));
        }
        if project.namespaced {
            init.push("--namespaced".into());
        }
        // Always said: a project that does not record it is from before the choice, when
        // every project used cert-manager, not init's default.
        init.extend(words(&[
            "--webhook-certs",
            project.webhook_certs().as_str(),
        ]));
        // The copied `.cargo/config.toml` keeps the input's source of rkb's crates; without
        // one, the input took them from the registry.
        init.extend(words(&["--rkb-source", "registry"]));
        init
    }

    /// The APIs of `resources`, then their webhooks.
    fn resources(&self, resources: &[Resource]) -> Vec<Vec<String>> {
        // A built-in kind with webhooks only has no `create api` step.
        let scaffolded = |r: &&Resource| r.has_api_scaffold();
        let apis = resources
            .iter()
            .filter(scaffolded)
            .flat_map(|r| self.api_steps(r));
        let webhooks = resources.iter().flat_map(|r| self.webhook_steps(r));
        apis.chain(webhooks).collect()
    }

    /// `rkb create <what> --dir <output> --group G --version V --kind K`.
    fn create(&self, what: &str, resource: &Resource) -> Vec<String> {
        words(&[
            "rkb",
            "create",
            what,
            "--dir",
            &self.dir,
            "--group",
            &resource.group,
            "--version",
            &resource.version,
            "--kind",
            &resource.kind,
        ])
    }

    /// The kind's API with its default controller (unless it has neither: a kind with
    /// only named controllers), then one step per named controller, as they were added.
    fn api_steps(&self, resource: &Resource) -> Vec<Vec<String>> {
        let first = (resource.api.is_some() || resource.external || resource.controller)
            .then(|| self.api(resource));
        let named = resource.controllers.iter().map(|named| {
            let mut step = self.create("api", resource);
            step.extend(words(&["--no-resource", "--controller-name", &named.name]));
            step
        });
        first.into_iter().chain(named).collect()
    }

    /// The `create api` of the kind's type and default controller.
    fn api(&self, resource: &Resource) -> Vec<String> {
        if resource.external {
            let mut api = words(&["rkb", "create", "api", "--dir", &self.dir]);
            // The types come from the CRD the input keeps, as they came the first time.
            let crd = crate::model::Resource::recorded(resource)
                .crd_file
                .unwrap_or_default();
            api.extend(words(&[
                "--external-crd",
                &self.input.join(crd).to_string_lossy(),
                "--version",
                &resource.version,
                "--kind",
                &resource.kind,
            ]));
            if !resource.controller {
                api.push("--no-controller".into());
            }
            return api;
        }
        let mut api = self.create("api", resource);
        match &resource.api {
            Some(recorded) => {
                api.extend(words(&["--resource", "--plural", &resource.plural]));
                api.push(
                    if recorded.namespaced {
                        "--namespaced"
                    } else {
                        "--cluster-scoped"
                    }
                    .into(),
                );
            }
            None => api.push("--no-resource".into()),
        }
        api.push(
            if resource.controller {
                "--controller"
            } else {
                "--no-controller"
            }
            .into(),
        );
        api.extend(self.image_flags(resource));
        api
    }

    /// The `--image` flags PROJECT's deploy-image plugin recorded for the kind.
    fn image_flags(&self, resource: &Resource) -> Vec<String> {
        let Some(image) = self.project.image(resource.gvk()) else {
            return Vec::new();
        };
        let mut flags = words(&["--image", &image.image]);
        let options = [
            ("--image-container-command", &image.container_command),
            ("--image-container-port", &image.container_port),
            ("--run-as-user", &image.run_as_user),
        ];
        for (flag, value) in options {
            if let Some(value) = value {
                flags.extend(words(&[flag, value]));
            }
        }
        flags
    }

    /// Each kind of webhook on its own, in the order kubebuilder's tutorials add them.
    fn webhook_steps(&self, resource: &Resource) -> Vec<Vec<String>> {
        let Some(hooks) = &resource.webhooks else {
            return Vec::new();
        };
        let base = self.create("webhook", resource);
        let mut steps = Vec::new();
        let mut add = |flags: Vec<String>| {
            let mut step = base.clone();
            step.extend(flags);
            steps.push(step);
        };
        if hooks.defaulting {
            let mut flags = words(&["--defaulting"]);
            if let Some(path) = &hooks.defaulting_path {
                flags.extend(words(&["--defaulting-path", path]));
            }
            add(flags);
        }
        if hooks.validation {
            let mut flags = words(&["--programmatic-validation"]);
            if let Some(path) = &hooks.validation_path {
                flags.extend(words(&["--validation-path", path]));
            }
            add(flags);
        }
        if hooks.conversion {
            let mut flags = words(&["--conversion"]);
            for spoke in &hooks.spoke {
                flags.extend(words(&["--spoke", spoke]));
            }
            add(flags);
        }
        steps
    }
}

/// Where the multigroup layout began: `None` for a single-group project, else the number
/// of PROJECT's resources scaffolded before `rkb edit --multigroup` (0: from `init` on).
///
/// PROJECT records the layout, not when it changed; the files do. `edit --multigroup`
/// moves controllers only, so a resource scaffolded before it keeps its single-group
/// roles (`config/rbac/<kind>_admin_role.yaml`) and webhook files
/// (`src/webhook/<version>/<kind>.rs`) in the input. The layout began after the last
/// resource that has them.
fn multigroup_from(project: &Project, input: &Path) -> Option<usize> {
    if !project.multigroup {
        return None;
    }
    // The input's files are there or not: this `exists` never fails.
    let exists = |file: &str| Ok(input.join(file).is_file());
    let single_group = |entry: &Resource| -> anyhow::Result<bool> {
        let api = model::Resource::recorded(entry);
        let roles = entry.api.is_some()
            && !entry.core
            && model::Layout::multigroup(&api).roles_left_single(&api, exists)?;
        let webhooks =
            entry.webhooks.is_some() && model::Layout::webhooks_left_single(&api, exists)?;
        Ok(roles || webhooks)
    };
    let last = project
        .resources
        .iter()
        .rposition(|entry| matches!(single_group(entry), Ok(true)));
    Some(last.map_or(0, |i| i + 1))
}

/// The `--owner` and `--license` that `rkb init` renders `boilerplate` from: its
/// `// Copyright <owner>.` line and whether it holds the Apache 2.0 notice.
fn header_options(boilerplate: Option<&str>) -> (Option<String>, bool) {
    let Some(text) = boilerplate else {
        return (None, false);
    };
    let owner = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("// Copyright "))
        .map(|rest| rest.strip_suffix('.').unwrap_or(rest).to_owned());
    (
        owner,
        text.contains("Licensed under the Apache License, Version 2.0"),
    )
}
