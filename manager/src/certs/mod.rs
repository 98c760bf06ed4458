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

/// Which certificates: named in logs, readiness checks and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    Webhook,
    Metrics,
}

impl std::fmt::Display for Purpose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Webhook => "webhook",
            Self::Metrics => "metrics",
        })
    }
}

impl Purpose {
    /// Example names for error messages: a Secret's and a Service's.
    fn examples(self) -> (&'static str, &'static str) {
        match self {
            Self::Webhook => (
                "my-operator-webhook-server-cert",
                "my-operator-webhook-service",
            ),
            Self::Metrics => (
                "my-operator-metrics-server-cert",
                "my-operator-controller-manager-metrics-service",
            ),
        }
    }
}

/// What webhook and metrics certificates have alike: the Secret, the names the serving
/// certificate carries, lifetimes and timings. One home for the settings both builders set.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) purpose: Purpose,
    secret: String,
    namespace: Option<String>,
    service: Option<String>,
    cluster_domain: String,
    hosts: Vec<String>,
    ca_validity: Duration,
    serving_validity: Duration,
    pub(crate) propagation_delay: Duration,
    pub(crate) check_interval: Duration,
}

const DAY: Duration = Duration::from_secs(24 * 3600);

impl Settings {
    fn new(purpose: Purpose, secret: String, propagation_delay: Duration) -> Self {
        Self {
            purpose,
            secret,
            namespace: None,
            service: None,
            cluster_domain: "cluster.local".into(),
            hosts: Vec::new(),
            ca_validity: 5 * 365 * DAY,
            serving_validity: 90 * DAY,
            propagation_delay,
            check_interval: Duration::from_secs(10),
        }
    }

    /// The Secret's name.
    pub(crate) fn secret_name(&self) -> &str {
        &self.secret
    }

    /// The namespace given, if any.
    pub(crate) fn namespace_name(&self) -> Option<&str> {
        self.namespace.as_deref()
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

    /// Refuses what cannot work, naming the setting.
    fn check(&self) -> anyhow::Result<()> {
        use rkb_core::names::dns1123_subdomain;

        let purpose = self.purpose;
        let (secret_example, service_example) = purpose.examples();
        dns1123_subdomain(&self.secret).with_context(|| {
            format!(
                "{purpose} certificates: the Secret {:?} is not a Kubernetes object name \
                 (lower-case letters, digits, '-' and '.', e.g. {secret_example})",
                self.secret
            )
        })?;
        if let Some(service) = &self.service {
            rkb_core::names::dns1123_label(service).with_context(|| {
                format!("{purpose} certificates: the Service {service:?} is not a Service name (a DNS-1123 label, e.g. {service_example})")
            })?;
        }
        if self.service.is_none() && self.hosts.is_empty() {
            anyhow::bail!(
                "{purpose} certificates: no names for the serving certificate; give the {purpose} \
                 Service (`.service(\"{service_example}\")`) or hosts (`.hosts([\"127.0.0.1\"])`)"
            );
        }
        for host in &self.hosts {
            if host.parse::<std::net::IpAddr>().is_err() && dns1123_subdomain(host).is_err() {
                anyhow::bail!(
                    "{purpose} certificates: the host {host:?} is neither an IP address nor a DNS \
                     name (e.g. 127.0.0.1 or my-{purpose}.example.com)"
                );
            }
        }
        let show = |d: Duration| humantime::format_duration(d).to_string();
        if self.serving_validity.is_zero() || self.ca_validity <= self.serving_validity {
            anyhow::bail!(
                "{purpose} certificates: the CA's validity ({}) must be longer than the serving \
                 certificate's ({}), which must be positive",
                show(self.ca_validity),
                show(self.serving_validity)
            );
        }
        if self.check_interval.is_zero() {
            anyhow::bail!("{purpose} certificates: the check interval must be positive");
        }
        Ok(())
    }

    pub(crate) fn policy(&self, namespace: &str, owner: &str) -> authority::Policy {
        authority::Policy {
            hosts: self.hosts_in(namespace),
            owner: format!("{owner} {}", self.purpose),
            ca_validity: self.ca_validity,
            serving_validity: self.serving_validity,
        }
    }
}

/// The builder methods [`WebhookCertificates`] and [`MetricsCertificates`] share, written
/// once: each sets a field of their [`Settings`].
macro_rules! settings_methods {
    () => {
        /// The namespace of the Secret (and of the Service); by default the manager's own
        /// (its ServiceAccount's, or the kubeconfig context's outside a cluster).
        #[must_use]
        pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
            self.settings.namespace = Some(namespace.into());
            self
        }

        /// The Service the certificate is for: it names `<service>.<namespace>.svc` and
        /// `<service>.<namespace>.svc.<cluster domain>`.
        #[must_use]
        pub fn service(mut self, service: impl Into<String>) -> Self {
            self.settings.service = Some(service.into());
            self
        }

        /// The cluster's DNS domain, `cluster.local` unless the cluster says otherwise.
        #[must_use]
        pub fn cluster_domain(mut self, domain: impl Into<String>) -> Self {
            self.settings.cluster_domain = domain.into();
            self
        }

        /// More names for the certificate, DNS names or IP addresses (e.g. `127.0.0.1`
        /// for a server called on loopback, as in tests).
        #[must_use]
        pub fn hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
            self.settings
                .hosts
                .extend(hosts.into_iter().map(Into::into));
            self
        }

        /// How long the CA and the serving certificate are valid; each is renewed when a
        /// third of that is left. The CA must outlive the serving certificate.
        #[must_use]
        pub fn validity(mut self, ca: Duration, serving: Duration) -> Self {
            self.settings.ca_validity = ca;
            self.settings.serving_validity = serving;
            self
        }

        /// How long the trusted bundle carries a new CA before a certificate it signed is
        /// served: time for everyone who verifies the server to see the new bundle.
        #[must_use]
        pub fn propagation_delay(mut self, delay: Duration) -> Self {
            self.settings.propagation_delay = delay;
            self
        }

        /// How often the leader checks the certificates' lifetimes (and the `caBundle`s;
        /// the Secret is watched: a change to it is handled at once).
        #[must_use]
        pub fn check_interval(mut self, interval: Duration) -> Self {
            self.settings.check_interval = interval;
            self
        }

        /// The Secret's name.
        pub fn secret_name(&self) -> &str {
            self.settings.secret_name()
        }

        /// The namespace given with [`namespace`](Self::namespace), if any.
        pub fn namespace_name(&self) -> Option<&str> {
            self.settings.namespace_name()
        }
    };
}

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
    settings: Settings,
    mutating: Vec<String>,
    validating: Vec<String>,
    crds: Vec<String>,
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

impl WebhookCertificates {
    /// Certificates kept in the Secret `secret` of the manager's namespace, with
    /// these defaults: the CA valid for 5 years, the serving certificate for 90 days (as
    /// cert-manager's), a propagation delay of 1 minute and a check every 10 seconds.
    pub fn new(secret: impl Into<String>) -> Self {
        Self {
            settings: Settings::new(Purpose::Webhook, secret.into(), Duration::from_secs(60)),
            mutating: Vec::new(),
            validating: Vec::new(),
            crds: Vec::new(),
        }
    }

    settings_methods!();

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

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
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
        for target in self.targets() {
            let (Target::Mutating(n) | Target::Validating(n) | Target::Crd(n)) = &target;
            rkb_core::names::dns1123_subdomain(n).with_context(|| {
                format!(
                    "webhook certificates: the {} {n:?} is not a Kubernetes object name \
                     (lower-case letters, digits, '-' and '.', e.g. my-operator-webhook-server-cert)",
                    target.to_string().replace(&format!(" {n}"), "")
                )
            })?;
        }
        self.settings.check()
    }
}

/// Where the manager keeps the metrics server's certificate; give it to
/// [`Manager::metrics_certificates`](crate::Manager::metrics_certificates). The Secret's
/// `ca.crt` is what the scraper verifies the metrics server against (a ServiceMonitor's
/// `tlsConfig.ca`), for the Service's DNS name (its `serverName`).
///
/// It applies when the manager serves metrics over HTTPS without `--metrics-cert-path`
/// (which wins: cert-manager's certificate), in a cluster; with `--sharding`, the replica
/// elected for the work with one writer writes the Secret. Outside a cluster (no `KUBERNETES_SERVICE_HOST`, as
/// with `make run`) there is no Service to name: the manager serves a self-signed
/// certificate for `localhost`, as without this option, writes no Secret and says so once.
///
/// ```
/// use rkb_manager::certs::MetricsCertificates;
///
/// let certs = MetricsCertificates::new("memcached-operator-metrics-server-cert")
///     .service("memcached-operator-controller-manager-metrics-service");
/// ```
#[derive(Clone, Debug)]
pub struct MetricsCertificates {
    settings: Settings,
    outside_a_cluster: bool,
}

impl MetricsCertificates {
    /// Certificates kept in the Secret `secret` of the manager's namespace, with these
    /// defaults: the CA valid for 5 years, the serving certificate for 90 days, a check
    /// every 10 seconds, and a propagation delay of 5 minutes: the Prometheus Operator
    /// copies a changed `ca.crt` into Prometheus' configuration through a mounted Secret,
    /// which the kubelet refreshes within a minute or two.
    pub fn new(secret: impl Into<String>) -> Self {
        Self {
            settings: Settings::new(Purpose::Metrics, secret.into(), Duration::from_secs(5 * 60)),
            outside_a_cluster: false,
        }
    }

    settings_methods!();

    /// Keeps the Secret and serves its certificate outside a cluster too, as in one
    /// (tests against envtest do).
    #[must_use]
    pub fn outside_a_cluster_too(mut self) -> Self {
        self.outside_a_cluster = true;
        self
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Whether they apply to a process outside a cluster.
    pub(crate) fn outside_a_cluster(&self) -> bool {
        self.outside_a_cluster
    }

    /// Refuses what cannot work, naming the setting.
    pub(crate) fn check(&self) -> anyhow::Result<()> {
        self.settings.check()
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
            certs.settings().hosts_in("system"),
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
        assert_eq!(certs.settings().propagation_delay, Duration::from_secs(300));
        assert_eq!(
            certs.settings().policy("op-system", "op").owner,
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
