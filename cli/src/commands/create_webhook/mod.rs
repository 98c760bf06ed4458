//! `rkb create webhook`: defaulting, validating and conversion webhooks for a kind of the
//! project, kubebuilder v4's `create webhook`. The Rust goes to `src/webhook/` (one module
//! per kind and version, like kubebuilder's `internal/webhook/<version>/<kind>_webhook.go`),
//! registered at `+rkb:scaffold:` markers in `src/webhook/mod.rs`, `src/lib.rs` (for
//! `make manifests`) and `src/main.rs`; the first webhook also switches on the webhook
//! Service, the cert-manager certificate and the manager's webhook patch in config/default.
//!
//! Three steps, as in every command: [`resolve`] derives the kind (through
//! [`derive`](super::derive)) and its webhooks after the command, [`checks::all`] refuses
//! what cannot be, and [`context`] makes what the templates of [`PLAN`] see.

mod checks;
mod context;
mod resolve;

use std::io::Write;

use crate::cli::CreateWebhookArgs;
use crate::model;
use crate::scaffold::plan::{
    Entry, IfExists, Marker,
    Text::{Inline, Template},
};
use crate::scaffold::{Changes, Templates};

#[cfg(test)]
pub(super) use context::Context;
pub(super) use context::{Hook, Spoke, recorded};

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
    /// cert-manager issues the certificates (PROJECT's `webhookCerts`), else the manager.
    cert_manager: bool,
    /// A built-in or external kind: no sample for the API-server tests to create.
    foreign: bool,
}

impl Switches {
    fn admission(&self) -> bool {
        self.defaulting || self.validation
    }

    fn self_certs(&self) -> bool {
        !self.cert_manager
    }

    /// The kind's samples go through its webhooks on envtest (src/webhook/tests.rs).
    fn api_server_tests(&self) -> bool {
        (self.admission() || self.conversion) && !self.foreign
    }
}

const ADMISSION: &str = "{{ layout.admission_file }}";
/// Also where `create api` inserts a later version's spoke.
pub(super) const CONVERSION: &str = "{{ hook.conversion_file }}";
const VERSION_MOD: &str = "{{ layout.webhook_version_file }}";
const GROUP_MOD: &str = "{{ layout.webhook_group_file }}";
const WEBHOOKS: &str = model::WEBHOOKS;
const DEFAULT: &str = model::DEFAULT_KUSTOMIZATION;
const CERTS: &str = model::WEBHOOK_CERTS;
/// The webhooks called by envtest's API server: a test per kind and webhook, and one that
/// they are served as `make manifests` lists them (beside `webhooks()`, declared in it).
const API_SERVER_TESTS: &str = "src/webhook/tests.rs";
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
    // The manager's own certificates: api/src/webhook_certs.rs names what it keeps, the
    // manager gets them, and `make manifests` the RBAC they need.
    Entry::insert_sorted(model::API_LIB, Marker::Modules, Inline("pub mod webhook_certs;"))
        .when(Switches::self_certs),
    Entry::shared(CERTS, "webhook/webhook_certs.rs.tera").rustfmt().when(Switches::self_certs),
    Entry::insert(
        CERTS,
        Marker::WebhookCertificates,
        Inline(".mutating_webhook_configuration(\"{{ project_name }}-mutating-webhook-configuration\")"),
    )
    .rustfmt()
    .when(|s| s.self_certs() && s.has_defaulting),
    Entry::insert(
        CERTS,
        Marker::WebhookCertificates,
        Inline(".validating_webhook_configuration(\"{{ project_name }}-validating-webhook-configuration\")"),
    )
    .rustfmt()
    .when(|s| s.self_certs() && s.has_validation),
    Entry::insert(
        CERTS,
        Marker::WebhookCertificates,
        Inline(".conversion_webhook_crd(\"{{ hook.crd }}\")"),
    )
    .rustfmt()
    .when(|s| s.self_certs() && s.has_conversion),
    Entry::insert(
        model::MAIN,
        Marker::Webhooks,
        Template("webhook/insert/main_certs.rs.tera"),
    )
    .rustfmt()
    .when(Switches::self_certs),
    Entry::insert(
        model::API_LIB,
        Marker::WebhookRbac,
        Template("webhook/insert/manifest_certs.rs.tera"),
    )
    .rustfmt()
    .when(Switches::self_certs),
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
    Entry::shared(API_SERVER_TESTS, "webhook/api_server_tests.rs.tera").rustfmt(),
    Entry::insert(
        API_SERVER_TESTS,
        Marker::WebhookTests,
        Template("webhook/insert/api_server_defaulter_test.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.new_defaulting && s.api_server_tests()),
    Entry::insert(
        API_SERVER_TESTS,
        Marker::WebhookTests,
        Template("webhook/insert/api_server_validator_test.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.new_validation && s.api_server_tests()),
    Entry::insert(
        API_SERVER_TESTS,
        Marker::WebhookTests,
        Template("webhook/insert/api_server_conversion_test.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.new_conversion && s.api_server_tests()),
    Entry::insert(
        WEBHOOKS,
        Marker::Webhooks,
        Template("webhook/insert/serve_defaulter.rs.tera"),
    )
    .when(|s| s.new_defaulting),
    Entry::insert(
        model::API_LIB,
        Marker::Webhooks,
        Template("webhook/insert/manifest_defaulter.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.new_defaulting),
    Entry::insert(
        WEBHOOKS,
        Marker::Webhooks,
        Template("webhook/insert/serve_validator.rs.tera"),
    )
    .when(|s| s.new_validation),
    Entry::insert(
        model::API_LIB,
        Marker::Webhooks,
        Template("webhook/insert/manifest_validator.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.new_validation),
    Entry::insert(
        WEBHOOKS,
        Marker::Webhooks,
        Template("webhook/insert/serve_conversion.rs.tera"),
    )
    .when(|s| s.new_conversion),
    Entry::insert(
        model::API_LIB,
        Marker::Webhooks,
        Template("webhook/insert/manifest_conversion.rs.tera"),
    )
    .rustfmt()
    .when(|s| s.new_conversion),
    // Conversion: the hub's and spokes' impls, beside the types in the API crate.
    Entry::file(CONVERSION, "webhook/conversion.rs.tera")
        .rustfmt()
        .when(|s| s.conversion),
    Entry::insert_sorted(
        "{{ layout.api_version_file }}",
        Marker::Kinds,
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
    )
    .when(|s| s.cert_manager),
    Entry::shared(
        "config/certmanager/issuer.yaml",
        "webhook/config/certmanager/issuer.yaml.tera",
    )
    .when(|s| s.cert_manager),
    Entry::shared(
        "config/certmanager/kustomization.yaml",
        "webhook/config/certmanager/kustomization.yaml.tera",
    )
    .when(|s| s.cert_manager),
    Entry::shared(
        "config/certmanager/kustomizeconfig.yaml",
        "webhook/config/certmanager/kustomizeconfig.yaml.tera",
    )
    .when(|s| s.cert_manager),
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
    )
    .when(|s| s.cert_manager),
    Entry::insert(DEFAULT, Marker::Webhook, Inline("- ../webhook")).when(Switches::self_certs),
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
    )
    .when(|s| s.cert_manager),
    Entry::insert(
        DEFAULT,
        REPLACEMENTS,
        Template("webhook/insert/inject_mutating.yaml.tera"),
    )
    .when(|s| s.cert_manager && s.has_defaulting),
    Entry::insert(
        DEFAULT,
        REPLACEMENTS,
        Template("webhook/insert/inject_validating.yaml.tera"),
    )
    .when(|s| s.cert_manager && s.has_validation),
    Entry::insert(
        DEFAULT,
        REPLACEMENTS,
        Template("webhook/insert/inject_crd.yaml.tera"),
    )
    .when(|s| s.cert_manager && s.has_conversion),
    Entry::project(),
];

pub fn create_webhook(args: &CreateWebhookArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let changes = Changes::open(&args.dir)?;
    let project = super::load_project(&args.dir, out)?;
    let resolved = resolve::resolve(args, &project, &changes)?;
    checks::all(args, &resolved)?;
    let (context, switches) = context::context(args, resolved, &changes)?;
    let templates = Templates::load()?;
    super::scaffold(
        PLAN, &switches, &templates, &context, args.force, changes, out,
    )?;
    next_steps(out, &context.hook, &switches)
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
    if switches.first_webhook && switches.cert_manager {
        writeln!(
            out,
            "The manager now serves HTTPS on :9443 with the certificate in \
             /tmp/k8s-webhook-server/serving-certs; `make deploy` needs cert-manager in the \
             cluster, and `make run` needs that certificate locally (or RUN_ARGS=--webhook-bind-address=0)."
        )?;
    } else if switches.first_webhook {
        writeln!(
            out,
            "The manager now serves HTTPS on :9443 with a certificate it makes, keeps in a \
             Secret and writes into its webhook configurations itself (api/src/webhook_certs.rs); \
             `make deploy` needs nothing else in the cluster, and `make run` serves the webhooks \
             only to a cluster that reaches your machine (or RUN_ARGS=--webhook-bind-address=0)."
        )?;
    }
    Ok(())
}
