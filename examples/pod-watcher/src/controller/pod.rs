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

use anyhow::Context as _;
use futures::{StreamExt, pin_mut};
use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use rkb_runtime::Rbac;
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
    /// The initial list is cached: the watcher is ready.
    Synced,
}

impl Change {
    /// Logs the change like the informer's handlers.
    pub fn log(&self) {
        match self {
            Change::Added(pod) => tracing::info!(pod = %pod, "onAdd: {pod}"),
            Change::Updated(pod) => tracing::info!(pod = %pod, "onUpdate: {pod}"),
            Change::Deleted(pod) => tracing::info!(pod = %pod, "onDelete: {pod}"),
            Change::Synced => tracing::info!("cache synced"),
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
    let pods = Api::<Pod>::all(ctx.client());
    // Fail fast with a hint rather than a watch that retries forever.
    pods.list(&ListParams::default().limit(1))
        .await
        .context("cannot list pods: is the manager allowed to?")?;
    watch(pods, &ctx).await;
    Ok(())
}

/// The watch loop; it ends when the manager's shutdown token is cancelled.
async fn watch(pods: Api<Pod>, ctx: &Context) {
    let events = watcher(pods, watcher::Config::default()).default_backoff();
    pin_mut!(events);
    let mut handler = PodEvents::default();
    loop {
        tokio::select! {
            biased;
            () = ctx.shutdown().cancelled() => {
                tracing::info!("shutting down: pod watcher stopped");
                return;
            }
            event = events.next() => match event {
                Some(Ok(event)) => {
                    for change in handler.handle(event) {
                        change.log();
                        if change == Change::Synced {
                            ctx.set_ready();
                        }
                    }
                }
                // The watcher retries with backoff; typically RBAC or a network error.
                Some(Err(error)) => tracing::warn!(%error, "watch failed"),
                None => return,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kube::Client;
    use kube_fake_client::ClientBuilder;
    use rkb_runtime::manager::{self, Manager, Runnable};
    use rkb_runtime::testing::{self, Faults, RbacAudit};

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
            "a Pod deleted while the watch was down is a delete, and cache synced is said once"
        );
        let mut cached: Vec<String> = events.store().state().iter().map(|p| key_of(p)).collect();
        cached.sort();
        assert_eq!(cached, ["a/changed", "a/kept", "c/new"]);
    }

    async fn fake_client(pods: &[Pod]) -> Client {
        let mut builder = ClientBuilder::new();
        for p in pods {
            let mut p = p.clone();
            p.metadata.resource_version = None;
            builder = builder.with_object(p);
        }
        builder.build().await.expect("the in-memory API starts")
    }

    fn manager_args() -> manager::Args {
        // No probe or metrics servers: readiness is read from the manager directly.
        manager::Args::parse_from(["pod-watcher", "--health-probe-bind-address=0"])
    }

    async fn eventually(what: &str, condition: impl Fn() -> bool) {
        for _ in 0..100 {
            if condition() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("timed out waiting until {what}");
    }

    /// Through the manager: ready once the initial list is cached, and the watch loop ends
    /// on shutdown (what SIGTERM does). The in-memory API cannot watch, so after the list
    /// the watcher keeps retrying with backoff until shutdown.
    #[tokio::test]
    async fn the_watcher_gets_ready_after_the_initial_list_and_stops_on_shutdown() {
        let audit = RbacAudit::default();
        let client = testing::wrap(
            fake_client(&[pod("default", "web", "1")]).await,
            &audit,
            &Faults::default(),
        );
        let manager = Manager::new("pod-watcher", client, manager_args());
        let readiness = manager.readiness().clone();
        let shutdown = manager.shutdown_token();
        let running = tokio::spawn(manager.run([Runnable::new("pod", run)]));
        eventually("the cache is synced", || readiness.is_ready()).await;
        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), running)
            .await
            .expect("the watch loop ends on shutdown")
            .unwrap()
            .expect("the manager stops cleanly");

        // Least privilege: the watcher lists and watches pods, and nothing else.
        audit.watches("", "pods");
        audit
            .check_role_file(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/config/rbac/role.yaml"
            ))
            .unwrap();
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
