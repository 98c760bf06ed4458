// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! Watches Pods (v1) and logs every add, update and delete as `namespace/name`, like the
//! informer of tgik-007 with its `onAdd`/`onUpdate`/`onDelete` handlers.
//!
//! A kube-runtime `Controller` cannot tell an add from an update from a delete (its reconcile
//! only gets "this object may have changed"), so this is not a Controller: it runs a
//! [`watcher`] and keeps a [`reflector`] store, and [`PodEvents`] compares each event with
//! the store before applying it. Readiness is reported once the initial list is cached.

use std::collections::HashSet;

use futures::{StreamExt, pin_mut};
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use rkb_runtime::Rbac;
use rkb_runtime::cache::{Namespaces, Scoped};
use rkb_runtime::manager::Context;

/// The pod watcher's permissions: it only lists and watches Pods (no `get`: it never asks
/// for a single Pod). `make manifests` turns this into config/rbac/role.yaml.
#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [list, watch])]
pub struct PodWatcher;

/// What one watch event meant, for the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A Pod the cache did not have (`onAdd`), with its `namespace/name`.
    Added(String),
    /// A Pod the cache had, with a new resourceVersion (`onUpdate`).
    Updated(String),
    /// A Pod that is gone (`onDelete`), also when the deletion was missed during a re-list.
    Deleted(String),
    /// The initial list is cached: the watcher is ready ("caches are synced").
    Synced,
}

impl Change {
    /// Logs the change like the informer's handlers.
    pub fn log(&self) {
        match self {
            Change::Added(pod) => tracing::info!(pod = %pod, "onAdd: {pod}"),
            Change::Updated(pod) => tracing::info!(pod = %pod, "onUpdate: {pod}"),
            Change::Deleted(pod) => tracing::info!(pod = %pod, "onDelete: {pod}"),
            Change::Synced => tracing::info!("caches are synced"),
        }
    }
}

/// Turns watch events into [`Change`]s, keeping the Pods seen so far in a reflector store.
///
/// Pure apart from the store it owns: tests feed it synthetic events.
#[derive(Default)]
pub struct PodEvents {
    writer: reflector::store::Writer<Pod>,
    /// The Pods listed since the last `Init`, while a (re-)list is in progress.
    listing: Option<HashSet<ObjectRef<Pod>>>,
    synced: bool,
}

impl PodEvents {
    /// A read handle on the cache (e.g. for an `rkb_runtime::Lister`).
    pub fn store(&self) -> Store<Pod> {
        self.writer.as_reader()
    }

    /// What `event` changed, compared with the cache; then applies it to the cache.
    pub fn handle(&mut self, event: watcher::Event<Pod>) -> Vec<Change> {
        let store = self.writer.as_reader();
        let mut changes = Vec::new();
        match &event {
            watcher::Event::Init => self.listing = Some(HashSet::new()),
            watcher::Event::InitApply(pod) | watcher::Event::Apply(pod) => {
                let key = ObjectRef::from(pod);
                changes.extend(Self::compare(store.get(&key).as_deref(), pod));
                if let (watcher::Event::InitApply(_), Some(listing)) = (&event, &mut self.listing) {
                    listing.insert(key);
                }
            }
            watcher::Event::Delete(pod) => changes.push(Change::Deleted(key_of(pod))),
            watcher::Event::InitDone => {
                // After a desync the re-list replaces the cache: what it no longer has was
                // deleted while the watch was down.
                let listed = self.listing.take().unwrap_or_default();
                let mut gone: Vec<String> = store
                    .state()
                    .iter()
                    .filter(|pod| !listed.contains(&ObjectRef::from(pod.as_ref())))
                    .map(|pod| key_of(pod))
                    .collect();
                gone.sort();
                changes.extend(gone.into_iter().map(Change::Deleted));
                if !self.synced {
                    self.synced = true;
                    changes.push(Change::Synced);
                }
            }
        }
        self.writer.apply_watcher_event(&event);
        changes
    }

    fn compare(cached: Option<&Pod>, pod: &Pod) -> Option<Change> {
        match cached {
            None => Some(Change::Added(key_of(pod))),
            // A periodic re-list or a no-op resync delivers the same version again.
            Some(old) if old.resource_version() == pod.resource_version() => None,
            Some(_) => Some(Change::Updated(key_of(pod))),
        }
    }
}

/// `namespace/name`, as the informer's `cache.MetaNamespaceKeyFunc`.
fn key_of(pod: &Pod) -> String {
    format!("{}/{}", pod.namespace().unwrap_or_default(), pod.name_any())
}

/// Runs the pod watcher until the manager shuts down: logs every change, and marks the
/// runnable ready once the initial list is cached.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    run_with(ctx, watcher::Config::default(), Change::log).await
}

/// [`run`] with the watcher's configuration and what is done with each change chosen by the
/// caller (the tests shorten the watch timeout and collect the changes).
pub async fn run_with(
    ctx: Context,
    config: watcher::Config,
    mut on_change: impl FnMut(&Change) + Send,
) -> anyhow::Result<()> {
    // One watch, as the informer this follows: of every namespace, or of the one that
    // --watch-namespace names.
    let pods = match ctx.namespaces() {
        Namespaces::All => Api::<Pod>::all(ctx.client()),
        Namespaces::Only(names) => match Vec::from_iter(names) {
            one if one.len() == 1 => Api::namespaced(ctx.client(), one[0]),
            several => anyhow::bail!(
                "the pod watcher keeps one watch, of all namespaces or of one, and \
                 --watch-namespace names {}: give it one namespace, or none for all",
                several.len()
            ),
        },
    };
    // Fail fast with a hint rather than a watch that retries forever.
    Scoped::from(pods.clone())
        .check_listable("pods", "is the manager allowed to?")
        .await?;
    // The source's lines, in its order: "waiting for cache sync", "caches are synced",
    // "waiting for stop signal", "received stop signal".
    tracing::info!("waiting for cache sync");
    let events = watcher(pods, config).default_backoff();
    pin_mut!(events);
    let mut handler = PodEvents::default();
    loop {
        tokio::select! {
            biased;
            () = ctx.shutdown().cancelled() => {
                tracing::info!("received stop signal");
                return Ok(());
            }
            event = events.next() => match event {
                Some(Ok(event)) => {
                    for change in handler.handle(event) {
                        on_change(&change);
                        if change == Change::Synced {
                            ctx.set_ready();
                            tracing::info!("waiting for stop signal");
                        }
                    }
                }
                // The watcher retries with backoff; typically RBAC or a network error.
                Some(Err(error)) => tracing::warn!(%error, "watch failed"),
                None => return Ok(()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use clap::Parser;
    use k8s_openapi::api::authorization::v1::{
        ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
    };
    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kube::Client;
    use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
    use rkb_runtime::manager::{self, Manager, Runnable};
    use rkb_runtime::testing::envtest::{self, Environment};
    use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
    use tokio::sync::mpsc;
    use tokio::task::JoinHandle;
    use tokio_util::sync::CancellationToken;

    use super::*;

    fn pod(namespace: &str, name: &str, version: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                resource_version: Some(version.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn added(key: &str) -> Change {
        Change::Added(key.into())
    }

    #[test]
    fn the_initial_list_is_reported_as_adds_then_cache_synced() {
        let mut events = PodEvents::default();
        assert_eq!(events.handle(watcher::Event::Init), vec![]);
        assert_eq!(
            events.handle(watcher::Event::InitApply(pod("default", "web", "1"))),
            vec![added("default/web")]
        );
        assert_eq!(
            events.handle(watcher::Event::InitApply(pod("kube-system", "dns", "2"))),
            vec![added("kube-system/dns")]
        );
        assert_eq!(
            events.store().len(),
            0,
            "the cache swaps in the list at InitDone"
        );
        assert_eq!(
            events.handle(watcher::Event::InitDone),
            vec![Change::Synced]
        );
        assert_eq!(events.store().len(), 2);
    }

    #[test]
    fn adds_updates_resyncs_and_deletes_are_told_apart() {
        let mut events = PodEvents::default();
        events.handle(watcher::Event::Init);
        events.handle(watcher::Event::InitDone);

        let apply = |p| watcher::Event::Apply(p);
        assert_eq!(
            events.handle(apply(pod("default", "web", "1"))),
            vec![added("default/web")]
        );
        assert_eq!(
            events.handle(apply(pod("default", "web", "2"))),
            vec![Change::Updated("default/web".into())]
        );
        assert_eq!(
            events.handle(apply(pod("default", "web", "2"))),
            vec![],
            "the same resourceVersion again is a no-op resync"
        );
        assert_eq!(
            events.handle(watcher::Event::Delete(pod("default", "web", "3"))),
            vec![Change::Deleted("default/web".into())]
        );
        assert!(events.store().is_empty());
        assert_eq!(
            events.handle(apply(pod("default", "web", "4"))),
            vec![added("default/web")],
            "a Pod re-created under the same name is an add"
        );
    }

    #[test]
    fn a_relist_after_a_desync_reports_only_what_changed_meanwhile() {
        let mut events = PodEvents::default();
        events.handle(watcher::Event::Init);
        for p in [
            pod("a", "kept", "1"),
            pod("a", "changed", "1"),
            pod("b", "gone", "1"),
        ] {
            events.handle(watcher::Event::InitApply(p));
        }
        assert_eq!(
            events.handle(watcher::Event::InitDone),
            vec![Change::Synced]
        );

        // The watch expired (410 Gone): the watcher lists again.
        assert_eq!(events.handle(watcher::Event::Init), vec![]);
        let relisted = [
            pod("a", "kept", "1"),
            pod("a", "changed", "5"),
            pod("c", "new", "6"),
        ];
        let changes: Vec<Change> = relisted
            .into_iter()
            .flat_map(|p| events.handle(watcher::Event::InitApply(p)))
            .collect();
        assert_eq!(
            changes,
            vec![Change::Updated("a/changed".into()), added("c/new")]
        );
        assert_eq!(
            events.handle(watcher::Event::InitDone),
            vec![Change::Deleted("b/gone".into())],
            "a Pod deleted while the watch was down is a delete, and `caches are synced` is said once"
        );
        let mut cached: Vec<String> = events.store().state().iter().map(|p| key_of(p)).collect();
        cached.sort();
        assert_eq!(cached, ["a/changed", "a/kept", "c/new"]);
    }

    /// How long a test waits for the watcher to act (generous: a loaded CI machine).
    const WAIT: Duration = Duration::from_secs(60);

    fn manager_args() -> manager::Args {
        // No probe or metrics servers: readiness is read from the manager directly.
        manager::Args::parse_from(["pod-watcher", "--health-probe-bind-address=0"])
    }

    /// The real API server shared by this binary's tests, and a namespace of the test's own.
    /// envtest has no kubelet and no scheduler: the Pods below are objects only, they are
    /// never scheduled or run, so none of the `onUpdate` lines a kubelet causes (Pending →
    /// Running, the graceful deletion) appear; an unscheduled Pod is deleted at once.
    async fn api_server() -> (&'static Environment, String) {
        let env = envtest::shared().await;
        let namespace = env.create_namespace().await.unwrap();
        (env, namespace)
    }

    fn new_pod(namespace: &str, name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "kuard".into(),
                    image: Some("gcr.io/kuar-demo/kuard-amd64:blue".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    async fn create_pod(env: &Environment, namespace: &str, name: &str) {
        Api::<Pod>::namespaced(env.client(), namespace)
            .create(&PostParams::default(), &new_pod(namespace, name))
            .await
            .unwrap();
    }

    async fn label_pod(env: &Environment, namespace: &str, name: &str, value: &str) {
        let patch = serde_json::json!({ "metadata": { "labels": { "edited": value } } });
        Api::<Pod>::namespaced(env.client(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }

    async fn delete_pod(env: &Environment, namespace: &str, name: &str) {
        Api::<Pod>::namespaced(env.client(), namespace)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }

    /// The pod watcher running in a real [`Manager`] as `client`, with its changes collected.
    struct Watching {
        changes: mpsc::UnboundedReceiver<Change>,
        shutdown: CancellationToken,
        running: JoinHandle<anyhow::Result<()>>,
        readiness: rkb_runtime::manager::Readiness,
    }

    fn start(client: Client, config: watcher::Config) -> Watching {
        let (sender, changes) = mpsc::unbounded_channel();
        let manager = Manager::new("pod-watcher", client, manager_args());
        let readiness = manager.readiness().clone();
        let shutdown = manager.shutdown_token();
        let runnable = Runnable::new("pod", move |ctx| {
            let sender = sender.clone();
            run_with(ctx, config.clone(), move |change| {
                change.log();
                let _ = sender.send(change.clone());
            })
        });
        let running = tokio::spawn(manager.run([runnable]));
        Watching {
            changes,
            shutdown,
            running,
            readiness,
        }
    }

    impl Watching {
        /// The next change of a Pod in `namespace` (the watch is cluster-wide and other
        /// tests share the API server), or `Synced`.
        async fn next_in(&mut self, namespace: &str) -> Change {
            let prefix = format!("{namespace}/");
            let wait = async {
                loop {
                    match self.changes.recv().await.expect("the watcher stopped") {
                        Change::Synced => return Change::Synced,
                        Change::Added(key) | Change::Updated(key) | Change::Deleted(key)
                            if !key.starts_with(&prefix) => {}
                        change => return change,
                    }
                }
            };
            tokio::time::timeout(WAIT, wait)
                .await
                .unwrap_or_else(|_| panic!("no change in {namespace} within {WAIT:?}"))
        }

        /// The changes in `namespace` up to and including `Synced`.
        async fn initial_list(&mut self, namespace: &str) -> Vec<Change> {
            let mut changes = Vec::new();
            loop {
                let change = self.next_in(namespace).await;
                let done = change == Change::Synced;
                changes.push(change);
                if done {
                    return changes;
                }
            }
        }

        /// Stops the manager as SIGTERM does; the watch loop must end and the manager exit cleanly.
        async fn stop(self) {
            self.shutdown.cancel();
            tokio::time::timeout(WAIT, self.running)
                .await
                .expect("the watch loop ends on shutdown")
                .unwrap()
                .expect("the manager stops cleanly");
        }
    }

    fn key(namespace: &str, name: &str) -> String {
        format!("{namespace}/{name}")
    }

    /// The source's demo on a real API server: the Pods that exist are reported as adds
    /// before `caches are synced` (and ready), then a new Pod, its update and its deletion.
    #[tokio::test]
    async fn real_pods_are_reported_as_added_updated_and_deleted() {
        let (env, ns) = api_server().await;
        create_pod(env, &ns, "web").await;
        let mut watching = start(env.client(), watcher::Config::default());
        assert_eq!(
            watching.initial_list(&ns).await,
            [Change::Added(key(&ns, "web")), Change::Synced]
        );
        assert!(
            watching.readiness.is_ready(),
            "ready once the cache is synced"
        );

        create_pod(env, &ns, "kuard").await;
        assert_eq!(
            watching.next_in(&ns).await,
            Change::Added(key(&ns, "kuard"))
        );
        label_pod(env, &ns, "kuard", "1").await;
        assert_eq!(
            watching.next_in(&ns).await,
            Change::Updated(key(&ns, "kuard"))
        );
        // As in the source's log: the API server first marks the Pod as deleting (an update
        // that sets deletionTimestamp), then removes it.
        delete_pod(env, &ns, "kuard").await;
        assert_eq!(
            watching.next_in(&ns).await,
            Change::Updated(key(&ns, "kuard"))
        );
        assert_eq!(
            watching.next_in(&ns).await,
            Change::Deleted(key(&ns, "kuard"))
        );
        watching.stop().await;
    }

    /// A namespace created while the watcher runs needs nothing from it: the watch is
    /// cluster-wide, so its Pods are reported like any other.
    #[tokio::test]
    async fn pods_of_a_namespace_created_while_running_are_reported() {
        let (env, ns) = api_server().await;
        let mut watching = start(env.client(), watcher::Config::default());
        assert_eq!(watching.initial_list(&ns).await, [Change::Synced]);
        let created = env.create_namespace().await.unwrap();
        create_pod(env, &created, "late").await;
        assert_eq!(
            watching.next_in(&created).await,
            Change::Added(key(&created, "late"))
        );
        watching.stop().await;
    }

    /// `client` with every watch request counted.
    fn counting_watches(client: Client, watches: Arc<AtomicUsize>) -> Client {
        let namespace = client.default_namespace().to_owned();
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let watching = request
                .uri()
                .query()
                .is_some_and(|q| q.split('&').any(|kv| kv == "watch=true"));
            if watching {
                watches.fetch_add(1, Ordering::SeqCst);
            }
            let client = client.clone();
            async move { client.send(request).await }
        });
        Client::new(service, namespace)
    }

    async fn until_watches(watches: &AtomicUsize, at_least: usize) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while watches.load(Ordering::SeqCst) < at_least {
            assert!(
                tokio::time::Instant::now() < deadline,
                "fewer than {at_least} watch requests within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// With a 1-second `timeoutSeconds` the API server closes the watch every second, and
    /// the watcher opens a new one from the last resourceVersion it saw: every change made
    /// around those closures is reported exactly once, and the Pods it already knows are
    /// not reported again. (kube-runtime's watcher re-lists only when a resumed watch is
    /// answered 410 Gone, which a healthy API server does not do within its watch cache's
    /// window; the re-list path is covered with synthetic events above.)
    #[tokio::test]
    async fn watches_closed_by_the_server_resume_without_losing_or_repeating_changes() {
        let (env, ns) = api_server().await;
        create_pod(env, &ns, "old").await;
        let watches = Arc::new(AtomicUsize::new(0));
        let client = counting_watches(env.client(), watches.clone());
        let mut watching = start(client, watcher::Config::default().timeout(1));
        assert_eq!(
            watching.initial_list(&ns).await,
            [Change::Added(key(&ns, "old")), Change::Synced]
        );
        // The server has closed the first watch at least twice over.
        until_watches(&watches, 3).await;
        create_pod(env, &ns, "new").await;
        delete_pod(env, &ns, "old").await;
        let seen = watches.load(Ordering::SeqCst);
        until_watches(&watches, seen + 2).await;
        label_pod(env, &ns, "new", "1").await;
        let mut changes = Vec::new();
        for _ in 0..4 {
            changes.push(watching.next_in(&ns).await);
        }
        assert_eq!(
            changes,
            [
                Change::Added(key(&ns, "new")),
                // A deletion is an update (deletionTimestamp set), then the delete.
                Change::Updated(key(&ns, "old")),
                Change::Deleted(key(&ns, "old")),
                Change::Updated(key(&ns, "new")),
            ]
        );
        // A last change, after more closures, is the next thing reported: nothing was
        // repeated in between.
        let seen = watches.load(Ordering::SeqCst);
        until_watches(&watches, seen + 2).await;
        delete_pod(env, &ns, "new").await;
        assert_eq!(
            watching.next_in(&ns).await,
            Change::Updated(key(&ns, "new"))
        );
        assert_eq!(
            watching.next_in(&ns).await,
            Change::Deleted(key(&ns, "new"))
        );
        watching.stop().await;
    }

    /// Faults between the watcher and the real API server: failed and hanging watch
    /// requests are retried with backoff, and no change is lost; every request made is one
    /// config/rbac/role.yaml allows, and the role has nothing more.
    #[tokio::test]
    async fn failed_watches_are_retried_and_every_request_is_in_the_role() {
        let (env, ns) = api_server().await;
        let audit = RbacAudit::default();
        let faults = Faults::default()
            .fail(
                Fault::server_error()
                    .on_verb("watch")
                    .on_resource("pods")
                    .times(2),
            )
            .fail(
                Fault::timeout(Duration::from_millis(200))
                    .on_verb("watch")
                    .on_resource("pods"),
            );
        let client = testing::wrap(env.client(), &audit, &faults);
        create_pod(env, &ns, "web").await;
        let mut watching = start(client, watcher::Config::default());
        assert_eq!(
            watching.initial_list(&ns).await,
            [Change::Added(key(&ns, "web")), Change::Synced]
        );
        create_pod(env, &ns, "next").await;
        assert_eq!(watching.next_in(&ns).await, Change::Added(key(&ns, "next")));
        assert_eq!(faults.injected().len(), 3, "{:?}", faults.injected());
        watching.stop().await;
        audit
            .check_role_file(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/config/rbac/role.yaml"
            ))
            .unwrap();
    }

    /// The watcher runs as the operator's ServiceAccount with config/rbac applied
    /// (`config/default`, as `make deploy` would), so the API server's authorizer judges
    /// its list and watch.
    #[tokio::test]
    async fn the_operator_service_account_may_list_and_watch_pods() {
        let (env, ns) = api_server().await;
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
        let operator = env.operator_client(&config).await.unwrap();
        create_pod(env, &ns, "web").await;
        let mut watching = start(operator, watcher::Config::default());
        assert_eq!(
            watching.initial_list(&ns).await,
            [Change::Added(key(&ns, "web")), Change::Synced]
        );
        create_pod(env, &ns, "next").await;
        assert_eq!(watching.next_in(&ns).await, Change::Added(key(&ns, "next")));
        watching.stop().await;
    }

    /// The generated role without `list` on pods, bound to a ServiceAccount of the test's
    /// own (the shared role stays intact for the other tests): the manager fails at start
    /// with the API server's 403.
    #[tokio::test]
    async fn without_its_list_rule_the_watcher_is_refused_with_a_403() {
        let (env, ns) = api_server().await;
        let operator = client_without_verb(env, &ns, "pods", "list", "watch").await;
        let watching = start(operator, watcher::Config::default());
        let error = tokio::time::timeout(WAIT, watching.running)
            .await
            .expect("the manager stops")
            .unwrap()
            .expect_err("the manager fails without list on pods");
        let error = format!("{error:#}");
        assert!(error.contains("cannot list pods"), "{error}");
        assert!(
            error.contains("403") || error.contains("forbidden"),
            "{error}"
        );
    }

    /// A client acting as a new ServiceAccount in `namespace`, bound to a copy of
    /// config/rbac/role.yaml whose rule on `resource` lacks `verb`, once the authorizer
    /// lets it `allowed` that resource (so a 403 later is the missing rule, not a binding
    /// not yet seen).
    async fn client_without_verb(
        env: &Environment,
        namespace: &str,
        resource: &str,
        verb: &str,
        allowed: &str,
    ) -> Client {
        let role_yaml = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/rbac/role.yaml"
        ))
        .unwrap();
        let [object] = envtest::parse_yaml(&role_yaml).unwrap().try_into().unwrap();
        let mut role: ClusterRole =
            serde_json::from_value(serde_json::to_value(object).unwrap()).unwrap();
        let name = format!("{namespace}-without-{verb}-{resource}");
        role.metadata = ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        };
        let mut removed = false;
        for rule in role.rules.iter_mut().flatten() {
            if rule.resources.iter().flatten().any(|r| r == resource) {
                rule.verbs.retain(|v| v != verb);
                removed = true;
            }
        }
        assert!(removed, "role.yaml has a rule on {resource}");
        let account = "operator";
        let binding = ClusterRoleBinding {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..Default::default()
            },
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: "ClusterRole".into(),
                name,
            },
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".into(),
                name: account.into(),
                namespace: Some(namespace.into()),
                ..Default::default()
            }]),
        };
        let client = env.client();
        Api::<ClusterRole>::all(client.clone())
            .create(&PostParams::default(), &role)
            .await
            .unwrap();
        Api::<ClusterRoleBinding>::all(client.clone())
            .create(&PostParams::default(), &binding)
            .await
            .unwrap();
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(format!("system:serviceaccount:{namespace}:{account}")),
                resource_attributes: Some(ResourceAttributes {
                    resource: Some(resource.into()),
                    verb: Some(allowed.into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviews = Api::<SubjectAccessReview>::all(client);
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let answer = reviews
                .create(&PostParams::default(), &review)
                .await
                .unwrap();
            if answer.status.is_some_and(|s| s.allowed) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the authorizer did not see the binding within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        env.service_account_client(namespace, account)
            .await
            .unwrap()
    }

    #[test]
    fn rbac_is_list_and_watch_on_pods_only() {
        let audit = RbacAudit::default();
        audit.watches("", "pods");
        let mut role = String::from(
            "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata: {name: r}\nrules:\n",
        );
        role.push_str("- apiGroups: ['']\n  resources: [pods]\n  verbs: [get, list, watch]\n");
        let report = audit.check_role_yaml(&role).unwrap_err().to_string();
        assert!(
            report.contains("excessive rule: the role allows `get core/pods`"),
            "the scaffold's `get` is not needed: {report}"
        );
        let rules = PodWatcher::rbac_rules();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].verbs, ["list", "watch"]);
    }
}
