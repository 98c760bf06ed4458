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

//! Admission webhooks for CronJob batch/v1, served by the manager and
//! called by the API server before it stores an object (kubebuilder's `CustomDefaulter` and
//! `CustomValidator`). `#[rkb_runtime::webhook(...)]` on each impl is what `make manifests`
//! writes to config/webhook/manifests.yaml: path, failure policy, operations, ...

use rkb_runtime::webhook;

use crate::api::batch::v1::{ConcurrencyPolicy, CronJob, parse_schedule};

/// Serves the admission webhooks of CronJob. Give it fields (a `kube::Client`, ...) if
/// a check needs more than the object.
#[derive(Clone, Copy, Debug, Default)]
pub struct CronJobWebhook;

// ANCHOR: defaulter
/// The history limits a CronJob gets when it names none, as Kubernetes' CronJob.
pub const DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT: i32 = 3;
pub const DEFAULT_FAILED_JOBS_HISTORY_LIMIT: i32 = 1;

#[rkb_runtime::webhook(
    path = "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob",
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl webhook::Defaulter<CronJob> for CronJobWebhook {
    /// Fills in what a client left out of a CronJob being created or updated; the
    /// manager answers with the JSON patch of the changes. An error refuses the request.
    async fn apply_defaults(
        &self,
        _request: &webhook::Request,
        object: &mut CronJob,
    ) -> Result<(), webhook::Denied> {
        tracing::debug!(name = ?object.metadata.name, "defaulting CronJob");
        let spec = &mut object.spec;
        spec.concurrency_policy
            .get_or_insert(ConcurrencyPolicy::Allow);
        spec.suspend.get_or_insert(false);
        spec.successful_jobs_history_limit
            .get_or_insert(DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
        spec.failed_jobs_history_limit
            .get_or_insert(DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
        Ok(())
    }
}
// ANCHOR_END: defaulter

#[rkb_runtime::webhook(
    path = "/validate-batch-tutorial-kubebuilder-io-v1-cronjob",
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl webhook::Validator<CronJob> for CronJobWebhook {
    async fn validate_create(
        &self,
        _request: &webhook::Request,
        object: &CronJob,
    ) -> Result<webhook::Warnings, webhook::Denied> {
        Self::validate(object)
    }

    async fn validate_update(
        &self,
        _request: &webhook::Request,
        _old: &CronJob,
        new: &CronJob,
    ) -> Result<webhook::Warnings, webhook::Denied> {
        // Every field of a CronJob may change; the new object must be valid all the same.
        Self::validate(new)
    }

    // Deletions are not reviewed: to check them, add `delete` to `operations(...)` above
    // and implement `validate_delete`.
}

// ANCHOR: validate
/// The longest name a CronJob may have: its Jobs are named `<name>-<scheduled time in
/// seconds>` (11 more characters), and a Job's name goes into a label value of its pods,
/// which holds 63.
pub const MAX_NAME_LENGTH: usize = 52;

impl CronJobWebhook {
    /// The checks of a CronJob being created or updated that its schema cannot express.
    /// Each field at fault gets an error that names it: the API server refuses with all
    /// of them at once, as its own validation does, and kubectl prints one line per field.
    fn validate(object: &CronJob) -> Result<webhook::Warnings, webhook::Denied> {
        let name = object.metadata.name.clone().unwrap_or_default();
        tracing::debug!(%name, "validating CronJob");
        let mut errors = webhook::field::ErrorList::new();
        if name.len() > MAX_NAME_LENGTH {
            errors.push(webhook::field::Path::new("metadata").child("name").invalid(
                &name,
                format!(
                    "must be at most {MAX_NAME_LENGTH} characters (it is {}): the CronJob's \
                     Jobs are named after it with 11 characters added, and a Job's name \
                     may be at most 63",
                    name.len()
                ),
            ));
        }
        if let Err(error) = parse_schedule(&object.spec.schedule) {
            errors.push(webhook::field::Path::new("spec").child("schedule").invalid(
                &object.spec.schedule,
                format!(
                    "not a Cron schedule ({error}); give five fields (minute, hour, day of \
                     month, month, day of week), e.g. \"*/5 * * * *\", or a macro such as \
                     \"@hourly\""
                ),
            ));
        }
        errors.into_result("CronJob.batch.tutorial.kubebuilder.io", &name)?;
        Ok(webhook::Warnings::new())
    }
}
// ANCHOR_END: validate

// +rkb:scaffold:webhook-impls

#[cfg(test)]
// ANCHOR: tests
mod tests {
    use super::*;
    use crate::api::batch::v1::CronJobSpec;

    /// A review of `operation`, as the API server sends it.
    fn request(operation: webhook::Operation) -> webhook::Request {
        webhook::Request {
            uid: "test".into(),
            operation,
            name: "sample".into(),
            namespace: Some("default".into()),
            user_info: Default::default(),
            dry_run: false,
            sub_resource: None,
        }
    }

    /// A CronJob named `name` with `schedule`, and nothing else set.
    fn cronjob(name: &str, schedule: &str) -> CronJob {
        CronJob::new(
            name,
            CronJobSpec {
                schedule: schedule.into(),
                ..CronJobSpec::default()
            },
        )
    }

    async fn defaulted(mut object: CronJob) -> CronJob {
        let create = request(webhook::Operation::Create);
        webhook::Defaulter::apply_defaults(&CronJobWebhook, &create, &mut object)
            .await
            .unwrap_or_else(|denied| panic!("defaulting refused the object: {denied}"));
        object
    }

    async fn validated(object: &CronJob) -> Result<webhook::Warnings, webhook::Denied> {
        let create = request(webhook::Operation::Create);
        let created = webhook::Validator::validate_create(&CronJobWebhook, &create, object).await;
        let update = request(webhook::Operation::Update);
        let updated =
            webhook::Validator::validate_update(&CronJobWebhook, &update, object, object).await;
        assert_eq!(created, updated, "creating and updating are judged alike");
        created
    }

    #[tokio::test]
    async fn defaulting_fills_in_what_is_left_out() {
        let spec = defaulted(cronjob("sample", "* * * * *")).await.spec;
        assert_eq!(spec.concurrency_policy, Some(ConcurrencyPolicy::Allow));
        assert_eq!(spec.suspend, Some(false));
        assert_eq!(spec.successful_jobs_history_limit, Some(3));
        assert_eq!(spec.failed_jobs_history_limit, Some(1));
    }

    #[tokio::test]
    async fn defaulting_keeps_what_is_set() {
        let mut object = cronjob("sample", "* * * * *");
        object.spec.concurrency_policy = Some(ConcurrencyPolicy::Forbid);
        object.spec.suspend = Some(true);
        object.spec.successful_jobs_history_limit = Some(0);
        object.spec.failed_jobs_history_limit = Some(7);
        assert_eq!(defaulted(object.clone()).await, object);
    }

    /// The API server may call a defaulting webhook again (reinvocation): a second pass
    /// must change nothing.
    #[tokio::test]
    async fn defaulting_is_idempotent() {
        let once = defaulted(CronJob::default()).await;
        assert_eq!(defaulted(once.clone()).await, once);
    }

    #[tokio::test]
    async fn a_valid_object_is_admitted() {
        let longest = "a".repeat(MAX_NAME_LENGTH);
        for object in [
            cronjob("sample", "*/5 * * * *"),
            cronjob(&longest, "@hourly"),
        ] {
            assert_eq!(validated(&object).await, Ok(webhook::Warnings::new()));
        }
    }

    #[tokio::test]
    async fn a_bad_schedule_is_refused_with_the_field_and_an_example() {
        let denied = validated(&cronjob("sample", "every minute"))
            .await
            .unwrap_err();
        let message = denied.to_string();
        assert!(
            message.contains("spec.schedule: Invalid value: \"every minute\""),
            "{message}"
        );
        assert!(message.contains("e.g. \"*/5 * * * *\""), "{message}");
    }

    #[tokio::test]
    async fn a_name_too_long_for_its_jobs_is_refused() {
        let name = "a".repeat(MAX_NAME_LENGTH + 1);
        let denied = validated(&cronjob(&name, "* * * * *")).await.unwrap_err();
        let message = denied.to_string();
        assert!(
            message.contains("metadata.name: Invalid value"),
            "{message}"
        );
        assert!(
            message.contains("must be at most 52 characters (it is 53)"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn every_error_is_reported_at_once() {
        let name = "a".repeat(MAX_NAME_LENGTH + 1);
        let denied = validated(&cronjob(&name, "")).await.unwrap_err();
        let message = denied.to_string();
        assert!(
            message.contains("metadata.name") && message.contains("spec.schedule"),
            "{message}"
        );
    }
    // +rkb:scaffold:webhook-tests
}
// ANCHOR_END: tests
