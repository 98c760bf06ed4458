//! The command-line model. Flags and their names follow kubebuilder v4 so its users
//! can carry their habits over; every help page ends with runnable examples.

use std::path::PathBuf;

use clap::{Arg, ArgAction, Args, Parser, Subcommand, ValueEnum};

mod alpha;
pub mod kubebuilder;

pub use alpha::{AlphaGenerateArgs, AlphaUpdateArgs};

pub use crate::project::WebhookCerts;

const ROOT_EXAMPLES: &str = "\
Examples:
  # Start an operator project in the current directory
  rkb init --domain example.com --project-name memcached-operator

  # Add a custom resource type and its reconciler
  rkb create api --group cache --version v1alpha1 --kind Memcached

  # Add a controller for a built-in type (no CRD)
  rkb create api --group core --version v1 --kind Pod --no-resource

  # Then, inside the project
  make manifests && make test";

const INIT_EXAMPLES: &str = "\
Examples:
  rkb init --domain example.com
  rkb init --domain example.com --project-name memcached-operator --owner \"The Memcached Authors\"
  rkb init --domain demo.kakao.com --dir bluegreen --license none
  rkb init --domain example.com --plugins grafana,helm";

const CREATE_API_EXAMPLES: &str = "\
Examples:
  # A namespaced custom resource with a reconciler
  rkb create api --group cache --version v1alpha1 --kind Memcached

  # A cluster-scoped resource with an irregular plural, types only
  rkb create api --group infra --version v1 --kind Policy --plural policies --cluster-scoped --no-controller

  # A second version of an existing kind (types only; the first version stays the storage version)
  rkb create api --group cache --version v1beta1 --kind Memcached --no-controller

  # A controller for a built-in kind
  rkb create api --group apps --version v1 --kind Deployment --no-resource

  # A controller for a kind another project defines, with Rust types written from its CRD
  rkb create api --external-crd cert-manager.io_certificates.yaml
  rkb create api --external-crd gateway.networking.k8s.io_httproutes.yaml --version v1 --kind HTTPRoute

  # A complete operator that runs an image in a Deployment (kubebuilder's deploy-image plugin)
  rkb create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6.26-alpine3.19 \\
      --image-container-command memcached,--memory-limit=64,-o,modern,-v --image-container-port 11211 --run-as-user 1001";

const CREATE_WEBHOOK_EXAMPLES: &str = "\
Examples:
  # Defaulting and validating admission webhooks for an API of the project
  rkb create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --programmatic-validation

  # Conversion between versions: v1 is the hub, v1alpha1 and v1beta1 convert to and from it
  rkb create webhook --group cache --version v1 --kind Memcached --conversion --spoke v1alpha1 --spoke v1beta1

  # Then write the manifests: config/webhook/manifests.yaml and the CRD's conversion stanza
  make manifests";

const DELETE_API_EXAMPLES: &str = "\
PROJECT says what `rkb create api` scaffolded for the API, and rkb renders it again: its
files go (types, controller, sample, and the kind's roles when no other version needs
them), and so do the lines it inserted (api/src/lib.rs, module files, kustomizations,
config/manager/manager.yaml for --image) and its PROJECT entry. A file that differs from
what rkb scaffolds for the API now is refused, with nothing deleted, unless --force (a file
scaffolded by an older rkb counts as changed). Refused too: an API with webhooks (delete
them first), a spoke of a conversion webhook, and a kind's storage version while other
versions stay.

Examples:
  # Undo `rkb create api --group cache --version v1alpha1 --kind Memcached`
  rkb delete api --group cache --version v1alpha1 --kind Memcached

  # A second version (the first stays the storage version)
  rkb delete api --group cache --version v1beta1 --kind Memcached

  # Delete the types and controller even though they were edited
  rkb delete api --group cache --version v1alpha1 --kind Memcached --force";

const DELETE_WEBHOOK_EXAMPLES: &str = "\
Undoes `rkb create webhook` for the webhooks named: their impls (the admission file goes
with its last webhook), registrations in src/webhook/mod.rs, api/src/lib.rs and src/main.rs,
and, with the project's last webhook, config/webhook, config/certmanager and the manager's
webhook patch. Files changed since rkb scaffolded them are refused unless --force.

Examples:
  rkb delete webhook --group cache --version v1alpha1 --kind Memcached --programmatic-validation
  rkb delete webhook --group cache --version v1alpha1 --kind Memcached --defaulting --programmatic-validation
  rkb delete webhook --group cache --version v1 --kind Memcached --conversion";

const EDIT_EXAMPLES: &str = "\
Examples:
  # Controllers move to src/controller/<group>/<kind>.rs, so one kind can have a controller
  # in each of several groups
  rkb edit --multigroup
  rkb create api --group web --version v1 --kind Memcached";

const ALPHA_GENERATE_HELP: &str = "\
The input is only read. Its hack/boilerplate.rs.txt (the license header) and its
.cargo/config.toml (where rkb's crates come from; relative paths in it are taken from the
output directory) are copied as they are; without a .cargo/config.toml the output takes
rkb's crates from the registry. Refused, with nothing written: an output directory that is
not empty or lies inside the input, a PROJECT of kubebuilder's Go layout or of a newer rkb,
and a PROJECT with options of a plugin rkb does not know.

PROJECT records the multigroup layout but not when it was adopted; the input's files do (APIs
and webhooks from before `rkb edit --multigroup` keep single-group roles and webhook paths), so
`edit --multigroup` is replayed after the last of them, or the project starts with `init
--multigroup`. Webhooks follow the APIs of their layout, one kind at a time (defaulting,
validation, conversion). A header edited by hand in hack/boilerplate.rs.txt is copied for the
files `create` writes; the files `init` writes get the header of the owner and license read
from its `// Copyright <owner>.` line and Apache notice.

Examples:
  # Scaffold ./memcached-operator again with this rkb, into memcached-operator-generated
  rkb alpha generate --input-dir memcached-operator

  # Into a chosen directory, without compiling the project for `make manifests`
  rkb alpha generate --input-dir memcached-operator --output-dir /tmp/regen --no-manifests

  # Then compare, and carry your code over
  diff -r memcached-operator /tmp/regen";

const ALPHA_UPDATE_HELP: &str = "\
Three scaffolds meet, file by file: the base (what the rkb that wrote the project generates
from PROJECT: `<from> alpha generate`, or its init / create api / create webhook / edit
--multigroup replayed when it has no `alpha generate`), this rkb's (`alpha generate`, in a
temporary directory), and your project. A file you did not change takes this rkb's version; a
file rkb did not change keeps yours; a file both changed is merged line by line, and where both
changed the same lines the file is written with conflict markers (<<<<<<< ours: your lines,
||||||| original: the old scaffold's, =======, >>>>>>> theirs: this rkb's). A file this rkb
adds is added; a file you deleted stays deleted; a file rkb no longer generates is kept. All
files are written, or none; git is not needed. PROJECT's cliVersion becomes this rkb's version.

Conflicts are listed at the end and the command exits non-zero (0 with --force): resolve them,
then run `make manifests` (the CRDs, the role and the webhook configuration are not merged:
they are generated from your code) and `cargo build`.

Refused, with nothing written: a --from that is not an rkb executable, --from-version equal to
--to-version, a directory that is no rkb project, and, without --force, a project in a git
repository with uncommitted changes (commit or stash them first, so the update can be undone).

--from-version runs `cargo install rkb --version <V> --root <temporary directory>`, so rkb <V>
must be published on crates.io (rkb is not yet: build the older rkb and pass --from). Without
--from or --from-version, the base is rkb <PROJECT's cliVersion> from crates.io.

With --from-branch (or any other git flag: --output-branch, --show-commits, --restore-path,
--push, --merge-message, --conflict-message, --open-gh-issue, --git-config) the update is made
from that branch's last commit, as kubebuilder's is, and written to a new branch
(rkb-update-from-<from>-to-<to>): one commit on top of --from-branch, or with --show-commits the
commits of each step (the old scaffold, your branch, the new scaffold, the merge). Your working
tree and current branch are left as they are. Conflicts are committed with their markers; without
--force the command then stops before --push and --open-gh-issue and exits non-zero.

Examples:
  # With an older rkb built from its source
  git -C ~/src/rkb worktree add /tmp/rkb-old <older commit or tag>
  cargo install --locked --path /tmp/rkb-old/cli --root /tmp/rkb-old-bin
  rkb alpha update --from /tmp/rkb-old-bin/bin/rkb

  # From the version PROJECT records, installed from crates.io
  rkb alpha update --dir memcached-operator

  # Write the files even when some conflict
  rkb alpha update --from /tmp/rkb-old-bin/bin/rkb --force

  # On a branch of its own, from main, pushed to origin with an issue to review it (CI)
  rkb alpha update --force --push --restore-path .github/workflows --open-gh-issue";

const SETUP_ENVTEST_HELP: &str = "\
KUBEBUILDER_ASSETS, when set, is checked and printed as it is; nothing is built. Otherwise the
binaries are built with `go build` (Go >= 1.24, 1.26 for Kubernetes 1.37, and the Go module proxy) into
$RKB_ENVTEST_CACHE, else $XDG_CACHE_HOME/rkb/envtest, else ~/.cache/rkb/envtest, and reused
from there. Progress goes to stderr, the directory to stdout.

Examples:
  export KUBEBUILDER_ASSETS=\"$(rkb setup-envtest)\"
  make setup-envtest      # in a generated project (its ENVTEST_K8S_VERSION)

  # Another release this rkb builds, e.g. the API server of a newer cluster
  export KUBEBUILDER_ASSETS=\"$(rkb setup-envtest --kubernetes-version 1.37.2)\"

  # Also kube-controller-manager, for tests that need garbage collection, namespace
  # deletion or Deployments that get ReplicaSets (rkb-envtest starts it on request)
  export KUBEBUILDER_ASSETS=\"$(rkb setup-envtest --with controller-manager)\"";

const BUILD_IMAGE_EXAMPLES: &str = "\
Examples:
  # In a project: build the manager and write dist/image.tar
  rkb build-image --tag example.com/memcached-operator:v0.0.1 --output dist/image.tar

  # Then load or push it
  podman load -i dist/image.tar
  skopeo copy oci-archive:dist/image.tar docker://example.com/memcached-operator:v0.0.1";

/// Scaffold and maintain Kubernetes operators on kube-rs, the kubebuilder way.
#[derive(Debug, Parser)]
#[command(name = "rkb", version, after_help = ROOT_EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new operator project: PROJECT, Cargo.toml, manager, Makefile, Dockerfile and config/.
    #[command(after_help = INIT_EXAMPLES)]
    Init(InitArgs),
    /// Scaffold a Kubernetes API (custom resource type) and/or its controller.
    #[command(subcommand)]
    Create(CreateCommand),
    /// Undo `rkb create api` or `rkb create webhook` for one kind: its files, inserted
    /// lines and PROJECT entry.
    #[command(subcommand)]
    Delete(DeleteCommand),
    /// Change the layout of an existing project, e.g. to kubebuilder's multigroup layout.
    #[command(after_help = EDIT_EXAMPLES)]
    Edit(EditArgs),
    /// Commands that may change or go away in a later rkb.
    #[command(subcommand)]
    Alpha(AlphaCommand),
    /// Build kube-apiserver and etcd for envtest from Go modules (once; cached) and print
    /// their directory, for KUBEBUILDER_ASSETS.
    #[command(after_help = SETUP_ENVTEST_HELP)]
    SetupEnvtest(SetupEnvtestArgs),
    /// Build the manager image without a container engine, like ko: a static binary on an
    /// empty base, written as an OCI archive (`make image`).
    #[command(after_help = BUILD_IMAGE_EXAMPLES)]
    BuildImage(BuildImageArgs),
    /// Print a shell completion script, e.g. `rkb completion bash > /etc/bash_completion.d/rkb`.
    #[command(
        after_help = "Examples:\n  rkb completion bash > ~/.local/share/bash-completion/completions/rkb\n  rkb completion zsh > \"${fpath[1]}/_rkb\""
    )]
    Completion {
        /// The shell to generate completions for.
        shell: clap_complete::Shell,
    },
    /// Print the rkb version and the kube / k8s-openapi versions it generates projects for.
    #[command(after_help = "Example:\n  rkb version")]
    Version,
}

#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Add a custom resource type (spec, status, CRD) and a reconciler to the project.
    #[command(after_help = CREATE_API_EXAMPLES)]
    Api(CreateApiArgs),
    /// Add defaulting, validating or conversion webhooks for an API of the project.
    #[command(after_help = CREATE_WEBHOOK_EXAMPLES)]
    Webhook(CreateWebhookArgs),
}

#[derive(Debug, Subcommand)]
pub enum DeleteCommand {
    /// Remove an API of the project: its types, controller, sample, roles, registrations
    /// and PROJECT entry.
    #[command(after_help = DELETE_API_EXAMPLES)]
    Api(DeleteApiArgs),
    /// Remove webhooks of a kind: their code, registrations and, with the last webhook,
    /// the webhook and certificate config.
    #[command(after_help = DELETE_WEBHOOK_EXAMPLES)]
    Webhook(DeleteWebhookArgs),
}

#[derive(Debug, Subcommand)]
pub enum AlphaCommand {
    /// Scaffold a project again with this rkb from its PROJECT file (init, every
    /// `create api` and `create webhook` it records), into a new directory.
    #[command(after_help = ALPHA_GENERATE_HELP)]
    Generate(AlphaGenerateArgs),
    /// Bring a project forward to this rkb's scaffold: a three-way merge, file by file, of the
    /// older rkb's scaffold, this rkb's and your files.
    #[command(after_help = ALPHA_UPDATE_HELP)]
    Update(AlphaUpdateArgs),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Domain of the project's API groups: group `cache` becomes `cache.<domain>`.
    #[arg(long, value_name = "DOMAIN")]
    pub domain: String,
    /// Name of the project and its Cargo package [default: the directory name].
    #[arg(long, value_name = "NAME")]
    pub project_name: Option<String>,
    /// Copyright owner written into the license header of generated sources.
    #[arg(long, value_name = "TEXT")]
    pub owner: Option<String>,
    /// License of the generated project.
    #[arg(long, value_enum, default_value_t = License::Apache2)]
    pub license: License,
    /// The license header of generated sources, from a file (kubebuilder's flag; it wins
    /// over --license): its text becomes hack/boilerplate.rs.txt, each line made a `//`
    /// comment unless the file is one already.
    #[arg(long, value_name = "FILE", conflicts_with = "owner")]
    pub license_file: Option<PathBuf>,
    /// Directory to create the project in (created when missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Where cargo takes rkb's crates from. The project's Cargo.toml names them by version
    /// either way; `path` adds `.cargo/config.toml` with a `[patch.crates-io]` section that
    /// points them at --rkb-path until they are published, `registry` leaves it out.
    #[arg(long, value_enum, default_value_t = RkbSource::Path)]
    pub rkb_source: RkbSource,
    /// The rkb source for `--rkb-source path`: a checkout of rkb, or a directory of its
    /// unpacked `.crate` packages [default: $RKB_PATH, else the checkout this rkb was built
    /// from]. A relative path is taken relative to the project directory.
    #[arg(long, value_name = "DIR")]
    pub rkb_path: Option<PathBuf>,
    /// Lay controllers out by group (`src/controller/<group>/<kind>.rs`), so one kind can
    /// have a controller in each of several groups.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, hide_default_value = true, action = ArgAction::Set, value_name = "BOOL")]
    pub multigroup: bool,
    /// A namespace-scoped operator (kubebuilder's `--namespaced`): the manager watches only
    /// its own namespace (`WATCH_NAMESPACE`) and has a Role there instead of a ClusterRole.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, hide_default_value = true, action = ArgAction::Set, value_name = "BOOL")]
    pub namespaced: bool,
    /// Where the webhooks' certificates come from, once `rkb create webhook` adds any:
    /// `self`, the manager makes, injects and rotates them (nothing else to install), and
    /// the metrics server's, which the ServiceMonitor verifies, or
    /// `cert-manager`, kubebuilder's way (the cluster needs cert-manager) [default: self;
    /// cert-manager with --namespaced, whose Role cannot reach the cluster-scoped webhook
    /// configurations].
    #[arg(long, value_enum, value_name = "SOURCE")]
    pub webhook_certs: Option<WebhookCerts>,
    /// Optional plugins to add to the new project, comma-separated, as `rkb edit --plugins`
    /// adds them: `grafana`, `helm`, `autoupdate` (kubebuilder's keys too, e.g. `grafana/v1-alpha`; its
    /// layout, `go/v4`, is every rkb project's already). The chart follows at the first
    /// `make manifests`.
    #[arg(long, value_delimiter = ',', value_name = "PLUGIN,...")]
    pub plugins: Vec<String>,
    #[command(flatten)]
    pub kubebuilder: kubebuilder::InitFlags,
}

impl InitArgs {
    /// The optional plugins `--plugins` asks for (kubebuilder's layout keys left out).
    pub fn optional_plugins(&self) -> Vec<EditPlugin> {
        self.plugins
            .iter()
            .filter_map(|p| EditPlugin::from_str(p, false).ok())
            .collect()
    }
}

/// `rkb setup-envtest`.
#[derive(Debug, Args)]
pub struct SetupEnvtestArgs {
    /// The Kubernetes release to build (e.g. `1.37.2`); default: the one new projects record.
    /// A project's Makefile passes its `ENVTEST_K8S_VERSION`. Ignored when KUBEBUILDER_ASSETS is set.
    #[arg(long, value_name = "VERSION")]
    pub kubernetes_version: Option<String>,
    /// Also build this optional binary into the same cache entry (repeatable).
    #[arg(long = "with", value_enum, value_name = "BINARY")]
    pub with: Vec<EnvtestExtra>,
}

/// Optional envtest binaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EnvtestExtra {
    /// kube-controller-manager: garbage collection, namespace deletion, Deployments and
    /// ReplicaSets, ServiceAccounts and their tokens.
    ControllerManager,
}

#[derive(Debug, Args)]
pub struct BuildImageArgs {
    /// The image reference recorded in the archive.
    #[arg(long, value_name = "IMAGE")]
    pub tag: String,
    /// The archive to write, relative to --dir.
    #[arg(long, value_name = "FILE", default_value = "dist/image.tar")]
    pub output: PathBuf,
    /// Package this static Linux executable instead of building the project's manager.
    #[arg(long, value_name = "FILE")]
    pub binary: Option<PathBuf>,
    /// The Rust target to build for [default: this machine's].
    #[arg(long, value_name = "TRIPLE")]
    pub target: Option<String>,
    /// The numeric `uid:gid` the image runs as.
    #[arg(long, value_name = "UID:GID", default_value = "65532:65532", value_parser = numeric_user)]
    pub user: String,
    /// The project directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

/// A non-root user given by numbers, which the kubelet can check against runAsNonRoot.
fn numeric_user(value: &str) -> Result<String, String> {
    let numbers: Vec<&str> = value.split(':').collect();
    let numeric = numbers.len() == 2 && numbers.iter().all(|n| n.parse::<u32>().is_ok());
    if !numeric {
        return Err("expected <uid>:<gid> in numbers, e.g. 65532:65532".into());
    }
    if numbers[0] == "0" {
        return Err("uid 0 is root; pods of rkb operators set runAsNonRoot, so the kubelet would not start it (e.g. 65532:65532)".into());
    }
    Ok(value.to_owned())
}

/// Where a generated project takes rkb's crates from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RkbSource {
    /// From a checkout or unpacked packages on this machine (`--rkb-path`), through a
    /// `[patch.crates-io]` section: rkb's crates are not on crates.io yet.
    Path,
    /// From the registry, like every other dependency.
    Registry,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// Move the project to the multigroup layout: every controller moves to
    /// `src/controller/<group>/<kind>.rs` and later ones are scaffolded there.
    #[arg(long, conflicts_with = "plugins", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub multigroup: Option<bool>,
    /// Add what optional plugins scaffold, comma-separated: `grafana` writes Grafana
    /// dashboards of the manager's metrics to grafana/ (kubebuilder's grafana/v1-alpha);
    /// `helm` writes a Helm chart of config/ to dist/chart/ and `make helm` (kubebuilder's
    /// helm/v2-alpha); run again, it brings the chart in step with config/; `autoupdate`
    /// writes .github/workflows/auto-update.yml, which runs `rkb alpha update` weekly
    /// (kubebuilder's autoupdate/v1-alpha).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PLUGIN,...")]
    pub plugins: Vec<EditPlugin>,
    /// With `--plugins helm`: record the plugin and add `make helm`, but leave the chart
    /// to the next `make manifests` (`alpha generate --no-manifests`, before the CRDs exist).
    #[arg(long, hide = true, requires = "plugins")]
    pub no_chart: bool,
    /// Switch where the webhooks' certificates come from: `self` (the manager's own) or
    /// `cert-manager`. Rewrites the parts of config/, src/ and PROJECT that differ; refused
    /// while a file it would replace was edited by hand.
    #[arg(long, value_enum, conflicts_with_all = ["plugins", "multigroup"], value_name = "SOURCE")]
    pub webhook_certs: Option<WebhookCerts>,
    /// Make the project namespace-scoped (`--namespaced=false`: cluster-wide again): the
    /// manager watches only its own namespace and `make manifests` gives it a Role there
    /// instead of a ClusterRole. Refused while a part it rewrites was edited by hand.
    #[arg(long, conflicts_with_all = ["plugins", "multigroup", "webhook_certs"], num_args = 0..=1,
          require_equals = true, default_missing_value = "true", value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// The project directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub kubebuilder: kubebuilder::EditFlags,
}

/// A plugin `rkb edit --plugins` adds to a project, also by kubebuilder's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EditPlugin {
    /// Dashboards of controller-runtime's metrics and the manager's resources, for Grafana.
    #[value(alias = "grafana/v1-alpha", alias = "grafana.kubebuilder.io/v1-alpha")]
    Grafana,
    /// A Helm chart of what config/default deploys, in dist/chart/, kept in step by `make helm`.
    #[value(alias = "helm/v2-alpha", alias = "helm.kubebuilder.io/v2-alpha")]
    Helm,
    /// A weekly GitHub workflow that runs `rkb alpha update` when a newer rkb is out and opens
    /// an issue to review the update's branch.
    #[value(
        alias = "autoupdate/v1-alpha",
        alias = "autoupdate.kubebuilder.io/v1-alpha"
    )]
    Autoupdate,
    /// kubebuilder's deprecated chart: refused, with what to use instead.
    #[value(
        name = "helm/v1-alpha",
        alias = "helm.kubebuilder.io/v1-alpha",
        hide = true
    )]
    HelmV1Alpha,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum License {
    /// Apache License 2.0 header on every generated source file.
    Apache2,
    /// No license header.
    None,
}

/// `--group/--version/--kind`: the kind a command is about. A command words their help
/// for what it does with them (`worded`).
#[derive(Debug, Args)]
pub struct Gvk {
    /// API group, as given to `rkb create api`, e.g. cache.
    #[arg(long, value_name = "GROUP")]
    pub group: String,
    /// API version, e.g. v1alpha1.
    #[arg(long, value_name = "VERSION")]
    pub version: String,
    /// Kind, e.g. Memcached.
    #[arg(long, value_name = "KIND")]
    pub kind: String,
}

/// Words the help of a command's arguments (`(id, help)`), in place: the arguments keep
/// their order, so help, usage and completions list them as declared.
fn worded(helps: &'static [(&'static str, &'static str)]) -> impl FnMut(Arg) -> Arg {
    move |arg| match helps.iter().find(|(id, _)| arg.get_id() == *id) {
        Some((_, help)) => arg.help(*help),
        None => arg,
    }
}

/// `--group/--version/--kind` of `create api`, which `--external-crd` can stand in for.
fn create_api_gvk(arg: Arg) -> Arg {
    let id = arg.get_id().as_str().to_owned();
    let arg = match id.as_str() {
        "group" => arg.conflicts_with("external_crd"),
        "version" | "kind" => arg,
        _ => return arg,
    };
    let arg = arg
        .required(false)
        .required_unless_present("external_crd")
        .default_value("")
        .hide_default_value(true);
    worded(&[
        (
            "group",
            "API group, without the domain: `cache` serves `cache.<domain>`; `core` for built-in core kinds",
        ),
        (
            "version",
            "API version, e.g. v1, v1alpha1, v2beta3 (with --external-crd: the CRD's version to \
             write types for [default: its storage version])",
        ),
        (
            "kind",
            "Kind, an UpperCamelCase Rust type name, e.g. Memcached (with --external-crd: which \
             of the file's CRDs, needed when it holds several, as the CRD spells it or as its \
             Rust type, e.g. postgresql or Postgresql)",
        ),
    ])(arg)
}

#[derive(Debug, Args)]
#[command(mut_args(create_api_gvk))]
pub struct CreateApiArgs {
    #[command(flatten)]
    pub gvk: Gvk,
    /// A kind another project defines (kubebuilder's --external-api-path): its
    /// CustomResourceDefinition YAML, from which rkb writes Rust types with the CRD's
    /// validation under src/api/external/, a controller and its RBAC (with --no-controller:
    /// the types alone, e.g. a second version beside the first). The CRD is kept in
    /// config/external-crds/ for the tests and not installed by `make install`.
    #[arg(
        long,
        value_name = "FILE.yaml",
        conflicts_with_all = ["image", "plural", "cluster_scoped", "no_resource"],
        help_heading = "External APIs"
    )]
    pub external_crd: Option<PathBuf>,
    /// Resource name in URLs and RBAC rules, unique in the API group [default: the kind's
    /// existing plural for a new version, else the lowercased kind pluralised as kubebuilder
    /// does: memcacheds, policies, people].
    #[arg(long, value_name = "PLURAL")]
    pub plural: Option<String>,
    /// Scaffold the resource type (the default; `--resource=false` is --no-resource).
    #[arg(long, overrides_with = "no_resource", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub resource: Option<bool>,
    /// Don't scaffold a type: control an existing one (a built-in kind or one of this project's).
    #[arg(long, overrides_with = "resource")]
    pub no_resource: bool,
    /// Scaffold a controller (the default; `--controller=false` is --no-controller).
    #[arg(long, overrides_with = "no_controller", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub controller: Option<bool>,
    /// Don't scaffold a controller.
    #[arg(long, overrides_with = "controller")]
    pub no_controller: bool,
    /// Name the controller, for a kind's second controller (kubebuilder's flag): e.g.
    /// `memcached-backup` gets src/controller/memcached_backup.rs with
    /// `MemcachedBackupReconciler`, its own metrics label, RBAC rules, status condition and
    /// field manager. Add it to an existing API with --no-resource [default: the lowercase kind].
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["image", "no_controller", "external_crd"]
    )]
    pub controller_name: Option<String>,
    /// Objects live in namespaces (the default; `--namespaced=false` is --cluster-scoped).
    #[arg(long, overrides_with = "cluster_scoped", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub namespaced: Option<bool>,
    /// Objects are cluster-scoped.
    #[arg(long, overrides_with = "namespaced")]
    pub cluster_scoped: bool,
    /// Scaffold a complete controller that runs this container image in a Deployment it
    /// owns, sized by `spec.size` (kubebuilder's deploy-image plugin). The image goes into
    /// config/manager as `<KIND>_IMAGE`, so it can change without a rebuild.
    #[arg(long, value_name = "IMAGE", help_heading = "Deploy an image")]
    pub image: Option<String>,
    /// The container's command, comma-separated [default: the image's entrypoint] (needs --image).
    #[arg(long, value_name = "WORD,WORD,...", help_heading = "Deploy an image")]
    pub image_container_command: Option<String>,
    /// The port the container listens on, 1-65535; adds `spec.containerPort` (needs --image).
    #[arg(long, value_name = "PORT", help_heading = "Deploy an image")]
    pub image_container_port: Option<String>,
    /// The non-root UID the container runs as [default: 1001] (needs --image).
    #[arg(long, value_name = "UID", help_heading = "Deploy an image")]
    pub run_as_user: Option<String>,
    /// Regenerate the files rkb owns for this API even when they exist (user edits in them are lost).
    #[arg(long)]
    pub force: bool,
    /// The project directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub kubebuilder: kubebuilder::CreateApiFlags,
}

/// Which webhooks of a kind `create webhook` adds or `delete webhook` removes.
#[derive(Debug, Args)]
pub struct WebhookKinds {
    /// A mutating webhook that sets defaults (a `Defaulter`).
    #[arg(long)]
    pub defaulting: bool,
    /// A validating webhook for checks the CRD schema cannot express (a `Validator`).
    #[arg(long)]
    pub programmatic_validation: bool,
    /// A conversion webhook: --version becomes the hub every --spoke converts through.
    #[arg(long)]
    pub conversion: bool,
}

#[derive(Debug, Args)]
#[command(mut_args(worded(&[
    ("group", "API group of the kind, as given to `rkb create api`, e.g. cache"),
    (
        "version",
        "API version of the kind the webhooks receive objects in (the hub, with --conversion)",
    ),
])))]
pub struct CreateWebhookArgs {
    #[command(flatten)]
    pub gvk: Gvk,
    #[command(flatten)]
    pub webhooks: WebhookKinds,
    /// With --conversion: another version of the kind that converts to and from the hub
    /// (repeat or comma-separate for several).
    #[arg(
        long,
        value_name = "VERSION",
        value_delimiter = ',',
        requires = "conversion"
    )]
    pub spoke: Vec<String>,
    /// With --defaulting: the URL path the defaulting webhook is served at, instead of
    /// `/mutate-<group>-<version>-<kind>` (e.g. /my-custom-mutate-path).
    #[arg(long, value_name = "PATH", requires = "defaulting")]
    pub defaulting_path: Option<String>,
    /// With --programmatic-validation: the URL path the validating webhook is served at,
    /// instead of `/validate-<group>-<version>-<kind>`.
    #[arg(long, value_name = "PATH", requires = "programmatic_validation")]
    pub validation_path: Option<String>,
    /// Regenerate the webhook files rkb owns for this kind even when they exist (user edits
    /// in them are lost).
    #[arg(long)]
    pub force: bool,
    /// The project directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub kubebuilder: kubebuilder::CreateWebhookFlags,
}

#[derive(Debug, Args)]
pub struct DeleteApiArgs {
    #[command(flatten)]
    pub gvk: Gvk,
    /// Delete only this named controller of the kind (from `create api --controller-name`),
    /// keeping the API and its other controllers.
    #[arg(long, value_name = "NAME")]
    pub controller_name: Option<String>,
    /// Delete the API's files even when they changed since rkb scaffolded them (the
    /// changes are lost).
    #[arg(long)]
    pub force: bool,
    /// The project directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
#[command(mut_args(worded(&[
    ("group", "API group of the kind, e.g. cache"),
    ("version", "API version the webhooks are for (the hub, for --conversion)"),
    ("defaulting", "The defaulting (mutating) webhook"),
    ("programmatic_validation", "The validating webhook"),
    ("conversion", "The conversion webhook, with all its spokes"),
])))]
pub struct DeleteWebhookArgs {
    #[command(flatten)]
    pub gvk: Gvk,
    #[command(flatten)]
    pub webhooks: WebhookKinds,
    /// Delete the webhook files even when they changed since rkb scaffolded them.
    #[arg(long)]
    pub force: bool,
    /// The project directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

impl CreateApiArgs {
    pub fn wants_resource(&self) -> bool {
        !self.no_resource && self.resource != Some(false)
    }
    pub fn wants_controller(&self) -> bool {
        !self.no_controller && self.controller != Some(false)
    }
    pub fn wants_namespaced(&self) -> bool {
        !self.cluster_scoped && self.namespaced != Some(false)
    }

    /// kubebuilder's `--resource=false`, `--controller=false` and `--namespaced=false`
    /// become rkb's --no-resource, --no-controller and --cluster-scoped, which the checks
    /// of `create api` name.
    pub fn fold_kubebuilder_switches(&mut self) {
        self.no_resource = !self.wants_resource();
        self.no_controller = !self.wants_controller();
        self.cluster_scoped = !self.wants_namespaced();
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn command_model_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The README promises it: every command a user runs ends its help with examples.
    #[test]
    fn every_command_ends_its_help_with_examples() {
        fn check(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", command.get_name());
            let leaves: Vec<_> = command
                .get_subcommands()
                .filter(|c| c.get_name() != "help")
                .collect();
            if leaves.is_empty() {
                let help = command.get_after_help().map(|h| h.to_string());
                if !help.is_some_and(|h| h.contains("Example")) {
                    missing.push(path.clone());
                }
            }
            for sub in leaves {
                check(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        check(&Cli::command(), "", &mut missing);
        assert!(missing.is_empty(), "no examples in the help of {missing:?}");
    }

    #[test]
    fn paired_flags_take_the_last_one() {
        let cli = Cli::parse_from([
            "rkb",
            "create",
            "api",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--resource",
            "--no-resource",
            "--cluster-scoped",
            "--namespaced",
        ]);
        let Command::Create(CreateCommand::Api(args)) = cli.command else {
            panic!("parsed as create api")
        };
        assert!(!args.wants_resource());
        assert!(args.wants_namespaced());
        assert!(args.wants_controller());
    }
}
