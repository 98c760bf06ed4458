//! `rkb create webhook`: defaulting, validating and conversion webhooks for a kind of the
//! project, kubebuilder v4's `create webhook`. The Rust goes to `src/webhook/` (one module
//! per kind and version, like kubebuilder's `internal/webhook/<version>/<kind>_webhook.go`),
//! registered at `+rkb:scaffold:` markers in `src/webhook/mod.rs`, `src/lib.rs` (for
//! `make manifests`) and `src/main.rs`; the first webhook also switches on the webhook
//! Service, the cert-manager certificate and the manager's webhook patch in config/default.

mod checks;

use std::io::Write;

use anyhow::bail;
use rkb_core::webhook::Kind;
use serde::Serialize;

use checks::{check_conversion, check_duplicates, find_resource};

use crate::cli::CreateWebhookArgs;
use crate::model::{self, Layout, ProjectNames};
use crate::project::{self, Project};
use crate::scaffold::Changes;
use crate::scaffold::Templates;
use crate::scaffold::builtin_kinds;
use crate::scaffold::plan::{
    self as scaffold_plan, Entry, IfExists, Marker,
    Text::{Inline, Template},
};

/// What the templates of `create webhook` see: the project, the kind's webhooks, and
/// where their files go.
#[derive(Debug, Serialize)]
pub(super) struct Context {
    #[serde(flatten)]
    pub names: ProjectNames,
    pub hook: Hook,
    pub layout: Layout,
    /// PROJECT with the kind's webhooks.
    #[serde(skip)]
    pub project: Project,
}

impl scaffold_plan::Model for Context {
    fn project(&self) -> &Project {
        &self.project
    }
}

/// The kind and its webhooks as the webhook templates name them, taken from the model.
#[derive(Debug, Serialize)]
pub(super) struct Hook {
    pub kind: String,
    pub group: String,
    pub version: String,
    /// `cache.example.com`; empty for the core group.
    pub api_group: String,
    /// Rust path of the type below the crate root, e.g. `api::cache::v1alpha1::Memcached`
    /// or `k8s_openapi::api::core::v1::Pod`, as `crate::`-less `lib.rs` code names it.
    pub type_path: String,
    /// The same path as code inside the webhook module names it.
    pub use_path: String,
    pub namespaced: bool,
    /// The module under `crate::webhook`: `v1alpha1` or `cache::v1alpha1`.
    pub module: String,
    /// Its directory: `src/webhook/v1alpha1` or `src/webhook/cache/v1alpha1`.
    pub dir: String,
    /// The group's module in the multigroup layout (`cache`), else `None`.
    pub group_module: Option<String>,
    pub version_module: String,
    pub kind_snake: String,
    pub defaulting: bool,
    pub validation: bool,
    pub mutate_path: String,
    pub validate_path: String,
    /// The versions converted to and from this one, with their module names.
    pub spokes: Vec<Spoke>,
    pub crd: String,
    /// The kind's conversion file, where `create api` adds the spokes of later versions.
    pub conversion_file: String,
}

#[derive(Debug, Serialize)]
pub(super) struct Spoke {
    pub version: String,
    pub module: String,
    /// The spoke's type, e.g. `crate::api::cache::v1beta1::Memcached`.
    pub path: String,
}

impl Hook {
    pub(super) fn new(
        project: &Project,
        api: &model::Resource,
        layout: &Layout,
        webhooks: &project::Webhooks,
    ) -> Self {
        Hook {
            kind: api.kind.clone(),
            group: api.group.clone(),
            version: api.version.clone(),
            api_group: api.api_group.clone(),
            type_path: api
                .type_path
                .strip_prefix("crate::")
                .unwrap_or(&api.type_path)
                .to_owned(),
            use_path: api.type_path.clone(),
            namespaced: api.namespaced,
            module: layout.webhook_module.clone(),
            dir: layout.webhook_dir.clone(),
            group_module: layout.webhook_group_module.clone(),
            version_module: api.version_module.clone(),
            kind_snake: api.kind_snake.clone(),
            defaulting: webhooks.defaulting,
            validation: webhooks.validation,
            mutate_path: api.webhook_path(Kind::Mutating),
            validate_path: api.webhook_path(Kind::Validating),
            spokes: webhooks
                .spoke
                .iter()
                .filter_map(|v| project.find(&api.group, v, &api.kind))
                .map(model::Resource::recorded)
                .map(|spoke| Spoke {
                    version: spoke.version,
                    module: spoke.version_module,
                    path: spoke.type_path,
                })
                .collect(),
            crd: api.crd_name(),
            conversion_file: layout.conversion_file.clone(),
        }
    }
}

/// What `create webhook` was asked for and what the project holds: the switches of [`PLAN`].
#[derive(Debug)]
pub(super) struct Switches {
    /// The multigroup layout: webhook modules per group, then version.
    grouped: bool,
    /// Asked for now.
    defaulting: bool,
    validation: bool,
    conversion: bool,
    /// The kind has these after the command (asked for now, or earlier).
    has_defaulting: bool,
    has_validation: bool,
    has_conversion: bool,
    /// Not in PROJECT before: these are registered now (once per webhook, so `--force`
    /// regenerates files without registering twice).
    new_defaulting: bool,
    new_validation: bool,
    new_conversion: bool,
    /// The admission file is there and is not regenerated: a new impl is inserted into it.
    extend_admission: bool,
    /// The project had no webhook before.
    first_webhook: bool,
}

impl Switches {
    fn admission(&self) -> bool {
        self.defaulting || self.validation
    }
}

const ADMISSION: &str = "{{ layout.admission_file }}";
/// Also where `create api` inserts a later version's spoke.
pub(super) const CONVERSION: &str = "{{ hook.conversion_file }}";
const VERSION_MOD: &str = "{{ layout.webhook_version_file }}";
const GROUP_MOD: &str = "{{ layout.webhook_group_file }}";
const WEBHOOKS: &str = model::WEBHOOKS;
const DEFAULT: &str = model::DEFAULT_KUSTOMIZATION;
const REPLACEMENTS: Marker = Marker::WebhookReplacements;
pub(super) const REPLACEMENTS_KEY: &str = "replacements:";

/// What `create webhook` generates: modules under `src/webhook/`, the admission and
/// conversion files, registrations for the manager and `make manifests`, and config/.
pub(super) const PLAN: &[Entry<Switches>] = &[
    // Modules: src/webhook/mod.rs, [group/mod.rs,] version/mod.rs.
    Entry::insert_sorted(model::LIB, Marker::Modules, Inline("pub mod webhook;")).rustfmt(),
    Entry::shared(WEBHOOKS, "webhook/mod.rs.tera").rustfmt(),
    Entry::insert_sorted(
        WEBHOOKS,
        Marker::Modules,
        Inline("pub mod {{ hook.group_module }};"),
    )
    .when(|s| s.grouped),
    Entry::shared(GROUP_MOD, "webhook/module.rs.tera")
        .vars(&[("module", "group")])
        .when(|s| s.grouped),
    Entry::insert_sorted(
        GROUP_MOD,
        Marker::Modules,
        Inline("pub mod {{ hook.version_module }};"),
    )
    .when(|s| s.grouped),
    Entry::insert_sorted(
        WEBHOOKS,
        Marker::Modules,
        Inline("pub mod {{ hook.version_module }};"),
    )
    .when(|s| !s.grouped),
    Entry::shared(VERSION_MOD, "webhook/module.rs.tera").vars(&[("module", "version")]),
    Entry::insert(
        model::MAIN,
        Marker::Webhooks,
        Template("webhook/insert/main.rs.tera"),
    )
    .rustfmt(),
    // Admission: one file per kind and version, a Defaulter and/or Validator impl each.
    Entry::file(ADMISSION, "webhook/admission.rs.tera")
        .if_exists(IfExists::Overwrite)
        .rustfmt()
        .when(|s| s.admission() && !s.extend_admission),
    Entry::insert(
        ADMISSION,
        Marker::WebhookImpls,
        Template("webhook/defaulter.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.defaulting && s.extend_admission),
    Entry::insert(
        ADMISSION,
        Marker::WebhookTests,
        Template("webhook/defaulter_tests.rs.tera"),
    )
    .when(|s| s.defaulting && s.extend_admission),
    Entry::insert(
        ADMISSION,
        Marker::WebhookImpls,
        Template("webhook/validator.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.validation && s.extend_admission),
    Entry::insert(
        ADMISSION,
        Marker::WebhookTests,
        Template("webhook/validator_tests.rs.tera"),
    )
    .when(|s| s.validation && s.extend_admission),
    Entry::insert_sorted(
        VERSION_MOD,
        Marker::Modules,
        Inline("pub mod {{ hook.kind_snake }};"),
    )
    .when(Switches::admission),
    Entry::insert(
        WEBHOOKS,
        Marker::Webhooks,
        Template("webhook/insert/serve_defaulter.rs.tera"),
    )
    .when(|s| s.new_defaulting),
    Entry::insert(
        model::LIB,
        Marker::Webhooks,
        Template("webhook/insert/manifest_defaulter.rs.tera"),
    )
    .when(|s| s.new_defaulting),
    Entry::insert(
        WEBHOOKS,
        Marker::Webhooks,
        Template("webhook/insert/serve_validator.rs.tera"),
    )
    .when(|s| s.new_validation),
    Entry::insert(
        model::LIB,
        Marker::Webhooks,
        Template("webhook/insert/manifest_validator.rs.tera"),
    )
    .when(|s| s.new_validation),
    Entry::insert(
        WEBHOOKS,
        Marker::Webhooks,
        Template("webhook/insert/serve_conversion.rs.tera"),
    )
    .when(|s| s.new_conversion),
    Entry::insert(
        model::LIB,
        Marker::Webhooks,
        Template("webhook/insert/manifest_conversion.rs.tera"),
    )
    .when(|s| s.new_conversion),
    // Conversion: the spokes' From impls, next to the admission file.
    Entry::file(CONVERSION, "webhook/conversion.rs.tera")
        .rustfmt()
        .when(|s| s.conversion),
    Entry::insert_sorted(
        VERSION_MOD,
        Marker::Modules,
        Inline("pub mod {{ hook.kind_snake }}_conversion;"),
    )
    .when(|s| s.conversion),
    // config/: the Service, the certificate and the manager's port and volume.
    Entry::shared(
        model::WEBHOOK_KUSTOMIZATION,
        "webhook/config/webhook/kustomization.yaml.tera",
    ),
    Entry::shared(
        "config/webhook/service.yaml",
        "webhook/config/webhook/service.yaml.tera",
    ),
    Entry::shared(
        "config/webhook/kustomizeconfig.yaml",
        "webhook/config/webhook/kustomizeconfig.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager/certificate.yaml",
        "webhook/config/certmanager/certificate.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager/issuer.yaml",
        "webhook/config/certmanager/issuer.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager/kustomization.yaml",
        "webhook/config/certmanager/kustomization.yaml.tera",
    ),
    Entry::shared(
        "config/certmanager/kustomizeconfig.yaml",
        "webhook/config/certmanager/kustomizeconfig.yaml.tera",
    ),
    // With the network policies on, the webhook port stays open to the API server.
    Entry::shared(
        "config/network-policy/allow-webhook-traffic.yaml",
        "webhook/config/network-policy/allow-webhook-traffic.yaml.tera",
    ),
    Entry::insert(
        "config/network-policy/kustomization.yaml",
        Marker::NetworkPolicies,
        Inline("- allow-webhook-traffic.yaml"),
    ),
    Entry::shared(
        "config/default/manager_webhook_patch.yaml",
        "webhook/config/default/manager_webhook_patch.yaml.tera",
    ),
    Entry::insert(
        DEFAULT,
        Marker::Webhook,
        Inline("- ../webhook\n- ../certmanager"),
    ),
    Entry::insert(
        DEFAULT,
        Marker::WebhookPatches,
        Template("webhook/insert/default_patch.yaml.tera"),
    ),
    // cert-manager's CA injection: the certificate's DNS names from the Service, its
    // `namespace/name` into the annotation of each object the API server calls us for.
    // The key, for projects from before `init` wrote it (#28); delete keeps it.
    Entry::insert(DEFAULT, REPLACEMENTS, Inline(REPLACEMENTS_KEY)),
    Entry::insert(
        model::WEBHOOK_KUSTOMIZATION,
        Marker::WebhookManifests,
        Inline("- manifests.yaml"),
    )
    .when(|s| s.has_defaulting || s.has_validation),
    Entry::insert(
        DEFAULT,
        REPLACEMENTS,
        Template("webhook/insert/certificate_dns_names.yaml.tera"),
    ),
    Entry::insert(
        DEFAULT,
        REPLACEMENTS,
        Template("webhook/insert/inject_mutating.yaml.tera"),
    )
    .when(|s| s.has_defaulting),
    Entry::insert(
        DEFAULT,
        REPLACEMENTS,
        Template("webhook/insert/inject_validating.yaml.tera"),
    )
    .when(|s| s.has_validation),
    Entry::insert(
        DEFAULT,
        REPLACEMENTS,
        Template("webhook/insert/inject_crd.yaml.tera"),
    )
    .when(|s| s.has_conversion),
    Entry::project(),
];

pub fn create_webhook(args: &CreateWebhookArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let (context, switches) = model(args, &project, &changes)?;
    let templates = Templates::load()?;
    super::scaffold(
        PLAN, &switches, &templates, &context, args.force, changes, out,
    )?;
    next_steps(out, &context.hook, &switches)
}

/// The model of the kind's webhooks: the kind looked up, what it will have derived, that
/// checked against the project, then the templates' context and the switches of [`PLAN`].
fn model(
    args: &CreateWebhookArgs,
    project: &Project,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let example = format!(
        "rkb create webhook --group {} --version {} --kind {}",
        args.gvk.group, args.gvk.version, args.gvk.kind
    );
    check_some_webhook(args, &example)?;
    let resolved = resolve(args, project, changes)?;
    check_duplicates(args, &resolved.before, &example)?;
    if args.webhooks.conversion {
        check_conversion(&resolved.project, args, &resolved.entry)?;
    }
    context(args, resolved, changes)
}

/// At least one of the webhook flags.
fn check_some_webhook(args: &CreateWebhookArgs, example: &str) -> anyhow::Result<()> {
    let asked = &args.webhooks;
    if asked.defaulting || asked.programmatic_validation || asked.conversion {
        return Ok(());
    }
    bail!(
        "no webhook chosen: create webhook needs at least one of --defaulting, \
         --programmatic-validation and --conversion.\n  \
         example:  {example} --defaulting --programmatic-validation"
    );
}

/// What `create webhook` would do for the kind it names, which PROJECT must have.
struct Resolved {
    /// PROJECT, with an entry for a built-in kind that had none.
    project: Project,
    /// The kind's entry, as PROJECT has it before the command.
    entry: project::Resource,
    /// The kind's webhooks before the command.
    before: project::Webhooks,
    /// The webhooks of this version after the command: what it has plus what is asked for.
    after: project::Webhooks,
    layout: Layout,
}

/// Looks the kind up (refused when PROJECT has no such kind) and derives what its
/// webhooks will be.
fn resolve(
    args: &CreateWebhookArgs,
    project: &Project,
    changes: &Changes,
) -> anyhow::Result<Resolved> {
    let mut project = project.clone();
    let entry = match find_resource(&project, args) {
        Ok(entry) => entry.clone(),
        // A built-in kind needs no API or controller of the project (kubebuilder's
        // `create webhook --group core --version v1 --kind Pod`): PROJECT records it as a
        // core resource with webhooks only.
        Err(error) => {
            let gvk = &args.gvk;
            let Some(builtin) = builtin_kinds::find(&gvk.group, &gvk.version, &gvk.kind) else {
                return Err(error);
            };
            let entry = model::Resource::builtin(builtin).entry(&project.domain, false, false);
            project.resources.push(entry.clone());
            entry
        }
    };
    let before = entry.webhooks.clone().unwrap_or_default();
    let mut spokes = args.spoke.clone();
    spokes.sort();
    spokes.dedup();
    let after = project::Webhooks {
        conversion: before.conversion || args.webhooks.conversion,
        defaulting: before.defaulting || args.webhooks.defaulting,
        spoke: if args.webhooks.conversion {
            spokes
        } else {
            before.spoke.clone()
        },
        validation: before.validation || args.webhooks.programmatic_validation,
        webhook_version: "v1".into(),
    };
    let layout = Layout::in_project(&project, &model::Resource::recorded(&entry), changes)?;
    Ok(Resolved {
        project,
        entry,
        before,
        after,
        layout,
    })
}

/// The templates' context and the switches of [`PLAN`] for what `resolved` describes.
fn context(
    args: &CreateWebhookArgs,
    resolved: Resolved,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let Resolved {
        mut project,
        entry,
        before,
        after,
        layout,
    } = resolved;
    let api = model::Resource::recorded(&entry);
    let asked = &args.webhooks;
    let switches = Switches {
        grouped: layout.webhook_group_module.is_some(),
        defaulting: asked.defaulting,
        validation: asked.programmatic_validation,
        conversion: asked.conversion,
        has_defaulting: after.defaulting,
        has_validation: after.validation,
        has_conversion: after.conversion,
        new_defaulting: asked.defaulting && !before.defaulting,
        new_validation: asked.programmatic_validation && !before.validation,
        new_conversion: asked.conversion && !before.conversion,
        extend_admission: !args.force && changes.exists(&layout.admission_file)?,
        first_webhook: project.resources.iter().all(|r| r.webhooks.is_none()),
    };
    if let Some(entry) = project.resources.iter_mut().find(|r| api.is(r)) {
        entry.webhooks = Some(after.clone());
    }
    let context = Context {
        names: ProjectNames::read(&project, changes)?,
        hook: Hook::new(&project, &api, &layout, &after),
        layout,
        project,
    };
    Ok((context, switches))
}

/// The model `create webhook` had when it gave PROJECT's `entry` (in `project`) the
/// webhooks `asked` on top of the others it has: what `rkb delete webhook` undoes, and
/// (with every webhook asked) what the kind's webhooks keep.
pub(super) fn recorded(
    project: &Project,
    entry: &project::Resource,
    asked: &project::Webhooks,
    changes: &Changes,
) -> anyhow::Result<(Context, Switches)> {
    let has = entry.webhooks.clone().unwrap_or_default();
    let api = model::Resource::recorded(entry);
    let layout = Layout::in_project(project, &api, changes)?;
    let others_admit =
        (has.defaulting && !asked.defaulting) || (has.validation && !asked.validation);
    let switches = Switches {
        grouped: layout.webhook_group_module.is_some(),
        defaulting: asked.defaulting,
        validation: asked.validation,
        conversion: asked.conversion,
        has_defaulting: has.defaulting,
        has_validation: has.validation,
        has_conversion: has.conversion,
        new_defaulting: asked.defaulting,
        new_validation: asked.validation,
        new_conversion: asked.conversion,
        // The admission file holds the other webhook: this one was inserted into it.
        extend_admission: others_admit,
        first_webhook: false,
    };
    let context = Context {
        names: ProjectNames::read(project, changes)?,
        hook: Hook::new(project, &api, &layout, &has),
        layout,
        project: project.clone(),
    };
    Ok((context, switches))
}

/// Tells the user what to implement and what the first webhook changed in the manager.
fn next_steps(out: &mut dyn Write, hook: &Hook, switches: &Switches) -> anyhow::Result<()> {
    writeln!(
        out,
        "\nNext: implement the webhooks in {}/, then run `make manifests` \
         (writes config/webhook/manifests.yaml{}).",
        hook.dir,
        if switches.conversion {
            " and the CRD's conversion stanza"
        } else {
            ""
        }
    )?;
    if switches.first_webhook {
        writeln!(
            out,
            "The manager now serves HTTPS on :9443 with the certificate in \
             /tmp/k8s-webhook-server/serving-certs; `make deploy` needs cert-manager in the \
             cluster, and `make run` needs that certificate locally (or RUN_ARGS=--webhook-bind-address=0)."
        )?;
    }
    Ok(())
}
