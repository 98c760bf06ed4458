//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's algorithm and
//! safety margins (`k8s.io/client-go/tools/leaderelection`):
//!
//! - A standby judges expiry by its own monotonic clock: a Lease is free once its record
//!   has not changed for `leaseDurationSeconds` since this replica *observed* the change,
//!   whatever the leader's `renewTime` says. Clocks of different machines are never
//!   compared; a released Lease (no holder) is free at once.
//! - The leader stops leading `renew_deadline` after the start of its last successful
//!   renewal, whatever a request is doing then: every attempt is cut off at that deadline.
//!   As a standby waits at least `lease_duration` from a point after that start, at most
//!   one replica leads, given `renew_deadline < lease_duration`.
//! - Every request (acquire, renew, release) is bounded by `renew_deadline`; kube-client
//!   sets no read timeout, so a black-holed connection would otherwise hang for minutes.
//! - Writes are optimistic (`update` with the read `resourceVersion`): of two replicas
//!   racing for a free Lease, one gets a conflict and stays a standby.
//!
//! The requests are `get`, `create` and `update` on `leases`, in the Lease's namespace:
//! what the leader-election Role of a scaffolded project grants, and nothing more.
//!
//! rkb carries this instead of the kunobi-ha crate (0.6.1), which compares the standby's
//! wall clock with the leader's `renewTime` truncated to whole seconds, checks the
//! renew deadline only after a request has returned, and bounds neither acquire attempts
//! nor the release.

use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::sync::watch;
use tokio::time::Instant;

use super::Args;

/// client-go's `JitterFactor`: the renew deadline must leave room for a retry period
/// stretched by jitter.
const JITTER_FACTOR: f64 = 1.2;

/// The three durations of leader election, checked against each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timing {
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

impl Timing {
    /// The timing the flags ask for, refused with the rule it breaks (client-go's rules,
    /// and whole seconds, as `leaseDurationSeconds` is an integer).
    pub(crate) fn from_args(args: &Args) -> anyhow::Result<Self> {
        let timing = Self {
            lease_duration: args.leader_election_lease_duration,
            renew_deadline: args.leader_election_renew_deadline,
            retry_period: args.leader_election_retry_period,
        };
        let show = |d: Duration| humantime::format_duration(d).to_string();
        let (lease, renew, retry) = (
            show(timing.lease_duration),
            show(timing.renew_deadline),
            show(timing.retry_period),
        );
        if timing.retry_period.is_zero() || timing.renew_deadline.is_zero() {
            anyhow::bail!(
                "--leader-election-renew-deadline ({renew}) and --leader-election-retry-period ({retry}) must be positive"
            );
        }
        if timing.lease_duration.subsec_nanos() != 0
            || timing.lease_duration.is_zero()
            || i32::try_from(timing.lease_duration.as_secs()).is_err()
        {
            anyhow::bail!(
                "--leader-election-lease-duration ({lease}) must be a whole number of seconds, at least 1s (the Lease stores whole seconds)"
            );
        }
        if timing.renew_deadline >= timing.lease_duration {
            anyhow::bail!(
                "--leader-election-renew-deadline ({renew}) must be shorter than --leader-election-lease-duration ({lease}): \
                 the leader must stop before a standby may take over"
            );
        }
        if timing.renew_deadline.as_secs_f64() <= JITTER_FACTOR * timing.retry_period.as_secs_f64()
        {
            anyhow::bail!(
                "--leader-election-renew-deadline ({renew}) must be longer than {JITTER_FACTOR} x --leader-election-retry-period ({retry}): \
                 the leader must get to retry a failed renewal"
            );
        }
        Ok(timing)
    }

    fn lease_seconds(&self) -> i32 {
        // Checked in `from_args`.
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }
}

/// Why this replica stopped leading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lost {
    /// No renewal succeeded within the renew deadline (the API server is unreachable,
    /// slow, or refuses).
    RenewDeadlineExceeded,
    /// Another replica holds the Lease.
    TakenOver,
}

/// An election on one Lease, as one replica (its identity).
#[derive(Clone)]
pub(crate) struct Election {
    leases: Api<Lease>,
    name: String,
    identity: String,
    timing: Timing,
}

/// What a replica last saw of the Lease, and when by its own clock.
struct Observed {
    spec: Option<LeaseSpec>,
    at: Instant,
}

impl Election {
    /// An election for the Lease `namespace/name` with the timing from the flags.
    pub(crate) fn new(client: Client, namespace: &str, name: &str, timing: Timing) -> Self {
        Self {
            leases: Api::namespaced(client, namespace),
            name: name.to_owned(),
            identity: identity(),
            timing,
        }
    }

    pub(crate) fn identity(&self) -> &str {
        &self.identity
    }

    /// Tries every retry period until this replica holds the Lease, then renews it in the
    /// background. Errors are logged and retried, as client-go does.
    pub(crate) async fn acquire(&self) -> Leadership {
        let mut observed = None;
        let started = loop {
            let started = Instant::now();
            let attempt = self.try_acquire_or_renew(&mut observed, false);
            match tokio::time::timeout(self.timing.renew_deadline, attempt).await {
                Ok(Ok(true)) => break started,
                Ok(Ok(false)) => {}
                Ok(Err(error)) => {
                    tracing::warn!(lease = %self.name, error = format!("{error:#}"), "cannot acquire the leader Lease; retrying");
                }
                Err(_) => {
                    tracing::warn!(lease = %self.name, timeout = ?self.timing.renew_deadline, "acquiring the leader Lease timed out; retrying");
                }
            }
            tokio::time::sleep_until(started + self.timing.retry_period).await;
        };
        let (lost_sender, lost) = watch::channel(None);
        let renewer = tokio::spawn(self.clone().renew(started, observed, lost_sender));
        Leadership {
            election: self.clone(),
            lost,
            renewer,
        }
    }

    /// Renews every retry period; gives up at `renew_deadline` after the start of the
    /// last successful renewal (`renewed`: at first, the acquiring one), even with a
    /// request in flight.
    async fn renew(
        self,
        mut renewed: Instant,
        mut observed: Option<Observed>,
        lost: watch::Sender<Option<Lost>>,
    ) {
        loop {
            let deadline = renewed + self.timing.renew_deadline;
            tokio::time::sleep_until((Instant::now() + self.timing.retry_period).min(deadline))
                .await;
            let started = Instant::now();
            let attempt = self.try_acquire_or_renew(&mut observed, true);
            match tokio::time::timeout_at(deadline, attempt).await {
                Ok(Ok(true)) => renewed = started,
                Ok(Ok(false)) => {
                    lost.send_replace(Some(Lost::TakenOver));
                    return;
                }
                Ok(Err(error)) => {
                    tracing::warn!(lease = %self.name, error = format!("{error:#}"), "cannot renew the leader Lease; retrying until the renew deadline");
                }
                Err(_) => {
                    lost.send_replace(Some(Lost::RenewDeadlineExceeded));
                    return;
                }
            }
        }
    }

    /// One round of client-go's `tryAcquireOrRenew`: `Ok(true)` when this replica holds
    /// the Lease afterwards, `Ok(false)` when another does (or won a race for it).
    async fn try_acquire_or_renew(
        &self,
        observed: &mut Option<Observed>,
        leading: bool,
    ) -> anyhow::Result<bool> {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let Some(mut lease) = self
            .leases
            .get_opt(&self.name)
            .await
            .with_context(|| format!("cannot get Lease {}", self.name))?
        else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..Default::default()
                },
                spec: Some(self.spec(now.clone(), now, 0)),
            };
            return match self.leases.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(observed, created.spec);
                    Ok(true)
                }
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => {
                    Err(error).with_context(|| format!("cannot create Lease {}", self.name))
                }
            };
        };

        let current = lease.spec.clone().unwrap_or_default();
        if observed
            .as_ref()
            .is_none_or(|o| o.spec.as_ref() != Some(&current))
        {
            *observed = Some(Observed {
                spec: Some(current.clone()),
                at: Instant::now(),
            });
        }
        let holder = current.holder_identity.as_deref().unwrap_or_default();
        let ours = holder == self.identity;
        if leading && !ours {
            tracing::warn!(lease = %self.name, %holder, "another replica holds the leader Lease");
            return Ok(false);
        }
        if !ours && !holder.is_empty() {
            let duration = current
                .lease_duration_seconds
                .and_then(|s| u64::try_from(s).ok())
                .map_or(self.timing.lease_duration, Duration::from_secs);
            let since = observed.as_ref().map_or(Instant::now(), |o| o.at);
            if since.elapsed() <= duration {
                return Ok(false);
            }
            tracing::info!(lease = %self.name, previous = %holder, "the leader Lease expired; taking over");
        }

        let (acquired, transitions) = if ours {
            (
                current.acquire_time.clone().unwrap_or_else(|| now.clone()),
                current.lease_transitions.unwrap_or(0),
            )
        } else {
            (now.clone(), current.lease_transitions.unwrap_or(0) + 1)
        };
        lease.spec = Some(self.spec(acquired, now, transitions));
        // `replace` sends the resourceVersion just read: a concurrent write makes it a 409.
        match self
            .leases
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(updated) => {
                self.observe(observed, updated.spec);
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 && !leading => Ok(false),
            Err(error) => Err(error).with_context(|| format!("cannot update Lease {}", self.name)),
        }
    }

    fn spec(&self, acquired: MicroTime, renewed: MicroTime, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(self.timing.lease_seconds()),
            acquire_time: Some(acquired),
            renew_time: Some(renewed),
            lease_transitions: Some(transitions),
            ..Default::default()
        }
    }

    fn observe(&self, observed: &mut Option<Observed>, spec: Option<LeaseSpec>) {
        *observed = Some(Observed {
            spec,
            at: Instant::now(),
        });
    }

    /// Clears the holder if it is still this replica, so a standby takes over at once
    /// rather than after the lease duration (client-go's `ReleaseOnCancel`).
    async fn release(&self) -> anyhow::Result<bool> {
        let Some(mut lease) = self.leases.get_opt(&self.name).await? else {
            return Ok(false);
        };
        let spec = lease.spec.get_or_insert_with(Default::default);
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(false);
        }
        spec.holder_identity = None;
        // The record changes, so standbys observe a free Lease on their next try.
        spec.renew_time = Some(MicroTime(k8s_openapi::jiff::Timestamp::now()));
        self.leases
            .replace(&self.name, &PostParams::default(), &lease)
            .await?;
        Ok(true)
    }
}

/// This replica leads until [`lost`](Self::lost) resolves; [`release`](Self::release)
/// hands over.
pub(crate) struct Leadership {
    election: Election,
    lost: watch::Receiver<Option<Lost>>,
    renewer: tokio::task::JoinHandle<()>,
}

impl Leadership {
    /// Resolves once this replica no longer leads. Cancel-safe.
    pub(crate) async fn lost(&mut self) -> Lost {
        match self.lost.wait_for(Option::is_some).await {
            Ok(lost) => lost.unwrap_or(Lost::RenewDeadlineExceeded),
            // The renewer is gone without a word (it panicked): assume the worst.
            Err(_) => Lost::RenewDeadlineExceeded,
        }
    }

    /// Stops renewing and clears the holder, within the renew deadline: a standby then
    /// takes over within its retry period. On failure the Lease simply expires.
    pub(crate) async fn release(self) {
        self.renewer.abort();
        let election = &self.election;
        match tokio::time::timeout(election.timing.renew_deadline, election.release()).await {
            Ok(Ok(true)) => {
                tracing::info!(lease = %election.name, "released the leader Lease");
            }
            Ok(Ok(false)) => {}
            Ok(Err(error)) => {
                tracing::warn!(lease = %election.name, error = format!("{error:#}"), "cannot release the leader Lease; it will expire");
            }
            Err(_) => {
                tracing::warn!(lease = %election.name, "releasing the leader Lease timed out; it will expire");
            }
        }
    }
}

impl Drop for Leadership {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

/// `<pod name>_<uuid>`, as client-go does: readable in `kubectl get lease`, and unique even
/// when two processes share a host name (two `make run` on one machine).
fn identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "manager".into());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn timing(flags: &[&str]) -> anyhow::Result<Timing> {
        let mut args = vec!["manager"];
        args.extend_from_slice(flags);
        Timing::from_args(&Args::parse_from(args))
    }

    #[test]
    fn the_defaults_are_valid() {
        let defaults = timing(&[]).unwrap();
        assert_eq!(defaults.lease_duration, Duration::from_secs(15));
        assert_eq!(defaults.lease_seconds(), 15);
    }

    #[test]
    fn durations_that_break_the_safety_margin_are_refused_with_the_rule() {
        for (flags, rule) in [
            (
                &["--leader-election-renew-deadline=15s"][..],
                "must be shorter than --leader-election-lease-duration",
            ),
            (
                &["--leader-election-renew-deadline=20s"],
                "must be shorter than --leader-election-lease-duration",
            ),
            (
                &["--leader-election-retry-period=9s"],
                "longer than 1.2 x --leader-election-retry-period",
            ),
            (&["--leader-election-retry-period=0s"], "must be positive"),
            (
                &["--leader-election-lease-duration=1500ms"],
                "whole number of seconds",
            ),
            (
                &[
                    "--leader-election-lease-duration=0s",
                    "--leader-election-renew-deadline=0s",
                ],
                "must be positive",
            ),
        ] {
            let error = timing(flags).unwrap_err().to_string();
            assert!(error.contains(rule), "{flags:?}: {error}");
        }
        timing(&[
            "--leader-election-lease-duration=4s",
            "--leader-election-renew-deadline=3s",
            "--leader-election-retry-period=500ms",
        ])
        .unwrap();
    }
}
