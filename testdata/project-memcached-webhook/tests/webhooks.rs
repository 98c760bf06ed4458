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

//! The webhooks called by a real API server (envtest), as kubebuilder's
//! `webhook_suite_test.go` runs them: `webhook::webhooks()` is served in this test binary,
//! and the CRDs and config/webhook/manifests.yaml that `make manifests` writes are
//! installed pointed at it. The admission files' own tests call the impls directly; these
//! show that the API server calls them and keeps what they answer. `rkb create webhook`
//! adds a test per webhook at the marker.

use kube::Api;
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::webhooks;
use rkb_runtime::webhook;
use tokio::sync::OnceCell;

/// The test binary's API server with the webhooks installed and served (once: they apply
/// to every test), and a fresh namespace for the test.
async fn api_server() -> (&'static Environment, String) {
    static INSTALLED: OnceCell<()> = OnceCell::const_new();
    let env = envtest::shared().await;
    INSTALLED
        .get_or_init(|| async {
            let served = memcached_webhook::webhook::webhooks();
            let manifests = memcached_webhook::api::manifests();
            webhooks::install(env, served, &manifests)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        })
        .await;
    (env, env.create_namespace().await.unwrap())
}

/// A create of the Memcached sample through the API server is stored defaulted:
/// defaulting it again changes nothing.
#[tokio::test]
async fn memcached_v1alpha1_sample_is_defaulted_on_create() {
    use memcached_webhook::webhook::v1alpha1::memcached::MemcachedWebhook;
    type Object = memcached_webhook::api::cache::v1alpha1::Memcached;

    let (env, namespace) = api_server().await;
    let object: Object = webhooks::sample(
        include_str!("../config/samples/cache_v1alpha1_memcached.yaml"),
        Some(&namespace),
    );
    let api = Api::<Object>::namespaced(env.client(), &namespace);
    let created = api
        .create(&kube::api::PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("the API server refused the sample: {e}"));
    let mut again = created.clone();
    webhook::Defaulter::apply_defaults(
        &MemcachedWebhook,
        &webhooks::create_request(&created),
        &mut again,
    )
    .await
    .unwrap_or_else(|denied| panic!("defaulting refused the stored sample: {denied}"));
    assert_eq!(
        again, created,
        "the stored sample lacks defaults: the API server did not call the defaulting webhook"
    );
}

/// The API server admits what MemcachedWebhook admits, and refuses what it refuses
/// with its message. TODO(user): add an object per rule of the validator, that it refuses.
#[tokio::test]
async fn memcached_v1alpha1_is_validated_on_create() {
    use memcached_webhook::webhook::v1alpha1::memcached::MemcachedWebhook;
    type Object = memcached_webhook::api::cache::v1alpha1::Memcached;

    let (env, namespace) = api_server().await;
    let api = Api::<Object>::namespaced(env.client(), &namespace);
    let valid: Object = webhooks::sample(
        include_str!("../config/samples/cache_v1alpha1_memcached.yaml"),
        Some(&namespace),
    );
    for object in [valid] {
        let verdict = webhook::Validator::validate_create(
            &MemcachedWebhook,
            &webhooks::create_request(&object),
            &object,
        )
        .await;
        webhooks::assert_answers_as_validator(&api, &object, verdict).await;
    }
}

/// A Memcached created in one version reads back in every other as its conversion
/// makes it: the API server calls the conversion webhook both ways.
#[tokio::test]
async fn memcached_v1alpha1_converts_through_the_api_server() {
    type Hub = memcached_webhook::api::cache::v1alpha1::Memcached;

    {
        type Spoke = memcached_webhook::api::cache::v1beta1::Memcached;
        let (env, namespace) = api_server().await;
        let mut hub: Hub = webhooks::sample(
            include_str!("../config/samples/cache_v1alpha1_memcached.yaml"),
            Some(&namespace),
        );
        // Names of their own: the other tests create the samples too.
        hub.metadata.name = Some(format!(
            "{}-v1alpha1-to-v1beta1",
            kube::ResourceExt::name_any(&hub)
        ));
        let hub = Api::<Hub>::namespaced(env.client(), &namespace)
            .create(&kube::api::PostParams::default(), &hub)
            .await
            .unwrap_or_else(|e| panic!("the API server refused the v1alpha1 sample: {e}"));
        let read = Api::<Spoke>::namespaced(env.client(), &namespace)
            .get(&kube::ResourceExt::name_any(&hub))
            .await
            .unwrap_or_else(|e| panic!("cannot read the v1alpha1 sample as v1beta1: {e}"));
        assert_eq!(
            read,
            <Spoke as webhook::Convertible<Hub>>::from_hub(hub).unwrap()
        );
        let (env, namespace) = api_server().await;
        let mut spoke: Spoke = webhooks::sample(
            include_str!("../config/samples/cache_v1beta1_memcached.yaml"),
            Some(&namespace),
        );
        spoke.metadata.name = Some(format!(
            "{}-v1beta1-to-v1alpha1",
            kube::ResourceExt::name_any(&spoke)
        ));
        let spoke = Api::<Spoke>::namespaced(env.client(), &namespace)
            .create(&kube::api::PostParams::default(), &spoke)
            .await
            .unwrap_or_else(|e| panic!("the API server refused the v1beta1 sample: {e}"));
        let read = Api::<Hub>::namespaced(env.client(), &namespace)
            .get(&kube::ResourceExt::name_any(&spoke))
            .await
            .unwrap_or_else(|e| panic!("cannot read the v1beta1 sample as v1alpha1: {e}"));
        assert_eq!(
            read,
            <Spoke as webhook::Convertible<Hub>>::to_hub(spoke).unwrap()
        );
    }
}
// +rkb:scaffold:webhook-tests
