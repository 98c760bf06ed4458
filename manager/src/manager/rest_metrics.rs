//! client-go's `rest_client_*` metrics for the manager's kube client: every request the
//! operator sends, by answer code and method, and its latency by verb, under the names
//! controller-runtime exports (kube-rs#1917 asks kube for them).

use std::sync::Arc;

use kube::Client;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
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

/// The buckets of `rest_client_request_duration_seconds`: client-go's unless
/// `--rest-client-latency-buckets` gives others (controller-runtime 0.25's override).
#[derive(Clone, Debug)]
pub(crate) struct LatencyBuckets(Arc<[f64]>);

impl MetricConstructor<Histogram> for LatencyBuckets {
    fn new_metric(&self) -> Histogram {
        Histogram::new(self.0.iter().copied())
    }
}

/// The two families, shared by every client the manager instruments.
#[derive(Clone, Debug)]
pub(crate) struct RestMetrics {
    pub(crate) requests: Family<RequestLabels, Counter>,
    pub(crate) latency: Family<LatencyLabels, Histogram, LatencyBuckets>,
}

impl RestMetrics {
    pub(crate) fn new(buckets: &[f64]) -> Self {
        RestMetrics {
            requests: Family::default(),
            latency: Family::new_with_constructor(LatencyBuckets(buckets.into())),
        }
    }

    /// `client`, with every request it sends counted and timed.
    pub(crate) fn instrument(&self, client: Client) -> Client {
        let (metrics, host) = (self.clone(), api_server_host());
        super::observed::observed(client, move |sent| {
            // client-go's code label: the HTTP status, or `<error>` without an answer.
            let code = match sent.response {
                Ok(response) => response.status().as_u16().to_string(),
                Err(kube::Error::Api(status)) => status.code.to_string(),
                Err(_) => "<error>".to_owned(),
            };
            metrics.observe(&host, sent.method.as_str(), &code, sent.took.as_secs_f64());
        })
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
