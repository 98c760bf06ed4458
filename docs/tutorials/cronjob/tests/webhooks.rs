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
            let served = cronjob::webhook::webhooks();
            let manifests = cronjob::api::manifests();
            webhooks::install(env, served, &manifests)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        })
        .await;
    (env, env.create_namespace().await.unwrap())
}

/// A create of the CronJob sample through the API server is stored defaulted:
/// defaulting it again changes nothing.
#[tokio::test]
async fn cron_job_v1_sample_is_defaulted_on_create() {
    use cronjob::webhook::v1::cron_job::CronJobWebhook;
    type Object = cronjob::api::batch::v1::CronJob;

    let (env, namespace) = api_server().await;
    let object: Object = webhooks::sample(
        include_str!("../config/samples/batch_v1_cronjob.yaml"),
        Some(&namespace),
    );
    let api = Api::<Object>::namespaced(env.client(), &namespace);
    let created = api
        .create(&kube::api::PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("the API server refused the sample: {e}"));
    let mut again = created.clone();
    webhook::Defaulter::apply_defaults(
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
    use cronjob::webhook::v1::cron_job::CronJobWebhook;
    type Object = cronjob::api::batch::v1::CronJob;

    let (env, namespace) = api_server().await;
    let api = Api::<Object>::namespaced(env.client(), &namespace);
    let valid: Object = webhooks::sample(
        include_str!("../config/samples/batch_v1_cronjob.yaml"),
        Some(&namespace),
    );
    // ANCHOR: refused
    let mut bad_schedule = valid.clone();
    bad_schedule.spec.schedule = "every minute".into();
    for (object, refused) in [(valid, false), (bad_schedule, true)] {
        let verdict = webhook::Validator::validate_create(
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
