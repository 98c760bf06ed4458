//! Tests of the BlueGreen controller against a real kube-apiserver and etcd (envtest): the
//! CRD installed as `make install` does, the real Controller (watching BlueGreens and the
//! Deployments and Services it owns), server-side apply, the status subresource, RBAC by the
//! real authorizer, and injected faults layered on the real client.
//!
//! Most tests run without kube-controller-manager, so that nothing but the controller writes:
//! no Deployment controller (no ReplicaSets, no Pods, no `status.replicas`) and no garbage
//! collector. One test runs on a control plane with it, and sees the garbage collector
//! delete the Service and Deployments of a deleted BlueGreen. Each test works in a
//! namespace of its own.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::core::v1::Container;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::*;

use crate::api::app::v1::BlueGreenSpec;

const ROLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/config/rbac/role.yaml");
/// How long a test waits for the controller (generous: a loaded CI machine).
const WAIT: Duration = Duration::from_secs(60);

/// The shared API server with the CRD installed, a namespace of the test's own, and the
/// caches of watches on it for the reconciles the tests call directly.
struct Fx {
    env: &'static Environment,
    ns: String,
    caches: Caches,
}

impl Fx {
    async fn new() -> Self {
        static INSTALLED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
        Self::on(envtest::shared().await, &INSTALLED).await
    }

    /// On the control plane that runs kube-controller-manager.
    async fn with_controller_manager() -> Self {
        static INSTALLED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
        Self::on(envtest::shared_with_controller_manager().await, &INSTALLED).await
    }

    async fn on(env: &'static Environment, installed: &tokio::sync::OnceCell<()>) -> Self {
        // Once per test binary and control plane: the CRD is large (two PodSpecs), and
        // applying it again for every test slowed the suite down.
        installed
            .get_or_init(|| async {
                let crds = crate::manifests().crds().unwrap_or_else(|e| panic!("{e}"));
                env.apply().crds(crds).await.unwrap();
            })
            .await;
        let ns = env.create_namespace().await.unwrap();
        let (deployments, d) = Lister::reflect(Api::namespaced(env.client(), &ns), ours());
        let (services, s) = Lister::reflect(Api::namespaced(env.client(), &ns), ours());
        tokio::spawn(d);
        tokio::spawn(s);
        let caches = Caches::new(deployments, services);
        Self { env, ns, caches }
    }

    fn reconciler(&self, client: Client) -> Arc<BlueGreenReconciler> {
        Arc::new(BlueGreenReconciler::new(client, self.caches.clone()))
    }

    fn client(&self) -> Client {
        self.env.client()
    }

    fn bluegreens(&self) -> Api<BlueGreen> {
        Api::namespaced(self.client(), &self.ns)
    }

    fn deployments(&self) -> Api<Deployment> {
        Api::namespaced(self.client(), &self.ns)
    }

    fn services(&self) -> Api<Service> {
        Api::namespaced(self.client(), &self.ns)
    }

    async fn create(&self, name: &str, spec: BlueGreenSpec) -> BlueGreen {
        let mut object = BlueGreen::new(name, spec);
        object.metadata.namespace = Some(self.ns.clone());
        self.bluegreens()
            .create(&PostParams::default(), &object)
            .await
            .expect("the BlueGreen is created")
    }

    /// Changes the spec as a user would (`kubectl edit`).
    async fn edit(&self, name: &str, spec: BlueGreenSpec) {
        let mut patch = json!({ "spec": serde_json::to_value(&spec).unwrap() });
        // A merge patch cannot remove a field by leaving it out: null it.
        for field in ["blueSpec", "greenSpec"] {
            if patch["spec"].get(field).is_none() {
                patch["spec"][field] = Value::Null;
            }
        }
        self.bluegreens()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("the BlueGreen is edited");
    }

    /// One direct reconcile of the BlueGreen as stored now, through `client`.
    async fn reconcile_once(&self, client: &Client, name: &str) -> Result<Action, Error> {
        let object = self
            .bluegreens()
            .get(name)
            .await
            .expect("the BlueGreen exists");
        reconcile(Arc::new(object), self.reconciler(client.clone())).await
    }

    /// Reconciles until a reconcile succeeds, as the controller does after `error_policy`;
    /// returns the errors on the way.
    async fn reconcile_until_ok(&self, client: &Client, name: &str) -> Vec<String> {
        let mut errors = Vec::new();
        for _ in 0..50 {
            match self.reconcile_once(client, name).await {
                Ok(action) => {
                    assert_eq!(action, Action::await_change());
                    return errors;
                }
                Err(error) => errors.push(error.to_string()),
            }
        }
        panic!("no successful reconcile in 50 attempts: {errors:#?}");
    }

    /// Runs the real Controller as `client` on this test's namespace until the test ends;
    /// failed reconciles are reported on the returned channel.
    fn start_controller(&self, client: Client) -> mpsc::UnboundedReceiver<String> {
        let (sender, failures) = mpsc::unbounded_channel();
        let (controller, caches) = controller(
            Api::namespaced(client.clone(), &self.ns),
            Api::namespaced(client.clone(), &self.ns),
            Api::namespaced(client.clone(), &self.ns),
        );
        let reconciler = Arc::new(BlueGreenReconciler::new(client, caches));
        let running = controller
            .run(reconcile, error_policy, reconciler)
            .for_each(move |result| {
                if let Err(error) = result {
                    eprintln!("controller: {error}");
                    let _ = sender.send(format!("{error:?}"));
                }
                async {}
            });
        tokio::spawn(running);
        failures
    }

    /// Waits until the BlueGreen `name` satisfies `done`.
    async fn until(&self, name: &str, what: &str, done: impl AsyncFn(&Fx) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !done(self).await {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name}: not within {WAIT:?}: {what}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn service(&self, name: &str) -> Option<Service> {
        self.services().get_opt(name).await.unwrap()
    }

    async fn deployment(&self, name: &str) -> Option<Deployment> {
        self.deployments().get_opt(name).await.unwrap()
    }

    async fn deployment_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .deployments()
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .iter()
            .map(|d| d.name_any())
            .collect();
        names.sort();
        names
    }

    async fn status(&self, name: &str) -> Option<RouteTo> {
        self.bluegreens()
            .get(name)
            .await
            .unwrap()
            .status
            .and_then(|s| s.route_to)
    }

    /// Everything in the namespace, resourceVersions included: a real API server does not
    /// bump them for a server-side apply that changes nothing.
    async fn snapshot(&self) -> Vec<Value> {
        let mut all = Vec::new();
        let lp = ListParams::default();
        for o in self.bluegreens().list(&lp).await.unwrap() {
            all.push(serde_json::to_value(o).unwrap());
        }
        for o in self.services().list(&lp).await.unwrap() {
            all.push(serde_json::to_value(o).unwrap());
        }
        for o in self.deployments().list(&lp).await.unwrap() {
            all.push(serde_json::to_value(o).unwrap());
        }
        all
    }

    /// The Service selects `route_to`, and the Deployments are exactly `expected`, each
    /// controlled by `owner` only, with the three labels on itself and its pods.
    async fn assert_state(&self, owner: &BlueGreen, route_to: RouteTo, expected: &[RouteTo]) {
        let name = owner.name_any();
        let uid = owner.uid().unwrap();
        let svc = self.service(&name).await.expect("the Service exists");
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

        let wanted: Vec<String> = expected
            .iter()
            .map(|p| deployment_name(&name, *p))
            .collect();
        assert_eq!(self.deployment_names().await, wanted);
        for phase in expected {
            let d = self
                .deployment(&deployment_name(&name, *phase))
                .await
                .unwrap();
            let labels = labels(&name, Some(*phase));
            let spec = &d.spec;
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
        assert_eq!(self.status(&name).await, Some(route_to));
    }
}

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

fn selector(service: &Service) -> BTreeMap<String, String> {
    service.spec.as_ref().unwrap().selector.clone().unwrap()
}

fn image(deployment: &Deployment) -> String {
    let spec = &deployment.spec;
    spec.template.spec.as_ref().unwrap().containers[0]
        .image
        .clone()
        .unwrap()
}

fn replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.replicas
}

/// Through the real Controller: the Service and both Deployments appear, the status is
/// written through the status subresource, and switching `routeTo` flips the selector and
/// the status, and back.
#[tokio::test]
async fn the_controller_creates_the_objects_and_follows_route_to() {
    let fx = Fx::new().await;
    let _failures = fx.start_controller(fx.client());
    let object = fx.create("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "routed to blue", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    fx.assert_state(&object, RouteTo::Blue, &[RouteTo::Blue, RouteTo::Green])
        .await;
    let blue = fx.deployment("demo-blue").await.unwrap();
    assert_eq!(image(&blue), "demo:version-blue");
    assert_eq!(
        image(&fx.deployment("demo-green").await.unwrap()),
        "demo:version-green"
    );
    assert_eq!(replicas(&blue), Some(1), "the API server's default");
    // Server-side applied by the controller's field manager; the status too.
    let managers: Vec<(String, String)> = blue
        .managed_fields()
        .iter()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(managers, [(MANAGER.to_owned(), "Apply".to_owned())]);
    let stored = fx.bluegreens().get("demo").await.unwrap();
    assert!(
        stored.managed_fields().iter().any(|m| {
            m.manager.as_deref() == Some(MANAGER)
                && m.subresource.as_deref() == Some("status")
                && m.operation.as_deref() == Some("Apply")
        }),
        "status written through the status subresource: {:?}",
        stored.managed_fields()
    );

    fx.edit("demo", both(RouteTo::Green)).await;
    fx.until("demo", "routed to green", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Green)
    })
    .await;
    fx.assert_state(&object, RouteTo::Green, &[RouteTo::Blue, RouteTo::Green])
        .await;
    fx.edit("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "routed to blue again", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    fx.assert_state(&object, RouteTo::Blue, &[RouteTo::Blue, RouteTo::Green])
        .await;
}

/// `kubectl scale` (the scale subresource) on the live Deployment is not reverted by the
/// reconciles that follow: the controller does not own `replicas`.
#[tokio::test]
async fn a_scaled_deployment_keeps_its_replicas() {
    let fx = Fx::new().await;
    let _failures = fx.start_controller(fx.client());
    fx.create("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "routed to blue", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    let scale = json!({ "spec": { "replicas": 3 } });
    fx.deployments()
        .patch_scale("demo-blue", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .unwrap();
    // The scale is a change to an owned Deployment (a reconcile), and so is the switch
    // below, which also changes the green Deployment's pod spec.
    let mut spec = both(RouteTo::Green);
    spec.green_spec = Some(pod_spec("demo:version-green-2"));
    fx.edit("demo", spec).await;
    fx.until("demo", "routed to green", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Green)
            && fx
                .deployment("demo-green")
                .await
                .is_some_and(|d| image(&d) == "demo:version-green-2")
    })
    .await;
    let blue: Scale = fx.deployments().get_scale("demo-blue").await.unwrap();
    assert_eq!(blue.spec.and_then(|s| s.replicas), Some(3));
}

/// A pod template changed by hand (`kubectl set image`, another field manager) is a change
/// to an owned Deployment: the reconcile's forced server-side apply takes the field back,
/// while the field it does not own (`replicas`, scaled meanwhile) keeps the user's value.
#[tokio::test]
async fn a_deployment_edited_by_hand_is_put_back_but_keeps_its_scale() {
    let fx = Fx::new().await;
    let _failures = fx.start_controller(fx.client());
    fx.create("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "routed to blue", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    let scale = json!({ "spec": { "replicas": 2 } });
    fx.deployments()
        .patch_scale("demo-blue", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .unwrap();
    let edit = json!({ "spec": { "template": { "spec": { "containers": [
        { "name": "app", "image": "edited:by-hand" }
    ] } } } });
    fx.deployments()
        .patch(
            "demo-blue",
            &PatchParams::default(),
            &Patch::Strategic(&edit),
        )
        .await
        .unwrap();
    fx.until("demo", "the image put back", async |fx: &Fx| {
        fx.deployment("demo-blue")
            .await
            .is_some_and(|d| image(&d) == "demo:version-blue")
    })
    .await;
    assert_eq!(
        replicas(&fx.deployment("demo-blue").await.unwrap()),
        Some(2)
    );
}

#[tokio::test]
async fn a_changed_pod_spec_updates_its_deployment() {
    let fx = Fx::new().await;
    let client = fx.client();
    fx.create("demo", both(RouteTo::Blue)).await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    let mut spec = both(RouteTo::Blue);
    spec.green_spec = Some(pod_spec("demo:version-green-2"));
    fx.edit("demo", spec).await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    assert_eq!(
        image(&fx.deployment("demo-green").await.unwrap()),
        "demo:version-green-2"
    );
}

#[tokio::test]
async fn removing_a_spec_deletes_its_deployment() {
    let fx = Fx::new().await;
    let _failures = fx.start_controller(fx.client());
    let object = fx.create("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "two Deployments", async |fx: &Fx| {
        fx.deployment_names().await.len() == 2
    })
    .await;
    let mut spec = both(RouteTo::Blue);
    spec.green_spec = None;
    fx.edit("demo", spec).await;
    fx.until("demo", "the green Deployment gone", async |fx: &Fx| {
        fx.deployment_names().await == ["demo-blue"]
    })
    .await;
    fx.assert_state(&object, RouteTo::Blue, &[RouteTo::Blue])
        .await;
}

#[tokio::test]
async fn a_deployment_owned_by_someone_else_is_neither_adopted_nor_deleted() {
    let fx = Fx::new().await;
    let client = fx.client();
    let their_labels = BTreeMap::from([("app".to_owned(), "theirs".to_owned())]);
    let theirs = Deployment {
        metadata: ObjectMeta {
            name: Some("demo-green".into()),
            namespace: Some(fx.ns.clone()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
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
        },
        status: None,
    };
    let theirs = fx
        .deployments()
        .create(&PostParams::default(), &theirs)
        .await
        .unwrap();
    let object = fx.create("demo", both(RouteTo::Blue)).await;

    // Everything else is reconciled; the conflict is reported (and retried with backoff).
    let error = fx.reconcile_once(&client, "demo").await.unwrap_err();
    let expected = format!("Deployment {}/demo-green", fx.ns);
    assert!(
        matches!(error, Error::NotOwned(ref what) if *what == expected),
        "{error}"
    );
    let svc = fx.service("demo").await.expect("the Service exists");
    assert_eq!(selector(&svc), labels("demo", Some(RouteTo::Blue)));
    let blue = fx.deployment("demo-blue").await.expect("ours is created");
    assert!(controlled_by(&blue.metadata, &object.uid().unwrap()));
    let after = fx.deployment("demo-green").await.unwrap();
    assert_eq!(
        after.metadata.resource_version, theirs.metadata.resource_version,
        "not changed"
    );
    assert!(after.owner_references().is_empty(), "not adopted");
    assert_eq!(image(&after), "theirs:1");
    assert_eq!(fx.status("demo").await, Some(RouteTo::Blue));

    // Without greenSpec the BlueGreen wants no green Deployment, but this one is not its to delete.
    let mut spec = both(RouteTo::Blue);
    spec.green_spec = None;
    fx.edit("demo", spec).await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    let after = fx.deployment("demo-green").await.expect("not deleted");
    assert_eq!(
        after.metadata.resource_version,
        theirs.metadata.resource_version
    );
}

/// A reconcile of a converged BlueGreen changes nothing at all: on a real API server a
/// server-side apply with nothing new keeps the resourceVersion, and the status is not
/// rewritten.
#[tokio::test]
async fn a_second_reconcile_changes_nothing() {
    let fx = Fx::new().await;
    let client = fx.client();
    fx.create("demo", both(RouteTo::Green)).await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    let before = fx.snapshot().await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    assert_eq!(fx.snapshot().await, before);
}

/// Through the real Controller, the reconciler reads from its watches and writes only what
/// changes: creating a BlueGreen (blue only) costs one apply of the Service and of the blue
/// Deployment and one status write (and reads of the objects not created yet, which the
/// watches cannot hold; none of the green Deployment it does not declare); its own status
/// write brings it back no more; and changes that need no repair (labels someone adds to
/// the Service and the Deployment, an annotation on the BlueGreen) reconcile without a
/// single request.
#[tokio::test]
async fn a_converged_object_costs_the_api_server_nothing() {
    let fx = Fx::new().await;
    let audit = RbacAudit::default();
    let audited = testing::wrap(fx.client(), &audit, &Faults::default());
    let (controller, caches) = controller(
        Api::namespaced(fx.client(), &fx.ns),
        Api::namespaced(fx.client(), &fx.ns),
        Api::namespaced(fx.client(), &fx.ns),
    );
    let reconciles = Arc::new(AtomicUsize::new(0));
    let counted = reconciles.clone();
    let counting = move |object, ctx| {
        counted.fetch_add(1, Ordering::SeqCst);
        reconcile(object, ctx)
    };
    let reconciler = Arc::new(BlueGreenReconciler::new(audited, caches));
    tokio::spawn(
        controller
            .run(counting, error_policy, reconciler)
            .for_each(|_| async {}),
    );
    let mut blue_only = both(RouteTo::Blue);
    blue_only.green_spec = None;
    fx.create("demo", blue_only).await;
    fx.until("demo", "routed to blue", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    rkb_runtime::testing::controller::settled(|| reconciles.load(Ordering::SeqCst)).await;
    assert_eq!(
        rkb_runtime::testing::controller::writes(&audit.requests()),
        [
            "patch bluegreens/status",
            "patch deployments",
            "patch services"
        ],
        "one apply of each object, one status write"
    );
    assert!(
        !audit
            .requests()
            .iter()
            .any(|r| r.name.as_deref() == Some("demo-green")),
        "no request about the green Deployment"
    );
    let reads: Vec<_> = audit
        .requests()
        .into_iter()
        .filter(|r| r.verb == "list" || (r.verb == "get" && r.resource == "bluegreens"))
        .collect();
    assert_eq!(reads, [], "no list, no read of the BlueGreen");

    let (sent, reconciled) = (audit.requests().len(), reconciles.load(Ordering::SeqCst));
    let label = Patch::Merge(json!({ "metadata": { "labels": { "team": "web" } } }));
    fx.deployments()
        .patch("demo-blue", &PatchParams::default(), &label)
        .await
        .unwrap();
    fx.services()
        .patch("demo", &PatchParams::default(), &label)
        .await
        .unwrap();
    let annotation = Patch::Merge(json!({ "metadata": { "annotations": { "touched": "yes" } } }));
    fx.bluegreens()
        .patch("demo", &PatchParams::default(), &annotation)
        .await
        .unwrap();
    fx.until("demo", "reconciles after the changes", async |_: &Fx| {
        reconciles.load(Ordering::SeqCst) > reconciled
    })
    .await;
    rkb_runtime::testing::controller::settled(|| reconciles.load(Ordering::SeqCst)).await;
    assert_eq!(audit.requests()[sent..], [], "no request at all");
}

/// No reconcile is caused only by the controller's own writes: the Service and Deployments
/// it applies come back through its watches, but the reconcile that applied them went on
/// with them, so a creation and a switch of `routeTo` reconcile once each.
#[tokio::test]
async fn its_own_writes_do_not_reconcile_it_again() {
    let fx = Fx::new().await;
    let (controller, caches) = controller(
        Api::namespaced(fx.client(), &fx.ns),
        Api::namespaced(fx.client(), &fx.ns),
        Api::namespaced(fx.client(), &fx.ns),
    );
    let reconciles = Arc::new(AtomicUsize::new(0));
    let counted = reconciles.clone();
    let counting = move |object, ctx| {
        counted.fetch_add(1, Ordering::SeqCst);
        reconcile(object, ctx)
    };
    let reconciler = Arc::new(BlueGreenReconciler::new(fx.client(), caches));
    tokio::spawn(
        controller
            .run(counting, error_policy, reconciler)
            .for_each(|_| async {}),
    );
    let count = || reconciles.load(Ordering::SeqCst);
    fx.create("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "routed to blue", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    rkb_runtime::testing::controller::settled(count).await;
    assert_eq!(count(), 1, "one reconcile for a creation");

    fx.edit("demo", both(RouteTo::Green)).await;
    fx.until("demo", "routed to green", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Green)
    })
    .await;
    rkb_runtime::testing::controller::settled(count).await;
    assert_eq!(count(), 2, "one more for a switch");
}

/// The Service and Deployments name the BlueGreen as their controller owner (with its
/// uid), which is what the garbage collector follows to delete them with it (the next
/// test); the reconcile leaves a deleting BlueGreen alone.
#[tokio::test]
async fn the_objects_are_owned_by_the_bluegreen_for_garbage_collection() {
    let fx = Fx::new().await;
    let client = fx.client();
    let object = fx.create("demo", both(RouteTo::Blue)).await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    fx.assert_state(&object, RouteTo::Blue, &[RouteTo::Blue, RouteTo::Green])
        .await;
    let mut deleting = object.clone();
    deleting.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now()),
    );
    let before = fx.snapshot().await;
    let action = reconcile(Arc::new(deleting), fx.reconciler(client))
        .await
        .unwrap();
    assert_eq!(action, Action::await_change());
    assert_eq!(fx.snapshot().await, before, "nothing written");
}

/// With kube-controller-manager running: deleting a BlueGreen deletes its Service and both
/// Deployments (and the ReplicaSets the Deployment controller made) through the owner
/// references alone; the controller never deletes them itself.
#[tokio::test]
async fn the_garbage_collector_deletes_what_a_deleted_bluegreen_owned() {
    use k8s_openapi::api::apps::v1::ReplicaSet;
    let fx = Fx::with_controller_manager().await;
    let client = fx.client();
    fx.create("demo", both(RouteTo::Blue)).await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    let replica_sets = Api::<ReplicaSet>::namespaced(client.clone(), &fx.ns);
    let lp = ListParams::default();
    let deadline = tokio::time::Instant::now() + WAIT;
    while replica_sets.list(&lp).await.unwrap().items.len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "no ReplicaSets");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    fx.bluegreens()
        .delete("demo", &Default::default())
        .await
        .unwrap();
    loop {
        let left = fx.deployments().list(&lp).await.unwrap().items.len()
            + fx.services().list(&lp).await.unwrap().items.len()
            + replica_sets.list(&lp).await.unwrap().items.len();
        if left == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{left} owned objects left"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn converges_under_conflicts_server_errors_and_timeouts() {
    let fx = Fx::new().await;
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
    let client = testing::wrap(fx.client(), &RbacAudit::default(), &faults);

    let object = fx.create("demo", both(RouteTo::Blue)).await;
    let errors = fx.reconcile_until_ok(&client, "demo").await;
    assert!(!errors.is_empty());
    fx.assert_state(&object, RouteTo::Blue, &[RouteTo::Blue, RouteTo::Green])
        .await;
    // A reconcile deletes a Deployment its watch holds; the Controller's would be triggered
    // by that Deployment's event, the direct one below waits for it.
    fx.until("demo", "blue cached", async |fx: &Fx| {
        fx.caches.deployments.get(&fx.ns, "demo-blue").is_some()
    })
    .await;

    let mut spec = both(RouteTo::Green);
    spec.blue_spec = None;
    fx.edit("demo", spec).await;
    let more = fx.reconcile_until_ok(&client, "demo").await;
    assert!(!more.is_empty());
    fx.assert_state(&object, RouteTo::Green, &[RouteTo::Green])
        .await;
    assert_eq!(
        image(&fx.deployment("demo-green").await.unwrap()),
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
    let before = fx.snapshot().await;
    fx.reconcile_once(&client, "demo").await.unwrap();
    assert_eq!(fx.snapshot().await, before);
}

/// Every request of the controller (its watchers included, run for real on the audited
/// client) is allowed by config/rbac/role.yaml, and every rule there is used; an apply
/// that creates an object is recorded as the `create` the API server authorizes.
#[tokio::test]
async fn rbac_role_is_exactly_what_the_controller_uses() {
    let fx = Fx::new().await;
    let audit = RbacAudit::default();
    let client = testing::wrap(fx.client(), &audit, &Faults::default());
    let _failures = fx.start_controller(client.clone());
    fx.create("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "routed to blue", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    fx.edit(
        "demo",
        BlueGreenSpec {
            route_to: RouteTo::Green,
            blue_spec: None,
            green_spec: Some(pod_spec("g")),
        },
    )
    .await;
    fx.until("demo", "blue gone, routed to green", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Green)
            && fx.deployment_names().await == ["demo-green"]
    })
    .await;
    if let Err(report) = audit.check_role_file(ROLE) {
        panic!("{report}");
    }
}

/// The controller runs as the operator's ServiceAccount with config/rbac applied
/// (`config/default`), so the API server's own authorizer judges every request.
#[tokio::test]
async fn the_operator_service_account_may_do_what_the_controller_does() {
    let fx = Fx::new().await;
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
    let operator = fx.env.operator_client(&config).await.unwrap();
    let mut failures = fx.start_controller(operator);
    let object = fx.create("demo", both(RouteTo::Blue)).await;
    fx.until("demo", "routed to blue", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Blue)
    })
    .await;
    let mut spec = both(RouteTo::Green);
    spec.blue_spec = None;
    fx.edit("demo", spec).await;
    fx.until("demo", "blue gone, routed to green", async |fx: &Fx| {
        fx.status("demo").await == Some(RouteTo::Green)
            && fx.deployment_names().await == ["demo-green"]
    })
    .await;
    fx.assert_state(&object, RouteTo::Green, &[RouteTo::Green])
        .await;
    if let Ok(failure) = failures.try_recv() {
        panic!("a reconcile failed: {failure}");
    }
}

/// config/rbac's role without its `bluegreens/status` rule (for a ServiceAccount of this
/// test's own; the shared role stays intact): the Service and Deployments are made, and
/// the status write is refused by the authorizer with a 403.
#[tokio::test]
async fn without_its_status_rule_the_status_write_is_refused_with_a_403() {
    let fx = Fx::new().await;
    let restricted = client_without_rule(fx.env, &fx.ns, "bluegreens/status").await;
    let mut failures = fx.start_controller(restricted);
    fx.create("demo", both(RouteTo::Blue)).await;
    let failure = tokio::time::timeout(WAIT, async {
        loop {
            let failure = failures.recv().await.expect("the controller runs");
            if failure.contains("Forbidden") || failure.contains("forbidden") {
                return failure;
            }
        }
    })
    .await
    .expect("a 403 within the wait");
    assert!(failure.contains("bluegreens/status"), "{failure}");
    assert_eq!(fx.deployment_names().await, ["demo-blue", "demo-green"]);
    assert_eq!(fx.status("demo").await, None);
}

/// A client acting as a new ServiceAccount in `namespace`, bound to a copy of
/// config/rbac/role.yaml without its rule on `resource`, once the authorizer lets it get
/// Deployments (so a 403 later is the missing rule, not a binding not yet seen).
async fn client_without_rule(env: &Environment, namespace: &str, resource: &str) -> Client {
    let role_yaml = std::fs::read_to_string(ROLE).unwrap();
    let [object] = envtest::parse_yaml(&role_yaml).unwrap().try_into().unwrap();
    let mut role: ClusterRole =
        serde_json::from_value(serde_json::to_value(object).unwrap()).unwrap();
    let name = format!("{namespace}-without-{}", resource.replace('/', "-"));
    role.metadata = ObjectMeta {
        name: Some(name.clone()),
        ..Default::default()
    };
    let rules = role.rules.get_or_insert_default();
    let before = rules.len();
    rules.retain(|rule| !rule.resources.iter().flatten().any(|r| r == resource));
    assert_eq!(
        rules.len(),
        before - 1,
        "role.yaml has one rule on {resource}"
    );
    let account = "operator";
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name,
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: account.into(),
            namespace: Some(namespace.into()),
            ..Default::default()
        }]),
    };
    let client = env.client();
    Api::<ClusterRole>::all(client.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(client.clone())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{namespace}:{account}")),
            resource_attributes: Some(ResourceAttributes {
                group: Some("apps".into()),
                resource: Some("deployments".into()),
                verb: Some("get".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviews = Api::<SubjectAccessReview>::all(client);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let answer = reviews
            .create(&PostParams::default(), &review)
            .await
            .unwrap();
        if answer.status.is_some_and(|s| s.allowed) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the authorizer did not see the binding within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    env.service_account_client(namespace, account)
        .await
        .unwrap()
}

#[tokio::test]
async fn failures_back_off_per_object_until_a_success() {
    let fx = Fx::new().await;
    fx.create("demo", both(RouteTo::Blue)).await;
    let ctx = fx.reconciler(fx.client());
    let object = Arc::new(fx.bluegreens().get("demo").await.unwrap());
    let status = kube::core::Status::failure("etcd is unavailable", "InternalError").with_code(500);
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
