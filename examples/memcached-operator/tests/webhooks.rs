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

//! The Memcached webhooks called by a real kube-apiserver (envtest): the test serves
//! `webhook::webhooks()` over TLS on loopback, installs the CRD (converting through that
//! server) and the webhook configurations `make manifests` renders (pointed at it), and
//! creates objects through the API server as `kubectl` would.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kube::api::{DynamicObject, PostParams};
use kube::{Api, ResourceExt};
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use memcached_example::api::cache::v1beta1;
use memcached_example::webhook::v1alpha1::memcached::{INSTANCE_LABEL, NAME_LABEL};
use rkb_runtime::testing::envtest::{self, Environment, WebhookCerts};
use rkb_runtime::webhook::TlsFiles;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The webhook server of this test binary, on a thread and runtime of its own so that it
/// outlives each test's runtime.
fn served() -> &'static (SocketAddr, WebhookCerts) {
    static SERVED: OnceLock<(SocketAddr, WebhookCerts)> = OnceLock::new();
    SERVED.get_or_init(|| {
        let certs = WebhookCerts::generate().unwrap();
        let files = TlsFiles::in_dir(certs.dir());
        let (bound, addr) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let server = memcached_example::webhook::webhooks()
                    .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)), &files)
                    .await
                    .unwrap();
                bound.send(server.local_addr().unwrap()).unwrap();
                server.serve(CancellationToken::new()).await;
            });
        });
        (addr.recv().unwrap(), certs)
    })
}

fn memcached(name: &str, size: i32) -> Memcached {
    Memcached::new(
        name,
        MemcachedSpec {
            size,
            container_port: None,
        },
    )
}

/// The API server with the CRD and the webhook configurations installed, calling the
/// test's server, and a fresh namespace.
async fn api_server() -> (&'static Environment, Api<Memcached>, String) {
    let env = envtest::shared().await;
    let (addr, certs) = served();
    let manifests = memcached_example::manifests();
    // The CRD converts through the test's server too.
    let mut objects: Vec<Value> = manifests
        .crds()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|crd| serde_json::to_value(crd).unwrap())
        .collect();
    let files = manifests.render().unwrap_or_else(|e| panic!("{e}"));
    objects.extend(
        files[Path::new("config/webhook/manifests.yaml")]
            .split("\n---\n")
            .map(|doc| serde_yaml_ng::from_str(doc.trim_start_matches("---\n")).unwrap()),
    );
    let objects = objects
        .into_iter()
        .map(|mut object| {
            certs.point_at(*addr, &mut object);
            serde_json::from_value::<DynamicObject>(object).unwrap()
        })
        .collect();
    env.apply().objects(objects).await.unwrap();
    let namespace = env.create_namespace().await.unwrap();
    let api = Api::namespaced(env.client(), &namespace);
    wait_until_called(&api).await;
    (env, api, namespace)
}

/// The API server picks webhook configurations up asynchronously: dry-run a name the
/// validator refuses until it is refused.
async fn wait_until_called(api: &Api<Memcached>) {
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match api.create(&dry_run, &memcached("probe.name", 3)).await {
            Err(kube::Error::Api(status)) if status.message.contains("cannot name") => return,
            other if Instant::now() > deadline => {
                panic!("the API server does not call the webhooks: {other:?}")
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

#[tokio::test]
async fn created_memcacheds_carry_the_defaulted_labels() {
    let (_env, api, _) = api_server().await;
    let created = api
        .create(&PostParams::default(), &memcached("cache", 3))
        .await
        .unwrap();
    assert_eq!(created.labels()[NAME_LABEL], "memcached");
    assert_eq!(created.labels()[INSTANCE_LABEL], "cache");
    // What is stored, not only what the create returned.
    let stored = api.get("cache").await.unwrap();
    assert_eq!(stored.labels()[INSTANCE_LABEL], "cache");
    // The schema's default for containerPort still applies alongside the webhook's.
    assert_eq!(stored.spec.container_port, Some(11211));
}

#[tokio::test]
async fn names_no_service_can_have_are_refused_by_the_api_server() {
    let (_env, api, _) = api_server().await;
    let refused = api
        .create(&PostParams::default(), &memcached("cache.v2", 3))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("expected the API server to refuse: {refused:?}")
    };
    assert_eq!(status.code, 403, "{status:?}");
    assert!(
        status.message.contains("vmemcached-v1alpha1.kb.io")
            && status.message.contains("cannot name the memcached Service"),
        "{status:?}"
    );
    assert!(api.get_opt("cache.v2").await.unwrap().is_none());
}

#[tokio::test]
async fn the_schema_still_refuses_what_it_covers() {
    let (_env, api, _) = api_server().await;
    let refused = api
        .create(&PostParams::default(), &memcached("big", 11))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("expected the API server to refuse: {refused:?}")
    };
    assert_eq!(status.code, 422, "{status:?}");
}

/// A v1beta1 object is stored as v1alpha1 (the hub and storage version) through the
/// conversion webhook, is admitted by the v1alpha1 webhooks (match policy Equivalent: the
/// API server converts the request for them), and reads back in either version.
#[tokio::test]
async fn v1beta1_objects_convert_through_the_webhook() {
    let (env, hub, namespace) = api_server().await;
    let spoke: Api<v1beta1::Memcached> = Api::namespaced(env.client(), &namespace);
    let created = spoke
        .create(
            &PostParams::default(),
            &v1beta1::Memcached::new(
                "converted",
                v1beta1::MemcachedSpec {
                    replicas: 4,
                    container_port: None,
                },
            ),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.replicas, 4);
    assert_eq!(created.spec.container_port, Some(11211));
    assert_eq!(created.labels()[INSTANCE_LABEL], "converted");

    let stored = hub.get("converted").await.unwrap();
    assert_eq!(stored.spec.size, 4);

    let mut changed = stored.clone();
    changed.spec.size = 6;
    hub.replace("converted", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(spoke.get("converted").await.unwrap().spec.replicas, 6);

    // The v1alpha1 validator sees v1beta1 requests too.
    let refused = spoke
        .create(
            &PostParams::default(),
            &v1beta1::Memcached::new(
                "bad.name",
                v1beta1::MemcachedSpec {
                    replicas: 1,
                    container_port: None,
                },
            ),
        )
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("cannot name the memcached Service"),
        "{refused}"
    );
}
