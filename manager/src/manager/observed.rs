//! A kube client that shows each request and its outcome to an observer: how the manager
//! follows its controllers' reads (readiness) and counts every request (metrics).

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use http::{Method, Request, Response, Uri};
use kube::Client;
use kube::client::Body;

/// A request as sent and how it went: its method and URI, how long until the answer's
/// headers (or the failure), and the answer.
pub(crate) struct Sent<'a> {
    pub method: &'a Method,
    pub uri: &'a Uri,
    pub took: Duration,
    pub response: &'a Result<Response<Body>, kube::Error>,
}

/// `client`, with every request it sends shown to `observe` once answered.
pub(crate) fn observed(
    client: Client,
    observe: impl Fn(Sent<'_>) + Send + Sync + 'static,
) -> Client {
    let namespace = client.default_namespace().to_owned();
    let service = Observed {
        inner: client,
        observe: Arc::new(observe),
    };
    Client::new(service, namespace)
}

#[derive(Clone)]
struct Observed {
    inner: Client,
    observe: Arc<dyn Fn(Sent<'_>) + Send + Sync>,
}

impl tower::Service<Request<Body>> for Observed {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (method, uri) = (request.method().clone(), request.uri().clone());
        let (inner, observe) = (self.inner.clone(), self.observe.clone());
        Box::pin(async move {
            let started = Instant::now();
            let response = inner.send(request).await;
            observe(Sent {
                method: &method,
                uri: &uri,
                took: started.elapsed(),
                response: &response,
            });
            response
        })
    }
}
