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
use kube::api::PostParams;
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::webhook;
use tokio::sync::OnceCell;

/// The test binary's API server with the webhooks installed and served (once: they apply
/// to every test), and a fresh namespace for the test.
async fn api_server() -> (&'static Environment, String) {
    static INSTALLED: OnceCell<()> = OnceCell::const_new();
    let env = envtest::shared().await;
    INSTALLED
        .get_or_init(|| async {
            rkb_runtime::testing::webhooks::install(
                env,
                memcached_webhook::webhook::webhooks(),
                &memcached_webhook::manifests(),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        })
        .await;
    (env, env.create_namespace().await.unwrap())
}

/// The object of a config/samples/ file, in `namespace` when it is namespaced.
fn sample<K: serde::de::DeserializeOwned>(yaml: &str, namespace: Option<&str>) -> K {
    let mut object = serde_json::to_value(&envtest::parse_yaml(yaml).unwrap()[0]).unwrap();
    if let Some(namespace) = namespace {
        object["metadata"]["namespace"] = namespace.into();
    }
    serde_json::from_value(object).unwrap_or_else(|e| panic!("the sample does not parse: {e}"))
}

/// A review of a create of `object`, as the API server sends it.
fn create_request(object: &impl kube::Resource) -> webhook::Request {
    webhook::Request {
        uid: "test".into(),
        operation: webhook::Operation::Create,
        name: object.meta().name.clone().unwrap_or_default(),
        namespace: object.meta().namespace.clone(),
        user_info: Default::default(),
        dry_run: false,
        sub_resource: None,
    }
}

/// Creates `object` as a dry run, and checks that the API server answers as the validator
/// did (`verdict`): it admits it, or refuses it with the validator's code and message.
async fn assert_answers_as_validator<K>(
    api: &Api<K>,
    object: &K,
    verdict: Result<webhook::Warnings, webhook::Denied>,
) where
    K: kube::Resource + Clone + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let answer = api.create(&dry_run, object).await;
    match (verdict, answer) {
        (Ok(_), Ok(_)) => {}
        (Err(denied), Err(kube::Error::Api(status))) => {
            assert_eq!(status.code, denied.status().code, "{status:?}");
            assert!(
                status.message.ends_with(denied.message()),
                "the API server refused with {:?}, not the validator's {:?}",
                status.message,
                denied.message()
            );
        }
        (verdict, answer) => {
            panic!("the validator answered {verdict:?}, the API server {answer:?}, for {object:?}")
        }
    }
}

/// A create of the Memcached sample through the API server is stored defaulted:
/// defaulting it again changes nothing.
#[tokio::test]
async fn memcached_v1alpha1_sample_is_defaulted_on_create() {
    use memcached_webhook::api::cache::v1alpha1::Memcached;
    use memcached_webhook::webhook::v1alpha1::memcached::MemcachedWebhook;

    let (env, namespace) = api_server().await;
    let object: Memcached = sample(
        include_str!("../config/samples/cache_v1alpha1_memcached.yaml"),
        Some(&namespace),
    );
    let api = Api::<Memcached>::namespaced(env.client(), &namespace);
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("the API server refused the sample: {e}"));
    let mut again = created.clone();
    webhook::Defaulter::apply_defaults(&MemcachedWebhook, &create_request(&created), &mut again)
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
    use memcached_webhook::api::cache::v1alpha1::Memcached;
    use memcached_webhook::webhook::v1alpha1::memcached::MemcachedWebhook;

    let (env, namespace) = api_server().await;
    let api = Api::<Memcached>::namespaced(env.client(), &namespace);
    let valid: Memcached = sample(
        include_str!("../config/samples/cache_v1alpha1_memcached.yaml"),
        Some(&namespace),
    );
    for object in [valid] {
        let verdict = webhook::Validator::validate_create(
            &MemcachedWebhook,
            &create_request(&object),
            &object,
        )
        .await;
        assert_answers_as_validator(&api, &object, verdict).await;
    }
}
// +rkb:scaffold:webhook-tests
