//! Watches restricted to some namespaces (`--watch-namespace`, kubebuilder's
//! `WATCH_NAMESPACE`), for operators whose permissions are Roles in those namespaces rather
//! than a ClusterRole: a watch of all namespaces would be refused.
//!
//! A kind's objects in several namespaces take one watch per namespace. kube-runtime's
//! store expects one watch: each relist (`Init` … `InitDone`) replaces the whole store. So
//! the watches are joined into the events of one watch of their union: one initial list
//! that ends when every namespace has listed, then changes; a later relist of one
//! namespace becomes the changes it brings, and the deletion of that namespace's objects it
//! no longer lists.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::str::FromStr;

use futures::{Stream, StreamExt as _, TryStreamExt as _, stream};
use kube::core::NamespaceResourceScope;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, Resource, ResourceExt as _};

use super::managed_fields;
use crate::client::Object;

/// The namespaces a manager's controllers watch: all of them, or only those listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Namespaces {
    /// Every namespace (a cluster-wide watch; the manager needs a ClusterRole).
    #[default]
    All,
    /// Only these (never empty); the manager needs a Role in each.
    Only(BTreeSet<String>),
}

impl Namespaces {
    /// Only `namespaces`; none at all means all of them.
    ///
    /// # Panics
    /// When a name is not a namespace name (a DNS-1123 label); parse user input with
    /// [`str::parse`] instead, which says what is wrong.
    pub fn only<S: Into<String>>(namespaces: impl IntoIterator<Item = S>) -> Self {
        let names: Vec<String> = namespaces.into_iter().map(Into::into).collect();
        names.join(",").parse().expect("namespace names")
    }

    /// Whether an object in `namespace` is watched.
    pub fn contains(&self, namespace: &str) -> bool {
        match self {
            Namespaces::All => true,
            Namespaces::Only(names) => names.contains(namespace),
        }
    }

    /// The objects of a namespaced kind in these namespaces, for [`super::controller`],
    /// [`super::owns`] and [`super::watches`].
    pub fn apis<K>(&self, client: &Client) -> Scoped<K>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        let apis = match self {
            Namespaces::All => vec![Api::all(client.clone())],
            Namespaces::Only(names) => names
                .iter()
                .map(|namespace| Api::namespaced(client.clone(), namespace))
                .collect(),
        };
        Scoped { apis }
    }
}

/// A comma-separated list of namespace names; empty means all namespaces, as
/// `WATCH_NAMESPACE` does for controller-runtime operators.
impl FromStr for Namespaces {
    type Err = String;

    fn from_str(list: &str) -> Result<Self, String> {
        let mut names = BTreeSet::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            rkb_core::names::dns1123_label(name).map_err(|error| {
                format!(
                    "{name:?} is not a namespace name: {error}; expected a comma-separated \
                     list of namespace names (lowercase letters, digits and '-'), e.g. \
                     `team-a,team-b`, or nothing for all namespaces"
                )
            })?;
            names.insert(name.to_owned());
        }
        Ok(if names.is_empty() {
            Namespaces::All
        } else {
            Namespaces::Only(names)
        })
    }
}

impl fmt::Display for Namespaces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Namespaces::All => f.write_str("all namespaces"),
            Namespaces::Only(names) => f.write_str(
                &names
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        }
    }
}

/// The objects of one kind that a controller watches: one [`Api`] (all namespaces, one
/// namespace, or a cluster-scoped kind), or one per namespace ([`Namespaces::apis`]).
#[derive(Clone, Debug)]
pub struct Scoped<K> {
    apis: Vec<Api<K>>,
}

impl<K> From<Api<K>> for Scoped<K> {
    fn from(api: Api<K>) -> Self {
        Scoped { apis: vec![api] }
    }
}

impl<K: Object> Scoped<K> {
    /// One API per namespace watched.
    pub fn apis(&self) -> &[Api<K>] {
        &self.apis
    }

    /// Lists one object in each namespace (or cluster-wide), so that a controller the API
    /// server will not serve (the CRD is not installed, or RBAC forbids it) fails at start
    /// with `what` and a `hint`, rather than running a watch that retries forever:
    /// `cannot list memcacheds.cache.example.com in ns-a: <hint>: <the API server's answer>`.
    pub async fn check_listable(&self, what: &str, hint: &str) -> anyhow::Result<()> {
        let first = kube::api::ListParams::default().limit(1);
        for api in &self.apis {
            if let Err(error) = api.list(&first).await {
                let place = api
                    .namespace()
                    .map(|ns| format!(" in {ns}"))
                    .unwrap_or_default();
                return Err(
                    anyhow::Error::new(error).context(format!("cannot list {what}{place}: {hint}"))
                );
            }
        }
        Ok(())
    }

    /// What tells two scopes apart: the API paths watched.
    pub(crate) fn key(&self) -> String {
        let urls: Vec<&str> = self.apis.iter().map(Api::resource_url).collect();
        urls.join(" ")
    }
}

/// The events of one watch of everything `scoped` names. `store` is the store these events
/// fill: a namespace's relist deletes the objects of that namespace the store still holds
/// and the relist no longer lists.
pub(crate) fn watch<K: Object>(
    scoped: Scoped<K>,
    config: watcher::Config,
    store: Store<K>,
) -> impl Stream<Item = watcher::Result<Event<K>>> + Send + 'static {
    let mut apis = scoped.apis;
    if apis.len() == 1 {
        let api = apis.pop().expect("one API");
        return watcher::watcher(api, config)
            .map_ok(managed_fields::pack)
            .left_stream();
    }
    let namespaces = apis
        .iter()
        .map(|api| api.namespace().map(str::to_owned))
        .collect();
    let watches = apis.into_iter().enumerate().map(|(index, api)| {
        // Each namespace's watch backs off on its own errors, which still go through.
        watcher::watcher(api, config.clone())
            .default_backoff()
            .map(move |event| (index, event.map(managed_fields::pack)))
            .boxed()
    });
    let mut union = Union::new(namespaces, store);
    stream::once(async { Ok(Event::Init) })
        .chain(stream::select_all(watches).flat_map(move |(index, event)| {
            stream::iter(match event {
                Ok(event) => union.next(index, event).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            })
        }))
        .right_stream()
}

/// Turns the events of several watches, one per namespace, into those of one watch of
/// their union, which starts with one `Init`.
struct Union<K: Object> {
    store: Store<K>,
    /// The namespace of each watch.
    namespaces: Vec<Option<String>>,
    /// For each watch: the objects its relist in progress has listed, if one is.
    listing: Vec<Option<HashSet<ObjectRef<K>>>>,
    /// For each watch: whether it has listed once.
    listed_once: Vec<bool>,
    /// Until every watch has listed once: the changes of those that have, held back until
    /// the union's first list is done (the store would drop them when it swaps that list in).
    held: Option<Vec<Event<K>>>,
}

impl<K: Object> Union<K> {
    fn new(namespaces: Vec<Option<String>>, store: Store<K>) -> Self {
        let watches = namespaces.len();
        Union {
            store,
            namespaces,
            listing: vec![None; watches],
            listed_once: vec![false; watches],
            held: Some(Vec::new()),
        }
    }

    /// What the union's watch says when watch `index` says `event`.
    fn next(&mut self, index: usize, event: Event<K>) -> Vec<Event<K>> {
        match event {
            Event::Init => {
                self.listing[index] = Some(HashSet::new());
                vec![]
            }
            Event::InitApply(object) => {
                if let Some(listed) = &mut self.listing[index] {
                    listed.insert(ObjectRef::from(&object));
                }
                match &mut self.held {
                    // Part of the union's first list.
                    Some(_) if !self.listed_once[index] => vec![Event::InitApply(object)],
                    // A relist (of a watch that had listed): the objects it brings are changes.
                    // One during the union's first list cannot delete what it no longer has
                    // (the store holds nothing yet); the next relist will.
                    Some(held) => {
                        held.push(Event::Apply(object));
                        vec![]
                    }
                    None => vec![Event::Apply(object)],
                }
            }
            Event::InitDone => {
                let listed = self.listing[index].take().unwrap_or_default();
                if self.held.is_none() {
                    return self.gone(index, &listed);
                }
                self.listed_once[index] = true;
                if !self.listed_once.iter().all(|&done| done) {
                    return vec![];
                }
                let mut out = vec![Event::InitDone];
                out.extend(self.held.take().unwrap_or_default());
                out
            }
            change @ (Event::Apply(_) | Event::Delete(_)) => match &mut self.held {
                Some(held) => {
                    held.push(change);
                    vec![]
                }
                None => vec![change],
            },
        }
    }

    /// Deletions of the objects of watch `index`'s namespace that the store holds and its
    /// relist (`listed`) no longer has.
    fn gone(&self, index: usize, listed: &HashSet<ObjectRef<K>>) -> Vec<Event<K>> {
        let namespace = self.namespaces[index].as_deref();
        self.store
            .state()
            .into_iter()
            .filter(|object| object.namespace().as_deref() == namespace)
            .filter(|object| !listed.contains(&ObjectRef::from(object.as_ref())))
            .map(|object| Event::Delete(object.as_ref().clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use kube::runtime::reflector;

    use super::*;

    fn config_map(namespace: &str, name: &str, value: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            data: Some([("v".to_owned(), value.to_owned())].into()),
            ..ConfigMap::default()
        }
    }

    /// The store after the union's `Init` and what it makes of `events` (watch index, event).
    fn store_after(events: Vec<(usize, Event<ConfigMap>)>) -> (Store<ConfigMap>, Vec<String>) {
        let (store, mut writer) = reflector::store();
        let namespaces = vec![Some("a".to_owned()), Some("b".to_owned())];
        let mut union = Union::new(namespaces, store.clone());
        writer.apply_watcher_event(&Event::Init);
        let mut said = Vec::new();
        for (index, event) in events {
            for out in union.next(index, event) {
                said.push(match &out {
                    Event::Apply(o) => format!("apply {}", o.name_any()),
                    Event::Delete(o) => format!("delete {}", o.name_any()),
                    Event::Init => "init".into(),
                    Event::InitApply(o) => format!("init-apply {}", o.name_any()),
                    Event::InitDone => "init-done".into(),
                });
                writer.apply_watcher_event(&out);
            }
        }
        (store, said)
    }

    fn contents(store: &Store<ConfigMap>) -> Vec<String> {
        let mut objects: Vec<String> = store
            .state()
            .iter()
            .map(|o| {
                format!(
                    "{}/{}={}",
                    o.namespace().unwrap(),
                    o.name_any(),
                    o.data.as_ref().unwrap()["v"]
                )
            })
            .collect();
        objects.sort();
        objects
    }

    #[test]
    fn the_first_list_ends_when_every_namespace_has_listed_and_keeps_changes_made_meanwhile() {
        let (store, said) = store_after(vec![
            (0, Event::Init),
            (0, Event::InitApply(config_map("a", "x", "1"))),
            (0, Event::InitDone),
            // a's change arrives while b still lists: the store would lose it at the swap.
            (0, Event::Apply(config_map("a", "x", "2"))),
            (1, Event::Init),
            (1, Event::InitApply(config_map("b", "y", "1"))),
        ]);
        assert!(
            contents(&store).is_empty(),
            "not listed until b has: {said:?}"
        );
        assert_eq!(said, ["init-apply x", "init-apply y"]);

        let (store, said) = store_after(vec![
            (0, Event::Init),
            (0, Event::InitApply(config_map("a", "x", "1"))),
            (0, Event::InitDone),
            (0, Event::Apply(config_map("a", "x", "2"))),
            (1, Event::Init),
            (1, Event::InitApply(config_map("b", "y", "1"))),
            (1, Event::InitDone),
        ]);
        assert_eq!(
            said,
            ["init-apply x", "init-apply y", "init-done", "apply x"]
        );
        assert_eq!(contents(&store), ["a/x=2", "b/y=1"]);
    }

    #[test]
    fn a_relist_of_one_namespace_deletes_only_what_that_namespace_no_longer_has() {
        let (store, said) = store_after(vec![
            (0, Event::Init),
            (0, Event::InitApply(config_map("a", "x", "1"))),
            (0, Event::InitDone),
            (1, Event::Init),
            (1, Event::InitApply(config_map("b", "y", "1"))),
            (1, Event::InitApply(config_map("b", "z", "1"))),
            (1, Event::InitDone),
            // b's watch expired; y went meanwhile and z changed. a is not touched.
            (1, Event::Init),
            (1, Event::InitApply(config_map("b", "z", "2"))),
            (1, Event::InitDone),
            (0, Event::Delete(config_map("a", "gone-already", "1"))),
        ]);
        assert_eq!(
            said[4..],
            ["apply z", "delete y", "delete gone-already"],
            "{said:?}"
        );
        assert_eq!(contents(&store), ["a/x=1", "b/z=2"]);
    }

    #[test]
    fn namespace_lists_are_parsed_and_refused_with_the_reason() {
        assert_eq!("".parse::<Namespaces>(), Ok(Namespaces::All));
        assert_eq!(" , ".parse::<Namespaces>(), Ok(Namespaces::All));
        assert_eq!(
            "team-b, team-a,team-b".parse::<Namespaces>(),
            Ok(Namespaces::Only(["team-a".into(), "team-b".into()].into()))
        );
        assert_eq!(Namespaces::only(["b", "a"]).to_string(), "a,b");
        let error = "team-a,Team_B".parse::<Namespaces>().unwrap_err();
        assert!(
            error.contains("\"Team_B\" is not a namespace name"),
            "{error}"
        );
        assert!(error.contains("e.g. `team-a,team-b`"), "{error}");
        assert!(Namespaces::only(["a"]).contains("a"));
        assert!(!Namespaces::only(["a"]).contains("b"));
        assert!(Namespaces::All.contains("b"));
    }
}
