//! Admission and conversion webhooks, served by the manager over HTTPS, like
//! controller-runtime's webhook server.
//!
//! - [`Defaulter`] and [`Validator`]: default and check a kind's objects (async, with
//!   warnings), registered with [`Webhooks::defaulter`] and [`Webhooks::validator`] at the
//!   path their settings name (`#[rkb_runtime::webhook(...)]` on the `impl`).
//! - [`Hub`] and [`Convertible`]: conversion between a CRD's versions through its storage
//!   version, served at [`CONVERSION_PATH`] after [`Webhooks::conversion`]; [`preserve`]
//!   and [`restore`] keep what a version cannot hold in an annotation.
//!
//! ```no_run
//! # use rkb_manager::webhook::{Defaulter, Denied, Request, Webhooks};
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # struct Labels;
//! # impl Defaulter<ConfigMap> for Labels {
//! #     async fn apply_defaults(&self, _: &Request, _: &mut ConfigMap) -> Result<(), Denied> { Ok(()) }
//! # }
//! # async fn start(client: kube::Client, args: rkb_manager::manager::Args) -> anyhow::Result<()> {
//! let webhooks = Webhooks::new().defaulter::<ConfigMap, _>(Labels);
//! rkb_manager::Manager::new("my-operator", client, args)
//!     .webhooks(webhooks)
//!     .run(vec![])
//!     .await
//! # }
//! ```
//!
//! The server answers POSTs of JSON bodies up to [`MAX_REQUEST_BYTES`]; anything else
//! gets an HTTP error (405, 404, 415, 413), a body that is not a review gets 400 with a
//! review saying why, and a review the webhook cannot handle (another kind, an unreadable
//! object, a panicking webhook) is refused with a message, never a crash.

mod admission;
mod conversion;

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt as _;
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

pub use admission::{Defaulter, Denied, Request, Validator, Warnings};
pub use conversion::{Conversion, ConversionError, Convertible, Hub, preserve, restore};
pub use kube::core::admission::Operation;
pub use rkb_core::webhook::{
    CONVERSION_PATH, FailurePolicy, Kind, MatchPolicy, Operation as RuleOperation, Settings,
    SideEffects,
};

pub use crate::serve::{DEFAULT_CERT_DIR, TlsFiles};
use crate::serve::{ListenAddr, server, tls};

/// The largest request body accepted: an AdmissionReview carries the object and the old
/// object, each up to the API server's 3 MiB; controller-runtime allows 7 MiB too.
pub const MAX_REQUEST_BYTES: usize = 7 * 1024 * 1024;

type Handler =
    Arc<dyn Fn(Bytes) -> Pin<Box<dyn Future<Output = admission::Reply> + Send>> + Send + Sync>;

/// One registered admission webhook.
#[derive(Clone)]
struct Route {
    /// For logs: e.g. "defaulting Memcached".
    what: String,
    handler: Handler,
}

/// The webhooks an operator serves; hand them to [`Manager::webhooks`](crate::Manager::webhooks).
#[derive(Clone, Default)]
pub struct Webhooks {
    routes: BTreeMap<String, Route>,
    conversions: BTreeMap<(String, String), conversion::Erased>,
    /// Registration mistakes (two webhooks on one path), reported by [`Webhooks::bind`].
    conflicts: Vec<String>,
}

impl fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhooks")
            .field("paths", &self.paths())
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `defaulter` for `K` at the path of its settings.
    #[must_use]
    pub fn defaulter<K, D>(self, defaulter: D) -> Self
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static,
        D: Defaulter<K>,
    {
        let path = D::settings().path_for(
            Kind::Mutating,
            &K::group(&()),
            &K::version(&()),
            &K::kind(&()),
        );
        let defaulter = Arc::new(defaulter);
        let handler: Handler = Arc::new(move |body| {
            let defaulter = defaulter.clone();
            Box::pin(async move { admission::mutate::<K, D>(&defaulter, &body).await })
        });
        self.route(path, format!("defaulting {}", K::kind(&())), handler)
    }

    /// Serves `validator` for `K` at the path of its settings.
    #[must_use]
    pub fn validator<K, V>(self, validator: V) -> Self
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
        V: Validator<K>,
    {
        let path = V::settings().path_for(
            Kind::Validating,
            &K::group(&()),
            &K::version(&()),
            &K::kind(&()),
        );
        let validator = Arc::new(validator);
        let handler: Handler = Arc::new(move |body| {
            let validator = validator.clone();
            Box::pin(async move { admission::validate::<K, V>(&validator, &body).await })
        });
        self.route(path, format!("validating {}", K::kind(&())), handler)
    }

    /// Serves the conversion of one kind at [`CONVERSION_PATH`].
    #[must_use]
    pub fn conversion<H: Hub>(mut self, conversion: Conversion<H>) -> Self {
        let erased = conversion.erased;
        let key = (erased.group.clone(), erased.kind.clone());
        if self.conversions.insert(key, erased).is_some() {
            self.conflicts
                .push(format!("two conversions for {}", H::kind(&())));
        }
        self
    }

    fn route(mut self, path: String, what: String, handler: Handler) -> Self {
        if let Some(first) = self.routes.get(&path) {
            self.conflicts.push(format!(
                "{what} and {} are both served at {path}: give one another path",
                first.what
            ));
        } else {
            self.routes.insert(path, Route { what, handler });
        }
        self
    }

    /// Whether nothing is registered (the manager then starts no webhook server).
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty() && self.conversions.is_empty()
    }

    /// The paths served.
    pub fn paths(&self) -> Vec<String> {
        let conversion = (!self.conversions.is_empty()).then(|| CONVERSION_PATH.to_owned());
        self.routes.keys().cloned().chain(conversion).collect()
    }

    /// Binds `addr` with the certificate and key in `tls` (reloaded when they change),
    /// ready to [`serve`](WebhookServer::serve).
    pub async fn bind(
        self,
        addr: impl Into<ListenAddr>,
        tls: &TlsFiles,
    ) -> anyhow::Result<WebhookServer> {
        if !self.conflicts.is_empty() {
            anyhow::bail!("webhooks conflict: {}", self.conflicts.join("; "));
        }
        let (acceptor, reload) =
            tls::acceptor(Some(tls.clone()), &[], "webhook").map_err(|error| {
                anyhow::anyhow!(
                    "{error:#}; the webhook server needs a certificate and key (cert-manager \
                 mounts them at {DEFAULT_CERT_DIR}; set --webhook-cert-path otherwise)"
                )
            })?;
        let listener = server::bind(addr, "webhooks").await?;
        Ok(WebhookServer {
            listener,
            acceptor,
            reload: reload
                .map(|reload| Box::pin(reload) as Pin<Box<dyn Future<Output = ()> + Send>>),
            webhooks: Arc::new(self),
            ready: None,
        })
    }

    /// Answers one HTTP request.
    async fn respond(&self, request: server::Request) -> server::Response {
        let path = request.uri().path().to_owned();
        if request.method() != Method::POST {
            return server::text(StatusCode::METHOD_NOT_ALLOWED, "only POST\n");
        }
        let conversion = path == CONVERSION_PATH && !self.conversions.is_empty();
        let route = self.routes.get(&path);
        if route.is_none() && !conversion {
            return server::text(
                StatusCode::NOT_FOUND,
                format!(
                    "no webhook at {path}: this server has {}\n",
                    self.paths().join(", ")
                ),
            );
        }
        let json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        if !json {
            return server::text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "a review must be sent as Content-Type: application/json\n",
            );
        }
        let too_large = || {
            server::text(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("a review may be at most {MAX_REQUEST_BYTES} bytes\n"),
            )
        };
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse::<usize>().ok());
        if declared.is_some_and(|length| length > MAX_REQUEST_BYTES) {
            return too_large();
        }
        let body = match Limited::new(request.into_body(), MAX_REQUEST_BYTES)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(error) if error.is::<http_body_util::LengthLimitError>() => return too_large(),
            Err(error) => {
                return server::text(
                    StatusCode::BAD_REQUEST,
                    format!("cannot read the request: {error}\n"),
                );
            }
        };
        let reply = match route {
            Some(route) => {
                let handled = std::panic::AssertUnwindSafe((route.handler)(body)).catch_unwind();
                match handled.await {
                    Ok(reply) => reply,
                    Err(_) => {
                        tracing::error!(webhook = %route.what, "the webhook panicked");
                        let (_, review) =
                            admission::malformed("the webhook panicked while handling it");
                        (StatusCode::INTERNAL_SERVER_ERROR, review)
                    }
                }
            }
            None => {
                let conversions = &self.conversions;
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    conversion::convert(conversions, &body)
                })) {
                    Ok(reply) => reply,
                    Err(_) => {
                        tracing::error!("a conversion panicked");
                        (
                            StatusCode::INTERNAL_SERVER_ERROR,
                            b"a conversion panicked\n".to_vec(),
                        )
                    }
                }
            }
        };
        let (status, body) = reply;
        let mut response = http::Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

/// A bound webhook server; see [`Webhooks::bind`].
pub struct WebhookServer {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    reload: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    webhooks: Arc<Webhooks>,
    /// Called once the server accepts connections (the manager's readiness check).
    ready: Option<Box<dyn FnOnce() + Send>>,
}

impl fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookServer")
            .field("addr", &self.listener.local_addr().ok())
            .field("webhooks", &self.webhooks)
            .finish_non_exhaustive()
    }
}

impl WebhookServer {
    /// The bound address (the port differs from the requested one when that was 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Calls `ready` once the server accepts connections.
    pub(crate) fn ready_with(mut self, ready: impl FnOnce() + Send + 'static) -> Self {
        self.ready = Some(Box::new(ready));
        self
    }

    /// Serves until `stop` is cancelled, then drains: in-flight reviews are answered,
    /// new connections refused, and the future completes when the last one closed.
    pub async fn serve(self, stop: CancellationToken) {
        let webhooks = self.webhooks;
        let served = server::serve_until(
            self.listener,
            Some(self.acceptor),
            move |request| {
                let webhooks = webhooks.clone();
                async move { webhooks.respond(request).await }
            },
            stop,
        );
        if let Some(ready) = self.ready {
            ready();
        }
        match self.reload {
            Some(reload) => {
                tokio::select! {
                    () = served => {}
                    () = reload => {}
                }
            }
            None => served.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    struct Allow;

    impl Validator<ConfigMap> for Allow {
        async fn validate_create(&self, _: &Request, _: &ConfigMap) -> Result<Warnings, Denied> {
            Ok(Warnings::new())
        }

        async fn validate_update(
            &self,
            _: &Request,
            _: &ConfigMap,
            _: &ConfigMap,
        ) -> Result<Warnings, Denied> {
            Ok(Warnings::new())
        }
    }

    #[test]
    fn paths_follow_kubebuilders_naming() {
        let webhooks = Webhooks::new().validator::<ConfigMap, _>(Allow);
        assert_eq!(webhooks.paths(), ["/validate-core-v1-configmap"]);
        assert!(!webhooks.is_empty());
        assert!(Webhooks::new().is_empty());
    }

    #[tokio::test]
    async fn two_webhooks_on_one_path_fail_to_bind_with_both_named() {
        let webhooks = Webhooks::new()
            .validator::<ConfigMap, _>(Allow)
            .validator::<ConfigMap, _>(Allow);
        let files = TlsFiles::in_dir(Path::new("/nonexistent"));
        let error = webhooks
            .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)), &files)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("validating ConfigMap and validating ConfigMap are both served at /validate-core-v1-configmap"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn missing_certificates_name_the_flag() {
        let files = TlsFiles::in_dir(Path::new("/nonexistent"));
        let error = Webhooks::new()
            .validator::<ConfigMap, _>(Allow)
            .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)), &files)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("/nonexistent/tls.crt") && error.contains("--webhook-cert-path"),
            "{error}"
        );
    }
}
