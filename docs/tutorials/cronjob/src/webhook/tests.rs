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

/// A create of the CronJob sample through the API server is stored defaulted:
/// defaulting it again changes nothing.
#[tokio::test]
async fn cron_job_v1_sample_is_defaulted_on_create() {
    use crate::webhook::v1::cron_job::CronJobWebhook;
    type Object = crate::api::batch::v1::CronJob;

    let (env, namespace) = api_server().await;
    let object: Object = webhooks::sample(
        include_str!("../../config/samples/batch_v1_cronjob.yaml"),
        Some(&namespace),
    );
    let api = kube::Api::<Object>::namespaced(env.client(), &namespace);
    let created = api
        .create(&kube::api::PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("the API server refused the sample: {e}"));
    let mut again = created.clone();
    rkb_runtime::webhook::Defaulter::apply_defaults(
        &CronJobWebhook,
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

/// The API server admits what CronJobWebhook admits, and refuses what it refuses
/// with its message: here a schedule that is not Cron's.
#[tokio::test]
async fn cron_job_v1_is_validated_on_create() {
    use crate::webhook::v1::cron_job::CronJobWebhook;
    type Object = crate::api::batch::v1::CronJob;

    let (env, namespace) = api_server().await;
    let api = kube::Api::<Object>::namespaced(env.client(), &namespace);
    let valid: Object = webhooks::sample(
        include_str!("../../config/samples/batch_v1_cronjob.yaml"),
        Some(&namespace),
    );
    // ANCHOR: refused
    let mut bad_schedule = valid.clone();
    bad_schedule.spec.schedule = "every minute".into();
    for (object, refused) in [(valid, false), (bad_schedule, true)] {
        let verdict = rkb_runtime::webhook::Validator::validate_create(
            &CronJobWebhook,
            &webhooks::create_request(&object),
            &object,
        )
        .await;
        assert_eq!(verdict.is_err(), refused, "{verdict:?}");
        webhooks::assert_answers_as_validator(&api, &object, verdict).await;
    }
    // ANCHOR_END: refused
}
// +rkb:scaffold:webhook-tests
