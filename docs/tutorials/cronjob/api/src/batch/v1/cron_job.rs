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

//! The CronJob API (batch.tutorial.kubebuilder.io/v1): spec, status and the CRD derived from them.
//! A CronJob runs the Job of its template on a Cron schedule, as Kubernetes' own does.
//!
//! `#[rkb(...)]` attributes are controller-gen's markers in Rust: validation, defaults,
//! list types, printer columns (see `rkb_runtime::api`). Doc comments become field
//! descriptions. Run `make manifests` after editing.

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// ANCHOR: spec
/// The desired state of a CronJob: a Job template and the schedule to run it on.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "batch.tutorial.kubebuilder.io",
    version = "v1",
    kind = "CronJob",
    plural = "cronjobs",
    namespaced,
    status = "CronJobStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[rkb(
    printcolumn(name = "Schedule", type = string, json_path = ".spec.schedule"),
    printcolumn(name = "Suspend", type = boolean, json_path = ".spec.suspend"),
    printcolumn(name = "Last Schedule", type = date, json_path = ".status.lastScheduleTime"),
    printcolumn(name = "Age", type = date, json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// The schedule in Cron format (five fields, or `@hourly`, `@daily`, ...); see
    /// <https://en.wikipedia.org/wiki/Cron>.
    #[rkb(min_length = 1)]
    pub schedule: String,

    /// How many seconds after its scheduled time a Job may still start; a run missed by
    /// more is skipped. Without it, a missed run starts however late.
    #[rkb(minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,

    /// What to do when a run is due while the previous one is still running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_policy: Option<ConcurrencyPolicy>,

    /// True stops scheduling new runs; running Jobs go on. Defaults to false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,

    /// The Job each run creates.
    pub job_template: JobTemplateSpec,

    /// How many finished Jobs that succeeded to keep. Defaults to 3.
    #[rkb(minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,

    /// How many finished Jobs that failed to keep. Defaults to 1.
    #[rkb(minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
}
// ANCHOR_END: spec

// ANCHOR: concurrency_policy
/// What a CronJob does when a run is due while an earlier Job is still running. In the
/// CRD, an `enum` of the three names.
#[rkb_runtime::schema]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum ConcurrencyPolicy {
    /// Runs Jobs concurrently.
    #[default]
    Allow,
    /// Skips the run while the previous Job is still running.
    Forbid,
    /// Deletes the running Job and starts the new one.
    Replace,
}
// ANCHOR_END: concurrency_policy

// ANCHOR: status
/// The observed state of a CronJob.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// The Jobs of this CronJob that are still running.
    #[rkb(list_type = atomic)]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active: Vec<ObjectReference>,

    /// When a Job was last scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,
}
// ANCHOR_END: status

// ANCHOR: schedule
/// Parses a CronJob's schedule as Kubernetes' own CronJob does: five fields (minute, hour,
/// day of month, month, day of week) or a macro such as `@hourly`; neither the seconds nor
/// the year field that some cron dialects add.
///
/// croner rather than the `cron` crate: `cron` wants a seconds field first, so it refuses
/// the five-field schedules Kubernetes takes (`*/5 * * * *`), and it works on chrono's time,
/// while croner parses the standard five fields and its `jiff` feature works on the time
/// type k8s-openapi uses.
pub fn parse_schedule(schedule: &str) -> Result<croner::Cron, croner::errors::CronError> {
    croner::parser::CronParser::builder()
        .seconds(croner::parser::Seconds::Disallowed)
        .year(croner::parser::Year::Disallowed)
        .build()
        .parse(schedule)
}
// ANCHOR_END: schedule

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_describes_the_api() {
        let crd = rkb_runtime::crd::<CronJob>().unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(crd.spec.group, "batch.tutorial.kubebuilder.io");
        assert_eq!(crd.spec.names.kind, "CronJob");
        assert_eq!(crd.spec.names.plural, "cronjobs");
        assert_eq!(crd.spec.scope, "Namespaced");
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1");
        assert!(
            version
                .subresources
                .as_ref()
                .is_some_and(|s| s.status.is_some())
        );
        let schema = version.schema.as_ref().unwrap().open_api_v3_schema.as_ref();
        let spec = &schema.unwrap().properties.as_ref().unwrap()["spec"];
        let fields = spec.properties.as_ref().unwrap();
        assert_eq!(
            spec.required,
            Some(vec!["jobTemplate".to_owned(), "schedule".to_owned()])
        );
        assert_eq!(
            fields["concurrencyPolicy"]
                .enum_
                .as_ref()
                .map(|values| { values.iter().map(|v| v.0.clone()).collect::<Vec<_>>() }),
            Some(
                ["Allow", "Forbid", "Replace"]
                    .map(serde_json::Value::from)
                    .to_vec()
            )
        );
        for bounded in [
            "startingDeadlineSeconds",
            "successfulJobsHistoryLimit",
            "failedJobsHistoryLimit",
        ] {
            assert_eq!(fields[bounded].minimum, Some(0.0), "{bounded}");
        }
        assert_eq!(fields["schedule"].min_length, Some(1));
    }

    #[test]
    fn schedules_are_read_as_kubernetes_reads_them() {
        for schedule in ["*/5 * * * *", "0 3 * * MON-FRI", "@hourly", "@daily"] {
            assert!(parse_schedule(schedule).is_ok(), "{schedule}");
        }
        // Six fields would be seconds first in some dialects; Kubernetes refuses them.
        for schedule in ["", "* * * *", "0 */5 * * * *", "61 * * * *", "every minute"] {
            assert!(parse_schedule(schedule).is_err(), "{schedule:?}");
        }
    }
}
