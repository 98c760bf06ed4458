//! `rkb_manager::cache` against a real API server (envtest): controllers whose reconcilers
//! read the watches' stores. Each test works in a namespace of its own.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, ResourceExt as _};
use rkb_manager::{Lister, cache};

/// The label by which a Secret names the ConfigMap it belongs to.
const FOR: &str = "example.com/for";

/// What each reconcile of a ConfigMap read from the Secrets' lister: the value of `v` of
/// the Secret named after it, if the lister held that Secret.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<Option<String>>>>);

impl Seen {
    async fn until(&self, what: &str, wanted: Option<&str>) {
        let wanted = wanted.map(str::to_owned);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while self.0.lock().unwrap().last() != Some(&wanted) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: reconciles saw {:?}",
                self.0.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn secret(namespace: &str, value: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some("s".into()),
            namespace: Some(namespace.into()),
            labels: Some(BTreeMap::from([(FOR.to_owned(), "cm".to_owned())])),
            ..ObjectMeta::default()
        },
        string_data: Some(BTreeMap::from([("v".to_owned(), value.to_owned())])),
        ..Secret::default()
    }
}

/// Each change of a watched Secret reconciles the ConfigMap it names, and that reconcile
/// reads the change from the lister `cache::watches` returns: created, changed, deleted.
#[tokio::test]
async fn a_watched_change_reconciles_its_object_which_reads_it_from_the_lister() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let (client, ns) = (env.client(), env.create_namespace().await.unwrap());
    let config = || watcher::Config::default().any_semantic();
    let (controller, secrets) = cache::watches(
        cache::controller(Api::<ConfigMap>::namespaced(client.clone(), &ns), config()),
        Api::<Secret>::namespaced(client.clone(), &ns),
        config().labels(FOR),
        |secret: Secret| {
            let owner = secret.labels().get(FOR)?.clone();
            Some(ObjectRef::new(&owner).within(&secret.namespace()?))
        },
    );
    let seen = Seen::default();
    let reconcile = |object: Arc<ConfigMap>, ctx: Arc<(Lister<Secret>, Seen)>| async move {
        let (secrets, seen) = ctx.as_ref();
        secrets.wait_until_synced().await;
        let value = secrets
            .get(&object.namespace().unwrap(), "s")
            .and_then(|s| s.data.clone())
            .and_then(|data| data.get("v").cloned())
            .map(|v| String::from_utf8(v.0).unwrap());
        seen.0.lock().unwrap().push(value);
        Ok::<_, kube::Error>(Action::await_change())
    };
    let running = controller
        .run(
            reconcile,
            |_, _, _| Action::await_change(),
            Arc::new((secrets, seen.clone())),
        )
        .for_each(|_| async {});
    tokio::spawn(running);

    let configmap = ConfigMap {
        metadata: ObjectMeta {
            name: Some("cm".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &configmap)
        .await
        .unwrap();
    seen.until("the first reconcile, before any Secret", None)
        .await;

    let api = Api::<Secret>::namespaced(client.clone(), &ns);
    api.create(&PostParams::default(), &secret(&ns, "1"))
        .await
        .unwrap();
    seen.until("a reconcile that reads the new Secret", Some("1"))
        .await;
    let change = Patch::Merge(serde_json::json!({ "stringData": { "v": "2" } }));
    api.patch("s", &PatchParams::default(), &change)
        .await
        .unwrap();
    seen.until("a reconcile that reads the change", Some("2"))
        .await;
    api.delete("s", &DeleteParams::default()).await.unwrap();
    seen.until("a reconcile that reads the deletion", None)
        .await;
}
