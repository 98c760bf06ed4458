//! A small HTTP/1.1 server (plain or TLS) for the probe and metrics endpoints.
//!
//! hyper directly rather than a web framework: kube already compiles hyper, and three fixed
//! routes need no router. HTTP/2 is not offered, as in controller-runtime, which disables it
//! by default since the HTTP/2 rapid-reset and stream-cancellation CVEs.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

pub(crate) type Request = http::Request<Incoming>;
pub(crate) type Response = http::Response<Full<Bytes>>;

/// Slow or idle clients cannot hold connections open for long.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A plain-text response.
pub(crate) fn text(status: StatusCode, body: impl Into<Bytes>) -> Response {
    let mut response = http::Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Binds `addr`, failing with the address in the message (a port clash is a common cause).
pub(crate) async fn bind(addr: SocketAddr, what: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|error| anyhow::anyhow!("cannot listen on {addr} for {what}: {error}"))
}

/// Serves connections from `listener` until the task is aborted; each request goes to `handle`.
pub(crate) async fn serve<H, F>(listener: TcpListener, tls: Option<TlsAcceptor>, handle: H)
where
    H: Fn(Request) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let handle = Arc::new(handle);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Usually out of file descriptors: back off instead of spinning.
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let handle = handle.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let handle = handle.clone();
                async move { Ok::<_, Infallible>(handle(request).await) }
            });
            let mut http = http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            let served = match tls {
                None => http.serve_connection(TokioIo::new(stream), service).await,
                Some(tls) => {
                    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            http.serve_connection(TokioIo::new(stream), service).await
                        }
                        Ok(Err(error)) => {
                            tracing::debug!(%peer, %error, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!(%peer, "TLS handshake timed out");
                            return;
                        }
                    }
                }
            };
            if let Err(error) = served {
                tracing::debug!(%peer, %error, "HTTP connection failed");
            }
        });
    }
}
