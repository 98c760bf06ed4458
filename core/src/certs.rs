//! What the manager's self-managed certificates are, as values: the Secret they are kept
//! in, the names the serving certificate carries, which objects trust them, lifetimes and
//! timings. No I/O: the manager (`rkb_runtime::certs`, which re-exports these types) keeps
//! them, and `make manifests` turns the names into RBAC rules without linking the manager.

use std::time::Duration;

/// Which certificates: named in logs, readiness checks and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
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

/// What webhook and metrics certificates have alike: the Secret, the names the serving
/// certificate carries, lifetimes and timings. One home for the settings both builders set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    purpose: Purpose,
    secret: String,
    namespace: Option<String>,
    service: Option<String>,
    cluster_domain: String,
    hosts: Vec<String>,
    ca_validity: Duration,
    serving_validity: Duration,
    propagation_delay: Duration,
    check_interval: Duration,
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

    /// Webhook or metrics certificates.
    pub fn purpose(&self) -> Purpose {
        self.purpose
    }

    /// The Secret's name.
    pub fn secret_name(&self) -> &str {
        &self.secret
    }

    /// The namespace given, if any.
    pub fn namespace_name(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The Service the certificate is for, if given.
    pub fn service_name(&self) -> Option<&str> {
        self.service.as_deref()
    }

    /// The names given besides the Service's.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The CA's validity and the serving certificate's.
    pub fn validity(&self) -> (Duration, Duration) {
        (self.ca_validity, self.serving_validity)
    }

    /// How long the trusted bundle carries a new CA before a certificate it signed is served.
    pub fn propagation_delay(&self) -> Duration {
        self.propagation_delay
    }

    /// How often the leader checks the certificates' lifetimes.
    pub fn check_interval(&self) -> Duration {
        self.check_interval
    }

    /// The serving certificate's names, in the namespace `namespace`.
    pub fn hosts_in(&self, namespace: &str) -> Vec<String> {
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

        /// Everything set, for the manager that keeps them.
        pub fn settings(&self) -> &Settings {
            &self.settings
        }
    };
}

/// Where the manager keeps its webhook certificates and which objects trust them; give it
/// to `Manager::webhook_certificates`.
///
/// ```
/// use rkb_core::certs::WebhookCertificates;
///
/// let certs = WebhookCertificates::new("memcached-operator-webhook-server-cert")
///     .service("memcached-operator-webhook-service")
///     .mutating_webhook_configuration("memcached-operator-mutating-webhook-configuration")
///     .validating_webhook_configuration("memcached-operator-validating-webhook-configuration")
///     .conversion_webhook_crd("memcacheds.cache.example.com");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookCertificates {
    settings: Settings,
    mutating: Vec<String>,
    validating: Vec<String>,
    crds: Vec<String>,
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
}

/// Where the manager keeps the metrics server's certificate; give it to
/// `Manager::metrics_certificates`. The Secret's `ca.crt` is what the scraper verifies the
/// metrics server against (a ServiceMonitor's `tlsConfig.ca`), for the Service's DNS name
/// (its `serverName`).
///
/// It applies when the manager serves metrics over HTTPS without `--metrics-cert-path`
/// (which wins: cert-manager's certificate), in a cluster; with `--sharding`, the replica
/// elected for the work with one writer writes the Secret. Outside a cluster (no
/// `KUBERNETES_SERVICE_HOST`, as with `make run`) there is no Service to name: the manager
/// serves a self-signed certificate for `localhost`, as without this option, writes no
/// Secret and says so once.
///
/// ```
/// use rkb_core::certs::MetricsCertificates;
///
/// let certs = MetricsCertificates::new("memcached-operator-metrics-server-cert")
///     .service("memcached-operator-controller-manager-metrics-service");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
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

    /// Whether they apply to a process outside a cluster.
    pub fn outside_a_cluster(&self) -> bool {
        self.outside_a_cluster
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
    }

    #[test]
    fn metrics_certificates_wait_longer_for_the_new_ca_than_webhook_certificates() {
        let metrics = MetricsCertificates::new("op-metrics-server-cert");
        let webhook = WebhookCertificates::new("op-webhook-server-cert");
        assert_eq!(metrics.settings().purpose(), Purpose::Metrics);
        assert_eq!(
            metrics.settings().propagation_delay(),
            Duration::from_secs(300)
        );
        assert_eq!(
            webhook.settings().propagation_delay(),
            Duration::from_secs(60)
        );
    }
}
