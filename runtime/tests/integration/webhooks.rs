//! Webhooks served by rkb-manager, called by the real API server (envtest) over loopback
//! TLS: defaulting, validation (create and an immutable field on update), conversion
//! between a spoke and the hub, and the bad requests the server must survive.

use crate::fixture;

use std::sync::Arc;

use bytes::Bytes;
use fixture::{GROUP, MUTATE_PATH, VALIDATE_PATH, served, v1, v2};
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{PostParams, PropagationPolicy};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

async fn namespace(admission: bool) -> (&'static rkb_envtest::Environment, String) {
    let env = rkb_envtest::shared_by(module_path!()).await;
    fixture::install(env, admission).await;
    (env, env.create_namespace().await.unwrap())
}

fn spec(replicas: Option<i32>, image: &str) -> v2::CacheSpec {
    v2::CacheSpec {
        replicas,
        image: image.to_owned(),
        tls: None,
    }
}

fn refusal(error: kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message,
        other => panic!("expected the API server to refuse, got {other:?}"),
    }
}

#[tokio::test]
async fn an_object_missing_a_defaulted_field_comes_back_defaulted() {
    let (env, ns) = namespace(true).await;
    let api = Api::<v2::Cache>::namespaced(env.client(), &ns);
    let created = api
        .create(
            &PostParams::default(),
            &v2::Cache::new("plain", spec(None, "memcached:1.6")),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.replicas, Some(1), "defaulted by the webhook");
    // What the client set is kept.
    let created = api
        .create(
            &PostParams::default(),
            &v2::Cache::new("three", spec(Some(3), "memcached:1.6")),
        )
        .await
        .unwrap();
    assert_eq!(created.spec.replicas, Some(3));
    assert_eq!(
        api.get("plain").await.unwrap().spec.replicas,
        Some(1),
        "stored defaulted"
    );
}

#[tokio::test]
async fn an_invalid_object_is_refused_with_the_validators_message() {
    let (env, ns) = namespace(true).await;
    let api = Api::<v2::Cache>::namespaced(env.client(), &ns);
    let error = api
        .create(
            &PostParams::default(),
            &v2::Cache::new("empty", spec(None, "")),
        )
        .await
        .unwrap_err();
    let message = refusal(error);
    assert!(
        message.contains("vcache-v2.kb.io") && message.contains("spec.image must not be empty"),
        "{message}"
    );
    assert!(
        api.get_opt("empty").await.unwrap().is_none(),
        "nothing was stored"
    );
}

#[tokio::test]
async fn field_errors_reach_the_client_as_the_api_servers_own_validation() {
    let (env, ns) = namespace(true).await;
    let api = Api::<v2::Cache>::namespaced(env.client(), &ns);
    let mut cache = v2::Cache::new("bad", spec(Some(-1), "memcached 1.6"));
    cache.spec.tls = Some(false);
    let status = match api.create(&PostParams::default(), &cache).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert!(
        status.message.contains(&format!(
            "Cache.{GROUP} \"bad\" is invalid: [spec.replicas: Invalid value: -1: must not be \
             negative, spec.image: Invalid value: \"memcached 1.6\": must not contain spaces]"
        )),
        "{}",
        status.message
    );
    let details = status.details.expect("the causes are passed on");
    assert_eq!(
        (details.kind.as_str(), details.name.as_str()),
        ("Cache", "bad")
    );
    let causes: Vec<(&str, &str)> = details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.field.as_str()))
        .collect();
    assert_eq!(
        causes,
        [
            ("FieldValueInvalid", "spec.replicas"),
            ("FieldValueInvalid", "spec.image")
        ]
    );
    assert!(api.get_opt("bad").await.unwrap().is_none());
}

#[tokio::test]
async fn an_update_of_an_immutable_field_is_refused() {
    let (env, ns) = namespace(true).await;
    let api = Api::<v2::Cache>::namespaced(env.client(), &ns);
    let mut cache = api
        .create(
            &PostParams::default(),
            &v2::Cache::new("fixed", spec(Some(2), "memcached:1.6")),
        )
        .await
        .unwrap();
    cache.spec.image = "memcached:1.7".into();
    let message = refusal(
        api.replace("fixed", &PostParams::default(), &cache)
            .await
            .unwrap_err(),
    );
    assert!(
        message
            .contains("spec.image is immutable: it was \"memcached:1.6\", not \"memcached:1.7\""),
        "{message}"
    );
    // Other fields may change.
    cache.spec.image = "memcached:1.6".into();
    cache.spec.replicas = Some(4);
    let replaced = api
        .replace("fixed", &PostParams::default(), &cache)
        .await
        .unwrap();
    assert_eq!(replaced.spec.replicas, Some(4));
}

#[tokio::test]
async fn a_spoke_is_stored_as_the_hub_and_reads_back_identical_in_both_versions() {
    let (env, ns) = namespace(true).await;
    let old = Api::<v1::Cache>::namespaced(env.client(), &ns);
    let new = Api::<v2::Cache>::namespaced(env.client(), &ns);

    let written = v1::Cache::new(
        "from-v1",
        v1::CacheSpec {
            size: Some(3),
            image: "memcached:1.6".into(),
        },
    );
    let created = old.create(&PostParams::default(), &written).await.unwrap();
    assert_eq!(created.spec, written.spec, "v1 reads back what was written");
    assert_eq!(created.annotations().get(fixture::KEPT), None);
    let as_v2 = new.get("from-v1").await.unwrap();
    assert_eq!(
        as_v2.spec,
        spec(Some(3), "memcached:1.6"),
        "size is replicas in v2"
    );
    assert_eq!(as_v2.metadata.uid, created.metadata.uid);

    // v1 is defaulted too: the API server converts it for the v2 webhooks.
    let defaulted = old
        .create(
            &PostParams::default(),
            &v1::Cache::new(
                "v1-defaulted",
                v1::CacheSpec {
                    size: None,
                    image: "memcached:1.6".into(),
                },
            ),
        )
        .await
        .unwrap();
    assert_eq!(defaulted.spec.size, Some(1));

    // A field only v2 has survives a round trip through v1.
    let mut with_tls = v2::Cache::new("with-tls", spec(Some(2), "memcached:1.6"));
    with_tls.spec.tls = Some(true);
    new.create(&PostParams::default(), &with_tls).await.unwrap();
    let mut through_v1 = old.get("with-tls").await.unwrap();
    assert_eq!(
        through_v1
            .annotations()
            .get(fixture::KEPT)
            .map(String::as_str),
        Some(r#"{"tls":true}"#),
        "v1 keeps tls in an annotation"
    );
    through_v1.spec.size = Some(5);
    old.replace("with-tls", &PostParams::default(), &through_v1)
        .await
        .unwrap();
    let back = new.get("with-tls").await.unwrap();
    assert_eq!(back.spec.tls, Some(true), "tls survived the v1 update");
    assert_eq!(back.spec.replicas, Some(5));
    assert_eq!(
        back.annotations().get(fixture::KEPT),
        None,
        "no annotation leaks into v2"
    );

    let crd = Api::<CustomResourceDefinition>::all(env.client())
        .get(&format!("caches.{GROUP}"))
        .await
        .unwrap();
    assert_eq!(
        crd.status.and_then(|s| s.stored_versions),
        Some(vec!["v2".to_owned()]),
        "objects written as v1 are stored as v2, the hub"
    );
    let _ = new
        .delete(
            "from-v1",
            &kube::api::DeleteParams {
                propagation_policy: Some(PropagationPolicy::Background),
                ..Default::default()
            },
        )
        .await;
}

/// An HTTPS client trusting the fixture's CA.
fn tls_connector() -> TlsConnector {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(served().certs.ca_pem().as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

/// Sends one request to the webhook server; returns the status and body.
async fn send(method: &str, path: &str, content_type: &str, body: Vec<u8>) -> (u16, String) {
    let stream = tokio::net::TcpStream::connect(served().addr).await.unwrap();
    let stream = tls_connector()
        .connect(ServerName::try_from("localhost").unwrap(), stream)
        .await
        .unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn review(kind: Value, object: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0c4d5a10-6b4f-4d1e-9f38-2a1c2e8f0001",
            "kind": kind,
            "resource": {"group": GROUP, "version": "v2", "resource": "caches"},
            "name": "c",
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "test"},
            "object": object,
            "dryRun": false
        }
    }))
    .unwrap()
}

fn cache_kind() -> Value {
    json!({"group": GROUP, "version": "v2", "kind": "Cache"})
}

fn response_of(body: &str) -> Value {
    let review: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    review["response"].clone()
}

#[tokio::test]
async fn a_review_from_a_local_client_is_answered_with_a_patch_or_warnings() {
    let object = json!({
        "apiVersion": format!("{GROUP}/v2"), "kind": "Cache",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"image": "memcached:1.6"}
    });
    let (status, body) = send(
        "POST",
        MUTATE_PATH,
        "application/json",
        review(cache_kind(), object),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let response = response_of(&body);
    assert_eq!(response["uid"], "0c4d5a10-6b4f-4d1e-9f38-2a1c2e8f0001");
    assert_eq!(response["allowed"], true);
    assert_eq!(response["patchType"], "JSONPatch");
    // kube serialises the patch as an array of bytes, which the API server accepts.
    let patch: Vec<u8> = serde_json::from_value(response["patch"].clone()).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "add", "path": "/spec/replicas", "value": 1}])
    );

    let many = json!({
        "apiVersion": format!("{GROUP}/v2"), "kind": "Cache",
        "metadata": {"name": "c"}, "spec": {"image": "m", "replicas": 20}
    });
    let (status, body) = send(
        "POST",
        VALIDATE_PATH,
        "application/json",
        review(cache_kind(), many),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let response = response_of(&body);
    assert_eq!(response["allowed"], true);
    assert_eq!(
        response["warnings"],
        json!(["20 replicas is more than a cache usually needs"])
    );
}

/// Writes `bytes` to the webhook server over TLS and returns what it answers.
async fn raw(bytes: &[u8]) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let stream = tokio::net::TcpStream::connect(served().addr).await.unwrap();
    let mut stream = tls_connector()
        .connect(ServerName::try_from("localhost").unwrap(), stream)
        .await
        .unwrap();
    stream.write_all(bytes).await.unwrap();
    stream.flush().await.unwrap();
    let mut answer = vec![0; 4096];
    let n = stream.read(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer[..n]).into_owned()
}

#[tokio::test]
async fn bad_requests_get_errors_and_the_server_keeps_serving() {
    // Malformed JSON: HTTP 400 with a review that says why.
    let (status, body) = send(
        "POST",
        VALIDATE_PATH,
        "application/json",
        b"{\"kind\": ".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let response = response_of(&body);
    assert_eq!(response["allowed"], false);
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("malformed AdmissionReview"),
        "{body}"
    );

    // JSON, but no request in it.
    let (status, body) = send(
        "POST",
        VALIDATE_PATH,
        "application/json",
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, 400, "{body}");

    // A review of another kind: refused with a message, keeping the uid.
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let (status, body) = send(
        "POST",
        VALIDATE_PATH,
        "application/json",
        review(
            json!({"group": "", "version": "v1", "kind": "ConfigMap"}),
            config_map,
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let response = response_of(&body);
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 400);
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .contains("not ConfigMap.v1."),
        "{body}"
    );

    // The right kind, but an object that does not fit the type.
    let wrong_shape = json!({"apiVersion": format!("{GROUP}/v2"), "kind": "Cache", "metadata": {"name": "c"}, "spec": {"image": 7}});
    let (status, body) = send(
        "POST",
        VALIDATE_PATH,
        "application/json",
        review(cache_kind(), wrong_shape),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        response_of(&body)["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("cannot read the object"),
        "{body}"
    );

    // Oversized: refused on the declared length, before the body is read...
    let head = format!(
        "POST {VALIDATE_PATH} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        8 << 20
    );
    let answer = raw(head.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    // ... and without one (chunked), once the limit has been read.
    let limit = rkb_runtime::webhook::MAX_REQUEST_BYTES;
    let mut chunked = format!(
        "POST {VALIDATE_PATH} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         transfer-encoding: chunked\r\n\r\n{:x}\r\n",
        limit + 1
    )
    .into_bytes();
    chunked.extend(std::iter::repeat_n(b' ', limit + 1));
    let answer = raw(&chunked).await;
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");

    // Not JSON, not POST, nowhere.
    let (status, _) = send("POST", VALIDATE_PATH, "text/plain", b"{}".to_vec()).await;
    assert_eq!(status, 415);
    let (status, _) = send("GET", VALIDATE_PATH, "application/json", Vec::new()).await;
    assert_eq!(status, 405);
    let (status, body) = send("POST", "/nowhere", "application/json", b"{}".to_vec()).await;
    assert_eq!(status, 404);
    assert!(body.contains("/convert"), "the 404 lists the paths: {body}");

    // A malformed ConversionReview.
    let (status, body) = send("POST", "/convert", "application/json", b"[]".to_vec()).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("malformed ConversionReview"), "{body}");

    // Plain HTTP to the TLS port: no HTTP answer at all.
    let stream = tokio::net::TcpStream::connect(served().addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let plain = sender
        .send_request(
            http::Request::post(VALIDATE_PATH)
                .header("host", "localhost")
                .body(Full::new(Bytes::from_static(b"{}")))
                .unwrap(),
        )
        .await;
    assert!(plain.is_err(), "plain HTTP must not be answered: {plain:?}");

    // Still serving.
    let (status, _) = send("POST", VALIDATE_PATH, "text/plain", Vec::new()).await;
    assert_eq!(status, 415);
}

#[test]
fn rendered_webhook_manifests_match_the_attributes_and_pass_kubernetes_validate() {
    let (crd, configurations) = fixture::rendered();
    assert_eq!(
        crd["spec"]["conversion"],
        json!({
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/convert"}},
                "conversionReviewVersions": ["v1"]
            }
        })
    );
    let [mutating, validating] = &configurations[..] else {
        panic!("two configurations: {configurations:?}")
    };
    assert_eq!(mutating["kind"], "MutatingWebhookConfiguration");
    assert_eq!(
        mutating["metadata"]["name"],
        "mutating-webhook-configuration"
    );
    let webhook = &mutating["webhooks"][0];
    assert_eq!(webhook["name"], "mcache-v2.kb.io");
    assert_eq!(webhook["clientConfig"]["service"]["path"], MUTATE_PATH);
    assert_eq!(webhook["timeoutSeconds"], 10);
    assert_eq!(webhook["failurePolicy"], "Fail");
    assert_eq!(webhook["sideEffects"], "None");
    assert_eq!(
        webhook["rules"],
        json!([{"apiGroups": [GROUP], "apiVersions": ["v2"], "operations": ["CREATE", "UPDATE"], "resources": ["caches"]}])
    );
    assert_eq!(validating["webhooks"][0]["name"], "vcache-v2.kb.io");
    assert_eq!(
        validating["webhooks"][0]["clientConfig"]["service"]["path"],
        VALIDATE_PATH
    );

    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (path, yaml) in fixture::manifests().render().unwrap() {
        if path.starts_with("config/rbac") {
            continue;
        }
        let file = dir.path().join(path.file_name().unwrap());
        std::fs::write(&file, yaml).unwrap();
        files.push(file);
    }
    rkb_envtest::kubernetes_validate(&files, dir.path());
}

/// A validator that takes its time, to catch the manager stopping mid-review.
struct Slow;

#[rkb_runtime::webhook(path = "/slow")]
impl rkb_runtime::webhook::Validator<v2::Cache> for Slow {
    async fn validate_create(
        &self,
        _: &rkb_runtime::webhook::Request,
        _: &v2::Cache,
    ) -> Result<rkb_runtime::webhook::Warnings, rkb_runtime::webhook::Denied> {
        tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
        Ok(vec!["slow but done".into()])
    }

    async fn validate_update(
        &self,
        _: &rkb_runtime::webhook::Request,
        _: &v2::Cache,
        _: &v2::Cache,
    ) -> Result<rkb_runtime::webhook::Warnings, rkb_runtime::webhook::Denied> {
        Ok(Vec::new())
    }
}

#[tokio::test]
async fn the_manager_reports_the_webhook_server_ready_and_drains_it_on_shutdown() {
    use clap::Parser as _;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let env = rkb_envtest::shared_by(module_path!()).await;
    let (webhook_port, probe_port) = (
        rkb_envtest::free_port("127.0.0.1"),
        rkb_envtest::free_port("127.0.0.1"),
    );
    let args = rkb_runtime::manager::Args::parse_from([
        "manager".to_owned(),
        format!("--webhook-bind-address=127.0.0.1:{webhook_port}"),
        format!("--webhook-cert-path={}", served().certs.dir().display()),
        format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
        "--metrics-bind-address=0".to_owned(),
    ]);
    let manager = rkb_runtime::Manager::new("webhook-test", env.client(), args)
        .webhooks(rkb_runtime::webhook::Webhooks::new().validator::<v2::Cache, _>(Slow));
    let shutdown = manager.shutdown_token();
    let running = tokio::spawn(manager.run(vec![]));

    // /readyz lists the webhook server's check once it serves.
    let readyz = || async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", probe_port)).await?;
        stream
            .write_all(b"GET /readyz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .await?;
        let mut body = String::new();
        stream.read_to_string(&mut body).await?;
        Ok::<_, std::io::Error>(body)
    };
    let mut report = String::new();
    for _ in 0..50 {
        if let Ok(body) = readyz().await {
            report = body;
            if report.contains("[+]webhook ok") {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        report.contains("HTTP/1.1 200") && report.contains("[+]webhook ok"),
        "{report}"
    );

    // A review in flight when the manager is told to stop is still answered.
    let object = json!({
        "apiVersion": format!("{GROUP}/v2"), "kind": "Cache",
        "metadata": {"name": "c"}, "spec": {"image": "m"}
    });
    let body = review(cache_kind(), object);
    let in_flight = tokio::spawn(async move {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", webhook_port))
            .await
            .unwrap();
        let stream = tls_connector()
            .connect(ServerName::try_from("localhost").unwrap(), stream)
            .await
            .unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(connection);
        let response = sender
            .send_request(
                http::Request::post("/slow")
                    .header("host", "localhost")
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(body)))
                    .unwrap(),
            )
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    shutdown.cancel();
    let (status, body) = in_flight.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(response_of(&body)["warnings"], json!(["slow but done"]));
    running.await.unwrap().unwrap();
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", webhook_port))
            .await
            .is_err(),
        "the webhook server is closed after run returns"
    );
}
