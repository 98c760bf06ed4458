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

use anyhow::Context as _;
use kube::api::ListParams;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client};
use rkb_runtime::Rbac;
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::manager::Context;

use crate::api::cache::v1alpha1::Memcached;

/// State shared by every reconcile of Memcached objects.
///
/// The `rbac` attributes list the permissions the reconciler needs, and no more: `make
/// manifests` turns them into config/rbac/role.yaml, and the RBAC-audit test below fails
/// when the reconciler makes a request they do not allow or they allow one it never makes.
/// The skeleton only lists and watches memcacheds; add a rule with every API call you
/// add (e.g. `verbs = [patch]` on `memcacheds/status` to write the status).
#[derive(Rbac)]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [list, watch])]
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
    tracing::info!(object = %key, "reconciled");
    ctx.backoff.reset(&key);
    Ok(Action::await_change())
}

/// Retries a failed reconcile with per-object exponential backoff, as controller-runtime does.
pub fn error_policy(
    object: Arc<Memcached>,
    error: &Error,
    ctx: Arc<MemcachedReconciler>,
) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next(&key);
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// Runs the Memcached controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context) -> anyhow::Result<()> {
    let client = ctx.client();
    let objects = Api::<Memcached>::all(client.clone());
    // Fail fast with a hint rather than a watch that retries forever.
    objects
        .list(&ListParams::default().limit(1))
        .await
        .context("cannot list memcacheds.cache.example.com: is the CRD installed (`make install`) and is the manager allowed to?")?;
    // To also reconcile a Memcached when an object it owns changes, chain e.g.
    // `.owns(Api::<Deployment>::all(client.clone()), watcher::Config::default())`.
    let controller = Controller::new(objects, watcher::Config::default().any_semantic());
    let reconciler = Arc::new(MemcachedReconciler::new(client));
    ctx.run(controller, reconcile, error_policy, reconciler)
        .await
}

#[cfg(test)]
mod tests {
    use kube::api::PostParams;
    use kube_fake_client::ClientBuilder;
    use rkb_runtime::testing::{self, Faults, RbacAudit};

    use super::*;

    use crate::api::cache::v1alpha1::MemcachedSpec;

    fn sample() -> Memcached {
        let mut object = Memcached::new("sample", MemcachedSpec::default());
        object.metadata.namespace = Some("default".into());
        object
    }

    async fn fake_client() -> Client {
        ClientBuilder::new()
            .with_resource::<Memcached>()
            .with_status_subresource::<Memcached>()
            .build()
            .await
            .expect("the in-memory API starts")
    }

    #[tokio::test]
    async fn reconciling_an_object_succeeds_and_waits_for_changes() {
        let client = fake_client().await;
        let api: Api<Memcached> = Api::namespaced(client.clone(), "default");
        let object = api.create(&PostParams::default(), &sample()).await.unwrap();
        let ctx = Arc::new(MemcachedReconciler::new(client));
        let action = reconcile(Arc::new(object), ctx).await.unwrap();
        assert_eq!(action, Action::await_change());
    }

    #[tokio::test]
    async fn failures_back_off_per_object_until_a_success() {
        let ctx = Arc::new(MemcachedReconciler::new(fake_client().await));
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

    /// Every request the reconciler makes must be allowed by its `#[rbac]` rules, and every
    /// rule must be used: a missing or an excessive rule fails with the request or rule named.
    #[tokio::test]
    async fn rbac_allows_exactly_what_the_reconciler_uses() {
        let client = fake_client().await;
        let audit = RbacAudit::default();
        let audited = testing::wrap(client.clone(), &audit, &Faults::default());
        // The Controller's watcher, and `run`'s first list.
        audit.watches("cache.example.com", "memcacheds");
        let api: Api<Memcached> = Api::namespaced(client, "default");
        let object = api.create(&PostParams::default(), &sample()).await.unwrap();
        let ctx = Arc::new(MemcachedReconciler::new(audited));
        reconcile(Arc::new(object), ctx).await.unwrap();
        if let Err(report) = audit.check_rules(&MemcachedReconciler::rbac_rules()) {
            panic!("{report}");
        }
    }
}
