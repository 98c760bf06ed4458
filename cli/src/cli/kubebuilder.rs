//! kubebuilder v4's flags that rkb has no flag of its own for. Each is parsed (hidden from
//! help, so a kubebuilder command line reaches rkb) and then answered here, in one place:
//! taken with kubebuilder's meaning, ignored with a one-line note (it means nothing for a
//! Rust project), or refused with the reason and what to type instead.
//!
//! The flags of rkb that kubebuilder spells `--flag=false` take that spelling too
//! (`create api --resource=false`, `init --namespaced=false`, …).

use anyhow::{Error, anyhow};
use clap::{Args, ValueEnum};

use super::{Cli, Command, CreateCommand, EditPlugin};

/// kubebuilder's keys of the plugins every rkb project is made with (go/v4 is a bundle of
/// the other two), which `--plugins` may name without changing anything.
const LAYOUT_PLUGINS: &[&str] = &[
    "go/v4",
    "go.kubebuilder.io/v4",
    "base.go.kubebuilder.io/v4",
    "kustomize/v2",
    "kustomize.common.kubebuilder.io/v2",
];
const DEPLOY_IMAGE_PLUGIN: &[&str] = &[
    "deploy-image/v1-alpha",
    "deploy-image.go.kubebuilder.io/v1-alpha",
];

/// Checks the kubebuilder flags of a parsed command line and folds the ones rkb takes with
/// their meaning into rkb's own; returns the notes to print for the ones it ignores.
pub fn answer(cli: &mut Cli) -> Result<Vec<String>, Error> {
    let mut notes = Vec::new();
    match &mut cli.command {
        Command::Init(args) => args.kubebuilder.answer(&args.plugins, &mut notes)?,
        Command::Create(CreateCommand::Api(args)) => {
            args.fold_kubebuilder_switches();
            args.kubebuilder.answer(args.image.is_some(), &mut notes)?;
        }
        Command::Create(CreateCommand::Webhook(args)) => args.kubebuilder.answer(&mut notes)?,
        Command::Edit(args) => {
            if args.multigroup == Some(false) {
                return Err(anyhow!(
                    "--multigroup=false: rkb cannot move a project back to the single-group layout \
                     (its controllers would clash when two groups have a kind of the same name).\n  \
                     Leave the project as it is, or move the controllers back by hand"
                ));
            }
            if let Some(plugin) = args.plugins.iter().find_map(|p| refused_plugin(*p)) {
                return Err(plugin);
            }
            args.kubebuilder.answer(&mut notes)?;
        }
        _ => {}
    }
    Ok(notes)
}

/// The note for a kubebuilder flag rkb ignores: one line, saying why.
fn ignored(flag: &str, why: &str) -> String {
    format!("{flag} (kubebuilder's) changes nothing in rkb: {why}")
}

/// The note for a `--plugins` value naming the layout every rkb project has.
fn layout_plugin(plugin: &str) -> Option<String> {
    LAYOUT_PLUGINS.contains(&plugin).then(|| {
        ignored(
            &format!("--plugins {plugin}"),
            "every rkb project has kubebuilder's go/v4 layout, in Rust",
        )
    })
}

/// Whether a pflag boolean's value is false (`--make=false`).
fn is_false(value: &str) -> bool {
    matches!(value, "false" | "False" | "FALSE" | "f" | "F" | "0")
}

/// The refusal of an `edit --plugins` value rkb does not scaffold.
pub fn refused_plugin(plugin: EditPlugin) -> Option<Error> {
    match plugin {
        EditPlugin::Grafana | EditPlugin::Helm | EditPlugin::Autoupdate => None,
        EditPlugin::HelmV1Alpha => Some(anyhow!(
            "--plugins helm/v1-alpha: kubebuilder deprecated that chart for helm/v2-alpha, which is \
             the chart rkb writes.\n  Ask for it as helm, e.g.:  rkb edit --plugins helm"
        )),
    }
}

/// kubebuilder's `init` flags without an rkb flag of their own.
#[derive(Debug, Default, Args)]
pub struct InitFlags {
    /// kubebuilder: the Go module's path.
    #[arg(long, hide = true, value_name = "MODULE")]
    pub repo: Option<String>,
    /// kubebuilder: `go mod tidy` after init.
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub fetch_deps: Option<String>,
    /// kubebuilder: skip checking the Go version.
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub skip_go_version_check: Option<String>,
    /// kubebuilder: PROJECT's format version.
    #[arg(long, hide = true, value_name = "VERSION")]
    pub project_version: Option<String>,
}

impl InitFlags {
    /// Also answers init's `--plugins`, which takes kubebuilder's keys.
    fn answer(&self, plugins: &[String], notes: &mut Vec<String>) -> Result<(), Error> {
        if self.repo.is_some() {
            notes.push(ignored(
                "--repo",
                "it names a Go module; the Cargo package is named by --project-name",
            ));
        }
        if self.fetch_deps.is_some() {
            notes.push(ignored(
                "--fetch-deps",
                "cargo fetches the dependencies when the project is first built",
            ));
        }
        if self.skip_go_version_check.is_some() {
            notes.push(ignored(
                "--skip-go-version-check",
                "init checks no Go version (only `rkb setup-envtest` uses Go)",
            ));
        }
        for plugin in plugins {
            if let Some(note) = layout_plugin(plugin) {
                notes.push(note);
                continue;
            }
            match EditPlugin::from_str(plugin, false) {
                Ok(optional) => {
                    if let Some(refusal) = refused_plugin(optional) {
                        return Err(refusal);
                    }
                }
                Err(_) => {
                    return Err(anyhow!(
                        "--plugins {plugin}: rkb has no such plugin; init adds grafana, helm and \
                         autoupdate (also by kubebuilder's keys, grafana/v1-alpha, helm/v2-alpha and \
                         autoupdate/v1-alpha), and every \
                         project has go/v4's layout.\n  e.g.:  rkb init --domain example.com \
                         --plugins grafana,helm"
                    ));
                }
            }
        }
        match self.project_version.as_deref() {
            None => {}
            Some("3") => notes.push(ignored(
                "--project-version 3",
                "PROJECT is always written in format 3",
            )),
            Some(other) => {
                return Err(anyhow!(
                    "--project-version {other}: rkb writes PROJECT in format 3 only, as kubebuilder \
                     v4 does.\n  Leave the flag out, or pass --project-version 3"
                ));
            }
        }
        Ok(())
    }
}

const EXTERNAL_CRD_EXAMPLE: &str =
    "rkb create api --external-crd cert-manager.io_certificates.yaml";

/// kubebuilder's flags naming an API of another Go project (`create api` and `create
/// webhook` take the same three).
#[derive(Debug, Default, Args)]
pub struct ExternalApiFlags {
    /// kubebuilder: the Go package of an external API.
    #[arg(long, hide = true, value_name = "PACKAGE")]
    pub external_api_path: Option<String>,
    /// kubebuilder: the domain of an external API.
    #[arg(long, hide = true, value_name = "DOMAIN")]
    pub external_api_domain: Option<String>,
    /// kubebuilder: the Go module of an external API.
    #[arg(long, hide = true, value_name = "MODULE")]
    pub external_api_module: Option<String>,
}

impl ExternalApiFlags {
    /// The first of them given, if any.
    fn given(&self) -> Option<&'static str> {
        [
            ("--external-api-path", &self.external_api_path),
            ("--external-api-domain", &self.external_api_domain),
            ("--external-api-module", &self.external_api_module),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.is_some().then_some(flag))
    }
}

/// kubebuilder's `create api` flags without an rkb flag of their own.
#[derive(Debug, Default, Args)]
pub struct CreateApiFlags {
    /// kubebuilder: scaffold server-side apply (alpha).
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub ssa: Option<String>,
    /// kubebuilder: run `make generate` afterwards.
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub make: Option<String>,
    /// kubebuilder's deploy-image: run `make manifests` afterwards.
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub manifests: Option<String>,
    #[command(flatten)]
    pub external_api: ExternalApiFlags,
    /// kubebuilder: the plugins that scaffold the API.
    #[arg(long, hide = true, value_delimiter = ',', value_name = "PLUGIN,...")]
    pub plugins: Vec<String>,
}

impl CreateApiFlags {
    fn answer(&self, image: bool, notes: &mut Vec<String>) -> Result<(), Error> {
        if let Some(flag) = self.external_api.given() {
            return Err(anyhow!(
                "{flag}: rkb does not import an external API's Go package; it writes Rust types \
                 from the kind's CustomResourceDefinition, which also names its group and \
                 versions.\n  Pass the CRD's YAML instead, e.g.:  {EXTERNAL_CRD_EXAMPLE}"
            ));
        }
        if let Some(ssa) = &self.ssa {
            let why = if is_false(ssa) {
                "rkb's controllers always write with server-side apply"
            } else {
                "rkb's controllers write with server-side apply already"
            };
            notes.push(ignored("--ssa", why));
        }
        if self.make.is_some() {
            notes.push(ignored(
                "--make",
                "create never compiles the project; run `make manifests` when the types are ready",
            ));
        }
        if self.manifests.is_some() {
            notes.push(ignored(
                "--manifests",
                "create never compiles the project; run `make manifests` when the types are ready",
            ));
        }
        for plugin in &self.plugins {
            let plugin = plugin.as_str();
            if let Some(note) = layout_plugin(plugin) {
                notes.push(note);
            } else if DEPLOY_IMAGE_PLUGIN.contains(&plugin) && image {
                notes.push(ignored(
                    &format!("--plugins {plugin}"),
                    "--image is what scaffolds kubebuilder's deploy-image API in rkb",
                ));
            } else if DEPLOY_IMAGE_PLUGIN.contains(&plugin) {
                return Err(anyhow!(
                    "--plugins {plugin}: in rkb, --image chooses kubebuilder's deploy-image \
                     scaffold, and no --image was given.\n  Name the image the controller \
                     deploys, e.g.:  rkb create api --group cache --version v1alpha1 --kind \
                     Memcached --image memcached:1.6.26-alpine3.19"
                ));
            } else {
                return Err(anyhow!(
                    "--plugins {plugin}: create api takes no plugins in rkb; --image scaffolds \
                     kubebuilder's deploy-image API, and the optional plugins are added with \
                     `rkb edit`.\n  e.g.:  rkb edit --plugins grafana,helm"
                ));
            }
        }
        Ok(())
    }
}

/// kubebuilder's `create webhook` flags without an rkb flag of their own.
#[derive(Debug, Default, Args)]
pub struct CreateWebhookFlags {
    /// kubebuilder: the kind's plural.
    #[arg(long, hide = true, value_name = "PLURAL")]
    pub plural: Option<String>,
    /// kubebuilder: run `make generate` afterwards.
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub make: Option<String>,
    #[command(flatten)]
    pub external_api: ExternalApiFlags,
}

impl CreateWebhookFlags {
    fn answer(&self, notes: &mut Vec<String>) -> Result<(), Error> {
        if let Some(flag) = self.external_api.given() {
            return Err(anyhow!(
                "{flag}: webhooks for a kind another project defines are not supported yet \
                 (coming in a later rkb), and rkb names such a kind by its CRD, not a Go \
                 package.\n  For now, add its types and a controller:  {EXTERNAL_CRD_EXAMPLE}"
            ));
        }
        if self.plural.is_some() {
            notes.push(ignored(
                "--plural",
                "the kind's plural is the one PROJECT records for it",
            ));
        }
        if self.make.is_some() {
            notes.push(ignored(
                "--make",
                "create never compiles the project; run `make manifests` for the webhook configuration",
            ));
        }
        Ok(())
    }
}

/// kubebuilder's `edit` flags without an rkb flag of their own.
#[derive(Debug, Default, Args)]
pub struct EditFlags {
    /// kubebuilder: overwrite scaffolded files.
    #[arg(long, hide = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub force: Option<String>,
    /// kubebuilder: a new license header.
    #[arg(long, hide = true, value_name = "LICENSE")]
    pub license: Option<String>,
    /// kubebuilder: a new license header, from a file.
    #[arg(long, hide = true, value_name = "FILE")]
    pub license_file: Option<String>,
    /// kubebuilder: a new copyright owner in the header.
    #[arg(long, hide = true, value_name = "OWNER")]
    pub owner: Option<String>,
    /// kubebuilder's helm/v2-alpha: the manifests the chart is made from.
    #[arg(long, hide = true, value_name = "FILE")]
    pub manifests: Option<String>,
    /// kubebuilder's helm/v2-alpha: where the chart goes.
    #[arg(long, hide = true, value_name = "DIR")]
    pub output_dir: Option<String>,
}

impl EditFlags {
    fn answer(&self, notes: &mut Vec<String>) -> Result<(), Error> {
        for (flag, given) in [
            ("--license", &self.license),
            ("--license-file", &self.license_file),
            ("--owner", &self.owner),
        ] {
            if given.is_some() {
                return Err(anyhow!(
                    "{flag}: rkb edit does not rewrite the license header yet.\n  Edit \
                     hack/boilerplate.rs.txt: the files later `create` commands write start with it \
                     (files written already keep their header)"
                ));
            }
        }
        if self.force.is_some() {
            notes.push(ignored(
                "--force",
                "edit changes only what it must and keeps your files, so it has nothing to force",
            ));
        }
        if self.manifests.is_some() {
            notes.push(ignored(
                "--manifests",
                "rkb's chart is made from config/ (`kubectl kustomize`), not from an install file",
            ));
        }
        match self.output_dir.as_deref() {
            None => {}
            Some("dist" | "dist/") => notes.push(ignored(
                "--output-dir dist",
                "the chart always goes to dist/chart/",
            )),
            Some(other) => {
                return Err(anyhow!(
                    "--output-dir {other}: rkb's chart always goes to dist/chart/, where `make \
                     helm` keeps it in step with config/.\n  Leave the flag out, e.g.:  rkb edit \
                     --plugins helm"
                ));
            }
        }
        Ok(())
    }
}
