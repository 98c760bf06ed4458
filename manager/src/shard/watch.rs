//! Watches that receive only the objects of the slices this replica serves, where the API
//! server filters by KEP-5866's `shardSelector` (gate `ShardedListAndWatch`).
//!
//! kube's `ListParams` and `WatchParams` have no field for the selector, so the manager's
//! controller client adds it as a query parameter to the lists and watches of the
//! collections registered here: those of each controller's own kind (the primary watch of
//! [`crate::cache::controller`] and its variants). The watch of one collection restarts
//! whenever the served slices change, and so lists anew under the new selector; its first
//! list after a change has the controller reconcile everything it holds (the objects of
//! a slice taken back may be unchanged since this replica last saw them).
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

use super::Gate;
use crate::cache::Scoped;
use crate::client::Object;
use crate::sync::lock;

tokio::task_local! {
    /// The sharded watches of the runnable being built and run.
    static WATCHES: Watches;
}

/// One manager's sharded watches: the slices they follow, and the selector each restricted
/// collection lists and watches with now.
#[derive(Clone, Debug)]
pub(crate) struct Watches {
    gate: Gate,
    /// Collection path (`/apis/<group>/<version>/<plural>`, with its namespace if any) →
    /// the `shardSelector` its watch uses now.
    selectors: Arc<Mutex<HashMap<String, String>>>,
}

impl Watches {
    pub(crate) fn new(gate: Gate) -> Self {
        Self {
            gate,
            selectors: Arc::default(),
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
        let selector = (request.method() == Method::GET && self.gate.server_side() != Some(false))
            .then(|| lock(&self.selectors).get(request.uri().path()).cloned())
            .flatten();
        let Some(selector) = selector else {
            return client.send(request).await;
        };
        let query = request.uri().query().unwrap_or_default();
        let listing = !query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1");
        let uri = format!(
            "{}?{query}{}shardSelector={}",
            request.uri().path(),
            if query.is_empty() { "" } else { "&" },
            percent_encode(&selector),
        );
        *request.uri_mut() = uri.parse().map_err(|error: http::uri::InvalidUri| {
            kube::Error::HttpError(http::Error::from(error))
        })?;
        let response = client.send(request).await?;
        if !listing || self.gate.server_side().is_some() || !response.status().is_success() {
            return Ok(response);
        }
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await?.to_bytes();
        let filtered = serde_json::from_slice::<ListHead>(&bytes)
            .is_ok_and(|list| list.metadata.shard_info.is_some());
        if self.gate.found_server_side(filtered) {
            if filtered {
                tracing::info!(
                    "the API server filters watches by shardSelector: each replica receives only its slices"
                );
            } else {
                tracing::warn!(
                    "the API server ignores shardSelector (Kubernetes before 1.36, or the ShardedListAndWatch feature gate is off): every replica watches every object and reconciles only those of its slices"
                );
            }
        }
        Ok(Response::from_parts(parts, Body::from(bytes)))
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
        let this = self.clone();
        let start = move |served: &BTreeSet<u32>| -> (Watched, BoxStream<'static, _>) {
            let mut selectors = lock(&this.selectors);
            let selector = this.gate.slices().selector(served.iter().copied());
            match selector {
                _ if this.gate.server_side() == Some(false) => {
                    for path in &paths {
                        selectors.remove(path);
                    }
                    (
                        Watched::Everything,
                        crate::cache::watch(objects.clone(), config.clone(), reader.clone())
                            .boxed(),
                    )
                }
                // No slice: nothing to list (the server refuses an empty selector).
                None => {
                    for path in &paths {
                        selectors.remove(path);
                    }
                    let nothing = [Ok(Event::Init), Ok(Event::InitDone)];
                    (
                        Watched::Nothing,
                        stream::iter(nothing).chain(stream::pending()).boxed(),
                    )
                }
                Some(selector) => {
                    for path in &paths {
                        selectors.insert(path.clone(), selector.clone());
                    }
                    (
                        Watched::Slices,
                        crate::cache::watch(objects.clone(), config.clone(), reader.clone())
                            .boxed(),
                    )
                }
            }
        };
        let restart = Restart {
            gate: self.gate.clone(),
            served: self.gate.served(),
            start: Box::new(start),
            watched: Watched::Nothing,
            events: stream::empty().boxed(),
        };
        let gate = self.gate.clone();
        let events = stream::unfold(restart.started(), |mut restart| async move {
            restart.next().await.map(|event| (event, restart))
        });
        // Once the store holds a new selection, reconcile it all: an object of a slice
        // taken back may be unchanged since this replica last saw it.
        let relisted = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (flag, after) = (relisted.clone(), relisted);
        let events = events.inspect(move |event| {
            if let Ok(Event::Init) = event {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        });
        reflector::reflector(writer, events).inspect(move |event| {
            if let Ok(Event::InitDone) = event
                && after.swap(false, std::sync::atomic::Ordering::SeqCst)
            {
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
    gate: Gate,
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
            if self.watched == Watched::Slices && self.gate.server_side() == Some(false) {
                // The server ignored the selector: this watch has every object already.
                self.watched = Watched::Everything;
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

/// The part of a list response that says whether the server filtered it.
#[derive(Deserialize)]
struct ListHead {
    metadata: ListMetadata,
}

#[derive(Deserialize)]
struct ListMetadata {
    #[serde(rename = "shardInfo")]
    shard_info: Option<serde::de::IgnoredAny>,
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
