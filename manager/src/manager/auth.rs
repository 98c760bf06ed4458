//! Authentication and authorization of metrics scrapes, as controller-runtime's
//! `filters.WithAuthenticationAndAuthorization` does: the bearer token must pass a
//! TokenReview, and its user a SubjectAccessReview for the request's verb on the
//! non-resource URL (the `metrics-reader` ClusterRole grants `get` on `/metrics`).
//!
//! Anyone who reaches the port can make the operator ask the API server, as the operator,
//! so the reviews are bounded: decisions are cached per token for a short while (a scrape
//! every few seconds does not cost two API calls each time), concurrent requests with one
//! token share one review, and only a few reviews run at once; past that the request is
//! refused with 429 rather than queued, so a flood of made-up tokens cannot delay the
//! operator's own requests (its Lease renewals) behind thousands of reviews. Scrapers
//! already allowed once are cached apart from the refusals and renew through lanes of
//! their own, so such a flood neither evicts nor starves them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use http::{HeaderMap, StatusCode, header};
use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::{Api, Client};
use lru::LruCache;
use prometheus_client::metrics::counter::Counter;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::metrics::Metrics;
use crate::sync::lock;

/// How long an allowed token is trusted without asking again: a revoked token or
/// removed RoleBinding takes effect within this time (controller-runtime: one minute).
const ALLOW_TTL: Duration = Duration::from_secs(60);
/// How long a rejected token stays rejected (controller-runtime: 30 seconds).
const DENY_TTL: Duration = Duration::from_secs(30);
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);
/// Reviews of tokens not allowed before that may run at once; more are refused with 429.
/// Scrapers are few, and each review is two requests the API server answers in
/// milliseconds.
const REVIEWS_IN_FLIGHT: usize = 4;
/// Reviews renewing an allowed token's expired decision that may run at once: a lane of
/// their own, so that a flood of unknown tokens does not starve Prometheus.
const RENEWALS_IN_FLIGHT: usize = 2;
/// Allowed tokens remembered (expired ones too: they renew through their own lane).
const MAX_ALLOWED: usize = 256;
/// Refused tokens remembered; a flood of made-up tokens only cycles through these.
const MAX_DENIED: usize = 1024;
/// What a refused client is told to wait before retrying.
pub(crate) const RETRY_AFTER_SECONDS: u64 = 1;

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
    /// Too many reviews in flight: retry later.
    #[error("Too Many Requests: too many authentication reviews in flight; retry later")]
    Busy,
    /// The detail is for the log, not for the (unauthenticated) client.
    #[error("cannot review the request: {0}")]
    Failed(String),
}

impl Denied {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::Busy => StatusCode::TOO_MANY_REQUESTS,
            Self::Failed(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// What the client is told: never the API server's error text, which would tell an
    /// unauthenticated caller about the cluster.
    pub(crate) fn body(&self) -> String {
        match self {
            Self::Failed(_) => "Internal Server Error\n".to_owned(),
            denied => format!("{denied}\n"),
        }
    }
}

/// SHA-256 of (token, verb, path): tokens are not kept once reviewed.
type Key = [u8; 32];
/// A review in flight, awaited by every request with its key.
type Review = Shared<BoxFuture<'static, Result<(), Denied>>>;

/// Decisions and the reviews that will make them.
struct Decisions {
    /// Key -> when the decision expires. Kept past expiry, marking a known scraper.
    allowed: LruCache<Key, Instant>,
    /// Key -> refusal and when it expires.
    denied: LruCache<Key, (Denied, Instant)>,
    in_flight: HashMap<Key, Review>,
}

/// Reviews requests against the Kubernetes API.
pub(crate) struct Authorizer {
    client: Client,
    decisions: Arc<Mutex<Decisions>>,
    /// Permits for reviews of tokens not allowed before.
    reviews: Arc<Semaphore>,
    /// Permits for renewing allowed tokens' decisions.
    renewals: Arc<Semaphore>,
    token_reviews: Counter,
    throttled: Counter,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer").finish_non_exhaustive()
    }
}

impl Authorizer {
    /// An authorizer whose counters are registered in `metrics`.
    pub(crate) fn new(client: Client, metrics: &Metrics) -> Self {
        let authorizer = Self::unregistered(client);
        metrics.register(
            "rkb_metrics_authentication_token_reviews",
            "TokenReviews the metrics endpoint sent to authenticate scrapers",
            authorizer.token_reviews.clone(),
        );
        metrics.register(
            "rkb_metrics_authentication_throttled_requests",
            "Metrics requests refused with 429 because too many reviews were in flight",
            authorizer.throttled.clone(),
        );
        authorizer
    }

    fn unregistered(client: Client) -> Self {
        let capacity = |n| std::num::NonZeroUsize::new(n).expect("a positive capacity");
        Self {
            client,
            decisions: Arc::new(Mutex::new(Decisions {
                allowed: LruCache::new(capacity(MAX_ALLOWED)),
                denied: LruCache::new(capacity(MAX_DENIED)),
                in_flight: HashMap::new(),
            })),
            reviews: Arc::new(Semaphore::new(REVIEWS_IN_FLIGHT)),
            renewals: Arc::new(Semaphore::new(RENEWALS_IN_FLIGHT)),
            token_reviews: Counter::default(),
            throttled: Counter::default(),
        }
    }

    /// Allows the request, or says why not.
    pub(crate) async fn check(
        &self,
        headers: &HeaderMap,
        verb: &str,
        path: &str,
    ) -> Result<(), Denied> {
        let token = bearer_token(headers)
            .filter(|token| jwt_shaped(token))
            .ok_or(Denied::Unauthenticated)?;
        let key = cache_key(token, verb, path);
        let review = {
            let mut decisions = lock(&self.decisions);
            let now = Instant::now();
            let known = match decisions.allowed.get(&key) {
                Some(expires) if *expires > now => return Ok(()),
                Some(_) => true,
                None => false,
            };
            match decisions.denied.get(&key) {
                Some((denied, expires)) if *expires > now => return Err(denied.clone()),
                Some(_) => {
                    decisions.denied.pop(&key);
                }
                None => {}
            }
            match decisions.in_flight.get(&key) {
                Some(review) => review.clone(),
                None => {
                    let lane = if known { &self.renewals } else { &self.reviews };
                    let Ok(permit) = lane.clone().try_acquire_owned() else {
                        self.throttled.inc();
                        return Err(Denied::Busy);
                    };
                    let review = self.start_review(key, token, verb, path, permit);
                    decisions.in_flight.insert(key, review.clone());
                    review
                }
            }
        };
        review.await
    }

    /// Reviews in a task of its own, so that the review finishes, records its decision
    /// and frees its permit even if every request waiting for it goes away.
    fn start_review(
        &self,
        key: Key,
        token: &str,
        verb: &str,
        path: &str,
        permit: OwnedSemaphorePermit,
    ) -> Review {
        let (client, decisions) = (self.client.clone(), self.decisions.clone());
        let (token, verb, path) = (token.to_owned(), verb.to_owned(), path.to_owned());
        let token_reviews = self.token_reviews.clone();
        let task = tokio::spawn(async move {
            let decision = review(&client, &token_reviews, &token, &verb, &path).await;
            let mut decisions = lock(&decisions);
            decisions.in_flight.remove(&key);
            let now = Instant::now();
            match &decision {
                Ok(()) => {
                    decisions.allowed.put(key, now + ALLOW_TTL);
                }
                // The API may be back next time; a known scraper stays known.
                Err(Denied::Failed(_) | Denied::Busy) => {}
                Err(denied) => {
                    decisions.allowed.pop(&key);
                    decisions.denied.put(key, (denied.clone(), now + DENY_TTL));
                }
            }
            drop(permit);
            decision
        });
        task.map(|joined| {
            joined
                .unwrap_or_else(|error| Err(Denied::Failed(format!("the review failed: {error}"))))
        })
        .boxed()
        .shared()
    }
}

async fn review(
    client: &Client,
    token_reviews: &Counter,
    token: &str,
    verb: &str,
    path: &str,
) -> Result<(), Denied> {
    // From JSON: whether `spec.token` is optional differs between the Kubernetes versions
    // k8s-openapi offers, and the manager compiles with the one the operator picks.
    let review: TokenReview = serde_json::from_value(serde_json::json!({"spec": {"token": token}}))
        .map_err(|e| Denied::Failed(format!("a TokenReview: {e}")))?;
    token_reviews.inc();
    let reviewed = within_timeout(
        Api::<TokenReview>::all(client.clone()).create(&PostParams::default(), &review),
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
        Api::<SubjectAccessReview>::all(client.clone()).create(&PostParams::default(), &access),
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

/// Whether `token` can be a ServiceAccount (or OIDC) token: a JWT in compact form, three
/// base64url parts of which the first encodes a JSON object (`{"` is `ey`). Checked before
/// any review, so made-up tokens cost the API server nothing and leave the review lane to
/// real scrapers. Other token kinds (static, bootstrap) are not accepted for metrics.
fn jwt_shaped(token: &str) -> bool {
    let base64url = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3 && parts.iter().all(|part| base64url(part)) && parts[0].starts_with("ey")
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
    use std::sync::Arc;

    use http::{Method, Request, Response};
    use http_body_util::BodyExt;
    use kube::client::Body;
    use serde_json::{Value, json};
    use tokio::task::JoinHandle;
    use tower_test::mock::{self, Handle};

    use super::*;

    type ApiServer = Handle<Request<Body>, Response<Body>>;

    fn authorizer() -> (Authorizer, ApiServer) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        (
            Authorizer::unregistered(Client::new(service, "default")),
            handle,
        )
    }

    /// A token shaped like a ServiceAccount token (a JWT: header, payload, signature),
    /// named `name` for the test.
    fn jwt(name: &str) -> String {
        format!("eyJhbGciOiJSUzI1NiJ9.{name}.c2lnbmF0dXJl")
    }

    fn bearer(name: &str) -> String {
        format!("Bearer {}", jwt(name))
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

    /// A flood of made-up tokens (uuids, in the attack) costs no TokenReview: a
    /// ServiceAccount token is a JWT.
    #[tokio::test]
    async fn tokens_that_are_no_jwt_are_refused_without_asking_the_api() {
        let (authorizer, mut api) = authorizer();
        for token in [
            "0c4d5a106b4f4d1e9f382a1c2e8f0001",
            "eyJhbGciOiJSUzI1NiJ9.payload",
            "eyJhbGciOiJSUzI1NiJ9.pay/load.signature",
            "eyJhbGciOiJSUzI1NiJ9..signature",
            "abc.def.ghi",
        ] {
            let headers = headers(&format!("Bearer {token}"));
            let check = authorizer.check(&headers, "get", "/metrics");
            let checked = tokio::time::timeout(Duration::from_secs(5), check).await;
            assert_eq!(checked, Ok(Err(Denied::Unauthenticated)), "{token}");
        }
        drop(authorizer);
        assert!(api.next_request().await.is_none(), "a review was sent");
    }

    #[tokio::test]
    async fn an_allowed_scraper_passes_token_and_access_reviews_and_is_then_cached() {
        let (authorizer, mut api) = authorizer();
        let authorizer = std::sync::Arc::new(authorizer);
        let check = tokio::spawn({
            let authorizer = authorizer.clone();
            async move {
                authorizer
                    .check(&headers(&bearer("scrape-token")), "get", "/metrics")
                    .await
            }
        });
        let review = answer(&mut api, TOKEN_REVIEWS, prometheus()).await;
        assert_eq!(review["spec"]["token"], jwt("scrape-token"));
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
        let scrape = headers(&bearer("scrape-token"));
        let again = authorizer.check(&scrape, "get", "/metrics");
        let again = tokio::time::timeout(Duration::from_secs(1), again).await;
        assert_eq!(again.expect("served from the cache"), Ok(()));
    }

    #[tokio::test]
    async fn an_unknown_token_is_unauthorized() {
        let (authorizer, mut api) = authorizer();
        let check = tokio::spawn(async move {
            authorizer
                .check(&headers(&bearer("forged")), "get", "/metrics")
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
                .check(&headers(&bearer("someone")), "get", "/metrics")
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
                .check(&headers(&bearer("t")), "get", "/metrics")
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

    fn spawn_check(authorizer: &Arc<Authorizer>, token: &str) -> JoinHandle<Result<(), Denied>> {
        let (authorizer, token) = (authorizer.clone(), bearer(token));
        tokio::spawn(async move { authorizer.check(&headers(&token), "get", "/metrics").await })
    }

    /// Lets the API server answer no more: what it was asked so far is all there is.
    async fn no_more_requests(api: &mut ApiServer) {
        let more = tokio::time::timeout(Duration::from_millis(200), api.next_request()).await;
        assert!(more.is_err(), "the API server was asked again");
    }

    async fn allow(authorizer: &Arc<Authorizer>, api: &mut ApiServer, token: &str) {
        let check = spawn_check(authorizer, token);
        answer(api, TOKEN_REVIEWS, prometheus()).await;
        answer(api, ACCESS_REVIEWS, json!({"allowed": true})).await;
        assert_eq!(check.await.unwrap(), Ok(()));
    }

    #[tokio::test]
    async fn concurrent_requests_with_one_token_share_one_review() {
        let (authorizer, mut api) = authorizer();
        let authorizer = Arc::new(authorizer);
        let checks: Vec<_> = (0..5)
            .map(|_| spawn_check(&authorizer, "scrape-token"))
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await; // every check is waiting
        answer(&mut api, TOKEN_REVIEWS, prometheus()).await;
        answer(&mut api, ACCESS_REVIEWS, json!({"allowed": true})).await;
        for check in checks {
            assert_eq!(check.await.unwrap(), Ok(()));
        }
        no_more_requests(&mut api).await;
    }

    #[tokio::test]
    async fn reviews_in_flight_are_bounded_and_further_tokens_refused_at_once() {
        let (authorizer, mut api) = authorizer();
        let authorizer = Arc::new(authorizer);
        let strangers: Vec<_> = (0..REVIEWS_IN_FLIGHT)
            .map(|i| spawn_check(&authorizer, &format!("stranger-{i}")))
            .collect();
        let mut held = Vec::new();
        for _ in 0..REVIEWS_IN_FLIGHT {
            held.push(api.next_request().await.expect("a review"));
        }
        let one_more = headers(&bearer("one-more"));
        let refused = authorizer.check(&one_more, "get", "/metrics");
        let refused = tokio::time::timeout(Duration::from_secs(1), refused)
            .await
            .expect("refused at once, not queued behind the reviews in flight");
        assert_eq!(refused.unwrap_err().status(), StatusCode::TOO_MANY_REQUESTS);
        no_more_requests(&mut api).await;

        // A finished review frees its place.
        let (_, reply) = held.pop().unwrap();
        reply.send_error(std::io::Error::other("connection reset"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let next = spawn_check(&authorizer, "one-more");
        answer(&mut api, TOKEN_REVIEWS, json!({"authenticated": false})).await;
        assert_eq!(next.await.unwrap(), Err(Denied::Unauthenticated));
        drop((held, strangers));
    }

    #[tokio::test]
    async fn a_flood_of_refused_tokens_does_not_evict_an_allowed_scraper() {
        let (authorizer, mut api) = authorizer();
        let authorizer = Arc::new(authorizer);
        allow(&authorizer, &mut api, "scrape-token").await;
        for i in 0..MAX_DENIED + 10 {
            let check = spawn_check(&authorizer, &format!("forged-{i}"));
            answer(&mut api, TOKEN_REVIEWS, json!({"authenticated": false})).await;
            assert_eq!(check.await.unwrap(), Err(Denied::Unauthenticated));
        }
        let scrape = headers(&bearer("scrape-token"));
        let scrape = authorizer.check(&scrape, "get", "/metrics");
        let scrape = tokio::time::timeout(Duration::from_secs(1), scrape).await;
        assert_eq!(scrape.expect("still answered from the cache"), Ok(()));
    }

    #[tokio::test]
    async fn an_allowed_scraper_renews_while_strangers_fill_the_review_lane() {
        let (authorizer, mut api) = authorizer();
        let authorizer = Arc::new(authorizer);
        allow(&authorizer, &mut api, "scrape-token").await;
        // Its decision expires...
        let key = cache_key(&jwt("scrape-token"), "get", "/metrics");
        lock(&authorizer.decisions).allowed.put(key, Instant::now());
        // ...while made-up tokens take every place for strangers' reviews.
        let _strangers: Vec<_> = (0..REVIEWS_IN_FLIGHT)
            .map(|i| spawn_check(&authorizer, &format!("stranger-{i}")))
            .collect();
        let mut held = Vec::new();
        for _ in 0..REVIEWS_IN_FLIGHT {
            held.push(api.next_request().await.expect("a review"));
        }
        let stranger = headers(&bearer("stranger"));
        let busy = authorizer.check(&stranger, "get", "/metrics").await;
        assert_eq!(busy, Err(Denied::Busy));
        allow(&authorizer, &mut api, "scrape-token").await;
    }

    #[tokio::test]
    async fn api_errors_reach_the_log_but_not_the_client() {
        let (authorizer, mut api) = authorizer();
        let check = tokio::spawn(async move {
            authorizer
                .check(&headers(&bearer("t")), "get", "/metrics")
                .await
        });
        let (_, reply) = api.next_request().await.unwrap();
        reply.send_error(std::io::Error::other(
            "dial tcp 10.96.0.1:443: connection refused",
        ));
        let denied = check.await.unwrap().unwrap_err();
        assert_eq!(denied.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(denied.body(), "Internal Server Error\n");
        assert!(denied.to_string().contains("10.96.0.1:443"), "{denied}");
    }
}
