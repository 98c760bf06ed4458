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

//! Reconciles Memcached objects (cache.example.com/v1alpha1): each one gets a Deployment of
//! memcached pods and a Service in front of them, both owned by it; its status lists the pods.
//!
//! It reads from its watches, not from the API server: the Deployments, Services and pods
//! from the controller's own caches ([`rkb_runtime::cache`]), and it skips every write that
//! would change nothing, so a Memcached that is as declared costs the API server no request.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, ObjectReference, Pod, PodSecurityContext, PodSpec,
    PodTemplateSpec, SeccompProfile, SecurityContext, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use kube::core::Selector;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::cache::{self, Namespaces, OwnWrites};
use rkb_runtime::events::Events;
use rkb_runtime::manager::Context;
use rkb_runtime::{Lister, NamespacedApi, Rbac};

use crate::api::cache::v1alpha1::{Memcached, MemcachedStatus};

/// The image of the memcached pods.
pub const IMAGE: &str = "memcached:1.6-alpine";
/// The reporting controller of the Events this controller records.
pub const CONTROLLER_NAME: &str = "memcached-controller";

/// State shared by every reconcile of Memcached objects.
///
/// The `rbac` attributes list exactly the permissions the reconciler and its watches use
/// (the RBAC audit in tests/controller.rs fails on a missing or an unused rule); `make
/// manifests` turns them into config/rbac/role.yaml. Deployments and Services are created
/// and kept as desired by server-side apply, a `patch` that the API server also authorizes
/// as a `create` when the object does not exist yet; they and the pods are read from the
/// controller's watches (`list`, `watch`), so no `get`. There is no
/// finalizer, hence no update on `memcacheds`: the owner references let the garbage
/// collector delete the Deployment and Service with their Memcached.
#[derive(Rbac)]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [list, watch])]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds/status"], verbs = [patch])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [list, watch, create, patch])]
#[rbac(groups = [""], resources = ["services"], verbs = [list, watch, create, patch])]
#[rbac(groups = [""], resources = ["pods"], verbs = [list, watch])]
#[rbac(groups = ["events.k8s.io"], resources = ["events"], verbs = [create, patch])]
pub struct MemcachedReconciler {
    pub client: Client,
    caches: Caches,
    /// Sends the Events off the reconcile path, in order.
    events: Events,
    backoff: ErrorBackoff,
}

/// What the reconciler reads instead of asking the API server, and what it wrote: shared
/// with the watches of the Controller that [`controller`] makes.
#[derive(Clone, Debug)]
pub struct Caches {
    /// The Deployments in the controller's scope.
    pub deployments: Lister<Deployment>,
    /// The Services in the controller's scope.
    pub services: Lister<Service>,
    /// The pods of Memcacheds (labelled `app.kubernetes.io/managed-by: memcached-example`).
    pub pods: Lister<Pod>,
    /// The Memcacheds this controller wrote, for reconciles of copies its writes replaced.
    writes: OwnWrites<Memcached>,
    /// The Deployments and Services this controller applied: the watch bringing one back
    /// is no change.
    deployment_writes: OwnWrites<Deployment>,
    service_writes: OwnWrites<Service>,
}

impl Caches {
    /// Caches filled by watches of their own rather than a Controller's, for reconciles
    /// called directly (the unit tests, the benchmark), and the future that fills them:
    /// spawn it.
    pub fn reflect(
        client: &Client,
        namespace: Option<&str>,
    ) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (deployments, d) = Lister::reflect(scoped(client, namespace), config());
        let (services, s) = Lister::reflect(scoped(client, namespace), config());
        let (pods, p) = Lister::reflect(scoped(client, namespace), pods_config());
        let caches = Caches {
            deployments,
            services,
            pods,
            writes: OwnWrites::default(),
            deployment_writes: OwnWrites::default(),
            service_writes: OwnWrites::default(),
        };
        (caches, async move {
            tokio::join!(d, s, p);
        })
    }
}

impl MemcachedReconciler {
    /// `caches` are the ones [`controller`] returns with the Controller.
    pub fn new(client: Client, caches: Caches) -> Self {
        let reporter = Reporter {
            controller: CONTROLLER_NAME.into(),
            // In a pod, HOSTNAME is the pod's name: which replica reported the Event.
            instance: std::env::var("HOSTNAME").ok(),
        };
        Self {
            events: Events::new(client.clone(), reporter, Events::CAPACITY),
            client,
            caches,
            backoff: ErrorBackoff::default(),
        }
    }

    /// The caches it reads.
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// Records an Event about `object`: queued, and sent by a task of its own, so the
    /// reconcile does not wait for the request. Best effort, as in controller-runtime: a
    /// failure is logged, never a reason to fail (and repeat) the reconcile.
    /// `related` is the object the Event is about besides the Memcached (the Deployment or
    /// Service); Events with the same reason and related object form one series.
    fn record(
        &self,
        object: &Memcached,
        related: Option<ObjectReference>,
        reason: &str,
        note: String,
    ) {
        let regarding = reference(object);
        let event = Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: related,
        };
        self.events.publish(event, regarding);
    }
}

impl std::fmt::Debug for MemcachedReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemcachedReconciler")
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

/// The labels of a Memcached's pods (and the Service's selector).
pub fn labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".into(), "memcached".into()),
        ("app.kubernetes.io/instance".into(), name.into()),
        (
            "app.kubernetes.io/managed-by".into(),
            "memcached-example".into(),
        ),
    ])
}

/// The metadata of an object owned by `memcached`: same name and namespace, its labels, and
/// a controller owner reference, so that the garbage collector deletes it with the Memcached.
fn owned_metadata(memcached: &Memcached) -> Result<ObjectMeta, Error> {
    let mut owner = memcached
        .controller_owner_ref(&())
        .ok_or(Error::MissingField("metadata.uid"))?;
    // blockOwnerDeletion would need `update` on memcacheds/finalizers wherever the
    // OwnerReferencesPermissionEnforcement admission plugin runs; without it, deleting a
    // Memcached in the foreground just does not wait for its Deployment and Service.
    owner.block_owner_deletion = None;
    Ok(ObjectMeta {
        name: Some(memcached.name_any()),
        namespace: memcached.namespace(),
        labels: Some(labels(&memcached.name_any())),
        owner_references: Some(vec![owner]),
        ..ObjectMeta::default()
    })
}

/// The Deployment `memcached` asks for: `size` memcached pods with a restricted security
/// context (non-root, no privilege escalation, no capabilities, RuntimeDefault seccomp).
pub fn desired_deployment(memcached: &Memcached) -> Result<Deployment, Error> {
    let labels = labels(&memcached.name_any());
    Ok(Deployment {
        metadata: owned_metadata(memcached)?,
        spec: DeploymentSpec {
            replicas: Some(memcached.spec.size),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            ..SeccompProfile::default()
                        }),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![Container {
                        name: "memcached".into(),
                        image: Some(IMAGE.into()),
                        image_pull_policy: Some("IfNotPresent".into()),
                        args: Some(["-m=64", "-o", "modern", "-v"].map(String::from).to_vec()),
                        ports: Some(vec![ContainerPort {
                            name: Some("memcached".into()),
                            container_port: memcached.spec.port(),
                            protocol: Some("TCP".into()),
                            ..ContainerPort::default()
                        }]),
                        security_context: Some(SecurityContext {
                            run_as_non_root: Some(true),
                            run_as_user: Some(1001),
                            allow_privilege_escalation: Some(false),
                            capabilities: Some(Capabilities {
                                drop: Some(vec!["ALL".into()]),
                                ..Capabilities::default()
                            }),
                            ..SecurityContext::default()
                        }),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    })
}

/// The Service `memcached` asks for: its port, in front of its pods.
pub fn desired_service(memcached: &Memcached) -> Result<Service, Error> {
    Ok(Service {
        metadata: owned_metadata(memcached)?,
        spec: Some(ServiceSpec {
            selector: Some(labels(&memcached.name_any())),
            ports: Some(vec![ServicePort {
                name: Some("memcached".into()),
                port: memcached.spec.port(),
                target_port: Some(IntOrString::String("memcached".into())),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    })
}

/// A reference to `object` for an Event, without the resourceVersion (which would make
/// every repeat a new Event rather than one series).
fn reference<K: Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    let mut reference = object.object_ref(&());
    reference.resource_version = None;
    reference
}

/// The `Available` condition for a Deployment, keeping the transition time of `previous`
/// when the status did not change (so that an unchanged status is not rewritten).
fn available_condition(
    memcached: &Memcached,
    deployment: &Deployment,
    previous: Option<&Condition>,
) -> Condition {
    let want = memcached.spec.size;
    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    let (status, reason) = if available >= want {
        ("True", "DeploymentAvailable")
    } else {
        ("False", "DeploymentUnavailable")
    };
    let last_transition_time = match previous {
        Some(p) if p.status == status => p.last_transition_time.clone(),
        _ => Time(Timestamp::now()),
    };
    Condition {
        type_: "Available".into(),
        status: status.into(),
        reason: reason.into(),
        message: format!("{available} of {want} memcached pods are available"),
        observed_generation: memcached.metadata.generation,
        last_transition_time,
    }
}

/// Makes the cluster match what the Memcached declares. It runs after every change
/// (of the Memcached's spec or metadata, of a Deployment or Service it owns, or of one of
/// its pods) and after every failure, so it is idempotent: every write declares the whole
/// desired state. It reads from the controller's caches and writes only what differs.
pub async fn reconcile(
    object: Arc<Memcached>,
    ctx: Arc<MemcachedReconciler>,
) -> Result<Action, Error> {
    // The watch may not have delivered this controller's last status write yet.
    let object = ctx.caches.writes.latest(object);
    let key = ObjectRef::from(object.as_ref()).to_string();
    if object.metadata.deletion_timestamp.is_some() {
        // No finalizer: the garbage collector deletes the owned objects.
        ctx.caches.writes.forget(&object);
        return Ok(Action::await_change());
    }
    let namespace = object
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let name = object.name_any();
    let size = object.spec.size;

    // The Deployment, created or updated by the same server-side apply, so that one field
    // manager owns its fields from the start: a field the spec no longer sets (e.g. the old
    // container port) is removed, not left behind under the manager of a POST. The cached
    // copy says whether the apply would change anything (if not, it is not sent) and
    // whether it creates or scales (for the Events).
    let deployments = Deployment::api(ctx.client.clone(), &namespace);
    // Each cache is read once it holds its first full list.
    ctx.caches.deployments.wait_until_synced().await;
    let existing = ctx.caches.deployments.get(&namespace, &name);
    let desired = desired_deployment(&object)?;
    // Noted as this controller's write: the watch bringing it back is no change.
    let applied = ctx.caches.deployment_writes.apply(
        &desired,
        deployments.apply_if_changed(&desired, existing.as_deref()),
    );
    let deployment = match applied.await? {
        Some(applied) => Arc::new(applied),
        None => existing
            .clone()
            .expect("only an existing Deployment can be unchanged"),
    };
    let related = Some(reference(deployment.as_ref()));
    match existing.as_ref().and_then(|d| d.spec.replicas) {
        None => {
            let note = format!("Created Deployment {name} with {size} replicas");
            ctx.record(&object, related, "Created", note);
        }
        Some(replicas) if replicas != size => {
            let note = format!("Scaled Deployment {name} from {replicas} to {size} replicas");
            ctx.record(&object, related, "Scaled", note);
        }
        Some(_) => {}
    }

    // The Service in front of the pods.
    let services = Service::api(ctx.client.clone(), &namespace);
    ctx.caches.services.wait_until_synced().await;
    let existing = ctx.caches.services.get(&namespace, &name);
    let desired = desired_service(&object)?;
    let applied = ctx
        .caches
        .service_writes
        .apply(
            &desired,
            services.apply_if_changed(&desired, existing.as_deref()),
        )
        .await?;
    if let (None, Some(service)) = (existing, applied) {
        let note = format!("Created Service {name}");
        ctx.record(&object, Some(reference(&service)), "Created", note);
    }

    // The status: the names of the pods (from the pod watch, whose changes reconcile the
    // Memcached again), and whether they are all available.
    let selector = Selector::from_iter(labels(&name));
    ctx.caches.pods.wait_until_synced().await;
    let nodes: Vec<String> = ctx
        .caches
        .pods
        .list_matching(&selector)
        .iter()
        .filter(|p| p.namespace().as_deref() == Some(namespace.as_str()))
        .map(|p| p.name_any())
        .collect();
    let current = object.status.clone().unwrap_or_default();
    let previous = current.conditions.iter().find(|c| c.type_ == "Available");
    let status = MemcachedStatus {
        nodes,
        conditions: vec![available_condition(&object, &deployment, previous)],
    };
    if status != current {
        let written = Memcached::api(ctx.client.clone(), &namespace)
            .apply_status(object.as_ref(), &status)
            .await?;
        ctx.caches.writes.record(object.as_ref(), written);
    }

    tracing::info!(object = %key, "reconciled");
    ctx.backoff.reset(&key);
    // Changes of the Deployment (pods becoming available) trigger the next reconcile.
    Ok(Action::await_change())
}

/// Retries a failed reconcile with per-object exponential backoff, as controller-runtime does.
pub fn error_policy(
    object: Arc<Memcached>,
    error: &Error,
    ctx: Arc<MemcachedReconciler>,
) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next(&key);
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// The Memcached controller: it watches Memcacheds, the Deployments and Services they own
/// and their pods, in `namespace` or (with `None`) in every namespace, and returns the
/// caches of those watches for the reconciler. A change of a Memcached's spec or metadata
/// (not of its status alone, which this controller writes), of an owned Deployment (e.g.
/// pods becoming available) or Service (e.g. edited by hand), or of a pod (created,
/// deleted) reconciles the Memcached again; the Deployments and Services it applied itself
/// do not (the reconcile that applied them went on with them).
pub fn controller(client: &Client, namespaces: &Namespaces) -> (Controller<Memcached>, Caches) {
    let writes = OwnWrites::default();
    let (deployment_writes, service_writes) = (OwnWrites::default(), OwnWrites::default());
    let controller = cache::controller_ignoring_own(namespaces.apis(client), config(), &writes);
    let (controller, deployments) = cache::owns_ignoring_own(
        controller,
        namespaces.apis(client),
        config(),
        &deployment_writes,
    );
    let (controller, services) = cache::owns_ignoring_own(
        controller,
        namespaces.apis(client),
        config(),
        &service_writes,
    );
    let (controller, pods) = cache::watches(
        controller,
        namespaces.apis(client),
        pods_config(),
        |pod: Pod| {
            let memcached = pod.labels().get("app.kubernetes.io/instance")?;
            Some(ObjectRef::new(memcached).within(&pod.namespace()?))
        },
    );
    let caches = Caches {
        deployments,
        services,
        pods,
        writes,
        deployment_writes,
        service_writes,
    };
    (controller, caches)
}

/// The configuration of the watches.
fn config() -> watcher::Config {
    watcher::Config::default().any_semantic()
}

/// The pod watch holds the pods of Memcacheds only, by the label [`labels`] gives them.
fn pods_config() -> watcher::Config {
    let (key, value) = ("app.kubernetes.io/managed-by", "memcached-example");
    debug_assert_eq!(labels("").get(key).map(String::as_str), Some(value));
    config().labels(&format!("{key}={value}"))
}

/// The API of `K` in `namespace`, or in every namespace.
fn scoped<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// Runs the Memcached controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let client = ctx.client();
    // Fail fast with a hint rather than a watch that retries forever.
    ctx.namespaces()
        .apis::<Memcached>(&client)
        .check_listable(
            "memcacheds.cache.example.com",
            "is the CRD installed (`make install`) and is the manager allowed to?",
        )
        .await?;
    let (controller, caches) = controller(&client, ctx.namespaces());
    let reconciler = Arc::new(MemcachedReconciler::new(client.clone(), caches));
    let events = reconciler.events.clone();
    let ran = ctx
        .run(controller, reconcile, error_policy, reconciler)
        .await;
    // The Events the last reconciles queued, before the process exits.
    events.flush().await;
    ran
}

#[cfg(test)]
mod tests {
    use kube::api::PostParams;
    use rkb_runtime::testing::envtest;

    use super::*;

    use crate::api::cache::v1alpha1::MemcachedSpec;

    /// A Memcached in a fresh namespace of the test binary's real API server (envtest),
    /// with the CRD installed as `make install` would, and a reconciler with the caches
    /// of that namespace; tests/controller.rs has the rest.
    async fn sample() -> (Arc<MemcachedReconciler>, Memcached) {
        let env = envtest::shared().await;
        let crds = crate::manifests().crds().unwrap_or_else(|e| panic!("{e}"));
        env.apply().crds(crds).await.unwrap();
        let namespace = env.create_namespace().await.unwrap();
        let mut object = Memcached::new(
            "sample",
            MemcachedSpec {
                size: 1,
                container_port: None,
            },
        );
        object.metadata.namespace = Some(namespace.clone());
        let client = env.client();
        let object = Api::namespaced(client.clone(), &namespace)
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
        let (caches, filling) = Caches::reflect(&client, Some(&namespace));
        tokio::spawn(filling);
        (Arc::new(MemcachedReconciler::new(client, caches)), object)
    }

    #[tokio::test]
    async fn reconciling_an_object_succeeds_and_waits_for_changes() {
        let (ctx, object) = sample().await;
        let action = reconcile(Arc::new(object), ctx).await.unwrap();
        assert_eq!(action, Action::await_change());
    }

    #[tokio::test]
    async fn failures_back_off_per_object_until_a_success() {
        let (ctx, object) = sample().await;
        let object = Arc::new(object);
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

    #[test]
    fn rbac_lets_the_controller_watch_its_objects() {
        let rules = MemcachedReconciler::rbac_rules();
        for verb in ["list", "watch"] {
            assert!(
                rules
                    .iter()
                    .any(|r| r.resources.iter().any(|x| x == "memcacheds")
                        && r.verbs.iter().any(|v| v == verb)),
                "no rule allows {verb} on memcacheds"
            );
        }
    }
}
