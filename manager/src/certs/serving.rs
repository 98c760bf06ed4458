//! On every replica: one watch of the certificate Secret, which the webhook or metrics
//! server serves from (reloading when it changes) and the leader keeps (repairing it when it goes).

use std::sync::Arc;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};
use tokio::sync::watch;

use super::Purpose;
use super::authority::{TLS_CERT, TLS_KEY};
use crate::manager::Check;
pub(crate) use crate::serve::tls::Swappable as Served;

/// What the watch last saw of the Secret.
#[derive(Clone, Debug)]
pub(crate) enum Seen {
    /// The watch has not listed it yet.
    Unknown,
    Absent,
    Present(Arc<Secret>),
}

/// The Secret `namespace/name`, watched for as long as the future [`SecretWatch::new`]
/// returns runs.
#[derive(Clone, Debug)]
pub(crate) struct SecretWatch {
    pub purpose: Purpose,
    pub namespace: String,
    pub name: String,
    seen: watch::Receiver<Seen>,
}

impl SecretWatch {
    pub(crate) fn new(
        client: Client,
        purpose: Purpose,
        namespace: &str,
        name: &str,
    ) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (sender, seen) = watch::channel(Seen::Unknown);
        let api = Api::<Secret>::namespaced(client, namespace);
        let target = format!("{namespace}/{name}");
        let follow = follow(purpose, api, name.to_owned(), target, sender);
        let watch = Self {
            purpose,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            seen,
        };
        (watch, follow)
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<Seen> {
        self.seen.clone()
    }
}

/// Feeds `sender` what the API server says of the Secret. A failing watch (a 403: the
/// replica may not read the Secret) is logged once, retried with backoff, and its end
/// logged too.
async fn follow(
    purpose: Purpose,
    api: Api<Secret>,
    name: String,
    target: String,
    sender: watch::Sender<Seen>,
) {
    // With a single-name field selector, the list and watch are authorized against a rule
    // with `resourceNames: [name]`.
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut events = watcher::watcher(api, config).default_backoff().boxed();
    let mut listing: Option<Option<Secret>> = None;
    let mut failing = false;
    while let Some(event) = events.next().await {
        let seen = match event {
            Err(error) => {
                if !failing {
                    tracing::error!(secret = %target, error = %error, "cannot watch the {purpose} certificate Secret (the manager needs get, list and watch on it); retrying");
                    failing = true;
                }
                continue;
            }
            Ok(Event::Init) => {
                listing = Some(None);
                None
            }
            Ok(Event::InitApply(secret)) => {
                listing = Some(Some(secret));
                None
            }
            Ok(Event::InitDone) => Some(match listing.take().flatten() {
                Some(secret) => Seen::Present(Arc::new(secret)),
                None => Seen::Absent,
            }),
            Ok(Event::Apply(secret)) => Some(Seen::Present(Arc::new(secret))),
            Ok(Event::Delete(_)) => Some(Seen::Absent),
        };
        if failing {
            tracing::info!(secret = %target, "watching the {purpose} certificate Secret again");
            failing = false;
        }
        if let Some(seen) = seen {
            sender.send_replace(seen);
        }
    }
}

/// Serves the Secret's `tls.crt` and `tls.key` through `served` for as long as it runs,
/// passing `loaded` (if any) once one is served. A Secret gone or broken leaves the last
/// good pair in use.
pub(crate) async fn serve_from(watch: SecretWatch, served: Arc<Served>, loaded: Option<Check>) {
    let purpose = watch.purpose;
    let target = format!("{}/{}", watch.namespace, watch.name);
    let mut seen = watch.subscribe();
    loop {
        let current = seen.borrow_and_update().clone();
        if let Seen::Present(secret) = current {
            let value = |key: &str| {
                secret
                    .data
                    .as_ref()
                    .and_then(|d| d.get(key))
                    .map(|v| v.0.clone())
                    .unwrap_or_default()
            };
            match served.set_pem(&value(TLS_CERT), &value(TLS_KEY)) {
                Ok(true) => {
                    if let Some(loaded) = &loaded {
                        loaded.pass();
                    }
                    tracing::info!(secret = %target, "serving the {purpose} certificate of the Secret");
                }
                Ok(false) => {}
                // The error says what is wrong, never what the Secret holds.
                Err(error) => {
                    tracing::warn!(secret = %target, error = format!("{error:#}"), "the {purpose} certificate Secret holds no usable certificate; keeping the one served")
                }
            }
        }
        if seen.changed().await.is_err() {
            return;
        }
    }
}
