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

//! Reconciles Memcached objects (cache.example.com/v1alpha1): each one runs `size` pods of the
//! image named by `MEMCACHED_IMAGE` in a Deployment it owns, kept as declared by server-side
//! apply (a rescale alone by a patch of `spec.replicas`); the status says whether the pods
//! are available, and a finalizer cleans up.
//!
//! It reads from its watches, not from the API server (the Deployments from the
//! controller's own cache, [`rkb_runtime::cache`]), and skips every write that would change
//! nothing, so an object that is as declared costs the API server no request.
//!
//! Scaffolded by `rkb create api --image` (kubebuilder's deploy-image plugin); the tests
//! are in src/controller/memcached/tests.rs.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, ObjectReference, PodSecurityContext, PodSpec,
    PodTemplateSpec, ResourceRequirements, SeccompProfile, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::cache::{self, Namespaces, OwnWrites, SharedCache};
use rkb_runtime::events::Events;
use rkb_runtime::manager::Context;
use rkb_runtime::{Lister, NamespacedApi, Rbac, TypedApi};

use crate::api::cache::v1alpha1::Memcached;

/// The manager's environment variable that names the image to run (config/manager sets
/// it), so the image can change without rebuilding the operator.
pub const IMAGE_ENV: &str = "MEMCACHED_IMAGE";
/// Held by every Memcached until its clean-up has run.
pub const FINALIZER: &str = "cache.example.com/finalizer";
/// The reporting controller of the Events this controller records.
pub const CONTROLLER_NAME: &str = "memcached-controller";
/// The non-root user the containers run as.
pub const RUN_AS_USER: i64 = 1001;

/// State shared by every reconcile of Memcached objects.
///
/// The `rbac` attributes list exactly what the reconciler and its watches use (the RBAC
/// tests fail on a missing or an unused rule); `make manifests` turns them into
/// config/rbac/role.yaml. `patch` on memcacheds adds and removes the finalizer, and
/// `update` on their status writes the conditions. A Deployment is created and updated by
/// server-side apply, a `patch` that the API server also authorizes as a `create` when the
/// Deployment does not exist yet, and rescaled by a merge patch (a `patch` too); it is read
/// from the controller's watch, so no `get`.
#[derive(Rbac)]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [list, watch, patch])]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds/status"], verbs = [update])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [list, watch, create, patch, delete])]
#[rbac(groups = ["events.k8s.io"], resources = ["events"], verbs = [create, patch])]
pub struct MemcachedReconciler {
    pub client: Client,
    /// The image of the pods, from [`IMAGE_ENV`].
    pub image: String,
    /// The controller's watches and what the reconciles wrote (see [`controller`]).
    caches: Caches,
    /// Sends the Events off the reconcile path, in order.
    events: Events,
    backoff: ErrorBackoff,
}

impl MemcachedReconciler {
    /// `caches` are those [`controller`] returns with the controller.
    pub fn new(client: Client, image: impl Into<String>, caches: Caches) -> Self {
        let reporter = Reporter {
            controller: CONTROLLER_NAME.into(),
            // In a pod, HOSTNAME is the pod's name: which replica reported the Event.
            instance: std::env::var("HOSTNAME").ok(),
        };
        Self {
            events: Events::new(client.clone(), reporter, Events::CAPACITY),
            client,
            image: image.into(),
            caches,
            backoff: ErrorBackoff::default(),
        }
    }

    /// Records an Event about `object` (and `related`, the Deployment): queued, and sent by
    /// a task of its own, so the reconcile does not wait for the request. Best effort, as in
    /// controller-runtime: a failure is logged, never a reason to fail the reconcile.
    fn record(
        &self,
        object: &Memcached,
        related: Option<ObjectReference>,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: related,
        };
        self.events.publish(event, reference(object));
    }
}

impl std::fmt::Debug for MemcachedReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemcachedReconciler")
            .field("image", &self.image)
            .finish_non_exhaustive()
    }
}

/// Why a reconcile failed; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
    #[error("the Memcached has no {0}")]
    MissingField(&'static str),
}

impl Error {
    /// Someone else wrote the object between this reconcile's read and its write (409).
    /// Nothing is wrong: the watch brings the new version and the reconcile is retried.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Error::Kube(kube::Error::Api(status)) if status.code == 409)
    }
}

/// The image named by [`IMAGE_ENV`], read once at start-up.
pub fn image_from_env() -> anyhow::Result<String> {
    match std::env::var(IMAGE_ENV) {
        Ok(image) if !image.trim().is_empty() => Ok(image),
        _ => anyhow::bail!(
            "{IMAGE_ENV} is not set: it names the image the Memcached controller deploys. \
             config/manager/manager.yaml sets it in the cluster; for `make run`, \
             export {IMAGE_ENV}=memcached:1.6.26-alpine3.19"
        ),
    }
}

/// The labels of a Memcached's pods (and the Deployment's selector, which never changes).
pub fn labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".into(), "memcached".into()),
        ("app.kubernetes.io/instance".into(), name.into()),
        (
            "app.kubernetes.io/managed-by".into(),
            "memcached-image".into(),
        ),
    ])
}

/// The Deployment `object` asks for: `size` pods of `image`, owned by `object` (so the
/// garbage collector deletes it too), hardened like the manager: non-root, read-only root
/// filesystem, no privilege escalation, no capabilities, RuntimeDefault seccomp, and
/// resource requests and limits.
// The spec's `.into()` is the identity on k8s-openapi's `v1_37` and wraps it in `Some`
// before: clippy sees only the level it builds.
#[allow(clippy::useless_conversion)]
pub fn desired_deployment(object: &Memcached, image: &str) -> Result<Deployment, Error> {
    let name = object.name_any();
    let mut owner = object
        .controller_owner_ref(&())
        .ok_or(Error::MissingField("metadata.uid"))?;
    // blockOwnerDeletion would need `update` on memcacheds/finalizers where the
    // OwnerReferencesPermissionEnforcement admission plugin runs.
    owner.block_owner_deletion = None;
    let quantities = |cpu: &str, memory: &str| {
        BTreeMap::from([
            ("cpu".to_owned(), Quantity(cpu.into())),
            ("memory".to_owned(), Quantity(memory.into())),
        ])
    };
    let container = Container {
        name: "memcached".into(),
        image: Some(image.into()),
        image_pull_policy: Some("IfNotPresent".into()),
        command: Some(
            ["memcached", "--memory-limit=64", "-o", "modern", "-v"]
                .map(String::from)
                .to_vec(),
        ),
        ports: Some(vec![ContainerPort {
            name: Some("memcached".into()),
            container_port: object.spec.port(),
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        security_context: Some(SecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(RUN_AS_USER),
            allow_privilege_escalation: Some(false),
            // TODO(user): set false, or mount an emptyDir where it writes, if the image
            // writes to its own filesystem.
            read_only_root_filesystem: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".into()]),
                ..Capabilities::default()
            }),
            ..SecurityContext::default()
        }),
        // TODO(user): size these for the image.
        resources: Some(ResourceRequirements {
            requests: Some(quantities("10m", "64Mi")),
            limits: Some(quantities("500m", "128Mi")),
            ..ResourceRequirements::default()
        }),
        ..Container::default()
    };
    Ok(Deployment {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: object.namespace(),
            labels: Some(labels(&name)),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        // `.into()`: k8s-openapi makes a Deployment's spec required from Kubernetes 1.37 on
        // and optional before, and this compiles on either.
        spec: DeploymentSpec {
            replicas: Some(object.spec.size),
            selector: LabelSelector {
                match_labels: Some(labels(&name)),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(&name)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(RUN_AS_USER),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            ..SeccompProfile::default()
                        }),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![container],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }
        .into(),
        ..Deployment::default()
    })
}

/// The Deployment's spec on every Kubernetes version k8s-openapi is built for (required
/// from 1.37 on, optional before).
pub fn deployment_spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
    Option::from(&deployment.spec)
}

/// A reference to `object` for an Event, without the resourceVersion (which would make
/// every repeat a new Event rather than one series).
fn reference<K: Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    let mut reference = object.object_ref(&());
    reference.resource_version = None;
    reference
}

/// A condition of `object`'s current generation, keeping the transition time of the
/// condition of the same type it replaces when the status did not change.
fn condition(
    object: &Memcached,
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
) -> Condition {
    let status = if status { "True" } else { "False" };
    let previous = object
        .status
        .iter()
        .flat_map(|s| &s.conditions)
        .find(|c| c.type_ == type_);
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message,
        observed_generation: object.metadata.generation,
        last_transition_time: match previous {
            Some(p) if p.status == status => p.last_transition_time.clone(),
            _ => Time(Timestamp::now()),
        },
    }
}

/// The conditions for a Deployment with `available` of `size` pods available.
fn conditions(object: &Memcached, available: i32) -> Vec<Condition> {
    let size = object.spec.size;
    let ready = available >= size;
    let message = format!("{available} of {size} pods are available");
    vec![
        condition(
            object,
            "Available",
            ready,
            if ready {
                "DeploymentAvailable"
            } else {
                "DeploymentUnavailable"
            },
            message.clone(),
        ),
        condition(
            object,
            "Progressing",
            !ready,
            if ready { "Complete" } else { "Scaling" },
            message,
        ),
        condition(
            object,
            "Degraded",
            false,
            "AsExpected",
            "The last reconcile succeeded.".into(),
        ),
    ]
}

/// Writes the Deployment `desired`, given the watch's copy `existing`: nothing when it is
/// as desired; a merge patch of `spec.replicas` alone when only the replicas differ (a
/// rescale), by this controller's field manager, which then owns `spec.replicas` through
/// that update (another applier setting it still conflicts with this controller), for less
/// of the API server's time than a server-side apply; else a server-side apply of the
/// whole Deployment, which takes `spec.replicas` back with the rest. Returns the
/// Deployment as written, if it was.
async fn write_deployment(
    deployments: &TypedApi<Deployment>,
    desired: &Deployment,
    existing: Option<&Deployment>,
) -> kube::Result<Option<Deployment>> {
    let replicas = |deployment: &Deployment| deployment_spec(deployment).and_then(|s| s.replicas);
    if let Some(existing) = existing
        && replicas(existing) != replicas(desired)
    {
        let mut resized = desired.clone();
        if let Some(spec) = Option::<&mut DeploymentSpec>::from(&mut resized.spec) {
            spec.replicas = replicas(existing);
        }
        if deployments.apply_changes_nothing(&resized, existing)? {
            let params = PatchParams {
                field_manager: Some(deployments.field_manager().into()),
                ..PatchParams::default()
            };
            let patch =
                Patch::Merge(serde_json::json!({ "spec": { "replicas": replicas(desired) } }));
            return deployments
                .patch(&desired.name_any(), &params, &patch)
                .await
                .map(Some);
        }
    }
    deployments.apply_if_changed(desired, existing).await
}

/// Writes `updates` into the status's conditions, through the status subresource, unless
/// they are there already; returns the object as written, if it was, and records it in
/// `writes`. An update tested against the object's resourceVersion, as controller-runtime's
/// `Status().Update`: the API server serves it for less than a server-side apply, as no
/// other writer needs to own these fields. It writes the whole status, so every other
/// writer's condition is sent back as read; a stale copy fails with a conflict (409),
/// retried once the watch brings the newer object.
async fn report(
    client: &Client,
    writes: &OwnWrites<Memcached>,
    object: &Memcached,
    updates: Vec<Condition>,
) -> Result<Option<Memcached>, Error> {
    let current = object
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    if updates.iter().all(|update| current.contains(update)) {
        return Ok(None);
    }
    let mut conditions = current.to_vec();
    for update in updates {
        match conditions.iter_mut().find(|c| c.type_ == update.type_) {
            Some(condition) => *condition = update,
            None => conditions.push(update),
        }
    }
    let namespace = object
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let mut updated = object.clone();
    updated.status.get_or_insert_default().conditions = conditions;
    let written = Memcached::api(client.clone(), &namespace)
        .update_status(&updated)
        .await?;
    writes.record(object, written.clone());
    Ok(Some(written))
}

/// Makes the cluster match what the Memcached declares. It runs after every change (of
/// the Memcached or of its Deployment) and after every failure, so it is idempotent:
/// every write declares the whole desired state.
pub async fn reconcile(
    object: Arc<Memcached>,
    ctx: Arc<MemcachedReconciler>,
) -> Result<Action, Error> {
    // The watch may not have delivered this controller's last write of the object yet.
    let object = ctx.caches.writes.latest(object);
    let key = ObjectRef::from(object.as_ref()).to_string();
    let namespace = object
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let objects = Memcached::api(ctx.client.clone(), &namespace);
    if object.metadata.deletion_timestamp.is_some() {
        if object.finalizers().iter().any(|f| f == FINALIZER) {
            let finalized = async {
                let object = finalize(&object, &ctx).await?;
                objects.remove_finalizer(&object, FINALIZER).await?;
                Ok::<_, Error>(())
            };
            match finalized.await {
                Ok(()) => tracing::info!(object = %key, "finalized"),
                // A stale copy of an object that an earlier reconcile finalized: it is gone.
                Err(Error::Kube(kube::Error::Api(status))) if status.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        ctx.caches.writes.forget(&object);
        return Ok(Action::await_change());
    }
    // The finalizer first: from then on, deleting the object waits for `finalize`.
    if !object.finalizers().iter().any(|f| f == FINALIZER) {
        let before = object.as_ref().clone();
        // Recorded: the reconcile goes on with the object written, and the watch bringing
        // it back is no reason to reconcile again.
        ctx.caches
            .writes
            .write(&before, objects.add_finalizer(&before, FINALIZER))
            .await?;
    }
    let object = ctx.caches.writes.latest(object);

    let name = object.name_any();
    let size = object.spec.size;
    let deployments = Deployment::api(ctx.client.clone(), &namespace);
    // From the watch's cache, synced before the first read.
    ctx.caches.deployments.wait_until_synced().await;
    let existing = ctx.caches.deployments.get(&namespace, &name);
    let desired = desired_deployment(&object, &ctx.image)?;
    // Noted as this controller's write: the watch bringing it back is no change.
    let applied = ctx.caches.deployment_writes.apply(
        &desired,
        write_deployment(&deployments, &desired, existing.as_deref()),
    );
    let deployment = match applied.await {
        Ok(Some(applied)) => Arc::new(applied),
        Ok(None) => existing
            .clone()
            .expect("only an existing Deployment can be unchanged"),
        Err(error) => {
            let error = Error::from(error);
            if !error.is_conflict() {
                let degraded = condition(
                    &object,
                    "Degraded",
                    true,
                    "DeploymentFailed",
                    format!("Cannot apply Deployment {name}: {error}"),
                );
                if let Err(also) =
                    report(&ctx.client, &ctx.caches.writes, &object, vec![degraded]).await
                {
                    tracing::debug!(object = %key, error = %also, "cannot report the failure");
                }
            }
            return Err(error);
        }
    };
    // An Event when this reconcile created the Deployment. A rescale records none: the
    // Deployment controller records its own (ScalingReplicaSet) on the Deployment.
    if existing.is_none() {
        // Without the Deployment's UID: one deleted by hand and created again continues the
        // series of Created Events rather than starting another.
        let related = ObjectReference {
            uid: None,
            ..reference(deployment.as_ref())
        };
        let note = format!("Created Deployment {name} with {size} replicas");
        ctx.record(&object, Some(related), EventType::Normal, "Created", note);
    }

    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    report(
        &ctx.client,
        &ctx.caches.writes,
        &object,
        conditions(&object, available),
    )
    .await?;
    tracing::info!(object = %key, "reconciled");
    ctx.backoff.reset_for(object.as_ref());
    // Changes of the Deployment (pods becoming available) trigger the next reconcile.
    Ok(Action::await_change())
}

/// The clean-up before a Memcached goes: its Deployment is deleted (a cluster's garbage
/// collector would do that too, through the owner reference; deleting it here also covers
/// clusters without one and makes the order explicit). A Deployment of the same name that
/// another object owns is left alone. Returns the object as it is now (the status write
/// changed its resourceVersion, which removing the finalizer checks).
async fn finalize(object: &Memcached, ctx: &MemcachedReconciler) -> Result<Memcached, Error> {
    let name = object.name_any();
    let namespace = object
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let finalizing = condition(
        object,
        "Degraded",
        true,
        "Finalizing",
        format!("Deleting Memcached {name}: cleaning up"),
    );
    let object = &report(&ctx.client, &ctx.caches.writes, object, vec![finalizing])
        .await?
        .unwrap_or_else(|| object.clone());
    // TODO(user): release what the Memcached holds outside the cluster here.
    let deployments = Api::<Deployment>::namespaced(ctx.client.clone(), &namespace);
    ctx.caches.deployments.wait_until_synced().await;
    let owned = ctx.caches.deployments.get(&namespace, &name).filter(|d| {
        d.owner_references()
            .iter()
            .any(|o| Some(&o.uid) == object.metadata.uid.as_ref())
    });
    if let Some(deployment) = owned {
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: deployment.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        match deployments.delete(&name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error.into()),
        }
        let note = format!("Deleted Deployment {name}");
        ctx.record(
            object,
            Some(reference(deployment.as_ref())),
            EventType::Normal,
            "Deleted",
            note,
        );
    }
    Ok(object.clone())
}

/// Retries a failed reconcile with per-object exponential backoff, as controller-runtime
/// does. Conflicts are routine (another writer was first), so they are retried quietly.
pub fn error_policy(
    object: Arc<Memcached>,
    error: &Error,
    ctx: Arc<MemcachedReconciler>,
) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next_for(object.as_ref());
    if error.is_conflict() {
        tracing::debug!(object = %key, %error, retry_in = ?delay, "conflict; retrying");
    } else {
        tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    }
    Action::requeue(delay)
}

/// What the reconciler reads instead of asking the API server, and what it wrote: shared
/// with the watches of the controller that [`controller`] makes.
#[derive(Clone, Debug)]
pub struct Caches {
    /// The Deployments in the controller's scope.
    pub deployments: Lister<Deployment>,
    /// The memcacheds this controller wrote, for reconciles of copies its writes
    /// replaced; the controller does not reconcile again for a write a reconcile went on with.
    writes: OwnWrites<Memcached>,
    /// The Deployments this controller applied: the watch bringing one back is no change.
    deployment_writes: OwnWrites<Deployment>,
}

/// The Memcached controller: it watches memcacheds and the Deployments they own, in
/// `namespaces` (all of them or those of `--watch-namespace`, as `run` does, or the test's
/// own), and returns the caches for the reconciler. A change of a Memcached's spec or
/// metadata or of an owned Deployment (pods becoming available, or an edit by hand)
/// reconciles the Memcached again; its own writes do not (its status, the finalizer it
/// added, the Deployment it applied: the reconcile that wrote them went on with them).
/// The Deployments come from `shared`, the manager's one watch of them for every
/// controller that owns Deployments.
pub fn controller(
    client: &Client,
    namespaces: &Namespaces,
    shared: &SharedCache,
) -> (Controller<Memcached>, Caches) {
    let config = || watcher::Config::default().any_semantic();
    let (writes, deployment_writes) = (OwnWrites::default(), OwnWrites::default());
    let controller = cache::controller_ignoring_own(namespaces.apis(client), config(), &writes);
    let (controller, deployments) = shared.owns_ignoring_own(
        controller,
        namespaces.apis(client),
        config(),
        &deployment_writes,
    );
    (
        controller,
        Caches {
            deployments,
            writes,
            deployment_writes,
        },
    )
}

/// Reconciles this controller runs at once unless `--concurrency` or
/// `--controller-concurrency=memcached=N` says otherwise. Never two of one
/// Memcached, and the writes of two cannot clash; measured against controller-runtime's
/// deploy-image operator (the book's Performance chapter), four converge and rescale
/// faster than one, for less of the API server's CPU.
pub const CONCURRENCY: u16 = 4;

/// Runs the Memcached controller; the manager starts it once this replica leads and adds
/// metrics, readiness, concurrency ([`CONCURRENCY`] by default) and graceful shutdown.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let ctx = ctx.default_concurrency(CONCURRENCY);
    let image = image_from_env()?;
    let client = ctx.client();
    // Fail fast with a hint rather than a watch that retries forever.
    ctx.namespaces()
        .apis::<Memcached>(&client)
        .check_listable(
            "memcacheds.cache.example.com",
            "is the CRD installed (`make install`) and is the manager allowed to?",
        )
        .await?;
    let (controller, caches) = controller(&client, ctx.namespaces(), ctx.cache());
    let reconciler = Arc::new(MemcachedReconciler::new(client.clone(), image, caches));
    let events = reconciler.events.clone();
    let ran = ctx
        .run(controller, reconcile, error_policy, reconciler)
        .await;
    // The Events the last reconciles queued, before the process exits.
    events.flush().await;
    ran
}

// Against a real API server (envtest): longer than a skeleton's, so a file of their own.
#[cfg(test)]
mod tests;
