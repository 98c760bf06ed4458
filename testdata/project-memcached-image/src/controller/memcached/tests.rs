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

//! The Memcached controller against a real kube-apiserver and etcd (envtest): the real
//! `Controller` watches, server-side apply, the status subresource, Events and RBAC are the
//! API server's own. Most tests run where no kube-controller-manager runs, so a test that
//! needs available pods writes the Deployment's status itself; one runs with it, and sees
//! the real Deployment and ReplicaSet controllers carry the pods' readiness to the
//! conditions. There is no kubelet: no pod ever runs.

use std::path::Path;
use std::sync::Arc;

use crate::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use crate::controller::memcached::{
    self as controller, CONTROLLER_NAME, FINALIZER, MemcachedReconciler, error_policy, reconcile,
};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use rkb_runtime::cache::{Namespaces, SharedCache};
use rkb_runtime::rbac::Rbac as _;
use rkb_runtime::testing::controller::{self as harness, Reports, eventually};
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
use serde_json::json;

const IMAGE: &str = "memcached:1.6.26-alpine3.19";

/// The test binary's API server with the CRD installed as `make install` would, and a
/// fresh namespace for the test.
async fn api_server() -> (&'static Environment, String) {
    on(envtest::shared().await).await
}

/// The CRD and a fresh namespace on `env`.
async fn on(env: &'static Environment) -> (&'static Environment, String) {
    let crds = crate::api::manifests()
        .crds()
        .unwrap_or_else(|e| panic!("{e}"));
    env.apply().crds(crds).await.unwrap();
    (env, env.create_namespace().await.unwrap())
}

/// Runs the controller in `namespace`: watches through `watch_client`, writes through `client`.
fn start(watch_client: &Client, client: Client, namespace: &str) -> Reports {
    let (controller, caches) = controller::controller(
        watch_client,
        &Namespaces::only([namespace]),
        &SharedCache::default(),
    );
    let reconciler = Arc::new(MemcachedReconciler::new(client, IMAGE, caches));
    harness::start(controller, reconcile, error_policy, reconciler)
}

async fn create(client: &Client, namespace: &str, size: i32) -> Memcached {
    let mut object = Memcached::new(
        "sample",
        MemcachedSpec {
            size,
            ..Default::default()
        },
    );
    object.metadata.namespace = Some(namespace.into());
    Api::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &object)
        .await
        .unwrap()
}

async fn set_size(client: &Client, namespace: &str, size: i32) {
    let patch = Patch::Merge(json!({ "spec": { "size": size } }));
    let objects = Api::<Memcached>::namespaced(client.clone(), namespace);
    objects
        .patch("sample", &PatchParams::default(), &patch)
        .await
        .unwrap();
}

fn replicas(deployment: &Deployment) -> Option<i32> {
    controller::deployment_spec(deployment).and_then(|s| s.replicas)
}

/// Waits until the Deployment exists and satisfies `done`.
async fn deployment_until(
    client: &Client,
    namespace: &str,
    done: impl Fn(&Deployment) -> bool,
) -> Deployment {
    let deployments = Api::<Deployment>::namespaced(client.clone(), namespace);
    eventually("the Deployment as expected", || async {
        deployments
            .get_opt("sample")
            .await
            .unwrap()
            .filter(|d| done(d))
    })
    .await
}

/// Waits until the Memcached's condition `type_` has `status` for its current generation.
async fn condition_until(client: &Client, namespace: &str, type_: &str, status: &str) -> Memcached {
    let objects = Api::<Memcached>::namespaced(client.clone(), namespace);
    eventually(&format!("{type_}={status}"), || async {
        let object = objects.get("sample").await.unwrap();
        let mut conditions = object.status.iter().flat_map(|s| &s.conditions);
        conditions
            .any(|c| {
                c.type_ == type_
                    && c.status == status
                    && c.observed_generation == object.metadata.generation
            })
            .then_some(object)
    })
    .await
}

/// Plays the Deployment controller and kubelet: all `count` pods are available.
async fn pods_available(client: &Client, namespace: &str, count: i32) {
    let status = json!({ "status": { "replicas": count, "readyReplicas": count, "availableReplicas": count } });
    let deployments = Api::<Deployment>::namespaced(client.clone(), namespace);
    deployments
        .patch_status("sample", &PatchParams::default(), &Patch::Merge(status))
        .await
        .unwrap();
}

#[tokio::test]
async fn creates_a_hardened_owned_deployment_and_reports_conditions() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start(&client, client.clone(), &ns);
    let object = create(&client, &ns, 2).await;
    let reconciled = condition_until(&client, &ns, "Progressing", "True").await;
    assert_eq!(reconciled.finalizers(), [FINALIZER]);

    let deployment = deployment_until(&client, &ns, |_| true).await;
    assert_eq!(replicas(&deployment), Some(2));
    let owner = &deployment.owner_references()[0];
    assert_eq!(
        (owner.uid.as_str(), owner.controller),
        (object.uid().unwrap().as_str(), Some(true))
    );
    let managers: Vec<_> = deployment
        .managed_fields()
        .iter()
        .map(|m| m.manager.clone())
        .collect();
    assert_eq!(
        managers,
        [Some(rkb_runtime::client::field_manager().to_owned())],
        "one server-side apply"
    );
    let pod = controller::deployment_spec(&deployment)
        .and_then(|s| s.template.spec.as_ref())
        .unwrap();
    let container = &pod.containers[0];
    assert_eq!(container.image.as_deref(), Some(IMAGE));
    assert_eq!(
        container.command.as_deref().unwrap(),
        ["memcached", "--memory-limit=64", "-o", "modern", "-v"]
    );
    assert_eq!(container.ports.as_ref().unwrap()[0].container_port, 11211);
    let security = container.security_context.as_ref().unwrap();
    assert_eq!(
        (security.run_as_non_root, security.run_as_user),
        (Some(true), Some(1001))
    );
    assert_eq!(
        (
            security.read_only_root_filesystem,
            security.allow_privilege_escalation
        ),
        (Some(true), Some(false))
    );
    assert_eq!(
        security.capabilities.as_ref().unwrap().drop.as_deref(),
        Some(&["ALL".to_owned()][..])
    );
    assert_eq!(
        pod.security_context
            .as_ref()
            .unwrap()
            .seccomp_profile
            .as_ref()
            .unwrap()
            .type_,
        "RuntimeDefault"
    );
    let resources = container.resources.as_ref().unwrap();
    assert!(resources.requests.is_some() && resources.limits.is_some());

    pods_available(&client, &ns, 2).await;
    let available = condition_until(&client, &ns, "Available", "True").await;
    let conditions = &available.status.unwrap().conditions;
    let states: Vec<_> = conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        states,
        [
            ("Available", "True"),
            ("Progressing", "False"),
            ("Degraded", "False")
        ]
    );
    // Events are sent off the reconcile path: wait for the first.
    let events = eventually("an Event", || async {
        let events = harness::events(&client, &ns, CONTROLLER_NAME).await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    assert_eq!(events[0].note, "Created Deployment sample with 2 replicas");
    assert_eq!(reports.failures(), []);
}

/// With kube-controller-manager running, only the kubelet is played (the pods are marked
/// Ready): the ReplicaSet and Deployment controllers count them available, and the
/// Deployment's real status reaches the conditions.
#[tokio::test]
async fn the_real_deployment_status_reaches_the_conditions() {
    let (env, ns) = on(envtest::shared_with_controller_manager().await).await;
    let client = env.client();
    let reports = start(&client, client.clone(), &ns);
    create(&client, &ns, 2).await;
    let (sets, pods) = (
        Api::<ReplicaSet>::namespaced(client.clone(), &ns),
        Api::<Pod>::namespaced(client.clone(), &ns),
    );
    let created = eventually("a ReplicaSet and its 2 pods", || async {
        let lp = ListParams::default();
        let created = pods.list(&lp).await.unwrap().items;
        (sets.list(&lp).await.unwrap().items.len() == 1 && created.len() == 2).then_some(created)
    })
    .await;
    let unavailable = condition_until(&client, &ns, "Available", "False").await;
    let message = &unavailable.status.unwrap().conditions[0].message;
    assert_eq!(message, "0 of 2 pods are available");

    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let ready = json!({ "status": { "phase": "Running", "conditions": [
        { "type": "Ready", "status": "True", "lastTransitionTime": now }
    ] } });
    for pod in created {
        pods.patch_status(
            &pod.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&ready),
        )
        .await
        .unwrap();
    }
    let available = condition_until(&client, &ns, "Available", "True").await;
    assert_eq!(
        available.status.unwrap().conditions[0].message,
        "2 of 2 pods are available"
    );
    assert_eq!(reports.failures(), []);
}

#[tokio::test]
async fn the_deployment_follows_the_size_up_and_down() {
    let (env, ns) = api_server().await;
    let client = env.client();
    start(&client, client.clone(), &ns);
    create(&client, &ns, 1).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(1)).await;
    set_size(&client, &ns, 3).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(3)).await;
    set_size(&client, &ns, 0).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(0)).await;
    // Generation 3 reconciled: zero of zero pods is available.
    let object = condition_until(&client, &ns, "Available", "True").await;
    assert_eq!(object.metadata.generation, Some(3));
}

/// A rescale patches `spec.replicas` alone, by the controller's field manager: it owns
/// the replicas through that update, the rest through its apply, so another applier
/// setting the replicas still conflicts with the controller; and a rescale records no
/// Event of its own (the Deployment controller records one).
#[tokio::test]
async fn a_rescale_patches_the_replicas_and_keeps_owning_them() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let audit = RbacAudit::default();
    let reports = start(
        &client,
        testing::wrap(client.clone(), &audit, &Faults::default()),
        &ns,
    );
    create(&client, &ns, 1).await;
    condition_until(&client, &ns, "Progressing", "True").await;
    harness::settled(|| reports.all().len()).await;
    let sent = audit.requests().len();
    set_size(&client, &ns, 3).await;
    let deployment = deployment_until(&client, &ns, |d| replicas(d) == Some(3)).await;
    harness::settled(|| reports.all().len()).await;
    assert_eq!(
        harness::writes(&audit.requests()[sent..]),
        ["patch deployments", "update memcacheds/status"]
    );

    let manager = rkb_runtime::client::field_manager();
    let owns = |operation: &str| {
        let entry = deployment.managed_fields().iter().find(|m| {
            m.manager.as_deref() == Some(manager) && m.operation.as_deref() == Some(operation)
        });
        let fields = entry
            .and_then(|m| m.fields_v1.as_ref())
            .map(|f| f.0.to_string())
            .unwrap_or_default();
        fields.contains(r#""f:replicas""#)
    };
    assert!(
        owns("Update") && !owns("Apply"),
        "the replicas are the patch's: {:?}",
        deployment.managed_fields()
    );
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let other = json!({ "apiVersion": "apps/v1", "kind": "Deployment", "metadata": { "name": "sample" }, "spec": { "replicas": 5 } });
    let refused = deployments
        .patch(
            "sample",
            &PatchParams::apply("someone-else"),
            &Patch::Apply(other),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, kube::Error::Api(status) if status.code == 409 && status.message.contains(manager)),
        "{refused}"
    );

    let events = harness::events(&client, &ns, CONTROLLER_NAME).await;
    assert_eq!(
        events.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>(),
        ["Created"]
    );
    assert_eq!(reports.failures(), []);
}

/// Someone edits the Deployment by hand: the edit is seen through the watch of owned
/// Deployments and undone.
#[tokio::test]
async fn drift_in_the_deployment_is_repaired() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start(&client, client.clone(), &ns);
    create(&client, &ns, 2).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(2)).await;
    // Else a reconcile still due to the Memcached's own changes could undo the edit.
    harness::settled(|| reports.all().len()).await;
    let drift = json!({ "spec": { "replicas": 7, "template": { "spec": { "containers": [
        { "name": "memcached", "image": "example.com/not-this:1" }
    ] } } } });
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    deployments
        .patch("sample", &PatchParams::default(), &Patch::Strategic(drift))
        .await
        .unwrap();
    let repaired = deployment_until(&client, &ns, |d| {
        let image = controller::deployment_spec(d)
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|p| p.containers[0].image.clone());
        replicas(d) == Some(2) && image.as_deref() == Some(IMAGE)
    })
    .await;
    assert_eq!(repaired.owner_references().len(), 1);
}

/// The controller reads from its watches and writes only what changes: creating a
/// Memcached costs one write of each kind, its own status write brings it back no more,
/// and a change of the Deployment that needs no repair (a label someone adds) reconciles
/// without a single request.
#[tokio::test]
async fn a_converged_object_costs_the_api_server_nothing() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let audit = RbacAudit::default();
    let reports = start(
        &client,
        testing::wrap(client.clone(), &audit, &Faults::default()),
        &ns,
    );
    create(&client, &ns, 2).await;
    condition_until(&client, &ns, "Progressing", "True").await;
    harness::settled(|| reports.all().len()).await;
    let expected = [
        "create events",
        "patch deployments",
        "patch memcacheds",
        "update memcacheds/status",
    ];
    assert_eq!(
        harness::writes(&audit.requests()),
        expected,
        "one finalizer, Deployment, status and Event"
    );
    assert!(
        !audit.requests().iter().any(|r| r.verb == "get"),
        "no read of what the watches hold"
    );

    let (sent, reconciled) = (audit.requests().len(), reports.all().len());
    let label = Patch::Merge(json!({ "metadata": { "labels": { "team": "web" } } }));
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    deployments
        .patch("sample", &PatchParams::default(), &label)
        .await
        .unwrap();
    eventually("a reconcile after the label", || async {
        (reports.all().len() > reconciled).then_some(())
    })
    .await;
    harness::settled(|| reports.all().len()).await;
    assert_eq!(audit.requests()[sent..], [], "no request at all");
    assert_eq!(reports.failures(), []);
}

/// No reconcile is caused only by the controller's own writes: the finalizer it adds and
/// the Deployment it applies come back through its watches, but the reconcile that wrote
/// them went on with them, so a creation and a rescale reconcile once each.
#[tokio::test]
async fn its_own_writes_do_not_reconcile_it_again() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start(&client, client.clone(), &ns);
    create(&client, &ns, 1).await;
    condition_until(&client, &ns, "Progressing", "True").await;
    harness::settled(|| reports.all().len()).await;
    assert_eq!(
        reports.all().len(),
        1,
        "one reconcile for a creation: {:?}",
        reports.all()
    );

    set_size(&client, &ns, 3).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(3)).await;
    harness::settled(|| reports.all().len()).await;
    assert_eq!(
        reports.all().len(),
        2,
        "one more for a rescale: {:?}",
        reports.all()
    );
    assert_eq!(reports.failures(), []);
}

/// Deleting waits for the finalizer, which deletes the Deployment itself (no garbage
/// collector runs here) and then lets the object go.
#[tokio::test]
async fn deletion_runs_the_finalizer() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start(&client, client.clone(), &ns);
    create(&client, &ns, 1).await;
    deployment_until(&client, &ns, |_| true).await;
    condition_until(&client, &ns, "Progressing", "True").await;
    let objects = Api::<Memcached>::namespaced(client.clone(), &ns);
    objects
        .delete("sample", &DeleteParams::default())
        .await
        .unwrap();
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    eventually("the object and its Deployment gone", || async {
        let gone = objects.get_opt("sample").await.unwrap().is_none();
        (gone && deployments.get_opt("sample").await.unwrap().is_none()).then_some(())
    })
    .await;
    eventually("the Deleted Event", || async {
        let events = harness::events(&client, &ns, CONTROLLER_NAME).await;
        events.iter().any(|e| e.reason == "Deleted").then_some(())
    })
    .await;
    assert_eq!(reports.failures(), []);
}

/// Conflicts (409) on every kind of write: the controller retries and converges, and each
/// Event is recorded once.
#[tokio::test]
async fn converges_despite_conflicts() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let faults = Faults::default()
        .fail(
            Fault::conflict()
                .on_verb("patch")
                .on_resource("memcacheds")
                .times(1),
        )
        .fail(
            Fault::conflict()
                .on_verb("patch")
                .on_resource("deployments")
                .times(2),
        )
        .fail(
            Fault::conflict()
                .on_verb("update")
                .on_resource("memcacheds/status")
                .times(2),
        );
    let reports = start(
        &client,
        testing::wrap(client.clone(), &RbacAudit::default(), &faults),
        &ns,
    );
    create(&client, &ns, 2).await;
    condition_until(&client, &ns, "Progressing", "True").await;
    set_size(&client, &ns, 3).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(3)).await;
    assert_eq!(faults.injected().len(), 5);
    let conflicts = reports
        .failures()
        .iter()
        .filter(|f| f.code == Some(409))
        .count();
    assert!(conflicts >= 5, "{:?}", reports.failures());
    for event in harness::events(&client, &ns, CONTROLLER_NAME).await {
        assert_eq!(event.count, 1, "{event:?}");
    }
}

/// The status is written whole (an update, not a server-side apply): a condition another
/// writer reported is sent back as read, so it survives the controller's next status write.
#[tokio::test]
async fn another_writers_condition_is_kept() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let reports = start(&client, client.clone(), &ns);
    create(&client, &ns, 1).await;
    let mut object = condition_until(&client, &ns, "Progressing", "True").await;
    let backed_up = Condition {
        type_: "BackedUp".into(),
        status: "True".into(),
        reason: "Done".into(),
        message: "a backup operator's own condition".into(),
        observed_generation: object.metadata.generation,
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
    };
    object
        .status
        .get_or_insert_default()
        .conditions
        .push(backed_up);
    let objects = Api::<Memcached>::namespaced(client.clone(), &ns);
    objects
        .replace_status("sample", &PostParams::default(), &object)
        .await
        .unwrap();

    set_size(&client, &ns, 3).await;
    let rescaled = eventually("the status of 3 pods", || async {
        let object = objects.get("sample").await.unwrap();
        let conditions = object.status.clone().unwrap_or_default().conditions;
        conditions
            .iter()
            .any(|c| c.message == "0 of 3 pods are available")
            .then_some(conditions)
    })
    .await;
    let kept = rescaled.iter().find(|c| c.type_ == "BackedUp");
    assert_eq!(
        kept.map(|c| c.message.as_str()),
        Some("a backup operator's own condition"),
        "{rescaled:?}"
    );
    assert_eq!(reports.failures(), []);
}

/// Every request of a whole life cycle (create, scale, delete), plus the Controller's
/// watches, is allowed by the reconciler's `#[rbac]` rules, and every rule is used. (The
/// rules of every controller make config/rbac/role.yaml: `make manifests` writes it, the
/// crate's `manifests_are_up_to_date` test checks it.)
#[tokio::test]
async fn rbac_rules_allow_exactly_what_the_controller_uses() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let audit = RbacAudit::default();
    start(
        &client,
        testing::wrap(client.clone(), &audit, &Faults::default()),
        &ns,
    );
    create(&client, &ns, 1).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(1)).await;
    // The Deployment deleted by hand is created again: the second Created Event joins the
    // first one's series (a patch).
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    let first = deployment_until(&client, &ns, |_| true).await;
    deployments
        .delete("sample", &DeleteParams::default())
        .await
        .unwrap();
    deployment_until(&client, &ns, |d| d.uid() != first.uid()).await;
    eventually("a series of two Created Events", || async {
        let events = harness::events(&client, &ns, CONTROLLER_NAME).await;
        events
            .iter()
            .any(|e| e.reason == "Created" && e.count == 2)
            .then_some(())
    })
    .await;
    set_size(&client, &ns, 2).await;
    deployment_until(&client, &ns, |d| replicas(d) == Some(2)).await;
    let objects = Api::<Memcached>::namespaced(client.clone(), &ns);
    objects
        .delete("sample", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the object gone", || async {
        objects
            .get_opt("sample")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    audit.watches("cache.example.com", "memcacheds");
    audit.watches("apps", "deployments");
    if let Err(report) = audit.check_rules(&MemcachedReconciler::rbac_rules()) {
        panic!("{report}");
    }
}

/// As the operator's ServiceAccount with config/rbac applied, the whole life cycle works;
/// without the role's rule on Deployments, the API server refuses with a 403.
#[tokio::test]
async fn the_api_server_authorizes_the_operator_by_its_role() {
    let (env, ns) = api_server().await;
    let client = env.client();
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    let operator = env
        .operator_client(&project.join("config/default"))
        .await
        .unwrap();
    let reports = start(&operator, operator.clone(), &ns);
    create(&client, &ns, 1).await;
    condition_until(&client, &ns, "Progressing", "True").await;
    Api::<Memcached>::namespaced(client.clone(), &ns)
        .delete("sample", &DeleteParams::default())
        .await
        .unwrap();
    let deployments = Api::<Deployment>::namespaced(client.clone(), &ns);
    eventually("the Deployment deleted", || async {
        deployments
            .get_opt("sample")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    assert_eq!(reports.failures(), []);

    let (_, other) = api_server().await;
    let overlay =
        harness::overlay_without_rule(project, &std::env::temp_dir(), &other, "deployments");
    let restricted = env.operator_client(&overlay).await.unwrap();
    let reports = start(&client, restricted, &other);
    create(&client, &other, 1).await;
    let refused = eventually("a refused reconcile", || async {
        reports.failures().into_iter().find(|f| f.code == Some(403))
    })
    .await;
    assert!(
        refused.message.contains(r#"resource "deployments""#),
        "{}",
        refused.message
    );
}
