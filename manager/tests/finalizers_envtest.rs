//! Finalizer writes against a real kube-apiserver (envtest): a stale copy is refused with
//! a 409 Conflict, the answer callers retry, not the API server's generic 422.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ObjectMeta, PostParams};
use rkb_manager::NamespacedApi;

#[tokio::test]
async fn a_stale_finalizer_write_is_a_conflict() {
    let env = rkb_envtest::shared().await;
    let namespace = env.create_namespace().await.unwrap();
    let api = ConfigMap::api(env.client(), &namespace);
    let object = ConfigMap {
        metadata: ObjectMeta {
            name: Some("finalized".into()),
            namespace: Some(namespace.clone()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let created = api
        .inner()
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let with = api.add_finalizer(&created, "example.com/a").await.unwrap();
    let stale = api.add_finalizer(&created, "example.com/b").await;
    assert!(
        matches!(&stale, Err(kube::Error::Api(status)) if status.code == 409 && status.reason == "Conflict"),
        "{stale:?}"
    );
    // `with` is current: removing through it works, and a second removal through the now
    // stale copy that still lists the finalizer is a conflict too.
    let without = api.remove_finalizer(&with, "example.com/a").await.unwrap();
    assert!(without.metadata.finalizers.unwrap_or_default().is_empty());
    let stale = api.remove_finalizer(&with, "example.com/a").await;
    assert!(
        matches!(&stale, Err(kube::Error::Api(status)) if status.code == 409),
        "{stale:?}"
    );
}
