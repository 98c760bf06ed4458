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

//! Reconciles CronJob objects (batch.tutorial.kubebuilder.io/v1): runs the CronJob's Job
//! template on its schedule, keeps the status's list of running Jobs, and deletes finished
//! Jobs beyond the history limits.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::tz::TimeZone;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{DeleteParams, PostParams, Preconditions};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::cache::Namespaces;
use rkb_runtime::manager::Context;
use rkb_runtime::{Lister, NamespacedApi, Rbac};

use crate::api::batch::v1::{ConcurrencyPolicy, CronJob, CronJobStatus, parse_schedule};

// ANCHOR: reconciler
/// The annotation on every Job a CronJob creates: the time it was scheduled for (RFC 3339).
pub const SCHEDULED_TIME_ANNOTATION: &str = "batch.tutorial.kubebuilder.io/scheduled-at";

/// What the reconciler takes as the current time: the system clock, or a test's.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// State shared by every reconcile of CronJob objects.
///
/// The `rbac` attributes list the permissions the reconciler needs, and no more: `make
/// manifests` turns them into config/rbac/role.yaml, and the RBAC-audit test below fails
/// when the reconciler makes a request they do not allow or they allow one it never makes.
/// The Jobs are read from the controller's watch (hence `list` and `watch`, and no `get`),
/// created for each run and deleted beyond the history limits.
#[derive(Rbac)]
#[rbac(groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs"], verbs = [list, watch])]
#[rbac(groups = ["batch.tutorial.kubebuilder.io"], resources = ["cronjobs/status"], verbs = [patch])]
#[rbac(groups = ["batch"], resources = ["jobs"], verbs = [list, watch, create, delete])]
pub struct CronJobReconciler {
    pub client: Client,
    /// The Jobs in the controller's scope, from its watch (see [`controller`]).
    jobs: Lister<Job>,
    clock: Clock,
    backoff: ErrorBackoff,
}

impl CronJobReconciler {
    /// `jobs` is the Lister [`controller`] returns with the controller.
    pub fn new(client: Client, jobs: Lister<Job>) -> Self {
        Self {
            client,
            jobs,
            clock: Arc::new(Timestamp::now),
            backoff: ErrorBackoff::default(),
        }
    }

    /// The reconciler with another clock: tests move time forward without waiting.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }
}
// ANCHOR_END: reconciler

/// Why a reconcile failed; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
    #[error("the CronJob has no {0}")]
    MissingField(&'static str),
    #[error("cannot compute the runs of schedule {schedule:?}: {error}")]
    Schedule {
        schedule: String,
        error: croner::errors::CronError,
    },
}

// ANCHOR: children
/// A CronJob's Jobs, sorted by the time each was scheduled for, oldest first.
#[derive(Debug, Default)]
pub struct Children {
    pub active: Vec<Arc<Job>>,
    pub successful: Vec<Arc<Job>>,
    pub failed: Vec<Arc<Job>>,
    /// The latest time any of them was scheduled for.
    pub most_recent: Option<Timestamp>,
}

/// How a Job ended: its `Complete` or `Failed` condition, when it is true.
fn finished(job: &Job) -> Option<&str> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        .map(|c| c.type_.as_str())
}

/// The time a Job was scheduled for, from the annotation its CronJob gave it.
pub fn scheduled_time(job: &Job) -> Option<Timestamp> {
    job.annotations()
        .get(SCHEDULED_TIME_ANNOTATION)
        .and_then(|time| time.parse().ok())
}

/// Sorts `jobs` (those `object` controls, among others) by how they stand.
pub fn children(object: &CronJob, jobs: Vec<Arc<Job>>) -> Children {
    let uid = object.metadata.uid.as_deref();
    let mut owned: Vec<Arc<Job>> = jobs
        .into_iter()
        .filter(|job| {
            job.owner_references()
                .iter()
                .any(|o| o.controller == Some(true) && Some(o.uid.as_str()) == uid)
        })
        .collect();
    owned.sort_by_key(|job| (scheduled_time(job), job.name_any()));
    let mut children = Children {
        most_recent: owned.iter().filter_map(|job| scheduled_time(job)).max(),
        ..Children::default()
    };
    for job in owned {
        match finished(&job) {
            None => children.active.push(job),
            Some("Complete") => children.successful.push(job),
            Some(_) => children.failed.push(job),
        }
    }
    children
}
// ANCHOR_END: children

// ANCHOR: schedule_times
/// The runs of `schedule` as of `now`: the latest one that was due after `earliest` and
/// has not run (if any), and the next one.
///
/// croner finds the previous occurrence directly, so unlike kubebuilder's tutorial, which
/// steps through every missed run and gives up after 100, this costs the same after a
/// long outage.
pub fn schedule_times(
    schedule: &croner::Cron,
    earliest: Timestamp,
    now: Timestamp,
) -> Result<(Option<Timestamp>, Timestamp), croner::errors::CronError> {
    let now = now.to_zoned(TimeZone::UTC);
    let last = schedule.find_previous_occurrence(&now, true)?.timestamp();
    let next = schedule.find_next_occurrence(&now, false)?.timestamp();
    Ok(((last > earliest).then_some(last), next))
}
// ANCHOR_END: schedule_times

// ANCHOR: job_for
/// The Job of `object`'s run scheduled for `scheduled`: its template, named after the
/// CronJob and the time (so that a run is created once however often the reconcile
/// repeats), with the time annotated and `object` as its controller owner.
pub fn job_for(object: &CronJob, scheduled: Timestamp) -> Result<Job, Error> {
    let template = &object.spec.job_template;
    let template_meta = template.metadata.clone().unwrap_or_default();
    let mut annotations = template_meta.annotations.unwrap_or_default();
    annotations.insert(SCHEDULED_TIME_ANNOTATION.into(), scheduled.to_string());
    let mut owner = object
        .controller_owner_ref(&())
        .ok_or(Error::MissingField("metadata.uid"))?;
    // blockOwnerDeletion would need `update` on cronjobs/finalizers where the
    // OwnerReferencesPermissionEnforcement admission plugin runs.
    owner.block_owner_deletion = None;
    Ok(Job {
        metadata: ObjectMeta {
            name: Some(format!("{}-{}", object.name_any(), scheduled.as_second())),
            namespace: object.namespace(),
            labels: template_meta.labels,
            annotations: Some(annotations),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: template.spec.clone(),
        status: None,
    })
}
// ANCHOR_END: job_for

/// A reference to `job` for the status's `active` list.
fn reference(job: &Job) -> ObjectReference {
    let mut reference = job.object_ref(&());
    // Changes with every write of the Job; the status would be rewritten each time.
    reference.resource_version = None;
    reference
}

/// Deletes `job` and, in the background, its pods; gone already is as good.
async fn delete(jobs: &Api<Job>, job: &Job) -> Result<(), Error> {
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: job.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::background()
    };
    match jobs.delete(&job.name_any(), &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Makes the cluster match what the CronJob declares. It runs after every change of the
/// CronJob or of its Jobs, at each scheduled time, and after every failure, so it must be
/// idempotent.
pub async fn reconcile(object: Arc<CronJob>, ctx: Arc<CronJobReconciler>) -> Result<Action, Error> {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let namespace = object
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let jobs = Api::<Job>::namespaced(ctx.client.clone(), &namespace);

    // ANCHOR: reconcile_status
    // 1. The Jobs this CronJob owns, from the watch, and the status they make.
    ctx.jobs.wait_until_synced().await;
    let children = children(&object, ctx.jobs.list(&namespace));
    let status = CronJobStatus {
        active: children.active.iter().map(|job| reference(job)).collect(),
        last_schedule_time: children.most_recent.map(Time),
    };
    if object.status.as_ref() != Some(&status) {
        CronJob::api(ctx.client.clone(), &namespace)
            .apply_status(object.as_ref(), &status)
            .await?;
    }
    // ANCHOR_END: reconcile_status

    // ANCHOR: reconcile_history
    // 2. Finished Jobs beyond the history limits go, oldest first.
    let limits = [
        (
            &children.successful,
            object.spec.successful_jobs_history_limit,
        ),
        (&children.failed, object.spec.failed_jobs_history_limit),
    ];
    for (finished, limit) in limits {
        let Some(limit) = limit else { continue };
        let beyond = finished
            .len()
            .saturating_sub(usize::try_from(limit).unwrap_or(0));
        for job in &finished[..beyond] {
            delete(&jobs, job).await?;
            tracing::info!(object = %key, job = %job.name_any(), "deleted an old Job");
        }
    }
    // ANCHOR_END: reconcile_history

    // ANCHOR: reconcile_schedule
    // 3. A suspended CronJob starts nothing; resuming it is a change that reconciles it.
    if object.spec.suspend == Some(true) {
        ctx.backoff.reset_for(object.as_ref());
        return Ok(Action::await_change());
    }
    // 4. The run that is due now, if any, and when the next one is.
    let schedule = match parse_schedule(&object.spec.schedule) {
        Ok(schedule) => schedule,
        Err(error) => {
            // The validating webhook refuses such a schedule; retrying would not help.
            tracing::warn!(object = %key, %error, "the schedule does not parse; waiting for a change");
            return Ok(Action::await_change());
        }
    };
    let now = (ctx.clock)();
    let mut earliest = children
        .most_recent
        .or(object.metadata.creation_timestamp.as_ref().map(|t| t.0))
        .ok_or(Error::MissingField("metadata.creationTimestamp"))?;
    let deadline = object
        .spec
        .starting_deadline_seconds
        .map(SignedDuration::from_secs);
    if let Some(Ok(oldest_allowed)) = deadline.map(|deadline| now.checked_sub(deadline)) {
        // A run missed by more than the deadline is skipped.
        earliest = earliest.max(oldest_allowed);
    }
    let (due, next) =
        schedule_times(&schedule, earliest, now).map_err(|error| Error::Schedule {
            schedule: object.spec.schedule.clone(),
            error,
        })?;
    let at_next_run =
        Action::requeue(Duration::try_from(now.duration_until(next)).unwrap_or_default());
    ctx.backoff.reset_for(object.as_ref());
    let Some(due) = due else {
        return Ok(at_next_run);
    };
    // ANCHOR_END: reconcile_schedule

    // ANCHOR: reconcile_concurrency
    // 5. The concurrency policy, when an earlier Job still runs.
    match object.spec.concurrency_policy.unwrap_or_default() {
        ConcurrencyPolicy::Forbid if !children.active.is_empty() => {
            tracing::info!(object = %key, "a Job still runs; skipping the run of {due}");
            return Ok(at_next_run);
        }
        ConcurrencyPolicy::Replace => {
            for job in &children.active {
                delete(&jobs, job).await?;
            }
        }
        _ => {}
    }
    // ANCHOR_END: reconcile_concurrency

    // ANCHOR: reconcile_create
    // 6. The run's Job. The watch may not have brought the Job an earlier reconcile
    // created: the name is the run's, so the API server refuses it a second time.
    let job = job_for(&object, due)?;
    match jobs.create(&PostParams::default(), &job).await {
        Ok(_) => {
            tracing::info!(object = %key, job = %job.name_any(), "created a Job for the run of {due}")
        }
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(error) => return Err(error.into()),
    }
    // 7. Back at the next run, unless a change comes first.
    Ok(at_next_run)
    // ANCHOR_END: reconcile_create
}

/// Retries a failed reconcile with per-object exponential backoff (keyed by UID, so a
/// recreated object starts afresh), as controller-runtime does.
pub fn error_policy(object: Arc<CronJob>, error: &Error, ctx: Arc<CronJobReconciler>) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next_for(object.as_ref());
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// Runs the CronJob controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let client = ctx.client();
    // Fail fast with a hint rather than a watch that retries forever.
    ctx.namespaces()
        .apis::<CronJob>(&client)
        .check_listable(
            "cronjobs.batch.tutorial.kubebuilder.io",
            "is the CRD installed (`make install`) and is the manager allowed to?",
        )
        .await?;
    let (controller, jobs) = controller(&client, ctx.namespaces());
    let reconciler = Arc::new(CronJobReconciler::new(client.clone(), jobs));
    ctx.run(controller, reconcile, error_policy, reconciler)
        .await
}

// ANCHOR: controller
/// The controller: the cronjobs it reconciles and the Jobs they own, in `namespaces` (all,
/// those of `--watch-namespace`, or the test's own). A CronJob is reconciled when its spec
/// or metadata change, when one of its Jobs changes (it finishes, or is deleted), and at
/// each scheduled time (the reconcile's requeue). The Jobs are kept in the returned
/// Lister for the reconciler to read.
pub fn controller(client: &Client, namespaces: &Namespaces) -> (Controller<CronJob>, Lister<Job>) {
    let config = || watcher::Config::default().any_semantic();
    let controller = rkb_runtime::cache::controller(namespaces.apis::<CronJob>(client), config());
    rkb_runtime::cache::owns(controller, namespaces.apis::<Job>(client), config())
}
// ANCHOR_END: controller

#[cfg(test)]
mod tests {
    use std::path::Path;

    use k8s_openapi::api::batch::v1::{JobSpec, JobTemplateSpec};
    use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
    use kube::api::{ListParams, Patch, PatchParams};
    use rkb_runtime::testing::controller::{self as harness, Reports, eventually};
    use rkb_runtime::testing::envtest::{self, Environment};
    use rkb_runtime::testing::{self, Faults, RbacAudit};
    use serde_json::json;

    use super::*;
    use crate::api::batch::v1::CronJobSpec;

    /// A real kube-apiserver and etcd shared by this binary's tests (`make setup-envtest`
    /// provides them; `USE_EXISTING_CLUSTER=true` uses the current cluster instead), with
    /// the project's CRDs installed as `make install` would, and a fresh namespace. No
    /// kube-controller-manager runs: Jobs are created but never run, so the tests finish
    /// them by writing their status.
    async fn api_server() -> (&'static Environment, String) {
        let env = envtest::shared().await;
        let crds = crate::api::manifests()
            .crds()
            .unwrap_or_else(|e| panic!("{e}"));
        env.apply().crds(crds).await.unwrap();
        let namespace = env.create_namespace().await.unwrap();
        (env, namespace)
    }

    /// The Job template of the tests' CronJobs, with a label its Jobs must carry.
    fn job_template() -> JobTemplateSpec {
        JobTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some([("app".to_owned(), "hello".to_owned())].into()),
                ..ObjectMeta::default()
            }),
            spec: Some(JobSpec {
                template: PodTemplateSpec {
                    metadata: None,
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "hello".into(),
                            image: Some("busybox:1.36".into()),
                            ..Container::default()
                        }],
                        restart_policy: Some("Never".into()),
                        ..PodSpec::default()
                    }),
                },
                ..JobSpec::default()
            }),
        }
    }

    /// A CronJob named `sample` in the test's namespace that runs every minute.
    fn sample(namespace: &str) -> CronJob {
        let mut object = CronJob::new(
            "sample",
            CronJobSpec {
                schedule: "* * * * *".into(),
                job_template: job_template(),
                ..CronJobSpec::default()
            },
        );
        object.metadata.namespace = Some(namespace.into());
        object
    }

    async fn create(client: &Client, object: &CronJob) -> CronJob {
        let namespace = object.namespace().unwrap();
        Api::namespaced(client.clone(), &namespace)
            .create(&PostParams::default(), object)
            .await
            .unwrap()
    }

    /// A clock stopped two minutes from now: a CronJob that runs every minute, created
    /// now, has a run due by it, and only one, however long the test takes.
    fn two_minutes_ahead() -> Clock {
        let ahead = Timestamp::now() + SignedDuration::from_mins(2);
        Arc::new(move || ahead)
    }

    /// Runs the controller on `namespace` as `client`, with `clock`, until the test ends.
    fn start(client: Client, namespace: &str, clock: Clock) -> Reports {
        let (controller, jobs) = controller(&client, &Namespaces::only([namespace]));
        let reconciler = CronJobReconciler::new(client, jobs).with_clock(clock);
        harness::start(controller, reconcile, error_policy, Arc::new(reconciler))
    }

    /// Waits until the CronJob `sample` has a status that satisfies `done`.
    async fn status_until(
        client: &Client,
        namespace: &str,
        done: impl Fn(&CronJobStatus) -> bool,
    ) -> CronJob {
        let objects = Api::<CronJob>::namespaced(client.clone(), namespace);
        eventually("the CronJob's status as expected", || async {
            let object = objects.get("sample").await.unwrap();
            object.status.as_ref().is_some_and(&done).then_some(object)
        })
        .await
    }

    /// The names of the Jobs in `namespace`.
    async fn job_names(client: &Client, namespace: &str) -> Vec<String> {
        let jobs = Api::<Job>::namespaced(client.clone(), namespace);
        let list = jobs.list(&ListParams::default()).await.unwrap();
        list.items.iter().map(ResourceExt::name_any).collect()
    }

    /// Creates a Job of `cronjob`'s, scheduled `minutes_ago`, as its controller would.
    async fn create_job(client: &Client, cronjob: &CronJob, minutes_ago: i64) -> Job {
        let scheduled = Timestamp::now() - SignedDuration::from_mins(minutes_ago);
        let job = job_for(cronjob, scheduled).unwrap();
        Api::<Job>::namespaced(client.clone(), &cronjob.namespace().unwrap())
            .create(&PostParams::default(), &job)
            .await
            .unwrap()
    }

    /// Plays the Job controller: `job` ends, successfully or not, with the status the API
    /// server requires of a finished Job.
    async fn finish(client: &Client, job: &Job, succeeded: bool) {
        let now = Timestamp::now().to_string();
        let condition = |type_: &str, reason: &str| {
            json!({ "type": type_, "status": "True", "reason": reason, "message": "",
                    "lastTransitionTime": now, "lastProbeTime": now })
        };
        let status = if succeeded {
            json!({ "startTime": now, "completionTime": now, "succeeded": 1, "conditions": [
                condition("SuccessCriteriaMet", "CompletionsReached"),
                condition("Complete", "CompletionsReached"),
            ] })
        } else {
            json!({ "startTime": now, "failed": 1, "conditions": [
                condition("FailureTarget", "BackoffLimitExceeded"),
                condition("Failed", "BackoffLimitExceeded"),
            ] })
        };
        Api::<Job>::namespaced(client.clone(), &job.namespace().unwrap())
            .patch_status(
                &job.name_any(),
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .unwrap();
    }

    // ANCHOR: test_due
    /// A CronJob whose run is due gets a Job for it: named after the run, made from the
    /// template, owned by the CronJob, and listed in its status. The controller's clock
    /// is two minutes ahead, so the test need not wait for the schedule.
    #[tokio::test]
    async fn a_due_cronjob_creates_a_job() {
        let (env, namespace) = api_server().await;
        let client = env.client();
        let reports = start(client.clone(), &namespace, two_minutes_ahead());
        let cronjob = create(&client, &sample(&namespace)).await;

        let status = status_until(&client, &namespace, |s| s.active.len() == 1).await;
        let status = status.status.unwrap();
        let name = status.active[0].name.clone().unwrap();
        let job = Api::<Job>::namespaced(client.clone(), &namespace)
            .get(&name)
            .await
            .unwrap();
        let scheduled = scheduled_time(&job).expect("the Job is annotated with its run");
        assert_eq!(scheduled.as_second() % 60, 0, "every minute, on the minute");
        assert_eq!(name, format!("sample-{}", scheduled.as_second()));
        assert_eq!(status.last_schedule_time, Some(Time(scheduled)));
        let owner = &job.owner_references()[0];
        assert_eq!(
            (owner.uid.as_str(), owner.controller),
            (cronjob.uid().unwrap().as_str(), Some(true))
        );
        assert_eq!(job.labels()["app"], "hello");
        assert_eq!(
            job_names(&client, &namespace).await,
            [name],
            "one Job per run"
        );
        assert_eq!(reports.failures(), []);
    }
    // ANCHOR_END: test_due

    /// A suspended CronJob starts no Job however late it is.
    #[tokio::test]
    async fn a_suspended_cronjob_starts_nothing() {
        let (env, namespace) = api_server().await;
        let client = env.client();
        let reports = start(client.clone(), &namespace, two_minutes_ahead());
        let mut object = sample(&namespace);
        object.spec.suspend = Some(true);
        let object = create(&client, &object).await;
        let version = object.resource_version().unwrap();
        eventually("a reconcile", || async {
            reports.reconciled("sample", &version).then_some(())
        })
        .await;
        assert_eq!(job_names(&client, &namespace).await, Vec::<String>::new());
    }

    // ANCHOR: test_history
    /// Finished Jobs beyond the history limits are deleted, the oldest first; running
    /// Jobs are kept.
    #[tokio::test]
    async fn history_is_trimmed_to_the_limits() {
        let (env, namespace) = api_server().await;
        let client = env.client();
        let mut object = sample(&namespace);
        object.spec.suspend = Some(true);
        object.spec.successful_jobs_history_limit = Some(1);
        object.spec.failed_jobs_history_limit = Some(1);
        let cronjob = create(&client, &object).await;
        let mut jobs = Vec::new();
        for minutes_ago in [5, 4, 3, 2, 1] {
            jobs.push(create_job(&client, &cronjob, minutes_ago).await);
        }
        let [old_success, success, old_failure, failure, running] = &jobs[..] else {
            unreachable!()
        };
        for (job, succeeded) in [(old_success, true), (success, true)] {
            finish(&client, job, succeeded).await;
        }
        for job in [old_failure, failure] {
            finish(&client, job, false).await;
        }

        let _reports = start(client.clone(), &namespace, Arc::new(Timestamp::now));
        let mut kept: Vec<String> = [success, failure, running]
            .iter()
            .map(|job| job.name_any())
            .collect();
        kept.sort();
        eventually("the history trimmed", || async {
            let mut names = job_names(&client, &namespace).await;
            names.sort();
            (names == kept).then_some(())
        })
        .await;
        let status = status_until(&client, &namespace, |s| s.active.len() == 1).await;
        assert_eq!(
            status.status.unwrap().active[0].name.as_deref(),
            Some(running.name_any().as_str())
        );
    }
    // ANCHOR_END: test_history

    /// With `Replace`, a due run replaces the Job that still runs.
    #[tokio::test]
    async fn replace_deletes_the_running_job() {
        let (env, namespace) = api_server().await;
        let client = env.client();
        let mut object = sample(&namespace);
        object.spec.concurrency_policy = Some(ConcurrencyPolicy::Replace);
        object.spec.suspend = Some(true);
        let cronjob = create(&client, &object).await;
        let running = create_job(&client, &cronjob, 2).await;
        let _reports = start(client.clone(), &namespace, two_minutes_ahead());
        resume(&client, &namespace).await;
        eventually("the running Job replaced", || async {
            let names = job_names(&client, &namespace).await;
            (names.len() == 1 && names[0] != running.name_any()).then_some(())
        })
        .await;
    }

    /// Clears `suspend` of the CronJob `sample`.
    async fn resume(client: &Client, namespace: &str) {
        let patch = Patch::Merge(json!({ "spec": { "suspend": false } }));
        Api::<CronJob>::namespaced(client.clone(), namespace)
            .patch("sample", &PatchParams::default(), &patch)
            .await
            .unwrap();
    }

    /// The schedule's runs: the latest one due after `earliest`, and the next.
    #[test]
    fn schedule_times_find_the_missed_run_and_the_next() {
        let schedule = parse_schedule("*/15 * * * *").unwrap();
        let at = |time: &str| time.parse::<Timestamp>().unwrap();
        let now = at("2026-01-01T10:20:00Z");
        assert_eq!(
            schedule_times(&schedule, at("2026-01-01T09:00:00Z"), now).unwrap(),
            (Some(at("2026-01-01T10:15:00Z")), at("2026-01-01T10:30:00Z"))
        );
        // The run of 10:15 has its Job already.
        assert_eq!(
            schedule_times(&schedule, at("2026-01-01T10:15:00Z"), now).unwrap(),
            (None, at("2026-01-01T10:30:00Z"))
        );
        // A run exactly now is due.
        assert_eq!(
            schedule_times(
                &schedule,
                at("2026-01-01T10:00:00Z"),
                at("2026-01-01T10:15:00Z")
            )
            .unwrap()
            .0,
            Some(at("2026-01-01T10:15:00Z"))
        );
    }

    #[tokio::test]
    async fn failures_back_off_per_object_until_a_success() {
        let (env, namespace) = api_server().await;
        let (jobs, watch) = Lister::reflect(
            Api::namespaced(env.client(), &namespace),
            watcher::Config::default(),
        );
        tokio::spawn(watch);
        let ctx = Arc::new(CronJobReconciler::new(env.client(), jobs));
        let mut object = sample(&namespace);
        object.spec.suspend = Some(true);
        let object = Arc::new(create(&env.client(), &object).await);
        let status =
            kube::core::Status::failure("etcd is unavailable", "InternalError").with_code(500);
        let error = Error::Kube(kube::Error::Api(status.boxed()));
        let first = error_policy(object.clone(), &error, ctx.clone());
        let second = error_policy(object.clone(), &error, ctx.clone());
        assert_ne!(first, second, "consecutive failures wait longer");
        reconcile(object.clone(), ctx.clone()).await.unwrap();
        assert_eq!(
            error_policy(object, &error, ctx),
            first,
            "a success resets the backoff"
        );
    }

    /// Every request the controller makes, its watches as [`controller`] builds them and its
    /// reconciles, must be allowed by the `#[rbac]` rules, and every rule must be used: a
    /// missing or an excessive rule fails with the request or rule named. A replaced Job
    /// makes the controller use them all: it lists and watches, writes the status, deletes
    /// the running Job and creates the new one.
    #[tokio::test]
    async fn rbac_allows_exactly_what_the_controller_uses() {
        let (env, namespace) = api_server().await;
        let client = env.client();
        let audit = RbacAudit::default();
        let audited = testing::wrap(client.clone(), &audit, &Faults::default());
        let mut object = sample(&namespace);
        object.spec.concurrency_policy = Some(ConcurrencyPolicy::Replace);
        object.spec.suspend = Some(true);
        let cronjob = create(&client, &object).await;
        let running = create_job(&client, &cronjob, 2).await;
        let _reports = start(audited, &namespace, two_minutes_ahead());
        resume(&client, &namespace).await;
        status_until(&client, &namespace, |s| {
            s.active.len() == 1 && s.active[0].name != running.metadata.name
        })
        .await;
        if let Err(report) = audit.check_rules(&CronJobReconciler::rbac_rules()) {
            panic!("{report}");
        }
    }

    /// The controller runs as the operator's ServiceAccount with config/rbac applied
    /// (`make manifests` writes role.yaml from the `#[rbac]` rules), so the API server's
    /// own authorizer judges every request: a missing rule fails here with its 403.
    #[tokio::test]
    async fn the_operator_service_account_may_do_what_the_controller_does() {
        let (env, namespace) = api_server().await;
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
        let operator = env.operator_client(&config).await.unwrap();
        let reports = start(operator, &namespace, two_minutes_ahead());
        create(&env.client(), &sample(&namespace)).await;
        status_until(&env.client(), &namespace, |s| s.active.len() == 1).await;
        assert_eq!(reports.failures(), []);
    }
}
