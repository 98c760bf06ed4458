//! [`wrap`]: a [`kube::Client`] (envtest's, a `tower-test` mock, a real cluster) whose
//! requests go through an [`RbacAudit`] and a plan of [`Faults`] on their way to the
//! API server.

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response};
use kube::client::Body;

use crate::{Access, FaultKind, Faults, RbacAudit};

/// `client` with every request recorded by `audit` and subject to `faults`.
pub fn wrap(client: kube::Client, audit: &RbacAudit, faults: &Faults) -> kube::Client {
    let service = Wrapped {
        inner: client.clone(),
        audit: audit.clone(),
        faults: faults.clone(),
    };
    kube::Client::new(service, client.default_namespace().to_owned())
}

#[derive(Clone)]
struct Wrapped {
    inner: kube::Client,
    audit: RbacAudit,
    faults: Faults,
}

impl tower::Service<Request<Body>> for Wrapped {
    type Response = Response<Body>;
    type Error = tower::BoxError;
    type Future = BoxFuture<'static, Result<Response<Body>, tower::BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let access = Access::from_request(request.method(), request.uri());
        let fault = access.as_ref().and_then(|a| self.faults.take(a));
        // A server-side apply of an object that does not exist creates it, and the API
        // server then also authorizes `create`: ask the backend (unrecorded) whether it exists.
        let applies = request
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"application/apply-patch"));
        let existence_probe = (applies && fault.is_none())
            .then(|| access.clone())
            .flatten()
            .map(|access| (access, request.uri().path().to_owned()));
        if let Some(access) = access {
            // A failed request was still authorized first: it needs its rule all the same.
            self.audit.record(access);
        }
        let inner = self.inner.clone();
        let audit = self.audit.clone();
        Box::pin(async move {
            if let Some((access, path)) = existence_probe {
                let probe = Request::get(path).body(Body::empty()).expect("a valid GET");
                let missing = inner
                    .send(probe)
                    .await
                    .is_ok_and(|r| r.status() == http::StatusCode::NOT_FOUND);
                if missing {
                    // An authorization, not a request of its own.
                    audit.authorized(Access {
                        verb: "create".into(),
                        ..access
                    });
                }
            }
            match fault {
                Some(FaultKind::Conflict) => Ok(status_response(
                    409,
                    "Conflict",
                    "the object has been modified; please apply your changes to the latest version and try again",
                )),
                Some(FaultKind::ServerError) => Ok(status_response(
                    500,
                    "InternalError",
                    "an error on the server (\"injected\") has prevented the request from succeeding",
                )),
                Some(FaultKind::Timeout(after)) => {
                    tokio::time::sleep(after).await;
                    Err(timed_out())
                }
                Some(FaultKind::ResponseLost(after)) => {
                    // Read the whole answer, so the API server has finished with the
                    // request, then drop it.
                    if let Ok(response) = inner.send(request).await {
                        let _ = http_body_util::BodyExt::collect(response.into_body()).await;
                    }
                    tokio::time::sleep(after).await;
                    Err(timed_out())
                }
                None => inner
                    .send(request)
                    .await
                    .map_err(|e| Box::new(e) as tower::BoxError),
            }
        })
    }
}

fn timed_out() -> tower::BoxError {
    Box::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "request timed out (injected)",
    ))
}

fn status_response(code: u16, reason: &str, message: &str) -> Response<Body> {
    let status = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    });
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Body::from(
            serde_json::to_vec(&status).expect("a Status serializes"),
        ))
        .expect("a valid response")
}
