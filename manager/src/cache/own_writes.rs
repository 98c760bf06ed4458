//! The writes a controller made itself: what lets a reconcile handed a stale copy work on
//! its own write, and the watch's echo of such a write not trigger a reconcile again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::{Resource, ResourceExt as _};

use crate::sync::lock;

/// The objects a controller wrote itself, so that a reconcile handed a copy its own write
/// has already replaced (the watch has not delivered the write yet) works on what it wrote
/// rather than writing it again: without it, a status read from such a stale copy differs
/// from the desired one and is written a second time.
///
/// A copy is known stale when its resourceVersion is one that a recorded write replaced;
/// resourceVersions are only compared for equality, as Kubernetes asks.
///
/// Handed to [`controller_ignoring_own`](super::controller_ignoring_own) or [`owns_ignoring_own`](super::owns_ignoring_own), it also keeps the
/// controller from reconciling an object again only because the watch brought back a write
/// of its own that a reconcile went on with (a finalizer it added, a Deployment it applied):
/// make such writes through [`OwnWrites::write`] and [`OwnWrites::apply`]. The watch often
/// delivers a write before its response arrives; a delivery of an object with such a write
/// in flight waits for it, so it can tell. Clones share the record.
pub struct OwnWrites<K> {
    inner: Arc<Shared<K>>,
}

struct Shared<K> {
    records: Mutex<Records<K>>,
    /// Woken when a write in flight ends.
    ended: tokio::sync::Notify,
}

struct Records<K> {
    /// By UID: the resourceVersions this controller's writes replaced, and the last object
    /// written.
    written: HashMap<String, Written<K>>,
    /// By `namespace/name`: the resourceVersions of this controller's own writes that the
    /// watch has not delivered yet, each with whether a reconcile went on with that very
    /// version (then its delivery needs no reconcile). Kept only once a controller filters
    /// its triggers with them.
    echoes: HashMap<String, Vec<Echo>>,
    /// By `namespace/name`: how many writes are in flight.
    in_flight: HashMap<String, usize>,
    /// By UID: the resourceVersion the watch delivered last. A write whose response comes
    /// after its delivery (a status apply, which does not wait) is then not kept in
    /// `written`: the store already holds it, and nothing would ever drop it there. Kept
    /// only once a controller filters its triggers.
    delivered: HashMap<String, String>,
    /// Whether a controller's triggers consult `echoes`.
    filtering: bool,
}

/// The resourceVersions this controller's writes of one object (by UID) replaced, and the
/// last object written.
type Written<K> = (Vec<String>, Arc<K>);

/// A resourceVersion this controller wrote, and whether a reconcile went on with it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Echo {
    version: String,
    known: bool,
}

/// Own writes of one object whose delivery the watch still owes, at most: an older one is
/// forgotten (its delivery then reconciles, which is always correct).
const ECHOES_PER_OBJECT: usize = 4;

/// How long a delivery waits for a write of the same object in flight, at most (then it
/// reconciles, which is always correct).
const WAIT_FOR_WRITE: std::time::Duration = std::time::Duration::from_secs(10);

impl<K> Default for OwnWrites<K> {
    fn default() -> Self {
        OwnWrites {
            inner: Arc::new(Shared {
                records: Mutex::new(Records {
                    written: HashMap::new(),
                    echoes: HashMap::new(),
                    in_flight: HashMap::new(),
                    delivered: HashMap::new(),
                    filtering: false,
                }),
                ended: tokio::sync::Notify::new(),
            }),
        }
    }
}

impl<K> Clone for OwnWrites<K> {
    fn clone(&self) -> Self {
        OwnWrites {
            inner: self.inner.clone(),
        }
    }
}

impl<K> std::fmt::Debug for OwnWrites<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnWrites").finish_non_exhaustive()
    }
}

impl<K> Records<K> {
    /// Notes that this controller wrote `version` of the object `at` (`namespace/name`),
    /// and whether a reconcile goes on with that version.
    fn echo(&mut self, at: String, version: String, known: bool) {
        if !self.filtering {
            return;
        }
        let echoes = self.echoes.entry(at).or_default();
        match echoes.iter_mut().find(|e| e.version == version) {
            Some(echo) => echo.known |= known,
            None => {
                if echoes.len() == ECHOES_PER_OBJECT {
                    echoes.remove(0);
                }
                echoes.push(Echo { version, known });
            }
        }
    }

    /// A reconcile goes on with `version` of the object `at`: if it is an own write, its
    /// delivery by the watch brings nothing new.
    fn known(&mut self, at: &str, version: &str) {
        if let Some(echo) = self
            .echoes
            .get_mut(at)
            .and_then(|echoes| echoes.iter_mut().find(|e| e.version == version))
        {
            echo.known = true;
        }
    }
}

/// The key of the records of an object: `namespace/name`, or `name`.
fn at<K: Resource>(object: &K) -> String {
    super::key(object.meta().namespace.as_deref(), &object.name_any())
}

/// A write of the object `at` in flight, until dropped.
struct InFlight<'a, K> {
    writes: &'a OwnWrites<K>,
    at: String,
}

impl<K> Drop for InFlight<'_, K> {
    fn drop(&mut self) {
        let mut records = lock(&self.writes.inner.records);
        if let Some(count) = records.in_flight.get_mut(&self.at) {
            *count -= 1;
            if *count == 0 {
                records.in_flight.remove(&self.at);
            }
        }
        drop(records);
        self.writes.inner.ended.notify_waiters();
    }
}

impl<K: Resource> OwnWrites<K> {
    /// `object`, or the object this controller last wrote over that very version of it.
    /// Once the watch delivers a version no write of this controller replaced (its own
    /// last write, or anyone else's), the record is dropped and `object` is current.
    ///
    /// The reconcile goes on with what this returns: when that is a write of this
    /// controller, the watch's delivery of it no longer triggers a reconcile (with
    /// [`controller_ignoring_own`](super::controller_ignoring_own)).
    pub fn latest(&self, object: Arc<K>) -> Arc<K> {
        let (Some(uid), Some(version)) = (object.uid(), object.resource_version()) else {
            return object;
        };
        let mut records = lock(&self.inner.records);
        let latest = match records.written.get(&uid) {
            Some((replaced, last)) if replaced.contains(&version) => last.clone(),
            Some(_) => {
                records.written.remove(&uid);
                object
            }
            None => object,
        };
        if let Some(version) = latest.resource_version() {
            records.known(&at(latest.as_ref()), &version);
        }
        latest
    }

    /// Records that this controller wrote `after` over `before`. A reconcile goes on with
    /// `after` from its next [`OwnWrites::latest`] on; until then (a status write the
    /// reconcile does not read back, say) the watch's delivery of `after` still reconciles,
    /// which is what a write that also carried someone else's change needs (a status
    /// applied over a spec the reconcile has not seen).
    pub fn record(&self, before: &K, after: K) {
        self.record_as(before, after, false);
    }

    /// Writes `before` with `write` (e.g. [`TypedApi::add_finalizer`]), records the
    /// object written as [`OwnWrites::record`] does, and returns it: the reconcile goes on
    /// with it, so its delivery by the watch reconciles no more. For writes that change
    /// exactly what the reconcile asked for (a JSON patch tested against `before`'s
    /// resourceVersion), not for one that may carry others' changes the reconcile has not
    /// seen (a status apply: [`OwnWrites::record`]).
    ///
    /// [`TypedApi::add_finalizer`]: crate::TypedApi::add_finalizer
    pub async fn write(
        &self,
        before: &K,
        write: impl Future<Output = kube::Result<K>>,
    ) -> kube::Result<K>
    where
        K: Clone,
    {
        let in_flight = self.in_flight(at(before));
        let written = write.await?;
        self.record_as(before, written.clone(), true);
        drop(in_flight);
        Ok(written)
    }

    /// Applies `desired` with `apply` (e.g. [`TypedApi::apply_if_changed`]) and notes the
    /// version written, if any: the reconcile goes on with it, so its delivery by the watch
    /// of [`owns_ignoring_own`](super::owns_ignoring_own) reconciles the owner no more. Any later version does (the
    /// Deployment controller's status update, an edit by hand, a deletion).
    ///
    /// [`TypedApi::apply_if_changed`]: crate::TypedApi::apply_if_changed
    pub async fn apply(
        &self,
        desired: &K,
        apply: impl Future<Output = kube::Result<Option<K>>>,
    ) -> kube::Result<Option<K>> {
        let in_flight = self.in_flight(at(desired));
        let applied = apply.await?;
        if let Some(version) = applied.as_ref().and_then(|a| a.resource_version()) {
            lock(&self.inner.records).echo(at(desired), version, true);
        }
        drop(in_flight);
        Ok(applied)
    }

    /// Forgets `object` (deleted).
    pub fn forget(&self, object: &K) {
        let mut records = lock(&self.inner.records);
        if let Some(uid) = object.uid() {
            records.written.remove(&uid);
            records.delivered.remove(&uid);
        }
        records.echoes.remove(&at(object));
    }

    fn record_as(&self, before: &K, after: K, known: bool) {
        let (Some(uid), Some(version)) = (before.uid(), before.resource_version()) else {
            return;
        };
        let written = after.resource_version();
        let after = Arc::new(after);
        let mut records = lock(&self.inner.records);
        if written.is_some() && records.delivered.get(&uid) == written.as_ref() {
            // The watch was first: the store holds `after`, and its delivery is past.
            records.written.remove(&uid);
            return;
        }
        records
            .written
            .entry(uid)
            .and_modify(|(replaced, last)| {
                replaced.push(version.clone());
                *last = after.clone();
            })
            .or_insert_with(|| (vec![version], after));
        if let Some(written) = written {
            records.echo(at(before), written, known);
        }
    }

    /// Marks a write of the object `at` in flight until the returned guard drops.
    fn in_flight(&self, at: String) -> InFlight<'_, K> {
        let mut records = lock(&self.inner.records);
        if records.filtering {
            *records.in_flight.entry(at.clone()).or_default() += 1;
        }
        InFlight { writes: self, at }
    }

    /// Whether the watch's delivery of `object` is only the echo of an own write that a
    /// reconcile went on with; first waits for the writes of that object in flight (at most
    /// [`WAIT_FOR_WRITE`]). The delivery settles the write either way: a later delivery of
    /// the same version (a relist) reconciles.
    pub(super) async fn is_known_echo(&self, object: &K) -> bool {
        let Some(version) = object.resource_version() else {
            return false;
        };
        let at = at(object);
        let writes_ended = async {
            loop {
                let ended = self.inner.ended.notified();
                tokio::pin!(ended);
                ended.as_mut().enable();
                if !lock(&self.inner.records).in_flight.contains_key(&at) {
                    return;
                }
                ended.await;
            }
        };
        // Most deliveries find no write in flight: no timer for them.
        if lock(&self.inner.records).in_flight.contains_key(&at) {
            let _ = tokio::time::timeout(WAIT_FOR_WRITE, writes_ended).await;
        }
        let mut records = lock(&self.inner.records);
        if let Some(uid) = object.uid() {
            // The store now holds this controller's last write: `latest` has nothing to add.
            if records
                .written
                .get(&uid)
                .is_some_and(|(_, last)| last.resource_version().as_ref() == Some(&version))
            {
                records.written.remove(&uid);
            }
            records.delivered.insert(uid, version.clone());
        }
        let Some(echoes) = records.echoes.get_mut(&at) else {
            return false;
        };
        let known = match echoes.iter().position(|e| e.version == version) {
            Some(found) => echoes.remove(found).known,
            None => false,
        };
        if echoes.is_empty() {
            records.echoes.remove(&at);
        }
        known
    }

    /// From now on, own writes are kept for [`OwnWrites::is_known_echo`] (only a filtering
    /// controller consumes them; without one they would pile up).
    pub(super) fn filter_triggers(&self) {
        lock(&self.inner.records).filtering = true;
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::ObjectMeta;

    use super::*;

    fn versioned(version: &str, replicas: i32) -> Deployment {
        let mut deployment = Deployment {
            metadata: ObjectMeta {
                name: Some("web".into()),
                generation: Some(1),
                ..ObjectMeta::default()
            },
            ..Deployment::default()
        };
        deployment.metadata.uid = Some("u1".into());
        deployment.metadata.resource_version = Some(version.into());
        deployment.spec = k8s_openapi::api::apps::v1::DeploymentSpec {
            replicas: Some(replicas),
            ..Default::default()
        };
        deployment
    }

    #[tokio::test]
    async fn only_a_delivered_own_write_the_reconcile_went_on_with_is_an_echo() {
        let writes = OwnWrites::default();
        writes.filter_triggers();
        let (r1, r2, r3) = (versioned("1", 1), versioned("2", 2), versioned("3", 3));
        // Written and gone on with (a finalizer): its delivery is an echo, once.
        let written = writes.write(&r1, async { Ok(r2.clone()) }).await.unwrap();
        assert_eq!(written, r2);
        assert!(writes.is_known_echo(&r2).await);
        assert!(
            !writes.is_known_echo(&r2).await,
            "a second delivery (a relist) reconciles"
        );
        // A status write the reconcile did not read back may carry others' changes: not
        // an echo, until a reconcile goes on with it.
        writes.record(&r2, r3.clone());
        assert!(!writes.is_known_echo(&r3).await);
        let r4 = versioned("4", 4);
        writes.record(&r3, r4.clone());
        assert_eq!(*writes.latest(Arc::new(r3.clone())), r4);
        assert!(writes.is_known_echo(&r4).await);
        // Someone else's version is never one.
        assert!(!writes.is_known_echo(&versioned("5", 5)).await);
        // An apply that changed nothing wrote nothing.
        assert_eq!(writes.apply(&r4, async { Ok(None) }).await.unwrap(), None);
        assert!(!writes.is_known_echo(&r4).await);
    }

    #[tokio::test]
    async fn a_delivery_overtaking_the_response_waits_for_it() {
        let writes = OwnWrites::default();
        writes.filter_triggers();
        let (r1, r2) = (versioned("1", 1), versioned("2", 2));
        let (respond, response) = tokio::sync::oneshot::channel::<Deployment>();
        let writing = {
            let (writes, r1) = (writes.clone(), r1.clone());
            tokio::spawn(async move {
                let written = writes.apply(&r1, async { Ok(Some(response.await.unwrap())) });
                written.await.unwrap()
            })
        };
        tokio::task::yield_now().await;
        let delivered = {
            let (writes, r2) = (writes.clone(), r2.clone());
            tokio::spawn(async move { writes.is_known_echo(&r2).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(
            !delivered.is_finished(),
            "the delivery waits for the write in flight"
        );
        respond.send(r2.clone()).unwrap();
        assert_eq!(writing.await.unwrap(), Some(r2));
        assert!(delivered.await.unwrap());
    }

    #[tokio::test]
    async fn without_a_filtering_controller_nothing_is_kept() {
        let writes = OwnWrites::default();
        let (r1, r2) = (versioned("1", 1), versioned("2", 2));
        writes.write(&r1, async { Ok(r2.clone()) }).await.unwrap();
        assert!(
            lock(&writes.inner.records).echoes.is_empty()
                && lock(&writes.inner.records).in_flight.is_empty()
        );
    }

    /// A status apply's response often comes after the watch delivered it: nothing is
    /// kept for it then (the store holds it), where before a copy of every object so
    /// written stayed in the record for good.
    #[tokio::test]
    async fn a_write_the_watch_delivered_first_is_not_kept() {
        let writes = OwnWrites::default();
        writes.filter_triggers();
        let (r1, r2, r3) = (versioned("1", 1), versioned("2", 2), versioned("3", 3));
        assert!(!writes.is_known_echo(&r2).await, "someone else's version");
        writes.record(&r1, r2.clone());
        assert!(
            lock(&writes.inner.records).written.is_empty()
                && lock(&writes.inner.records).echoes.is_empty()
        );
        assert_eq!(*writes.latest(Arc::new(r2.clone())), r2);
        // A response before the delivery is kept until the delivery, as before.
        writes.record(&r2, r3.clone());
        assert_eq!(*writes.latest(Arc::new(r2.clone())), r3);
        assert!(writes.is_known_echo(&r3).await);
        assert!(lock(&writes.inner.records).written.is_empty());
        writes.forget(&r3);
        assert!(lock(&writes.inner.records).delivered.is_empty());
    }

    #[test]
    fn a_copy_that_an_own_write_replaced_gives_way_to_the_write() {
        let writes = OwnWrites::default();
        let (r1, r2, r3) = (versioned("1", 1), versioned("2", 2), versioned("3", 3));
        writes.record(&r1, r2.clone());
        writes.record(&r2, r3.clone());
        // The watch is behind: it still has 1 or 2, both replaced by this controller.
        assert_eq!(*writes.latest(Arc::new(r1.clone())), r3);
        assert_eq!(*writes.latest(Arc::new(r2)), r3);
        // It caught up (3), or someone else wrote (4): the record goes, the copy is current.
        assert_eq!(*writes.latest(Arc::new(r3.clone())), r3);
        assert_eq!(*writes.latest(Arc::new(r1.clone())), r1);
        writes.record(&r1, r3.clone());
        let other = versioned("4", 9);
        assert_eq!(*writes.latest(Arc::new(other.clone())), other);
        assert_eq!(*writes.latest(Arc::new(r1.clone())), r1);
    }
}
