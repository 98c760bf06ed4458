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

//! The Foo controller against a real kube-apiserver and etcd (envtest): kube-runtime's
//! `Controller` with the example's watches reconciles what the tests create and change, as
//! upstream's informers and workqueue do; the status subresource, Events, optimistic
//! concurrency and RBAC are the API server's own.
//!
//! Most tests run on a control plane without kube-controller-manager, where nothing but
//! the controller writes: the tests play the Deployment controller, writing the
//! Deployment's `status.availableReplicas`. One test runs where kube-controller-manager
//! does, and sees the garbage collector delete a deleted Foo's Deployment. There is no
//! kubelet: no Pod ever runs.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller;
use kube::{Api, Client, ResourceExt};
use rkb_runtime::cache::Namespaces;
use rkb_runtime::testing::controller::{eventually, overlay_without_rule, settled, writes};
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
use sample_controller::api::samplecontroller::v1alpha1::{Foo, FooSpec};
use sample_controller::controller::foo::{Error, FooReconciler, error_policy, reconcile};
use serde_json::json;

/// The test binary's API server with the CRD installed as `make install` would, and a
/// fresh namespace for the test.
async fn api_server() -> (&'static Environment, String) {
    on(envtest::shared().await).await
}

/// The CRD and a fresh namespace on `env`.
async fn on(env: &'static Environment) -> (&'static Environment, String) {
    let crds = sample_controller::manifests()
        .crds()
        .unwrap_or_else(|e| panic!("{e}"));
    env.apply().crds(crds).await.unwrap();
    let namespace = env.create_namespace().await.unwrap();
    (env, namespace)
}

/// What the controller reported: each reconcile's object, the resourceVersion it
/// reconciled, and the outcome, in order.
#[derive(Clone, Default)]
struct Reports(Arc<Mutex<Vec<Report>>>);

#[derive(Clone, Debug)]
struct Report {
    name: String,
    resource_version: String,
    /// A failure's HTTP status (when the API server answered) and message.
    result: Result<(), (Option<u16>, String)>,
}

impl Reports {
    fn all(&self) -> Vec<Report> {
        self.0.lock().unwrap().clone()
    }
    /// Whether `name` was reconciled successfully at `resource_version`.
    fn reconciled(&self, name: &str, resource_version: &str) -> bool {
        self.all()
            .iter()
            .any(|r| r.name == name && r.resource_version == resource_version && r.result.is_ok())
    }
    fn failures(&self) -> Vec<(Option<u16>, String)> {
        self.all()
            .into_iter()
            .filter_map(|r| r.result.err())
            .collect()
    }
}

/// Runs the example's Controller (its watches on Foos and the Deployments they control) in
/// `namespace` until the test ends: watches through `watch_client`, reconciles through
/// `client`.
fn start_controller(watch_client: &Client, client: Client, namespace: &str) -> Reports {
    let reports = Reports::default();
    let sink = reports.clone();
    let (controller, caches) = sample_controller::controller::foo::controller(
        watch_client,
        &Namespaces::only([namespace]),
    );
    let reconciler = Arc::new(FooReconciler::new(client, caches));
    let reconcile = move |object: Arc<Foo>, ctx| {
        let sink = sink.clone();
        async move {
            let (name, resource_version) = (
                object.name_any(),
                object.resource_version().unwrap_or_default(),
            );
            let result = reconcile(object, ctx).await;
            sink.0.lock().unwrap().push(Report {
                name,
                resource_version,
                result: result.as_ref().map(|_| ()).map_err(|error| {
                    let code = match error {
                        Error::Kube(kube::Error::Api(status)) => Some(status.code),
                        _ => None,
                    };
                    (code, error.to_string())
                }),
            });
            result
        }
    };
    let running = controller
        .run(reconcile, error_policy, reconciler)
        .for_each(|result| async move {
            if let Err(controller::Error::QueueError(error)) = result {
                eprintln!("watch failed: {error}");
            }
        });
    tokio::spawn(running);
    reports
}

fn foos(client: &Client, namespace: &str) -> Api<Foo> {
    Api::namespaced(client.clone(), namespace)
}

fn deployments(client: &Client, namespace: &str) -> Api<Deployment> {
    Api::namespaced(client.clone(), namespace)
}

async fn create(client: &Client, ns: &str, name: &str, deployment: &str, replicas: i32) -> Foo {
    let mut object = Foo::new(
        name,
        FooSpec {
            deployment_name: deployment.into(),
            replicas,
        },
    );
    object.metadata.namespace = Some(ns.into());
    foos(client, ns)
        .create(&PostParams::default(), &object)
        .await
        .expect("the Foo is created")
}

async fn set_replicas(client: &Client, ns: &str, name: &str, replicas: i32) {
    foos(client, ns)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": replicas } })),
        )
        .await
        .unwrap();
}

/// Plays the Deployment controller: `available` pods of `deployment` are available. The API
/// server validates a Deployment's status: no more available than ready, no more ready
/// than replicas.
async fn make_available(client: &Client, ns: &str, deployment: &str, available: i32) {
    let status = json!({ "status": {
        "replicas": available, "readyReplicas": available, "availableReplicas": available
    } });
    deployments(client, ns)
        .patch_status(deployment, &PatchParams::default(), &Patch::Merge(status))
        .await
        .unwrap();
}

/// Waits for the Deployment `name` to satisfy `done`.
async fn deployment_until(
    client: &Client,
    ns: &str,
    name: &str,
    what: &str,
    done: impl Fn(&Deployment) -> bool,
) -> Deployment {
    let deployments = deployments(client, ns);
    eventually(what, || async {
        deployments.get_opt(name).await.unwrap().filter(|d| done(d))
    })
    .await
}

/// Waits for the Foo `name` to report `available` replicas.
async fn available_until(client: &Client, ns: &str, name: &str, available: i32) -> Foo {
    let foos = foos(client, ns);
    eventually(&format!("{name} reports {available} available"), || async {
        let object = foos.get(name).await.unwrap();
        let status = object.status.as_ref()?;
        (status.available_replicas == available).then_some(object)
    })
    .await
}

/// The Events in the namespace as (type, reason, note, count).
async fn events(client: &Client, ns: &str) -> Vec<(String, String, String, i32)> {
    let events: Api<Event> = Api::namespaced(client.clone(), ns);
    let mut out: Vec<_> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|e| {
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.note.unwrap_or_default(),
                e.series.map_or(1, |s| s.count),
            )
        })
        .collect();
    out.sort();
    out
}

fn replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.replicas
}

#[tokio::test]
async fn creates_the_named_nginx_deployment_owned_by_the_foo() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    let object = create(&client, &ns, "example-foo", "example-nginx", 2).await;
    let deployment =
        deployment_until(&client, &ns, "example-nginx", "the Deployment", |_| true).await;
    assert_eq!(replicas(&deployment), Some(2));
    let owner = &deployment.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Foo", "example-foo", Some(true))
    );
    assert_eq!(Some(&owner.uid), object.metadata.uid.as_ref());
    let spec = deployment.spec.clone();
    let labels = spec.selector.match_labels.unwrap();
    assert_eq!(labels["app"], "nginx");
    assert_eq!(labels["controller"], "example-foo");
    let container = &spec.template.spec.unwrap().containers[0];
    assert_eq!(
        (container.name.as_str(), container.image.as_deref()),
        ("nginx", Some("nginx:latest"))
    );

    // The status subresource: written, and the generation did not move.
    let object = available_until(&client, &ns, "example-foo", 0).await;
    assert_eq!(object.metadata.generation, Some(1));
    let synced = eventually("the Synced Event", || async {
        let events = events(&client, &ns).await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    // A sync that changed something records it; repeats form one series.
    assert_eq!(synced.len(), 1, "{synced:?}");
    let (type_, reason, note, _) = &synced[0];
    assert_eq!(
        (type_.as_str(), reason.as_str(), note.as_str()),
        ("Normal", "Synced", "Foo synced successfully")
    );
    assert_eq!(reports.failures(), []);
}

#[tokio::test]
async fn replicas_follow_the_foo_and_status_follows_the_deployment() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "example-foo", "example-nginx", 1).await;
    available_until(&client, &ns, "example-foo", 0).await;

    set_replicas(&client, &ns, "example-foo", 3).await;
    deployment_until(&client, &ns, "example-nginx", "replicas 3", |d| {
        replicas(d) == Some(3)
    })
    .await;
    // Through the Deployment watch, the status follows the Deployment's.
    make_available(&client, &ns, "example-nginx", 3).await;
    available_until(&client, &ns, "example-foo", 3).await;

    // Nothing changed: a reconcile (here, after an annotation) writes neither the
    // Deployment nor the status.
    let before = deployments(&client, &ns)
        .get("example-nginx")
        .await
        .unwrap();
    let annotated = foos(&client, &ns)
        .patch(
            "example-foo",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "annotations": { "touched": "yes" } } })),
        )
        .await
        .unwrap();
    let touched = annotated.resource_version().unwrap();
    eventually("a reconcile of the annotated Foo", || async {
        reports.reconciled("example-foo", &touched).then_some(())
    })
    .await;
    let after = deployments(&client, &ns)
        .get("example-nginx")
        .await
        .unwrap();
    assert_eq!(after.resource_version(), before.resource_version());
    let again = foos(&client, &ns).get("example-foo").await.unwrap();
    assert_eq!(again.resource_version(), annotated.resource_version());

    let all = deployments(&client, &ns).list(&ListParams::default()).await;
    assert_eq!(all.unwrap().items.len(), 1, "updated, never created twice");
    assert_eq!(reports.failures(), []);
}

/// A hand-made change of the Deployment's replicas is seen through the watch and undone
/// with an update that carries the resourceVersion read (upstream's `Update`).
#[tokio::test]
async fn drift_of_the_replicas_is_undone() {
    let (env, ns) = api_server().await;
    let client = env.client();
    start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "example-foo", "example-nginx", 2).await;
    deployment_until(&client, &ns, "example-nginx", "the Deployment", |_| true).await;
    let scaled = deployments(&client, &ns)
        .patch(
            "example-nginx",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": 7 } })),
        )
        .await
        .unwrap();
    assert_eq!(replicas(&scaled), Some(7));
    deployment_until(&client, &ns, "example-nginx", "replicas back to 2", |d| {
        replicas(d) == Some(2)
    })
    .await;
}

/// A Deployment of the name the Foo gives that the Foo does not control is left alone, the
/// reconcile fails with upstream's message, and a Warning Event says why.
#[tokio::test]
async fn refuses_to_adopt_a_deployment_it_does_not_control() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    // A Deployment of the same name that someone else created.
    let labels = json!({ "app": "theirs" });
    let theirs = Deployment {
        metadata: kube::api::ObjectMeta {
            name: Some("taken".into()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(5),
            selector: LabelSelector {
                match_labels: serde_json::from_value(labels.clone()).unwrap(),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(kube::api::ObjectMeta {
                    labels: serde_json::from_value(labels).unwrap(),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "theirs".into(),
                        image: Some("busybox".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    };
    let theirs = deployments(&client, &ns)
        .create(&PostParams::default(), &theirs)
        .await
        .unwrap();
    create(&client, &ns, "example-foo", "taken", 1).await;

    // When the Deployments' watch has not delivered "taken" yet, the first reconcile tries
    // to create it and fails with a 409 AlreadyExists (as upstream's does); the retry finds
    // it in the cache and refuses it.
    let refused = eventually("a refused reconcile", || async {
        reports
            .failures()
            .into_iter()
            .map(|(_, message)| message)
            .find(|message| message.contains("taken") && !message.contains("AlreadyExists"))
    })
    .await;
    assert_eq!(
        refused,
        r#"Resource "taken" already exists and is not managed by Foo"#
    );
    let warning = eventually("the Warning Event", || async {
        events(&client, &ns).await.into_iter().next()
    })
    .await;
    assert_eq!(
        (warning.0.as_str(), warning.1.as_str(), warning.2.as_str()),
        (
            "Warning",
            "ErrResourceExists",
            r#"Resource "taken" already exists and is not managed by Foo"#
        )
    );
    let untouched = deployments(&client, &ns).get("taken").await.unwrap();
    assert_eq!(untouched.resource_version(), theirs.resource_version());
    assert_eq!(replicas(&untouched), Some(5));
    assert!(untouched.owner_references().is_empty());
    let object = foos(&client, &ns).get("example-foo").await.unwrap();
    assert!(
        object.status.is_none(),
        "no status from a Deployment it does not control"
    );

    // A Deployment controlled by another Foo is refused as well.
    create(&client, &ns, "first", "shared", 1).await;
    deployment_until(&client, &ns, "shared", "the shared Deployment", |_| true).await;
    create(&client, &ns, "second", "shared", 2).await;
    eventually("the second Foo refused", || async {
        reports
            .all()
            .iter()
            .any(|r| r.name == "second" && r.result.is_err())
            .then_some(())
    })
    .await;
    let shared = deployments(&client, &ns).get("shared").await.unwrap();
    assert_eq!(replicas(&shared), Some(1));
    assert_eq!(shared.owner_references()[0].name, "first");
}

/// No finalizer: deleting a Foo is not held up, and its Deployment carries the owner
/// reference by which the garbage collector deletes it (the next test); the reconciler
/// never deletes it itself.
#[tokio::test]
async fn deletion_is_not_held_and_the_deployment_names_its_owner() {
    let (env, ns) = api_server().await;
    let client = env.client();
    start_controller(&client, client.clone(), &ns);
    let object = create(&client, &ns, "example-foo", "example-nginx", 1).await;
    available_until(&client, &ns, "example-foo", 0).await;
    foos(&client, &ns)
        .delete("example-foo", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        foos(&client, &ns)
            .get_opt("example-foo")
            .await
            .unwrap()
            .is_none()
    );
    let deployment = deployments(&client, &ns)
        .get("example-nginx")
        .await
        .unwrap();
    let owners = deployment.owner_references();
    assert_eq!(owners.len(), 1);
    assert_eq!(
        (Some(&owners[0].uid), owners[0].controller),
        (object.metadata.uid.as_ref(), Some(true))
    );
}

/// With kube-controller-manager running, as in a cluster: the Deployment gets its
/// ReplicaSet, and deleting the Foo deletes both through the owner references alone.
#[tokio::test]
async fn the_garbage_collector_deletes_a_deleted_foos_deployment() {
    use k8s_openapi::api::apps::v1::ReplicaSet;
    let (env, ns) = on(envtest::shared_with_controller_manager().await).await;
    let client = env.client();
    start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "example-foo", "example-nginx", 1).await;
    let replica_sets = Api::<ReplicaSet>::namespaced(client.clone(), &ns);
    eventually("the Deployment's ReplicaSet", || async {
        let sets = replica_sets.list(&ListParams::default()).await.ok()?;
        (sets.items.len() == 1).then_some(())
    })
    .await;
    foos(&client, &ns)
        .delete("example-foo", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the Deployment and its ReplicaSet collected", || async {
        let deployments = deployments(&client, &ns)
            .list(&ListParams::default())
            .await
            .ok()?;
        let sets = replica_sets.list(&ListParams::default()).await.ok()?;
        (deployments.items.is_empty() && sets.items.is_empty()).then_some(())
    })
    .await;
}

/// The reconciler converges while its requests fail: server errors (500), timeouts and
/// conflicts (409), injected between it and the API server. The Controller retries with the
/// example's backoff; the watches use a client without faults. (The reconciler reads
/// nothing from the API server: its requests are writes, and so are the faults.)
#[tokio::test]
async fn converges_despite_conflicts_server_errors_and_timeouts() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let timeout = Duration::from_millis(5);
    let faults = Faults::default()
        .fail(Fault::server_error().on_resource("deployments").times(1))
        .fail(Fault::timeout(timeout).on_verb("create").times(1))
        .fail(Fault::conflict().on_resource("foos/status").times(2))
        .fail(Fault::timeout(timeout).on_resource("foos/status").times(1));
    let faulty = testing::wrap(client.clone(), &RbacAudit::default(), &faults);
    let reports = start_controller(&client, faulty, &ns);
    create(&client, &ns, "example-foo", "example-nginx", 1).await;
    available_until(&client, &ns, "example-foo", 0).await;
    assert_eq!(faults.injected().len(), 5, "{:?}", faults.injected());

    // The Foo is scaled and its pods come up, while updates and status writes conflict.
    let faults = faults
        .fail(Fault::conflict().on_verb("update").times(3))
        .fail(Fault::timeout(timeout).on_verb("update").times(1))
        .fail(Fault::conflict().on_resource("foos/status").times(2));
    set_replicas(&client, &ns, "example-foo", 4).await;
    deployment_until(&client, &ns, "example-nginx", "replicas 4", |d| {
        replicas(d) == Some(4)
    })
    .await;
    make_available(&client, &ns, "example-nginx", 1).await;
    available_until(&client, &ns, "example-foo", 1).await;

    let injected = faults.injected();
    eprintln!(
        "sample-controller: {} faults injected, {} failed reconciles",
        injected.len(),
        reports.failures().len()
    );
    assert_eq!(injected.len(), 11, "{injected:?}");
    assert!(reports.failures().len() >= 11);
    let all = deployments(&client, &ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(all.len(), 1, "exactly one Deployment");
    assert_eq!(replicas(&all[0]), Some(4));
    assert_eq!(all[0].owner_references().len(), 1);
}

/// The controller reads from its watch and writes only what changes: creating a Foo costs
/// the Deployment's create, one status write and one Synced Event; its own status write
/// brings it back no more; and changes that need no repair (a label someone adds to the
/// Deployment, an annotation on the Foo) reconcile without a single request.
#[tokio::test]
async fn a_converged_object_costs_the_api_server_nothing() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let audit = RbacAudit::default();
    let audited = testing::wrap(client.clone(), &audit, &Faults::default());
    let reports = start_controller(&client, audited, &ns);
    create(&client, &ns, "example-foo", "example-nginx", 2).await;
    available_until(&client, &ns, "example-foo", 0).await;
    settled(|| reports.all().len()).await;
    // The Event is sent off the reconcile path: wait for it.
    eventually("the Synced Event", || async {
        (!events(&client, &ns).await.is_empty()).then_some(())
    })
    .await;
    assert_eq!(
        writes(&audit.requests()),
        ["create deployments", "create events", "patch foos/status"],
        "one Deployment, status and Synced Event"
    );
    let reads: Vec<_> = audit
        .requests()
        .into_iter()
        .filter(|r| ["get", "list"].contains(&r.verb.as_str()))
        .collect();
    assert_eq!(reads, [], "no read of what the watches hold");

    let (sent, reconciled) = (audit.requests().len(), reports.all().len());
    let label = Patch::Merge(json!({ "metadata": { "labels": { "team": "web" } } }));
    deployments(&client, &ns)
        .patch("example-nginx", &PatchParams::default(), &label)
        .await
        .unwrap();
    let annotation = Patch::Merge(json!({ "metadata": { "annotations": { "touched": "yes" } } }));
    foos(&client, &ns)
        .patch("example-foo", &PatchParams::default(), &annotation)
        .await
        .unwrap();
    eventually("reconciles after the changes", || async {
        (reports.all().len() > reconciled).then_some(())
    })
    .await;
    settled(|| reports.all().len()).await;
    assert_eq!(audit.requests()[sent..], [], "no request at all");
    assert_eq!(reports.failures(), []);
}

/// No reconcile is caused only by the controller's own writes: the Deployment it creates
/// and updates comes back through its watch, but the reconcile that wrote it went on with
/// it, so a creation and a rescale reconcile once each.
#[tokio::test]
async fn its_own_writes_do_not_reconcile_it_again() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "example-foo", "example-nginx", 1).await;
    available_until(&client, &ns, "example-foo", 0).await;
    settled(|| reports.all().len()).await;
    assert_eq!(
        reports.all().len(),
        1,
        "one reconcile for a creation: {:?}",
        reports.all()
    );

    set_replicas(&client, &ns, "example-foo", 3).await;
    deployment_until(&client, &ns, "example-nginx", "replicas 3", |d| {
        replicas(d) == Some(3)
    })
    .await;
    settled(|| reports.all().len()).await;
    assert_eq!(
        reports.all().len(),
        2,
        "one more for a rescale: {:?}",
        reports.all()
    );
    assert_eq!(reports.failures(), []);
}

/// Every request the controller makes, its watchers' lists and watches included, must be
/// allowed by config/rbac/role.yaml, and every rule there must be used.
#[tokio::test]
async fn rbac_role_allows_exactly_what_the_controller_uses() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let audit = RbacAudit::default();
    let audited = testing::wrap(client.clone(), &audit, &Faults::default());
    // The controller as `run` builds it, watches and all: a watch without its rule fails.
    start_controller(&audited, audited.clone(), &ns);

    create(&client, &ns, "example-foo", "example-nginx", 1).await;
    available_until(&client, &ns, "example-foo", 0).await;
    set_replicas(&client, &ns, "example-foo", 2).await;
    deployment_until(&client, &ns, "example-nginx", "replicas 2", |d| {
        replicas(d) == Some(2)
    })
    .await;
    make_available(&client, &ns, "example-nginx", 2).await;
    available_until(&client, &ns, "example-foo", 2).await;

    let role = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/role.yaml");
    if let Err(report) = audit.check_role_file(role) {
        panic!("{report}");
    }
}

/// The controller runs as the operator's ServiceAccount with config/rbac applied, so the
/// API server's own authorizer judges every request, watches included.
#[tokio::test]
async fn the_operator_service_account_may_do_what_the_controller_does() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
    let operator = env.operator_client(&config).await.unwrap();
    let reports = start_controller(&operator, operator.clone(), &ns);
    create(&client, &ns, "example-foo", "example-nginx", 1).await;
    available_until(&client, &ns, "example-foo", 0).await;
    set_replicas(&client, &ns, "example-foo", 2).await;
    deployment_until(&client, &ns, "example-nginx", "replicas 2", |d| {
        replicas(d) == Some(2)
    })
    .await;
    make_available(&client, &ns, "example-nginx", 2).await;
    available_until(&client, &ns, "example-foo", 2).await;
    let synced = eventually("the Synced Event", || async {
        let events = events(&client, &ns).await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    assert_eq!(synced[0].1, "Synced");
    assert_eq!(reports.failures(), []);
}

/// The same, with one rule removed from the generated role (patching foos/status): the API
/// server refuses that request with a 403, after the Deployment the role still allows.
#[tokio::test]
async fn a_rule_removed_from_the_role_is_refused_by_the_api_server() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let overlay = overlay_without_rule(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        &ns,
        "foos/status",
    );
    let operator = env.operator_client(&overlay).await.unwrap();
    let reports = start_controller(&operator, operator.clone(), &ns);
    create(&client, &ns, "example-foo", "example-nginx", 1).await;
    let refused = eventually("a refused reconcile", || async {
        reports
            .failures()
            .into_iter()
            .find_map(|(code, message)| (code == Some(403)).then_some(message))
    })
    .await;
    assert!(
        refused.contains(r#"cannot patch resource "foos/status""#),
        "{refused}"
    );
    deployment_until(&client, &ns, "example-nginx", "the Deployment", |_| true).await;
    let object = foos(&client, &ns).get("example-foo").await.unwrap();
    assert!(object.status.is_none());
}
