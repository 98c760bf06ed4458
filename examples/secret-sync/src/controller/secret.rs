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
//! - **Copies are watched** (by their marker labels) and each event is mapped back to its
//!   source, so a copy deleted or edited by hand is put back at once.
//! - **New namespaces**: the Controller also watches Namespaces and maps each event to every
//!   source, so a namespace created later gets its copies.
//! - **Reads come from the watches** ([`rkb_runtime::cache::watches`]): the target
//!   namespaces and the copies are read from the stores of the Controller's own watches,
//!   which take each change before the reconcile it triggers starts, and a write is sent only
//!   when it changes something: a source whose copies are as declared costs the API server no
//!   request. Two reads stay fresh, each saying why: the lookup of a same-named Secret where
//!   no copy is cached, and the list of the copies to delete when a source goes.
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
use kube::core::Selector;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use rkb_runtime::backoff::ErrorBackoff;
use rkb_runtime::cache::{self, Namespaces};
use rkb_runtime::events::Events;
use rkb_runtime::manager::Context;
use rkb_runtime::{Lister, NamespacedApi, Rbac, TypedApi};

/// The namespace whose Secrets are copied (unless `--source-namespace` says otherwise).
pub const SOURCE_NAMESPACE: &str = "secretsync";
/// The field manager of the copies' server-side applies and of the finalizer patches.
pub const FIELD_MANAGER: &str = "secret-sync";
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

/// What is copied where.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The namespace whose Secrets of type [`SECRET_TYPE`] are copied.
    pub source_namespace: String,
    /// Namespaces that get no copies (the source namespace never does).
    pub blocklist: BTreeSet<String>,
    /// Only namespaces with these labels get copies (a label selector); every namespace
    /// when `None`.
    pub namespace_selector: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            source_namespace: SOURCE_NAMESPACE.into(),
            blocklist: DEFAULT_BLOCKLIST.map(str::to_owned).into(),
            namespace_selector: None,
        }
    }
}

impl Settings {
    /// Whether `namespace` gets copies (its labels are checked by the selector, not here).
    pub fn is_target(&self, namespace: &str) -> bool {
        namespace != self.source_namespace && !self.blocklist.contains(namespace)
    }

    /// Whether `secret` is a source: of the secretsync type, in the source namespace.
    pub fn is_source(&self, secret: &Secret) -> bool {
        secret.namespace().as_deref() == Some(self.source_namespace.as_str())
            && secret.type_.as_deref() == Some(SECRET_TYPE)
    }

    /// The label selector of the copies of every source (`name`: of one source).
    pub fn copies_selector(&self, name: Option<&str>) -> String {
        self.copies_labels(name)
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The labels that every copy (`name`: of one source) carries.
    fn copies_labels(&self, name: Option<&str>) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::from([
            (MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned()),
            (
                SOURCE_NAMESPACE_LABEL.to_owned(),
                self.source_namespace.clone(),
            ),
        ]);
        if let Some(name) = name {
            labels.insert(SOURCE_NAME_LABEL.to_owned(), name.to_owned());
        }
        labels
    }

    /// The configuration of the watch of the target namespaces.
    pub fn namespaces_config(&self, base: watcher::Config) -> watcher::Config {
        match &self.namespace_selector {
            Some(selector) => base.labels(selector),
            None => base,
        }
    }
}

/// State shared by every reconcile of source Secrets.
///
/// The permissions, exactly what the controller uses (`make manifests` writes them to
/// config/rbac/role.yaml):
/// - Secrets: `get` (where no copy is cached: is a same-named Secret there?), `list` and
///   `watch` (the sources in `secretsync`, and the copies cluster-wide by their labels;
///   `list` also for the copies of a deleted source), `patch` (server-side apply of the
///   copies; the finalizer on sources), `create` (a server-side apply that creates a missing
///   copy is authorized as `create`), `delete` (copies of deleted sources).
/// - Namespaces: `list` and `watch` (the target namespaces, read from the watch; new
///   namespaces get copies).
/// - Events (`events.k8s.io`): `create`, and `patch` for a repeated Event.
#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["secrets"], verbs = [get, list, watch, create, patch, delete])]
#[rbac(groups = ["core"], resources = ["namespaces"], verbs = [list, watch])]
#[rbac(groups = ["events.k8s.io"], resources = ["events"], verbs = [create, patch])]
pub struct SecretReconciler {
    pub client: Client,
    settings: Settings,
    caches: Caches,
    /// Sends the Events off the reconcile path, in order.
    events: Events,
    backoff: ErrorBackoff,
}

/// What the reconciler reads instead of asking the API server: the watches of the
/// Controller that [`controller`] makes.
#[derive(Clone)]
pub struct Caches {
    /// The target namespaces (those the namespace selector picks).
    pub namespaces: Lister<Namespace>,
    /// The copies of every source, by their labels.
    pub copies: Lister<Secret>,
}

impl Caches {
    /// Caches filled by watches of their own rather than a Controller's, for reconciles
    /// called directly (the tests), and the future that fills them: spawn it.
    pub fn reflect(
        client: &Client,
        settings: &Settings,
        base: watcher::Config,
    ) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (namespaces, n) = Lister::reflect(
            Api::all(client.clone()),
            settings.namespaces_config(base.clone()),
        );
        let (copies, c) = Lister::reflect(
            Api::all(client.clone()),
            base.labels(&settings.copies_selector(None)),
        );
        (Caches { namespaces, copies }, async move {
            tokio::join!(n, c);
        })
    }
}

/// Prints the settings only: never a Secret.
impl std::fmt::Debug for SecretReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretReconciler")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SecretReconciler {
    /// `caches` are the ones [`controller`] returns with the Controller.
    pub fn new(client: Client, settings: Settings, caches: Caches) -> Self {
        let reporter = Reporter {
            controller: "secret-sync".into(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Self {
            events: Events::new(client.clone(), reporter, Events::CAPACITY),
            client,
            settings,
            caches,
            backoff: ErrorBackoff::default(),
        }
    }

    fn secrets(&self, namespace: &str) -> TypedApi<Secret> {
        Secret::api(self.client.clone(), namespace).with_field_manager(FIELD_MANAGER)
    }

    /// Copies `source` into every target namespace and deletes its copies elsewhere.
    async fn sync(&self, source: &Secret) -> kube::Result<Action> {
        let name = source.name_any();
        // From the Namespace watch, which a namespace's event went through before it
        // triggered this reconcile.
        self.caches.namespaces.wait_until_synced().await;
        let targets: BTreeSet<String> = self
            .caches
            .namespaces
            .list_all()
            .into_iter()
            // A terminating namespace accepts no new objects, and its copies go with it.
            .filter(|ns| ns.metadata.deletion_timestamp.is_none())
            .map(|ns| ns.name_any())
            .filter(|ns| self.settings.is_target(ns))
            .collect();
        let mut copies = self.cached_copies_of(&name).await;
        for namespace in &targets {
            let desired = copy_of(source, namespace);
            let secrets = self.secrets(namespace);
            let existing = match copies.remove(namespace) {
                Some(copy) => Some(copy),
                // Fresh: the watch holds only copies, and a Secret of that name that is
                // not one (someone else's) must not be taken over; or the watch has not
                // delivered a copy just written. Only where no copy is cached.
                None => match secrets.get_or_none(&name).await? {
                    Some(secret) if is_copy_of(&secret, source) => Some(Arc::new(secret)),
                    Some(_) => {
                        self.foreign_secret(source, namespace);
                        continue;
                    }
                    None => None,
                },
            };
            // The window between the check above and this apply is the only moment a
            // foreign Secret created at the same time could be taken over.
            if secrets
                .apply_if_changed(&desired, existing.as_deref())
                .await?
                .is_some()
            {
                tracing::info!(source = %key(&self.settings.source_namespace, &name), copy = %key(namespace, &name), "copied");
            }
        }
        // What is left: copies in namespaces that are no target (any more), e.g. blocklisted.
        for namespace in copies.into_keys() {
            self.delete_copy(namespace.as_str(), &name).await?;
        }
        Ok(Action::await_change())
    }

    /// Deletes every copy of the source `name` (it is being deleted).
    async fn cleanup(&self, name: &str) -> kube::Result<Action> {
        // Fresh, not from the watch of the copies: once the finalizer is gone nothing
        // deletes a copy the watch had not delivered yet (one written just before the
        // source was deleted). One list per deleted source.
        let selector = self.settings.copies_selector(Some(name));
        let copies = Api::<Secret>::all(self.client.clone())
            .list(&ListParams::default().labels(&selector))
            .await?;
        for copy in copies {
            let Some(namespace) = copy.namespace() else {
                continue;
            };
            if namespace != self.settings.source_namespace {
                self.delete_copy(&namespace, name).await?;
            }
        }
        tracing::info!(source = %key(&self.settings.source_namespace, name), "source deleted; copies removed");
        Ok(Action::await_change())
    }

    /// The copies of the source `name`, by namespace, as the watch of the copies holds them.
    async fn cached_copies_of(&self, name: &str) -> BTreeMap<String, Arc<Secret>> {
        self.caches.copies.wait_until_synced().await;
        let selector = Selector::from_iter(self.settings.copies_labels(Some(name)));
        self.caches
            .copies
            .list_matching(&selector)
            .into_iter()
            .filter_map(|copy| Some((copy.namespace()?, copy)))
            .filter(|(namespace, _)| *namespace != self.settings.source_namespace)
            .collect()
    }

    async fn delete_copy(&self, namespace: &str, name: &str) -> kube::Result<()> {
        match self
            .secrets(namespace)
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) => {}
            // Already gone: what we wanted.
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error),
        }
        tracing::info!(copy = %key(namespace, name), "deleted copy");
        Ok(())
    }

    /// A same-named Secret that secret-sync does not manage: left alone, logged, and
    /// reported as a Warning Event on the source (`kubectl describe secret -n secretsync`),
    /// queued and sent off the reconcile path.
    fn foreign_secret(&self, source: &Secret, namespace: &str) {
        let name = source.name_any();
        tracing::warn!(
            source = %key(&self.settings.source_namespace, &name),
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
        self.events.publish(event, source.object_ref(&()));
    }
}

/// What the copy of `source` in `namespace` should be: its data, type and labels, plus the
/// labels that mark it as a copy. Nothing the server owns is copied.
pub fn copy_of(source: &Secret, namespace: &str) -> Secret {
    let mut labels = source.labels().clone();
    labels.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    labels.insert(
        SOURCE_NAMESPACE_LABEL.into(),
        source.namespace().unwrap_or_default(),
    );
    labels.insert(SOURCE_NAME_LABEL.into(), source.name_any());
    Secret {
        metadata: ObjectMeta {
            name: source.metadata.name.clone(),
            namespace: Some(namespace.into()),
            labels: Some(labels),
            ..Default::default()
        },
        // No data is sent as none (not `{}`, which the API server stores as none).
        data: source.data.clone().filter(|data| !data.is_empty()),
        type_: source.type_.clone(),
        ..Default::default()
    }
}

/// Whether `secret` is labelled as a copy of `source`.
fn is_copy_of(secret: &Secret, source: &Secret) -> bool {
    let labels = secret.labels();
    labels.get(MANAGED_BY.0).map(String::as_str) == Some(MANAGED_BY.1)
        && labels.get(SOURCE_NAMESPACE_LABEL) == source.namespace().as_ref()
        && labels.get(SOURCE_NAME_LABEL) == source.metadata.name.as_ref()
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
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
    if !ctx.settings.is_source(&object) {
        // The watcher only lists sources; this guards direct calls and odd field selectors.
        tracing::debug!(secret = %source, "not a secretsync Secret; ignored");
        return Ok(Action::await_change());
    }
    let sources = ctx.secrets(&ctx.settings.source_namespace);
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
    ctx.backoff.reset_for(object.as_ref());
    Ok(action)
}

/// Retries a failed reconcile with per-object exponential backoff (keyed by UID, so a
/// recreated source starts afresh), as controller-runtime does.
pub fn error_policy(object: Arc<Secret>, error: &Error, ctx: Arc<SecretReconciler>) -> Action {
    let key = ObjectRef::from(object.as_ref()).to_string();
    let delay = ctx.backoff.next_for(object.as_ref());
    tracing::warn!(object = %key, %error, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// The Controller: source Secrets (only the secretsync type, in the source namespace), every
/// target Namespace (each event re-syncs every source), and the copies (by their labels; each
/// event reconciles its source), with the caches of the last two for the reconciler. `base`
/// is the watchers' configuration (the tests shorten its timeout).
pub fn controller(
    client: Client,
    settings: &Settings,
    base: watcher::Config,
) -> (Controller<Secret>, Caches) {
    let base = base.any_semantic();
    let sources = Api::<Secret>::namespaced(client.clone(), &settings.source_namespace);
    let controller = Controller::new(sources, base.clone().fields(&format!("type={SECRET_TYPE}")));
    let store = controller.store();
    let source_namespace = settings.source_namespace.clone();
    let (controller, namespaces) = cache::watches(
        controller,
        Api::<Namespace>::all(client.clone()),
        settings.namespaces_config(base.clone()),
        move |_namespace| {
            store
                .state()
                .iter()
                .map(|source| ObjectRef::from(source.as_ref()))
                .collect::<Vec<_>>()
        },
    );
    let (controller, copies) = cache::watches(
        controller,
        Api::<Secret>::all(client),
        base.labels(&settings.copies_selector(None)),
        move |copy: Secret| {
            let name = copy.labels().get(SOURCE_NAME_LABEL)?;
            Some(ObjectRef::new(name).within(&source_namespace))
        },
    );
    (controller, Caches { namespaces, copies })
}

/// Runs the Secret controller; the manager starts it once this replica leads and adds
/// metrics, readiness, `--concurrency` and graceful shutdown.
pub async fn run(ctx: Context, settings: Settings) -> anyhow::Result<()> {
    let client = ctx.client();
    // It copies the source namespace's Secrets into every namespace its selector matches:
    // its own settings say where it acts, so a manager scoped with --watch-namespace is
    // refused rather than half obeyed.
    if ctx.namespaces() != &Namespaces::All {
        anyhow::bail!(
            "secret-sync copies Secrets into every namespace its --namespace-selector matches \
             and watches them cluster-wide; it does not run with --watch-namespace {} \
             (choose the target namespaces with its selector instead)",
            ctx.namespaces()
        );
    }
    // Fail fast with a hint rather than a watch that retries forever.
    Api::<Secret>::namespaced(client.clone(), &settings.source_namespace)
        .list(
            &ListParams::default()
                .fields(&format!("type={SECRET_TYPE}"))
                .limit(1),
        )
        .await
        .with_context(|| {
            format!(
                "cannot list secrets in namespace {}: is the manager allowed to?",
                settings.source_namespace
            )
        })?;
    let (controller, caches) = controller(client.clone(), &settings, watcher::Config::default());
    let reconciler = Arc::new(SecretReconciler::new(client, settings, caches));
    tracing::info!(?reconciler, "syncing secrets");
    let events = reconciler.events.clone();
    let ran = ctx
        .run(controller, reconcile, error_policy, reconciler)
        .await;
    // The Events the last reconciles queued, before the process exits.
    events.flush().await;
    ran
}

#[cfg(test)]
mod tests;
