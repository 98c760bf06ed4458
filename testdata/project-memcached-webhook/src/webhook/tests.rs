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
//! `webhook_suite_test.go` runs them: [`webhooks`](super::webhooks) is served in the test
//! binary, and the CRDs and config/webhook/manifests.yaml that `make manifests` writes are
//! installed pointed at it, on an API server of this module's own (webhook configurations
//! apply cluster-wide: the controllers' tests must not meet them). The admission files' own
//! tests call the impls directly; these show that the API server calls them and keeps what
//! they answer. `rkb create webhook` adds a test per webhook at the marker.

use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::webhooks;
use tokio::sync::OnceCell;

/// This module's API server with the webhooks installed and served (once: they apply to
/// every test of the module), and a fresh namespace for the test.
async fn api_server() -> (&'static Environment, String) {
    static INSTALLED: OnceCell<()> = OnceCell::const_new();
    let env = envtest::shared_by(module_path!()).await;
    INSTALLED
        .get_or_init(|| async {
            let served = crate::webhook::webhooks();
            let manifests = crate::api::manifests();
            webhooks::install(env, served, &manifests)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        })
        .await;
    (env, env.create_namespace().await.unwrap())
}
/// The API server accepts config/webhook/manifests.yaml and calls every webhook it lists, at
/// the path and with the settings this binary serves it (a webhook listed for `make
/// manifests` but not served, or served otherwise, fails here).
#[tokio::test]
async fn the_api_server_calls_the_webhooks_make_manifests_lists() {
    api_server().await;
}

/// A create of the Memcached sample through the API server is stored defaulted:
/// defaulting it again changes nothing.
#[tokio::test]
async fn memcached_v1alpha1_sample_is_defaulted_on_create() {
    use crate::webhook::v1alpha1::memcached::MemcachedWebhook;
    type Object = crate::api::cache::v1alpha1::Memcached;

    let (env, namespace) = api_server().await;
    let object: Object = webhooks::sample(
        include_str!("../../config/samples/cache_v1alpha1_memcached.yaml"),
        Some(&namespace),
    );
    let api = kube::Api::<Object>::namespaced(env.client(), &namespace);
    let created = api
        .create(&kube::api::PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("the API server refused the sample: {e}"));
    let mut again = created.clone();
    rkb_runtime::webhook::Defaulter::apply_defaults(
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
    use crate::webhook::v1alpha1::memcached::MemcachedWebhook;
    type Object = crate::api::cache::v1alpha1::Memcached;

    let (env, namespace) = api_server().await;
    let api = kube::Api::<Object>::namespaced(env.client(), &namespace);
    let valid: Object = webhooks::sample(
        include_str!("../../config/samples/cache_v1alpha1_memcached.yaml"),
        Some(&namespace),
    );
    for object in [valid] {
        let verdict = rkb_runtime::webhook::Validator::validate_create(
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
    type Hub = crate::api::cache::v1alpha1::Memcached;

    {
        type Spoke = crate::api::cache::v1beta1::Memcached;
        let (env, namespace) = api_server().await;
        let mut hub: Hub = webhooks::sample(
            include_str!("../../config/samples/cache_v1alpha1_memcached.yaml"),
            Some(&namespace),
        );
        // Names of their own: the other tests create the samples too.
        hub.metadata.name = Some(format!(
            "{}-v1alpha1-to-v1beta1",
            kube::ResourceExt::name_any(&hub)
        ));
        let hub = kube::Api::<Hub>::namespaced(env.client(), &namespace)
            .create(&kube::api::PostParams::default(), &hub)
            .await
            .unwrap_or_else(|e| panic!("the API server refused the v1alpha1 sample: {e}"));
        let read = kube::Api::<Spoke>::namespaced(env.client(), &namespace)
            .get(&kube::ResourceExt::name_any(&hub))
            .await
            .unwrap_or_else(|e| panic!("cannot read the v1alpha1 sample as v1beta1: {e}"));
        assert_eq!(
            read,
            <Spoke as rkb_runtime::webhook::Convertible<Hub>>::from_hub(hub).unwrap()
        );
        let (env, namespace) = api_server().await;
        let mut spoke: Spoke = webhooks::sample(
            include_str!("../../config/samples/cache_v1beta1_memcached.yaml"),
            Some(&namespace),
        );
        spoke.metadata.name = Some(format!(
            "{}-v1beta1-to-v1alpha1",
            kube::ResourceExt::name_any(&spoke)
        ));
        let spoke = kube::Api::<Spoke>::namespaced(env.client(), &namespace)
            .create(&kube::api::PostParams::default(), &spoke)
            .await
            .unwrap_or_else(|e| panic!("the API server refused the v1beta1 sample: {e}"));
        let read = kube::Api::<Hub>::namespaced(env.client(), &namespace)
            .get(&kube::ResourceExt::name_any(&spoke))
            .await
            .unwrap_or_else(|e| panic!("cannot read the v1beta1 sample as v1alpha1: {e}"));
        assert_eq!(
            read,
            <Spoke as rkb_runtime::webhook::Convertible<Hub>>::to_hub(spoke).unwrap()
        );
    }
}
// +rkb:scaffold:webhook-tests
