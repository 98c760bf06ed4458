//! Controllers that read what they watch, as controller-runtime's cached client does: a
//! reconcile looks objects up in the watches' stores instead of asking the API server,
//! and a status the reconciler wrote itself does not bring it back.
//!
//! ```ignore (pieces of the main and the reconciler of a project, whose types, client and config they use)
//! let memcacheds = rkb_runtime::cache::controller(Api::<Memcached>::all(client.clone()), config());
//! let (controller, deployments) = rkb_runtime::cache::owns(memcacheds, Api::<Deployment>::all(client), config());
//! // in the reconciler:
//! deployments.wait_until_synced().await;
//! let deployment = deployments.get(&namespace, &name);
//! ```
//!
//! kube-runtime's `Controller::owns` watches only the metadata of owned objects and keeps no
//! store of them; [`owns`] watches them whole, into a [`Lister`] the reconciler reads, and
//! [`watches`] does the same for objects related some other way (by label, say). Each still
//! makes one watch per kind.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use futures::channel::mpsc;
use futures::{Stream, StreamExt as _};
use kube::core::NamespaceResourceScope;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{Controller, WatchStreamExt as _, predicates};
use kube::{Resource, ResourceExt as _};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::client::{Lister, Object};
use crate::manager::workqueue::triggered;
use crate::sync::lock;

pub(crate) mod managed_fields;
mod namespaces;
pub(crate) use namespaces::watch;
pub use namespaces::{Namespaces, Scoped};

/// A controller of the objects of `api` that reconciles one when its generation (its spec),
/// labels, annotations, finalizers, owners or deletion change, and not when only its status
/// does: the reconciler's own status writes do not trigger it again (controller-runtime's
/// `GenerationChangedPredicate`, with metadata changes kept). Objects of kinds that keep no
/// generation (ConfigMaps, Secrets: no spec, no status) reconcile on every change.
///
/// `objects` is an [`Api`](kube::Api), or the objects of several namespaces
/// ([`Namespaces::apis`]).
pub fn controller<K: Object>(
    objects: impl Into<Scoped<K>>,
    config: watcher::Config,
) -> Controller<K> {
    let (store, changes) = primary(objects.into(), config);
    counted_controller(
        changes.predicate_filter(reconcile_worthy, Default::default()),
        store,
    )
}

/// A controller of the objects of `objects` that reconciles one on every change, its status
/// included, as kube-runtime's `Controller::new` does: for built-in kinds whose controller
/// follows what others write (a Pod's phase, a Deployment's ready replicas). `objects` may
/// span several namespaces ([`Namespaces::apis`]), which `Controller::new` cannot.
pub fn controller_of_every_change<K: Object>(
    objects: impl Into<Scoped<K>>,
    config: watcher::Config,
) -> Controller<K> {
    let (store, changes) = primary(objects.into(), config);
    counted_controller(changes, store)
}

/// [`controller`], except that the watch's delivery of a write of the controller's own that
/// a reconcile already works on reconciles no more: the finalizer a reconcile added through
/// [`OwnWrites::write`] (it goes on with the object [`OwnWrites::latest`] returns, the one
/// it wrote) comes back through the watch as a change of the finalizers, which would
/// reconcile the object a second time for nothing. `writes` is the reconciler's record of
/// its writes; a write that carried someone else's change too (a status applied over a spec
/// the reconcile has not seen, recorded with [`OwnWrites::record`]) still reconciles.
///
/// The watch often delivers a write before its response reaches the reconcile: a delivery
/// of an object with a write in flight waits for that write to end (at most 10 s), and so
/// holds up the deliveries behind it for as long. When in doubt (no record, a timeout) the
/// delivery reconciles: the filter only ever saves reconciles, never loses one.
pub fn controller_ignoring_own<K: Object>(
    objects: impl Into<Scoped<K>>,
    config: watcher::Config,
    writes: &OwnWrites<K>,
) -> Controller<K> {
    let (store, changes) = primary(objects.into(), config);
    writes.filter_triggers();
    // Each delivery settles the own write it echoes, whether or not the predicate lets it
    // through (a status write never changes what it hashes); the predicate only drops, so
    // the decisions of the deliveries it let through are at the front, in order. When
    // more than DECISIONS wait (many dropped in a row), the oldest go: a delivery whose
    // decision went reconciles.
    const DECISIONS: usize = 1024;
    let decisions: Arc<Mutex<std::collections::VecDeque<(String, bool)>>> = Arc::default();
    let (seen, writes_seen) = (decisions.clone(), writes.clone());
    let changes = changes
        .then(move |object| {
            let (seen, writes) = (seen.clone(), writes_seen.clone());
            async move {
                if let Ok(object) = &object {
                    let echo = writes.is_known_echo(object).await;
                    let mut seen = lock(&seen);
                    if seen.len() == DECISIONS {
                        seen.pop_front();
                    }
                    seen.push_back((delivery(object), echo));
                }
                object
            }
        })
        .predicate_filter(reconcile_worthy, Default::default())
        .filter(move |object| {
            let Ok(object) = object else {
                return futures::future::ready(true);
            };
            let this = delivery(object);
            let mut decisions = lock(&decisions);
            let mut echo = false;
            while let Some((delivered, decided)) = decisions.pop_front() {
                if delivered == this {
                    echo = decided;
                    break;
                }
            }
            futures::future::ready(!echo)
        });
    counted_controller(changes, store)
}

/// Which delivery of which object: its UID and resourceVersion.
fn delivery<K: Resource>(object: &K) -> String {
    format!(
        "{}@{}",
        object.meta().uid.as_deref().unwrap_or_default(),
        object
            .meta()
            .resource_version
            .as_deref()
            .unwrap_or_default()
    )
}

/// The store of a controller's own objects and the stream of their changes that fills it.
fn primary<K: Object>(
    objects: Scoped<K>,
    config: watcher::Config,
) -> (
    Store<K>,
    impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
) {
    let (store, writer) = reflector::store();
    // With --sharding, only the served slices' objects, where the API server filters.
    let events = match crate::shard::watch::Watches::current() {
        Some(watches) => watches.reflect(objects, config, writer).left_stream(),
        None => {
            let events = watch(objects, config, writer.as_reader());
            reflector::reflector(writer, events).right_stream()
        }
    };
    (store, events.applied_objects())
}

/// A controller of `store`'s objects, reconciled on `changes`, each counted as an add to
/// its queue.
fn counted_controller<K: Object>(
    changes: impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
    store: Store<K>,
) -> Controller<K> {
    let changes = changes.inspect(|object| {
        if let Ok(object) = object {
            triggered(key(object.meta().namespace.as_deref(), &object.name_any()));
        }
    });
    Controller::for_stream(changes, store)
}

/// The manager's key of an object: `namespace/name`, or `name`.
fn key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}

/// What of an object, when it changes, needs a reconcile.
fn reconcile_worthy<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    // Without a generation, a change of the data (a ConfigMap's, a Secret's) would show in
    // nothing hashed here but the resourceVersion.
    if meta.generation.is_none() {
        return predicates::resource_version(object);
    }
    let mut hasher = DefaultHasher::new();
    (
        meta.generation,
        predicates::labels(object),
        predicates::annotations(object),
        predicates::finalizers(object),
        object
            .owner_references()
            .iter()
            .map(|o| &o.uid)
            .collect::<Vec<_>>(),
        meta.deletion_timestamp.as_ref().map(|t| t.0.as_second()),
    )
        .hash(&mut hasher);
    Some(hasher.finish())
}

/// `controller` also reconciles an object when one it owns (the controller owner reference)
/// changes, as `Controller::owns` does, and keeps those objects whole in the returned
/// [`Lister`] for the reconciler to read (after [`Lister::wait_until_synced`]).
pub fn owns<K, Child>(
    controller: Controller<K>,
    api: impl Into<Scoped<Child>>,
    config: watcher::Config,
) -> (Controller<K>, Lister<Child>)
where
    K: Object,
    Child: Object,
{
    let (lister, changes) = reflected(api, config);
    (
        controller.owns_stream(count_owners::<K, Child>(changes)),
        lister,
    )
}

/// [`owns`], except that the watch's delivery of an owned object this controller wrote
/// itself through [`OwnWrites::apply`] (the Deployment a reconcile
/// applied, whose returned version that reconcile went on with) does not reconcile the
/// owner again. Any other version does (the Deployment controller's status update, an edit
/// by hand, a deletion).
pub fn owns_ignoring_own<K, Child>(
    controller: Controller<K>,
    api: impl Into<Scoped<Child>>,
    config: watcher::Config,
    writes: &OwnWrites<Child>,
) -> (Controller<K>, Lister<Child>)
where
    K: Object,
    Child: Object,
{
    let (lister, changes) = reflected(api, config);
    (
        controller.owns_stream(count_owners::<K, Child>(without_echoes(changes, writes))),
        lister,
    )
}

/// `changes` without the versions `writes` knows this controller wrote itself.
fn without_echoes<Child: Object>(
    changes: impl Stream<Item = Result<Child, watcher::Error>> + Send + 'static,
    writes: &OwnWrites<Child>,
) -> impl Stream<Item = Result<Child, watcher::Error>> + Send + 'static {
    writes.filter_triggers();
    let writes = writes.clone();
    changes.filter_map(move |child| {
        let writes = writes.clone();
        async move {
            match child {
                Ok(child) if writes.is_known_echo(&child).await => None,
                other => Some(other),
            }
        }
    })
}

/// `changes` of owned objects, each counted as an add to the queue of its owner.
fn count_owners<K: Object, Child: Object>(
    changes: impl Stream<Item = Result<Child, watcher::Error>> + Send + 'static,
) -> impl Stream<Item = Result<Child, watcher::Error>> + Send + 'static {
    changes.inspect(|child| {
        // The owner kube-runtime will reconcile: the controller owner reference of K's kind.
        let Ok(child) = child else { return };
        let owner = child.owner_references().iter().find(|o| {
            o.controller == Some(true)
                && o.kind == K::kind(&())
                && o.api_version == K::api_version(&())
        });
        if let Some(owner) = owner {
            let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>();
            let namespace = child.meta().namespace.as_deref().filter(|_| namespaced);
            triggered(key(namespace, &owner.name));
        }
    })
}

/// Watches shared by the controllers of one manager (`Context::cache`): one watch per kind,
/// namespace and watch configuration, however many controllers own those objects, as
/// controller-runtime's shared informer cache. Each controller still gets every change.
///
/// The watch starts with the first controller that asks for it, through that controller's
/// client, and stops when the manager shuts down.
#[derive(Clone, Default)]
pub struct SharedCache {
    watches: Arc<Mutex<HashMap<String, Box<dyn Any + Send + Sync>>>>,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for SharedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let watches = lock(&self.watches);
        f.debug_struct("SharedCache")
            .field("watches", &watches.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// One shared watch: its store, whether it has listed, and the streams of its subscribers.
struct SharedWatch<K: Object> {
    lister: Lister<K>,
    subscribers: Arc<Mutex<Vec<mpsc::UnboundedSender<K>>>>,
}

impl SharedCache {
    /// A cache whose watches stop when `shutdown` is cancelled.
    pub fn new(shutdown: CancellationToken) -> Self {
        SharedCache {
            watches: Arc::default(),
            shutdown,
        }
    }

    /// [`owns`], with the owned objects' watch shared with every other controller of the
    /// manager that owns the same objects through this cache.
    pub fn owns<K, Child>(
        &self,
        controller: Controller<K>,
        api: impl Into<Scoped<Child>>,
        config: watcher::Config,
    ) -> (Controller<K>, Lister<Child>)
    where
        K: Object,
        Child: Object,
    {
        let (lister, changes) = self.subscribe(api.into(), config);
        (
            controller.owns_stream(count_owners::<K, Child>(changes)),
            lister,
        )
    }

    /// [`owns_ignoring_own`], with the owned objects' watch shared as in
    /// [`owns`](Self::owns): each controller still skips only its own writes.
    pub fn owns_ignoring_own<K, Child>(
        &self,
        controller: Controller<K>,
        api: impl Into<Scoped<Child>>,
        config: watcher::Config,
        writes: &OwnWrites<Child>,
    ) -> (Controller<K>, Lister<Child>)
    where
        K: Object,
        Child: Object,
    {
        let (lister, changes) = self.subscribe(api.into(), config);
        (
            controller.owns_stream(count_owners::<K, Child>(without_echoes(changes, writes))),
            lister,
        )
    }

    /// The lister of the shared watch of `api` with `config`, started if it is not yet,
    /// and a stream of its changes from now on.
    fn subscribe<K: Object>(
        &self,
        api: Scoped<K>,
        config: watcher::Config,
    ) -> (
        Lister<K>,
        impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
    ) {
        let key = format!("{} {} {config:?}", std::any::type_name::<K>(), api.key());
        let mut watches = lock(&self.watches);
        let watch = watches
            .entry(key)
            .or_insert_with(|| Box::new(self.start(api, config)))
            .downcast_ref::<SharedWatch<K>>()
            .expect("one type per key: the key starts with the type's name");
        let (sender, receiver) = mpsc::unbounded();
        lock(&watch.subscribers).push(sender);
        (watch.lister.clone(), receiver.map(Ok))
    }

    fn start<K: Object>(&self, api: Scoped<K>, config: watcher::Config) -> SharedWatch<K> {
        let (lister, changes) = reflected(api, config);
        let subscribers: Arc<Mutex<Vec<mpsc::UnboundedSender<K>>>> = Arc::default();
        let fan_out = subscribers.clone();
        let changes = changes.default_backoff().for_each(move |change| {
            match change {
                Ok(object) => {
                    let mut subscribers = lock(&fan_out);
                    subscribers.retain(|s| s.unbounded_send(object.clone()).is_ok());
                }
                // The client noted the failure for readiness; the backoff retries.
                Err(error) => tracing::debug!(%error, "shared watch failed"),
            }
            futures::future::ready(())
        });
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = changes => {}
                () = shutdown.cancelled() => {}
            }
        });
        SharedWatch {
            lister,
            subscribers,
        }
    }
}

/// `controller` also reconciles the objects `mapper` names when an object of `api` changes,
/// as `Controller::watches` does, and keeps the objects of `api` whole in the returned
/// [`Lister`] for the reconciler to read (after [`Lister::wait_until_synced`]): for a kind
/// the controller reads but does not own, e.g. the pods of its Deployments, found by label.
///
/// A reconcile that a change of such an object starts finds that change in the lister: the
/// store takes each change before the controller sees it. With [`Lister::reflect`] instead,
/// the lister's watch is not one of the controller's triggers, so a reconcile may read it
/// before it has seen the change the reconcile is about (or after the last reconcile).
pub fn watches<K, Other, I>(
    controller: Controller<K>,
    api: impl Into<Scoped<Other>>,
    config: watcher::Config,
    mapper: impl Fn(Other) -> I + Sync + Send + 'static,
) -> (Controller<K>, Lister<Other>)
where
    K: Object,
    Other: Object,
    I: IntoIterator<Item = ObjectRef<K>> + 'static,
    I::IntoIter: Send,
{
    let (lister, changes) = reflected(api, config);
    // Each object a change maps to is an add to the controller's queue.
    let mapper = move |other| {
        let objects: Vec<ObjectRef<K>> = mapper(other).into_iter().collect();
        for object in &objects {
            triggered(key(object.namespace.as_deref(), &object.name));
        }
        objects
    };
    (controller.watches_stream(changes, mapper), lister)
}

/// A lister of `api` and the stream of changes that fills it; the lister says it is synced
/// once the stream has delivered the first full list.
fn reflected<K: Object>(
    api: impl Into<Scoped<K>>,
    config: watcher::Config,
) -> (
    Lister<K>,
    impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
) {
    let (store, writer): (Store<K>, _) = reflector::store();
    let (synced, watch_synced) = watch::channel(false);
    let events = namespaces::watch(api.into(), config, writer.as_reader());
    let events = reflector::reflector(writer, events).inspect(move |event| {
        if matches!(event, Ok(Event::InitDone)) {
            synced.send_replace(true);
        }
    });
    (
        Lister::synced_by(store, watch_synced),
        events.touched_objects(),
    )
}

/// The objects a controller wrote itself, so that a reconcile handed a copy its own write
/// has already replaced (the watch has not delivered the write yet) works on what it wrote
/// rather than writing it again: without it, a status read from such a stale copy differs
/// from the desired one and is written a second time.
///
/// A copy is known stale when its resourceVersion is one that a recorded write replaced;
/// resourceVersions are only compared for equality, as Kubernetes asks.
///
/// Handed to [`controller_ignoring_own`] or [`owns_ignoring_own`], it also keeps the
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
    key(object.meta().namespace.as_deref(), &object.name_any())
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
    /// [`controller_ignoring_own`]).
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
    /// of [`owns_ignoring_own`] reconciles the owner no more. Any later version does (the
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
    async fn is_known_echo(&self, object: &K) -> bool {
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
    fn filter_triggers(&self) {
        lock(&self.inner.records).filtering = true;
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::ObjectMeta;

    use super::*;

    fn deployment(generation: i64, labels: &[(&str, &str)]) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("web".into()),
                generation: Some(generation),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            ..Deployment::default()
        }
    }

    #[test]
    fn a_status_change_needs_no_reconcile_but_spec_and_metadata_changes_do() {
        let before = deployment(1, &[("app", "web")]);
        let mut status_only = before.clone();
        status_only.status = Some(Default::default());
        status_only.metadata.resource_version = Some("8".into());
        assert_eq!(reconcile_worthy(&before), reconcile_worthy(&status_only));

        let mut deleted = before.clone();
        deleted.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::now(),
            ));
        let mut finalized = before.clone();
        finalized.metadata.finalizers = Some(vec!["a/b".into()]);
        for changed in [
            deployment(2, &[("app", "web")]),
            deployment(1, &[("app", "db")]),
            deleted,
            finalized,
        ] {
            assert_ne!(
                reconcile_worthy(&before),
                reconcile_worthy(&changed),
                "{changed:?}"
            );
        }
    }

    #[test]
    fn every_change_of_a_kind_without_generation_needs_a_reconcile() {
        let secret = |version: &str, value: &str| k8s_openapi::api::core::v1::Secret {
            metadata: ObjectMeta {
                name: Some("db".into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            string_data: Some([("password".to_owned(), value.to_owned())].into()),
            ..Default::default()
        };
        assert_ne!(
            reconcile_worthy(&secret("1", "old")),
            reconcile_worthy(&secret("2", "new"))
        );
        assert_eq!(
            reconcile_worthy(&secret("2", "new")),
            reconcile_worthy(&secret("2", "new"))
        );
    }

    fn versioned(version: &str, replicas: i32) -> Deployment {
        let mut deployment = deployment(1, &[]);
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
