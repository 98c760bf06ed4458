//! Typed clients against a real API server (envtest). Each test works in namespaces of
//! its own; the CRDs below are installed once per test binary.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Node, Pod, PodSpec};
use kube::ResourceExt;
use kube::api::{ObjectMeta, PostParams};
use kube::core::Selector;
use kube::runtime::reflector;
use kube::runtime::watcher::Event;
use kube::{CustomResource, CustomResourceExt};
use rkb_manager::client::{field_manager, set_field_manager};
use rkb_manager::{ClusterApi, Lister, NamespacedApi};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    namespaced,
    status = "MemcachedStatus",
    derive = "Default",
    derive = "PartialEq"
)]
pub struct MemcachedSpec {
    pub size: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct MemcachedStatus {
    pub ready_replicas: i32,
}

/// A cluster-scoped kind.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    derive = "Default"
)]
pub struct WidgetSpec {
    pub color: String,
}

/// An admin client of the shared API server with the CRDs installed, and a fresh namespace.
async fn client() -> (kube::Client, String) {
    let env = rkb_envtest::shared_by(module_path!()).await;
    env.apply()
        .crds([Memcached::crd(), Widget::crd()])
        .await
        .expect("the CRDs are installed");
    (env.client(), env.create_namespace().await.unwrap())
}

fn memcached(ns: &str, name: &str, size: i32) -> Memcached {
    let mut m = Memcached::new(name, MemcachedSpec { size });
    m.metadata.namespace = Some(ns.into());
    m
}

#[tokio::test]
async fn apply_creates_then_updates_with_the_field_manager() {
    let (client, ns) = client().await;
    let api = Memcached::api(client, &ns);
    assert_eq!(api.field_manager(), field_manager());
    assert!(api.get_or_none("cache").await.unwrap().is_none());

    let created = api.apply(&memcached(&ns, "cache", 1)).await.unwrap();
    assert_eq!(created.spec.size, 1);
    assert_eq!(managers(&created.metadata), [field_manager()]);

    // A fetched object (resourceVersion, uid, status set) applies as well.
    let mut changed = api.get_or_none("cache").await.unwrap().unwrap();
    changed.spec.size = 3;
    changed.status = Some(MemcachedStatus { ready_replicas: 9 });
    let updated = api.apply(&changed).await.unwrap();
    assert_eq!(updated.spec.size, 3);
    assert_eq!(updated.status, None, "apply leaves the status alone");
}

#[tokio::test]
async fn apply_status_writes_the_status_only() {
    let (client, ns) = client().await;
    let api = Memcached::api(client, &ns);
    let created = api.apply(&memcached(&ns, "cache", 2)).await.unwrap();
    let status = MemcachedStatus { ready_replicas: 2 };
    let updated = api.apply_status(&created, &status).await.unwrap();
    assert_eq!(updated.status, Some(status));
    assert_eq!(updated.spec.size, 2);
}

#[tokio::test]
async fn update_status_writes_over_the_version_it_was_given_only() {
    let (client, ns) = client().await;
    let api = Memcached::api(client, &ns);
    let created = api.apply(&memcached(&ns, "cache", 2)).await.unwrap();
    let mut changed = created.clone();
    changed.spec.size = 5;
    changed.status = Some(MemcachedStatus { ready_replicas: 2 });
    let updated = api.update_status(&changed).await.unwrap();
    assert_eq!(updated.status, Some(MemcachedStatus { ready_replicas: 2 }));
    assert_eq!(
        updated.spec.size, 2,
        "the status subresource leaves the spec alone"
    );
    assert_ne!(updated.resource_version(), created.resource_version());
    let update = updated
        .managed_fields()
        .iter()
        .find(|m| m.subresource.as_deref() == Some("status"))
        .unwrap();
    assert_eq!(update.manager.as_deref(), Some(field_manager()));
    assert_eq!(update.operation.as_deref(), Some("Update"));

    // A copy older than the object is refused, not written over the newer status.
    let mut stale = created.clone();
    stale.status = Some(MemcachedStatus { ready_replicas: 7 });
    let refused = api.update_status(&stale).await;
    assert!(
        matches!(&refused, Err(kube::Error::Api(status)) if status.code == 409),
        "{refused:?}"
    );
    let now = api.get_or_none("cache").await.unwrap().unwrap();
    assert_eq!(now.status, Some(MemcachedStatus { ready_replicas: 2 }));

    // A copy without managedFields (a cache's) keeps the API server's.
    let mut cached = now.clone();
    cached.metadata.managed_fields = None;
    cached.status = Some(MemcachedStatus { ready_replicas: 3 });
    let kept = api.update_status(&cached).await.unwrap();
    assert_eq!(managers(&kept.metadata), managers(&now.metadata));

    // Without a resourceVersion there is nothing to check against: refused before sending.
    let unread = api.update_status(&memcached(&ns, "cache", 2)).await;
    let error = unread.unwrap_err().to_string();
    assert!(
        error.contains("without its metadata.resourceVersion"),
        "{error}"
    );
}

#[tokio::test]
async fn finalizers_are_added_and_removed_once() {
    let (client, ns) = client().await;
    let api = Memcached::api(client, &ns);
    let created = api.apply(&memcached(&ns, "cache", 1)).await.unwrap();

    let with = api
        .add_finalizer(&created, "cache.example.com/cleanup")
        .await
        .unwrap();
    assert_eq!(
        with.metadata.finalizers,
        Some(vec!["cache.example.com/cleanup".into()])
    );
    let again = api
        .add_finalizer(&with, "cache.example.com/cleanup")
        .await
        .unwrap();
    assert_eq!(again, with, "adding a present finalizer sends nothing");
    let two = api.add_finalizer(&with, "other/x").await.unwrap();
    assert_eq!(
        two.metadata.finalizers,
        Some(vec!["cache.example.com/cleanup".into(), "other/x".into()])
    );

    // A stale copy is refused with the 409 Conflict that callers retry, rather than
    // overwriting the newer list (the API server itself answers a failed JSON-patch test
    // with a 422).
    let is_conflict = |result: &kube::Result<Memcached>| match result {
        Err(kube::Error::Api(status)) => status.code == 409 && status.reason == "Conflict",
        _ => false,
    };
    let stale = api.add_finalizer(&created, "late/y").await;
    assert!(is_conflict(&stale), "{stale:?}");
    // An invalid finalizer is the caller's error, not a conflict: retrying cannot help.
    let invalid = api.add_finalizer(&two, "not a finalizer!").await;
    assert!(
        matches!(&invalid, Err(kube::Error::Api(status)) if status.code == 422),
        "{invalid:?}"
    );

    let without = api
        .remove_finalizer(&two, "cache.example.com/cleanup")
        .await
        .unwrap();
    assert_eq!(without.metadata.finalizers, Some(vec!["other/x".into()]));
    let stale = api.remove_finalizer(&two, "other/x").await;
    assert!(is_conflict(&stale), "{stale:?}");
    let same = api
        .remove_finalizer(&without, "cache.example.com/cleanup")
        .await
        .unwrap();
    assert_eq!(same, without, "removing an absent finalizer sends nothing");
}

#[tokio::test]
async fn api_all_writes_to_each_objects_namespace() {
    let (client, a) = client().await;
    let b = rkb_envtest::shared_by(module_path!())
        .await
        .create_namespace()
        .await
        .unwrap();
    let all = Memcached::api_all(client.clone());
    all.apply(&memcached(&a, "one", 1)).await.unwrap();
    all.apply(&memcached(&b, "two", 2)).await.unwrap();
    let listed = all.list(&Default::default()).await.unwrap();
    // The other tests' objects, in their own namespaces, are listed too.
    let ours = |m: &&Memcached| [&a, &b].contains(&m.metadata.namespace.as_ref().unwrap());
    let mut names: Vec<(String, String)> = listed
        .items
        .iter()
        .filter(ours)
        .map(|m| {
            (
                m.metadata.namespace.clone().unwrap(),
                m.metadata.name.clone().unwrap(),
            )
        })
        .collect();
    names.sort();
    let mut expected = [(a, "one".to_owned()), (b.clone(), "two".to_owned())];
    expected.sort();
    assert_eq!(names, expected);
    assert!(
        Memcached::api(client, &b)
            .get_or_none("two")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn built_in_and_cluster_scoped_kinds() {
    let (client, ns) = client().await;
    let pods = Pod::api(client.clone(), &ns);
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some(ns.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "web".into(),
                image: Some("nginx".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let pod = pods.get_or_none("web").await.unwrap().unwrap();
    let pod = pods.add_finalizer(&pod, "example.com/keep").await.unwrap();
    assert_eq!(
        pod.metadata.finalizers,
        Some(vec!["example.com/keep".into()])
    );

    // Cluster-scoped kinds, custom and built-in, take no namespace. Their names are
    // cluster-wide, so they carry the test's namespace name to stay unique.
    let widgets = Widget::api(client.clone()).with_field_manager("someone-else");
    let widget = Widget::new(
        &format!("blue-{ns}"),
        WidgetSpec {
            color: "blue".into(),
        },
    );
    assert!(
        widgets
            .get_or_none(&widget.name_any())
            .await
            .unwrap()
            .is_none()
    );
    let applied = widgets.apply(&widget).await.unwrap();
    assert_eq!(applied.metadata.namespace, None);
    assert_eq!(applied.spec.color, "blue");
    assert_eq!(managers(&applied.metadata), ["someone-else"]);

    let nodes = Node::api(client).with_field_manager("someone-else");
    assert_eq!(nodes.field_manager(), "someone-else");
    let node = Node {
        metadata: ObjectMeta {
            name: Some(format!("node-{ns}")),
            // A field to own: an apply that sets none records no field manager.
            labels: Some(BTreeMap::from([("pool".to_owned(), "test".to_owned())])),
            ..ObjectMeta::default()
        },
        ..Node::default()
    };
    let applied = nodes.apply(&node).await.unwrap();
    assert_eq!(applied.metadata.namespace, None);
    assert_eq!(managers(&applied.metadata), ["someone-else"]);
}

/// The field managers recorded in `managedFields`.
fn managers(metadata: &ObjectMeta) -> Vec<String> {
    metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect()
}

#[test]
fn the_field_manager_is_set_once() {
    // The first use fixes it, whichever comes first.
    let name = field_manager().to_owned();
    assert!(!name.is_empty());
    assert!(!set_field_manager("late"));
    assert_eq!(field_manager(), name);
}

#[tokio::test]
async fn lister_reads_the_cache_by_namespace_name_and_labels() {
    let (store, mut writer) = reflector::store::<Memcached>();
    let lister = Lister::new(store);
    let labelled = |ns: &str, name: &str, app: &str| {
        let mut m = memcached(ns, name, 1);
        m.metadata.labels = Some(BTreeMap::from([("app".to_owned(), app.to_owned())]));
        m
    };
    writer.apply_watcher_event(&Event::Init);
    for m in [
        labelled("b", "z", "web"),
        labelled("a", "y", "db"),
        labelled("a", "x", "web"),
    ] {
        writer.apply_watcher_event(&Event::InitApply(m));
    }
    writer.apply_watcher_event(&Event::InitDone);
    lister.wait_until_ready().await.unwrap();

    let names = |objects: Vec<std::sync::Arc<Memcached>>| -> Vec<String> {
        objects
            .iter()
            .map(|m| m.metadata.name.clone().unwrap())
            .collect()
    };
    assert_eq!(lister.get("a", "x").unwrap().spec.size, 1);
    assert!(lister.get("b", "x").is_none());
    assert_eq!(names(lister.list("a")), ["x", "y"]);
    assert_eq!(names(lister.list_all()), ["x", "y", "z"]);
    let web = Selector::from_iter([("app", "web")]);
    assert_eq!(names(lister.list_matching(&web)), ["x", "z"]);

    writer.apply_watcher_event(&Event::Delete(labelled("a", "x", "web")));
    assert_eq!(names(lister.list_matching(&web)), ["z"]);
}
