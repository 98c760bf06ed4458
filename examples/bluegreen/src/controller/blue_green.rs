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

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec, Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{DeleteParams, ListParams, Preconditions};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::manager::Context;
use rkb_runtime::{NamespacedApi, Rbac, TypedApi};

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
/// there because a server-side apply that creates an object is also authorized as `create`.
#[derive(Rbac)]
#[rbac(groups = ["app.demo.kakao.com"], resources = ["bluegreens"], verbs = [list, watch])]
#[rbac(groups = ["app.demo.kakao.com"], resources = ["bluegreens/status"], verbs = [patch])]
#[rbac(groups = ["core"], resources = ["services"], verbs = [get, list, watch, create, patch])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, list, watch, create, patch, delete])]
pub struct BlueGreenReconciler {
    pub client: Client,
    backoff: ErrorBackoff,
}

impl BlueGreenReconciler {
    pub fn new(client: Client) -> Self {
        Self {
            client,
            backoff: ErrorBackoff::default(),
        }
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

/// The Deployment of `phase`: one replica of `pod_spec`, labelled with the phase.
pub fn desired_deployment(
    object: &BlueGreen,
    phase: RouteTo,
    pod_spec: &PodSpec,
) -> Result<Deployment, Error> {
    let name = object.name_any();
    let labels = labels(&name, Some(phase));
    Ok(Deployment {
        metadata: metadata(object, deployment_name(&name, phase), labels.clone())?,
        spec: Some(DeploymentSpec {
            replicas: Some(1),
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
        }),
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

/// Makes the cluster match what the BlueGreen declares. It runs after every change
/// and after every failure, so it must be idempotent.
pub async fn reconcile(
    object: Arc<BlueGreen>,
    ctx: Arc<BlueGreenReconciler>,
) -> Result<Action, Error> {
    let key = ObjectRef::from(object.as_ref()).to_string();
    if object.meta().deletion_timestamp.is_some() {
        // Garbage collection removes the Service and Deployments.
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
    let routed = match services.get_or_none(&name).await? {
        Some(other) if !controlled_by(&other.metadata, &uid) => {
            not_owned.push(format!("Service {namespace}/{name}"));
            false
        }
        _ => {
            services.apply(&desired_service(&object)?).await?;
            true
        }
    };

    // One Deployment per declared pod spec; a removed spec deletes its Deployment.
    let deployments = Deployment::api(client.clone(), &namespace).with_field_manager(MANAGER);
    for phase in RouteTo::ALL {
        let deployment = deployment_name(&name, phase);
        let existing = deployments.get_or_none(&deployment).await?;
        let ours = existing.as_ref().map(|d| controlled_by(&d.metadata, &uid));
        match (object.spec.pod_spec(phase), ours) {
            (Some(_), Some(false)) => {
                not_owned.push(format!("Deployment {namespace}/{deployment}"));
            }
            (Some(pod_spec), _) => {
                deployments
                    .apply(&desired_deployment(&object, phase, pod_spec)?)
                    .await?;
            }
            (None, Some(true)) => delete(&deployments, existing.as_ref()).await?,
            // Nothing to delete, or not ours to delete.
            (None, _) => {}
        }
    }

    // Status: the phase the Service now selects (only written when it changed).
    let route_to = Some(object.spec.route_to);
    if routed && object.status.as_ref().and_then(|s| s.route_to) != route_to {
        BlueGreen::api(client, &namespace)
            .with_field_manager(MANAGER)
            .apply_status(&object, &BlueGreenStatus { route_to })
            .await?;
    }

    if !not_owned.is_empty() {
        return Err(Error::NotOwned(not_owned.join(", ")));
    }
    tracing::info!(object = %key, route_to = ?object.spec.route_to, "reconciled");
    ctx.backoff.reset(&key);
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

/// Retries a failed reconcile with per-object exponential backoff, as controller-runtime does.
pub fn error_policy(
    object: Arc<BlueGreen>,
    error: &Error,
    ctx: Arc<BlueGreenReconciler>,
) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next(&key);
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// Runs the BlueGreen controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let client = ctx.client();
    let objects = Api::<BlueGreen>::all(client.clone());
    // Fail fast with a hint rather than a watch that retries forever.
    objects
        .list(&ListParams::default().limit(1))
        .await
        .context("cannot list bluegreens.app.demo.kakao.com: is the CRD installed (`make install`) and is the manager allowed to?")?;
    // A change to a Service or Deployment a BlueGreen owns reconciles that BlueGreen; only
    // the objects this controller labelled are cached.
    let ours = watcher::Config::default()
        .any_semantic()
        .labels(&format!("{LABEL_MANAGED_BY}={MANAGER}"));
    let controller = Controller::new(objects, watcher::Config::default().any_semantic())
        .owns(Api::<Deployment>::all(client.clone()), ours.clone())
        .owns(Api::<Service>::all(client.clone()), ours);
    let reconciler = Arc::new(BlueGreenReconciler::new(client));
    ctx.run(controller, reconcile, error_policy, reconciler)
        .await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::Container;
    use kube::api::{Patch, PatchParams, PostParams};
    use kube_fake_client::ClientBuilder;
    use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
    use serde_json::{Value, json};

    use super::*;

    use crate::api::app::v1::BlueGreenSpec;

    const NS: &str = "default";
    const ROLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/role.yaml");

    fn pod_spec(image: &str) -> PodSpec {
        PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some(image.into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }
    }

    fn both(route_to: RouteTo) -> BlueGreenSpec {
        BlueGreenSpec {
            route_to,
            blue_spec: Some(pod_spec("demo:version-blue")),
            green_spec: Some(pod_spec("demo:version-green")),
        }
    }

    async fn fake_client() -> Client {
        ClientBuilder::new()
            .with_resource::<BlueGreen>()
            .with_status_subresource::<BlueGreen>()
            .build()
            .await
            .expect("the in-memory API starts")
    }

    async fn create(client: &Client, name: &str, spec: BlueGreenSpec) -> BlueGreen {
        let mut object = BlueGreen::new(name, spec);
        object.metadata.namespace = Some(NS.into());
        Api::<BlueGreen>::namespaced(client.clone(), NS)
            .create(&PostParams::default(), &object)
            .await
            .expect("the BlueGreen is created")
    }

    /// Changes the spec as a user would (`kubectl edit`).
    async fn edit(client: &Client, name: &str, spec: BlueGreenSpec) {
        let mut patch = json!({ "spec": serde_json::to_value(&spec).unwrap() });
        // A merge patch cannot remove a field by leaving it out: null it.
        for field in ["blueSpec", "greenSpec"] {
            if patch["spec"].get(field).is_none() {
                patch["spec"][field] = Value::Null;
            }
        }
        Api::<BlueGreen>::namespaced(client.clone(), NS)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("the BlueGreen is edited");
    }

    /// One reconcile of the BlueGreen as the controller's cache (`cache`) sees it now,
    /// through `client`.
    async fn reconcile_once(cache: &Client, client: &Client, name: &str) -> Result<Action, Error> {
        let object = Api::<BlueGreen>::namespaced(cache.clone(), NS)
            .get(name)
            .await
            .expect("the BlueGreen exists");
        reconcile(
            Arc::new(object),
            Arc::new(BlueGreenReconciler::new(client.clone())),
        )
        .await
    }

    /// Reconciles until a reconcile succeeds, as the controller does after `error_policy`;
    /// returns the errors on the way.
    async fn reconcile_until_ok(cache: &Client, client: &Client, name: &str) -> Vec<String> {
        let mut errors = Vec::new();
        for _ in 0..50 {
            match reconcile_once(cache, client, name).await {
                Ok(action) => {
                    assert_eq!(action, Action::await_change());
                    return errors;
                }
                Err(error) => errors.push(error.to_string()),
            }
        }
        panic!("no successful reconcile in 50 attempts: {errors:#?}");
    }

    async fn service(client: &Client, name: &str) -> Option<Service> {
        Api::<Service>::namespaced(client.clone(), NS)
            .get_opt(name)
            .await
            .unwrap()
    }

    async fn deployments(client: &Client) -> Vec<Deployment> {
        Api::<Deployment>::namespaced(client.clone(), NS)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }

    async fn deployment(client: &Client, name: &str) -> Option<Deployment> {
        Api::<Deployment>::namespaced(client.clone(), NS)
            .get_opt(name)
            .await
            .unwrap()
    }

    async fn status(client: &Client, name: &str) -> Option<RouteTo> {
        Api::<BlueGreen>::namespaced(client.clone(), NS)
            .get(name)
            .await
            .unwrap()
            .status
            .and_then(|s| s.route_to)
    }

    fn selector(service: &Service) -> BTreeMap<String, String> {
        service.spec.as_ref().unwrap().selector.clone().unwrap()
    }

    fn image(deployment: &Deployment) -> String {
        let spec = deployment.spec.as_ref().unwrap();
        spec.template.spec.as_ref().unwrap().containers[0]
            .image
            .clone()
            .unwrap()
    }

    /// Everything in the namespace, without what the API server changes on every write.
    async fn snapshot(client: &Client) -> Vec<Value> {
        let mut all = Vec::new();
        let strip = |mut v: Value| {
            for field in ["resourceVersion", "managedFields", "generation"] {
                v["metadata"].as_object_mut().unwrap().remove(field);
            }
            v
        };
        let lp = ListParams::default();
        for o in Api::<BlueGreen>::namespaced(client.clone(), NS)
            .list(&lp)
            .await
            .unwrap()
        {
            all.push(strip(serde_json::to_value(o).unwrap()));
        }
        for o in Api::<Service>::namespaced(client.clone(), NS)
            .list(&lp)
            .await
            .unwrap()
        {
            all.push(strip(serde_json::to_value(o).unwrap()));
        }
        for o in deployments(client).await {
            all.push(strip(serde_json::to_value(o).unwrap()));
        }
        all
    }

    /// The Service selects `route_to`, and the Deployments are exactly `expected`, each
    /// controlled by `owner` only, with the three labels on itself and its pods.
    async fn assert_state(
        client: &Client,
        owner: &BlueGreen,
        route_to: RouteTo,
        expected: &[RouteTo],
    ) {
        let name = owner.name_any();
        let uid = owner.uid().unwrap();
        let svc = service(client, &name).await.expect("the Service exists");
        assert_eq!(selector(&svc), labels(&name, Some(route_to)));
        let spec = svc.spec.as_ref().unwrap();
        assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
        let ports = spec.ports.as_ref().unwrap();
        assert_eq!(ports.len(), 1);
        assert_eq!(
            (ports[0].port, ports[0].target_port.clone()),
            (80, Some(IntOrString::Int(80)))
        );
        assert_eq!(svc.metadata.labels.clone().unwrap(), labels(&name, None));
        assert_eq!(svc.owner_references().len(), 1);
        assert!(controlled_by(&svc.metadata, &uid));

        let mut names: Vec<String> = deployments(client)
            .await
            .iter()
            .map(|d| d.name_any())
            .collect();
        names.sort();
        let wanted: Vec<String> = expected
            .iter()
            .map(|p| deployment_name(&name, *p))
            .collect();
        assert_eq!(names, wanted);
        for phase in expected {
            let d = deployment(client, &deployment_name(&name, *phase))
                .await
                .unwrap();
            let labels = labels(&name, Some(*phase));
            let spec = d.spec.as_ref().unwrap();
            assert_eq!(spec.replicas, Some(1));
            assert_eq!(d.metadata.labels.as_ref(), Some(&labels));
            assert_eq!(spec.selector.match_labels.as_ref(), Some(&labels));
            assert_eq!(
                spec.template.metadata.as_ref().unwrap().labels.as_ref(),
                Some(&labels)
            );
            let refs = d.owner_references();
            assert_eq!(refs.len(), 1, "exactly one owner reference: {refs:?}");
            assert_eq!(
                (refs[0].kind.as_str(), refs[0].name.as_str()),
                ("BlueGreen", name.as_str())
            );
            assert_eq!(refs[0].api_version, "app.demo.kakao.com/v1");
            assert!(controlled_by(&d.metadata, &uid));
        }
        assert_eq!(status(client, &name).await, Some(route_to));
    }

    #[tokio::test]
    async fn creates_the_service_and_a_deployment_per_spec() {
        let client = fake_client().await;
        let object = create(&client, "demo", both(RouteTo::Blue)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        assert_state(
            &client,
            &object,
            RouteTo::Blue,
            &[RouteTo::Blue, RouteTo::Green],
        )
        .await;
        assert_eq!(
            image(&deployment(&client, "demo-blue").await.unwrap()),
            "demo:version-blue"
        );
        assert_eq!(
            image(&deployment(&client, "demo-green").await.unwrap()),
            "demo:version-green"
        );
    }

    #[tokio::test]
    async fn switching_route_to_flips_the_selector_and_the_status() {
        let client = fake_client().await;
        let object = create(&client, "demo", both(RouteTo::Blue)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        edit(&client, "demo", both(RouteTo::Green)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        assert_state(
            &client,
            &object,
            RouteTo::Green,
            &[RouteTo::Blue, RouteTo::Green],
        )
        .await;
        edit(&client, "demo", both(RouteTo::Blue)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        assert_state(
            &client,
            &object,
            RouteTo::Blue,
            &[RouteTo::Blue, RouteTo::Green],
        )
        .await;
    }

    #[tokio::test]
    async fn a_changed_pod_spec_updates_its_deployment() {
        let client = fake_client().await;
        create(&client, "demo", both(RouteTo::Blue)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        let mut spec = both(RouteTo::Blue);
        spec.green_spec = Some(pod_spec("demo:version-green-2"));
        edit(&client, "demo", spec).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        assert_eq!(
            image(&deployment(&client, "demo-green").await.unwrap()),
            "demo:version-green-2"
        );
    }

    #[tokio::test]
    async fn removing_a_spec_deletes_its_deployment() {
        let client = fake_client().await;
        let object = create(&client, "demo", both(RouteTo::Blue)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        let mut spec = both(RouteTo::Blue);
        spec.green_spec = None;
        edit(&client, "demo", spec).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        assert_state(&client, &object, RouteTo::Blue, &[RouteTo::Blue]).await;
    }

    #[tokio::test]
    async fn a_deployment_owned_by_someone_else_is_neither_adopted_nor_deleted() {
        let client = fake_client().await;
        let api = Api::<Deployment>::namespaced(client.clone(), NS);
        let their_labels = BTreeMap::from([("app".to_owned(), "theirs".to_owned())]);
        let mut theirs = Deployment {
            metadata: ObjectMeta {
                name: Some("demo-green".into()),
                namespace: Some(NS.into()),
                ..ObjectMeta::default()
            },
            spec: Some(DeploymentSpec {
                selector: LabelSelector {
                    match_labels: Some(their_labels.clone()),
                    match_expressions: None,
                },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(their_labels),
                        ..ObjectMeta::default()
                    }),
                    spec: Some(pod_spec("theirs:1")),
                },
                ..DeploymentSpec::default()
            }),
            status: None,
        };
        theirs = api.create(&PostParams::default(), &theirs).await.unwrap();
        let object = create(&client, "demo", both(RouteTo::Blue)).await;

        // Everything else is reconciled; the conflict is reported (and retried with backoff).
        let error = reconcile_once(&client, &client, "demo").await.unwrap_err();
        assert!(
            matches!(error, Error::NotOwned(ref what) if what == "Deployment default/demo-green"),
            "{error}"
        );
        let svc = service(&client, "demo").await.expect("the Service exists");
        assert_eq!(selector(&svc), labels("demo", Some(RouteTo::Blue)));
        let blue = deployment(&client, "demo-blue")
            .await
            .expect("ours is created");
        assert!(controlled_by(&blue.metadata, &object.uid().unwrap()));
        let after = deployment(&client, "demo-green").await.unwrap();
        assert_eq!(
            after.metadata.resource_version, theirs.metadata.resource_version,
            "not changed"
        );
        assert!(after.owner_references().is_empty(), "not adopted");
        assert_eq!(image(&after), "theirs:1");
        assert_eq!(status(&client, "demo").await, Some(RouteTo::Blue));

        // Without greenSpec the BlueGreen wants no green Deployment, but this one is not its to delete.
        let mut spec = both(RouteTo::Blue);
        spec.green_spec = None;
        edit(&client, "demo", spec).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        let after = deployment(&client, "demo-green")
            .await
            .expect("not deleted");
        assert_eq!(
            after.metadata.resource_version,
            theirs.metadata.resource_version
        );
    }

    #[tokio::test]
    async fn a_second_reconcile_changes_nothing() {
        let client = fake_client().await;
        create(&client, "demo", both(RouteTo::Green)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        let before = snapshot(&client).await;
        let status_version = Api::<BlueGreen>::namespaced(client.clone(), NS)
            .get("demo")
            .await
            .unwrap()
            .metadata
            .resource_version;
        reconcile_once(&client, &client, "demo").await.unwrap();
        assert_eq!(snapshot(&client).await, before);
        let after = Api::<BlueGreen>::namespaced(client.clone(), NS)
            .get("demo")
            .await
            .unwrap();
        assert_eq!(
            after.metadata.resource_version, status_version,
            "status not rewritten"
        );
    }

    #[tokio::test]
    async fn deleting_the_bluegreen_deletes_what_it_owns() {
        let client = fake_client().await;
        create(&client, "demo", both(RouteTo::Blue)).await;
        reconcile_once(&client, &client, "demo").await.unwrap();
        Api::<BlueGreen>::namespaced(client.clone(), NS)
            .delete("demo", &DeleteParams::background())
            .await
            .unwrap();
        assert!(service(&client, "demo").await.is_none());
        assert!(deployments(&client).await.is_empty());
    }

    #[tokio::test]
    async fn converges_under_conflicts_server_errors_and_timeouts() {
        let cache = fake_client().await;
        let short = Duration::from_millis(20);
        let faults = Faults::default()
            .fail(Fault::server_error().on_verb("get").on_resource("services"))
            .fail(
                Fault::timeout(short)
                    .on_verb("get")
                    .on_resource("deployments"),
            )
            .fail(
                Fault::server_error()
                    .on_verb("get")
                    .on_resource("deployments"),
            )
            // Applies are PATCHes, also when they create the object.
            .fail(
                Fault::server_error()
                    .on_verb("patch")
                    .on_resource("services"),
            )
            .fail(
                Fault::timeout(short)
                    .on_verb("patch")
                    .on_resource("services"),
            )
            .fail(
                Fault::conflict()
                    .on_verb("patch")
                    .on_resource("deployments")
                    .times(2),
            )
            .fail(
                Fault::timeout(short)
                    .on_verb("patch")
                    .on_resource("deployments"),
            )
            .fail(
                Fault::conflict()
                    .on_verb("patch")
                    .on_resource("bluegreens/status"),
            )
            .fail(
                Fault::server_error()
                    .on_verb("delete")
                    .on_resource("deployments"),
            )
            .fail(
                Fault::timeout(short)
                    .on_verb("delete")
                    .on_resource("deployments"),
            );
        let planned = 11;
        let client = testing::wrap(cache.clone(), &RbacAudit::default(), &faults);

        let object = create(&cache, "demo", both(RouteTo::Blue)).await;
        let errors = reconcile_until_ok(&cache, &client, "demo").await;
        assert!(!errors.is_empty());
        assert_state(
            &cache,
            &object,
            RouteTo::Blue,
            &[RouteTo::Blue, RouteTo::Green],
        )
        .await;

        let mut spec = both(RouteTo::Green);
        spec.blue_spec = None;
        edit(&cache, "demo", spec).await;
        let more = reconcile_until_ok(&cache, &client, "demo").await;
        assert!(!more.is_empty());
        assert_state(&cache, &object, RouteTo::Green, &[RouteTo::Green]).await;
        assert_eq!(
            image(&deployment(&cache, "demo-green").await.unwrap()),
            "demo:version-green"
        );

        let injected = faults.injected();
        eprintln!(
            "faults injected: {} ({} failed reconciles before convergence)",
            injected.len(),
            errors.len() + more.len()
        );
        assert_eq!(
            injected.len(),
            planned,
            "every planned fault hit: {injected:#?}"
        );
        // Once converged, reconciling again is a no-op.
        let before = snapshot(&cache).await;
        reconcile_once(&cache, &client, "demo").await.unwrap();
        assert_eq!(snapshot(&cache).await, before);
    }

    #[tokio::test]
    async fn rbac_role_is_exactly_what_the_controller_uses() {
        let cache = fake_client().await;
        let audit = RbacAudit::default();
        let client = testing::wrap(cache.clone(), &audit, &Faults::default());
        // The Controller's watchers, and `run`'s first list of BlueGreens.
        audit.watches("app.demo.kakao.com", "bluegreens");
        audit.watches("apps", "deployments");
        audit.watches("", "services");

        create(&cache, "demo", both(RouteTo::Blue)).await;
        reconcile_once(&cache, &client, "demo").await.unwrap();
        edit(
            &cache,
            "demo",
            BlueGreenSpec {
                route_to: RouteTo::Green,
                blue_spec: None,
                green_spec: Some(pod_spec("g")),
            },
        )
        .await;
        reconcile_once(&cache, &client, "demo").await.unwrap();

        // Applies that create objects count as `create`, as the API server authorizes them.
        if let Err(report) = audit.check_role_file(ROLE) {
            panic!("{report}");
        }
    }

    #[tokio::test]
    async fn failures_back_off_per_object_until_a_success() {
        let client = fake_client().await;
        create(&client, "demo", both(RouteTo::Blue)).await;
        let ctx = Arc::new(BlueGreenReconciler::new(client.clone()));
        let object = Arc::new(
            Api::<BlueGreen>::namespaced(client, NS)
                .get("demo")
                .await
                .unwrap(),
        );
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
}
