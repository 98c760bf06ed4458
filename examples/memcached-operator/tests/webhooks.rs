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

mod common;

use kube::api::PostParams;
use kube::{Api, ResourceExt};
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use memcached_example::api::cache::v1beta1;
use memcached_example::webhook::v1alpha1::memcached::{INSTANCE_LABEL, NAME_LABEL};
use rkb_runtime::testing::envtest::{self, Environment};

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
    // The CRD converts through the test's server too.
    common::install(env, "v1alpha1").await;
    let namespace = env.create_namespace().await.unwrap();
    let api = Api::namespaced(env.client(), &namespace);
    common::wait_until_called(&api).await;
    (env, api, namespace)
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
