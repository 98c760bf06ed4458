//! Authentication and authorization of metrics scrapes, as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization` does: the bearer token must pass a
//! TokenReview, and its user a SubjectAccessReview for the request's verb on the
//! non-resource URL (the `metrics-reader` ClusterRole grants `get` on `/metrics`).
//!
//! Decisions are cached per token for a short while, so a scrape every few seconds does
//! not cost two API calls each time.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use http::{HeaderMap, StatusCode, header};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};

/// How long an allowed token is trusted without asking again: a revoked token or
/// removed RoleBinding takes effect within this time (controller-runtime: one minute).
const ALLOW_TTL: Duration = Duration::from_secs(60);
/// How long a rejected token stays rejected (controller-runtime: 30 seconds).
const DENY_TTL: Duration = Duration::from_secs(30);
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);
/// Bounds the cache against a flood of distinct tokens.
const MAX_CACHED: usize = 1024;

/// Why a request was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Denied {
    #[error("Unauthorized")]
    Unauthenticated,
    #[error("Forbidden (user={user}, verb={verb}, path={path})")]
    Forbidden {
        user: String,
        verb: String,
        path: String,
    },
    #[error("cannot review the request: {0}")]
    Failed(String),
}

impl Denied {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// A decision and when it expires.
type Cached = (Result<(), Denied>, Instant);

/// Reviews requests against the Kubernetes API.
pub(crate) struct Authorizer {
    client: Client,
    /// SHA-256 of (token, verb, path) -> decision and when it expires. Tokens are not kept.
    cache: Mutex<HashMap<[u8; 32], Cached>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer").finish_non_exhaustive()
    }
}

impl Authorizer {
    pub(crate) fn new(client: Client) -> Self {
        Self {
            client,
            cache: Mutex::default(),
        }
    }

    /// Allows the request, or says why not.
    pub(crate) async fn check(
        &self,
        headers: &HeaderMap,
        verb: &str,
        path: &str,
    ) -> Result<(), Denied> {
        let token = bearer_token(headers).ok_or(Denied::Unauthenticated)?;
        let key = cache_key(token, verb, path);
        if let Some(decision) = self.cached(&key) {
            return decision;
        }
        let decision = self.review(token, verb, path).await;
        let ttl = match &decision {
            Ok(()) => ALLOW_TTL,
            Err(Denied::Failed(_)) => return decision, // the API may be back next time
            Err(_) => DENY_TTL,
        };
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        cache.retain(|_, (_, expires)| *expires > now);
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert(key, (decision.clone(), now + ttl));
        decision
    }

    fn cached(&self, key: &[u8; 32]) -> Option<Result<(), Denied>> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(key)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(decision, _)| decision.clone())
    }

    async fn review(&self, token: &str, verb: &str, path: &str) -> Result<(), Denied> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: Some(token.to_owned()),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviewed = within_timeout(
            Api::<TokenReview>::all(self.client.clone()).create(&PostParams::default(), &review),
        )
        .await?;
        let status = reviewed.status.unwrap_or_default();
        let user = match status.user {
            Some(user) if status.authenticated == Some(true) => user,
            _ => return Err(Denied::Unauthenticated),
        };
        let username = user.username.unwrap_or_default();
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(username.clone()),
                groups: user.groups,
                uid: user.uid,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviewed = within_timeout(
            Api::<SubjectAccessReview>::all(self.client.clone())
                .create(&PostParams::default(), &access),
        )
        .await?;
        if reviewed.status.is_some_and(|s| s.allowed) {
            Ok(())
        } else {
            Err(Denied::Forbidden {
                user: username,
                verb: verb.to_owned(),
                path: path.to_owned(),
            })
        }
    }
}

async fn within_timeout<T>(
    call: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, Denied> {
    match tokio::time::timeout(REVIEW_TIMEOUT, call).await {
        Ok(Ok(reviewed)) => Ok(reviewed),
        Ok(Err(error)) => Err(Denied::Failed(error.to_string())),
        Err(_) => Err(Denied::Failed(format!(
            "no answer from the Kubernetes API within {REVIEW_TIMEOUT:?}"
        ))),
    }
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn cache_key(token: &str, verb: &str, path: &str) -> [u8; 32] {
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    for part in [token, verb, path] {
        digest.update(part.as_bytes());
        digest.update(&[0]);
    }
    digest
        .finish()
        .as_ref()
        .try_into()
        .expect("SHA-256 is 32 bytes")
}

#[cfg(test)]
mod tests {
    use http::{Method, Request, Response};
    use http_body_util::BodyExt;
    use kube::client::Body;
    use serde_json::{Value, json};
    use tower_test::mock::{self, Handle};

    use super::*;

    type ApiServer = Handle<Request<Body>, Response<Body>>;

    fn authorizer() -> (Authorizer, ApiServer) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        (Authorizer::new(Client::new(service, "default")), handle)
    }

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, authorization.parse().unwrap());
        headers
    }

    /// Answers the next API request with `status`, after checking its target; returns its body.
    async fn answer(api: &mut ApiServer, path: &str, status: Value) -> Value {
        let (request, reply) = api.next_request().await.expect("an API request");
        assert_eq!(request.method(), Method::POST);
        assert_eq!(request.uri().path(), path);
        let body = request.into_body().collect().await.unwrap().to_bytes();
        let mut object: Value = serde_json::from_slice(&body).unwrap();
        let sent = object.clone();
        object["status"] = status;
        reply.send_response(
            Response::builder()
                .status(201)
                .body(Body::from(serde_json::to_vec(&object).unwrap()))
                .unwrap(),
        );
        sent
    }

    const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
    const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

    fn prometheus() -> Value {
        json!({
            "authenticated": true,
            "user": {
                "username": "system:serviceaccount:monitoring:prometheus",
                "uid": "42",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:monitoring"],
                "extra": {"authentication.kubernetes.io/pod-name": ["prometheus-0"]}
            }
        })
    }

    #[tokio::test]
    async fn requests_without_a_bearer_token_are_refused_without_asking_the_api() {
        let (authorizer, _api) = authorizer();
        for headers in [
            HeaderMap::new(),
            headers("Basic dXNlcjpwdw=="),
            headers("Bearer "),
        ] {
            assert_eq!(
                authorizer.check(&headers, "get", "/metrics").await,
                Err(Denied::Unauthenticated)
            );
        }
    }

    #[tokio::test]
    async fn an_allowed_scraper_passes_token_and_access_reviews_and_is_then_cached() {
        let (authorizer, mut api) = authorizer();
        let authorizer = std::sync::Arc::new(authorizer);
        let check = tokio::spawn({
            let authorizer = authorizer.clone();
            async move {
                authorizer
                    .check(&headers("Bearer scrape-token"), "get", "/metrics")
                    .await
            }
        });
        let review = answer(&mut api, TOKEN_REVIEWS, prometheus()).await;
        assert_eq!(review["spec"]["token"], "scrape-token");
        let access = answer(&mut api, ACCESS_REVIEWS, json!({"allowed": true})).await;
        assert_eq!(
            access["spec"],
            json!({
                "user": "system:serviceaccount:monitoring:prometheus",
                "uid": "42",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:monitoring"],
                "extra": {"authentication.kubernetes.io/pod-name": ["prometheus-0"]},
                "nonResourceAttributes": {"path": "/metrics", "verb": "get"}
            })
        );
        assert_eq!(check.await.unwrap(), Ok(()));

        // The second scrape is answered from the cache: the mock API would hang if asked.
        let scrape = headers("Bearer scrape-token");
        let again = authorizer.check(&scrape, "get", "/metrics");
        let again = tokio::time::timeout(Duration::from_secs(1), again).await;
        assert_eq!(again.expect("served from the cache"), Ok(()));
    }

    #[tokio::test]
    async fn an_unknown_token_is_unauthorized() {
        let (authorizer, mut api) = authorizer();
        let check = tokio::spawn(async move {
            authorizer
                .check(&headers("Bearer forged"), "get", "/metrics")
                .await
        });
        answer(
            &mut api,
            TOKEN_REVIEWS,
            json!({"authenticated": false, "error": "invalid bearer token"}),
        )
        .await;
        let denied = check.await.unwrap().unwrap_err();
        assert_eq!(denied, Denied::Unauthenticated);
        assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
    }

    #[tokio::test]
    async fn a_user_without_the_metrics_reader_role_is_forbidden() {
        let (authorizer, mut api) = authorizer();
        let check = tokio::spawn(async move {
            authorizer
                .check(&headers("Bearer someone"), "get", "/metrics")
                .await
        });
        answer(&mut api, TOKEN_REVIEWS, prometheus()).await;
        answer(
            &mut api,
            ACCESS_REVIEWS,
            json!({"allowed": false, "reason": "no RBAC policy matched"}),
        )
        .await;
        let denied = check.await.unwrap().unwrap_err();
        assert_eq!(denied.status(), StatusCode::FORBIDDEN);
        assert!(
            denied
                .to_string()
                .contains("system:serviceaccount:monitoring:prometheus")
        );
    }

    #[tokio::test]
    async fn api_failures_are_server_errors_and_not_cached() {
        let (authorizer, mut api) = authorizer();
        let authorizer = std::sync::Arc::new(authorizer);
        let scrape = |authorizer: std::sync::Arc<Authorizer>| async move {
            authorizer
                .check(&headers("Bearer t"), "get", "/metrics")
                .await
        };
        let check = tokio::spawn(scrape(authorizer.clone()));
        let (_, reply) = api.next_request().await.unwrap();
        reply.send_error(std::io::Error::other("connection refused"));
        assert_eq!(
            check.await.unwrap().unwrap_err().status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );

        let check = tokio::spawn(scrape(authorizer.clone()));
        answer(&mut api, TOKEN_REVIEWS, prometheus()).await;
        answer(&mut api, ACCESS_REVIEWS, json!({"allowed": true})).await;
        assert_eq!(check.await.unwrap(), Ok(()), "asked the API again");
    }
}
