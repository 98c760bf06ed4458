//! Tests of the Secret controller against a real kube-apiserver and etcd (envtest): the
//! real Controller (watches of sources, namespaces and copies), server-side apply, the
//! finalizer holding a deletion, Events, RBAC by the real authorizer, and injected faults
//! layered on the real client.
//!
//! The control plane is shared by the tests of this binary, so each test has a source
//! namespace of its own and a label that only its target namespaces carry
//! (`--namespace-selector`): the tests cannot see each other's copies. One test runs on a
//! control plane with kube-controller-manager, where a deleted namespace really goes away
//! (its namespace controller empties it) while secret-sync runs; the others run where
//! namespaces never finish deleting and nothing is garbage-collected.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, Client, ResourceExt};
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::{self, Fault, FaultKind, Faults, RbacAudit};
use tokio::sync::mpsc;

use super::*;

const PASSWORD: &str = "s3cr3t-hunter2-value";
/// How long a test waits for the controller (generous: a loaded CI machine).
const WAIT: Duration = Duration::from_secs(60);
/// The label that marks the target namespaces of one test.
const TEST_LABEL: &str = "secretsync-test";

/// One test's corner of the shared API server: its source namespace and its targets, and
/// the caches of watches on them for the reconciles the tests call directly.
struct Fixture {
    env: &'static Environment,
    settings: Settings,
    caches: Caches,
}

impl Fixture {
    /// A fresh source namespace and `targets` target namespaces (`<source>-t0`, ...).
    async fn new(targets: usize) -> Self {
        Self::on(envtest::shared().await, targets).await
    }

    async fn on(env: &'static Environment, targets: usize) -> Self {
        let source_namespace = env.create_namespace().await.unwrap();
        let settings = Settings {
            namespace_selector: Some(format!("{TEST_LABEL}={source_namespace}")),
            source_namespace,
            blocklist: Default::default(),
        };
        let (caches, filling) = Caches::reflect(&env.client(), &settings, Default::default());
        tokio::spawn(filling);
        let fixture = Self {
            env,
            settings,
            caches,
        };
        for i in 0..targets {
            fixture.create_target(&format!("t{i}")).await;
        }
        fixture
    }

    fn source_namespace(&self) -> &str {
        &self.settings.source_namespace
    }

    fn target(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.source_namespace())
    }

    /// A namespace with this test's label: a target.
    async fn create_target(&self, suffix: &str) -> String {
        let name = self.target(suffix);
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some([(TEST_LABEL.into(), self.source_namespace().into())].into()),
                ..Default::default()
            },
            ..Default::default()
        };
        Api::<Namespace>::all(self.env.client())
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap();
        // As for a reconcile its event triggers: the namespace is in the watch's store.
        self.until_cached(&self.caches.namespaces, "", &name).await;
        name
    }

    /// Waits until `cache` holds `namespace/name`, as it does when the event of that object
    /// triggers a reconcile (direct reconciles have no such trigger).
    async fn until_cached<K: rkb_runtime::client::Object>(
        &self,
        cache: &Lister<K>,
        namespace: &str,
        name: &str,
    ) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while cache.get(namespace, name).is_none() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{namespace}/{name} not cached within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn client(&self) -> Client {
        self.env.client()
    }

    fn reconciler(&self, client: Client) -> Arc<SecretReconciler> {
        Arc::new(SecretReconciler::new(
            client,
            self.settings.clone(),
            self.caches.clone(),
        ))
    }

    fn sources(&self) -> Api<Secret> {
        Api::namespaced(self.client(), self.source_namespace())
    }

    async fn create_source(&self, name: &str, pairs: &[(&str, &str)]) -> Secret {
        let source = secret(self.source_namespace(), name, SECRET_TYPE, pairs);
        self.sources()
            .create(&PostParams::default(), &source)
            .await
            .unwrap()
    }

    async fn create_secret(&self, secret: &Secret) {
        Api::<Secret>::namespaced(self.client(), &secret.namespace().unwrap())
            .create(&PostParams::default(), secret)
            .await
            .unwrap();
    }

    /// `namespace -> Secret` of every Secret named `name` in this test's other namespaces.
    async fn copies(&self, name: &str) -> BTreeMap<String, Secret> {
        let prefix = format!("{}-", self.source_namespace());
        Api::<Secret>::all(self.client())
            .list(&ListParams::default().fields(&format!("metadata.name={name}")))
            .await
            .unwrap()
            .into_iter()
            .filter(|s| s.namespace().is_some_and(|ns| ns.starts_with(&prefix)))
            .map(|s| (s.namespace().unwrap(), s))
            .collect()
    }

    /// Waits until the copies of `name` satisfy `done`.
    async fn until_copies(
        &self,
        name: &str,
        what: &str,
        done: impl Fn(&BTreeMap<String, Secret>) -> bool,
    ) -> BTreeMap<String, Secret> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let copies = self.copies(name).await;
            if done(&copies) {
                return copies;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "not within {WAIT:?}: {what}; copies of {name}: {:?}",
                copies.keys().collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until the source `name` is gone (its finalizer removed).
    async fn until_source_gone(&self, name: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.sources().get_opt(name).await.unwrap().is_some() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the source {name} is still there after {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs the real Controller as `client` until the test ends; failed reconciles are
    /// reported on the returned channel.
    fn start_controller(
        &self,
        client: Client,
        base: watcher::Config,
    ) -> mpsc::UnboundedReceiver<String> {
        let (sender, failures) = mpsc::unbounded_channel();
        let (controller, caches) = controller(client.clone(), &self.settings, base);
        let reconciler = Arc::new(SecretReconciler::new(client, self.settings.clone(), caches));
        let running = controller
            .run(reconcile, error_policy, reconciler)
            .for_each(move |result| {
                if let Err(error) = result {
                    let error = match error {
                        kube::runtime::controller::Error::ReconcilerFailed(error, object) => {
                            format!("{object}: {error}")
                        }
                        other => other.to_string(),
                    };
                    eprintln!("controller: {error}");
                    let _ = sender.send(error);
                }
                async {}
            });
        tokio::spawn(running);
        failures
    }

    /// Reconciles the latest version of the source directly until a reconcile that found
    /// the finalizer in place (so it synced or cleaned up) succeeds, or the source is gone,
    /// and the Events those reconciles queued are sent. Returns the number of failed
    /// attempts.
    async fn converge(&self, ctx: &Arc<SecretReconciler>, name: &str) -> usize {
        let mut failures = 0;
        for _ in 0..50 {
            let Some(object) = self.sources().get_opt(name).await.unwrap() else {
                ctx.events.flush().await;
                return failures;
            };
            let had_finalizer = object.finalizers().iter().any(|f| f == FINALIZER);
            match reconcile(Arc::new(object), ctx.clone()).await {
                Ok(_) if had_finalizer => {
                    ctx.events.flush().await;
                    return failures;
                }
                Ok(_) => {}
                Err(error) => {
                    eprintln!("reconcile failed: {error}");
                    failures += 1;
                }
            }
        }
        panic!("{name} did not converge within 50 reconciles");
    }

    /// `kubectl delete` of a source: the API server only marks it (the finalizer holds it),
    /// then direct reconciles of the marked version clean up until it is gone.
    async fn delete_source(&self, ctx: &Arc<SecretReconciler>, name: &str) -> usize {
        self.sources()
            .delete(name, &Default::default())
            .await
            .unwrap();
        self.converge(ctx, name).await
    }
}

/// Waits for the reconciles that a source's creation triggers (its finalizer patch, its new
/// copies) to finish, so that a change made next is repaired only if the watch under test
/// delivers it, not by one of those reconciles running late.
async fn settle() {
    tokio::time::sleep(Duration::from_secs(2)).await;
}

fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, ByteString> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
        .collect()
}

fn secret(namespace: &str, name: &str, type_: &str, pairs: &[(&str, &str)]) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some([("team".to_owned(), "db".to_owned())].into()),
            ..Default::default()
        },
        type_: Some(type_.into()),
        data: Some(data(pairs)),
        ..Default::default()
    }
}

fn value(secret: &Secret, key: &str) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()[key].0.clone()).unwrap()
}

fn keys(copies: &BTreeMap<String, Secret>) -> Vec<&str> {
    copies.keys().map(String::as_str).collect()
}

/// The source's demo, on a real API server through the real Controller: copies into every
/// target namespace but the blocklisted one and the source's own, with the data, type and
/// labels and no server-owned metadata, written by server-side apply as `secret-sync`.
#[tokio::test]
async fn sources_are_copied_into_every_namespace_but_the_blocklist_and_the_source() {
    let mut fx = Fixture::new(3).await;
    fx.settings.blocklist.insert(fx.target("t2"));
    let _failures = fx.start_controller(fx.client(), watcher::Config::default());
    fx.create_source("db", &[("password", PASSWORD)]).await;

    let (t0, t1) = (fx.target("t0"), fx.target("t1"));
    let copies = fx
        .until_copies("db", "copies in t0 and t1", |c| c.len() == 2)
        .await;
    assert_eq!(keys(&copies), [t0.as_str(), t1.as_str()]);
    let source = fx.sources().get("db").await.unwrap();
    assert_eq!(source.finalizers(), [FINALIZER]);
    for copy in copies.values() {
        assert_eq!(value(copy, "password"), PASSWORD);
        assert_eq!(copy.type_.as_deref(), Some(SECRET_TYPE));
        let labels = copy.labels();
        assert_eq!(labels["team"], "db", "the source's labels are copied");
        assert_eq!(labels[MANAGED_BY.0], MANAGED_BY.1);
        assert_eq!(labels[SOURCE_NAMESPACE_LABEL], fx.source_namespace());
        assert_eq!(labels[SOURCE_NAME_LABEL], "db");
        assert!(copy.owner_references().is_empty());
        assert!(
            copy.finalizers().is_empty(),
            "only the source has the finalizer"
        );
        assert_ne!(copy.uid(), source.uid(), "copies are new objects");
        let managers: Vec<(&str, &str)> = copy
            .managed_fields()
            .iter()
            .map(|m| {
                (
                    m.manager.as_deref().unwrap_or_default(),
                    m.operation.as_deref().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(managers, [(FIELD_MANAGER, "Apply")], "server-side applied");
    }

    // Another reconcile with nothing changed writes nothing (same resourceVersions).
    let ctx = fx.reconciler(fx.client());
    reconcile(Arc::new(source), ctx).await.unwrap();
    let again = fx.copies("db").await;
    for (namespace, copy) in &copies {
        assert_eq!(again[namespace].resource_version(), copy.resource_version());
    }
}

#[test]
fn copies_carry_no_server_owned_metadata() {
    let mut source = secret(
        SOURCE_NAMESPACE,
        "db",
        SECRET_TYPE,
        &[("password", PASSWORD)],
    );
    source.metadata.resource_version = Some("42".into());
    source.metadata.uid = Some("a-uid".into());
    source.metadata.finalizers = Some(vec![FINALIZER.into()]);
    source.metadata.owner_references = Some(vec![Default::default()]);
    source.metadata.managed_fields = Some(vec![Default::default()]);
    let copy = copy_of(&source, "team-a");
    assert_eq!(copy.metadata.namespace.as_deref(), Some("team-a"));
    assert_eq!(copy.metadata.resource_version, None);
    assert_eq!(copy.metadata.uid, None);
    assert_eq!(copy.metadata.finalizers, None);
    assert_eq!(copy.metadata.owner_references, None);
    assert_eq!(copy.metadata.managed_fields, None);
    assert_eq!(copy.data, source.data);
}

#[tokio::test]
async fn updates_of_the_source_reach_every_copy() {
    let fx = Fixture::new(2).await;
    let _failures = fx.start_controller(fx.client(), watcher::Config::default());
    fx.create_source("db", &[("password", "old")]).await;
    fx.until_copies("db", "two copies", |c| c.len() == 2).await;

    let patch = serde_json::json!({
        "metadata": { "labels": { "tier": "gold" } },
        "data": { "password": ByteString(b"new".to_vec()), "user": ByteString(b"admin".to_vec()) },
    });
    fx.sources()
        .patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    fx.until_copies("db", "the update in every copy", |copies| {
        copies.len() == 2
            && copies.values().all(|c| {
                c.data.as_ref().and_then(|d| d.get("user")).is_some()
                    && value(c, "password") == "new"
                    && c.labels().get("tier").is_some_and(|t| t == "gold")
            })
    })
    .await;
}

/// `kubectl delete` of a source: the real API server keeps it (only marked as deleting)
/// while the finalizer is there, here with no controller running; once the controller
/// runs it deletes the copies, then removes the finalizer, and the source is gone.
#[tokio::test]
async fn a_source_deleted_with_the_finalizer_is_held_until_its_copies_are_gone() {
    let fx = Fixture::new(2).await;
    let ctx = fx.reconciler(fx.client());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.create_source("cache", &[("token", "t")]).await;
    fx.converge(&ctx, "db").await;
    fx.converge(&ctx, "cache").await;
    assert_eq!(fx.copies("db").await.len(), 2);

    fx.sources()
        .delete("db", &Default::default())
        .await
        .unwrap();
    let held = fx
        .sources()
        .get("db")
        .await
        .expect("the finalizer holds the deletion");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert_eq!(held.finalizers(), [FINALIZER]);
    assert_eq!(
        fx.copies("db").await.len(),
        2,
        "nothing deleted the copies yet"
    );

    let _failures = fx.start_controller(fx.client(), watcher::Config::default());
    fx.until_source_gone("db").await;
    assert!(fx.copies("db").await.is_empty(), "the copies went first");
    assert_eq!(
        fx.copies("cache").await.len(),
        2,
        "other sources keep their copies"
    );
}

/// With kube-controller-manager running, a target namespace deleted under the running
/// controller really goes away, copy and all: secret-sync neither holds it (no finalizer on
/// copies) nor puts the copy back into it while it terminates; the other target keeps its
/// copy and still follows the source.
#[tokio::test]
async fn a_target_namespace_deleted_while_running_goes_away() {
    let fx = Fixture::on(envtest::shared_with_controller_manager().await, 2).await;
    let _failures = fx.start_controller(fx.client(), watcher::Config::default());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.until_copies("db", "both copies", |c| c.len() == 2).await;
    let (gone, kept) = (fx.target("t0"), fx.target("t1"));
    let namespaces = Api::<Namespace>::all(fx.client());
    namespaces.delete(&gone, &Default::default()).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    while namespaces.get_opt(&gone).await.unwrap().is_some() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the namespace {gone} is still there after {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let patch = serde_json::json!({ "stringData": { "password": "rotated" } });
    fx.sources()
        .patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let copies = fx
        .until_copies("db", "the kept copy rotated", |c| {
            c.get(&kept)
                .is_some_and(|copy| value(copy, "password") == "rotated")
        })
        .await;
    assert!(!copies.contains_key(&gone), "{:?}", copies.keys());
}

/// A namespace created while the controller runs gets the copies: the Namespace watch
/// triggers a reconcile, which reads the new namespace from that watch's store (updated
/// before the trigger).
#[tokio::test]
async fn a_namespace_created_while_running_gets_the_copies() {
    let fx = Fixture::new(1).await;
    let _failures = fx.start_controller(fx.client(), watcher::Config::default());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.until_copies("db", "the first copy", |c| c.len() == 1)
        .await;
    settle().await;
    let late = fx.create_target("late").await;
    let copies = fx
        .until_copies("db", "a copy in the new namespace", |c| {
            c.contains_key(&late)
        })
        .await;
    assert_eq!(value(&copies[&late], "password"), PASSWORD);
}

/// Copies are watched: one deleted by hand is put back, one edited by hand is restored
/// (server-side apply with force takes the fields back from `kubectl edit`'s manager).
#[tokio::test]
async fn copies_deleted_or_edited_by_hand_are_repaired() {
    let fx = Fixture::new(2).await;
    let _failures = fx.start_controller(fx.client(), watcher::Config::default());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.until_copies("db", "two copies", |c| c.len() == 2).await;
    let (t0, t1) = (fx.target("t0"), fx.target("t1"));
    settle().await;

    let deleted = Api::<Secret>::namespaced(fx.client(), &t0);
    deleted.delete("db", &Default::default()).await.unwrap();
    fx.until_copies("db", "the deleted copy back", |c| {
        c.get(&t0)
            .is_some_and(|copy| value(copy, "password") == PASSWORD)
    })
    .await;

    let edit = serde_json::json!({ "data": { "password": ByteString(b"changed".to_vec()) } });
    Api::<Secret>::namespaced(fx.client(), &t1)
        .patch("db", &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .unwrap();
    fx.until_copies("db", "the edited copy restored", |c| {
        c.get(&t1)
            .is_some_and(|copy| value(copy, "password") == PASSWORD)
    })
    .await;
}

/// Through the real Controller, the reconciler reads from its watches and writes only what
/// changes: a new source costs its finalizer and one apply per target namespace (and, where
/// the watch held no copy yet, a lookup of the name); changes that need no repair (a label
/// someone adds to a copy, an annotation on the source, a label on a target namespace)
/// reconcile without a single request.
#[tokio::test]
async fn a_converged_source_costs_the_api_server_nothing() {
    let fx = Fixture::new(2).await;
    let audit = RbacAudit::default();
    let audited = testing::wrap(fx.client(), &audit, &Faults::default());
    let (controller, caches) = controller(fx.client(), &fx.settings, Default::default());
    let reconciles = Arc::new(AtomicUsize::new(0));
    let counted = reconciles.clone();
    let counting = move |object, ctx| {
        counted.fetch_add(1, Ordering::SeqCst);
        reconcile(object, ctx)
    };
    let reconciler = Arc::new(SecretReconciler::new(audited, fx.settings.clone(), caches));
    tokio::spawn(
        controller
            .run(counting, error_policy, reconciler)
            .for_each(|_| async {}),
    );
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.until_copies("db", "two copies", |c| c.len() == 2).await;
    rkb_runtime::testing::controller::settled(|| reconciles.load(Ordering::SeqCst)).await;
    let requests = audit.requests();
    let writes: Vec<String> = requests
        .iter()
        .filter(|r| r.verb != "get")
        .map(|r| format!("{} {}", r.verb, r.resource))
        .collect();
    assert_eq!(
        writes,
        ["patch secrets", "patch secrets", "patch secrets"],
        "the finalizer and two copies, no list"
    );

    let sent = requests.len();
    let label = Patch::Merge(serde_json::json!({ "metadata": { "labels": { "seen": "yes" } } }));
    let before = reconciles.load(Ordering::SeqCst);
    Api::<Secret>::namespaced(fx.client(), &fx.target("t0"))
        .patch("db", &PatchParams::default(), &label)
        .await
        .unwrap();
    reconciled_without_a_request(&reconciles, before, &audit, sent, "a copy's label").await;
    let before = reconciles.load(Ordering::SeqCst);
    Api::<Namespace>::all(fx.client())
        .patch(&fx.target("t1"), &PatchParams::default(), &label)
        .await
        .unwrap();
    let what = "a target namespace's label";
    reconciled_without_a_request(&reconciles, before, &audit, sent, what).await;
    let before = reconciles.load(Ordering::SeqCst);
    let annotation = serde_json::json!({ "metadata": { "annotations": { "touched": "yes" } } });
    fx.sources()
        .patch("db", &PatchParams::default(), &Patch::Merge(&annotation))
        .await
        .unwrap();
    let what = "the source's annotation";
    reconciled_without_a_request(&reconciles, before, &audit, sent, what).await;
}

/// Waits for a reconcile after `before` reconciles, and until they settle; then `audit`
/// holds no request after the first `sent`.
async fn reconciled_without_a_request(
    reconciles: &AtomicUsize,
    before: usize,
    audit: &RbacAudit,
    sent: usize,
    after: &str,
) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while reconciles.load(Ordering::SeqCst) == before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no reconcile after {after}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    rkb_runtime::testing::controller::settled(|| reconciles.load(Ordering::SeqCst)).await;
    assert_eq!(audit.requests()[sent..], [], "no request after {after}");
}

#[tokio::test]
async fn secrets_of_other_types_are_ignored() {
    let fx = Fixture::new(1).await;
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let ctx = fx.reconciler(testing::wrap(fx.client(), &audit, &faults));
    let opaque = secret(fx.source_namespace(), "plain", "Opaque", &[("k", "v")]);
    fx.create_secret(&opaque).await;
    let stored = fx.sources().get("plain").await.unwrap();
    assert_eq!(
        reconcile(Arc::new(stored), ctx.clone()).await.unwrap(),
        Action::await_change()
    );
    assert!(fx.copies("plain").await.is_empty());
    assert!(
        fx.sources()
            .get("plain")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    );
    assert!(audit.accesses().is_empty(), "not a single request");
    // The secretsync type outside the source namespace is no source either.
    let elsewhere = secret(&fx.target("t0"), "db", SECRET_TYPE, &[("k", "v")]);
    assert!(!fx.settings.is_source(&elsewhere));
    reconcile(Arc::new(elsewhere), ctx).await.unwrap();
    assert!(audit.accesses().is_empty());
}

#[tokio::test]
async fn a_same_named_secret_not_managed_by_secret_sync_is_left_alone() {
    let fx = Fixture::new(2).await;
    let (t0, t1) = (fx.target("t0"), fx.target("t1"));
    fx.create_secret(&secret(&t0, "db", "Opaque", &[("password", "theirs")]))
        .await;
    let theirs = Api::<Secret>::namespaced(fx.client(), &t0)
        .get("db")
        .await
        .unwrap();
    let ctx = fx.reconciler(fx.client());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.converge(&ctx, "db").await;

    let copies = fx.copies("db").await;
    assert_eq!(
        copies[&t0].resource_version(),
        theirs.resource_version(),
        "not written to"
    );
    assert_eq!(value(&copies[&t1], "password"), PASSWORD);

    // ... and reported as a Warning Event on the source (events.k8s.io/v1).
    let events =
        Api::<k8s_openapi::api::events::v1::Event>::namespaced(fx.client(), fx.source_namespace())
            .list(&Default::default())
            .await
            .unwrap();
    let event = events
        .items
        .iter()
        .find(|e| e.reason.as_deref() == Some("TargetExists"))
        .unwrap_or_else(|| panic!("no TargetExists Event: {events:?}"));
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    let regarding = event.regarding.as_ref().unwrap();
    assert_eq!(
        (regarding.kind.as_deref(), regarding.name.as_deref()),
        (Some("Secret"), Some("db"))
    );

    // Deleting the source does not delete it either.
    fx.delete_source(&ctx, "db").await;
    assert_eq!(keys(&fx.copies("db").await), [t0.as_str()]);
}

#[tokio::test]
async fn copies_in_blocklisted_namespaces_are_removed() {
    let mut fx = Fixture::new(2).await;
    let blocked = fx.target("t1");
    fx.settings.blocklist.insert(blocked.clone());
    let stale = copy_of(
        &secret(
            fx.source_namespace(),
            "db",
            SECRET_TYPE,
            &[("password", "old")],
        ),
        &blocked,
    );
    fx.create_secret(&stale).await;
    // The copy's event would trigger the reconcile; here, the reconcile is called directly.
    fx.until_cached(&fx.caches.copies, &blocked, "db").await;
    let ctx = fx.reconciler(fx.client());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.converge(&ctx, "db").await;
    assert_eq!(keys(&fx.copies("db").await), [fx.target("t0").as_str()]);
}

/// Conflicts on patch, server errors on list/get/create/delete and timeouts, injected
/// between the reconciler and the real API server (its reads: the lookups where no copy is
/// cached, and the list of the copies of the deleted source): reconciling until success
/// ends in exactly the right Secrets, none duplicated or lost.
#[tokio::test]
async fn the_controller_converges_under_injected_faults() {
    let fx = Fixture::new(3).await;
    let (t0, t1, t2) = (fx.target("t0"), fx.target("t1"), fx.target("t2"));
    let mut fx = fx;
    fx.settings.blocklist.insert(t2.clone());
    let audit = RbacAudit::default();
    let faults = Faults::default()
        .fail(
            Fault::conflict()
                .on_verb("patch")
                .on_resource("secrets")
                .times(3),
        )
        .fail(
            Fault::server_error()
                .on_verb("list")
                .on_resource("secrets")
                .times(2),
        )
        .fail(
            Fault::server_error()
                .on_verb("get")
                .on_resource("secrets")
                .times(2),
        )
        .fail(
            Fault::server_error()
                .on_verb("delete")
                .on_resource("secrets")
                .times(2),
        )
        .fail(
            Fault::server_error()
                .on_verb("create")
                .on_resource("events"),
        )
        .fail(Fault::timeout(Duration::from_millis(20)).on_verb("list"))
        .fail(Fault::timeout(Duration::from_millis(20)).on_verb("patch"));
    // A stale copy in a blocklisted namespace (to be deleted), and a foreign Secret.
    fx.create_secret(&copy_of(
        &secret(
            fx.source_namespace(),
            "db",
            SECRET_TYPE,
            &[("password", "old")],
        ),
        &t2,
    ))
    .await;
    fx.until_cached(&fx.caches.copies, &t2, "db").await;
    fx.create_secret(&secret(&t1, "db", "Opaque", &[("password", "theirs")]))
        .await;
    // The source as a previous run left it (with the finalizer), so that the conflicts hit
    // the copies' server-side applies rather than the finalizer's patch.
    let mut db = secret(
        fx.source_namespace(),
        "db",
        SECRET_TYPE,
        &[("password", PASSWORD)],
    );
    db.metadata.finalizers = Some(vec![FINALIZER.into()]);
    fx.create_secret(&db).await;
    let ctx = fx.reconciler(testing::wrap(fx.client(), &audit, &faults));

    let mut failures = fx.converge(&ctx, "db").await;
    let copies = fx.copies("db").await;
    assert_eq!(keys(&copies), [t0.as_str(), t1.as_str()]);
    assert_eq!(value(&copies[&t0], "password"), PASSWORD);
    assert_eq!(value(&copies[&t1], "password"), "theirs");

    failures += fx.delete_source(&ctx, "db").await;
    assert_eq!(keys(&fx.copies("db").await), [t1.as_str()]);
    assert!(fx.sources().get_opt("db").await.unwrap().is_none());

    let injected = faults.injected();
    let count = |kind: fn(&FaultKind) -> bool| injected.iter().filter(|(k, _)| kind(k)).count();
    eprintln!(
        "faults injected: {} ({} conflicts, {} server errors, {} timeouts); failed reconciles: {failures}",
        injected.len(),
        count(|k| *k == FaultKind::Conflict),
        count(|k| *k == FaultKind::ServerError),
        count(|k| matches!(k, FaultKind::Timeout(_))),
    );
    assert_eq!(injected.len(), 12, "every planned fault hit: {injected:?}");
    assert!(failures >= 10, "the faults failed reconciles: {failures}");
}

/// Every request of the controller (its watchers included, run for real on the audited
/// client) is allowed by config/rbac/role.yaml, and every rule there is used.
#[tokio::test]
async fn rbac_role_is_exactly_what_the_controller_uses() {
    let mut fx = Fixture::new(3).await;
    let (t1, t2) = (fx.target("t1"), fx.target("t2"));
    fx.settings.blocklist.insert(t2.clone());
    fx.create_secret(&copy_of(
        &secret(
            fx.source_namespace(),
            "db",
            SECRET_TYPE,
            &[("password", "old")],
        ),
        &t2,
    ))
    .await;
    fx.until_cached(&fx.caches.copies, &t2, "db").await;
    fx.create_secret(&secret(&t1, "db", "Opaque", &[("password", "theirs")]))
        .await;
    let audit = RbacAudit::default();
    let client = testing::wrap(fx.client(), &audit, &Faults::default());
    let ctx = fx.reconciler(client.clone());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.converge(&ctx, "db").await;
    // Again, so that the Event about the foreign Secret is a repeat (a patch).
    fx.converge(&ctx, "db").await;
    fx.delete_source(&ctx, "db").await;

    // The Controller's watchers: sources, namespaces and copies.
    let _failures = fx.start_controller(client, watcher::Config::default());
    let deadline = tokio::time::Instant::now() + WAIT;
    let watching = |audit: &RbacAudit| {
        let watches: Vec<(String, Option<String>)> = audit
            .accesses()
            .into_iter()
            .filter(|a| a.verb == "watch")
            .map(|a| (a.resource, a.namespace))
            .collect();
        watches.len() >= 3
    };
    while !watching(&audit) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watchers did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    audit
        .check_role_file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/rbac/role.yaml"
        ))
        .unwrap();
}

/// The controller runs as the operator's ServiceAccount with config/rbac applied
/// (`config/default`), so the API server's authorizer judges every request: copies,
/// the Event about a foreign Secret, and the cleanup of a deleted source.
#[tokio::test]
async fn the_operator_service_account_may_do_what_the_controller_does() {
    let fx = Fixture::new(2).await;
    let (t0, t1) = (fx.target("t0"), fx.target("t1"));
    fx.create_secret(&secret(&t1, "db", "Opaque", &[("password", "theirs")]))
        .await;
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
    let operator = fx.env.operator_client(&config).await.unwrap();
    let mut failures = fx.start_controller(operator, watcher::Config::default());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.until_copies("db", "the copy in t0", |c| {
        c.get(&t0)
            .is_some_and(|copy| copy.labels().contains_key(MANAGED_BY.0))
    })
    .await;
    fx.sources()
        .delete("db", &Default::default())
        .await
        .unwrap();
    fx.until_source_gone("db").await;
    assert_eq!(keys(&fx.copies("db").await), [t1.as_str()]);
    // Only the foreign Secret fails reconciles (NotOwned is not an error here: an Event).
    while let Ok(failure) = failures.try_recv() {
        assert!(!failure.contains("forbidden"), "{failure}");
    }
}

/// config/rbac's role without `create` on secrets (for a ServiceAccount of this test's
/// own; the shared role stays intact): the server-side apply that would create a copy
/// is refused by the authorizer with a 403, and no copy appears.
#[tokio::test]
async fn without_create_on_secrets_copies_are_refused_with_a_403() {
    let fx = Fixture::new(1).await;
    let restricted =
        client_without_verb(fx.env, fx.source_namespace(), "secrets", "create", "patch").await;
    let mut failures = fx.start_controller(restricted, watcher::Config::default());
    fx.create_source("db", &[("password", PASSWORD)]).await;
    let failure = tokio::time::timeout(WAIT, async {
        loop {
            let failure = failures.recv().await.expect("the controller runs");
            if failure.contains("forbidden") {
                return failure;
            }
        }
    })
    .await
    .expect("a 403 within the wait");
    assert!(
        failure.contains("cannot create resource \"secrets\""),
        "{failure}"
    );
    assert!(fx.copies("db").await.is_empty());
}

/// A client acting as a new ServiceAccount in `namespace`, bound to a copy of
/// config/rbac/role.yaml whose rule on `resource` lacks `verb`, once the authorizer lets
/// it `allowed` that resource (so a 403 later is the missing rule, not a binding not yet
/// seen).
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
        if rule.resources.iter().flatten().any(|r| r == resource)
            && rule.verbs.iter().any(|v| v == verb)
        {
            rule.verbs.retain(|v| v != verb);
            removed = true;
        }
    }
    assert!(removed, "role.yaml grants {verb} on {resource}");
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

/// With `timeoutSeconds=1` the API server closes the Controller's three watches every
/// second and they are opened again from the last resourceVersion: a namespace created, a
/// source changed and a copy deleted after several closures are all acted on. (kube-runtime
/// re-lists only on 410 Gone, which a healthy API server does not answer within its watch
/// cache's window.)
#[tokio::test]
async fn watches_closed_by_the_server_resume_and_miss_nothing() {
    let fx = Fixture::new(1).await;
    let watches = Arc::new(AtomicUsize::new(0));
    let client = counting_watches(fx.client(), watches.clone());
    let _failures = fx.start_controller(client, watcher::Config::default().timeout(1));
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.until_copies("db", "the first copy", |c| c.len() == 1)
        .await;
    // Three watches, each closed by the server at least twice.
    until_watches(&watches, 9).await;

    let late = fx.create_target("late").await;
    fx.until_copies("db", "a copy in the new namespace", |c| {
        c.contains_key(&late)
    })
    .await;
    let seen = watches.load(Ordering::SeqCst);
    until_watches(&watches, seen + 6).await;
    let patch = serde_json::json!({ "data": { "password": ByteString(b"rotated".to_vec()) } });
    fx.sources()
        .patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    fx.until_copies("db", "the rotated password everywhere", |c| {
        c.len() == 2 && c.values().all(|copy| value(copy, "password") == "rotated")
    })
    .await;
    let seen = watches.load(Ordering::SeqCst);
    until_watches(&watches, seen + 6).await;
    Api::<Secret>::namespaced(fx.client(), &late)
        .delete("db", &Default::default())
        .await
        .unwrap();
    fx.until_copies("db", "the deleted copy back", |c| c.len() == 2)
        .await;
}

/// A writer into a shared buffer, for a test subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every log line of this test binary at TRACE, from every thread. A process-wide subscriber,
/// because a thread-local one (`set_default`) can miss events whose callsite interest another
/// test's thread cached first; as a bonus the secret check below covers all tests' logs.
fn all_logs() -> &'static Captured {
    static LOGS: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer({
                let logs = logs.clone();
                move || logs.clone()
            })
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other test installs a subscriber");
        logs
    })
}

#[tokio::test]
async fn no_secret_data_is_ever_logged() {
    let logs = all_logs();
    let fx = Fixture::new(2).await;
    let (t0, t1) = (fx.target("t0"), fx.target("t1"));
    fx.create_secret(&secret(&t0, "db", "Opaque", &[("password", PASSWORD)]))
        .await;
    let faults = Faults::default().fail(
        Fault::server_error()
            .on_verb("patch")
            .on_resource("secrets"),
    );
    let ctx = fx.reconciler(testing::wrap(fx.client(), &RbacAudit::default(), &faults));
    fx.create_source("db", &[("password", PASSWORD)]).await;
    fx.converge(&ctx, "db").await;
    // The error path logs too.
    let object = Arc::new(fx.sources().get("db").await.unwrap());
    let error = Error::Kube(kube::Error::Api(
        kube::core::Status::failure("boom", "InternalError")
            .with_code(500)
            .boxed(),
    ));
    error_policy(object, &error, ctx.clone());
    tracing::info!(reconciler = ?ctx, "debug of the reconciler");
    fx.delete_source(&ctx, "db").await;

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let source = format!("{}/db", fx.source_namespace());
    assert!(text.contains(&source), "the logs name the source:\n{text}");
    assert!(
        text.contains(&format!("{t1}/db")),
        "the logs name the copies:\n{text}"
    );
    let encoded = serde_json::to_string(&ByteString(PASSWORD.as_bytes().to_vec())).unwrap();
    let bytes = format!("{:?}", PASSWORD.as_bytes());
    let bytes_inner = &bytes[1..bytes.len() - 1];
    for leak in [PASSWORD, encoded.trim_matches('"'), bytes_inner] {
        assert!(!text.contains(leak), "secret data in the logs ({leak})");
    }
}
