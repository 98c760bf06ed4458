//! Helpers for controller tests on a real API server, shared by the tests `rkb create api
//! --image` generates: run a kube-runtime `Controller` and record what it reconciled
//! ([`start`], [`Reports`]), wait for a condition ([`eventually`]), read a controller's
//! Events ([`events`]), and act as the operator with one RBAC rule removed
//! ([`overlay_without_rule`]). The examples use them too; the sample-controller example
//! keeps an `events` of its own, which reads each Event's type as well.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::events::v1::Event;
use kube::api::ListParams;
use kube::runtime::controller::{self, Action, Controller};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// How long a test waits for a controller to act (generous: CI machines are loaded).
pub const WAIT: Duration = Duration::from_secs(60);

/// Polls `probe` until it returns `Some`, failing the test after [`WAIT`] with `what`.
pub async fn eventually<T, F: Future<Output = Option<T>>>(
    what: &str,
    mut probe: impl FnMut() -> F,
) -> T {
    let poll = async {
        loop {
            if let Some(value) = probe().await {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(WAIT, poll)
        .await
        .unwrap_or_else(|_| panic!("not within {WAIT:?}: {what}"))
}

/// Waits until `reconciles()` (how many reconciles a controller has started) is above zero
/// and has not moved for a second: no change is pending, so only a new change can start
/// another reconcile.
pub async fn settled(reconciles: impl Fn() -> usize) {
    let mut seen = reconciles();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = reconciles();
        if now > 0 && now == seen {
            return;
        }
        seen = now;
    }
}

/// The writes among `requests` (every verb but get, list and watch), as `verb resource`,
/// sorted: what a controller's work cost the API server beyond its reads.
pub fn writes(requests: &[crate::Access]) -> Vec<String> {
    let mut writes: Vec<_> = requests
        .iter()
        .filter(|r| !["get", "list", "watch"].contains(&r.verb.as_str()))
        .map(|r| format!("{} {}", r.verb, r.resource))
        .collect();
    writes.sort();
    writes
}

/// One reconcile, as the controller ran it.
#[derive(Clone, Debug)]
pub struct Report {
    pub name: String,
    /// The resourceVersion of the object the reconcile was given.
    pub resource_version: String,
    pub result: Result<(), Failure>,
}

/// A failed reconcile: the API server's HTTP status, when it answered, and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: Option<u16>,
    pub message: String,
}

/// What a controller started by [`start`] reported, in order.
#[derive(Clone, Debug, Default)]
pub struct Reports(Arc<Mutex<Vec<Report>>>);

impl Reports {
    pub fn all(&self) -> Vec<Report> {
        self.0
            .lock()
            .expect("no test panicked holding the lock")
            .clone()
    }

    /// Whether `name` was reconciled successfully at `resource_version`.
    pub fn reconciled(&self, name: &str, resource_version: &str) -> bool {
        self.all()
            .iter()
            .any(|r| r.name == name && r.resource_version == resource_version && r.result.is_ok())
    }

    pub fn failures(&self) -> Vec<Failure> {
        self.all()
            .into_iter()
            .filter_map(|r| r.result.err())
            .collect()
    }

    fn push(&self, report: Report) {
        self.0
            .lock()
            .expect("no test panicked holding the lock")
            .push(report);
    }
}

/// The HTTP status of the API server's answer behind `error`, if one is in its chain
/// (as a `kube::Error::Api`).
pub fn status_code(error: &(dyn std::error::Error + 'static)) -> Option<u16> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(kube::Error::Api(status)) = error.downcast_ref::<kube::Error>() {
            return Some(status.code);
        }
        next = error.source();
    }
    None
}

/// Runs `controller` with the reconciler's own `reconcile` and `error_policy` until the
/// test ends, recording every reconcile's outcome.
pub fn start<K, Ctx, Fut, E>(
    controller: Controller<K>,
    mut reconcile: impl FnMut(Arc<K>, Arc<Ctx>) -> Fut + Send + 'static,
    error_policy: impl Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
    ctx: Arc<Ctx>,
) -> Reports
where
    K: Clone
        + Resource<DynamicType = ()>
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    Ctx: Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let reports = Reports::default();
    let sink = reports.clone();
    let recording = move |object: Arc<K>, ctx: Arc<Ctx>| {
        let sink = sink.clone();
        let (name, resource_version) = (
            object.name_any(),
            object.resource_version().unwrap_or_default(),
        );
        let reconciled = reconcile(object, ctx);
        async move {
            let result = reconciled.await;
            sink.push(Report {
                name,
                resource_version,
                result: result.as_ref().map(|_| ()).map_err(|error| Failure {
                    code: status_code(error),
                    message: error.to_string(),
                }),
            });
            result
        }
    };
    let running = controller
        .run(recording, error_policy, ctx)
        .for_each(|result| async move {
            if let Err(controller::Error::QueueError(error)) = result {
                eprintln!("watch failed: {error}");
            }
        });
    tokio::spawn(running);
    reports
}

/// An Event a controller recorded, in short.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Recorded {
    pub reason: String,
    /// The kind of the Event's `related` object (empty when none).
    pub related_kind: String,
    pub note: String,
    /// How many times it happened (Events of one series count once each).
    pub count: i32,
}

/// The Events `reporting_controller` recorded in `namespace`, sorted. The API server
/// records some of its own, which are left out.
pub async fn events(client: &Client, namespace: &str, reporting_controller: &str) -> Vec<Recorded> {
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    let mut out: Vec<Recorded> = events
        .list(&ListParams::default())
        .await
        .expect("Events can be listed")
        .items
        .into_iter()
        .filter(|e| e.reporting_controller.as_deref() == Some(reporting_controller))
        .map(|e| Recorded {
            reason: e.reason.unwrap_or_default(),
            related_kind: e.related.and_then(|r| r.kind).unwrap_or_default(),
            note: e.note.unwrap_or_default(),
            count: e.series.map_or(1, |s| s.count),
        })
        .collect();
    out.sort();
    out
}

/// A kustomization over `<project>/config/default` whose manager ClusterRole (the one in
/// `config/rbac/role.yaml`, or a namespace-scoped operator's Role) lacks its rule on `resource`, written below `scratch`. It has
/// its own namespace and name prefix, so the ServiceAccount and roles are this test's
/// alone: `Environment::operator_client` on it gives a client that the API server refuses
/// exactly that rule's requests (a 403).
pub fn overlay_without_rule(
    project: &Path,
    scratch: &Path,
    namespace: &str,
    resource: &str,
) -> PathBuf {
    let role_file = project.join("config/rbac/role.yaml");
    let role = std::fs::read_to_string(&role_file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", role_file.display()));
    let objects = rkb_envtest::parse_yaml(&role).expect("role.yaml is YAML");
    // The manager's ClusterRole, or a namespace-scoped operator's Role in its namespace.
    let kind_of = |o: &kube::api::DynamicObject| o.types.as_ref().map(|t| t.kind.clone());
    let role = objects
        .iter()
        .find(|o| kind_of(o).as_deref() == Some("ClusterRole"))
        .or_else(|| {
            objects
                .iter()
                .find(|o| kind_of(o).as_deref() == Some("Role"))
        })
        .expect("role.yaml holds the manager's ClusterRole or Role");
    let kind = kind_of(role).unwrap_or_default();
    let rules = role.data["rules"].as_array().cloned().unwrap_or_default();
    let index = rules
        .iter()
        .position(|r| {
            r["resources"]
                .as_array()
                .is_some_and(|rs| rs.iter().any(|x| x == resource))
        })
        .unwrap_or_else(|| panic!("role.yaml has no rule on {resource}"));
    let dir = scratch.join(format!("rbac-{namespace}"));
    std::fs::create_dir_all(&dir).expect("the scratch directory is writable");
    // kustomize takes bases by relative path only: up to the root, then down.
    let up = "../".repeat(dir.components().count() - 1);
    let base = project.join("config/default");
    let base = format!("{up}{}", base.strip_prefix("/").unwrap_or(&base).display());
    let kustomization = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\n\
         kind: Kustomization\n\
         namespace: {namespace}\n\
         namePrefix: {namespace}-\n\
         resources:\n- {base}\n\
         patches:\n\
         - target:\n    kind: {kind}\n    name: .*-{name}$\n  \
           patch: |-\n    - op: remove\n      path: /rules/{index}\n",
        name = role.name_any(),
    );
    std::fs::write(dir.join("kustomization.yaml"), kustomization)
        .expect("the scratch directory is writable");
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum ReconcileError {
        #[error("request failed: {0}")]
        Kube(#[from] kube::Error),
        #[error("no namespace")]
        NoNamespace,
    }

    #[test]
    fn status_codes_are_found_in_the_error_chain() {
        let status = kube::core::Status::failure("conflict", "Conflict").with_code(409);
        let error = ReconcileError::from(kube::Error::Api(status.boxed()));
        assert_eq!(status_code(&error), Some(409));
        assert_eq!(status_code(&ReconcileError::NoNamespace), None);
    }
}
