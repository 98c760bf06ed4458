//! Watches that receive only the objects of the slices this replica serves, where the API
//! server filters by KEP-5866's `shardSelector` (gate `ShardedListAndWatch`).
//!
//! kube's `ListParams` and `WatchParams` have no field for the selector, so the manager's
//! controller client adds it as a query parameter to the lists and watches of the
//! collections registered here: those of each controller's own kind (the primary watch of
//! [`crate::cache::controller`] and its variants). The watch of one collection restarts
//! whenever the served slices change, and so lists anew under the new selector; each list,
//! once in the store, has the controller reconcile everything it holds (the objects of a
//! slice taken back may be unchanged since this replica last saw them).
//!
//! A cluster that does not filter answers the list without `metadata.shardInfo`: that is
//! reported once, and from then on every watch lists every object and is never restarted;
//! the [`Gate`] alone keeps each replica to its slices. Watches of owned and related objects
//! are never restricted: the server selects by an object's own UID, not its owner's.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use futures::{Stream, StreamExt as _, stream};
use http::{Method, Request, Response};
use http_body_util::BodyExt as _;
use kube::Client;
use kube::client::Body;
use kube::runtime::reflector::{self, store::Writer};
use kube::runtime::watcher::{self, Event};
use serde::Deserialize;
use tokio::sync::watch;

use super::{Gate, Slices};
use crate::cache::namespaces::{Scoped, watch};
use crate::client::Object;
use crate::sync::lock;

tokio::task_local! {
    /// The sharded watches of the runnable being built and run.
    static WATCHES: Watches;
}

/// One manager's sharded watches: the slices they follow, and what each restricted
/// collection lists and watches with now.
#[derive(Clone, Debug)]
pub(crate) struct Watches {
    gate: Gate,
    /// Collection path (`/apis/<group>/<version>/<plural>`, with its namespace if any) →
    /// its selector, and whether the server filters it.
    collections: Arc<Mutex<HashMap<String, Collection>>>,
}

#[derive(Debug, Default)]
struct Collection {
    /// The `shardSelector` its watch uses now, and the slices it selects; none while this
    /// replica serves no slice.
    selector: Option<(String, BTreeSet<u32>)>,
    /// Whether the server filtered it: unknown until a list with the selector is answered.
    filtered: Option<bool>,
}

impl Watches {
    pub(crate) fn new(gate: Gate) -> Self {
        Self {
            gate,
            collections: Arc::default(),
        }
    }

    /// Runs `runnable` (building its controllers, then running them) with these watches.
    pub(crate) async fn scope<F: Future>(watches: Option<Self>, runnable: F) -> F::Output {
        match watches {
            Some(watches) => WATCHES.scope(watches, runnable).await,
            None => runnable.await,
        }
    }

    /// The watches of the runnable being built, with `--sharding`.
    pub(crate) fn current() -> Option<Self> {
        WATCHES.try_with(Clone::clone).ok()
    }

    /// `client`, adding the selector of a restricted collection to its lists and watches,
    /// and reading on the first list answered whether the server filtered it.
    pub(crate) fn client(&self, client: Client) -> Client {
        let namespace = client.default_namespace().to_owned();
        let watches = self.clone();
        let service = tower::service_fn(move |request: Request<Body>| {
            let (watches, client) = (watches.clone(), client.clone());
            async move { watches.send(&client, request).await }
        });
        Client::new(service, namespace)
    }

    async fn send(
        &self,
        client: &Client,
        mut request: Request<Body>,
    ) -> Result<Response<Body>, kube::Error> {
        let path = request.uri().path().to_owned();
        let selector = (request.method() == Method::GET)
            .then(|| {
                let collections = lock(&self.collections);
                let collection = collections.get(&path)?;
                (collection.filtered != Some(false))
                    .then(|| collection.selector.clone())
                    .flatten()
            })
            .flatten();
        let Some((selector, slices)) = selector else {
            return client.send(request).await;
        };
        let query = request.uri().query().unwrap_or_default();
        let listing = !query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1");
        let uri = format!(
            "{path}?{query}{}shardSelector={}",
            if query.is_empty() { "" } else { "&" },
            percent_encode(&selector),
        );
        *request.uri_mut() = uri.parse().map_err(|error: http::uri::InvalidUri| {
            kube::Error::HttpError(http::Error::from(error))
        })?;
        let response = client.send(request).await?;
        if !listing || !response.status().is_success() {
            return Ok(response);
        }
        // Every list with a selector is checked: one that turns out unfiltered (a server
        // that ignores the parameter) ends the selection for good.
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await?.to_bytes();
        let filtered = serde_json::from_slice::<ListHead>(&bytes)
            .ok()
            .and_then(|list| list.filtered(self.gate.slices(), &slices));
        if let Some(filtered) = filtered {
            let before = lock(&self.collections)
                .get_mut(&path)
                .and_then(|collection| collection.filtered.replace(filtered));
            self.gate.record_server_side(filtered);
            match (before, filtered) {
                (None, true) => {
                    tracing::info!(collection = %path, "the API server filters this watch by shardSelector: this replica receives only its slices");
                }
                (None | Some(true), false) => {
                    tracing::warn!(collection = %path, "the API server ignores shardSelector (Kubernetes before 1.36, or the ShardedListAndWatch feature gate is off): this replica watches every object of this collection and reconciles only those of its slices");
                }
                _ => {}
            }
        }
        Ok(Response::from_parts(parts, Body::from(bytes)))
    }

    /// Whether the server was found not to filter one of `paths`.
    fn unfiltered(&self, paths: &[String]) -> bool {
        let collections = lock(&self.collections);
        paths.iter().any(|path| {
            collections
                .get(path)
                .is_some_and(|c| c.filtered == Some(false))
        })
    }

    /// The events of `objects`, applied to `writer`'s store: restricted to the served
    /// slices and restarted as they change, until the server is found not to filter.
    pub(crate) fn reflect<K: Object>(
        &self,
        objects: Scoped<K>,
        config: watcher::Config,
        writer: Writer<K>,
    ) -> impl Stream<Item = watcher::Result<Event<K>>> + Send + 'static + use<K> {
        let reader = writer.as_reader();
        let paths: Vec<String> = objects
            .apis()
            .iter()
            .map(|api| api.resource_url().to_owned())
            .collect();
        let unfiltered = {
            let (watches, paths) = (self.clone(), paths.clone());
            Box::new(move || watches.unfiltered(&paths))
        };
        let this = self.clone();
        let start = move |served: &BTreeSet<u32>| -> (Watched, BoxStream<'static, _>) {
            let selector = this.gate.slices().selector(served.iter().copied());
            let (watched, selector) = match (this.unfiltered(&paths), selector) {
                (true, _) => (Watched::Everything, None),
                // No slice: nothing to list (the server refuses an empty selector).
                (false, None) => (Watched::Nothing, None),
                (false, Some(selector)) => (Watched::Slices, Some(selector)),
            };
            let mut collections = lock(&this.collections);
            for path in &paths {
                collections.entry(path.clone()).or_default().selector =
                    selector.clone().map(|selector| (selector, served.clone()));
            }
            drop(collections);
            let events = match watched {
                Watched::Nothing => stream::iter([Ok(Event::Init), Ok(Event::InitDone)])
                    .chain(stream::pending())
                    .boxed(),
                _ => watch(objects.clone(), config.clone(), reader.clone()).boxed(),
            };
            (watched, events)
        };
        let restart = Restart {
            unfiltered,
            served: self.gate.served(),
            start: Box::new(start),
            watched: Watched::Nothing,
            events: stream::empty().boxed(),
        };
        let events = stream::unfold(restart.started(), |mut restart| async move {
            restart.next().await.map(|event| (event, restart))
        });
        // Once the store holds a new selection, reconcile it all: an object of a slice
        // taken back may be unchanged since this replica last saw it.
        let gate = self.gate.clone();
        reflector::reflector(writer, events).inspect(move |event| {
            if let Ok(Event::InitDone) = event {
                gate.reconcile_all();
            }
        })
    }
}

/// What the current watch of a restricted collection receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Watched {
    /// No slice is served: an empty list, no watch.
    Nothing,
    /// The objects of the served slices (or everything, until the server is found not to
    /// filter).
    Slices,
    /// Every object: the server does not filter.
    Everything,
}

type Start<K> = Box<
    dyn FnMut(&BTreeSet<u32>) -> (Watched, BoxStream<'static, watcher::Result<Event<K>>>) + Send,
>;

/// The watch of one restricted collection, started anew when the served slices change.
struct Restart<K> {
    /// Whether the server was found not to filter this collection.
    unfiltered: Box<dyn Fn() -> bool + Send>,
    served: watch::Receiver<BTreeSet<u32>>,
    start: Start<K>,
    watched: Watched,
    events: BoxStream<'static, watcher::Result<Event<K>>>,
}

impl<K> Restart<K> {
    fn started(mut self) -> Self {
        let served = self.served.borrow_and_update().clone();
        (self.watched, self.events) = (self.start)(&served);
        self
    }

    async fn next(&mut self) -> Option<watcher::Result<Event<K>>> {
        loop {
            if self.watched == Watched::Slices && (self.unfiltered)() {
                // The server ignored the selector (or seemed to): list everything anew, so
                // that the store holds the objects of slices taken later too.
                let served = self.served.borrow_and_update().clone();
                (self.watched, self.events) = (self.start)(&served);
            }
            let following = self.watched != Watched::Everything;
            tokio::select! {
                changed = self.served.changed(), if following => {
                    if changed.is_err() {
                        // The gate is gone: the manager is stopping.
                        return None;
                    }
                    let served = self.served.borrow_and_update().clone();
                    (self.watched, self.events) = (self.start)(&served);
                }
                event = self.events.next() => return event,
            }
        }
    }
}

/// The parts of a list response that say whether the server filtered it.
#[derive(Deserialize)]
struct ListHead {
    metadata: ListMetadata,
    #[serde(default)]
    items: Vec<ItemHead>,
}

#[derive(Deserialize)]
struct ListMetadata {
    #[serde(rename = "shardInfo")]
    shard_info: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct ItemHead {
    metadata: ItemMetadata,
}

#[derive(Deserialize)]
struct ItemMetadata {
    uid: Option<String>,
}

impl ListHead {
    /// Whether the server filtered this list by the selector of `selected`: it says so in
    /// `shardInfo`; or it does not (custom resources, as of Kubernetes 1.37), and every
    /// object listed is in those slices; or one is not. `None` when that tells nothing: an
    /// empty list, or a selector of every slice.
    fn filtered(&self, slices: Slices, selected: &BTreeSet<u32>) -> Option<bool> {
        if self.metadata.shard_info.is_some() {
            return Some(true);
        }
        if slices.all().all(|slice| selected.contains(&slice)) {
            return None;
        }
        let mut uids = self
            .items
            .iter()
            .filter_map(|item| item.metadata.uid.as_deref());
        let mut any = false;
        let all_selected = uids.all(|uid| {
            any = true;
            selected.contains(&slices.of_key(uid))
        });
        any.then_some(all_selected)
    }
}

/// `text` as a query parameter's value.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(byte).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Slices;

    /// A client whose API server answers every GET with an empty list, echoing `shardInfo`
    /// when `filters`, and records the URIs asked for.
    fn api_server(filters: bool) -> (Client, Arc<Mutex<Vec<String>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let service = tower::service_fn(move |request: Request<Body>| {
            let uri = request.uri().to_string();
            lock(&seen).push(uri);
            let mut metadata = serde_json::json!({"resourceVersion": "1"});
            if filters {
                metadata["shardInfo"] = serde_json::json!({"selector": "…"});
            }
            // One object of each slice: all of them, unless it says it filtered.
            let slices = Slices::new(2).unwrap();
            let items: Vec<_> = slices
                .all()
                .map(|slice| serde_json::json!({"metadata": {"uid": uid_in(slices, slice)}}))
                .collect();
            let list = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": metadata, "items": items});
            let response = Response::new(Body::from(serde_json::to_vec(&list).unwrap()));
            async move { Ok::<_, std::convert::Infallible>(response) }
        });
        (Client::new(service, "default"), asked)
    }

    fn register(watches: &Watches, path: &str, selected: &[u32]) {
        let selector = watches
            .gate
            .slices()
            .selector(selected.iter().copied())
            .unwrap();
        lock(&watches.collections).insert(
            path.to_owned(),
            Collection {
                selector: Some((selector, selected.iter().copied().collect())),
                filtered: None,
            },
        );
    }

    /// A UID in `slice` of `slices`.
    fn uid_in(slices: Slices, slice: u32) -> String {
        (0..)
            .map(|n| format!("uid-{n}"))
            .find(|uid| slices.of_key(uid) == slice)
            .unwrap()
    }

    #[test]
    fn a_list_was_filtered_if_the_server_says_so_or_every_object_is_selected() {
        let slices = Slices::new(2).unwrap();
        let list = |shard_info: bool, uids: &[String]| -> ListHead {
            let mut metadata = serde_json::json!({});
            if shard_info {
                metadata["shardInfo"] = serde_json::json!({"selector": "…"});
            }
            let items: Vec<_> = uids
                .iter()
                .map(|uid| serde_json::json!({"metadata": {"uid": uid}}))
                .collect();
            serde_json::from_value(serde_json::json!({"metadata": metadata, "items": items}))
                .unwrap()
        };
        let (zero, one) = (uid_in(slices, 0), uid_in(slices, 1));
        let selected = BTreeSet::from([0]);
        assert_eq!(list(true, &[]).filtered(slices, &selected), Some(true));
        assert_eq!(
            list(false, std::slice::from_ref(&zero)).filtered(slices, &selected),
            Some(true),
            "filtered without saying so"
        );
        assert_eq!(
            list(false, &[zero, one.clone()]).filtered(slices, &selected),
            Some(false)
        );
        assert_eq!(list(false, &[]).filtered(slices, &selected), None);
        let every = BTreeSet::from([0, 1]);
        assert_eq!(list(false, &[one]).filtered(slices, &every), None);
    }

    async fn list(client: &Client, uri: &str) {
        let request = Request::get(uri).body(Vec::new()).unwrap();
        client.request::<serde_json::Value>(request).await.unwrap();
    }

    #[tokio::test]
    async fn only_registered_collections_carry_the_selector_until_the_server_ignores_it() {
        let gate = Gate::new(Slices::new(2).unwrap());
        let watches = Watches::new(gate.clone());
        let path = "/api/v1/namespaces/a/configmaps";
        register(&watches, path, &[0]);
        let (inner, asked) = api_server(false);
        let client = watches.client(inner);

        list(&client, "/api/v1/namespaces/a/secrets?limit=500").await;
        list(&client, &format!("{path}?limit=500")).await;
        assert_eq!(
            gate.server_side(),
            Some(false),
            "no shardInfo: not filtered"
        );
        list(&client, &format!("{path}?limit=500")).await;
        assert_eq!(
            *lock(&asked),
            [
                "/api/v1/namespaces/a/secrets?limit=500".to_owned(),
                format!(
                    "{path}?limit=500&shardSelector=shardRange%28object.metadata.uid%2C%20%270x0000000000000000%27%2C%20%270x8000000000000000%27%29"
                ),
                // Found ignored: no selector any more.
                format!("{path}?limit=500"),
            ]
        );
    }

    #[tokio::test]
    async fn a_list_that_echoes_shard_info_was_filtered() {
        let gate = Gate::new(Slices::new(2).unwrap());
        let watches = Watches::new(gate.clone());
        let path = "/api/v1/configmaps";
        register(&watches, path, &[1]);
        let (inner, asked) = api_server(true);
        let client = watches.client(inner);
        list(&client, &format!("{path}?watch=true&resourceVersion=1")).await;
        assert_eq!(gate.server_side(), None, "a watch says nothing of it");
        list(&client, path).await;
        assert_eq!(gate.server_side(), Some(true));
        list(&client, path).await;
        assert!(
            lock(&asked)
                .iter()
                .all(|uri| uri.contains("shardSelector="))
        );
    }
}
