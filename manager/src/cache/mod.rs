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
pub(crate) mod namespaces;
pub use namespaces::{Namespaces, Scoped};
mod own_writes;
pub use own_writes::OwnWrites;

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
            let events = namespaces::watch(objects, config, writer.as_reader());
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
}
