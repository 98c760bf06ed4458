//! The CronJob API of kubebuilder's tutorial (book.kubebuilder.io, "Building CronJob"),
//! ported to rkb: a spec with a JobTemplateSpec (and so a whole PodSpec) embedded, and
//! a status with ObjectReferences, a Time and the scaffold's conditions. Shared by the
//! CRD snapshots (`crds.rs`) and the API-server tests (`api_server.rs`).

// Each test binary uses part of it.
#![allow(dead_code)]

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the CronJob runs, and when.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "batch.tutorial.kubebuilder.io",
    version = "v1",
    kind = "CronJob",
    namespaced,
    status = "CronJobStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// When to run, in cron syntax.
    #[rkb(min_length = 0)]
    pub schedule: String,
    /// How late, in seconds, a missed run may still start.
    #[rkb(minimum = 0)]
    pub starting_deadline_seconds: Option<i64>,
    /// What to do when a run is due while the previous one is still going.
    #[rkb(default = ConcurrencyPolicy::Allow)]
    pub concurrency_policy: Option<ConcurrencyPolicy>,
    /// Whether later runs are held back; runs already started go on.
    pub suspend: Option<bool>,
    /// The Job each run creates.
    pub job_template: JobTemplateSpec,
    /// How many finished Jobs to keep.
    #[rkb(minimum = 0)]
    pub successful_jobs_history_limit: Option<i32>,
    /// How many failed Jobs to keep.
    #[rkb(minimum = 0)]
    pub failed_jobs_history_limit: Option<i32>,
}

/// How runs of one CronJob may overlap.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub enum ConcurrencyPolicy {
    /// Runs may overlap.
    Allow,
    /// A due run is skipped while the previous one runs.
    Forbid,
    /// A due run replaces the one still running.
    Replace,
}

/// What the controller last saw.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// The Jobs running now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active: Vec<ObjectReference>,
    /// When a Job was last started.
    pub last_schedule_time: Option<Time>,
    /// The latest observations, one per condition type.
    #[rkb(list_type = map, list_map_keys = ["type"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
