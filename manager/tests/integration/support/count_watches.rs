//! A client layer that counts the watch requests it passes on, by path: how many watches a
//! manager opens. Shared by `tests/shared_cache.rs` and `benches/shared_cache.rs`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response};
use kube::Client;
use kube::client::Body;

/// Counts the watch requests a client sends, by path, and sends them on through `inner`.
#[derive(Clone)]
pub struct CountWatches {
    pub inner: Client,
    pub watches: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl CountWatches {
    /// A client counting through this layer into `watches`.
    pub fn client(inner: Client, watches: &Arc<Mutex<BTreeMap<String, usize>>>) -> Client {
        let watches = watches.clone();
        Client::new(CountWatches { inner, watches }, "default")
    }
}

impl tower::Service<Request<Body>> for CountWatches {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let query = request.uri().query().unwrap_or_default();
        if query.split('&').any(|kv| kv == "watch=true") {
            let path = request.uri().path().to_owned();
            *self.watches.lock().unwrap().entry(path).or_default() += 1;
        }
        let inner = self.inner.clone();
        Box::pin(async move { inner.send(request).await })
    }
}
