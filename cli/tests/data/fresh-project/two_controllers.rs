//! Written into the fresh project by `cli/tests/commands/fresh_project.rs`: Memcached's default
//! controller and the one `create api --controller-name memcached-backup` added run on one
//! object against a real API server, and each keeps its own status condition through a
//! spec change. Each applies its condition as its own field manager; with one manager for
//! both, each apply would drop the other's condition.

use std::sync::Arc;
use std::time::Duration;

use fresh_operator::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use fresh_operator::controller::cache::{memcached, memcached_backup};
use futures::StreamExt as _;
use kube::Api;
use kube::api::PostParams;
use rkb_runtime::cache::Namespaces;
use rkb_runtime::testing::envtest;

/// The conditions of the object, by type, with the generation each names.
async fn conditions(api: &Api<Memcached>) -> Vec<(String, Option<i64>)> {
    let object = api.get("sample").await.unwrap();
    let mut conditions: Vec<(String, Option<i64>)> = object
        .status
        .iter()
        .flat_map(|status| &status.conditions)
        .map(|c| (c.type_.clone(), c.observed_generation))
        .collect();
    conditions.sort();
    conditions
}

async fn until(api: &Api<Memcached>, expected: &[(String, Option<i64>)]) {
    let mut last = Vec::new();
    for _ in 0..300 {
        last = conditions(api).await;
        if last == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("conditions {last:?}, expected {expected:?}");
}

#[tokio::test]
async fn two_controllers_of_one_kind_keep_their_own_conditions() {
    let env = envtest::shared().await;
    let crds = fresh_operator::api::manifests().crds().unwrap();
    env.apply().crds(crds).await.unwrap();
    let namespace = env.create_namespace().await.unwrap();
    let client = env.client();
    let scope = Namespaces::only([namespace.clone()]);
    let first = memcached::controller(&client, &scope).run(
        memcached::reconcile,
        memcached::error_policy,
        Arc::new(memcached::MemcachedReconciler::new(client.clone())),
    );
    let second = memcached_backup::controller(&client, &scope).run(
        memcached_backup::reconcile,
        memcached_backup::error_policy,
        Arc::new(memcached_backup::MemcachedBackupReconciler::new(
            client.clone(),
        )),
    );
    tokio::spawn(first.for_each(|_| async {}));
    tokio::spawn(second.for_each(|_| async {}));

    let api = Api::<Memcached>::namespaced(client, &namespace);
    let mut object = Memcached::new("sample", MemcachedSpec::default());
    object.metadata.namespace = Some(namespace.clone());
    let created = api.create(&PostParams::default(), &object).await.unwrap();
    let both = |generation| {
        vec![
            ("MemcachedBackupReady".to_owned(), Some(generation)),
            ("Ready".to_owned(), Some(generation)),
        ]
    };
    until(&api, &both(1)).await;

    let mut changed = api.get("sample").await.unwrap();
    changed.spec.foo = Some("changed".into());
    assert_eq!(created.metadata.generation, Some(1));
    api.replace("sample", &PostParams::default(), &changed)
        .await
        .unwrap();
    until(&api, &both(2)).await;
}
