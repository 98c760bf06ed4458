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

//! Copies Secrets of type `k8s.ziwon.dev/secretsync` from the namespace `secretsync` into
//! every other namespace except a blocklist — the secret controller of tgik-007, with the
//! copy the post left as a TODO done in full.
//!
//! - **What is copied**: `data`, `type` and labels (server-owned metadata — resourceVersion,
//!   uid, ownerReferences, managedFields, creationTimestamp — is not). Copies get the labels
//!   [`MANAGED_BY`], [`SOURCE_NAMESPACE_LABEL`] and [`SOURCE_NAME_LABEL`], by which they are
//!   found again.
//! - **Writes** are server-side applies with the operator's field manager, so a changed
//!   source updates its copies (and keys or labels removed from the source are removed from
//!   the copies, since the operator owns those fields).
//! - **Deletions**: owner references cannot cross namespaces, so copies cannot be garbage
//!   collected by Kubernetes. The source gets the finalizer [`FINALIZER`]; when it is deleted,
//!   the reconcile deletes every copy found by its labels, then removes the finalizer. (The
//!   alternative, cleaning up on a reconcile of a missing source, does not fit kube-runtime:
//!   its Controller does not call reconcile for an object that is gone from its cache.)
//!   The finalizer is added and removed with `rkb_runtime`'s `TypedApi::{add,remove}_finalizer`
//!   (JSON patches tested against the resourceVersion) rather than kube's `finalizer()`
//!   helper, whose first patch (`test /metadata/finalizers == null`) the in-memory test API
//!   rejects.
//! - **New namespaces**: the Controller also watches Namespaces and maps each event to every
//!   source Secret, so a namespace created later gets its copies.
//! - **Foreign Secrets**: a same-named Secret in a target namespace that secret-sync does not
//!   manage is left alone: a warning is logged and a Warning Event recorded on the source.
//! - **No secret data in logs**: only `namespace/name` is logged; [`SecretReconciler`]'s
//!   `Debug` prints no Secret, and errors carry no object.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, ListParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::manager::Context;
use rkb_runtime::{Lister, NamespacedApi, Rbac};

/// The namespace whose Secrets are copied.
pub const SOURCE_NAMESPACE: &str = "secretsync";
/// The type of the Secrets that are copied; others are ignored.
pub const SECRET_TYPE: &str = "k8s.ziwon.dev/secretsync";
/// On each source Secret: its copies are deleted before it goes.
pub const FINALIZER: &str = "secretsync.k8s.ziwon.dev/cleanup";
/// On each copy: who manages it.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "secret-sync");
/// On each copy: the namespace of its source.
pub const SOURCE_NAMESPACE_LABEL: &str = "secretsync.k8s.ziwon.dev/source-namespace";
/// On each copy: the name of its source.
pub const SOURCE_NAME_LABEL: &str = "secretsync.k8s.ziwon.dev/source-name";
/// The namespaces that get no copies unless `--blocklist` says otherwise.
pub const DEFAULT_BLOCKLIST: [&str; 2] = ["kube-system", "kube-public"];

/// State shared by every reconcile of source Secrets.
///
/// The permissions, exactly what the controller uses (`make manifests` writes them to
/// config/rbac/role.yaml):
/// - Secrets: `get` (is a same-named Secret ours?), `list` (copies by label, and the
///   Controller's list of the source namespace), `watch` (the Controller's watcher, which
///   only watches `secretsync`), `patch` (server-side apply of the copies; the finalizer on
///   sources), `create` (a server-side apply that creates a missing copy is authorized as
///   `create`), `delete` (copies of deleted sources). `watch` is cluster-wide although only `secretsync`
///   is watched: a `namespace = "secretsync"` rule would make `make manifests` write a
///   `Role` with no RoleBinding, whose namespace `config/default`'s kustomize `namespace:`
///   then rewrites to the manager's. It adds no read access: `list` reads every Secret anyway.
/// - Namespaces: `list` and `watch` (the target namespaces; new namespaces get copies).
/// - Events (`events.k8s.io`): `create`, and `patch` for a repeated Event.
#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["secrets"], verbs = [get, list, watch, create, patch, delete])]
#[rbac(groups = ["core"], resources = ["namespaces"], verbs = [list, watch])]
#[rbac(groups = ["events.k8s.io"], resources = ["events"], verbs = [create, patch])]
pub struct SecretReconciler {
    pub client: Client,
    /// The namespaces, from a reflector's cache (see [`run`]).
    namespaces: Lister<Namespace>,
    blocklist: BTreeSet<String>,
    recorder: Recorder,
    backoff: ErrorBackoff,
}

/// Prints the settings only: never a Secret.
impl std::fmt::Debug for SecretReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretReconciler")
            .field("blocklist", &self.blocklist)
            .finish_non_exhaustive()
    }
}

impl SecretReconciler {
    /// `namespaces`: a cache of the cluster's Namespaces; `blocklist`: the namespaces that
    /// get no copies (the source namespace never does).
    pub fn new(
        client: Client,
        namespaces: Lister<Namespace>,
        blocklist: impl IntoIterator<Item = String>,
    ) -> Self {
        let reporter = Reporter {
            controller: "secret-sync".into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            namespaces,
            blocklist: blocklist.into_iter().collect(),
            backoff: ErrorBackoff::default(),
        }
    }

    /// Whether `namespace` gets copies.
    pub fn is_target(&self, namespace: &str) -> bool {
        namespace != SOURCE_NAMESPACE && !self.blocklist.contains(namespace)
    }

    /// Copies `source` into every target namespace and deletes its copies elsewhere.
    async fn sync(&self, source: &Secret) -> kube::Result<Action> {
        let name = source.name_any();
        let targets: BTreeSet<String> = self
            .namespaces
            .list("")
            .into_iter()
            // A terminating namespace accepts no new objects, and its copies go with it.
            .filter(|ns| ns.metadata.deletion_timestamp.is_none())
            .map(|ns| ns.name_any())
            .filter(|ns| self.is_target(ns))
            .collect();
        let mut copies = self.copies_of(&name).await?;
        for namespace in &targets {
            let desired = copy_of(source, namespace);
            let secrets = Secret::api(self.client.clone(), namespace);
            match copies.remove(namespace) {
                Some(copy) if same_content(&copy, &desired) => continue,
                Some(_) => {}
                None => {
                    if secrets.get_or_none(&name).await?.is_some() {
                        self.foreign_secret(source, namespace).await;
                        continue;
                    }
                }
            }
            // The window between the check above and this apply is the only moment a
            // foreign Secret created at the same time could be taken over.
            secrets.apply(&desired).await?;
            tracing::info!(source = %key(SOURCE_NAMESPACE, &name), copy = %key(namespace, &name), "copied");
        }
        // What is left: copies in namespaces that are no target (any more), e.g. blocklisted.
        for namespace in copies.into_keys() {
            self.delete_copy(namespace.as_str(), &name).await?;
        }
        Ok(Action::await_change())
    }

    /// Deletes every copy of the source `name` (it is being deleted).
    async fn cleanup(&self, name: &str) -> kube::Result<Action> {
        for namespace in self.copies_of(name).await?.into_keys() {
            self.delete_copy(&namespace, name).await?;
        }
        tracing::info!(source = %key(SOURCE_NAMESPACE, name), "source deleted; copies removed");
        Ok(Action::await_change())
    }

    /// The copies of the source `name`, by namespace, found by their labels.
    async fn copies_of(&self, name: &str) -> kube::Result<BTreeMap<String, Secret>> {
        let selector = format!(
            "{}={},{SOURCE_NAMESPACE_LABEL}={SOURCE_NAMESPACE},{SOURCE_NAME_LABEL}={name}",
            MANAGED_BY.0, MANAGED_BY.1
        );
        let copies = Api::<Secret>::all(self.client.clone())
            .list(&ListParams::default().labels(&selector))
            .await?;
        Ok(copies
            .into_iter()
            .filter_map(|copy| Some((copy.namespace()?, copy)))
            .filter(|(namespace, _)| namespace != SOURCE_NAMESPACE)
            .collect())
    }

    async fn delete_copy(&self, namespace: &str, name: &str) -> kube::Result<()> {
        let secrets = Api::<Secret>::namespaced(self.client.clone(), namespace);
        match secrets.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            // Already gone: what we wanted.
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error),
        }
        tracing::info!(copy = %key(namespace, name), "deleted copy");
        Ok(())
    }

    /// A same-named Secret that secret-sync does not manage: left alone, logged, and
    /// reported as a Warning Event on the source (`kubectl describe secret -n secretsync`).
    async fn foreign_secret(&self, source: &Secret, namespace: &str) {
        let name = source.name_any();
        tracing::warn!(
            source = %key(SOURCE_NAMESPACE, &name),
            secret = %key(namespace, &name),
            "not copying: a Secret of that name exists and is not managed by secret-sync"
        );
        let event = Event {
            type_: EventType::Warning,
            reason: "TargetExists".into(),
            note: Some(format!(
                "not copied to namespace {namespace}: a Secret named {name} exists there and is not managed by secret-sync"
            )),
            action: "Copy".into(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, &source.object_ref(&())).await {
            tracing::warn!(%error, "cannot record an Event");
        }
    }
}

/// What the copy of `source` in `namespace` should be: its data, type and labels, plus the
/// labels that mark it as a copy. Nothing the server owns is copied.
pub fn copy_of(source: &Secret, namespace: &str) -> Secret {
    let mut labels = source.labels().clone();
    labels.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    labels.insert(SOURCE_NAMESPACE_LABEL.into(), SOURCE_NAMESPACE.into());
    labels.insert(SOURCE_NAME_LABEL.into(), source.name_any());
    Secret {
        metadata: ObjectMeta {
            name: source.metadata.name.clone(),
            namespace: Some(namespace.into()),
            labels: Some(labels),
            ..Default::default()
        },
        data: source.data.clone(),
        type_: source.type_.clone(),
        ..Default::default()
    }
}

/// Whether `copy` already has what `desired` sets (then nothing is written).
fn same_content(copy: &Secret, desired: &Secret) -> bool {
    let nonempty = |d: &Option<BTreeMap<_, _>>| d.clone().filter(|d| !d.is_empty());
    nonempty(&copy.data) == nonempty(&desired.data)
        && copy.type_ == desired.type_
        && copy.metadata.labels == desired.metadata.labels
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Whether `secret` is a source: of the secretsync type, in the source namespace.
pub fn is_source(secret: &Secret) -> bool {
    secret.namespace().as_deref() == Some(SOURCE_NAMESPACE)
        && secret.type_.as_deref() == Some(SECRET_TYPE)
}

/// Why a reconcile failed; the controller retries it with backoff. It names no Secret
/// content: Kubernetes' error statuses do not carry the request body.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API request failed: {0}")]
    Kube(#[from] kube::Error),
}

/// Copies the source Secret `object` everywhere it belongs, or removes its copies once
/// it is being deleted. Idempotent: it runs after every change and every failure.
pub async fn reconcile(object: Arc<Secret>, ctx: Arc<SecretReconciler>) -> Result<Action, Error> {
    let source = key(&object.namespace().unwrap_or_default(), &object.name_any());
    if !is_source(&object) {
        // The watcher only lists sources; this guards direct calls and odd field selectors.
        tracing::debug!(secret = %source, "not a secretsync Secret; ignored");
        return Ok(Action::await_change());
    }
    let sources = Secret::api(ctx.client.clone(), SOURCE_NAMESPACE);
    let action = if object.metadata.deletion_timestamp.is_some() {
        if object.finalizers().iter().any(|f| f == FINALIZER) {
            let action = ctx.cleanup(&object.name_any()).await?;
            // Only once every copy is gone may the source go.
            sources.remove_finalizer(&object, FINALIZER).await?;
            action
        } else {
            Action::await_change()
        }
    } else {
        // Before any copy exists, so that no copy can outlive its source.
        let object = sources.add_finalizer(&object, FINALIZER).await?;
        ctx.sync(&object).await?
    };
    tracing::info!(secret = %source, "reconciled");
    ctx.backoff.reset(&source);
    Ok(action)
}

/// Retries a failed reconcile with per-object exponential backoff, as controller-runtime does.
pub fn error_policy(object: Arc<Secret>, error: &Error, ctx: Arc<SecretReconciler>) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next(&key);
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// The watcher of the source Secrets: only the secretsync type, in the source namespace.
pub fn source_watcher(client: Client) -> (Api<Secret>, watcher::Config) {
    (
        Api::namespaced(client, SOURCE_NAMESPACE),
        watcher::Config::default()
            .fields(&format!("type={SECRET_TYPE}"))
            .any_semantic(),
    )
}

/// Runs the Secret controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context, blocklist: Vec<String>) -> anyhow::Result<()> {
    let client = ctx.client();
    let (sources, config) = source_watcher(client.clone());
    // Fail fast with a hint rather than a watch that retries forever.
    sources
        .list(
            &ListParams::default()
                .fields(&format!("type={SECRET_TYPE}"))
                .limit(1),
        )
        .await
        .context("cannot list secrets in namespace secretsync: is the manager allowed to?")?;
    // The Namespaces the copies go to, cached. The Controller watches them a second time
    // below to be triggered (sharing one watch needs kube's `unstable-runtime-stream-control`
    // feature, which would change kube's features for the whole workspace).
    let (namespaces, reflect) = Lister::reflect(
        Api::<Namespace>::all(client.clone()),
        watcher::Config::default().any_semantic(),
    );
    let reflecting = tokio::spawn(reflect);
    tokio::select! {
        ready = namespaces.wait_until_ready() => ready.context("the namespace cache stopped")?,
        () = ctx.shutdown().cancelled() => {
            reflecting.abort();
            return Ok(());
        }
    }
    let controller = Controller::new(sources, config);
    // Every namespace event (a new namespace above all) re-syncs every source.
    let store = controller.store();
    let controller = controller.watches(
        Api::<Namespace>::all(client.clone()),
        watcher::Config::default().any_semantic(),
        move |_namespace| {
            store
                .state()
                .iter()
                .map(|source| ObjectRef::from(source.as_ref()))
                .collect::<Vec<_>>()
        },
    );
    let reconciler = Arc::new(SecretReconciler::new(client, namespaces, blocklist));
    tracing::info!(
        ?reconciler,
        "syncing secrets from namespace {SOURCE_NAMESPACE}"
    );
    let result = ctx
        .run(controller, reconcile, error_policy, reconciler)
        .await;
    reflecting.abort();
    result
}

#[cfg(test)]
mod tests;
