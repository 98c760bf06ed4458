//! The certificates the manager keeps itself: which apply, the watches of their Secrets,
//! and what makes their keepers.

use tokio::task::JoinSet;

use super::{Manager, single};
use crate::certs::Check as _;

/// The watches of the Secrets of the certificates the manager keeps itself.
pub(super) struct Watches {
    pub webhook: Option<crate::certs::SecretWatch>,
    pub metrics: Option<crate::certs::SecretWatch>,
}

impl Manager {
    /// The watches of the Secrets of the webhook certificates, and of the metrics
    /// certificates when `metrics` (they apply), on every replica.
    pub(super) fn watch_certificates(
        &self,
        metrics: bool,
        background: &mut JoinSet<()>,
    ) -> Watches {
        Watches {
            webhook: self
                .certificates
                .as_ref()
                .map(|c| self.watch_secret(c.settings(), background)),
            metrics: self
                .metrics_certificates
                .as_ref()
                .filter(|_| metrics)
                .map(|c| self.watch_secret(c.settings(), background)),
        }
    }

    /// Whether the [`metrics_certificates`](Self::metrics_certificates) given apply: the
    /// metrics server serves HTTPS without `--metrics-cert-path`, in a cluster. Says once why they do not when they would be expected to.
    pub(super) fn keeps_metrics_certificates(&self) -> anyhow::Result<bool> {
        let Some(certificates) = &self.metrics_certificates else {
            return Ok(false);
        };
        certificates.check()?;
        if self.args.metrics_bind_address.0.is_none() || !self.args.metrics_secure {
            // No HTTPS metrics server (as with `make run`, whose metrics are off): nothing to certify.
            return Ok(false);
        }
        if self.args.metrics_cert_path.is_some() {
            tracing::info!(
                "metrics certificates: serving the certificate of --metrics-cert-path; the manager keeps no metrics certificate Secret"
            );
            return Ok(false);
        }
        if !certificates.outside_a_cluster()
            && std::env::var_os("KUBERNETES_SERVICE_HOST").is_none()
        {
            tracing::info!(
                secret = certificates.secret_name(),
                "metrics certificates: not in a cluster (no KUBERNETES_SERVICE_HOST), so no metrics Service to name: serving a self-signed certificate for localhost and writing no Secret"
            );
            return Ok(false);
        }
        Ok(true)
    }

    /// The watch of the Secret of `settings`, in the namespace they name or the manager's.
    fn watch_secret(
        &self,
        settings: &crate::certs::Settings,
        background: &mut JoinSet<()>,
    ) -> crate::certs::SecretWatch {
        let namespace = settings
            .namespace_name()
            .unwrap_or_else(|| self.client.default_namespace());
        let (watch, follow) = crate::certs::SecretWatch::new(
            self.client.clone(),
            settings.purpose(),
            namespace,
            settings.secret_name(),
        );
        background.spawn(follow);
        watch
    }

    /// With self-managed webhook or metrics certificates, what makes their keepers (by
    /// name: their task and readiness check) once given a readiness check. They write, so
    /// they run on one replica: the leader, or with `--sharding` the one elected for the
    /// work with one writer.
    pub(super) fn certificates_keepers(
        &self,
        watches: Watches,
    ) -> Vec<(String, single::MakeKeeper)> {
        let webhook = self
            .certificates
            .as_ref()
            .zip(watches.webhook)
            .map(|(config, watch)| {
                (
                    config.settings().clone(),
                    crate::certs::targets(config),
                    watch,
                )
            });
        let metrics = self
            .metrics_certificates
            .as_ref()
            .zip(watches.metrics)
            .map(|(config, watch)| (config.settings().clone(), Vec::new(), watch));
        webhook
            .into_iter()
            .chain(metrics)
            .map(|(settings, targets, watch)| {
                let name = format!("{}-certificates", settings.purpose());
                let (client, owner) = (self.client.clone(), self.name.clone());
                let make: single::MakeKeeper = Box::new(move |ready| {
                    crate::certs::Keeper::new(client, &settings, targets, watch, &owner, ready)
                });
                (name, make)
            })
            .collect()
    }
}
