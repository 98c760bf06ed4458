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
//! The server answers POSTs of JSON bodies up to [`MAX_REQUEST_BYTES`]; anything else gets
//! an HTTP error (405, 404, 415, 413, or 429 while the reviews in flight take the memory it
//! may spend), a body that is not a review (or not an `admission.k8s.io/v1` one) gets 400
//! with a review saying why, and a review the webhook cannot handle (another kind, an
//! unreadable object, a panicking webhook) is refused with a message, never a crash.

mod admission;
mod conversion;
pub mod field;

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt as _;
use http::{HeaderValue, Method, header};
use http_body_util::Full;
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

pub use admission::{Defaulter, Denied, Request, Validator, Warnings};
pub use conversion::{Conversion, ConversionError, Convertible, Hub, preserve, restore};
/// The HTTP status codes [`Denied::with_code`] takes.
pub use http::StatusCode;
pub use kube::core::admission::Operation;
pub use rkb_core::webhook::{
    CONVERSION_PATH, FailurePolicy, Kind, MatchCondition, MatchPolicy, Operation as RuleOperation,
    ReinvocationPolicy, ReviewVersion, Settings, SideEffects,
};

pub use crate::serve::{DEFAULT_CERT_DIR, HttpVersions, TlsFiles};
use crate::serve::{ListenAddr, server, tls};

/// The largest request body accepted (2 MiB): what the memory the server may spend on
/// reviews affords, less than controller-runtime's 7 MiB (it bounds neither the reviews in
/// flight nor their memory). An AdmissionReview carries the object and the old object, each
/// up to etcd's 1.5 MiB.
pub const MAX_REQUEST_BYTES: usize = REVIEW_MEMORY / MEMORY_PER_BYTE;

type Handler =
    Arc<dyn Fn(Bytes) -> Pin<Box<dyn Future<Output = admission::Reply> + Send>> + Send + Sync>;

/// One registered admission webhook.
#[derive(Clone)]
struct Route {
    /// For logs: e.g. "defaulting Memcached".
    what: String,
    /// The impl's settings, as compiled: what `make manifests` must have read too.
    kind: Kind,
    settings: Settings,
    handler: Handler,
}

/// The webhooks an operator serves; hand them to [`Manager::webhooks`](crate::Manager::webhooks).
#[derive(Clone, Default)]
pub struct Webhooks {
    routes: BTreeMap<String, Route>,
    conversions: BTreeMap<(String, String), conversion::Erased>,
    /// Registration mistakes (two webhooks on one path), reported by [`Webhooks::bind`].
    conflicts: Vec<String>,
    versions: HttpVersions,
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
        let route = Route {
            what: format!("defaulting {}", K::kind(&())),
            kind: Kind::Mutating,
            settings: D::settings(),
            handler,
        };
        self.route(path, route)
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
        let route = Route {
            what: format!("validating {}", K::kind(&())),
            kind: Kind::Validating,
            settings: V::settings(),
            handler,
        };
        self.route(path, route)
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

    fn route(mut self, path: String, route: Route) -> Self {
        if let Some(first) = self.routes.get(&path) {
            self.conflicts.push(format!(
                "{} and {} are both served at {path}: give one another path",
                route.what, first.what
            ));
        } else {
            self.routes.insert(path, route);
        }
        self
    }

    /// The admission webhook served at `path`: its kind and its impl's settings (the
    /// `#[rkb_runtime::webhook(...)]` attribute as compiled), for a test that holds them
    /// against what `make manifests` read from the sources.
    pub fn admission_at(&self, path: &str) -> Option<(Kind, &Settings)> {
        self.routes
            .get(path)
            .map(|route| (route.kind, &route.settings))
    }

    /// The HTTP versions the server offers (HTTP/1.1 only unless told otherwise).
    #[must_use]
    pub fn http_versions(mut self, versions: HttpVersions) -> Self {
        self.versions = versions;
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
        self.check_conflicts()?;
        let (acceptor, reload) = tls::acceptor(Some(tls.clone()), &[], "webhook", self.versions)
            .map_err(|error| {
                anyhow::anyhow!(
                    "{error:#}; the webhook server needs a certificate and key (cert-manager \
                 mounts them at {DEFAULT_CERT_DIR}; set --webhook-cert-path otherwise)"
                )
            })?;
        let reload =
            reload.map(|reload| Box::pin(reload) as Pin<Box<dyn Future<Output = ()> + Send>>);
        self.bind_acceptor(addr, acceptor, reload).await
    }

    /// Binds `addr` serving whatever certificate `served` holds at each handshake (the
    /// manager's own, from its Secret).
    pub(crate) async fn bind_swappable(
        self,
        addr: impl Into<ListenAddr>,
        served: Arc<tls::Swappable>,
    ) -> anyhow::Result<WebhookServer> {
        self.check_conflicts()?;
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let acceptor = tls::acceptor_with(served, provider, self.versions)?;
        self.bind_acceptor(addr, acceptor, None).await
    }

    fn check_conflicts(&self) -> anyhow::Result<()> {
        if !self.conflicts.is_empty() {
            anyhow::bail!("webhooks conflict: {}", self.conflicts.join("; "));
        }
        Ok(())
    }

    async fn bind_acceptor(
        self,
        addr: impl Into<ListenAddr>,
        acceptor: TlsAcceptor,
        reload: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    ) -> anyhow::Result<WebhookServer> {
        let listener = server::bind(addr, "webhooks").await?;
        Ok(WebhookServer {
            listener,
            acceptor,
            reload,
            webhooks: Arc::new(self),
            ready: None,
        })
    }
}

/// Memory the reviews in flight may take together, inside the scaffold's 128 MiB limit
/// with the manager's own ~25 MiB and what the allocator keeps after a burst.
const REVIEW_MEMORY: usize = 64 << 20;
/// Peak memory of a review per byte of body: 30 measured by the attack suite
/// (examples/memcached-operator/tests/manager/attack.rs) for a 2 MB review of 150,000
/// labels sent to a defaulter (the body, the object read into its type, the object and its
/// defaulted form as JSON values for the patch), rounded up.
const MEMORY_PER_BYTE: usize = 32;
/// Reviews up to this size (most are a few KiB) take a lane of their own, so that they
/// never queue behind large ones.
const SMALL_REVIEW: usize = 64 << 10;
/// Small reviews handled at once; together they take at most 16 MiB. Their bodies are read
/// before they wait for one of these, so those waiting take at most 16 MiB more (a body
/// per connection slot: 256 × 64 KiB).
const SMALL_IN_FLIGHT: usize = 8;
/// How long a review waits for its share before it is refused with 429: well within the
/// API server's webhook timeout (10 s by default), so the refusal is what it reports.
const SHARE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What bounds the reviews of one server: permits for small reviews, and KiB of
/// [`REVIEW_MEMORY`] for the others, which run on a thread of their own (`large`): the
/// allocator keeps what a thread freed for that thread's next use, so large reviews spread
/// over many threads would each leave their peak behind.
#[derive(Debug)]
struct Lanes {
    small: Arc<Semaphore>,
    memory: Arc<Semaphore>,
    large: tokio::runtime::Handle,
}

impl Lanes {
    fn new(large: tokio::runtime::Handle) -> Self {
        Self {
            small: Arc::new(Semaphore::new(SMALL_IN_FLIGHT)),
            memory: Arc::new(Semaphore::new(REVIEW_MEMORY >> 10)),
            large,
        }
    }

    /// Waits for a review of `declared` bytes (unknown: the most affordable) to fit; the
    /// permit, and whether it is a small review.
    async fn reserve(
        &self,
        declared: Option<u64>,
    ) -> Option<(tokio::sync::OwnedSemaphorePermit, bool)> {
        let bytes = declared
            .and_then(|length| usize::try_from(length).ok())
            .unwrap_or(MAX_REQUEST_BYTES);
        let small = bytes <= SMALL_REVIEW;
        let permit = if small {
            self.small.clone().acquire_owned().boxed()
        } else {
            let kib = (bytes.saturating_mul(MEMORY_PER_BYTE) >> 10).min(REVIEW_MEMORY >> 10);
            let kib = u32::try_from(kib).expect("REVIEW_MEMORY fits");
            self.memory.clone().acquire_many_owned(kib).boxed()
        };
        let permit = tokio::time::timeout(SHARE_WAIT, permit).await.ok()?;
        Some((permit.expect("the semaphores are never closed"), small))
    }
}

/// Answers one HTTP request. The review's memory is reserved before its body is read, and
/// the work (parsing, the webhook, the patch) runs on a blocking thread, so that large
/// reviews neither exhaust memory nor hold up the async workers (probes, reconciles).
async fn respond(
    webhooks: Arc<Webhooks>,
    lanes: Arc<Lanes>,
    request: server::Request,
) -> server::Response {
    let path = request.uri().path().to_owned();
    let (route, declared) = match accepted(&webhooks, &path, &request) {
        Ok(accepted) => accepted,
        Err((status, why)) => return server::text(status, why),
    };
    let (permit, small, body) = match reserve_and_read(&lanes, &path, declared, request).await {
        Ok(read) => read,
        Err(refusal) => return refusal,
    };
    let what = route.as_ref().map(|route| route.what.clone());
    let work = async move {
        let _permit = permit;
        match route {
            Some(route) => (route.handler)(body).await,
            None => conversion::convert(&webhooks.conversions, &body),
        }
    };
    let worked = if small {
        let runtime = tokio::runtime::Handle::current();
        // The webhook's own async code runs on this blocking thread too.
        tokio::task::spawn_blocking(move || runtime.block_on(work)).await
    } else {
        lanes.large.spawn(work).await
    };
    let (status, body) = worked.unwrap_or_else(|_| panicked(what));
    let mut response = http::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// What a request must be before any memory is spent on it: a POST of JSON to a webhook's
/// path (or to the conversion path), announcing no more than a review may have. Returns
/// the webhook's route (`None`: a conversion) and the announced length, or the status and
/// text of the refusal.
fn accepted(
    webhooks: &Webhooks,
    path: &str,
    request: &server::Request,
) -> Result<(Option<Route>, Option<u64>), (StatusCode, String)> {
    if request.method() != Method::POST {
        return Err((StatusCode::METHOD_NOT_ALLOWED, "only POST\n".into()));
    }
    let conversion = path == CONVERSION_PATH && !webhooks.conversions.is_empty();
    let route = webhooks.routes.get(path).cloned();
    if route.is_none() && !conversion {
        return Err((
            StatusCode::NOT_FOUND,
            format!(
                "no webhook at {path}: this server has {}\n",
                webhooks.paths().join(", ")
            ),
        ));
    }
    let json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !json {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "a review must be sent as Content-Type: application/json\n".into(),
        ));
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_REQUEST_BYTES as u64) {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "a review may be at most {MAX_REQUEST_BYTES} bytes: a larger one would take more than \
                 the {} MiB this webhook server may spend on reviews\n",
                REVIEW_MEMORY >> 20
            ),
        ));
    }
    Ok((route, declared))
}

/// A permit for the review's memory and its body. A small review's body is read before it
/// takes one of the permits, so that a client announcing a body and holding it back holds
/// only its connection's slot (which it loses once idle), never a permit valid reviews
/// would wait for; what the slots hold then stays bounded (256 × 64 KiB). A larger
/// review's memory, its body included, is reserved before the body is read.
async fn reserve_and_read(
    lanes: &Lanes,
    path: &str,
    declared: Option<u64>,
    request: server::Request,
) -> Result<(tokio::sync::OwnedSemaphorePermit, bool, Bytes), server::Response> {
    if declared.is_some_and(|length| length <= SMALL_REVIEW as u64) {
        let (_, body) = server::read_body(request, SMALL_REVIEW).await?;
        let (permit, small) = lanes
            .reserve(declared)
            .await
            .ok_or_else(|| busy(path, declared))?;
        Ok((permit, small, body))
    } else {
        let (permit, small) = lanes
            .reserve(declared)
            .await
            .ok_or_else(|| busy(path, declared))?;
        let (_, body) = server::read_body(request, MAX_REQUEST_BYTES).await?;
        Ok((permit, small, body))
    }
}

/// 500: the webhook (`what`; `None`, a conversion) panicked while handling a review.
fn panicked(what: Option<String>) -> (StatusCode, Vec<u8>) {
    match what {
        Some(what) => {
            tracing::error!(webhook = %what, "the webhook panicked");
            let (_, review) = admission::malformed("the webhook panicked while handling it");
            (StatusCode::INTERNAL_SERVER_ERROR, review)
        }
        None => {
            tracing::error!("a conversion panicked");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                b"a conversion panicked\n".to_vec(),
            )
        }
    }
}

/// 429: the reviews in flight already take what this server may spend.
fn busy(path: &str, declared: Option<u64>) -> server::Response {
    tracing::info!(%path, bytes = declared, "refused a review: too many reviews in flight");
    let mut busy = server::text(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "the webhook server is busy: the reviews in flight already take what it may \
         spend ({SMALL_IN_FLIGHT} small reviews at once, {} MiB for larger ones); retry\n",
            REVIEW_MEMORY >> 20
        ),
    );
    busy.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    busy
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
        let large = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("webhook-large-reviews")
            .enable_all()
            .build()
        {
            Ok(large) => large,
            Err(error) => {
                tracing::error!(%error, "cannot start the webhook server's review thread");
                return;
            }
        };
        let lanes = Arc::new(Lanes::new(large.handle().clone()));
        let served = server::serve_until(
            self.listener,
            Some(self.acceptor),
            move |request| respond(webhooks.clone(), lanes.clone(), request),
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
        // Not dropped here: dropping a runtime blocks, which an async context may not.
        large.shutdown_background();
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

    fn review(api_version: &str, kind: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "apiVersion": api_version,
            "kind": kind,
            "request": {
                "uid": "u1",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "operation": "CREATE",
                "userInfo": {"username": "test"},
                "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
            }
        }))
        .unwrap()
    }

    /// Only admission.k8s.io/v1 AdmissionReviews are answered: anything else is refused
    /// with 400, never allowed with its apiVersion and kind echoed back.
    #[tokio::test]
    async fn a_review_of_another_version_or_kind_is_a_bad_request() {
        let (status, reply) = admission::validate::<ConfigMap, _>(
            &Allow,
            &review("admission.k8s.io/v1", "AdmissionReview"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(reply["response"]["allowed"], true, "{reply}");
        for (api_version, kind) in [
            ("admission.k8s.io/v2", "AdmissionReview"),
            ("admission.k8s.io/v1beta1", "AdmissionReview"),
            ("admission.k8s.io/v1", "ConversionReview"),
            ("", ""),
        ] {
            let (status, reply) =
                admission::validate::<ConfigMap, _>(&Allow, &review(api_version, kind)).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{api_version} {kind}");
            let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap();
            assert_eq!(reply["apiVersion"], "admission.k8s.io/v1", "{reply}");
            assert_eq!(reply["response"]["allowed"], false, "{reply}");
        }
    }

    /// Large reviews share the memory budget and wait for it (then are refused); small
    /// ones never queue behind them.
    #[tokio::test(start_paused = true)]
    async fn large_reviews_wait_for_their_share_and_small_ones_pass_them() {
        let lanes = Lanes::new(tokio::runtime::Handle::current());
        let largest = Some(MAX_REQUEST_BYTES as u64);
        let (first, small) = lanes.reserve(largest).await.expect("the budget is free");
        assert!(!small);
        assert_eq!(
            lanes.memory.available_permits(),
            0,
            "a 2 MiB review takes it all"
        );
        let (_, small) = lanes
            .reserve(Some(4096))
            .await
            .expect("a small review does not wait for the large one");
        assert!(small);
        let waited = tokio::time::Instant::now();
        assert!(
            lanes.reserve(Some(1 << 20)).await.is_none(),
            "no share left"
        );
        assert_eq!(waited.elapsed(), SHARE_WAIT);
        drop(first);
        let (_held, small) = lanes.reserve(Some(1 << 20)).await.expect("freed");
        assert!(!small);
        assert_eq!(
            lanes.memory.available_permits(),
            (REVIEW_MEMORY - (1 << 20) * MEMORY_PER_BYTE) >> 10,
            "a 1 MiB review takes 32 MiB"
        );
    }

    /// Clients announcing a small review and holding its body back hold no permit: a
    /// valid review sent meanwhile is answered at once, not refused after [`SHARE_WAIT`].
    #[tokio::test]
    async fn reviews_held_back_do_not_keep_valid_ones_waiting() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

        let webhooks = Arc::new(Webhooks::new().validator::<ConfigMap, _>(Allow));
        let lanes = Arc::new(Lanes::new(tokio::runtime::Handle::current()));
        let listener = server::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)), "test")
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let serving = tokio::spawn(server::serve(listener, None, move |request| {
            respond(webhooks.clone(), lanes.clone(), request)
        }));
        let post = |length: usize| {
            format!(
                "POST /validate-core-v1-configmap HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
                 Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
            )
        };
        let mut held_back = Vec::new();
        for _ in 0..SMALL_IN_FLIGHT * 2 {
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            stream.write_all(post(1000).as_bytes()).await.unwrap();
            held_back.push(stream);
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let review = review("admission.k8s.io/v1", "AdmissionReview");
        let mut valid = tokio::net::TcpStream::connect(addr).await.unwrap();
        valid
            .write_all(post(review.len()).as_bytes())
            .await
            .unwrap();
        valid.write_all(&review).await.unwrap();
        let mut answer = Vec::new();
        let within = std::time::Duration::from_secs(2);
        tokio::time::timeout(within, valid.read_to_end(&mut answer))
            .await
            .expect("answered within 2 s")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.contains(r#""allowed":true"#),
            "{answer}"
        );
        serving.abort();
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
