//! The migration against an in-memory API server that stores each object with the version
//! it is encoded at, as etcd does, and answers the way kube-apiserver does: an empty merge
//! patch rewrites (new resourceVersion) only an object at another version. Faults come from
//! `rkb_testing`'s plan between the migration's client and that server: 409s, 500s, timeouts
//! and lost responses; 404s, 410s, refusals and a stale discovery come from the server.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use kube::client::Body;
use rkb_testing::{Fault, Faults, RbacAudit};
use serde_json::{Value, json};
use tower_test::mock::{self, Handle};

use super::*;

const CRD: &str = "memcacheds.cache.example.com";
const CRD_PATH: &str =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/memcacheds.cache.example.com";
const DISCOVERY_PATH: &str = "/apis/cache.example.com/v1beta1";
const LIST_PATH: &str = "/apis/cache.example.com/v1beta1/memcacheds";

/// The fake API server's state.
#[derive(Debug)]
struct State {
    storage: String,
    stored_versions: Vec<String>,
    crd_version: u64,
    /// `namespace/name` → the version it is encoded at, and its resourceVersion.
    objects: BTreeMap<String, (String, u64)>,
    /// Listed, but deleted before the migration patches them: a patch gets a 404.
    ghosts: BTreeSet<String>,
    /// Patches of these objects are refused with this code (a webhook's denial, RBAC).
    refused: BTreeMap<String, u16>,
    /// Discovery still publishes the old storage version's hash this many more times.
    stale_discovery: usize,
    /// The next list with a continue token gets a 410 carrying a token of the next key.
    expire_next_continue: bool,
    /// The last resourceVersion handed out (shared by every object, as etcd's revision).
    revision: u64,
    /// Method and path (with the query) of every request that reached the server.
    requests: Vec<(Method, String)>,
}

impl State {
    /// `old` objects at v1alpha1 and `new` at v1beta1 (the storage version), spread over
    /// two namespaces; storedVersions lists both versions.
    fn with(old: usize, new: usize) -> Self {
        let mut state = Self {
            storage: "v1beta1".into(),
            stored_versions: vec!["v1alpha1".into(), "v1beta1".into()],
            crd_version: 7,
            objects: BTreeMap::new(),
            ghosts: BTreeSet::new(),
            refused: BTreeMap::new(),
            stale_discovery: 0,
            expire_next_continue: false,
            revision: 100,
            requests: Vec::new(),
        };
        for (i, version) in (0..old)
            .map(|i| (i, "v1alpha1"))
            .chain((old..old + new).map(|i| (i, "v1beta1")))
        {
            state.revision += 1;
            let key = format!("ns-{}/cache-{i:03}", i % 2);
            state.objects.insert(key, (version.into(), state.revision));
        }
        state
    }

    fn at(&self, version: &str) -> usize {
        self.objects.values().filter(|(v, _)| v == version).count()
    }

    fn count(&self, method: &Method, path: &str) -> usize {
        self.requests
            .iter()
            .filter(|(m, p)| m == method && p.split('?').next() == Some(path))
            .count()
    }

    fn object(key: &str, version: &str, resource_version: u64) -> Value {
        let (namespace, name) = key.split_once('/').unwrap();
        json!({
            "apiVersion": format!("cache.example.com/{version}"),
            "kind": "Memcached",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": resource_version.to_string()},
            "spec": {"replicas": 1},
        })
    }

    fn crd(&self) -> Value {
        let versions = ["v1alpha1", "v1beta1"].map(|v| {
            json!({
                "name": v, "served": true, "storage": v == self.storage,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            })
        });
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": CRD, "resourceVersion": self.crd_version.to_string()},
            "spec": {
                "group": "cache.example.com",
                "names": {"kind": "Memcached", "plural": "memcacheds", "listKind": "MemcachedList", "singular": "memcached"},
                "scope": "Namespaced",
                "versions": versions,
            },
            "status": {
                "acceptedNames": {"kind": "Memcached", "plural": "memcacheds"},
                "storedVersions": self.stored_versions,
            },
        })
    }

    fn answer(&mut self, method: &Method, path: &str, query: &str, body: &[u8]) -> (u16, Value) {
        let param = |name: &str| {
            query.split('&').find_map(|kv| {
                kv.strip_prefix(name)
                    .and_then(|v| v.strip_prefix('='))
                    .map(str::to_owned)
            })
        };
        match (method.as_str(), path) {
            ("GET", CRD_PATH) => (200, self.crd()),
            ("PATCH", p) if p == format!("{CRD_PATH}/status") => {
                let patch: Value = serde_json::from_slice(body).unwrap();
                let precondition = patch["metadata"]["resourceVersion"].as_str();
                if precondition != Some(self.crd_version.to_string().as_str()) {
                    return status(409, "Conflict");
                }
                let stored: Vec<String> =
                    serde_json::from_value(patch["status"]["storedVersions"].clone()).unwrap();
                assert!(stored.contains(&self.storage), "{stored:?}");
                self.stored_versions = stored;
                self.crd_version += 1;
                (200, self.crd())
            }
            ("GET", DISCOVERY_PATH) => {
                let version = if self.stale_discovery > 0 {
                    self.stale_discovery -= 1;
                    "v1alpha1"
                } else {
                    self.storage.as_str()
                };
                let hash = storage_version_hash("cache.example.com", version, "Memcached");
                (
                    200,
                    json!({
                        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "cache.example.com/v1beta1",
                        "resources": [
                            {"name": "memcacheds", "singularName": "memcached", "namespaced": true, "kind": "Memcached",
                             "verbs": ["get", "list", "patch"], "storageVersionHash": hash},
                            {"name": "memcacheds/status", "singularName": "", "namespaced": true, "kind": "Memcached", "verbs": ["get", "patch"]},
                        ],
                    }),
                )
            }
            ("GET", LIST_PATH) => {
                let token = param("continue").map(|t| t.replace("%2F", "/"));
                if token.is_some() && self.expire_next_continue {
                    self.expire_next_continue = false;
                    let (_, mut gone) = status(410, "Expired");
                    gone["metadata"] = json!({"continue": token});
                    return (410, gone);
                }
                let limit: usize = param("limit").map_or(usize::MAX, |l| l.parse().unwrap());
                let keys: BTreeSet<&String> =
                    self.objects.keys().chain(self.ghosts.iter()).collect();
                let after: Vec<&String> = keys
                    .into_iter()
                    .filter(|k| token.as_ref().is_none_or(|t| k.as_str() > t.as_str()))
                    .collect();
                let page = &after[..limit.min(after.len())];
                let items: Vec<Value> = page
                    .iter()
                    .map(|key| match self.objects.get(*key) {
                        Some((version, rv)) => Self::object(key, version, *rv),
                        None => Self::object(key, "v1alpha1", 1),
                    })
                    .collect();
                let remaining = after.len() - page.len();
                let mut metadata = json!({"resourceVersion": self.revision.to_string()});
                if remaining > 0 {
                    metadata["continue"] = json!(page.last().unwrap());
                    metadata["remainingItemCount"] = json!(remaining);
                }
                (
                    200,
                    json!({"apiVersion": "cache.example.com/v1beta1", "kind": "MemcachedList", "metadata": metadata, "items": items}),
                )
            }
            ("PATCH", p) => {
                let rest = p
                    .strip_prefix("/apis/cache.example.com/v1beta1/namespaces/")
                    .unwrap();
                let (namespace, name) = rest.split_once("/memcacheds/").unwrap();
                let key = format!("{namespace}/{name}");
                assert_eq!(body, b"{}", "an empty merge patch");
                if let Some(code) = self.refused.get(&key) {
                    return status(*code, "Refused");
                }
                let Some((version, rv)) = self.objects.get_mut(&key) else {
                    return status(404, "NotFound");
                };
                // kube-apiserver writes only when the bytes at the storage version differ.
                if *version != self.storage {
                    self.revision += 1;
                    *version = self.storage.clone();
                    *rv = self.revision;
                }
                (200, Self::object(&key, version, *rv))
            }
            _ => status(405, "MethodNotAllowed"),
        }
    }
}

fn status(code: u16, reason: &str) -> (u16, Value) {
    (
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": code, "reason": reason, "message": reason}),
    )
}

/// A client of a fake API server holding `state`, through `faults`.
fn serve(state: State, faults: &Faults) -> (Client, Arc<Mutex<State>>) {
    let (service, mut handle): (_, Handle<Request<Body>, Response<Body>>) = mock::pair();
    let state = Arc::new(Mutex::new(state));
    let served = state.clone();
    tokio::spawn(async move {
        while let Some((request, reply)) = handle.next_request().await {
            let method = request.method().clone();
            let uri = request.uri().clone();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let (code, value) = {
                let mut state = served.lock().unwrap();
                let path_and_query = uri.path_and_query().unwrap().to_string();
                state.requests.push((method.clone(), path_and_query));
                state.answer(&method, uri.path(), uri.query().unwrap_or(""), &body)
            };
            let mut response = Response::new(Body::from(serde_json::to_vec(&value).unwrap()));
            *response.status_mut() = StatusCode::from_u16(code).unwrap();
            reply.send_response(response);
        }
    });
    let client = rkb_testing::wrap(
        Client::new(service, "default"),
        &RbacAudit::default(),
        faults,
    );
    (client, state)
}

fn migration(client: Client) -> Migration {
    Migration::new(client)
        .requests_per_second(0.0)
        .page_size(10)
        .retries(10, Duration::from_millis(50))
        .discovery_timeout(Duration::from_secs(5))
}

#[tokio::test(start_paused = true)]
async fn every_object_is_rewritten_and_stored_versions_trimmed_despite_faults() {
    let mut state = State::with(12, 13);
    // Listed, then deleted before its patch.
    state.ghosts.insert("ns-0/cache-015x".into());
    let faults = Faults::default()
        .fail(
            Fault::conflict()
                .on_verb("patch")
                .on_resource("memcacheds")
                .times(3),
        )
        .fail(Fault::server_error().on_verb("patch").times(2))
        .fail(Fault::server_error().on_verb("list").times(1))
        .fail(
            Fault::timeout(Duration::from_secs(1))
                .on_verb("patch")
                .times(1),
        )
        // Applied, then the answer is lost: the retry finds the object rewritten.
        .fail(
            Fault::response_lost(Duration::from_secs(1))
                .on_verb("patch")
                .times(1),
        )
        .fail(
            Fault::conflict()
                .on_verb("patch")
                .on_resource("customresourcedefinitions/status")
                .times(1),
        );
    let (client, state) = serve(state, &faults);

    let report = migration(client).migrate(CRD).await.unwrap();

    let state = state.lock().unwrap();
    assert_eq!(state.at("v1alpha1"), 0, "{:?}", state.objects);
    assert_eq!(state.at("v1beta1"), 25);
    assert_eq!(state.stored_versions, ["v1beta1"]);
    assert_eq!(report.listed, 26);
    assert_eq!(report.deleted, 1);
    // Every fault but the trim's hits the first object's patch, which still gets through:
    // its lost answer's attempt rewrote it, and the next attempt sees a new resourceVersion.
    assert_eq!((report.rewritten, report.unchanged), (12, 13), "{report:?}");
    assert_eq!(report.retries, 9, "one per injected fault: {report:?}");
    assert_eq!(faults.injected().len(), 9);
    assert!(report.trimmed);
    assert_eq!(report.stored_versions_before, ["v1alpha1", "v1beta1"]);
    // Three pages of 10 reached the server (the first list's 500 was injected before it):
    // continue tokens, not a list from the start.
    assert_eq!(state.count(&Method::GET, LIST_PATH), 3);
    // The CRD was read at the start, then again for each attempt at the trim.
    assert_eq!(state.count(&Method::GET, CRD_PATH), 3);
    assert_eq!(
        state.count(&Method::PATCH, &format!("{CRD_PATH}/status")),
        1
    );
    assert_eq!(state.crd_version, 8);
}

#[tokio::test(start_paused = true)]
async fn an_object_that_cannot_be_rewritten_keeps_the_old_stored_version_until_a_rerun() {
    let mut state = State::with(8, 4);
    state.refused.insert("ns-1/cache-003".into(), 422);
    // Errors that are not transient are not retried; the object fails for good.
    let (client, state) = serve(state, &Faults::default());
    let migration = migration(client);

    let error = migration.migrate(CRD).await.unwrap_err();
    let Error::Incomplete {
        failed,
        listed,
        kept,
        first,
        ..
    } = &error
    else {
        panic!("{error}")
    };
    assert_eq!((*failed, *listed), (1, 12));
    assert_eq!(kept, &["v1alpha1", "v1beta1"]);
    assert!(first[0].starts_with("ns-1/cache-003: "), "{first:?}");
    assert!(
        error
            .to_string()
            .contains("stays [\"v1alpha1\", \"v1beta1\"]"),
        "{error}"
    );
    {
        let mut state = state.lock().unwrap();
        assert_eq!(
            state.stored_versions,
            ["v1alpha1", "v1beta1"],
            "not trimmed"
        );
        assert_eq!(state.at("v1alpha1"), 1, "the others are migrated");
        assert_eq!(
            state.count(&Method::PATCH, &format!("{CRD_PATH}/status")),
            0
        );
        assert_eq!(
            state.count(
                &Method::PATCH,
                "/apis/cache.example.com/v1beta1/namespaces/ns-1/memcacheds/cache-003"
            ),
            1
        );
        state.refused.clear();
    }

    // Run again once the object can be written: what the first run did is not redone.
    let report = migration.migrate(CRD).await.unwrap();
    assert_eq!((report.rewritten, report.unchanged), (1, 11));
    assert!(report.trimmed);
    let state = state.lock().unwrap();
    assert_eq!(state.stored_versions, ["v1beta1"]);
    assert_eq!(state.at("v1alpha1"), 0);
}

#[tokio::test(start_paused = true)]
async fn persistent_server_errors_give_up_without_trimming() {
    let faults = Faults::default().fail(Fault::server_error().on_verb("patch").times(1000));
    let (client, state) = serve(State::with(3, 0), &faults);

    let error = migration(client)
        .retries(4, Duration::from_millis(50))
        .migrate(CRD)
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::Incomplete { failed: 3, .. }),
        "{error}"
    );
    // Four attempts each, then given up.
    assert_eq!(faults.injected().len(), 12);
    let state = state.lock().unwrap();
    assert_eq!(state.stored_versions, ["v1alpha1", "v1beta1"]);
    assert_eq!(state.at("v1alpha1"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_forbidden_patch_stops_the_migration_at_once() {
    let mut state = State::with(30, 0);
    for i in 0..30 {
        state
            .refused
            .insert(format!("ns-{}/cache-{i:03}", i % 2), 403);
    }
    let (client, state) = serve(state, &Faults::default());

    let error = migration(client).migrate(CRD).await.unwrap_err();
    assert!(matches!(error, Error::Forbidden { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("customresourcedefinitions/status")
    );
    let state = state.lock().unwrap();
    let patches = state
        .requests
        .iter()
        .filter(|(m, p)| *m == Method::PATCH && p.contains("/memcacheds/"))
        .count();
    assert_eq!(patches, 1, "not 30 denials in a row");
    assert_eq!(state.stored_versions, ["v1alpha1", "v1beta1"]);
}

#[tokio::test(start_paused = true)]
async fn it_waits_for_discovery_to_show_the_storage_version_and_gives_up_after_the_timeout() {
    let mut state = State::with(2, 0);
    state.stale_discovery = 3;
    let (client, state) = serve(state, &Faults::default());
    let report = migration(client).migrate(CRD).await.unwrap();
    assert_eq!(report.rewritten, 2);
    assert_eq!(state.lock().unwrap().count(&Method::GET, DISCOVERY_PATH), 4);

    let mut stale = State::with(2, 0);
    stale.stale_discovery = usize::MAX;
    let (client, state) = serve(stale, &Faults::default());
    let error = migration(client).migrate(CRD).await.unwrap_err();
    let Error::NotInEffect {
        expected, found, ..
    } = &error
    else {
        panic!("{error}")
    };
    assert_eq!(
        expected,
        &storage_version_hash("cache.example.com", "v1beta1", "Memcached")
    );
    assert_eq!(
        found.as_deref(),
        Some(storage_version_hash("cache.example.com", "v1alpha1", "Memcached").as_str())
    );
    let state = state.lock().unwrap();
    assert_eq!(state.count(&Method::GET, LIST_PATH), 0, "nothing listed");
    assert_eq!(state.at("v1alpha1"), 2);
}

#[tokio::test(start_paused = true)]
async fn an_expired_continue_token_goes_on_from_the_next_key() {
    let mut state = State::with(25, 0);
    state.expire_next_continue = true;
    let (client, state) = serve(state, &Faults::default());
    let report = migration(client).migrate(CRD).await.unwrap();
    assert_eq!(report.list_restarts, 1);
    assert_eq!(
        (report.listed, report.rewritten),
        (25, 25),
        "each object once"
    );
    let state = state.lock().unwrap();
    assert_eq!(state.at("v1alpha1"), 0);
    assert_eq!(state.stored_versions, ["v1beta1"]);
}

#[tokio::test(start_paused = true)]
async fn requests_keep_to_the_rate_limit() {
    let (client, state) = serve(State::with(5, 5), &Faults::default());
    let started = Instant::now();
    let report = migration(client)
        .requests_per_second(4.0)
        .migrate(CRD)
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let requests = state.lock().unwrap().requests.len();
    // CRD, discovery, one page, ten patches, CRD again, the trim.
    assert_eq!(requests, 15);
    assert_eq!(report.requests, 15);
    assert_eq!(report.listed, 10);
    // The first request goes at once, each next one a quarter of a second later.
    let paced = Duration::from_millis(250) * (requests as u32 - 1);
    assert!(
        elapsed >= paced && elapsed < paced + Duration::from_millis(250),
        "{elapsed:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn nothing_is_written_when_everything_is_current() {
    let mut state = State::with(0, 6);
    state.stored_versions = vec!["v1beta1".into()];
    let (client, state) = serve(state, &Faults::default());
    let report = migration(client).migrate(CRD).await.unwrap();
    assert_eq!((report.rewritten, report.unchanged), (0, 6));
    assert!(!report.trimmed);
    let state = state.lock().unwrap();
    assert_eq!(
        state.count(&Method::PATCH, &format!("{CRD_PATH}/status")),
        0
    );
    assert_eq!(state.revision, 106, "no object written");
}

#[test]
fn the_storage_version_hash_is_eight_bytes_of_sha256_in_base64() {
    let hash = storage_version_hash("cache.example.com", "v1beta1", "Memcached");
    assert_eq!(hash.len(), 12);
    assert!(hash.ends_with('='));
    assert_ne!(
        hash,
        storage_version_hash("cache.example.com", "v1alpha1", "Memcached")
    );
    assert_eq!(
        crd_name::<k8s_openapi::api::apps::v1::Deployment>(),
        "deployments.apps"
    );
}

#[test]
fn only_transient_errors_are_retried() {
    let api = |code| {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            ..Default::default()
        }))
    };
    for code in [429, 500, 502, 503, 504] {
        assert!(Retry::Conflicts.transient(&api(code)), "{code}");
        assert!(Retry::NotConflicts.transient(&api(code)), "{code}");
    }
    assert!(Retry::Conflicts.transient(&api(409)));
    assert!(!Retry::NotConflicts.transient(&api(409)));
    for code in [400, 401, 403, 404, 410, 422] {
        assert!(!Retry::Conflicts.transient(&api(code)), "{code}");
    }
    let timeout = kube::Error::Service(Box::new(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "timed out",
    )));
    assert!(Retry::NotConflicts.transient(&timeout));
}
