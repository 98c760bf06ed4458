//! The leader's part: keeps the Secret holding what [`authority::next`] asks for, and every
//! named `caBundle` holding its CA bundle, at each check and whenever the Secret changes.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::authority::{self, Change, Material, Policy};
use super::inject::{InjectError, Injected, inject};
use super::serving::{SecretWatch, Seen};
use super::{Purpose, Settings, Target};
use crate::manager::Check;

/// How soon a check that lost a race for the Secret (a conflict) is retried.
const RETRY: Duration = Duration::from_secs(1);

/// The leader's certificate keeper; see the [module docs](super).
pub(crate) struct Keeper {
    client: Client,
    purpose: Purpose,
    secrets: Api<Secret>,
    watch: SecretWatch,
    policy: Policy,
    targets: Vec<Target>,
    propagation_delay: Duration,
    check_interval: Duration,
    ready: Check,
    /// What was last written or read intact: put back if the Secret is deleted or broken,
    /// so the CA the API servers trust does not change under them.
    last_good: Option<Material>,
    /// The bundle every `caBundle` holds, and since when.
    trusted: Option<(String, Instant)>,
    /// The problem last logged per object, so each is logged once.
    reported: BTreeMap<String, String>,
}

impl Keeper {
    /// A keeper of the certificates `settings` describe, and of the `caBundle` of each
    /// of `targets` (none for metrics: the scraper reads the Secret's `ca.crt`).
    pub(crate) fn new(
        client: Client,
        settings: &Settings,
        targets: Vec<Target>,
        watch: SecretWatch,
        owner: &str,
        ready: Check,
    ) -> Self {
        Self {
            secrets: Api::namespaced(client.clone(), &watch.namespace),
            purpose: settings.purpose(),
            policy: super::policy(settings, &watch.namespace, owner),
            targets,
            propagation_delay: settings.propagation_delay(),
            check_interval: settings.check_interval(),
            client,
            watch,
            ready,
            last_good: None,
            trusted: None,
            reported: BTreeMap::new(),
        }
    }

    /// Keeps the certificates until `shutdown`; failures are logged and retried, never
    /// returned.
    pub(crate) async fn run(mut self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let mut seen = self.watch.subscribe();
        loop {
            let current = seen.borrow_and_update().clone();
            // Nothing to decide before the watch has listed the Secret.
            let wait = match current {
                Seen::Unknown => None,
                Seen::Absent => Some(self.check(None).await),
                Seen::Present(secret) => Some(self.check(Some(&secret)).await),
            };
            let sleep = async {
                match wait {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = shutdown.cancelled() => return Ok(()),
                changed = seen.changed() => if changed.is_err() { return Ok(()) },
                () = sleep => {}
            }
        }
    }

    /// One round: the Secret, then every `caBundle`. Returns when to check again.
    async fn check(&mut self, stored_secret: Option<&Secret>) -> Duration {
        let now = SystemTime::now();
        let stored = Material::from_data(stored_secret.and_then(|s| s.data.as_ref()));
        let restore = self
            .last_good
            .as_ref()
            .filter(|good| {
                !authority::has_usable_ca(&stored, now) && authority::has_usable_ca(good, now)
            })
            .cloned();
        let base = restore.clone().unwrap_or_else(|| stored.clone());
        let settled = self.trusted.as_ref().is_some_and(|(bundle, since)| {
            *bundle == base.ca_bundle && since.elapsed() >= self.propagation_delay
        });
        let next = match authority::next(&base, &self.policy, now, settled) {
            Ok(next) => next,
            Err(error) => {
                tracing::error!(
                    error = format!("{error:#}"),
                    "cannot make the {} certificates; retrying",
                    self.purpose
                );
                return self.check_interval;
            }
        };
        if next.material != stored {
            match self.write(stored_secret, &next.material).await {
                Ok(()) => {
                    self.report("Secret", None);
                    log_changes(self.purpose, &self.watch, &next.changes, restore.is_some());
                }
                Err(kube::Error::Api(status)) if status.code == 409 => return RETRY,
                Err(error) => {
                    let forbidden =
                        matches!(&error, kube::Error::Api(status) if status.code == 403);
                    if forbidden {
                        self.ready.fail();
                    }
                    let problem = format!(
                        "cannot write the {} certificate Secret {}/{}: {error}{}",
                        self.purpose,
                        self.watch.namespace,
                        self.watch.name,
                        if forbidden {
                            "; the manager needs get, list, watch, create and update on it"
                        } else {
                            ""
                        }
                    );
                    self.report("Secret", Problem::error(problem));
                    return self.check_interval;
                }
            }
        }
        self.last_good = Some(next.material.clone());

        let all_trust = self.inject_all(&next.material.ca_bundle).await;
        if next.waiting_for_trust {
            let left = self
                .trusted
                .as_ref()
                .map_or(self.propagation_delay, |(_, since)| {
                    self.propagation_delay.saturating_sub(since.elapsed())
                });
            if all_trust {
                return left.min(self.check_interval) + Duration::from_millis(10);
            }
        }
        self.check_interval
    }

    /// Puts the bundle in every named `caBundle`; whether all now hold it. Readiness
    /// fails while a write is forbidden.
    async fn inject_all(&mut self, bundle: &str) -> bool {
        let encoded = base64::engine::general_purpose::STANDARD.encode(bundle);
        let (mut patched, mut failed, mut forbidden) = (false, false, false);
        for target in self.targets.clone() {
            let problem = match inject(&self.client, &target, &encoded).await {
                Ok(Injected::Current) => None,
                Ok(Injected::Patched) => {
                    patched = true;
                    tracing::info!(object = %target, "wrote the webhook CA bundle into its caBundle");
                    None
                }
                Ok(Injected::Absent) => Problem::warning(format!(
                    "{target} does not exist; its caBundle is written once it does"
                )),
                Ok(Injected::NoConversionWebhook) => Problem::warning(format!(
                    "{target} has no conversion webhook (spec.conversion.strategy is not Webhook); \
                     nothing to write"
                )),
                Err(failure) => {
                    failed = true;
                    forbidden |= matches!(failure, InjectError::Forbidden { .. });
                    Problem::error(match &failure {
                        InjectError::Forbidden { verb, .. } => format!(
                            "cannot write the CA bundle into {target}: {failure}; the manager \
                             needs get and patch on it (RBAC with resourceNames: [{name}]), \
                             without which the API server cannot trust the webhook; {verb} \
                             is retried",
                            name = target_name(&target)
                        ),
                        InjectError::Failed { .. } => {
                            format!("cannot write the CA bundle into {target}: {failure}; retrying")
                        }
                    })
                }
            };
            self.report(&target.to_string(), problem);
        }
        if forbidden {
            self.ready.fail();
        } else if !failed {
            self.ready.pass();
        }
        let unchanged = self
            .trusted
            .as_ref()
            .is_some_and(|(trusted, _)| trusted == bundle);
        if failed {
            self.trusted = None;
        } else if patched || !unchanged {
            self.trusted = Some((bundle.to_owned(), Instant::now()));
        }
        !failed
    }

    async fn write(&self, stored: Option<&Secret>, material: &Material) -> kube::Result<()> {
        let params = PostParams {
            field_manager: Some(format!("rkb-{}-certificates", self.purpose)),
            ..PostParams::default()
        };
        match stored {
            // `replace` carries the resourceVersion read: a change since then is a conflict.
            Some(secret) => {
                let mut secret = secret.clone();
                secret.data = Some(material.to_data());
                secret.string_data = None;
                self.secrets
                    .replace(&self.watch.name, &params, &secret)
                    .await?;
            }
            None => {
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(self.watch.name.clone()),
                        namespace: Some(self.watch.namespace.clone()),
                        labels: Some(
                            [(
                                "app.kubernetes.io/managed-by".to_owned(),
                                "rkb-runtime".to_owned(),
                            )]
                            .into(),
                        ),
                        ..ObjectMeta::default()
                    },
                    type_: Some("kubernetes.io/tls".into()),
                    data: Some(material.to_data()),
                    ..Secret::default()
                };
                self.secrets.create(&params, &secret).await?;
            }
        }
        Ok(())
    }

    /// Logs `problem` of `object` if it is new (as an error when it stops the webhooks
    /// from working), and its end once it is gone.
    fn report(&mut self, object: &str, problem: Option<Problem>) {
        match problem {
            Some(Problem { error, problem }) => {
                if self.reported.get(object) != Some(&problem) {
                    if error {
                        tracing::error!(object, "{problem}");
                    } else {
                        tracing::warn!(object, "{problem}");
                    }
                    self.reported.insert(object.to_owned(), problem);
                }
            }
            None => {
                if self.reported.remove(object).is_some() {
                    tracing::info!(
                        object,
                        "the {} certificates' problem with it is solved",
                        self.purpose
                    );
                }
            }
        }
    }
}

/// A problem to report: its text, and whether it is an error rather than a warning.
struct Problem {
    error: bool,
    problem: String,
}

impl Problem {
    fn warning(problem: String) -> Option<Self> {
        Some(Self {
            error: false,
            problem,
        })
    }

    fn error(problem: String) -> Option<Self> {
        Some(Self {
            error: true,
            problem,
        })
    }
}

fn target_name(target: &Target) -> &str {
    match target {
        Target::Mutating(name) | Target::Validating(name) | Target::Crd(name) => name,
    }
}

fn log_changes(purpose: Purpose, watch: &SecretWatch, changes: &[Change], restored: bool) {
    let secret = format!("{}/{}", watch.namespace, watch.name);
    if restored {
        tracing::warn!(%secret, "the {purpose} certificate Secret was deleted or its CA damaged: put back as it was");
    }
    let trusted_by = match purpose {
        Purpose::Webhook => "every caBundle holds both",
        Purpose::Metrics => {
            "scrapers have had both in the Secret's ca.crt for the propagation delay"
        }
    };
    for change in changes {
        let what = match change {
            Change::NewCa => format!("created a {purpose} CA"),
            Change::RotatedCa => format!(
                "rotating the {purpose} CA: the new one is trusted beside the old one, and serves once {trusted_by}"
            ),
            Change::DroppedExpiredCas => {
                format!("removed expired CAs from the {purpose} CA bundle")
            }
            Change::NewServing => format!("issued a {purpose} serving certificate"),
            Change::RenewedServing => format!("renewed the {purpose} serving certificate"),
        };
        tracing::info!(%secret, "{what}");
    }
}
