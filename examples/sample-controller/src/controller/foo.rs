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

//! Reconciles Foo objects (samplecontroller.k8s.io/v1alpha1) as the upstream
//! sample-controller does: each Foo gets the nginx Deployment its spec names, with its
//! replicas; its status reports the Deployment's available replicas.
//!
//! As upstream's `deploymentsLister`, it reads the Deployments from the controller's watch
//! ([`rkb_runtime::cache`]), not from the API server, and it writes only what changed: a
//! Foo that is as declared costs the API server no request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::PostParams;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::cache::{self, Namespaces, OwnWrites};
use rkb_runtime::events::Events;
use rkb_runtime::manager::Context;
use rkb_runtime::{Lister, NamespacedApi, Rbac};

use crate::api::samplecontroller::v1alpha1::{Foo, FooStatus};

/// The reporting controller of the Events this controller records (upstream's agent name).
pub const CONTROLLER_NAME: &str = "sample-controller";
/// The image of the Deployment's pods.
pub const IMAGE: &str = "nginx:latest";
/// Event reason: a Foo was synced successfully.
pub const SUCCESS_SYNCED: &str = "Synced";
/// Event reason: the Deployment a Foo names exists and is not controlled by it.
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Event message of a successful sync.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";

/// State shared by every reconcile of Foo objects.
///
/// The `rbac` attributes list exactly the permissions the reconciler and its watches use
/// (the RBAC audit in tests/controller.rs fails on a missing or an unused rule); `make
/// manifests` turns them into config/rbac/role.yaml. There is no finalizer, hence no update
/// on `foos`: the owner reference lets the garbage collector delete the Deployment with its
/// Foo. Deployments are read from the controller's watch (`list`, `watch`), so no `get`.
#[derive(Rbac)]
#[rbac(groups = ["samplecontroller.k8s.io"], resources = ["foos"], verbs = [list, watch])]
#[rbac(groups = ["samplecontroller.k8s.io"], resources = ["foos/status"], verbs = [patch])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [list, watch, create, update])]
#[rbac(groups = ["events.k8s.io"], resources = ["events"], verbs = [create, patch])]
pub struct FooReconciler {
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
    /// The Deployments the controller watches (upstream's `deploymentsLister`).
    pub deployments: Lister<Deployment>,
    /// The Foos this controller wrote, for reconciles of copies its writes replaced.
    writes: OwnWrites<Foo>,
    /// The Deployments this controller created or updated: the watch bringing one back is
    /// no change.
    deployment_writes: OwnWrites<Deployment>,
}

impl Caches {
    /// Caches reading `deployments`, filled by a watch of its own rather than a
    /// Controller's, for reconciles called directly (the unit tests).
    pub fn new(deployments: Lister<Deployment>) -> Self {
        Caches {
            deployments,
            writes: OwnWrites::default(),
            deployment_writes: OwnWrites::default(),
        }
    }
}

impl FooReconciler {
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

    /// Records an Event about `object`: queued, and sent by a task of its own, so the
    /// reconcile does not wait for the request (as client-go's recorder). Best effort: a
    /// failure is logged, never a reason to fail (and repeat) the reconcile.
    fn record(&self, object: &Foo, type_: EventType, reason: &str, note: &str) {
        let mut regarding = object.object_ref(&());
        // Without the resourceVersion, repeats of an Event (same reason) about the same Foo
        // form one series (a patch of the count) instead of piling up.
        regarding.resource_version = None;
        let event = Event {
            type_,
            reason: reason.into(),
            note: Some(note.into()),
            action: "Sync".into(),
            secondary: None,
        };
        self.events.publish(event, regarding);
    }
}

impl std::fmt::Debug for FooReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FooReconciler").finish_non_exhaustive()
    }
}

/// Why a reconcile failed; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
    #[error("the Foo has no {0}")]
    MissingField(&'static str),
    /// The Deployment the Foo names exists and is controlled by something else: it is left
    /// alone, and the reconcile fails (and is retried) until the conflict is resolved.
    #[error("{0}")]
    ResourceExists(String),
}

/// The labels of a Foo's pods, as upstream: `app: nginx`, `controller: <foo>`.
pub fn labels(object: &Foo) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".into(), "nginx".into()),
        ("controller".into(), object.name_any()),
    ])
}

/// The Deployment `object` asks for (upstream's `newDeployment`), with a controller owner
/// reference so that the garbage collector deletes it with the Foo.
pub fn new_deployment(object: &Foo) -> Result<Deployment, Error> {
    let mut owner = object
        .controller_owner_ref(&())
        .ok_or(Error::MissingField("metadata.uid"))?;
    // blockOwnerDeletion would need `update` on foos/finalizers wherever the
    // OwnerReferencesPermissionEnforcement admission plugin runs; without it, deleting a Foo
    // in the foreground just does not wait for its Deployment.
    owner.block_owner_deletion = None;
    let labels = labels(object);
    Ok(Deployment {
        metadata: ObjectMeta {
            name: Some(object.spec.deployment_name.clone()),
            namespace: object.namespace(),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(object.spec.replicas),
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
                    containers: vec![Container {
                        name: "nginx".into(),
                        image: Some(IMAGE.into()),
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

/// Whether `object` is the controller of `deployment` (client-go's `metav1.IsControlledBy`).
pub fn is_controlled_by(deployment: &Deployment, object: &Foo) -> bool {
    let Some(uid) = object.uid() else {
        return false;
    };
    deployment
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && o.uid == uid)
}

/// Makes the cluster match what the Foo declares (upstream's `syncHandler`). It runs after
/// every change (of the Foo's spec or metadata, or of a Deployment it owns) and after every
/// failure, so it is idempotent. It reads the Deployment from the controller's watch and
/// writes only what differs.
pub async fn reconcile(object: Arc<Foo>, ctx: Arc<FooReconciler>) -> Result<Action, Error> {
    // The watch may not have delivered this controller's last status write yet.
    let object = ctx.caches.writes.latest(object);
    let key = ObjectRef::from(object.as_ref()).to_string();
    if object.metadata.deletion_timestamp.is_some() {
        // No finalizer: the garbage collector deletes the Deployment.
        ctx.caches.writes.forget(&object);
        return Ok(Action::await_change());
    }
    let namespace = object
        .namespace()
        .ok_or(Error::MissingField("metadata.namespace"))?;
    let name = &object.spec.deployment_name;
    let deployments = Deployment::api(ctx.client.clone(), &namespace);

    // Create the Deployment if the watch has not seen it. (If the watch is behind, the
    // create fails with a 409 AlreadyExists and the reconcile is retried, as upstream.)
    // Each write of the Deployment is noted as this controller's (the reconcile goes on
    // with what it returns): the watch bringing it back is no change.
    let (writes, params) = (&ctx.caches.deployment_writes, PostParams::default());
    ctx.caches.deployments.wait_until_synced().await;
    let mut changed = false;
    let mut deployment = match ctx.caches.deployments.get(&namespace, name) {
        Some(deployment) => deployment.as_ref().clone(),
        None => {
            changed = true;
            let desired = new_deployment(&object)?;
            let created = deployments.create(&params, &desired);
            let created = writes.apply(&desired, async { created.await.map(Some) });
            created.await?.expect("a create returns the object")
        }
    };

    // A Deployment this Foo does not control is left alone, and reported.
    if !is_controlled_by(&deployment, &object) {
        let message = format!("Resource {name:?} already exists and is not managed by Foo");
        ctx.record(&object, EventType::Warning, ERR_RESOURCE_EXISTS, &message);
        return Err(Error::ResourceExists(message));
    }

    // Keep the replicas at the Foo's. The update carries the resourceVersion of the cached
    // copy, so a change the watch has not delivered yet makes it fail with a conflict, and
    // the reconcile is retried.
    let replicas = object.spec.replicas;
    if deployment.spec.replicas != Some(replicas) {
        tracing::info!(object = %key, deployment = %name, replicas, "updating the replicas");
        deployment.spec.replicas = Some(replicas);
        let replaced = deployments.replace(name, &params, &deployment);
        let replaced = writes.apply(&deployment, async { replaced.await.map(Some) });
        deployment = replaced.await?.expect("a replace returns the object");
        changed = true;
    }

    // Report the Deployment's available replicas.
    let status = FooStatus {
        available_replicas: deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0),
    };
    if object.status.as_ref() != Some(&status) {
        let written = Foo::api(ctx.client.clone(), &namespace)
            .apply_status(object.as_ref(), &status)
            .await?;
        ctx.caches.writes.record(object.as_ref(), written);
        changed = true;
    }

    // Upstream records it after every sync; here only after one that changed something, so
    // that a Foo as declared costs no request.
    if changed {
        ctx.record(
            &object,
            EventType::Normal,
            SUCCESS_SYNCED,
            MESSAGE_RESOURCE_SYNCED,
        );
    }
    tracing::info!(object = %key, "reconciled");
    ctx.backoff.reset(&key);
    // Changes of the Deployment (pods becoming available) trigger the next reconcile.
    Ok(Action::await_change())
}

/// Retries a failed reconcile with per-object exponential backoff, as the upstream
/// rate-limited workqueue does.
pub fn error_policy(object: Arc<Foo>, error: &Error, ctx: Arc<FooReconciler>) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next(&key);
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// The Foo controller: it watches Foos and the Deployments they control, in `namespaces`,
/// and returns the caches for the reconciler. A change of a Foo's spec or metadata (not of
/// its status alone, which this controller writes) reconciles it, and so does a change of a
/// Deployment it controls (upstream's `handleObject`), except the version this controller
/// wrote itself (the reconcile that wrote it went on with it).
pub fn controller(client: &Client, namespaces: &Namespaces) -> (Controller<Foo>, Caches) {
    let config = || watcher::Config::default().any_semantic();
    let (writes, deployment_writes) = (OwnWrites::default(), OwnWrites::default());
    let controller = cache::controller_ignoring_own(namespaces.apis(client), config(), &writes);
    let (controller, deployments) = cache::owns_ignoring_own(
        controller,
        namespaces.apis(client),
        config(),
        &deployment_writes,
    );
    let caches = Caches {
        deployments,
        writes,
        deployment_writes,
    };
    (controller, caches)
}

/// Runs the Foo controller; the manager starts it once this replica leads and adds metrics,
/// readiness, `--concurrency` (upstream's workers) and graceful shutdown. It logs upstream's
/// start and stop lines.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let client = ctx.client();
    // Fail fast with a hint rather than a watch that retries forever.
    ctx.namespaces()
        .apis::<Foo>(&client)
        .check_listable(
            "foos.samplecontroller.k8s.io",
            "is the CRD installed (`make install`) and is the manager allowed to?",
        )
        .await?;
    tracing::info!("Setting up event handlers");
    let (controller, caches) = controller(&client, ctx.namespaces());
    tracing::info!("Starting Foo controller");
    tracing::info!("Waiting for informer caches to sync");
    let store = controller.store();
    let workers = ctx.concurrency();
    let deployments_synced = caches.deployments.clone();
    let started = tokio::spawn(async move {
        // As the manager does: kube-runtime's `wait_until_ready` can miss a wake-up when the
        // store has another waiter, so ask again every 100 ms.
        loop {
            let ready = tokio::time::timeout(Duration::from_millis(100), store.wait_until_ready());
            match ready.await {
                Ok(Ok(())) => break,
                Err(_) => {}
                Ok(Err(_)) => return, // the controller stopped before its first list
            }
        }
        // Upstream waits for both informers, the Foos' and the Deployments'.
        deployments_synced.wait_until_synced().await;
        tracing::info!(count = workers, "Starting workers");
        tracing::info!("Started workers");
    });
    let reconciler = Arc::new(FooReconciler::new(client.clone(), caches));
    let events = reconciler.events.clone();
    let result = ctx
        .run(controller, reconcile, error_policy, reconciler)
        .await;
    started.abort();
    tracing::info!("Shutting down workers");
    // The Events the last reconciles queued, before the process exits.
    events.flush().await;
    result
}

#[cfg(test)]
mod tests {
    use rkb_runtime::testing::envtest;

    use kube::Api;

    use super::*;

    use crate::api::samplecontroller::v1alpha1::FooSpec;

    /// A Foo in a fresh namespace of the test binary's real API server (envtest), with the
    /// CRD installed as `make install` would, and a reconciler reading a watch of that
    /// namespace's Deployments; tests/controller.rs has the rest.
    async fn sample() -> (Arc<FooReconciler>, Foo) {
        let env = envtest::shared().await;
        let crds = crate::manifests().crds().unwrap_or_else(|e| panic!("{e}"));
        env.apply().crds(crds).await.unwrap();
        let namespace = env.create_namespace().await.unwrap();
        let mut object = Foo::new(
            "sample",
            FooSpec {
                deployment_name: "sample-nginx".into(),
                replicas: 1,
            },
        );
        object.metadata.namespace = Some(namespace.clone());
        let client = env.client();
        let object = Api::namespaced(client.clone(), &namespace)
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
        let (deployments, filling) = Lister::reflect(
            Api::namespaced(client.clone(), &namespace),
            watcher::Config::default(),
        );
        tokio::spawn(filling);
        let caches = Caches::new(deployments);
        (Arc::new(FooReconciler::new(client, caches)), object)
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
        let rules = FooReconciler::rbac_rules();
        for verb in ["list", "watch"] {
            assert!(
                rules.iter().any(|r| r.resources.iter().any(|x| x == "foos")
                    && r.verbs.iter().any(|v| v == verb)),
                "no rule allows {verb} on foos"
            );
        }
    }
}
