//! Typed clients against kube-fake-client's in-memory API server.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::CustomResource;
use kube::api::{ObjectMeta, PostParams};
use kube::core::Selector;
use kube::runtime::reflector;
use kube::runtime::watcher::Event;
use kube_fake_client::ClientBuilder;
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

async fn client() -> kube::Client {
    ClientBuilder::new()
        .with_resource::<Memcached>()
        .with_status_subresource::<Memcached>()
        .with_resource::<Widget>()
        .build()
        .await
        .expect("the in-memory API starts")
}

fn memcached(ns: &str, name: &str, size: i32) -> Memcached {
    let mut m = Memcached::new(name, MemcachedSpec { size });
    m.metadata.namespace = Some(ns.into());
    m
}

#[tokio::test]
async fn apply_creates_then_updates_with_the_field_manager() {
    let client = client().await;
    let api = Memcached::api(client, "default");
    assert_eq!(api.field_manager(), field_manager());
    assert!(api.get_or_none("cache").await.unwrap().is_none());

    let created = api.apply(&memcached("default", "cache", 1)).await.unwrap();
    assert_eq!(created.spec.size, 1);
    let managers: Vec<String> = created
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert_eq!(managers, [field_manager()]);

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
    let client = client().await;
    let api = Memcached::api(client, "default");
    let created = api.apply(&memcached("default", "cache", 2)).await.unwrap();
    let status = MemcachedStatus { ready_replicas: 2 };
    let updated = api.apply_status(&created, &status).await.unwrap();
    assert_eq!(updated.status, Some(status));
    assert_eq!(updated.spec.size, 2);
}

#[tokio::test]
async fn finalizers_are_added_and_removed_once() {
    let client = client().await;
    let api = Memcached::api(client, "default");
    let created = api.apply(&memcached("default", "cache", 1)).await.unwrap();

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

    // A stale copy is refused rather than overwriting the newer list.
    let stale = api.add_finalizer(&created, "late/y").await;
    assert!(stale.is_err(), "{stale:?}");

    let without = api
        .remove_finalizer(&two, "cache.example.com/cleanup")
        .await
        .unwrap();
    assert_eq!(without.metadata.finalizers, Some(vec!["other/x".into()]));
    let same = api
        .remove_finalizer(&without, "cache.example.com/cleanup")
        .await
        .unwrap();
    assert_eq!(same, without, "removing an absent finalizer sends nothing");
}

#[tokio::test]
async fn api_all_writes_to_each_objects_namespace() {
    let client = client().await;
    let all = Memcached::api_all(client.clone());
    all.apply(&memcached("a", "one", 1)).await.unwrap();
    all.apply(&memcached("b", "two", 2)).await.unwrap();
    let listed = all.list(&Default::default()).await.unwrap();
    let mut names: Vec<(String, String)> = listed
        .items
        .iter()
        .map(|m| {
            (
                m.metadata.namespace.clone().unwrap(),
                m.metadata.name.clone().unwrap(),
            )
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [("a".into(), "one".into()), ("b".into(), "two".into())]
    );
    assert!(
        Memcached::api(client, "b")
            .get_or_none("two")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn built_in_and_cluster_scoped_kinds() {
    let client = client().await;
    let pods = Pod::api(client.clone(), "default");
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    };
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let pod = pods.get_or_none("web").await.unwrap().unwrap();
    let pod = pods.add_finalizer(&pod, "example.com/keep").await.unwrap();
    assert_eq!(
        pod.metadata.finalizers,
        Some(vec!["example.com/keep".into()])
    );

    // Cluster-scoped kinds take no namespace. (kube-fake-client registers every
    // custom resource as namespaced, so the cluster-scoped writes use a built-in kind.)
    let widgets = Widget::api(client.clone());
    assert!(widgets.get_or_none("blue").await.is_ok());
    let nodes = Node::api(client).with_field_manager("someone-else");
    assert_eq!(nodes.field_manager(), "someone-else");
    let node = Node {
        metadata: ObjectMeta {
            name: Some("node-1".into()),
            ..ObjectMeta::default()
        },
        ..Node::default()
    };
    let applied = nodes.apply(&node).await.unwrap();
    assert_eq!(applied.metadata.namespace, None);
    let managers: Vec<String> = applied
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert_eq!(managers, ["someone-else"]);
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
