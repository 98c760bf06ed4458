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

//! The Memcached reconciler against kube-fake-client's in-memory API (no cluster): what it
//! creates and updates, the status and Events it writes, convergence under injected faults,
//! and an RBAC audit of config/rbac/role.yaml.
//!
//! The in-memory API has no watches and no Deployment controller, so the tests call
//! `reconcile` the way the controller would and play the Deployment controller themselves
//! (pods, `status.availableReplicas`).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec, Service};
use k8s_openapi::api::events::v1::Event;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, Client, ResourceExt};
use kube_fake_client::ClientBuilder;
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use memcached_example::controller::memcached::{
    IMAGE, MemcachedReconciler, error_policy, labels, reconcile,
};
use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
use serde_json::json;

const NS: &str = "default";

async fn fake_client() -> Client {
    ClientBuilder::new()
        .with_resource::<Memcached>()
        .with_status_subresource::<Memcached>()
        .with_status_subresource::<Deployment>()
        .build()
        .await
        .expect("the in-memory API starts")
}

fn memcacheds(client: &Client) -> Api<Memcached> {
    Api::namespaced(client.clone(), NS)
}

async fn create(client: &Client, name: &str, size: i32) -> Memcached {
    let mut object = Memcached::new(
        name,
        MemcachedSpec {
            size,
            container_port: None,
        },
    );
    object.metadata.namespace = Some(NS.into());
    memcacheds(client)
        .create(&PostParams::default(), &object)
        .await
        .expect("the Memcached is created")
}

async fn resize(client: &Client, name: &str, size: i32) {
    memcacheds(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "size": size } })),
        )
        .await
        .expect("the Memcached is resized");
}

/// Reconciles the current state of `name` once, as the controller does after a change.
async fn reconcile_once(
    client: &Client,
    ctx: &Arc<MemcachedReconciler>,
    name: &str,
) -> Result<Action, memcached_example::controller::memcached::Error> {
    let object = memcacheds(client)
        .get(name)
        .await
        .expect("the Memcached exists");
    reconcile(Arc::new(object), ctx.clone()).await
}

/// Reconciles `name` until a reconcile succeeds, calling `error_policy` after each failure as
/// the controller does (without waiting out the backoff). Returns the number of attempts.
async fn reconcile_until_ok(client: &Client, ctx: &Arc<MemcachedReconciler>, name: &str) -> usize {
    for attempt in 1..=50 {
        let object = Arc::new(memcacheds(client).get(name).await.unwrap());
        match reconcile(object.clone(), ctx.clone()).await {
            Ok(_) => return attempt,
            Err(error) => {
                error_policy(object, &error, ctx.clone());
            }
        }
    }
    panic!("{name} did not converge in 50 reconciles");
}

/// Plays the Deployment controller: `count` running pods of `name`, and the Deployment's
/// available replicas.
async fn run_pods(client: &Client, name: &str, count: usize) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
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
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NS);
    deployments
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "availableReplicas": count } })),
        )
        .await
        .unwrap();
}

/// The Events in the namespace as (reason, related kind, note, count).
async fn events(client: &Client) -> Vec<(String, String, String, i32)> {
    let events: Api<Event> = Api::namespaced(client.clone(), NS);
    let mut out: Vec<_> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|e| {
            (
                e.reason.unwrap_or_default(),
                e.related.and_then(|r| r.kind).unwrap_or_default(),
                e.note.unwrap_or_default(),
                e.series.map_or(1, |s| s.count),
            )
        })
        .collect();
    out.sort();
    out
}

fn replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.as_ref().and_then(|s| s.replicas)
}

#[tokio::test]
async fn creates_an_owned_deployment_and_service() {
    let client = fake_client().await;
    let memcached = create(&client, "cache", 3).await;
    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
    let action = reconcile_once(&client, &ctx, "cache").await.unwrap();
    assert_eq!(action, Action::await_change());

    let deployment = Api::<Deployment>::namespaced(client.clone(), NS)
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
    let spec = deployment.spec.unwrap();
    assert_eq!(spec.selector.match_labels, Some(labels("cache")));
    let pod = spec.template.spec.unwrap();
    let container = &pod.containers[0];
    assert_eq!(container.image.as_deref(), Some("memcached:1.6-alpine"));
    assert_eq!(
        container.args.as_deref().unwrap(),
        ["-m=64", "-o", "modern", "-v"]
    );
    assert_eq!(container.ports.as_ref().unwrap()[0].container_port, 11211);
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

    let service = Api::<Service>::namespaced(client.clone(), NS)
        .get("cache")
        .await
        .expect("the Service exists");
    assert_eq!(service.owner_references()[0].uid, owner.uid);
    let service_spec = service.spec.unwrap();
    assert_eq!(service_spec.selector, Some(labels("cache")));
    assert_eq!(service_spec.ports.unwrap()[0].port, 11211);

    assert_eq!(
        events(&client).await,
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
}

#[tokio::test]
async fn the_container_port_is_used_by_the_pods_and_the_service() {
    let client = fake_client().await;
    let mut object = Memcached::new(
        "cache",
        MemcachedSpec {
            size: 1,
            container_port: Some(11311),
        },
    );
    object.metadata.namespace = Some(NS.into());
    memcacheds(&client)
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    let deployment = Api::<Deployment>::namespaced(client.clone(), NS)
        .get("cache")
        .await
        .unwrap();
    let container = &deployment.spec.unwrap().template.spec.unwrap().containers[0];
    assert_eq!(container.ports.as_ref().unwrap()[0].container_port, 11311);
    let service = Api::<Service>::namespaced(client, NS)
        .get("cache")
        .await
        .unwrap();
    assert_eq!(service.spec.unwrap().ports.unwrap()[0].port, 11311);
}

#[tokio::test]
async fn the_deployment_follows_the_size_and_scaling_is_recorded() {
    let client = fake_client().await;
    create(&client, "cache", 1).await;
    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    resize(&client, "cache", 4).await;
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    let deployments = Api::<Deployment>::namespaced(client.clone(), NS);
    assert_eq!(replicas(&deployments.get("cache").await.unwrap()), Some(4));

    // Drift (someone scaled the Deployment by hand) is undone on the next reconcile.
    deployments
        .patch(
            "cache",
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": 7 } })),
        )
        .await
        .unwrap();
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    assert_eq!(replicas(&deployments.get("cache").await.unwrap()), Some(4));

    let scaled: Vec<_> = events(&client)
        .await
        .into_iter()
        .filter(|e| e.0 == "Scaled")
        .collect();
    // Both scalings form one series of two (kube's Recorder aggregates by reason and
    // object; the note is the first one's).
    assert_eq!(
        scaled,
        [(
            "Scaled".into(),
            "Deployment".into(),
            "Scaled Deployment cache from 1 to 4 replicas".into(),
            2
        )]
    );
    assert_eq!(
        deployments
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1,
        "updated, not created again"
    );
}

#[tokio::test]
async fn status_lists_the_pods_and_whether_they_are_available() {
    let client = fake_client().await;
    create(&client, "cache", 3).await;
    create(&client, "other", 1).await;
    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    let status = memcacheds(&client)
        .get("cache")
        .await
        .unwrap()
        .status
        .unwrap();
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

    run_pods(&client, "cache", 3).await;
    reconcile_once(&client, &ctx, "other").await.unwrap();
    run_pods(&client, "other", 1).await;
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    let cache = memcacheds(&client).get("cache").await.unwrap();
    let status = cache.status.clone().unwrap();
    assert_eq!(
        status.nodes,
        ["cache-pod-1", "cache-pod-2", "cache-pod-3"],
        "sorted, and only this Memcached's pods"
    );
    let condition = &status.conditions[0];
    assert_eq!(
        (condition.status.as_str(), condition.reason.as_str()),
        ("True", "DeploymentAvailable")
    );
    assert_eq!(condition.observed_generation, cache.metadata.generation);

    // Nothing changed: the status is not written again.
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    let again = memcacheds(&client).get("cache").await.unwrap();
    assert_eq!(again.resource_version(), cache.resource_version());
}

#[tokio::test]
async fn owned_objects_are_garbage_collected_with_their_memcached() {
    let client = fake_client().await;
    create(&client, "cache", 2).await;
    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
    reconcile_once(&client, &ctx, "cache").await.unwrap();
    memcacheds(&client)
        .delete("cache", &DeleteParams::default())
        .await
        .unwrap();
    // No finalizer: the Memcached is gone at once and its owned objects with it.
    assert!(
        memcacheds(&client)
            .get_opt("cache")
            .await
            .unwrap()
            .is_none()
    );
    let deployments = Api::<Deployment>::namespaced(client.clone(), NS);
    let services = Api::<Service>::namespaced(client.clone(), NS);
    assert!(deployments.get_opt("cache").await.unwrap().is_none());
    assert!(services.get_opt("cache").await.unwrap().is_none());
}

#[tokio::test]
async fn converges_despite_conflicts_server_errors_and_timeouts() {
    let fake = fake_client().await;
    let timeout = Duration::from_millis(5);
    let faults = Faults::default()
        .fail(Fault::conflict().on_resource("memcacheds/status").times(2))
        .fail(Fault::conflict().on_verb("patch").times(3))
        .fail(Fault::server_error().on_verb("get").times(3))
        .fail(Fault::server_error().on_verb("create").times(2))
        .fail(Fault::timeout(timeout).on_verb("list").times(2))
        .fail(Fault::timeout(timeout).on_resource("services").times(2));
    let client = testing::wrap(fake.clone(), &RbacAudit::default(), &faults);
    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
    create(&fake, "cache", 2).await;
    let first = reconcile_until_ok(&fake, &ctx, "cache").await;

    // The pods come up, the size changes, and more faults hit the next reconciles.
    run_pods(&fake, "cache", 2).await;
    resize(&fake, "cache", 5).await;
    let faults = faults
        .clone()
        .fail(Fault::conflict().on_verb("patch").times(2))
        .fail(Fault::server_error().on_verb("get").times(2))
        .fail(Fault::timeout(timeout).on_verb("list").times(1));
    let second = reconcile_until_ok(&fake, &ctx, "cache").await;

    let injected = faults.injected();
    eprintln!(
        "memcached: {} faults injected; converged after {first} and {second} reconciles",
        injected.len()
    );
    for (kind, access) in &injected {
        eprintln!("  {kind:?}: {access}");
    }
    assert!(injected.len() >= 15, "only {} faults hit", injected.len());

    let deployments = Api::<Deployment>::namespaced(fake.clone(), NS)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(deployments.len(), 1, "exactly one Deployment");
    assert_eq!(replicas(&deployments[0]), Some(5));
    let services = Api::<Service>::namespaced(fake.clone(), NS)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(services.len(), 1, "exactly one Service");
    let status = memcacheds(&fake)
        .get("cache")
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(status.nodes, ["cache-pod-1", "cache-pod-2"]);
    assert_eq!(status.conditions.len(), 1);
    assert_eq!(status.conditions[0].reason, "DeploymentUnavailable");
    assert_eq!(
        status.conditions[0].message,
        "2 of 5 memcached pods are available"
    );
    // Each Event at most once: none was duplicated by a retried reconcile.
    for (reason, related, _, count) in events(&fake).await {
        assert_eq!(count, 1, "{reason} {related} recorded {count} times");
    }
}

/// Every request the reconciler makes, plus the list+watch of the Controller's watchers,
/// must be allowed by config/rbac/role.yaml, and every rule there must be used.
#[tokio::test]
async fn rbac_role_allows_exactly_what_the_controller_uses() {
    let fake = fake_client().await;
    let audit = RbacAudit::default();
    let client = testing::wrap(fake.clone(), &audit, &Faults::default());
    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));

    create(&fake, "cache", 1).await;
    reconcile_once(&fake, &ctx, "cache").await.unwrap();
    run_pods(&fake, "cache", 1).await;
    resize(&fake, "cache", 3).await;
    reconcile_once(&fake, &ctx, "cache").await.unwrap();
    resize(&fake, "cache", 2).await;
    reconcile_once(&fake, &ctx, "cache").await.unwrap();

    // What `run` makes: its CRD check lists Memcacheds; the Controller lists and watches
    // Memcacheds and the Deployments and Services it owns.
    audit.watches("cache.example.com", "memcacheds");
    audit.watches("apps", "deployments");
    audit.watches("", "services");
    let role = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/role.yaml");
    if let Err(report) = audit.check_role_file(role) {
        panic!("{report}");
    }

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
