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

//! Reconciles BlueGreen objects (app.demo.kakao.com/v1): one ClusterIP Service named after
//! the BlueGreen that selects the pods of `spec.routeTo`, and one Deployment per declared pod
//! spec (`<name>-blue`, `<name>-green`).
//!
//! Every object the controller makes carries the labels
//! `app.kubernetes.io/managed-by: bluegreen-controller` and `app.kubernetes.io/name: <name>`;
//! Deployments and their pods also carry `app.kubernetes.io/phase: blue|green`, which is what
//! the Service selects. The objects are written with server-side apply (field manager
//! `bluegreen-controller`) and have the BlueGreen as their controller owner, so deleting the
//! BlueGreen deletes them (garbage collection).
//!
//! Objects of the same name that the BlueGreen does not control (no controller owner reference
//! with its uid) are never adopted, changed or deleted: the reconcile does everything else,
//! then fails with [`Error::NotOwned`] so that the conflict is logged and retried with backoff
//! until someone removes or renames the other object.
//!
//! The reconciler reads the Services and Deployments from the controller's watches
//! ([`rkb_runtime::cache`]), which hold only the objects carrying this controller's
//! `managed-by` label, and writes only what differs from them: a BlueGreen that is as
//! declared costs the API server no request. Only an object the watches do not hold is read
//! from the API server (see [`reconcile`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec, Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{DeleteParams, Preconditions};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::cache::{self, OwnWrites, Scoped};
use rkb_runtime::client::Object;
use rkb_runtime::manager::Context;
use rkb_runtime::{Lister, NamespacedApi, Rbac, TypedApi};

use crate::api::app::v1::{BlueGreen, BlueGreenStatus, RouteTo};

/// The `app.kubernetes.io/managed-by` value of every object this controller makes, and the
/// field manager of its server-side applies.
pub const MANAGER: &str = "bluegreen-controller";
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const LABEL_NAME: &str = "app.kubernetes.io/name";
pub const LABEL_PHASE: &str = "app.kubernetes.io/phase";

/// State shared by every reconcile of BlueGreen objects.
///
/// The `rbac` attributes are exactly the requests the controller makes (the RBAC audit test
/// checks config/rbac/role.yaml against them). `create` on services and deployments is
/// there because a server-side apply that creates an object is also authorized as `create`;
/// `get` because a Service or Deployment the watches do not hold (not labelled by this
/// controller) is looked up before the apply that would create it.
#[derive(Rbac)]
#[rbac(groups = ["app.demo.kakao.com"], resources = ["bluegreens"], verbs = [list, watch])]
#[rbac(groups = ["app.demo.kakao.com"], resources = ["bluegreens/status"], verbs = [patch])]
#[rbac(groups = ["core"], resources = ["services"], verbs = [get, list, watch, create, patch])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, list, watch, create, patch, delete])]
pub struct BlueGreenReconciler {
    pub client: Client,
    caches: Caches,
    backoff: ErrorBackoff,
}

/// What the reconciler reads instead of asking the API server, and what it wrote: shared
/// with the watches of the Controller that [`controller`] makes, of the objects labelled
/// `app.kubernetes.io/managed-by: bluegreen-controller`.
#[derive(Clone, Debug)]
pub struct Caches {
    pub deployments: Lister<Deployment>,
    pub services: Lister<Service>,
    /// The BlueGreens this controller wrote, for reconciles of copies its writes replaced.
    writes: OwnWrites<BlueGreen>,
    /// The Deployments and Services this controller applied: the watch bringing one back
    /// is no change.
    deployment_writes: OwnWrites<Deployment>,
    service_writes: OwnWrites<Service>,
}

impl Caches {
    /// Caches reading `deployments` and `services`, filled by watches of their own rather
    /// than a Controller's, for reconciles called directly (the tests).
    pub fn new(deployments: Lister<Deployment>, services: Lister<Service>) -> Self {
        Caches {
            deployments,
            services,
            writes: OwnWrites::default(),
            deployment_writes: OwnWrites::default(),
            service_writes: OwnWrites::default(),
        }
    }
}

impl BlueGreenReconciler {
    /// `caches` are the ones [`controller`] returns with the Controller.
    pub fn new(client: Client, caches: Caches) -> Self {
        Self {
            client,
            caches,
            backoff: ErrorBackoff::default(),
        }
    }
}

/// The object `name` as the watch behind `cache` holds it, or else as the API server has it.
/// The watches hold only the objects labelled by this controller: one they do not hold may
/// still exist (someone else's, or one of ours whose label was removed), and an apply must
/// not take it over unseen. So this read is fresh, and costs a request only while the object
/// is missing from the watch: before it is created, or while it is not ours.
async fn cached_or_fresh<K: Object>(
    cache: &Lister<K>,
    api: &TypedApi<K>,
    namespace: &str,
    name: &str,
) -> Result<Option<Arc<K>>, Error> {
    cache.wait_until_synced().await;
    match cache.get(namespace, name) {
        Some(cached) => Ok(Some(cached)),
        None => Ok(api.get_or_none(name).await?.map(Arc::new)),
    }
}

/// Why a reconcile failed; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
    #[error("{0} already exists and is not controlled by this BlueGreen: delete or rename it")]
    NotOwned(String),
    #[error("the BlueGreen has no {0}")]
    Incomplete(&'static str),
}

/// The labels of the objects of the BlueGreen `name`; with a phase, those of its pods.
pub fn labels(name: &str, phase: Option<RouteTo>) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([
        (LABEL_MANAGED_BY.to_owned(), MANAGER.to_owned()),
        (LABEL_NAME.to_owned(), name.to_owned()),
    ]);
    if let Some(phase) = phase {
        labels.insert(LABEL_PHASE.to_owned(), phase.phase().to_owned());
    }
    labels
}

/// The name of the Deployment of `phase`: `<name>-blue` or `<name>-green`.
pub fn deployment_name(name: &str, phase: RouteTo) -> String {
    format!("{name}-{}", phase.phase())
}

/// A controller owner reference to `object`. `blockOwnerDeletion` is left unset: setting it
/// needs `update` on `bluegreens/finalizers` where the OwnerReferencesPermissionEnforcement
/// admission plugin is on, and background deletion removes the children without it.
fn owner_reference(object: &BlueGreen) -> Result<OwnerReference, Error> {
    let mut owner = object
        .controller_owner_ref(&())
        .ok_or(Error::Incomplete("metadata.uid"))?;
    owner.block_owner_deletion = None;
    Ok(owner)
}

fn metadata(
    object: &BlueGreen,
    name: String,
    labels: BTreeMap<String, String>,
) -> Result<ObjectMeta, Error> {
    Ok(ObjectMeta {
        name: Some(name),
        namespace: object.namespace(),
        labels: Some(labels),
        owner_references: Some(vec![owner_reference(object)?]),
        ..ObjectMeta::default()
    })
}

/// The Service `<name>`: port 80 to port 80 of the pods of `spec.routeTo`.
pub fn desired_service(object: &BlueGreen) -> Result<Service, Error> {
    let name = object.name_any();
    Ok(Service {
        metadata: metadata(object, name.clone(), labels(&name, None))?,
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".into()),
            selector: Some(labels(&name, Some(object.spec.route_to))),
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                protocol: Some("TCP".into()),
                port: 80,
                target_port: Some(IntOrString::Int(80)),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    })
}

/// The Deployment of `phase`: `pod_spec`, labelled with the phase. `replicas` is left out,
/// so `kubectl scale` or a HorizontalPodAutoscaler owns it (the API server defaults it to 1
/// on creation) and no reconcile reverts it.
pub fn desired_deployment(
    object: &BlueGreen,
    phase: RouteTo,
    pod_spec: &PodSpec,
) -> Result<Deployment, Error> {
    let name = object.name_any();
    let labels = labels(&name, Some(phase));
    Ok(Deployment {
        metadata: metadata(object, deployment_name(&name, phase), labels.clone())?,
        spec: DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                match_expressions: None,
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod_spec.clone()),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    })
}

/// Whether `child` has `owner_uid` as its controller.
fn controlled_by(child: &ObjectMeta, owner_uid: &str) -> bool {
    child
        .owner_references
        .iter()
        .flatten()
        .any(|r| r.controller == Some(true) && r.uid == owner_uid)
}

/// Makes the cluster match what the BlueGreen declares. It runs after every change (of the
/// BlueGreen's spec or metadata, or of a Service or Deployment it owns) and after every
/// failure, so it must be idempotent. It reads the Service and Deployments from the
/// controller's watches (from the API server only when a watch does not hold them, see
/// [`cached_or_fresh`]) and sends only the writes that change something.
pub async fn reconcile(
    object: Arc<BlueGreen>,
    ctx: Arc<BlueGreenReconciler>,
) -> Result<Action, Error> {
    // The watch may not have delivered this controller's last status write yet.
    let object = ctx.caches.writes.latest(object);
    let key = ObjectRef::from(object.as_ref()).to_string();
    if object.meta().deletion_timestamp.is_some() {
        // Garbage collection removes the Service and Deployments.
        ctx.caches.writes.forget(&object);
        return Ok(Action::await_change());
    }
    let namespace = object
        .namespace()
        .ok_or(Error::Incomplete("metadata.namespace"))?;
    let uid = object.uid().ok_or(Error::Incomplete("metadata.uid"))?;
    let name = object.name_any();
    let client = ctx.client.clone();
    let mut not_owned = Vec::new();

    // The Service: its selector is the switch between the phases.
    let services = Service::api(client.clone(), &namespace).with_field_manager(MANAGER);
    let routed = match cached_or_fresh(&ctx.caches.services, &services, &namespace, &name).await? {
        Some(other) if !controlled_by(&other.metadata, &uid) => {
            not_owned.push(format!("Service {namespace}/{name}"));
            false
        }
        existing => {
            // Noted as this controller's write: the watch bringing it back is no change.
            let desired = desired_service(&object)?;
            let applied = services.apply_if_changed(&desired, existing.as_deref());
            ctx.caches.service_writes.apply(&desired, applied).await?;
            true
        }
    };

    // One Deployment per declared pod spec; a removed spec deletes its Deployment.
    let deployments = Deployment::api(client.clone(), &namespace).with_field_manager(MANAGER);
    for phase in RouteTo::ALL {
        let deployment = deployment_name(&name, phase);
        let Some(pod_spec) = object.spec.pod_spec(phase) else {
            // Deleted only if the watch holds it (it carries this controller's label) and this
            // BlueGreen controls it; no lookup of a Deployment that is not declared, so that a
            // BlueGreen with one phase costs no request per reconcile. (One of ours whose
            // label was removed goes with the BlueGreen, by its owner reference.)
            ctx.caches.deployments.wait_until_synced().await;
            let existing = ctx.caches.deployments.get(&namespace, &deployment);
            if existing
                .as_ref()
                .is_some_and(|d| controlled_by(&d.metadata, &uid))
            {
                delete(&deployments, existing.as_deref()).await?;
            }
            continue;
        };
        let existing = cached_or_fresh(
            &ctx.caches.deployments,
            &deployments,
            &namespace,
            &deployment,
        )
        .await?;
        match existing {
            Some(other) if !controlled_by(&other.metadata, &uid) => {
                not_owned.push(format!("Deployment {namespace}/{deployment}"));
            }
            existing => {
                let desired = desired_deployment(&object, phase, pod_spec)?;
                let applied = deployments.apply_if_changed(&desired, existing.as_deref());
                ctx.caches
                    .deployment_writes
                    .apply(&desired, applied)
                    .await?;
            }
        }
    }

    // Status: the phase the Service now selects (only written when it changed).
    let route_to = Some(object.spec.route_to);
    if routed && object.status.as_ref().and_then(|s| s.route_to) != route_to {
        let written = BlueGreen::api(client, &namespace)
            .with_field_manager(MANAGER)
            .apply_status(object.as_ref(), &BlueGreenStatus { route_to })
            .await?;
        ctx.caches.writes.record(object.as_ref(), written);
    }

    if !not_owned.is_empty() {
        return Err(Error::NotOwned(not_owned.join(", ")));
    }
    tracing::info!(object = %key, route_to = ?object.spec.route_to, "reconciled");
    ctx.backoff.reset_for(object.as_ref());
    Ok(Action::await_change())
}

/// Deletes `deployment`, but only the very object that was checked to be ours (uid
/// precondition); one already gone is fine.
async fn delete(
    deployments: &TypedApi<Deployment>,
    deployment: Option<&Deployment>,
) -> Result<(), Error> {
    let Some(deployment) = deployment else {
        return Ok(());
    };
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: deployment.uid(),
            resource_version: None,
        }),
        ..DeleteParams::background()
    };
    match deployments.delete(&deployment.name_any(), &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Retries a failed reconcile with per-object exponential backoff (keyed by UID, so a
/// recreated BlueGreen starts afresh), as controller-runtime does.
pub fn error_policy(
    object: Arc<BlueGreen>,
    error: &Error,
    ctx: Arc<BlueGreenReconciler>,
) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next_for(object.as_ref());
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// The Controller of `objects`, and the caches of its watches for the reconciler: a change
/// of a BlueGreen's spec or metadata (not of its status alone, which this controller
/// writes) reconciles it, and so does a change to a Service or Deployment it owns, except
/// the version a reconcile applied itself (that reconcile went on with it); only the
/// objects this controller labelled are cached.
pub fn controller(
    objects: impl Into<Scoped<BlueGreen>>,
    deployments: impl Into<Scoped<Deployment>>,
    services: impl Into<Scoped<Service>>,
) -> (Controller<BlueGreen>, Caches) {
    let writes = OwnWrites::default();
    let (deployment_writes, service_writes) = (OwnWrites::default(), OwnWrites::default());
    let config = watcher::Config::default().any_semantic();
    let controller = cache::controller_ignoring_own(objects, config, &writes);
    let (controller, deployments) =
        cache::owns_ignoring_own(controller, deployments, ours(), &deployment_writes);
    let (controller, services) =
        cache::owns_ignoring_own(controller, services, ours(), &service_writes);
    let caches = Caches {
        deployments,
        services,
        writes,
        deployment_writes,
        service_writes,
    };
    (controller, caches)
}

/// The configuration of the watches of Services and Deployments: this controller's only.
pub fn ours() -> watcher::Config {
    watcher::Config::default()
        .any_semantic()
        .labels(&format!("{LABEL_MANAGED_BY}={MANAGER}"))
}

/// Runs the BlueGreen controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let client = ctx.client();
    // All namespaces, or those of --watch-namespace.
    let namespaces = ctx.namespaces();
    // Fail fast with a hint rather than a watch that retries forever.
    namespaces
        .apis::<BlueGreen>(&client)
        .check_listable(
            "bluegreens.app.demo.kakao.com",
            "is the CRD installed (`make install`) and is the manager allowed to?",
        )
        .await?;
    let (controller, caches) = controller(
        namespaces.apis(&client),
        namespaces.apis(&client),
        namespaces.apis(&client),
    );
    let reconciler = Arc::new(BlueGreenReconciler::new(client, caches));
    ctx.run(controller, reconcile, error_policy, reconciler)
        .await
}

#[cfg(test)]
mod tests;
