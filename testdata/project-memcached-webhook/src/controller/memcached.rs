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

//! Reconciles Memcached objects (cache.example.com/v1alpha1).

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use rkb_runtime::NamespacedApi;
use rkb_runtime::Rbac;
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::cache::Namespaces;
use rkb_runtime::manager::Context;

use crate::api::cache::v1alpha1::Memcached;

/// State shared by every reconcile of Memcached objects.
///
/// The `rbac` attributes list the permissions the reconciler needs, and no more: `make
/// manifests` turns them into config/rbac/role.yaml, and the RBAC-audit test below fails
/// when the reconciler makes a request they do not allow or they allow one it never makes.
/// The skeleton lists and watches memcacheds and patches their status;
/// add a rule with every API call you add.
#[derive(Rbac)]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [list, watch])]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds/status"], verbs = [patch])]
pub struct MemcachedReconciler {
    pub client: Client,
    backoff: ErrorBackoff,
}

impl MemcachedReconciler {
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
}

/// Makes the cluster match what the Memcached declares. It runs after every change
/// and after every failure, so it must be idempotent.
pub async fn reconcile(
    object: Arc<Memcached>,
    ctx: Arc<MemcachedReconciler>,
) -> Result<Action, Error> {
    let key = ObjectRef::from(object.as_ref()).to_string();
    // TODO(user): compare what the Memcached asks for with the objects that exist,
    // create, update or delete them through `ctx.client`, and record the outcome.
    report_ready(&ctx.client, &object).await?;
    tracing::info!(object = %key, "reconciled");
    ctx.backoff.reset_for(object.as_ref());
    Ok(Action::await_change())
}

/// Records in the status that the object's current generation was reconciled: a `Ready`
/// condition (the `Ready` printer column) that names the generation. It writes only when
/// the condition changes, since every write is a change the controller's watch sees.
async fn report_ready(client: &Client, object: &Memcached) -> Result<(), Error> {
    let generation = object.metadata.generation;
    let ready = object
        .status
        .iter()
        .flat_map(|status| &status.conditions)
        .find(|condition| condition.type_ == "Ready");
    if ready.is_some_and(|c| c.status == "True" && c.observed_generation == generation) {
        return Ok(());
    }
    let condition = Condition {
        type_: "Ready".into(),
        status: "True".into(),
        reason: "Reconciled".into(),
        message: "The reconciler has processed this generation.".into(),
        observed_generation: generation,
        // When the status last changed, not when it was last written (Kubernetes' convention).
        last_transition_time: ready.filter(|c| c.status == "True").map_or_else(
            || Time(Timestamp::now()),
            |c| c.last_transition_time.clone(),
        ),
    };
    // Server-side apply of this one condition: other status fields and conditions keep
    // their owners.
    Memcached::api_all(client.clone())
        .apply_status(object, &serde_json::json!({ "conditions": [condition] }))
        .await?;
    Ok(())
}

/// Retries a failed reconcile with per-object exponential backoff (keyed by UID, so a
/// recreated object starts afresh), as controller-runtime does.
pub fn error_policy(
    object: Arc<Memcached>,
    error: &Error,
    ctx: Arc<MemcachedReconciler>,
) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next_for(object.as_ref());
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
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
    let reconciler = Arc::new(MemcachedReconciler::new(client.clone()));
    let controller = controller(&client, ctx.namespaces());
    ctx.run(controller, reconcile, error_policy, reconciler)
        .await
}

/// The controller: the memcacheds it reconciles and every watch that triggers a
/// reconcile, in `namespaces` (all, those of `--watch-namespace`, or the test's own). A
/// Memcached is reconciled when its spec or metadata change, not when only its status
/// does: this controller writes the status, and its own writes do not bring it back.
/// The tests run it as built here, through the RBAC audit, so a watch without its
/// `#[rbac]` rule fails them, as the API server would refuse it.
pub fn controller(client: &Client, namespaces: &Namespaces) -> Controller<Memcached> {
    let objects = namespaces.apis(client);
    // To also reconcile a Memcached when an object it owns changes, and read those
    // objects from the watch rather than with GETs, use `rkb_runtime::cache::owns(controller,
    // deployments, watcher::Config::default())` with an `Api::<Deployment>` in the same
    // namespace: it returns the Lister to give the reconciler. Allow the watch:
    // `#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [list, watch])]`.
    rkb_runtime::cache::controller(objects, watcher::Config::default().any_semantic())
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use futures::StreamExt as _;
    use kube::Api;
    use kube::ResourceExt as _;
    use kube::api::PostParams;
    use rkb_runtime::testing::envtest::{self, Environment};
    use rkb_runtime::testing::{self, Faults, RbacAudit};
    use tokio::sync::mpsc;

    use super::*;
    use crate::api::cache::v1alpha1::MemcachedSpec;

    /// How long a test waits for the controller to act.
    const WAIT: Duration = Duration::from_secs(30);

    /// A real kube-apiserver and etcd shared by this binary's tests (`make setup-envtest`
    /// provides them; `USE_EXISTING_CLUSTER=true` uses the current cluster instead), with
    /// the project's CRDs installed as `make install` would, and a fresh namespace.
    async fn api_server() -> (&'static Environment, String) {
        let env = envtest::shared().await;
        let crds = crate::api::manifests()
            .crds()
            .unwrap_or_else(|e| panic!("{e}"));
        env.apply().crds(crds).await.unwrap();
        let namespace = env.create_namespace().await.unwrap();
        (env, namespace)
    }

    /// The object the tests reconcile: in the test's namespace.
    fn sample(namespace: &str) -> Memcached {
        let mut object = Memcached::new("sample", MemcachedSpec::default());
        object.metadata.namespace = Some(namespace.into());
        object
    }

    /// The API of the tests' objects.
    fn api(client: Client, namespace: &str) -> Api<Memcached> {
        Api::namespaced(client, namespace)
    }

    async fn create_sample(env: &Environment, namespace: &str) -> Memcached {
        api(env.client(), namespace)
            .create(&PostParams::default(), &sample(namespace))
            .await
            .unwrap()
    }

    /// The status says the object's current generation was reconciled.
    fn is_ready(object: &Memcached) -> bool {
        object.status.iter().flat_map(|s| &s.conditions).any(|c| {
            c.type_ == "Ready"
                && c.status == "True"
                && c.observed_generation == object.metadata.generation
        })
    }

    /// What the controller reports: the name of each object it reconciled, or the
    /// failure (with the object's name when it is a reconcile's).
    type Reconciled = Result<String, (Option<String>, String)>;

    /// Runs the real Controller (list, watch, reconcile, error policy) as `client` on
    /// the tests' objects, until the test ends.
    fn start_controller(client: Client, namespace: &str) -> mpsc::UnboundedReceiver<Reconciled> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let reconciler = Arc::new(MemcachedReconciler::new(client.clone()));
        let running = controller(&client, &Namespaces::only([namespace]))
            .run(reconcile, error_policy, reconciler)
            .for_each(move |result| {
                let reported = match result {
                    Ok((object, _)) => Ok(object.name),
                    Err(kube::runtime::controller::Error::ReconcilerFailed(error, object)) => {
                        Err((Some(object.name), error.to_string()))
                    }
                    Err(error) => Err((None, error.to_string())),
                };
                let _ = sender.send(reported);
                async {}
            });
        tokio::spawn(running);
        receiver
    }

    /// Waits until the controller has reconciled `name` and the object satisfies `done`;
    /// a failed reconcile of it fails the test with the API server's answer.
    async fn reconciled_until(
        results: &mut mpsc::UnboundedReceiver<Reconciled>,
        objects: &Api<Memcached>,
        name: &str,
        done: impl Fn(&Memcached) -> bool,
    ) -> Memcached {
        let wait = async {
            loop {
                match results.recv().await {
                    Some(Ok(reconciled)) if reconciled == name => {
                        let object = objects.get(name).await.unwrap();
                        if done(&object) {
                            return object;
                        }
                    }
                    Some(Err((object, error))) if object.as_deref().is_none_or(|o| o == name) => {
                        panic!("the controller failed: {error}")
                    }
                    Some(_) => {}
                    None => panic!("the controller stopped"),
                }
            }
        };
        tokio::time::timeout(WAIT, wait)
            .await
            .unwrap_or_else(|_| panic!("{name} was not reconciled as expected within {WAIT:?}"))
    }

    /// The controller sees objects through its watch and reconciles each change, and
    /// the status (written through the status subresource) names the generation it reconciled.
    #[tokio::test]
    async fn the_controller_reconciles_objects_as_they_change() {
        let (env, namespace) = api_server().await;
        let objects = api(env.client(), &namespace);
        let mut results = start_controller(env.client(), &namespace);
        let name = create_sample(env, &namespace).await.name_any();
        let ready = reconciled_until(&mut results, &objects, &name, is_ready).await;
        assert_eq!(ready.metadata.generation, Some(1));

        // A spec change is a new generation, which the status follows. The change is
        // stated in Rust, so replacing the example field `foo` fails to compile here
        // until the test changes one of yours.
        let mut changed = ready;
        changed.spec.foo = Some("changed".into());
        objects
            .replace(&name, &PostParams::default(), &changed)
            .await
            .unwrap();
        let ready = reconciled_until(&mut results, &objects, &name, is_ready).await;
        assert_eq!(ready.metadata.generation, Some(2));
    }

    #[tokio::test]
    async fn failures_back_off_per_object_until_a_success() {
        let (env, namespace) = api_server().await;
        let ctx = Arc::new(MemcachedReconciler::new(env.client()));
        let object = Arc::new(create_sample(env, &namespace).await);
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

    /// Every request the controller makes, its watches as [`controller`] builds them and its
    /// reconciles, must be allowed by the `#[rbac]` rules, and every rule must be used: a
    /// missing or an excessive rule fails with the request or rule named.
    #[tokio::test]
    async fn rbac_allows_exactly_what_the_controller_uses() {
        let (env, namespace) = api_server().await;
        let audit = RbacAudit::default();
        let audited = testing::wrap(env.client(), &audit, &Faults::default());
        let objects = api(env.client(), &namespace);
        let mut results = start_controller(audited, &namespace);
        let name = create_sample(env, &namespace).await.name_any();
        reconciled_until(&mut results, &objects, &name, is_ready).await;
        // A change that reaches the controller through its watch: the watch was made.
        let label = serde_json::json!({ "metadata": { "labels": { "audited": "true" } } });
        let patch = kube::api::Patch::Merge(&label);
        objects
            .patch(&name, &kube::api::PatchParams::default(), &patch)
            .await
            .unwrap();
        reconciled_until(&mut results, &objects, &name, |o| {
            o.labels().contains_key("audited")
        })
        .await;
        if let Err(report) = audit.check_rules(&MemcachedReconciler::rbac_rules()) {
            panic!("{report}");
        }
    }

    /// The controller runs as the operator's ServiceAccount with config/rbac applied
    /// (`make manifests` writes role.yaml from the `#[rbac]` rules), so the API server's
    /// own authorizer judges every request: a missing rule fails here with its 403.
    #[tokio::test]
    async fn the_operator_service_account_may_do_what_the_controller_does() {
        let (env, namespace) = api_server().await;
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
        let operator = env.operator_client(&config).await.unwrap();
        let objects = api(env.client(), &namespace);
        let mut results = start_controller(operator, &namespace);
        let name = create_sample(env, &namespace).await.name_any();
        reconciled_until(&mut results, &objects, &name, is_ready).await;
    }
}
