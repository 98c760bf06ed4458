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
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    use clap::Parser;
    use http::{Request, Response, StatusCode};
    use http_body_util::BodyExt;
    use k8s_openapi::jiff;
    use kube::client::Body;
    use tower_test::mock::{self, Handle};

    use super::*;

    const TIMING: Timing = Timing {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(500),
    };

    /// An in-memory API server holding one Lease, with optimistic concurrency like the
    /// real one. While `hung`, requests are never answered (a black-holed connection).
    #[derive(Clone, Default)]
    struct LeaseApi {
        lease: Arc<Mutex<Option<Lease>>>,
        hung: Arc<AtomicBool>,
        /// When each successful write arrived.
        writes: Arc<Mutex<Vec<Instant>>>,
    }

    impl LeaseApi {
        fn start() -> (Client, Self) {
            let (service, mut handle): (_, Handle<Request<Body>, Response<Body>>) = mock::pair();
            let api = Self::default();
            let state = api.clone();
            tokio::spawn(async move {
                let mut hung = Vec::new();
                while let Some((request, reply)) = handle.next_request().await {
                    if state.hung.load(Ordering::SeqCst) {
                        hung.push(reply);
                        continue;
                    }
                    let (status, body) = state.answer(request).await;
                    let mut response = Response::new(Body::from(body));
                    *response.status_mut() = status;
                    reply.send_response(response);
                }
            });
            (Client::new(service, "default"), api)
        }

        async fn answer(&self, request: Request<Body>) -> (StatusCode, Vec<u8>) {
            let method = request.method().clone();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let mut stored = self.lease.lock().unwrap();
            let status = |code: StatusCode| {
                let reason = match code {
                    StatusCode::NOT_FOUND => "NotFound",
                    StatusCode::CONFLICT => "Conflict",
                    _ => "MethodNotAllowed",
                };
                let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code.as_u16(), "reason": reason, "message": code.to_string()});
                (code, serde_json::to_vec(&status).unwrap())
            };
            let version =
                |lease: &Lease| lease.metadata.resource_version.clone().unwrap_or_default();
            match method.as_str() {
                "GET" => match stored.as_ref() {
                    Some(lease) => (StatusCode::OK, serde_json::to_vec(lease).unwrap()),
                    None => status(StatusCode::NOT_FOUND),
                },
                "POST" | "PUT" => {
                    let mut lease: Lease = serde_json::from_slice(&body).unwrap();
                    let (created, current) = match stored.as_ref() {
                        None if method == "POST" => (true, 0),
                        Some(old) if method == "PUT" && version(old) == version(&lease) => {
                            (false, version(old).parse::<u64>().unwrap())
                        }
                        None => return status(StatusCode::NOT_FOUND),
                        Some(_) => return status(StatusCode::CONFLICT),
                    };
                    lease.metadata.resource_version = Some((current + 1).to_string());
                    *stored = Some(lease.clone());
                    self.writes.lock().unwrap().push(Instant::now());
                    let code = if created {
                        StatusCode::CREATED
                    } else {
                        StatusCode::OK
                    };
                    (code, serde_json::to_vec(&lease).unwrap())
                }
                _ => status(StatusCode::METHOD_NOT_ALLOWED),
            }
        }

        /// Another replica's write: holder `holder`, its clock `skew` off ours.
        fn write_as(&self, holder: &str, skew: jiff::SignedDuration) {
            let mut stored = self.lease.lock().unwrap();
            let version = stored
                .as_ref()
                .and_then(|l| l.metadata.resource_version.clone())
                .map_or(0, |v| v.parse::<u64>().unwrap());
            let renewed = MicroTime(k8s_openapi::jiff::Timestamp::now() + skew);
            *stored = Some(Lease {
                metadata: ObjectMeta {
                    name: Some("op-leader".into()),
                    resource_version: Some((version + 1).to_string()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(holder.into()),
                    lease_duration_seconds: Some(4),
                    acquire_time: Some(renewed.clone()),
                    renew_time: Some(renewed),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            });
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_leader_stops_at_the_renew_deadline_while_its_requests_hang() {
        let (client, api) = LeaseApi::start();
        let election = Election::new(client, "default", "op-leader", TIMING);
        let mut leadership = election.acquire().await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(api.writes.lock().unwrap().len() > 2, "it renews");

        api.hung.store(true, Ordering::SeqCst);
        let last_write = *api.writes.lock().unwrap().last().unwrap();
        assert_eq!(leadership.lost().await, Lost::RenewDeadlineExceeded);
        // The last successful renewal started before its write arrived.
        assert!(
            last_write.elapsed() <= TIMING.renew_deadline,
            "led {:?} after the last renewal",
            last_write.elapsed()
        );
        // A standby takes over a lease duration after it saw that write, at the earliest.
        assert!(last_write.elapsed() < TIMING.lease_duration);

        // Releasing cannot reach the API server either, and gives up at the renew deadline.
        let releasing = Instant::now();
        leadership.release().await;
        assert_eq!(releasing.elapsed(), TIMING.renew_deadline);
    }

    #[tokio::test(start_paused = true)]
    async fn a_standby_measures_expiry_on_its_own_clock_not_the_leaders() {
        let (client, api) = LeaseApi::start();
        // The leader's clock is an hour behind: its renewTime always looks long expired.
        let lagging = jiff::SignedDuration::from_hours(-1);
        api.write_as("other", lagging);
        let renewer = tokio::spawn({
            let api = api.clone();
            async move {
                for _ in 0..20 {
                    tokio::time::sleep(TIMING.retry_period).await;
                    api.write_as("other", lagging);
                }
            }
        });
        let election = Election::new(client.clone(), "default", "op-leader", TIMING);
        let start = Instant::now();
        drop(election.acquire().await);
        // The leader renewed for 10 s; the standby waited until a lease duration after the
        // last renewal it saw.
        renewer.await.unwrap();
        assert!(
            start.elapsed() >= Duration::from_secs(10) + TIMING.lease_duration,
            "took over after {:?}, while the leader renewed",
            start.elapsed()
        );
        assert!(
            start.elapsed()
                <= Duration::from_secs(10) + TIMING.lease_duration + 2 * TIMING.retry_period
        );

        // A leader an hour ahead that stopped renewing: taken over once the lease
        // duration has passed here, not in an hour.
        let (client, api) = LeaseApi::start();
        api.write_as("other", jiff::SignedDuration::from_hours(1));
        let election = Election::new(client, "default", "op-leader", TIMING);
        let start = Instant::now();
        drop(election.acquire().await);
        assert!(start.elapsed() > TIMING.lease_duration);
        assert!(start.elapsed() <= TIMING.lease_duration + TIMING.retry_period);
    }

    #[tokio::test(start_paused = true)]
    async fn of_two_standbys_racing_for_a_released_lease_one_wins() {
        let (client, api) = LeaseApi::start();
        api.write_as("", jiff::SignedDuration::ZERO);
        let first = Election::new(client.clone(), "default", "op-leader", TIMING);
        let second = Election::new(client, "default", "op-leader", TIMING);
        // Both read the free Lease; the second write carries a stale resourceVersion.
        let first = tokio::spawn(async move { first.acquire().await });
        let second = tokio::spawn(async move { second.acquire().await });
        tokio::time::sleep(TIMING.lease_duration * 3).await;
        assert!(
            first.is_finished() != second.is_finished(),
            "exactly one leads, and renews"
        );
    }

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
