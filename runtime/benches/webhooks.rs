//! Webhook latency: `cargo bench -p rkb-runtime --bench webhooks`.
//!
//! Prints p50/p99 of 1,000 admission reviews sent by a local client over one keep-alive
//! TLS connection, and of 1,000 dry-run creates through the envtest API server, without
//! the admission webhooks and with them (the API server calling the defaulting and the
//! validating webhook for each).

#[path = "../tests/integration/fixture/mod.rs"]
mod fixture;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use fixture::{GROUP, MUTATE_PATH, VALIDATE_PATH, served, v2};
use http_body_util::{BodyExt as _, Full};
use hyper_util::rt::TokioIo;
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

const N: usize = 1000;

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        local_client(MUTATE_PATH, "defaulting").await;
        local_client(VALIDATE_PATH, "validating").await;
        let env = rkb_envtest::shared().await;
        fixture::install(env, false).await;
        through_api_server(env, "dry-run create, no admission webhooks").await;
        fixture::install(env, true).await;
        through_api_server(env, "dry-run create, defaulting + validating webhooks").await;
    });
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{what}: n={} p50={:.3} ms p99={:.3} ms max={:.3} ms",
        times.len(),
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
    );
}

async fn local_client(path: &str, what: &str) {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(served().certs.ca_pem().as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = ClientConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let stream = tokio::net::TcpStream::connect(served().addr).await.unwrap();
    let stream = TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), stream)
        .await
        .unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let body = Bytes::from(
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "0c4d5a10-6b4f-4d1e-9f38-2a1c2e8f0001",
                "kind": {"group": GROUP, "version": "v2", "kind": "Cache"},
                "resource": {"group": GROUP, "version": "v2", "resource": "caches"},
                "name": "c", "namespace": "default", "operation": "CREATE",
                "userInfo": {"username": "bench"},
                "object": {
                    "apiVersion": format!("{GROUP}/v2"), "kind": "Cache",
                    "metadata": {"name": "c", "namespace": "default"},
                    "spec": {"image": "memcached:1.6"}
                }
            }
        }))
        .unwrap(),
    );
    let mut times = Vec::with_capacity(N);
    for _ in 0..N {
        let request = http::Request::post(path)
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::new(body.clone()))
            .unwrap();
        let started = Instant::now();
        sender.ready().await.unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), 200);
        response.into_body().collect().await.unwrap();
        times.push(started.elapsed());
    }
    report(&format!("local client, {what} review"), times);
}

async fn through_api_server(env: &rkb_envtest::Environment, what: &str) {
    let namespace = env.create_namespace().await.unwrap();
    let api = Api::<v2::Cache>::namespaced(env.client(), &namespace);
    let params = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let cache = v2::Cache::new(
        "bench",
        v2::CacheSpec {
            replicas: None,
            image: "memcached:1.6".into(),
            tls: None,
        },
    );
    let mut times = Vec::with_capacity(N);
    for _ in 0..N {
        let started = Instant::now();
        api.create(&params, &cache).await.unwrap();
        times.push(started.elapsed());
    }
    report(&format!("API server, {what}"), times);
}
