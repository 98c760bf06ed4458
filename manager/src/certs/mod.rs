//! Webhook certificates the manager provisions, injects and rotates itself, so that a
//! cluster needs no cert-manager for the operator's webhooks.
//!
//! Given a [`WebhookCertificates`] ([`Manager::webhook_certificates`](crate::Manager::webhook_certificates)):
//!
//! - The leader (the only replica with `--leader-elect=false`) creates a CA and a serving
//!   certificate for the webhook Service's DNS names, once, and keeps them in one Secret in
//!   the manager's namespace (`tls.crt`, `tls.key`, `ca.crt`, `ca.key`).
//! - It writes the CA bundle (`ca.crt`) into the `caBundle` of the webhook configurations
//!   and CRDs it is given by name, and of no other object.
//! - It renews the serving certificate when a third of its life is left, and the CA
//!   likewise: the new CA joins the bundle beside the old one, and only once every
//!   `caBundle` has carried both for [`propagation_delay`](WebhookCertificates::propagation_delay)
//!   is a certificate of the new CA served. The old CA leaves the bundle when it expires.
//! - A deleted or altered Secret or `caBundle` is put back at the next check (at once for
//!   the Secret, which every replica watches).
//! - Every replica serves the certificate in the Secret and reloads it when it changes.
//!
//! The leader's `/readyz` has a `webhook-certificates` check, failing until the Secret and
//! every `caBundle` are in place and while a write is forbidden (logged once, with the
//! RBAC rule it needs), so a missing permission shows instead of crash-looping. The
//! Secret's contents are never logged.

mod authority;
mod inject;
mod keeper;
mod serving;

use std::time::Duration;

use anyhow::Context as _;

pub(crate) use keeper::Keeper;
pub(crate) use serving::{SecretWatch, Served, serve_from};

/// Where the manager keeps its webhook certificates and which objects trust them; give it
/// to [`Manager::webhook_certificates`](crate::Manager::webhook_certificates).
///
/// ```
/// use rkb_manager::certs::WebhookCertificates;
///
/// let certs = WebhookCertificates::new("memcached-operator-webhook-server-cert")
///     .service("memcached-operator-webhook-service")
///     .mutating_webhook_configuration("memcached-operator-mutating-webhook-configuration")
///     .validating_webhook_configuration("memcached-operator-validating-webhook-configuration")
///     .conversion_webhook_crd("memcacheds.cache.example.com");
/// ```
#[derive(Clone, Debug)]
pub struct WebhookCertificates {
    secret: String,
    namespace: Option<String>,
    service: Option<String>,
    cluster_domain: String,
    hosts: Vec<String>,
    mutating: Vec<String>,
    validating: Vec<String>,
    crds: Vec<String>,
    ca_validity: Duration,
    serving_validity: Duration,
    propagation_delay: Duration,
    check_interval: Duration,
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

const DAY: Duration = Duration::from_secs(24 * 3600);

impl WebhookCertificates {
    /// Certificates kept in the Secret `secret` of the manager's namespace, with
    /// these defaults: the CA valid for 5 years, the serving certificate for 90 days (as
    /// cert-manager's), a propagation delay of 1 minute and a check every 10 seconds.
    pub fn new(secret: impl Into<String>) -> Self {
        Self {
            secret: secret.into(),
            namespace: None,
            service: None,
            cluster_domain: "cluster.local".into(),
            hosts: Vec::new(),
            mutating: Vec::new(),
            validating: Vec::new(),
            crds: Vec::new(),
            ca_validity: 5 * 365 * DAY,
            serving_validity: 90 * DAY,
            propagation_delay: Duration::from_secs(60),
            check_interval: Duration::from_secs(10),
        }
    }

    /// The namespace of the Secret (and of the Service); by default the manager's own (its
    /// ServiceAccount's, or the kubeconfig context's outside a cluster).
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// The webhook Service: the certificate names `<service>.<namespace>.svc` and
    /// `<service>.<namespace>.svc.<cluster domain>`.
    #[must_use]
    pub fn service(mut self, service: impl Into<String>) -> Self {
        self.service = Some(service.into());
        self
    }

    /// The cluster's DNS domain, `cluster.local` unless the cluster says otherwise.
    #[must_use]
    pub fn cluster_domain(mut self, domain: impl Into<String>) -> Self {
        self.cluster_domain = domain.into();
        self
    }

    /// More names for the certificate, DNS names or IP addresses (e.g. `127.0.0.1` for a
    /// webhook configuration with a `url:` on loopback, as in tests).
    #[must_use]
    pub fn hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// A MutatingWebhookConfiguration whose every webhook gets the CA bundle.
    #[must_use]
    pub fn mutating_webhook_configuration(mut self, name: impl Into<String>) -> Self {
        self.mutating.push(name.into());
        self
    }

    /// A ValidatingWebhookConfiguration whose every webhook gets the CA bundle.
    #[must_use]
    pub fn validating_webhook_configuration(mut self, name: impl Into<String>) -> Self {
        self.validating.push(name.into());
        self
    }

    /// A CRD (`<plural>.<group>`) whose conversion webhook gets the CA bundle.
    #[must_use]
    pub fn conversion_webhook_crd(mut self, name: impl Into<String>) -> Self {
        self.crds.push(name.into());
        self
    }

    /// How long the CA and the serving certificate are valid; each is renewed when a
    /// third of that is left. The CA must outlive the serving certificate.
    #[must_use]
    pub fn validity(mut self, ca: Duration, serving: Duration) -> Self {
        self.ca_validity = ca;
        self.serving_validity = serving;
        self
    }

    /// How long every `caBundle` carries a new CA before a certificate it signed is served:
    /// time for every API server to see the new bundle.
    #[must_use]
    pub fn propagation_delay(mut self, delay: Duration) -> Self {
        self.propagation_delay = delay;
        self
    }

    /// How often the leader checks the `caBundle`s and the certificates' lifetimes (the
    /// Secret is watched: a change to it is handled at once).
    #[must_use]
    pub fn check_interval(mut self, interval: Duration) -> Self {
        self.check_interval = interval;
        self
    }

    /// The Secret's name.
    pub fn secret_name(&self) -> &str {
        &self.secret
    }

    /// The namespace given with [`namespace`](Self::namespace), if any.
    pub fn namespace_name(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The MutatingWebhookConfigurations whose `caBundle` the manager keeps.
    pub fn mutating_webhook_configurations(&self) -> &[String] {
        &self.mutating
    }

    /// The ValidatingWebhookConfigurations whose `caBundle` the manager keeps.
    pub fn validating_webhook_configurations(&self) -> &[String] {
        &self.validating
    }

    /// The CRDs whose conversion webhook's `caBundle` the manager keeps.
    pub fn conversion_webhook_crds(&self) -> &[String] {
        &self.crds
    }

    /// The serving certificate's names, in the namespace `namespace`.
    pub(crate) fn hosts_in(&self, namespace: &str) -> Vec<String> {
        let mut hosts = Vec::new();
        if let Some(service) = &self.service {
            hosts.push(format!("{service}.{namespace}.svc"));
            hosts.push(format!("{service}.{namespace}.svc.{}", self.cluster_domain));
        }
        for host in &self.hosts {
            if !hosts.contains(host) {
                hosts.push(host.clone());
            }
        }
        hosts
    }

    pub(crate) fn targets(&self) -> Vec<Target> {
        let named = |names: &[String], target: fn(String) -> Target| {
            names.iter().cloned().map(target).collect::<Vec<_>>()
        };
        [
            named(&self.mutating, Target::Mutating),
            named(&self.validating, Target::Validating),
            named(&self.crds, Target::Crd),
        ]
        .concat()
    }

    /// Refuses what cannot work, naming the setting.
    pub(crate) fn check(&self) -> anyhow::Result<()> {
        use rkb_core::names::dns1123_subdomain;

        let name = |what: &str, name: &str| {
            dns1123_subdomain(name).with_context(|| {
                format!(
                    "webhook certificates: the {what} {name:?} is not a Kubernetes object name \
                     (lower-case letters, digits, '-' and '.', e.g. my-operator-webhook-server-cert)"
                )
            })
        };
        name("Secret", &self.secret)?;
        if let Some(service) = &self.service {
            rkb_core::names::dns1123_label(service).with_context(|| {
                format!("webhook certificates: the Service {service:?} is not a Service name (a DNS-1123 label, e.g. my-operator-webhook-service)")
            })?;
        }
        for target in self.targets() {
            let (Target::Mutating(n) | Target::Validating(n) | Target::Crd(n)) = &target;
            name(&target.to_string().replace(&format!(" {n}"), ""), n)?;
        }
        if self.service.is_none() && self.hosts.is_empty() {
            anyhow::bail!(
                "webhook certificates: no names for the serving certificate; give the webhook \
                 Service (`.service(\"my-operator-webhook-service\")`) or hosts (`.hosts([\"127.0.0.1\"])`)"
            );
        }
        for host in &self.hosts {
            if host.parse::<std::net::IpAddr>().is_err() && dns1123_subdomain(host).is_err() {
                anyhow::bail!(
                    "webhook certificates: the host {host:?} is neither an IP address nor a DNS \
                     name (e.g. 127.0.0.1 or my-webhook.example.com)"
                );
            }
        }
        let show = |d: Duration| humantime::format_duration(d).to_string();
        if self.serving_validity.is_zero() || self.ca_validity <= self.serving_validity {
            anyhow::bail!(
                "webhook certificates: the CA's validity ({}) must be longer than the serving \
                 certificate's ({}), which must be positive",
                show(self.ca_validity),
                show(self.serving_validity)
            );
        }
        if self.check_interval.is_zero() {
            anyhow::bail!("webhook certificates: the check interval must be positive");
        }
        Ok(())
    }

    fn policy(&self, namespace: &str, owner: &str) -> authority::Policy {
        authority::Policy {
            hosts: self.hosts_in(namespace),
            owner: owner.to_owned(),
            ca_validity: self.ca_validity,
            serving_validity: self.serving_validity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_gives_both_dns_names_and_hosts_follow() {
        let certs = WebhookCertificates::new("certs")
            .service("webhook-service")
            .hosts(["127.0.0.1", "webhook-service.system.svc"]);
        assert_eq!(
            certs.hosts_in("system"),
            [
                "webhook-service.system.svc",
                "webhook-service.system.svc.cluster.local",
                "127.0.0.1"
            ]
        );
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
                .validity(DAY, 2 * DAY),
        );
        assert!(error.contains("must be longer"), "{error}");
        let error = refused(WebhookCertificates::new("certs").hosts(["not a host"]));
        assert!(error.contains("\"not a host\""), "{error}");
    }
}
