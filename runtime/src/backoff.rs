//! Per-object exponential backoff for a controller's `error_policy`.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// Requeue delays that double with each consecutive failure of one object,
/// like controller-runtime's default per-item rate limiter (5 ms, 10 ms,
/// 20 ms, ... capped at 1000 s).
///
/// Keys are usually `kube::runtime::reflector::ObjectRef<K>`, or strings:
///
/// ```ignore
/// fn error_policy(obj: Arc<Memcached>, _err: &Error, ctx: Arc<Context>) -> Action {
///     Action::requeue(ctx.backoff.next(&ObjectRef::from(obj.as_ref())))
/// }
/// // and at the end of a successful reconcile:
/// ctx.backoff.reset(&ObjectRef::from(obj.as_ref()));
/// ```
///
/// Only objects that are currently failing take memory: [`reset`](Self::reset)
/// forgets the object.
#[derive(Debug)]
pub struct ErrorBackoff<K = String> {
    base: Duration,
    cap: Duration,
    failures: Mutex<HashMap<K, u32>>,
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

    /// 5 ms doubling up to 1000 s.
    pub fn new() -> Self {
        Self::with_limits(Self::DEFAULT_BASE, Self::DEFAULT_CAP)
    }

    /// `base` after the first failure, doubling up to `cap`.
    pub fn with_limits(base: Duration, cap: Duration) -> Self {
        ErrorBackoff {
            base,
            cap,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Records a failure of `key` and returns how long to wait before retrying it.
    pub fn next<Q>(&self, key: &Q) -> Duration
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let mut failures = self.lock();
        let count = match failures.get_mut(key) {
            Some(count) => count,
            None => failures.entry(key.to_owned()).or_insert(0),
        };
        let delay = self.delay(*count);
        *count = count.saturating_add(1);
        delay
    }

    /// Forgets `key`'s failures, after it reconciled successfully.
    pub fn reset<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.lock().remove(key);
    }

    /// Consecutive failures recorded for `key`.
    pub fn failures<Q>(&self, key: &Q) -> u32
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.lock().get(key).copied().unwrap_or(0)
    }

    /// How many objects are backing off.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no object is backing off.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `base * 2^failures`, capped, without overflowing.
    fn delay(&self, failures: u32) -> Duration {
        let factor = 1u32.checked_shl(failures).filter(|f| *f != 0);
        factor
            .and_then(|f| self.base.checked_mul(f))
            .map_or(self.cap, |d| d.min(self.cap))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, u32>> {
        // Every update is a single map operation, so a panicking holder
        // cannot leave the map half-changed: keep using it.
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector::ObjectRef;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn doubles_from_five_milliseconds() {
        let backoff = ErrorBackoff::<String>::new();
        let delays: Vec<_> = (0..5).map(|_| backoff.next("ns/a")).collect();
        assert_eq!(delays, [5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS]);
        assert_eq!(backoff.failures("ns/a"), 5);
    }

    #[test]
    fn capped_at_1000_seconds() {
        let backoff = ErrorBackoff::<String>::new();
        let last = (0..40).map(|_| backoff.next("k")).last();
        assert_eq!(last, Some(Duration::from_secs(1000)));
        // 5 ms * 2^17 = 655 s, 2^18 = 1311 s > cap.
        let backoff = ErrorBackoff::<String>::new();
        let delays: Vec<_> = (0..19).map(|_| backoff.next("k")).collect();
        assert_eq!(delays[17], Duration::from_millis(5 << 17));
        assert_eq!(delays[18], Duration::from_secs(1000));
    }

    #[test]
    fn never_overflows() {
        let backoff = ErrorBackoff::<String>::with_limits(Duration::MAX, Duration::MAX);
        for _ in 0..100 {
            assert_eq!(backoff.next("k"), Duration::MAX);
        }
        let backoff = ErrorBackoff::<String>::with_limits(MS, Duration::from_secs(1));
        for _ in 0..100 {
            backoff.next("k");
        }
        assert_eq!(backoff.next("k"), Duration::from_secs(1));
    }

    #[test]
    fn configurable_limits() {
        let backoff =
            ErrorBackoff::<String>::with_limits(Duration::from_secs(1), 3 * Duration::from_secs(1));
        let delays: Vec<_> = (0..4).map(|_| backoff.next("k").as_secs()).collect();
        assert_eq!(delays, [1, 2, 3, 3]);
    }

    #[test]
    fn keys_are_independent_and_reset_frees_memory() {
        let backoff = ErrorBackoff::<String>::new();
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
        let backoff = ErrorBackoff::<ObjectRef<ConfigMap>>::default();
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
}
