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

//! The Memcached controller against a real kube-apiserver and etcd (envtest): kube-runtime's
//! `Controller` with the example's watches reconciles what the tests create and change;
//! server-side apply, the status subresource, Events and RBAC are the API server's own.
//!
//! envtest runs no kube-controller-manager and no kubelet: no Deployment controller creates
//! pods or sets `status.availableReplicas` (the tests play it, creating pods and writing
//! the Deployment's status), and no garbage collector deletes owned objects (the tests check
//! the owner references, not the collection).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, Service};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller;
use kube::{Api, Client, ResourceExt};
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use memcached_example::controller::memcached::{
    CONTROLLER_NAME, Error, IMAGE, MemcachedReconciler, error_policy, labels, reconcile,
};
use rkb_runtime::cache::Namespaces;
use rkb_runtime::testing::controller::{eventually, overlay_without_rule, settled, writes};
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
use serde_json::json;

/// The field manager of the operator's writes: the manager binary's name, which is
/// `rkb_runtime::client::field_manager()` when it runs.
const FIELD_MANAGER: &str = "memcached-example";

/// The test binary's API server with the CRD installed as `make install` would, and a
/// fresh namespace for the test.
async fn api_server() -> (&'static Environment, String) {
    on(envtest::shared().await).await
}

/// The CRDs and a fresh namespace on `env`.
async fn on(env: &'static Environment) -> (&'static Environment, String) {
    rkb_runtime::client::set_field_manager(FIELD_MANAGER);
    let crds = memcached_example::manifests()
        .crds()
        .unwrap_or_else(|e| panic!("{e}"));
    env.apply().crds(crds).await.unwrap();
    let namespace = env.create_namespace().await.unwrap();
    (env, namespace)
}

/// What the controller reported: each reconcile's object, the resourceVersion it
/// reconciled, and the outcome, in order; and the failures of its watches.
#[derive(Clone, Default)]
struct Reports(Arc<Mutex<Vec<Report>>>, Arc<Mutex<Vec<String>>>);

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
    fn watch_failures(&self) -> Vec<String> {
        self.1.lock().unwrap().clone()
    }
}

/// Runs the example's Controller (its watches on Memcacheds and the Deployments and Services
/// they own) in `namespace` until the test ends: watches through `watch_client`, reconciles
/// through `client`.
fn start_controller(watch_client: &Client, client: Client, namespace: &str) -> Reports {
    let reports = Reports::default();
    let sink = reports.clone();
    let (controller, caches) = memcached_example::controller::memcached::controller(
        watch_client,
        &Namespaces::only([namespace]),
    );
    let reconciler = Arc::new(MemcachedReconciler::new(client, caches));
    let reconcile = move |object: Arc<Memcached>, ctx| {
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
    let watch_failures = reports.1.clone();
    let running = controller
        .run(reconcile, error_policy, reconciler)
        .for_each(move |result| {
            if let Err(controller::Error::QueueError(error)) = result {
                eprintln!("watch failed: {error}");
                watch_failures.lock().unwrap().push(error.to_string());
            }
            async {}
        });
    tokio::spawn(running);
    reports
}

async fn create(client: &Client, namespace: &str, name: &str, spec: MemcachedSpec) -> Memcached {
    let mut object = Memcached::new(name, spec);
    object.metadata.namespace = Some(namespace.into());
    Api::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &object)
        .await
        .expect("the Memcached is created")
}

fn size(size: i32) -> MemcachedSpec {
    MemcachedSpec {
        size,
        container_port: None,
    }
}

/// Changes the spec as a user would (`kubectl patch --type=merge`).
async fn patch_spec(client: &Client, namespace: &str, name: &str, spec: serde_json::Value) {
    Api::<Memcached>::namespaced(client.clone(), namespace)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": spec })),
        )
        .await
        .expect("the Memcached is changed");
}

fn replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.replicas
}

/// The container ports of the Deployment's only container, as (name, port).
fn container_ports(deployment: &Deployment) -> Vec<(String, i32)> {
    let pod = deployment.spec.template.spec.as_ref();
    pod.unwrap().containers[0]
        .ports
        .iter()
        .flatten()
        .map(|p| (p.name.clone().unwrap_or_default(), p.container_port))
        .collect()
}

fn service_ports(service: &Service) -> Vec<(String, i32)> {
    service
        .spec
        .iter()
        .flat_map(|s| s.ports.iter().flatten())
        .map(|p| (p.name.clone().unwrap_or_default(), p.port))
        .collect()
}

/// Waits for the Deployment `name` to satisfy `done`.
async fn deployment_until(
    client: &Client,
    namespace: &str,
    name: &str,
    what: &str,
    done: impl Fn(&Deployment) -> bool,
) -> Deployment {
    let deployments = Api::<Deployment>::namespaced(client.clone(), namespace);
    eventually(what, || async {
        deployments.get_opt(name).await.unwrap().filter(|d| done(d))
    })
    .await
}

/// Waits for the Memcached `name` to satisfy `done`.
async fn memcached_until(
    client: &Client,
    namespace: &str,
    name: &str,
    what: &str,
    done: impl Fn(&Memcached) -> bool,
) -> Memcached {
    let memcacheds = Api::<Memcached>::namespaced(client.clone(), namespace);
    eventually(what, || async {
        memcacheds.get_opt(name).await.unwrap().filter(|m| done(m))
    })
    .await
}

/// The `Available` condition as (status, message), if any.
fn available(object: &Memcached) -> Option<(String, String)> {
    let condition = object
        .status
        .iter()
        .flat_map(|s| &s.conditions)
        .find(|c| c.type_ == "Available")?;
    Some((condition.status.clone(), condition.message.clone()))
}

/// Plays the Deployment controller: `count` pods of `name` (never running: envtest has no
/// scheduler or kubelet), and the Deployment's status saying they are available.
async fn run_pods(client: &Client, namespace: &str, name: &str, count: i32) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    for i in 0..count {
        let mut pod = Pod {
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "memcached".into(),
                    image: Some(IMAGE.into()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
            ..Pod::default()
        };
        // Names out of order, to check that status.nodes is sorted.
        pod.metadata.name = Some(format!("{name}-pod-{}", count - i));
        pod.metadata.labels = Some(labels(name));
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    // The API server validates a Deployment's status: no more available than ready, no
    // more ready than replicas.
    let status = json!({ "status": {
        "replicas": count, "readyReplicas": count, "availableReplicas": count
    } });
    Api::<Deployment>::namespaced(client.clone(), namespace)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(status))
        .await
        .unwrap();
}

/// The controller's Events in the namespace as (reason, related kind, note, count). The
/// API server records some of its own (e.g. `ClusterIPNotAllocated` when its repair loop
/// races a new Service's cluster IP), which are left out.
async fn events(client: &Client, namespace: &str) -> Vec<(String, String, String, i32)> {
    testing::controller::events(client, namespace, CONTROLLER_NAME)
        .await
        .into_iter()
        .map(|e| (e.reason, e.related_kind, e.note, e.count))
        .collect()
}

/// The controller's Events once there are two of them (they are sent off the reconcile
/// path: a status written after them does not mean they have arrived).
async fn two_events(client: &Client, namespace: &str) -> Vec<(String, String, String, i32)> {
    eventually("two Events", || async {
        let events = events(client, namespace).await;
        (events.len() >= 2).then_some(events)
    })
    .await
}

/// The field managers of an object's fields, as (manager, operation, subresource).
fn managers<K: ResourceExt>(object: &K) -> Vec<(String, String, String)> {
    let mut managers: Vec<_> = object
        .managed_fields()
        .iter()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
                m.subresource.clone().unwrap_or_default(),
            )
        })
        .collect();
    managers.sort();
    managers
}

#[tokio::test]
async fn the_controller_creates_an_owned_deployment_and_service() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    let memcached = create(&client, &ns, "cache", size(3)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;

    let deployment = Api::<Deployment>::namespaced(client.clone(), &ns)
        .get("cache")
        .await
        .expect("the Deployment exists");
    assert_eq!(replicas(&deployment), Some(3));
    let owner = deployment.owner_references()[0].clone();
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Memcached", "cache", Some(true))
    );
    assert_eq!(Some(&owner.uid), memcached.metadata.uid.as_ref());
    // Created by server-side apply: one field manager, the operator's, from the start.
    assert_eq!(
        managers(&deployment),
        [(FIELD_MANAGER.into(), "Apply".into(), String::new())]
    );
    let spec = deployment.spec.clone();
    assert_eq!(spec.selector.match_labels, Some(labels("cache")));
    let pod = spec.template.spec.unwrap();
    let container = &pod.containers[0];
    assert_eq!(container.image.as_deref(), Some("memcached:1.6-alpine"));
    assert_eq!(
        container.args.as_deref().unwrap(),
        ["-m=64", "-o", "modern", "-v"]
    );
    assert_eq!(container_ports(&deployment), [("memcached".into(), 11211)]);
    let security = container.security_context.as_ref().unwrap();
    assert_eq!(security.run_as_non_root, Some(true));
    assert_eq!(security.run_as_user, Some(1001));
    assert_eq!(security.allow_privilege_escalation, Some(false));
    assert_eq!(
        security.capabilities.as_ref().unwrap().drop.as_deref(),
        Some(&["ALL".to_owned()][..])
    );
    let pod_security = pod.security_context.unwrap();
    assert_eq!(pod_security.run_as_non_root, Some(true));
    assert_eq!(
        pod_security.seccomp_profile.unwrap().type_,
        "RuntimeDefault"
    );

    let service = Api::<Service>::namespaced(client.clone(), &ns)
        .get("cache")
        .await
        .expect("the Service exists");
    assert_eq!(service.owner_references()[0].uid, owner.uid);
    assert_eq!(
        managers(&service),
        [(FIELD_MANAGER.into(), "Apply".into(), String::new())]
    );
    assert_eq!(service_ports(&service), [("memcached".into(), 11211)]);
    let service_spec = service.spec.unwrap();
    assert_eq!(service_spec.selector, Some(labels("cache")));
    // The API server allocated a cluster IP: the operator's apply does not fight over it.
    assert!(service_spec.cluster_ip.is_some_and(|ip| !ip.is_empty()));

    assert_eq!(
        two_events(&client, &ns).await,
        [
            (
                "Created".into(),
                "Deployment".into(),
                "Created Deployment cache with 3 replicas".into(),
                1
            ),
            (
                "Created".into(),
                "Service".into(),
                "Created Service cache".into(),
                1
            ),
        ]
    );
    assert_eq!(reports.failures(), []);
}

/// Every spec field can change after creation: the objects follow under one field manager,
/// and no stale list entry survives (a container port left behind by another manager would
/// duplicate the port name, which the API server refuses with a 422).
#[tokio::test]
async fn every_spec_field_can_change() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "cache", size(1)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;

    for (spec, want_replicas, want_port) in [
        (json!({ "size": 4, "containerPort": 11311 }), 4, 11311),
        (json!({ "containerPort": 12000 }), 4, 12000),
        (json!({ "size": 2 }), 2, 12000),
        (json!({ "containerPort": null }), 2, 11211),
    ] {
        patch_spec(&client, &ns, "cache", spec.clone()).await;
        let deployment = deployment_until(&client, &ns, "cache", &spec.to_string(), |d| {
            // A refused apply is retried forever: fail at once, with the API server's answer.
            if let Some(failure) = reports.failures().first() {
                panic!("a reconcile failed after {spec}: {failure:?}");
            }
            replicas(d) == Some(want_replicas)
                && container_ports(d).iter().any(|(_, p)| *p == want_port)
        })
        .await;
        assert_eq!(
            container_ports(&deployment),
            [("memcached".into(), want_port)],
            "after {spec}"
        );
        let services = Api::<Service>::namespaced(client.clone(), &ns);
        let service = eventually(&format!("the Service's port after {spec}"), || async {
            let service = services.get("cache").await.unwrap();
            service_ports(&service)
                .iter()
                .any(|(_, p)| *p == want_port)
                .then_some(service)
        })
        .await;
        assert_eq!(
            service_ports(&service),
            [("memcached".into(), want_port)],
            "after {spec}"
        );
        assert_eq!(
            managers(&deployment),
            [(FIELD_MANAGER.into(), "Apply".into(), String::new())]
        );
        memcached_until(&client, &ns, "cache", "the status follows", |m| {
            available(m).is_some_and(|(_, message)| {
                message == format!("0 of {want_replicas} memcached pods are available")
            })
        })
        .await;
    }
    assert_eq!(reports.failures(), []);
}

/// A hand-made change of the replicas is seen through the Deployment watch and undone;
/// the size changes are recorded as one series of Events.
#[tokio::test]
async fn the_deployment_follows_the_size_and_drift_is_undone() {
    let (env, ns) = api_server().await;
    let client = env.client();
    start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "cache", size(1)).await;
    deployment_until(&client, &ns, "cache", "replicas 1", |d| {
        replicas(d) == Some(1)
    })
    .await;
    patch_spec(&client, &ns, "cache", json!({ "size": 4 })).await;
    deployment_until(&client, &ns, "cache", "replicas 4", |d| {
        replicas(d) == Some(4)
    })
    .await;

    // Someone scales the Deployment by hand (a merge patch under kubectl's manager).
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let scaled = deployments
        .patch(
            "cache",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": 7 } })),
        )
        .await
        .unwrap();
    assert_eq!(replicas(&scaled), Some(7));
    deployment_until(&client, &ns, "cache", "replicas back to 4", |d| {
        replicas(d) == Some(4)
    })
    .await;

    // Both scalings are recorded as Scaled Events of the Deployment. kube's Recorder
    // usually aggregates them into one series (count 2, the first note), but may start a
    // second one; and on a loaded machine a reconcile that still reads the hand-scaled
    // Deployment from its cache scales once more. So count occurrences across series.
    let scaled = eventually("two Scaled Events", || async {
        let scaled: Vec<_> = events(&client, &ns)
            .await
            .into_iter()
            .filter(|e| e.0 == "Scaled")
            .collect();
        (scaled.iter().map(|e| e.3).sum::<i32>() >= 2).then_some(scaled)
    })
    .await;
    assert!(scaled.iter().all(|e| e.1 == "Deployment"), "{scaled:?}");
    assert!(
        scaled
            .iter()
            .any(|e| e.2 == "Scaled Deployment cache from 1 to 4 replicas"),
        "{scaled:?}"
    );
    let all = deployments.list(&ListParams::default()).await.unwrap();
    assert_eq!(all.items.len(), 1, "updated, never created again");
}

/// The operator's server-side apply owns the fields it sets: another manager's plain apply
/// of one of them is a real conflict naming the operator, and a forced one is undone.
#[tokio::test]
async fn another_managers_apply_conflicts_with_the_operators_fields() {
    let (env, ns) = api_server().await;
    let client = env.client();
    start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "cache", size(2)).await;
    deployment_until(&client, &ns, "cache", "replicas 2", |d| {
        replicas(d) == Some(2)
    })
    .await;

    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let theirs = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "cache" },
        "spec": { "replicas": 5 },
    });
    let error = deployments
        .patch(
            "cache",
            &PatchParams::apply("someone-else"),
            &Patch::Apply(&theirs),
        )
        .await
        .unwrap_err();
    let kube::Error::Api(status) = error else {
        panic!("not an API error: {error}");
    };
    assert_eq!(status.code, 409, "{status:?}");
    assert!(
        status.message.contains(FIELD_MANAGER) && status.message.contains(".spec.replicas"),
        "{}",
        status.message
    );

    deployments
        .patch(
            "cache",
            &PatchParams::apply("someone-else").force(),
            &Patch::Apply(&theirs),
        )
        .await
        .unwrap();
    let deployment = deployment_until(&client, &ns, "cache", "replicas back to 2", |d| {
        replicas(d) == Some(2)
    })
    .await;
    // The operator took the field back; the other manager keeps only what it still owns.
    let owners: Vec<_> = deployment
        .managed_fields()
        .iter()
        .filter(|m| {
            m.fields_v1
                .as_ref()
                .is_some_and(|f| f.0["f:spec"].get("f:replicas").is_some())
        })
        .map(|m| m.manager.clone().unwrap_or_default())
        .collect();
    assert_eq!(owners, [FIELD_MANAGER]);
}

/// The status, written through the status subresource, lists the pods and says whether
/// they are available; a change of the Deployment's status reaches it through the watch.
#[tokio::test]
async fn status_lists_the_pods_and_whether_they_are_available() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "cache", size(3)).await;
    create(&client, &ns, "other", size(1)).await;
    let cache = memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;
    let status = cache.status.clone().unwrap();
    assert!(status.nodes.is_empty());
    let condition = &status.conditions[0];
    assert_eq!(
        (
            condition.type_.as_str(),
            condition.status.as_str(),
            condition.reason.as_str()
        ),
        ("Available", "False", "DeploymentUnavailable")
    );
    assert_eq!(condition.message, "0 of 3 memcached pods are available");
    // The status subresource: the status write did not change the generation.
    assert_eq!(cache.metadata.generation, Some(1));
    assert_eq!(condition.observed_generation, Some(1));
    assert!(
        managers(&cache).contains(&(FIELD_MANAGER.into(), "Apply".into(), "status".into())),
        "{:?}",
        managers(&cache)
    );

    memcached_until(&client, &ns, "other", "a status", |m| {
        available(m).is_some()
    })
    .await;
    run_pods(&client, &ns, "other", 1).await;
    run_pods(&client, &ns, "cache", 3).await;
    let cache = memcached_until(&client, &ns, "cache", "available", |m| {
        available(m).is_some_and(|(status, _)| status == "True")
    })
    .await;
    let status = cache.status.clone().unwrap();
    assert_eq!(
        status.nodes,
        ["cache-pod-1", "cache-pod-2", "cache-pod-3"],
        "sorted, and only this Memcached's pods"
    );
    assert_eq!(status.conditions[0].reason, "DeploymentAvailable");

    // Nothing changed: a reconcile (here, after an annotation) does not write the status.
    let annotated = Api::<Memcached>::namespaced(client.clone(), &ns)
        .patch(
            "cache",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "annotations": { "touched": "yes" } } })),
        )
        .await
        .unwrap();
    let touched = annotated.resource_version().unwrap();
    eventually("a reconcile of the annotated Memcached", || async {
        reports.reconciled("cache", &touched).then_some(())
    })
    .await;
    let again = Api::<Memcached>::namespaced(client.clone(), &ns)
        .get("cache")
        .await
        .unwrap();
    assert_eq!(again.resource_version(), annotated.resource_version());
}

/// No finalizer: deleting a Memcached is not held up, and its Deployment and Service carry
/// the owner reference by which the garbage collector deletes them (shown with
/// kube-controller-manager below); the reconciler never deletes them itself.
#[tokio::test]
async fn deletion_is_not_held_and_the_owned_objects_name_their_owner() {
    let (env, ns) = api_server().await;
    let client = env.client();
    start_controller(&client, client.clone(), &ns);
    let memcached = create(&client, &ns, "cache", size(2)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;
    let memcacheds = Api::<Memcached>::namespaced(client.clone(), &ns);
    memcacheds
        .delete("cache", &DeleteParams::default())
        .await
        .unwrap();
    assert!(memcacheds.get_opt("cache").await.unwrap().is_none());
    let uid = memcached.uid().unwrap();
    let deployment = Api::<Deployment>::namespaced(client.clone(), &ns)
        .get("cache")
        .await
        .unwrap();
    let service = Api::<Service>::namespaced(client.clone(), &ns)
        .get("cache")
        .await
        .unwrap();
    for owners in [deployment.owner_references(), service.owner_references()] {
        assert_eq!(owners.len(), 1);
        assert_eq!(
            (owners[0].uid.as_str(), owners[0].controller),
            (uid.as_str(), Some(true))
        );
    }
}

/// The reconciler converges while its requests fail: conflicts (409), server errors (500),
/// timeouts, and a response lost after the write was done, injected between it and the API
/// server. The Controller retries with the example's backoff; the watches use a client
/// without faults. (The reconciler reads nothing from the API server: its requests are
/// writes, and so are the faults.)
#[tokio::test]
async fn converges_despite_conflicts_server_errors_and_timeouts() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let timeout = Duration::from_millis(5);
    // ANCHOR: faults
    let faults = Faults::default()
        .fail(Fault::conflict().on_resource("deployments").times(2))
        .fail(Fault::response_lost(timeout).on_resource("deployments"))
        .fail(Fault::server_error().on_resource("services").times(2))
        .fail(Fault::conflict().on_resource("memcacheds/status").times(2));
    let faulty = testing::wrap(client.clone(), &RbacAudit::default(), &faults);
    // ANCHOR_END: faults
    let reports = start_controller(&client, faulty, &ns);
    create(&client, &ns, "cache", size(2)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;
    let first = faults.injected().len();
    assert_eq!(first, 7, "{:?}", faults.injected());

    // The pods come up, the size changes, and more faults hit the next reconciles.
    let faults = faults
        .fail(Fault::conflict().on_verb("patch").times(2))
        .fail(Fault::timeout(timeout).on_resource("deployments"));
    run_pods(&client, &ns, "cache", 2).await;
    patch_spec(&client, &ns, "cache", json!({ "size": 5 })).await;
    let status = memcached_until(&client, &ns, "cache", "the new size", |m| {
        available(m).is_some_and(|(_, message)| message == "2 of 5 memcached pods are available")
    })
    .await
    .status
    .unwrap();
    assert_eq!(status.nodes, ["cache-pod-1", "cache-pod-2"]);
    assert_eq!(status.conditions.len(), 1);

    let injected = faults.injected();
    eprintln!(
        "memcached: {} faults injected, {} failed reconciles",
        injected.len(),
        reports.failures().len()
    );
    assert_eq!(injected.len(), 10, "{injected:?}");
    assert!(reports.failures().len() >= 10);
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(deployments.len(), 1, "exactly one Deployment");
    assert_eq!(replicas(&deployments[0]), Some(5));
    let services = Api::<Service>::namespaced(client.clone(), &ns)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(services.len(), 1, "exactly one Service");
    // Each Event at most once: none was duplicated by a retried reconcile.
    for (reason, related, _, count) in events(&client, &ns).await {
        assert_eq!(count, 1, "{reason} {related} recorded {count} times");
    }
}

/// The controller reads from its watches and writes only what changes: creating a
/// Memcached costs one write of each kind (Deployment, Service, status, two Events), its
/// own status write brings it back no more, and changes that need no repair (labels someone
/// adds to the Deployment and Service, an annotation on the Memcached) reconcile without a
/// single request.
#[tokio::test]
async fn a_converged_object_costs_the_api_server_nothing() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let audit = RbacAudit::default();
    let audited = testing::wrap(client.clone(), &audit, &Faults::default());
    let reports = start_controller(&client, audited, &ns);
    create(&client, &ns, "cache", size(2)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;
    settled(|| reports.all().len()).await;
    two_events(&client, &ns).await;
    assert_eq!(
        writes(&audit.requests()),
        [
            "create events",
            "create events",
            "patch deployments",
            "patch memcacheds/status",
            "patch services"
        ],
        "one Deployment, Service and status, and the two Created Events"
    );
    let reads: Vec<_> = audit
        .requests()
        .into_iter()
        .filter(|r| ["get", "list"].contains(&r.verb.as_str()))
        .collect();
    assert_eq!(reads, [], "no read of what the watches hold");

    let (sent, reconciled) = (audit.requests().len(), reports.all().len());
    let label = Patch::Merge(json!({ "metadata": { "labels": { "team": "web" } } }));
    Api::<Deployment>::namespaced(client.clone(), &ns)
        .patch("cache", &PatchParams::default(), &label)
        .await
        .unwrap();
    Api::<Service>::namespaced(client.clone(), &ns)
        .patch("cache", &PatchParams::default(), &label)
        .await
        .unwrap();
    let annotation = Patch::Merge(json!({ "metadata": { "annotations": { "touched": "yes" } } }));
    Api::<Memcached>::namespaced(client.clone(), &ns)
        .patch("cache", &PatchParams::default(), &annotation)
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

/// No reconcile is caused only by the controller's own writes: the Deployment and Service
/// it applies come back through its watches, but the reconcile that applied them went on
/// with them, so a creation and a rescale reconcile once each.
#[tokio::test]
async fn its_own_writes_do_not_reconcile_it_again() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "cache", size(1)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;
    settled(|| reports.all().len()).await;
    assert_eq!(
        reports.all().len(),
        1,
        "one reconcile for a creation: {:?}",
        reports.all()
    );

    patch_spec(&client, &ns, "cache", json!({ "size": 3 })).await;
    deployment_until(&client, &ns, "cache", "replicas 3", |d| {
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

/// Every request the reconciler makes, plus the list+watch of the Controller's watchers,
/// must be allowed by its `#[rbac]` rules (rendered as config/rbac/role.yaml renders them),
/// and every one of them must be used.
#[tokio::test]
async fn rbac_role_allows_exactly_what_the_controller_uses() {
    let (env, ns) = api_server().await;
    let client = env.client();
    // ANCHOR: rbac-audit
    let audit = RbacAudit::default();
    let audited = testing::wrap(client.clone(), &audit, &Faults::default());
    // The controller as `run` builds it, watches and all: a watch without its rule fails.
    start_controller(&audited, audited.clone(), &ns);
    // ANCHOR_END: rbac-audit

    create(&client, &ns, "cache", size(1)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;
    run_pods(&client, &ns, "cache", 1).await;
    patch_spec(&client, &ns, "cache", json!({ "size": 3 })).await;
    deployment_until(&client, &ns, "cache", "replicas 3", |d| {
        replicas(d) == Some(3)
    })
    .await;
    // A second scaling: its Event joins the first one's series (a patch).
    patch_spec(&client, &ns, "cache", json!({ "size": 2 })).await;
    eventually("a series of two Scaled Events", || async {
        let events = events(&client, &ns).await;
        events
            .iter()
            .any(|e| e.0 == "Scaled" && e.3 == 2)
            .then_some(())
    })
    .await;

    // config/rbac/role.yaml holds these rules and the storage migration's (which
    // tests/storage_migration.rs audits the same way); `manifests_are_up_to_date` checks
    // that it is their rendering.
    let role = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/role.yaml");
    // ANCHOR: rbac-audit-check
    let rules = rkb_runtime::rbac_rules::<MemcachedReconciler>();
    if let Err(report) = audit.check_rules(&rules) {
        panic!("{report}");
    }
    // ANCHOR_END: rbac-audit-check
    let rendered = rkb_runtime::Manifests::new(vec![], vec![rules])
        .render()
        .unwrap();
    let controller_role = &rendered[Path::new("config/rbac/role.yaml")];
    if let Err(report) = audit.check_role_yaml(controller_role) {
        panic!("{report}");
    }
    assert!(
        audit
            .check_role_file(role)
            .unwrap_err()
            .to_string()
            .contains("customresourcedefinitions"),
        "the migration's rules are in role.yaml, unused by the controller"
    );

    // The audit is strict both ways: a rule more, or a verb less, fails.
    let yaml = std::fs::read_to_string(role).unwrap();
    let excessive =
        format!("{yaml}- apiGroups: [apps]\n  resources: [deployments]\n  verbs: [delete]\n");
    let report = audit.check_role_yaml(&excessive).unwrap_err().to_string();
    assert!(report.contains("excessive rule: the role allows `delete apps/deployments`"));
    let missing = yaml.replacen("  - create\n", "", 1);
    let report = audit.check_role_yaml(&missing).unwrap_err().to_string();
    assert!(report.contains("missing rule"), "{report}");
}

/// The controller runs as the operator's ServiceAccount with config/rbac applied, so the
/// API server's own authorizer judges every request, watches included.
#[tokio::test]
async fn the_operator_service_account_may_do_what_the_controller_does() {
    let (env, ns) = api_server().await;
    let client = env.client();
    // ANCHOR: operator-client
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
    let operator = env.operator_client(&config).await.unwrap();
    // ANCHOR_END: operator-client
    let reports = start_controller(&operator, operator.clone(), &ns);
    create(&client, &ns, "cache", size(2)).await;
    memcached_until(&client, &ns, "cache", "a status", |m| {
        available(m).is_some()
    })
    .await;
    run_pods(&client, &ns, "cache", 2).await;
    memcached_until(&client, &ns, "cache", "available", |m| {
        available(m).is_some_and(|(status, _)| status == "True")
    })
    .await;
    assert_eq!(
        two_events(&client, &ns).await.len(),
        2,
        "the Created Events"
    );
    assert_eq!(reports.failures(), []);
}

/// The same, with one rule removed from the generated role (listing and watching pods): the
/// API server refuses the pod watch with a 403, and the reconcile does what the role still
/// allows, then waits for the pods it cannot see: no status.
#[tokio::test]
async fn a_rule_removed_from_the_role_is_refused_by_the_api_server() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let overlay = overlay_without_rule(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        &ns,
        "pods",
    );
    let operator = env.operator_client(&overlay).await.unwrap();
    let reports = start_controller(&operator, operator.clone(), &ns);
    create(&client, &ns, "cache", size(1)).await;
    let refused = eventually("a refused pod watch", || async {
        reports.watch_failures().into_iter().next()
    })
    .await;
    assert!(
        refused.contains(r#"cannot list resource "pods""#),
        "{refused}"
    );
    // What the role still allows was done.
    deployment_until(&client, &ns, "cache", "the Deployment", |_| true).await;
    // The Service is applied after the Deployment, in the same reconcile: wait for it too.
    let services = Api::<Service>::namespaced(client.clone(), &ns);
    eventually("the Service", || async {
        services.get_opt("cache").await.unwrap()
    })
    .await;
    assert_eq!(reports.failures(), []);
    let memcached = Api::<Memcached>::namespaced(client.clone(), &ns)
        .get("cache")
        .await
        .unwrap();
    assert!(memcached.status.is_none(), "no status without the pods");
}

/// On a control plane with kube-controller-manager: the Deployment gets a ReplicaSet and
/// Pods (which never run: there is no kubelet), and deleting the Memcached deletes its
/// Deployment, ReplicaSet, Pods and Service through the owner references alone.
// ANCHOR: garbage-collection
#[tokio::test]
async fn the_garbage_collector_deletes_what_a_deleted_memcached_owned() {
    use k8s_openapi::api::apps::v1::ReplicaSet;
    let (env, ns) = on(envtest::shared_with_controller_manager().await).await;
    let client = env.client();
    start_controller(&client, client.clone(), &ns);
    create(&client, &ns, "cache", size(2)).await;
    let replica_sets = Api::<ReplicaSet>::namespaced(client.clone(), &ns);
    let pods = Api::<Pod>::namespaced(client.clone(), &ns);
    eventually("the Deployment's ReplicaSet and its two Pods", || async {
        let sets = replica_sets.list(&ListParams::default()).await.ok()?;
        let pods = pods.list(&ListParams::default()).await.ok()?;
        (sets.items.len() == 1 && pods.items.len() == 2).then_some(())
    })
    .await;

    Api::<Memcached>::namespaced(client.clone(), &ns)
        .delete("cache", &DeleteParams::default())
        .await
        .unwrap();
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let services = Api::<Service>::namespaced(client.clone(), &ns);
    eventually(
        "the Deployment, ReplicaSet, Pods and Service collected",
        || async {
            let left = deployments
                .list(&ListParams::default())
                .await
                .ok()?
                .items
                .len()
                + replica_sets
                    .list(&ListParams::default())
                    .await
                    .ok()?
                    .items
                    .len()
                + pods.list(&ListParams::default()).await.ok()?.items.len()
                + services.get_opt("cache").await.ok()?.iter().count();
            (left == 0).then_some(())
        },
    )
    .await;
}
// ANCHOR_END: garbage-collection
