//! Per-object exponential backoff for a controller's `error_policy`.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, RandomState};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::sync::lock;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;

/// Requeue delays that double with each consecutive failure of one object,
/// like controller-runtime's default rate limiter: 5 ms, 10 ms, 20 ms, ...
/// capped at 1000 s per object, and at most 10 retries a second (bursts of
/// 100) over all objects; the delay is the longer of the two.
///
/// Each delay gets up to 10% of jitter, so that objects which failed
/// together (an API server outage) do not all retry together. The jitter
/// depends on the object and its failure count: the same failure sequence
/// gives the same delays, which keeps tests of an `error_policy` simple.
///
/// Pass the object itself, so that an object deleted and recreated under the
/// same name starts afresh (it has a new UID):
///
/// ```ignore (pieces of the controller of a project: Memcached, Error and Context are its own)
/// fn error_policy(obj: Arc<Memcached>, _err: &Error, ctx: Arc<Context>) -> Action {
///     Action::requeue(ctx.backoff.next_for(obj.as_ref()))
/// }
/// // and at the end of a successful reconcile:
/// ctx.backoff.reset_for(obj.as_ref());
/// ```
///
/// [`next`](Self::next) and [`reset`](Self::reset) take a key instead (an
/// `ObjectRef`, or a string); they cannot tell a recreated object from the
/// old one. `next_for` keys by `ObjectRef::from(obj).to_string()`, so it
/// shares its entries with `next` and `reset` on that string.
///
/// Only objects that are currently failing take memory: a success forgets
/// the object, and an object that has not failed for twice the cap (e.g.
/// because it was deleted) is forgotten too.
#[derive(Debug)]
pub struct ErrorBackoff<K = String> {
    base: Duration,
    cap: Duration,
    jitter: f64,
    rate_limit: Option<RateLimit>,
    seed: RandomState,
    state: Mutex<State<K>>,
}

/// A token bucket shared by every object, like golang.org/x/time/rate's.
#[derive(Clone, Copy, Debug)]
struct RateLimit {
    qps: f64,
    burst: f64,
}

#[derive(Debug)]
struct State<K> {
    failing: HashMap<K, Failing>,
    last_sweep: Instant,
    /// Tokens left in the bucket at `refilled`; negative once retries are
    /// booked ahead of the rate.
    tokens: f64,
    refilled: Instant,
}

#[derive(Debug)]
struct Failing {
    failures: u32,
    /// When `failures` last changed.
    last_failure: Instant,
    /// The UID of the object that failed, when known: a new one starts afresh.
    uid: Option<String>,
}

impl<K: Eq + Hash> Default for ErrorBackoff<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Eq + Hash> ErrorBackoff<K> {
    /// controller-runtime's base delay.
    pub const DEFAULT_BASE: Duration = Duration::from_millis(5);
    /// controller-runtime's maximum delay.
    pub const DEFAULT_CAP: Duration = Duration::from_secs(1000);
    /// Up to 10% is added to each delay.
    pub const DEFAULT_JITTER: f64 = 0.1;
    /// controller-runtime's overall rate: 10 retries a second...
    pub const DEFAULT_QPS: f64 = 10.0;
    /// ...after a burst of 100.
    pub const DEFAULT_BURST: u32 = 100;

    /// 5 ms doubling up to 1000 s, 10 retries a second in bursts of 100.
    pub fn new() -> Self {
        Self::with_limits(Self::DEFAULT_BASE, Self::DEFAULT_CAP)
    }

    /// `base` after the first failure, doubling up to `cap`, with the default
    /// jitter and rate limit.
    pub fn with_limits(base: Duration, cap: Duration) -> Self {
        let now = Instant::now();
        let burst = f64::from(Self::DEFAULT_BURST);
        ErrorBackoff {
            base,
            cap,
            jitter: Self::DEFAULT_JITTER,
            rate_limit: Some(RateLimit {
                qps: Self::DEFAULT_QPS,
                burst,
            }),
            seed: RandomState::new(),
            state: Mutex::new(State {
                failing: HashMap::new(),
                last_sweep: now,
                tokens: burst,
                refilled: now,
            }),
        }
    }

    /// Adds up to `fraction` (0 to 1) of each delay; 0 turns jitter off.
    pub fn with_jitter(mut self, fraction: f64) -> Self {
        assert!(
            (0.0..=1.0).contains(&fraction),
            "jitter must be a fraction between 0 and 1, not {fraction}"
        );
        self.jitter = fraction;
        self
    }

    /// Allows `qps` retries a second over all objects, after a burst of `burst`.
    pub fn with_rate_limit(mut self, qps: f64, burst: u32) -> Self {
        assert!(
            qps.is_finite() && qps > 0.0,
            "the rate must be positive, not {qps}"
        );
        let burst = f64::from(burst);
        self.rate_limit = Some(RateLimit { qps, burst });
        lock(&self.state).tokens = burst;
        self
    }

    /// Per-object backoff only.
    pub fn without_rate_limit(mut self) -> Self {
        self.rate_limit = None;
        self
    }

    /// Records a failure of `key` and returns how long to wait before retrying it.
    ///
    /// Prefer [`next_for`](ErrorBackoff::next_for) when the object is at hand.
    pub fn next<Q>(&self, key: &Q) -> Duration
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.next_at(key, None, Instant::now())
    }

    /// Forgets `key`'s failures, after it reconciled successfully.
    pub fn reset<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        lock(&self.state).failing.remove(key);
    }

    /// Consecutive failures recorded for `key` (and not forgotten yet).
    pub fn failures<Q>(&self, key: &Q) -> u32
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let now = Instant::now();
        let state = lock(&self.state);
        state
            .failing
            .get(key)
            .filter(|failing| !self.expired(failing, now))
            .map_or(0, |failing| failing.failures)
    }

    /// How many objects are backing off.
    pub fn len(&self) -> usize {
        let mut state = lock(&self.state);
        self.sweep(&mut state, Instant::now());
        state.failing.len()
    }

    /// Whether no object is backing off.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`next`](Self::next) at `now`, for the object with `uid` if known.
    pub(crate) fn next_at<Q>(&self, key: &Q, uid: Option<&str>, now: Instant) -> Duration
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let mut state = lock(&self.state);
        self.sweep(&mut state, now);
        let failing = match state.failing.get_mut(key) {
            Some(failing) => failing,
            None => state.failing.entry(key.to_owned()).or_insert(Failing {
                failures: 0,
                last_failure: now,
                uid: None,
            }),
        };
        let recreated = matches!((&failing.uid, uid), (Some(old), Some(new)) if old != new);
        if recreated || self.expired(failing, now) {
            failing.failures = 0;
        }
        if uid.is_some() {
            failing.uid = uid.map(str::to_owned);
        }
        let failures = failing.failures;
        failing.failures = failures.saturating_add(1);
        failing.last_failure = now;
        let jitter = self.jitter * unit_interval(self.seed.hash_one((key, failures)));
        let delay = self.delay(failures);
        let extra = Duration::try_from_secs_f64(delay.as_secs_f64() * jitter).unwrap_or(delay);
        let own = delay.saturating_add(extra);
        own.max(self.take_token(&mut state, now))
    }

    /// `base * 2^failures`, capped, without overflowing.
    fn delay(&self, failures: u32) -> Duration {
        let factor = 1u32.checked_shl(failures).filter(|f| *f != 0);
        factor
            .and_then(|f| self.base.checked_mul(f))
            .map_or(self.cap, |d| d.min(self.cap))
    }

    /// Takes a token from the shared bucket, and returns how long until it is there.
    fn take_token(&self, state: &mut State<K>, now: Instant) -> Duration {
        let Some(RateLimit { qps, burst }) = self.rate_limit else {
            return Duration::ZERO;
        };
        let elapsed = now.saturating_duration_since(state.refilled);
        state.tokens = (state.tokens + elapsed.as_secs_f64() * qps).min(burst) - 1.0;
        state.refilled = now;
        if state.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::try_from_secs_f64(-state.tokens / qps).unwrap_or(Duration::MAX)
        }
    }

    /// Whether `failing` is old enough to forget: a retry comes at most a
    /// capped delay (plus jitter) after its failure, so an object silent for
    /// twice the cap was deleted or recovered without a reset.
    fn expired(&self, failing: &Failing, now: Instant) -> bool {
        now.saturating_duration_since(failing.last_failure) > self.cap.saturating_mul(2)
    }

    /// Forgets expired entries, at most once per cap so that failures stay O(1).
    fn sweep(&self, state: &mut State<K>, now: Instant) {
        if now.saturating_duration_since(state.last_sweep) < self.cap {
            return;
        }
        state.last_sweep = now;
        state
            .failing
            .retain(|_, failing| !self.expired(failing, now));
    }
}

impl ErrorBackoff<String> {
    /// Records a failure of `object` and returns how long to wait before
    /// retrying it. A recreated object (same name, new UID) starts afresh.
    pub fn next_for<R>(&self, object: &R) -> Duration
    where
        R: Resource,
        R::DynamicType: Default,
    {
        let key = ObjectRef::from(object).to_string();
        self.next_at(key.as_str(), object.meta().uid.as_deref(), Instant::now())
    }

    /// Forgets `object`'s failures, after it reconciled successfully.
    pub fn reset_for<R>(&self, object: &R)
    where
        R: Resource,
        R::DynamicType: Default,
    {
        self.reset(ObjectRef::from(object).to_string().as_str());
    }
}

/// Maps a hash to `[0, 1)`.
fn unit_interval(hash: u64) -> f64 {
    // The top 53 bits fill an f64's mantissa exactly.
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    const MS: Duration = Duration::from_millis(1);
    const SECOND: Duration = Duration::from_secs(1);

    /// Per-object delays only, without jitter: exact values.
    fn exact(base: Duration, cap: Duration) -> ErrorBackoff<String> {
        ErrorBackoff::with_limits(base, cap)
            .with_jitter(0.0)
            .without_rate_limit()
    }

    fn default_exact() -> ErrorBackoff<String> {
        exact(
            ErrorBackoff::<String>::DEFAULT_BASE,
            ErrorBackoff::<String>::DEFAULT_CAP,
        )
    }

    #[test]
    fn doubles_from_five_milliseconds() {
        let backoff = default_exact();
        let delays: Vec<_> = (0..5).map(|_| backoff.next("ns/a")).collect();
        assert_eq!(delays, [5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS]);
        assert_eq!(backoff.failures("ns/a"), 5);
    }

    #[test]
    fn capped_at_1000_seconds() {
        let backoff = default_exact();
        let last = (0..40).map(|_| backoff.next("k")).last();
        assert_eq!(last, Some(Duration::from_secs(1000)));
        // 5 ms * 2^17 = 655 s, 2^18 = 1311 s > cap.
        let backoff = default_exact();
        let delays: Vec<_> = (0..19).map(|_| backoff.next("k")).collect();
        assert_eq!(delays[17], Duration::from_millis(5 << 17));
        assert_eq!(delays[18], Duration::from_secs(1000));
    }

    #[test]
    fn never_overflows() {
        let backoff = ErrorBackoff::<String>::with_limits(Duration::MAX, Duration::MAX);
        for _ in 0..200 {
            assert_eq!(backoff.next("k"), Duration::MAX);
        }
        let backoff = exact(MS, SECOND);
        for _ in 0..100 {
            backoff.next("k");
        }
        assert_eq!(backoff.next("k"), SECOND);
        let backoff = ErrorBackoff::<String>::with_limits(MS, SECOND).with_rate_limit(1e-300, 0);
        assert_eq!(backoff.next("k"), Duration::MAX);
    }

    #[test]
    fn configurable_limits() {
        let backoff = exact(SECOND, 3 * SECOND);
        let delays: Vec<_> = (0..4).map(|_| backoff.next("k").as_secs()).collect();
        assert_eq!(delays, [1, 2, 3, 3]);
    }

    #[test]
    fn keys_are_independent_and_reset_frees_memory() {
        let backoff = default_exact();
        backoff.next("a");
        backoff.next("a");
        assert_eq!(backoff.next("b"), 5 * MS);
        assert_eq!(backoff.len(), 2);
        backoff.reset("a");
        assert_eq!(backoff.len(), 1);
        assert_eq!(backoff.failures("a"), 0);
        assert_eq!(backoff.next("a"), 5 * MS);
        backoff.reset("a");
        backoff.reset("b");
        assert!(backoff.is_empty());
    }

    #[test]
    fn object_ref_keys() {
        let backoff = ErrorBackoff::<ObjectRef<ConfigMap>>::default()
            .with_jitter(0.0)
            .without_rate_limit();
        let a = ObjectRef::new("a").within("ns");
        let b = ObjectRef::new("a").within("other");
        backoff.next(&a);
        assert_eq!(backoff.next(&a), 10 * MS);
        assert_eq!(backoff.next(&b), 5 * MS);
        backoff.reset(&a);
        assert_eq!(backoff.failures(&a), 0);
    }

    #[test]
    fn shared_between_threads() {
        let backoff = ErrorBackoff::<String>::new();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..25 {
                        backoff.next("k");
                    }
                });
            }
        });
        assert_eq!(backoff.failures("k"), 100);
    }

    #[test]
    fn jitter_adds_up_to_a_tenth_and_spreads_objects_apart() {
        let backoff = ErrorBackoff::<String>::new();
        // 97 failures and 2 below: within the rate limit's burst of 100.
        let first: Vec<_> = (0..97).map(|i| backoff.next(&format!("ns/{i}"))).collect();
        for delay in &first {
            assert!((5 * MS..=5 * MS + MS / 2).contains(delay), "{delay:?}");
        }
        let mut distinct = first.clone();
        distinct.sort();
        distinct.dedup();
        assert!(
            distinct.len() > 50,
            "objects that fail together retry apart: {first:?}"
        );
        // The same failure sequence gives the same delays.
        backoff.reset("ns/0");
        assert_eq!(backoff.next("ns/0"), first[0]);
        let second = backoff.next("ns/0");
        assert!((10 * MS..=11 * MS).contains(&second), "{second:?}");
    }

    #[test]
    fn retries_are_rate_limited_over_all_objects() {
        // 200 objects failing at once: after the burst of 100, 10 a second.
        let backoff = ErrorBackoff::<String>::new();
        let delays: Vec<_> = (0..200).map(|i| backoff.next(&format!("ns/{i}"))).collect();
        assert!(delays[..100].iter().all(|d| *d < 6 * MS), "{delays:?}");
        // The 200th waits for 100 tokens at 10 a second, less the time the loop took.
        assert!(delays[199] > 5 * SECOND, "{:?}", delays[199]);
        assert!(delays[199] <= 10 * SECOND, "{:?}", delays[199]);
    }

    #[test]
    fn the_longer_of_the_object_delay_and_the_rate_limit_wins() {
        let t0 = Instant::now();
        let backoff = exact(MS, 100 * SECOND).with_rate_limit(1.0, 1);
        assert_eq!(backoff.next_at("a", None, t0), MS, "a token is left");
        assert_eq!(
            backoff.next_at("b", None, t0),
            SECOND,
            "the next token, in 1 s"
        );
        // Half a second later a token is half refilled, and two are owed.
        assert_eq!(backoff.next_at("c", None, t0 + SECOND / 2), 3 * SECOND / 2);
        // Ten seconds later the bucket is full (one token) again.
        let later = t0 + 10 * SECOND;
        let delays: Vec<_> = (0..12).map(|_| backoff.next_at("a", None, later)).collect();
        assert_eq!(delays[0], 2 * MS, "per-object delay when a token is left");
        assert_eq!(delays[11], 11 * SECOND, "rate limit: 11 tokens owed");
        // Tokens owed: 0, 1, 2, 3; per-object delays (longer): 1 s, 2 s, 4 s, 8 s.
        let backoff = exact(SECOND, 100 * SECOND).with_rate_limit(1.0, 1);
        let delays: Vec<_> = (0..4).map(|_| backoff.next_at("a", None, t0)).collect();
        assert_eq!(delays, [SECOND, 2 * SECOND, 4 * SECOND, 8 * SECOND]);
    }

    #[test]
    fn objects_that_stop_failing_are_forgotten() {
        // Real time, through the original API: idle for more than twice the 5 ms cap.
        let backoff = ErrorBackoff::<String>::with_limits(MS, 5 * MS);
        backoff.next("deleted-while-failing");
        backoff.next("deleted-while-failing");
        std::thread::sleep(20 * MS);
        assert_eq!(backoff.failures("deleted-while-failing"), 0);
        assert_eq!(backoff.len(), 0);
    }

    #[test]
    fn entries_expire_after_twice_the_cap_of_idleness() {
        let t0 = Instant::now();
        let backoff = exact(SECOND, 10 * SECOND);
        backoff.next_at("a", None, t0);
        backoff.next_at("a", None, t0);
        // 15 s of silence is less than 2 x 10 s: still the third failure.
        assert_eq!(backoff.next_at("a", None, t0 + 15 * SECOND), 4 * SECOND);
        // "b" arrives 21 s after "a"'s last failure: the sweep drops "a".
        backoff.next_at("b", None, t0 + 36 * SECOND);
        assert_eq!(lock(&backoff.state).failing.len(), 1);
        assert_eq!(backoff.failures("a"), 0);

        // Between sweeps (at most one per cap), an expired entry starts afresh too.
        let backoff = exact(SECOND, 10 * SECOND);
        backoff.next_at("c", None, t0);
        backoff.next_at("d", None, t0 + 15 * SECOND); // sweeps, "c" idle only 15 s
        assert_eq!(backoff.next_at("c", None, t0 + 21 * SECOND), SECOND);
    }

    fn config_map(name: &str, uid: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                uid: Some(uid.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_recreated_object_does_not_inherit_the_failures_of_the_deleted_one() {
        let backoff = ErrorBackoff::<String>::new().with_jitter(0.0);
        let old = config_map("a", "uid-1");
        let delays: Vec<_> = (0..3).map(|_| backoff.next_for(&old)).collect();
        assert_eq!(delays, [5 * MS, 10 * MS, 20 * MS]);

        let recreated = config_map("a", "uid-2");
        assert_eq!(backoff.next_for(&recreated), 5 * MS);
        assert_eq!(backoff.next_for(&recreated), 10 * MS);
        assert_eq!(backoff.len(), 1, "one entry per name");
    }

    #[test]
    fn next_for_shares_entries_with_the_object_ref_string_key() {
        // What generated reconcilers pass to `next` and `reset`.
        let backoff = ErrorBackoff::<String>::new().with_jitter(0.0);
        let object = config_map("a", "uid-1");
        let key = ObjectRef::from(&object).to_string();
        backoff.next_for(&object);
        assert_eq!(backoff.next(&key), 10 * MS);
        assert_eq!(backoff.failures(&key), 2);
        backoff.reset(&key);
        assert_eq!(backoff.next_for(&object), 5 * MS);
        backoff.reset_for(&object);
        assert!(backoff.is_empty());
    }
}
