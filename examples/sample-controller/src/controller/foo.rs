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

//! Reconciles Foo objects (samplecontroller.k8s.io/v1alpha1).

use std::sync::Arc;

use anyhow::Context as _;
use kube::api::ListParams;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client};
use rkb_runtime::Rbac;
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::manager::Context;

use crate::api::samplecontroller::v1alpha1::Foo;

/// State shared by every reconcile of Foo objects.
///
/// The `rbac` attributes list the permissions the reconciler needs; `make manifests`
/// turns them into config/rbac/role.yaml. Add a rule for every kind it reads or writes.
#[derive(Rbac)]
#[rbac(groups = ["samplecontroller.k8s.io"], resources = ["foos"], verbs = [get, list, watch, update, patch])]
#[rbac(groups = ["samplecontroller.k8s.io"], resources = ["foos/status"], verbs = [get, update, patch])]
#[rbac(groups = ["samplecontroller.k8s.io"], resources = ["foos/finalizers"], verbs = [update])]
pub struct FooReconciler {
    pub client: Client,
    backoff: ErrorBackoff,
}

impl FooReconciler {
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

/// Makes the cluster match what the Foo declares. It runs after every change
/// and after every failure, so it must be idempotent.
pub async fn reconcile(object: Arc<Foo>, ctx: Arc<FooReconciler>) -> Result<Action, Error> {
    let key = ObjectRef::from(object.as_ref()).to_string();
    // TODO(user): compare what the Foo asks for with the objects that exist,
    // create, update or delete them through `ctx.client`, and record the outcome.
    tracing::info!(object = %key, "reconciled");
    ctx.backoff.reset(&key);
    Ok(Action::await_change())
}

/// Retries a failed reconcile with per-object exponential backoff, as controller-runtime does.
pub fn error_policy(object: Arc<Foo>, error: &Error, ctx: Arc<FooReconciler>) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next(&key);
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// Runs the Foo controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let client = ctx.client();
    let objects = Api::<Foo>::all(client.clone());
    // Fail fast with a hint rather than a watch that retries forever.
    objects
        .list(&ListParams::default().limit(1))
        .await
        .context("cannot list foos.samplecontroller.k8s.io: is the CRD installed (`make install`) and is the manager allowed to?")?;
    // To also reconcile a Foo when an object it owns changes, chain e.g.
    // `.owns(Api::<Deployment>::all(client.clone()), watcher::Config::default())`.
    let controller = Controller::new(objects, watcher::Config::default().any_semantic());
    let reconciler = Arc::new(FooReconciler::new(client));
    ctx.run(controller, reconcile, error_policy, reconciler)
        .await
}

#[cfg(test)]
mod tests {
    use kube::api::PostParams;
    use kube_fake_client::ClientBuilder;

    use super::*;

    use crate::api::samplecontroller::v1alpha1::FooSpec;

    fn sample() -> Foo {
        let mut object = Foo::new("sample", FooSpec::default());
        object.metadata.namespace = Some("default".into());
        object
    }

    async fn fake_client() -> Client {
        ClientBuilder::new()
            .with_resource::<Foo>()
            .with_status_subresource::<Foo>()
            .build()
            .await
            .expect("the in-memory API starts")
    }

    #[tokio::test]
    async fn reconciling_an_object_succeeds_and_waits_for_changes() {
        let client = fake_client().await;
        let api: Api<Foo> = Api::namespaced(client.clone(), "default");
        let object = api.create(&PostParams::default(), &sample()).await.unwrap();
        let ctx = Arc::new(FooReconciler::new(client));
        let action = reconcile(Arc::new(object), ctx).await.unwrap();
        assert_eq!(action, Action::await_change());
    }

    #[tokio::test]
    async fn failures_back_off_per_object_until_a_success() {
        let ctx = Arc::new(FooReconciler::new(fake_client().await));
        let object = Arc::new(sample());
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
        for verb in ["get", "list", "watch"] {
            assert!(
                rules.iter().any(|r| r.resources.iter().any(|x| x == "foos")
                    && r.verbs.iter().any(|v| v == verb)),
                "no rule allows {verb} on foos"
            );
        }
    }
}
