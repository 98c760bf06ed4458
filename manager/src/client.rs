//! Typed clients: the calls a reconciler makes most, with the scope rules of
//! the kind in the types.
//!
//! ```ignore (the body of a reconciler: Memcached, its status and the client belong to a project)
//! use rkb_runtime::{Lister, NamespacedApi};
//!
//! let memcacheds = Memcached::api(client.clone(), "default"); // namespaced kinds
//! let all = Memcached::api_all(client.clone());
//! let nodes = Node::api(client.clone());                     // cluster kinds: no namespace
//! if let Some(m) = memcacheds.get_or_none("cache").await? {
//!     let m = memcacheds.add_finalizer(&m, "cache.example.com/finalizer").await?;
//!     memcacheds.apply_status(&m, &MemcachedStatus { .. }).await?;
//! }
//! ```
//!
//! [`NamespacedApi`] and [`ClusterApi`] are implemented for every kind, custom
//! or built in (`Pod::api(client, "ns")`), by the scope kube records for it:
//! a cluster-scoped kind has no constructor taking a namespace. Writes use
//! server-side apply with the operator's field manager ([`field_manager`]),
//! forcing ownership of the fields it sets, as controllers should.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use futures::{StreamExt, TryStreamExt as _};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::{ClusterResourceScope, NamespaceResourceScope, Selector, SelectorExt};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

mod noop;

pub use noop::apply_changes_nothing;

static FIELD_MANAGER: OnceLock<String> = OnceLock::new();

/// Sets the field manager of every [`TypedApi`] made afterwards, e.g. at the
/// start of `main` with `env!("CARGO_PKG_NAME")`. Returns `false`, changing
/// nothing, when it was already set (or already used).
pub fn set_field_manager(name: impl Into<String>) -> bool {
    FIELD_MANAGER.set(name.into()).is_ok()
}

/// The field manager server-side applies use: the one given to
/// [`set_field_manager`], else the name of the running executable, which for
/// an operator built by cargo is its package name (test binaries lose their
/// `-<hash>` suffix).
pub fn field_manager() -> &'static str {
    FIELD_MANAGER.get_or_init(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .map(|stem| strip_cargo_hash(&stem).to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "rkb-operator".to_owned())
    })
}

fn strip_cargo_hash(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            name
        }
        _ => stem,
    }
}

/// What a kind needs to be read and written through a [`TypedApi`].
pub trait Object:
    Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Serialize + Send + Sync + 'static
{
}

impl<K> Object for K where
    K: Resource<DynamicType = ()>
        + Clone
        + Debug
        + DeserializeOwned
        + Serialize
        + Send
        + Sync
        + 'static
{
}

/// Constructors for namespaced kinds.
pub trait NamespacedApi: Object + Resource<Scope = NamespaceResourceScope> {
    /// The objects of this kind in `namespace`.
    fn api(client: Client, namespace: &str) -> TypedApi<Self> {
        TypedApi::new(
            Api::namespaced(client.clone(), namespace),
            client,
            Some(namespace),
        )
    }

    /// The objects of this kind in every namespace; writes go to each
    /// object's own namespace.
    fn api_all(client: Client) -> TypedApi<Self> {
        let mut api = TypedApi::new(Api::all(client.clone()), client, None);
        api.in_namespace = Some(|client, ns| Api::namespaced(client, ns));
        api
    }
}

impl<K: Object + Resource<Scope = NamespaceResourceScope>> NamespacedApi for K {}

/// The constructor for cluster-scoped kinds.
pub trait ClusterApi: Object + Resource<Scope = ClusterResourceScope> {
    /// The objects of this kind.
    fn api(client: Client) -> TypedApi<Self> {
        TypedApi::new(Api::all(client.clone()), client, None)
    }
}

impl<K: Object + Resource<Scope = ClusterResourceScope>> ClusterApi for K {}

/// A [`kube::Api`] with the operator's field manager and the writes
/// controllers make; derefs to the `Api` for everything else.
#[derive(Clone)]
pub struct TypedApi<K> {
    api: Api<K>,
    client: Client,
    namespace: Option<String>,
    /// Set for namespaced kinds listed across namespaces: writes need the
    /// object's own namespace, and only the scope-typed constructor has it.
    in_namespace: Option<fn(Client, &str) -> Api<K>>,
    field_manager: Cow<'static, str>,
}

impl<K> Debug for TypedApi<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedApi")
            .field("kind", &std::any::type_name::<K>())
            .field("namespace", &self.namespace)
            .field("field_manager", &self.field_manager)
            .finish()
    }
}

impl<K> Deref for TypedApi<K> {
    type Target = Api<K>;

    fn deref(&self) -> &Api<K> {
        &self.api
    }
}

impl<K: Object> TypedApi<K> {
    fn new(api: Api<K>, client: Client, namespace: Option<&str>) -> Self {
        TypedApi {
            api,
            client,
            namespace: namespace.map(str::to_owned),
            in_namespace: None,
            field_manager: Cow::Borrowed(field_manager()),
        }
    }

    /// Uses another field manager for this client's writes.
    pub fn with_field_manager(mut self, name: impl Into<Cow<'static, str>>) -> Self {
        self.field_manager = name.into();
        self
    }

    /// The field manager of this client's writes.
    pub fn field_manager(&self) -> &str {
        &self.field_manager
    }

    /// The underlying kube `Api`.
    pub fn inner(&self) -> &Api<K> {
        &self.api
    }

    /// The object, or `None` when it does not exist (rather than a 404 error).
    pub async fn get_or_none(&self, name: &str) -> kube::Result<Option<K>> {
        self.api.get_opt(name).await
    }

    /// Server-side applies `obj` (its spec and metadata; status has its own
    /// [`TypedApi::apply_status`]), creating it if missing and taking
    /// ownership of every field it sets. Fields the server fills in
    /// (resourceVersion, uid, managedFields, ...) are not sent.
    pub async fn apply(&self, obj: &K) -> kube::Result<K> {
        self.api_for(obj)
            .patch(
                &name_of(obj)?,
                &self.params(),
                &Patch::Apply(apply_body(obj)?),
            )
            .await
    }

    /// [`TypedApi::apply`], unless `cached` (the object as a watch last saw it, e.g. from a
    /// [`Lister`]) shows that the apply would change nothing (see
    /// [`TypedApi::apply_changes_nothing`]). Returns the object as written, or `None` when
    /// no request was sent. A write that changes nothing still costs the API server a
    /// request, and etcd a read.
    pub async fn apply_if_changed(&self, obj: &K, cached: Option<&K>) -> kube::Result<Option<K>> {
        if let Some(cached) = cached
            && self.apply_changes_nothing(obj, cached)?
        {
            return Ok(None);
        }
        self.apply(obj).await.map(Some)
    }

    /// Whether [`TypedApi::apply`] of `obj` would leave `cached` (the object as a watch last
    /// saw it) as it is: every field of `obj` has its value there, and this field manager
    /// owns no field that `obj` leaves out. Anything it cannot tell counts as a change.
    pub fn apply_changes_nothing(&self, obj: &K, cached: &K) -> kube::Result<bool> {
        let body = apply_body(obj)?;
        let mut cached = serde_json::to_value(cached).map_err(kube::Error::SerdeError)?;
        // A cache keeps them aside (`cache::managed_fields`).
        if cached.pointer("/metadata/managedFields").is_none()
            && let (Some(uid), Some(version)) = (
                cached.pointer("/metadata/uid").and_then(Value::as_str),
                cached
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str),
            )
            && let Some(fields) = crate::cache::managed_fields::unpacked(uid, version)
        {
            cached["metadata"]["managedFields"] = fields;
        }
        Ok(noop::apply_changes_nothing(
            &body,
            &cached,
            &self.field_manager,
        ))
    }

    /// Server-side applies `status` to the status subresource of `obj`.
    pub async fn apply_status<S: Serialize>(&self, obj: &K, status: &S) -> kube::Result<K> {
        let mut metadata = json!({ "name": name_of(obj)? });
        if let Some(ns) = obj.namespace() {
            metadata["namespace"] = ns.into();
        }
        let body = json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": metadata,
            "status": status,
        });
        self.api_for(obj)
            .patch_status(&name_of(obj)?, &self.params(), &Patch::Apply(body))
            .await
    }

    /// Replaces the status of the object with `obj`'s own (a PUT of the status subresource,
    /// as controller-runtime's `Status().Update`), tested against `obj`'s resourceVersion:
    /// a stale `obj` fails with 409 Conflict, which callers retry once the watch brings the
    /// newer object. The API server keeps the spec and metadata as they are, and keeps the
    /// managedFields when `obj` has none (as a cache's copy).
    ///
    /// For status fields no other writer needs to own: the API server computes no field
    /// ownership from an applied configuration, so it costs less than
    /// [`TypedApi::apply_status`]. It writes the whole status: keep the other writers'
    /// entries of a list (e.g. the conditions) as `obj` has them; the version check keeps
    /// a newer one from being lost.
    pub async fn update_status(&self, obj: &K) -> kube::Result<K> {
        let name = name_of(obj)?;
        if obj.meta().resource_version.is_none() {
            return Err(kube::Error::Service(
                format!(
                    "cannot write the status of {} {name} without its metadata.resourceVersion: \
                     pass the object as a watch or the API server returned it",
                    K::kind(&())
                )
                .into(),
            ));
        }
        let params = PostParams {
            field_manager: Some(self.field_manager.to_string()),
            ..PostParams::default()
        };
        self.api_for(obj).replace_status(&name, &params, obj).await
    }

    /// Adds `finalizer` to `obj` unless it is there already (then nothing is
    /// sent). The JSON patch tests the resourceVersion, so a stale `obj`
    /// fails with a conflict (409) instead of overwriting another writer's change.
    pub async fn add_finalizer(&self, obj: &K, finalizer: &str) -> kube::Result<K> {
        if obj.finalizers().iter().any(|f| f == finalizer) {
            return Ok(obj.clone());
        }
        let mut ops = version_test(obj);
        ops.push(match obj.meta().finalizers {
            None => json!({ "op": "add", "path": "/metadata/finalizers", "value": [finalizer] }),
            Some(_) => json!({ "op": "add", "path": "/metadata/finalizers/-", "value": finalizer }),
        });
        self.json_patch(obj, ops).await
    }

    /// Removes `finalizer` from `obj` if present (else nothing is sent),
    /// tested against the resourceVersion like [`TypedApi::add_finalizer`].
    pub async fn remove_finalizer(&self, obj: &K, finalizer: &str) -> kube::Result<K> {
        let Some(index) = obj.finalizers().iter().position(|f| f == finalizer) else {
            return Ok(obj.clone());
        };
        let path = format!("/metadata/finalizers/{index}");
        let mut ops = version_test(obj);
        ops.push(json!({ "op": "test", "path": path, "value": finalizer }));
        ops.push(json!({ "op": "remove", "path": path }));
        self.json_patch(obj, ops).await
    }

    async fn json_patch(&self, obj: &K, ops: Vec<Value>) -> kube::Result<K> {
        let tests_version = obj.meta().resource_version.is_some();
        let patch = serde_json::from_value(Value::Array(ops)).map_err(kube::Error::SerdeError)?;
        let patched = self
            .api_for(obj)
            .patch(
                &name_of(obj)?,
                &PatchParams::default(),
                &Patch::<()>::Json(patch),
            )
            .await;
        match patched {
            // The API server answers a failed JSON-patch `test` with a 422 that names no
            // invalid field (a validation error, also a 422, does). The tests here are of
            // what `obj` says, so `obj` was stale: say so with the 409 Conflict that a
            // stale update gets, which callers retry.
            Err(kube::Error::Api(status)) if tests_version && is_failed_patch(&status) => {
                let message = format!(
                    "the object has been modified since it was read (its resourceVersion {} is stale); \
                     read it again and retry: {}",
                    obj.meta().resource_version.as_deref().unwrap_or_default(),
                    status.message
                );
                let conflict = kube::core::Status::failure(&message, "Conflict").with_code(409);
                Err(kube::Error::Api(conflict.boxed()))
            }
            other => other,
        }
    }

    fn params(&self) -> PatchParams {
        PatchParams::apply(&self.field_manager).force()
    }

    /// Writes to an object listed across namespaces go to its own namespace.
    fn api_for(&self, obj: &K) -> Api<K> {
        match (self.in_namespace, obj.namespace()) {
            (Some(in_namespace), Some(ns)) => in_namespace(self.client.clone(), &ns),
            _ => self.api.clone(),
        }
    }
}

fn name_of<K: Resource>(obj: &K) -> kube::Result<String> {
    obj.meta().name.clone().ok_or_else(|| {
        kube::Error::Service(
            format!(
                "cannot write a {} without metadata.name",
                std::any::type_name::<K>()
            )
            .into(),
        )
    })
}

/// What [`TypedApi::apply`] sends for `obj`: its spec and metadata, without the fields the
/// server fills in (resourceVersion, uid, managedFields, ...).
fn apply_body<K: Serialize>(obj: &K) -> kube::Result<Value> {
    let mut body = serde_json::to_value(obj).map_err(kube::Error::SerdeError)?;
    if let Some(fields) = body.as_object_mut() {
        fields.remove("status");
        if let Some(Value::Object(meta)) = fields.get_mut("metadata") {
            for server_owned in [
                "resourceVersion",
                "uid",
                "managedFields",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
            ] {
                meta.remove(server_owned);
            }
        }
    }
    Ok(body)
}

fn version_test<K: Resource>(obj: &K) -> Vec<Value> {
    match &obj.meta().resource_version {
        Some(rv) => vec![json!({ "op": "test", "path": "/metadata/resourceVersion", "value": rv })],
        None => Vec::new(),
    }
}

/// Whether the API server refused a JSON patch because one of its operations failed (a
/// `test`, or a path that is not there): a 422 without the invalid fields that a failed
/// validation lists.
fn is_failed_patch(status: &kube::core::Status) -> bool {
    status.code == 422 && status.details.as_ref().is_none_or(|d| d.causes.is_empty())
}

/// Reads from a reflector's cache: what a controller looked up through the
/// API server, without the requests (controller-runtime's cached client).
///
/// Cached objects carry no `metadata.managedFields` (they are kept aside for
/// [`TypedApi::apply_if_changed`], see `cache::managed_fields`); read them with a GET.
#[derive(Clone)]
pub struct Lister<K: Resource + 'static>
where
    K::DynamicType: Hash + Eq + Clone,
{
    store: Store<K>,
    /// Set once the watch filling the store delivered its first full list (for listers
    /// made here, whose stream is known; a store's own `wait_until_ready` wakes only one
    /// waiter, and a controller's reconciles wait on a lister concurrently).
    synced: Option<tokio::sync::watch::Receiver<bool>>,
}

impl<K: Resource + Clone + 'static> Debug for Lister<K>
where
    K::DynamicType: Hash + Eq + Clone,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lister")
            .field("kind", &std::any::type_name::<K>())
            .field("objects", &self.store.len())
            .finish()
    }
}

impl<K> Lister<K>
where
    K: Object,
{
    /// A lister over a store kept up to date elsewhere, e.g. by
    /// `Controller::store()` or `reflector::store()`.
    pub fn new(store: Store<K>) -> Self {
        Lister {
            store,
            synced: None,
        }
    }

    /// A lister over `store`, synced when `synced` turns true.
    pub(crate) fn synced_by(store: Store<K>, synced: tokio::sync::watch::Receiver<bool>) -> Self {
        Lister {
            store,
            synced: Some(synced),
        }
    }

    /// A lister filled by watching `api`, and the future that keeps it
    /// filled: spawn it (`tokio::spawn(run)`) and await
    /// [`Lister::wait_until_ready`] before the first read.
    pub fn reflect(
        api: Api<K>,
        config: watcher::Config,
    ) -> (Self, impl Future<Output = ()> + Send) {
        let (store, writer) = reflector::store();
        let events = watcher(api, config).map_ok(crate::cache::managed_fields::pack);
        let run = reflector::reflector(writer, events)
            .default_backoff()
            .for_each(|_| futures::future::ready(()));
        (Lister::new(store), run)
    }

    /// Waits until the first full list has been cached.
    pub async fn wait_until_ready(&self) -> Result<(), reflector::store::WriterDropped> {
        self.store.wait_until_ready().await
    }

    /// Waits until the first full list has been cached, as a reconcile must before it
    /// reads (controller-runtime starts no reconcile before its caches have synced;
    /// kube-runtime's controller does not wait for the stores of the objects it owns).
    /// Any number of reconciles may wait at once. A lister whose watch stopped before
    /// its first list never syncs.
    pub async fn wait_until_synced(&self) {
        match &self.synced {
            Some(synced) => {
                let _ = synced.clone().wait_for(|synced| *synced).await;
            }
            None => {
                if store_ready(&self.store).await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        }
    }

    /// The object `name` in `namespace` (`""` for cluster-scoped kinds).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        let key = ObjectRef::new(name);
        let key = if namespace.is_empty() {
            key
        } else {
            key.within(namespace)
        };
        self.store.get(&key)
    }

    /// The objects in `namespace` (`""`: cluster-scoped objects), by name.
    pub fn list(&self, namespace: &str) -> Vec<Arc<K>> {
        let wanted = (!namespace.is_empty()).then_some(namespace);
        sorted(
            self.store
                .state_filter(|o| o.meta().namespace.as_deref() == wanted),
        )
    }

    /// Every cached object, by namespace and name.
    pub fn list_all(&self) -> Vec<Arc<K>> {
        sorted(self.store.state())
    }

    /// The objects whose labels match `selector`, e.g.
    /// `&Selector::from_iter([("app", "web")])`, by namespace and name.
    pub fn list_matching(&self, selector: &Selector) -> Vec<Arc<K>> {
        sorted(self.store.state_filter(|o| {
            let empty = BTreeMap::new();
            selector.matches(o.meta().labels.as_ref().unwrap_or(&empty))
        }))
    }

    /// The underlying store.
    pub fn store(&self) -> &Store<K> {
        &self.store
    }
}

/// Waits until `store` holds its first full list; `Err` when its writer was dropped first.
///
/// kube-runtime's `wait_until_ready` (still in 5.0) remembers a single waker, and a
/// controller waits on its own store too, so a second waiter can miss the wake-up: ask
/// again every 100 ms instead of waiting once.
pub(crate) async fn store_ready<K>(store: &Store<K>) -> Result<(), reflector::store::WriterDropped>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Hash + Eq + Clone,
{
    loop {
        let wait = store.wait_until_ready();
        if let Ok(ready) = tokio::time::timeout(std::time::Duration::from_millis(100), wait).await {
            return ready;
        }
    }
}

fn sorted<K: Resource>(mut objects: Vec<Arc<K>>) -> Vec<Arc<K>> {
    objects.sort_by(|a, b| {
        (a.meta().namespace.as_deref(), a.meta().name.as_deref())
            .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
    });
    objects
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_hashes_are_stripped_from_test_binaries() {
        assert_eq!(
            strip_cargo_hash("my_operator-0123456789abcdef"),
            "my_operator"
        );
        assert_eq!(strip_cargo_hash("memcached-operator"), "memcached-operator");
    }
}
