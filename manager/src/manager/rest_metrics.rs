//! client-go's `rest_client_*` metrics for the manager's kube client: every request the
//! operator sends, by answer code and method, and its latency by verb, under the names
//! controller-runtime exports (kube-rs#1917 asks kube for them).

use std::task::{Context, Poll};
use std::time::Instant;

use futures::future::BoxFuture;
use http::{Request, Response};
use kube::Client;
use kube::client::Body;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    code: String,
    method: String,
    host: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct LatencyLabels {
    verb: String,
    host: String,
}

/// client-go's buckets for `rest_client_request_duration_seconds`.
pub(crate) fn latency_histogram() -> Histogram {
    Histogram::new([
        0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
    ])
}

/// The two families, shared by every client the manager instruments.
#[derive(Clone, Debug)]
pub(crate) struct RestMetrics {
    pub(crate) requests: Family<RequestLabels, Counter>,
    pub(crate) latency: Family<LatencyLabels, Histogram, fn() -> Histogram>,
}

impl RestMetrics {
    pub(crate) fn new() -> Self {
        RestMetrics {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
        }
    }

    /// `client`, with every request it sends counted and timed.
    pub(crate) fn instrument(&self, client: Client) -> Client {
        let namespace = client.default_namespace().to_owned();
        let service = Instrumented {
            inner: client,
            metrics: self.clone(),
            host: api_server_host(),
        };
        Client::new(service, namespace)
    }

    fn observe(&self, host: &str, method: &str, code: &str, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                code: code.into(),
                method: method.into(),
                host: host.into(),
            })
            .inc();
        self.latency
            .get_or_create(&LatencyLabels {
                verb: method.into(),
                host: host.into(),
            })
            .observe(seconds);
    }
}

/// The API server's `host:port`, as client-go labels it: the in-cluster service address,
/// else the server of the kubeconfig's current context, else `unknown`.
fn api_server_host() -> String {
    if let (Ok(host), Ok(port)) = (
        std::env::var("KUBERNETES_SERVICE_HOST"),
        std::env::var("KUBERNETES_SERVICE_PORT"),
    ) {
        return if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
    }
    kube::config::Kubeconfig::read()
        .ok()
        .and_then(|config| {
            let context = config.current_context.as_deref()?;
            let cluster = config
                .contexts
                .iter()
                .find(|c| c.name == context)?
                .context
                .as_ref()?
                .cluster
                .clone();
            let server = config
                .clusters
                .iter()
                .find(|c| c.name == cluster)?
                .cluster
                .as_ref()?
                .server
                .clone()?;
            let uri: http::Uri = server.parse().ok()?;
            Some(uri.authority()?.to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

#[derive(Clone)]
struct Instrumented {
    inner: Client,
    metrics: RestMetrics,
    host: String,
}

impl tower::Service<Request<Body>> for Instrumented {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let method = request.method().as_str().to_owned();
        let (inner, metrics, host) = (self.inner.clone(), self.metrics.clone(), self.host.clone());
        Box::pin(async move {
            let started = Instant::now();
            let response = inner.send(request).await;
            // client-go's code label: the HTTP status, or `<error>` without an answer.
            let code = match &response {
                Ok(response) => response.status().as_u16().to_string(),
                Err(kube::Error::Api(status)) => status.code.to_string(),
                Err(_) => "<error>".to_owned(),
            };
            metrics.observe(&host, &method, &code, started.elapsed().as_secs_f64());
            response
        })
    }
}
