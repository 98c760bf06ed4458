//! Certificates the manager makes and rotates itself, so that a cluster needs no
//! cert-manager: the webhooks' ([`WebhookCertificates`], given to
//! [`Manager::webhook_certificates`](crate::Manager::webhook_certificates)) and the metrics
//! server's ([`MetricsCertificates`], given to
//! [`Manager::metrics_certificates`](crate::Manager::metrics_certificates)). Each has a CA
//! and a Secret of its own, kept the same way:
//!
//! - The leader (the only replica with `--leader-elect=false`) creates a CA and a serving
//!   certificate for the Service's DNS names, once, and keeps them in one Secret in the
//!   manager's namespace (`tls.crt`, `tls.key`, `ca.crt`, `ca.key`).
//! - For webhooks, it writes the CA bundle (`ca.crt`) into the `caBundle` of the webhook
//!   configurations and CRDs it is given by name, and of no other object. For metrics, the
//!   scraper reads `ca.crt` from the Secret (the ServiceMonitor names it).
//! - It renews the serving certificate when a third of its life is left, and the CA
//!   likewise: the new CA joins the bundle beside the old one, and only once every
//!   `caBundle` (for metrics, the Secret's `ca.crt`) has carried both for
//!   [`propagation_delay`](WebhookCertificates::propagation_delay) is a certificate of the
//!   new CA served. The old CA leaves the bundle when it expires.
//! - A deleted or altered Secret or `caBundle` is put back at the next check (at once for
//!   the Secret, which every replica watches).
//! - Every replica serves the certificate in the Secret and reloads it when it changes.
//!
//! The leader's `/readyz` has a `webhook-certificates` (`metrics-certificates`) check,
//! failing until the Secret and every `caBundle` are in place and while a write is
//! forbidden (logged once, with the RBAC rule it needs), so a missing permission shows
//! instead of crash-looping. The Secret's contents are never logged.
//!
//! Why two CAs rather than one: the webhook CA is trusted by the API server for admission
//! and conversion, the metrics CA by Prometheus for scrapes. Apart, whoever may read the
//! metrics Secret (the Prometheus Operator reads its `ca.crt`) holds no key the API server
//! trusts, a rotation of one waits for its own readers only, and an operator without
//! webhooks has a metrics Secret and nothing else.

mod authority;
mod inject;
mod keeper;
mod serving;

use std::time::Duration;

use anyhow::Context as _;

pub(crate) use keeper::Keeper;
pub(crate) use serving::{SecretWatch, Served, serve_from};

pub use rkb_core::certs::{MetricsCertificates, Purpose, Settings, WebhookCertificates};

/// Example names for error messages: a Secret's and a Service's.
fn examples(purpose: Purpose) -> (&'static str, &'static str) {
    match purpose {
        Purpose::Webhook => (
            "my-operator-webhook-server-cert",
            "my-operator-webhook-service",
        ),
        Purpose::Metrics => (
            "my-operator-metrics-server-cert",
            "my-operator-controller-manager-metrics-service",
        ),
    }
}

/// Refuses settings that cannot work, naming the setting: what the manager checks before
/// it keeps certificates (the values themselves live in rkb-core, without I/O, so that
/// `make manifests` reads their names without the manager).
pub(crate) trait Check {
    fn check(&self) -> anyhow::Result<()>;
}

impl Check for Settings {
    fn check(&self) -> anyhow::Result<()> {
        use rkb_core::names::dns1123_subdomain;

        let purpose = self.purpose();
        let (secret_example, service_example) = examples(purpose);
        let secret = self.secret_name();
        dns1123_subdomain(secret).with_context(|| {
            format!(
                "{purpose} certificates: the Secret {secret:?} is not a Kubernetes object name \
                 (lower-case letters, digits, '-' and '.', e.g. {secret_example})"
            )
        })?;
        if let Some(service) = self.service_name() {
            rkb_core::names::dns1123_label(service).with_context(|| {
                format!("{purpose} certificates: the Service {service:?} is not a Service name (a DNS-1123 label, e.g. {service_example})")
            })?;
        }
        if self.service_name().is_none() && self.hosts().is_empty() {
            anyhow::bail!(
                "{purpose} certificates: no names for the serving certificate; give the {purpose} \
                 Service (`.service(\"{service_example}\")`) or hosts (`.hosts([\"127.0.0.1\"])`)"
            );
        }
        for host in self.hosts() {
            if host.parse::<std::net::IpAddr>().is_err() && dns1123_subdomain(host).is_err() {
                anyhow::bail!(
                    "{purpose} certificates: the host {host:?} is neither an IP address nor a DNS \
                     name (e.g. 127.0.0.1 or my-{purpose}.example.com)"
                );
            }
        }
        let show = |d: Duration| humantime::format_duration(d).to_string();
        let (ca_validity, serving_validity) = self.validity();
        if serving_validity.is_zero() || ca_validity <= serving_validity {
            anyhow::bail!(
                "{purpose} certificates: the CA's validity ({}) must be longer than the serving \
                 certificate's ({}), which must be positive",
                show(ca_validity),
                show(serving_validity)
            );
        }
        if self.check_interval().is_zero() {
            anyhow::bail!("{purpose} certificates: the check interval must be positive");
        }
        Ok(())
    }
}

impl Check for WebhookCertificates {
    fn check(&self) -> anyhow::Result<()> {
        for target in targets(self) {
            let (Target::Mutating(n) | Target::Validating(n) | Target::Crd(n)) = &target;
            rkb_core::names::dns1123_subdomain(n).with_context(|| {
                format!(
                    "webhook certificates: the {} {n:?} is not a Kubernetes object name \
                     (lower-case letters, digits, '-' and '.', e.g. my-operator-webhook-server-cert)",
                    target.to_string().replace(&format!(" {n}"), "")
                )
            })?;
        }
        self.settings().check()
    }
}

impl Check for MetricsCertificates {
    fn check(&self) -> anyhow::Result<()> {
        self.settings().check()
    }
}

/// What the certificate authority of `settings` signs, in the namespace `namespace`.
pub(crate) fn policy(settings: &Settings, namespace: &str, owner: &str) -> authority::Policy {
    let (ca_validity, serving_validity) = settings.validity();
    authority::Policy {
        hosts: settings.hosts_in(namespace),
        owner: format!("{owner} {}", settings.purpose()),
        ca_validity,
        serving_validity,
    }
}

/// What one `caBundle` the manager keeps belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Mutating(String),
    Validating(String),
    Crd(String),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Mutating(name) => write!(f, "MutatingWebhookConfiguration {name}"),
            Self::Validating(name) => write!(f, "ValidatingWebhookConfiguration {name}"),
            Self::Crd(name) => write!(f, "CustomResourceDefinition {name}"),
        }
    }
}

/// Every object whose `caBundle` the manager keeps for `certs`.
pub(crate) fn targets(certs: &WebhookCertificates) -> Vec<Target> {
    let named = |names: &[String], target: fn(String) -> Target| {
        names.iter().cloned().map(target).collect::<Vec<_>>()
    };
    [
        named(certs.mutating_webhook_configurations(), Target::Mutating),
        named(
            certs.validating_webhook_configurations(),
            Target::Validating,
        ),
        named(certs.conversion_webhook_crds(), Target::Crd),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names they give are rkb-core's tests; the manager checks them.
    #[test]
    fn a_service_with_extra_hosts_passes_the_checks() {
        let certs = WebhookCertificates::new("certs")
            .service("webhook-service")
            .hosts(["127.0.0.1", "webhook-service.system.svc"]);
        certs.check().unwrap();
    }

    #[test]
    fn bad_settings_are_refused_with_what_is_accepted() {
        let refused = |certs: WebhookCertificates| format!("{:#}", certs.check().unwrap_err());
        let error = refused(WebhookCertificates::new("Certs").hosts(["localhost"]));
        assert!(error.contains("the Secret \"Certs\""), "{error}");
        let error = refused(WebhookCertificates::new("certs"));
        assert!(error.contains(".service("), "{error}");
        let error = refused(
            WebhookCertificates::new("certs")
                .hosts(["localhost"])
                .validating_webhook_configuration("Bad_Name"),
        );
        assert!(
            error.contains("ValidatingWebhookConfiguration \"Bad_Name\""),
            "{error}"
        );
        let error = refused(
            WebhookCertificates::new("certs")
                .hosts(["localhost"])
                .validity(Duration::from_secs(86_400), Duration::from_secs(2 * 86_400)),
        );
        assert!(error.contains("must be longer"), "{error}");
        let error = refused(WebhookCertificates::new("certs").hosts(["not a host"]));
        assert!(error.contains("\"not a host\""), "{error}");
    }

    #[test]
    fn metrics_certificates_name_the_metrics_service_and_say_metrics_when_refused() {
        let certs = MetricsCertificates::new("op-metrics-server-cert")
            .service("op-controller-manager-metrics-service");
        certs.check().unwrap();
        assert_eq!(
            certs.settings().hosts_in("op-system"),
            [
                "op-controller-manager-metrics-service.op-system.svc",
                "op-controller-manager-metrics-service.op-system.svc.cluster.local",
            ]
        );
        assert_eq!(
            certs.settings().propagation_delay(),
            Duration::from_secs(300)
        );
        assert_eq!(
            policy(certs.settings(), "op-system", "op").owner,
            "op metrics"
        );
        let error = format!(
            "{:#}",
            MetricsCertificates::new("op-metrics-server-cert")
                .check()
                .unwrap_err()
        );
        assert!(
            error.starts_with("metrics certificates: no names")
                && error.contains("controller-manager-metrics-service"),
            "{error}"
        );
    }
}
