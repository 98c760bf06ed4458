//! A flood of made-up bearer tokens against the HTTPS metrics endpoint, with a real
//! TokenReview and SubjectAccessReview (envtest's kube-apiserver):
//!
//! - 10,000 requests, each with a random token, from 64 keep-alive connections;
//! - meanwhile a scraper with a valid token (a ServiceAccount bound to a metrics-reader
//!   ClusterRole) scrapes every 20 ms, and the operator's own client reads an object
//!   (standing for its Lease renewals) every 20 ms.
//!
//! It prints the TokenReviews the manager sent (counted in its client), the answers the
//! flood got, the process's peak RSS, and the scraper's and the operator's latencies idle
//! and during the flood. Only public API is used, so the same file runs on older rkb.
//!
//! `cargo bench -p rkb-manager --bench metrics_auth` (needs `KUBEBUILDER_ASSETS`, as the
//! tests do).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use clap::Parser;
use futures::future::BoxFuture;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use kube::api::{ObjectMeta, PostParams};
use kube::client::Body;
use kube::{Api, Client};
use rkb_manager::manager::{Args, Manager};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::{self, pki_types::ServerName};

const FLOOD: usize = 10_000;
const CONNECTIONS: usize = 64;
const PROBE_EVERY: Duration = Duration::from_millis(20);
const ACCOUNT: (&str, &str) = ("default", "bench-prometheus");

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let env = rkb_envtest::shared().await;
    let token = valid_token(env).await;

    // The manager serves HTTPS metrics with a certificate the clients trust.
    let certs = tempfile::tempdir().unwrap();
    let key = rcgen::generate_simple_self_signed(["localhost".to_owned()]).unwrap();
    std::fs::write(certs.path().join("tls.crt"), key.cert.pem()).unwrap();
    std::fs::write(
        certs.path().join("tls.key"),
        key.signing_key.serialize_pem(),
    )
    .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(key.cert.der().clone()).unwrap();
    let tls = TlsConnector::from(Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    ));

    let reviews = Arc::new(AtomicU64::new(0));
    let client = counting_reviews(env.client(), reviews.clone());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let args = Args::parse_from([
        "manager".to_owned(),
        "--health-probe-bind-address=0".to_owned(),
        format!("--metrics-bind-address=127.0.0.1:{port}"),
        format!("--metrics-cert-path={}", certs.path().display()),
        "--log-level=error".to_owned(),
    ]);
    let manager = Manager::new("bench", client.clone(), args);
    let shutdown = manager.shutdown_token();
    let running = tokio::spawn(manager.run([]));
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let connect = move || {
        let tls = tls.clone();
        async move { Connection::open(addr, &tls).await }
    };
    // The valid scraper's first request fills the cache, as Prometheus's first scrape.
    let mut scraper = loop {
        if let Ok(mut connection) = connect().await
            && connection.get(&token).await.is_ok_and(|s| s == 200)
        {
            break connection;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    let idle_scrapes = scrape_for(&mut scraper, &token, Duration::from_secs(2)).await;
    let idle_api = api_reads_for(&client, Duration::from_secs(2)).await;
    let rss_before = rss_kib("VmRSS");
    let reviews_before = reviews.load(Ordering::Relaxed);

    // The flood, with the scraper and the operator's reads going on meanwhile.
    let flooding = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let flooders: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (connect, next) = (connect.clone(), next.clone());
            tokio::spawn(async move {
                let mut answers = BTreeMap::<String, u64>::new();
                let mut connection = None;
                while next.fetch_add(1, Ordering::Relaxed) < FLOOD as u64 {
                    let token = uuid::Uuid::new_v4().simple().to_string();
                    if connection.is_none() {
                        connection = connect().await.ok();
                    }
                    let answer = match connection.as_mut() {
                        Some(c) => c.get(&token).await,
                        None => Err(std::io::Error::other("cannot connect")),
                    };
                    let answer = match answer {
                        Ok(status) => status.to_string(),
                        Err(error) => {
                            connection = None; // closed by the server: reconnect
                            format!("error: {}", error.kind())
                        }
                    };
                    *answers.entry(answer).or_default() += 1;
                }
                answers
            })
        })
        .collect();
    let busy_scrapes = tokio::spawn({
        let (flooding, token) = (flooding.clone(), token.clone());
        async move {
            let mut latencies = Vec::new();
            while flooding.load(Ordering::Relaxed) {
                latencies.extend(scrape_for(&mut scraper, &token, PROBE_EVERY * 5).await);
            }
            latencies
        }
    });
    let busy_api = tokio::spawn({
        let (flooding, client) = (flooding.clone(), client.clone());
        async move {
            let mut latencies = Vec::new();
            while flooding.load(Ordering::Relaxed) {
                latencies.extend(api_reads_for(&client, PROBE_EVERY * 5).await);
            }
            latencies
        }
    });
    let mut answers = BTreeMap::<String, u64>::new();
    for flooder in flooders {
        for (answer, n) in flooder.await.unwrap() {
            *answers.entry(answer).or_default() += n;
        }
    }
    let flood_time = started.elapsed();
    flooding.store(false, Ordering::Relaxed);
    let busy_scrapes = busy_scrapes.await.unwrap();
    let busy_api = busy_api.await.unwrap();
    let reviews_issued = reviews.load(Ordering::Relaxed) - reviews_before;

    println!(
        "flood: {FLOOD} requests with random tokens over {CONNECTIONS} connections in {flood_time:.2?}"
    );
    println!("  answers: {answers:?}");
    println!("  TokenReviews sent by the manager: {reviews_issued}");
    println!(
        "  RSS: {} MiB before the flood, peak {} MiB (VmHWM, whole bench process)",
        rss_before / 1024,
        rss_kib("VmHWM") / 1024
    );
    report("valid scraper, idle", &idle_scrapes);
    report("valid scraper, during the flood", &busy_scrapes);
    report("operator's API read, idle", &idle_api);
    report("operator's API read, during the flood", &busy_api);

    shutdown.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
}

/// A token of a ServiceAccount allowed to `get /metrics`.
async fn valid_token(env: &rkb_envtest::Environment) -> String {
    let client = env.client();
    let name = "bench-metrics-reader";
    let role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            non_resource_urls: Some(vec!["/metrics".into()]),
            verbs: vec!["get".into()],
            ..Default::default()
        }]),
        ..Default::default()
    };
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: name.into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: ACCOUNT.1.into(),
            namespace: Some(ACCOUNT.0.into()),
            ..Default::default()
        }]),
    };
    let _ = Api::<ClusterRole>::all(client.clone())
        .create(&PostParams::default(), &role)
        .await;
    let _ = Api::<ClusterRoleBinding>::all(client.clone())
        .create(&PostParams::default(), &binding)
        .await;
    let token = env
        .service_account_token(ACCOUNT.0, ACCOUNT.1)
        .await
        .unwrap();
    // RBAC reaches the authorizer's cache a moment later.
    let user = format!("system:serviceaccount:{}:{}", ACCOUNT.0, ACCOUNT.1);
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user),
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some("/metrics".into()),
                verb: Some("get".into()),
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviews = Api::<SubjectAccessReview>::all(client);
    while !reviews
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .is_some_and(|s| s.allowed)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    token
}

/// Scrapes every [`PROBE_EVERY`] for `how_long`; returns each scrape's latency. A scrape
/// not answered 200 is reported: the valid scraper must always be served.
async fn scrape_for(scraper: &mut Connection, token: &str, how_long: Duration) -> Vec<Duration> {
    let until = Instant::now() + how_long;
    let mut latencies = Vec::new();
    while Instant::now() < until {
        let started = Instant::now();
        match scraper.get(token).await {
            Ok(200) => latencies.push(started.elapsed()),
            answer => println!("  the valid scraper got {answer:?}"),
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
    latencies
}

/// Reads an object as the operator every [`PROBE_EVERY`] for `how_long`.
async fn api_reads_for(client: &Client, how_long: Duration) -> Vec<Duration> {
    let namespaces = Api::<Namespace>::all(client.clone());
    let until = Instant::now() + how_long;
    let mut latencies = Vec::new();
    while Instant::now() < until {
        let started = Instant::now();
        namespaces.get("default").await.unwrap();
        latencies.push(started.elapsed());
        tokio::time::sleep(PROBE_EVERY).await;
    }
    latencies
}

fn report(what: &str, latencies: &[Duration]) {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    println!(
        "  {what}: n={} p50={:.2?} p99={:.2?} max={:.2?}",
        sorted.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

fn rss_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0)
}

/// One keep-alive HTTPS connection to the metrics endpoint.
struct Connection(BufReader<TlsStream<TcpStream>>);

impl Connection {
    async fn open(addr: std::net::SocketAddr, tls: &TlsConnector) -> std::io::Result<Self> {
        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").unwrap();
        Ok(Self(BufReader::new(tls.connect(name, tcp).await?)))
    }

    /// `GET /metrics` with `token`; the answer's status.
    async fn get(&mut self, token: &str) -> std::io::Result<u16> {
        let request = format!(
            "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\r\n"
        );
        self.0.get_mut().write_all(request.as_bytes()).await?;
        let mut line = String::new();
        if self.0.read_line(&mut line).await? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("not HTTP: {line:?}")))?;
        let mut length = 0;
        loop {
            line.clear();
            self.0.read_line(&mut line).await?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        self.0.read_exact(&mut body).await?;
        Ok(status)
    }
}

/// `client`, counting the TokenReviews it sends.
fn counting_reviews(client: Client, reviews: Arc<AtomicU64>) -> Client {
    let namespace = client.default_namespace().to_owned();
    Client::new(CountReviews { client, reviews }, namespace)
}

#[derive(Clone)]
struct CountReviews {
    client: Client,
    reviews: Arc<AtomicU64>,
}

impl tower::Service<http::Request<Body>> for CountReviews {
    type Response = http::Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Self::Response, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        if request.method() == http::Method::POST
            && Path::new(request.uri().path()).ends_with("tokenreviews")
        {
            self.reviews.fetch_add(1, Ordering::Relaxed);
        }
        let client = self.client.clone();
        Box::pin(async move { client.send(request).await })
    }
}
