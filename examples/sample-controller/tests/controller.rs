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

//! The Foo reconciler against kube-fake-client's in-memory API (no cluster): the upstream
//! sample-controller's behaviour, convergence under injected faults, and an RBAC audit of
//! config/rbac/role.yaml.
//!
//! The in-memory API has no watches and no Deployment controller, so the tests call
//! `reconcile` the way the controller would and set the Deployment's status themselves.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Api, Client, ResourceExt};
use kube_fake_client::ClientBuilder;
use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
use sample_controller::api::samplecontroller::v1alpha1::{Foo, FooSpec};
use sample_controller::controller::foo::{Error, FooReconciler, error_policy, reconcile};
use serde_json::json;

const NS: &str = "default";

async fn fake_client() -> Client {
    ClientBuilder::new()
        .with_resource::<Foo>()
        .with_status_subresource::<Foo>()
        .with_status_subresource::<Deployment>()
        .build()
        .await
        .expect("the in-memory API starts")
}

fn foos(client: &Client) -> Api<Foo> {
    Api::namespaced(client.clone(), NS)
}

fn deployments(client: &Client) -> Api<Deployment> {
    Api::namespaced(client.clone(), NS)
}

async fn create(client: &Client, name: &str, deployment: &str, replicas: i32) -> Foo {
    let mut object = Foo::new(
        name,
        FooSpec {
            deployment_name: deployment.into(),
            replicas,
        },
    );
    object.metadata.namespace = Some(NS.into());
    foos(client)
        .create(&PostParams::default(), &object)
        .await
        .expect("the Foo is created")
}

async fn set_replicas(client: &Client, name: &str, replicas: i32) {
    foos(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": { "replicas": replicas } })),
        )
        .await
        .unwrap();
}

/// Plays the Deployment controller: `available` pods of `deployment` are available.
async fn make_available(client: &Client, deployment: &str, available: i32) {
    deployments(client)
        .patch_status(
            deployment,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "availableReplicas": available } })),
        )
        .await
        .unwrap();
}

/// Reconciles the current state of `name` once, as the controller does after a change.
async fn reconcile_once(
    client: &Client,
    ctx: &Arc<FooReconciler>,
    name: &str,
) -> Result<Action, Error> {
    let object = foos(client).get(name).await.expect("the Foo exists");
    reconcile(Arc::new(object), ctx.clone()).await
}

/// Reconciles `name` until a reconcile succeeds, calling `error_policy` after each failure as
/// the controller does (without waiting out the backoff). Returns the number of attempts.
async fn reconcile_until_ok(client: &Client, ctx: &Arc<FooReconciler>, name: &str) -> usize {
    for attempt in 1..=50 {
        let object = Arc::new(foos(client).get(name).await.unwrap());
        match reconcile(object.clone(), ctx.clone()).await {
            Ok(_) => return attempt,
            Err(error) => {
                error_policy(object, &error, ctx.clone());
            }
        }
    }
    panic!("{name} did not converge in 50 reconciles");
}

/// The Events in the namespace as (type, reason, note, count).
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
    deployment.spec.as_ref().and_then(|s| s.replicas)
}

#[tokio::test]
async fn creates_the_named_nginx_deployment_owned_by_the_foo() {
    let client = fake_client().await;
    let object = create(&client, "example-foo", "example-nginx", 2).await;
    let ctx = Arc::new(FooReconciler::new(client.clone()));
    let action = reconcile_once(&client, &ctx, "example-foo").await.unwrap();
    assert_eq!(action, Action::await_change());

    let deployment = deployments(&client).get("example-nginx").await.unwrap();
    assert_eq!(replicas(&deployment), Some(2));
    let owner = &deployment.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("Foo", "example-foo", Some(true))
    );
    assert_eq!(Some(&owner.uid), object.metadata.uid.as_ref());
    let spec = deployment.spec.clone().unwrap();
    let labels = spec.selector.match_labels.unwrap();
    assert_eq!(labels["app"], "nginx");
    assert_eq!(labels["controller"], "example-foo");
    let container = &spec.template.spec.unwrap().containers[0];
    assert_eq!(
        (container.name.as_str(), container.image.as_deref()),
        ("nginx", Some("nginx:latest"))
    );

    let status = foos(&client).get("example-foo").await.unwrap().status;
    assert_eq!(status.unwrap().available_replicas, 0);
    assert_eq!(
        events(&client).await,
        [(
            "Normal".into(),
            "Synced".into(),
            "Foo synced successfully".into(),
            1
        )]
    );
}

#[tokio::test]
async fn replicas_follow_the_foo_and_status_follows_the_deployment() {
    let client = fake_client().await;
    create(&client, "example-foo", "example-nginx", 1).await;
    let ctx = Arc::new(FooReconciler::new(client.clone()));
    reconcile_once(&client, &ctx, "example-foo").await.unwrap();

    set_replicas(&client, "example-foo", 3).await;
    reconcile_once(&client, &ctx, "example-foo").await.unwrap();
    let deployment = deployments(&client).get("example-nginx").await.unwrap();
    assert_eq!(replicas(&deployment), Some(3));

    make_available(&client, "example-nginx", 3).await;
    reconcile_once(&client, &ctx, "example-foo").await.unwrap();
    let object = foos(&client).get("example-foo").await.unwrap();
    assert_eq!(object.status.as_ref().unwrap().available_replicas, 3);

    // Nothing changed: neither the Deployment nor the status is written again.
    let before = deployments(&client).get("example-nginx").await.unwrap();
    reconcile_once(&client, &ctx, "example-foo").await.unwrap();
    let after = deployments(&client).get("example-nginx").await.unwrap();
    assert_eq!(after.resource_version(), before.resource_version());
    let again = foos(&client).get("example-foo").await.unwrap();
    assert_eq!(again.resource_version(), object.resource_version());

    assert_eq!(
        deployments(&client)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1,
        "updated, never created twice"
    );
    // Four successful syncs: one Event, in a series of four.
    assert_eq!(
        events(&client).await,
        [(
            "Normal".into(),
            "Synced".into(),
            "Foo synced successfully".into(),
            4
        )]
    );
}

#[tokio::test]
async fn refuses_to_adopt_a_deployment_it_does_not_control() {
    let client = fake_client().await;
    // A Deployment of the same name that someone else created.
    let mut theirs = Deployment::default();
    theirs.metadata.name = Some("taken".into());
    theirs.metadata.namespace = Some(NS.into());
    theirs.spec = Some(k8s_openapi::api::apps::v1::DeploymentSpec {
        replicas: Some(5),
        ..Default::default()
    });
    let theirs = deployments(&client)
        .create(&PostParams::default(), &theirs)
        .await
        .unwrap();
    create(&client, "example-foo", "taken", 1).await;
    let ctx = Arc::new(FooReconciler::new(client.clone()));

    let error = reconcile_once(&client, &ctx, "example-foo")
        .await
        .unwrap_err();
    assert!(matches!(error, Error::ResourceExists(_)));
    assert_eq!(
        error.to_string(),
        r#"Resource "taken" already exists and is not managed by Foo"#
    );
    let untouched = deployments(&client).get("taken").await.unwrap();
    assert_eq!(untouched.resource_version(), theirs.resource_version());
    assert_eq!(replicas(&untouched), Some(5));
    assert!(untouched.owner_references().is_empty());
    assert!(
        foos(&client)
            .get("example-foo")
            .await
            .unwrap()
            .status
            .is_none(),
        "no status from a Deployment it does not control"
    );
    assert_eq!(
        events(&client).await,
        [(
            "Warning".into(),
            "ErrResourceExists".into(),
            r#"Resource "taken" already exists and is not managed by Foo"#.into(),
            1
        )]
    );

    // A Deployment controlled by another Foo is refused as well.
    create(&client, "first", "shared", 1).await;
    create(&client, "second", "shared", 2).await;
    reconcile_once(&client, &ctx, "first").await.unwrap();
    assert!(matches!(
        reconcile_once(&client, &ctx, "second").await,
        Err(Error::ResourceExists(_))
    ));
    assert_eq!(
        replicas(&deployments(&client).get("shared").await.unwrap()),
        Some(1)
    );
}

#[tokio::test]
async fn the_deployment_is_garbage_collected_with_its_foo() {
    let client = fake_client().await;
    create(&client, "example-foo", "example-nginx", 1).await;
    let ctx = Arc::new(FooReconciler::new(client.clone()));
    reconcile_once(&client, &ctx, "example-foo").await.unwrap();
    foos(&client)
        .delete("example-foo", &DeleteParams::default())
        .await
        .unwrap();
    assert!(
        deployments(&client)
            .get_opt("example-nginx")
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn converges_despite_conflicts_server_errors_and_timeouts() {
    let fake = fake_client().await;
    let timeout = Duration::from_millis(5);
    let faults = Faults::default()
        .fail(Fault::server_error().on_verb("get").times(3))
        .fail(Fault::server_error().on_verb("create").times(2))
        .fail(Fault::timeout(timeout).on_verb("create").times(1))
        .fail(Fault::conflict().on_verb("patch").times(2))
        .fail(Fault::timeout(timeout).on_verb("patch").times(1));
    let client = testing::wrap(fake.clone(), &RbacAudit::default(), &faults);
    let ctx = Arc::new(FooReconciler::new(client.clone()));
    create(&fake, "example-foo", "example-nginx", 1).await;
    let first = reconcile_until_ok(&fake, &ctx, "example-foo").await;

    // The Foo is scaled and its pods come up, while updates conflict and reads fail.
    set_replicas(&fake, "example-foo", 4).await;
    make_available(&fake, "example-nginx", 1).await;
    let faults = faults
        .clone()
        .fail(Fault::conflict().on_verb("update").times(3))
        .fail(Fault::timeout(timeout).on_verb("update").times(1))
        .fail(Fault::server_error().on_verb("get").times(2))
        .fail(Fault::conflict().on_resource("foos/status").times(2));
    let second = reconcile_until_ok(&fake, &ctx, "example-foo").await;

    let injected = faults.injected();
    eprintln!(
        "sample-controller: {} faults injected; converged after {first} and {second} reconciles",
        injected.len()
    );
    for (kind, access) in &injected {
        eprintln!("  {kind:?}: {access}");
    }
    assert!(injected.len() >= 15, "only {} faults hit", injected.len());

    let all = deployments(&fake)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(all.len(), 1, "exactly one Deployment");
    assert_eq!(replicas(&all[0]), Some(4));
    assert_eq!(all[0].owner_references().len(), 1);
    let object = foos(&fake).get("example-foo").await.unwrap();
    assert_eq!(object.status.unwrap().available_replicas, 1);
}

/// Every request the reconciler makes, plus the list+watch of the Controller's watchers,
/// must be allowed by config/rbac/role.yaml, and every rule there must be used.
#[tokio::test]
async fn rbac_role_allows_exactly_what_the_controller_uses() {
    let fake = fake_client().await;
    let audit = RbacAudit::default();
    let client = testing::wrap(fake.clone(), &audit, &Faults::default());
    let ctx = Arc::new(FooReconciler::new(client.clone()));

    create(&fake, "example-foo", "example-nginx", 1).await;
    reconcile_once(&fake, &ctx, "example-foo").await.unwrap();
    set_replicas(&fake, "example-foo", 2).await;
    make_available(&fake, "example-nginx", 2).await;
    reconcile_once(&fake, &ctx, "example-foo").await.unwrap();

    // What `run` makes: its CRD check lists Foos; the Controller lists and watches Foos and
    // the Deployments they own.
    audit.watches("samplecontroller.k8s.io", "foos");
    audit.watches("apps", "deployments");
    let role = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/role.yaml");
    if let Err(report) = audit.check_role_file(role) {
        panic!("{report}");
    }
}
