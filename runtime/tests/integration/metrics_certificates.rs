//! The metrics server's certificate the manager makes and rotates itself
//! (`rkb_runtime::certs::MetricsCertificates`), on a real API server (envtest): a scraper
//! that trusts only the Secret's `ca.crt` and checks the metrics Service's DNS name, as
//! the scaffolded ServiceMonitor does, scrapes with a ServiceAccount token as Prometheus
//! does.
//!
//! envtest has no Service routing: the scraper connects to 127.0.0.1 and asks for the
//! Service's name in the handshake (the ServiceMonitor's `serverName`). Run with
//! `--nocapture` to see the figures.

use crate::running;
use running::Running;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser as _;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use kube::api::{ObjectMeta, Patch, PatchParams};
use kube::{Api, Client};
use rkb_runtime::certs::MetricsCertificates;
use rkb_runtime::manager::{Args, Manager};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::client::WebPkiServerVerifier;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_util::sync::CancellationToken;

const SECRET: &str = "metrics-certs";
const SERVICE: &str = "certs-test-controller-manager-metrics-service";
const WAIT: Duration = Duration::from_secs(60);
const MAKE_RUN_SECRET: &str = "make-run-metrics-server-cert";

fn certificates(namespace: &str) -> MetricsCertificates {
    MetricsCertificates::new(SECRET)
        .namespace(namespace)
        .service(SERVICE)
        // The test process is not in a cluster; it stands for the pod that is.
        .outside_a_cluster_too()
        .check_interval(Duration::from_millis(200))
        .propagation_delay(Duration::from_secs(1))
}

/// The name the ServiceMonitor verifies: `<service>.<namespace>.svc`.
fn server_name(namespace: &str) -> String {
    format!("{SERVICE}.{namespace}.svc")
}

impl Running {
    fn metrics_manager(
        client: Client,
        port: u16,
        namespace: &str,
        certs: MetricsCertificates,
    ) -> Self {
        let probe_port = rkb_envtest::free_port("127.0.0.1");
        let args = Args::parse_from([
            "manager".to_owned(),
            format!("--metrics-bind-address=127.0.0.1:{port}"),
            format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
            "--leader-elect".to_owned(),
            format!("--leader-election-namespace={namespace}"),
            "--leader-election-id=metrics-certs-test".to_owned(),
            "--leader-election-lease-duration=4s".to_owned(),
            "--leader-election-renew-deadline=3s".to_owned(),
            "--leader-election-retry-period=1s".to_owned(),
        ]);
        let started = Instant::now();
        let manager = Manager::new("certs-test", client, args).metrics_certificates(certs);
        Running::spawn(manager, probe_port, started)
    }
}

/// A scraper's token: the ServiceAccount `namespace/scraper`, allowed to `get` `/metrics`
/// (what the metrics-reader ClusterRole grants).
async fn scraper_token(env: &rkb_envtest::Environment, namespace: &str) -> String {
    let admin = env.client();
    let name = format!("{namespace}-scraper");
    let apply = PatchParams::apply("metrics-certs-test").force();
    let role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            non_resource_urls: Some(vec!["/metrics".into()]),
            verbs: vec!["get".into()],
            ..Default::default()
        }]),
        ..Default::default()
    };
    Api::<ClusterRole>::all(admin.clone())
        .patch(&name, &apply, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: name.clone(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: "scraper".into(),
            namespace: Some(namespace.into()),
            ..Default::default()
        }]),
    };
    Api::<ClusterRoleBinding>::all(admin)
        .patch(&name, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    env.service_account_token(namespace, "scraper")
        .await
        .unwrap()
}

fn pem_certificates(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(Result::unwrap)
        .collect()
}

/// One scrape as Prometheus makes it with the scaffolded ServiceMonitor: TLS verified
/// against `ca_bundle` (the Secret's `ca.crt`) for `name` (its `serverName`), the bearer
/// token, `GET /metrics`. The response's status line and the certificate presented, or
/// what failed.
async fn scrape(
    port: u16,
    ca_bundle: &str,
    name: &str,
    token: &str,
) -> Result<(String, CertificateDer<'static>), String> {
    let mut roots = RootCertStore::empty();
    for cert in pem_certificates(ca_bundle) {
        roots.add(cert).map_err(|e| e.to_string())?;
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let server = ServerName::try_from(name.to_owned()).map_err(|e| e.to_string())?;
    let mut tls = TlsConnector::from(Arc::new(config))
        .connect(server, stream)
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let presented = tls.get_ref().1.peer_certificates().unwrap()[0]
        .clone()
        .into_owned();
    let request = format!(
        "GET /metrics HTTP/1.1\r\nhost: {name}\r\nauthorization: Bearer {token}\r\nconnection: close\r\n\r\n"
    );
    tls.write_all(request.as_bytes())
        .await
        .map_err(|e| format!("request: {e}"))?;
    let mut response = Vec::new();
    // The answer counts, not how the connection ends (with or without close_notify).
    let _ = tls.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response);
    let status = response.lines().next().unwrap_or_default().to_owned();
    Ok((status, presented))
}

async fn wait_for<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: not within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The Secret's values as text.
async fn secret(admin: &Client, namespace: &str) -> Option<BTreeMap<String, String>> {
    let secret = Api::<Secret>::namespaced(admin.clone(), namespace)
        .get_opt(SECRET)
        .await
        .unwrap()?;
    Some(
        secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
            .collect(),
    )
}

/// Waits for the first scrape that verifies against the Secret's `ca.crt` and is answered
/// 200; returns the Secret then.
async fn first_verified_scrape(
    admin: &Client,
    namespace: &str,
    port: u16,
    token: &str,
) -> BTreeMap<String, String> {
    wait_for("a verified scrape", async || {
        let stored = secret(admin, namespace).await?;
        let (status, _) = scrape(port, &stored["ca.crt"], &server_name(namespace), token)
            .await
            .ok()?;
        status.starts_with("HTTP/1.1 200").then_some(stored)
    })
    .await
}

#[tokio::test]
async fn the_metrics_certificate_verifies_against_the_secrets_ca_for_the_service_name() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let token = scraper_token(env, &namespace).await;
    let port = rkb_envtest::free_port("127.0.0.1");

    let manager =
        Running::metrics_manager(admin.clone(), port, &namespace, certificates(&namespace));
    let stored = first_verified_scrape(&admin, &namespace, port, &token).await;
    eprintln!(
        "figure: manager start to first verified scrape (self-managed metrics certificate): {:?}",
        manager.started.elapsed()
    );

    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    );
    let secret_object = Api::<Secret>::namespaced(admin.clone(), &namespace)
        .get(SECRET)
        .await
        .unwrap();
    assert_eq!(secret_object.type_.as_deref(), Some("kubernetes.io/tls"));
    // The certificate of the Secret, for both of the Service's names and no other.
    for name in [
        server_name(&namespace),
        format!("{SERVICE}.{namespace}.svc.cluster.local"),
    ] {
        let (status, presented) = scrape(port, &stored["ca.crt"], &name, &token)
            .await
            .unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{name}: {status}");
        assert_eq!(presented, pem_certificates(&stored["tls.crt"])[0]);
    }
    let error = scrape(port, &stored["ca.crt"], "localhost", &token)
        .await
        .unwrap_err();
    assert!(error.contains("handshake"), "{error}");
    // Another CA is not trusted: the scrape verifies for real.
    let other = another_ca();
    let error = scrape(port, &other, &server_name(&namespace), &token)
        .await
        .unwrap_err();
    assert!(error.contains("handshake"), "{error}");

    let report = manager.readyz().await;
    assert!(
        report.contains("HTTP/1.1 200") && report.contains("[+]metrics-certificates ok"),
        "{report}"
    );
    manager.stop().await;
}

/// A CA the manager did not make (a self-signed CA certificate, without its key).
fn another_ca() -> String {
    include_str!("fixture/other-ca.pem").to_owned()
}

#[tokio::test]
async fn a_rotation_of_the_metrics_ca_and_certificate_under_steady_scrapes_fails_none() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let token = scraper_token(env, &namespace).await;
    let port = rkb_envtest::free_port("127.0.0.1");
    // The CA rotates when 10 s are left of its 30, the serving certificate every 8 s.
    let certs = certificates(&namespace).validity(Duration::from_secs(30), Duration::from_secs(12));
    let manager = Running::metrics_manager(admin.clone(), port, &namespace, certs);
    let first = first_verified_scrape(&admin, &namespace, port, &token).await;
    let first_ca = pem_certificates(&first["ca.crt"]).remove(0);

    // The scrapers' `ca.crt`, as Prometheus has it: re-read from the Secret every half
    // second (the Prometheus Operator and its config reloader, faster than in a cluster
    // but later than the Secret, as there). The propagation delay (1 s) covers that lag.
    let stop = CancellationToken::new();
    let trusted = Arc::new(std::sync::RwLock::new(first["ca.crt"].clone()));
    let refresher = {
        let (admin, namespace, stop, trusted) = (
            admin.clone(),
            namespace.clone(),
            stop.clone(),
            trusted.clone(),
        );
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if let Some(now) = secret(&admin, &namespace).await {
                    *trusted.write().unwrap() = now["ca.crt"].clone();
                }
            }
        })
    };
    let (sent, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
    let presented = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let scrapers: Vec<_> = (0..4)
        .map(|_| {
            let (namespace, stop, trusted, token) = (
                namespace.clone(),
                stop.clone(),
                trusted.clone(),
                token.clone(),
            );
            let (sent, failed, failures, presented) = (
                sent.clone(),
                failed.clone(),
                failures.clone(),
                presented.clone(),
            );
            tokio::spawn(async move {
                while !stop.is_cancelled() {
                    let ca = trusted.read().unwrap().clone();
                    sent.fetch_add(1, Ordering::Relaxed);
                    match scrape(port, &ca, &server_name(&namespace), &token).await {
                        Ok((status, cert)) if status.starts_with("HTTP/1.1 200") => {
                            presented.lock().unwrap().insert(cert.to_vec());
                        }
                        Ok((status, _)) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                            failures.lock().unwrap().push(status);
                        }
                        Err(error) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                            failures.lock().unwrap().push(error);
                        }
                    }
                }
            })
        })
        .collect();

    // Until the first CA has left the bundle: a new CA, then its certificate, then the
    // old CA's expiry.
    let started = Instant::now();
    let mut bundle_sizes = vec![1];
    wait_for("the first CA leaves the bundle", async || {
        let now = secret(&admin, &namespace).await?;
        let cas = pem_certificates(&now["ca.crt"]);
        if bundle_sizes.last() != Some(&cas.len()) {
            bundle_sizes.push(cas.len());
        }
        (!cas.contains(&first_ca)).then_some(())
    })
    .await;
    stop.cancel();
    for scraper in scrapers {
        scraper.await.unwrap();
    }
    refresher.await.unwrap();
    let (sent, failed) = (sent.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    let served = presented.lock().unwrap().len();
    eprintln!(
        "figure: metrics rotation under steady scrapes: {sent} scrapes sent, {failed} failed, \
         in {:?}; {served} serving certificates presented in turn; bundle sizes {bundle_sizes:?}",
        started.elapsed(),
    );
    assert_eq!(failed, 0, "{:?}", failures.lock().unwrap());
    assert!(sent > 100, "a steady stream: {sent}");
    assert!(served >= 3, "serving certificates renewed: {served}");
    assert!(
        bundle_sizes.contains(&2),
        "the new CA was trusted beside the old one: {bundle_sizes:?}"
    );
    manager.stop().await;
}

#[tokio::test]
async fn a_restarted_manager_serves_the_metrics_certificate_of_its_secret() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let token = scraper_token(env, &namespace).await;
    let port = rkb_envtest::free_port("127.0.0.1");
    let manager =
        Running::metrics_manager(admin.clone(), port, &namespace, certificates(&namespace));
    let before = first_verified_scrape(&admin, &namespace, port, &token).await;
    manager.stop().await;

    let manager =
        Running::metrics_manager(admin.clone(), port, &namespace, certificates(&namespace));
    // The scraper still has the old `ca.crt`: nothing new to trust after a restart.
    let took = wait_for("a scrape verified with the CA from before", async || {
        let (status, presented) = scrape(port, &before["ca.crt"], &server_name(&namespace), &token)
            .await
            .ok()?;
        status.starts_with("HTTP/1.1 200").then_some(presented)
    })
    .await;
    eprintln!(
        "figure: restart to first verified scrape, reusing the metrics Secret: {:?}",
        manager.started.elapsed()
    );
    assert_eq!(took, pem_certificates(&before["tls.crt"])[0]);
    assert_eq!(
        secret(&admin, &namespace).await.unwrap(),
        before,
        "nothing new"
    );
    manager.stop().await;
}

/// The RBAC a project lists for its metrics certificate: the Secret by name, and
/// `create` on Secrets, which Kubernetes cannot restrict by name; all in its namespace.
#[test]
fn the_metrics_rules_name_the_secret_and_only_create_goes_without_a_name() {
    let certs = MetricsCertificates::new("memcached-operator-metrics-server-cert")
        .service("memcached-operator-controller-manager-metrics-service");
    let rules = rkb_runtime::metrics_certificate_rules(&certs);
    for rule in &rules {
        rule.validate().unwrap();
        assert_eq!(rule.namespace.as_deref(), Some("system"), "{rule:?}");
        assert_eq!(rule.resources, ["secrets"], "{rule:?}");
        if rule.resource_names.is_empty() {
            assert_eq!(rule.verbs, ["create"], "{rule:?}");
        } else {
            assert_eq!(
                rule.resource_names,
                ["memcached-operator-metrics-server-cert"]
            );
        }
        eprintln!("figure: metrics rule {rule:?}");
    }
    assert_eq!(rules.len(), 2);
}

/// What the scaffolded `src/metrics_certs.rs` gives the manager.
fn make_run_certificates() -> MetricsCertificates {
    MetricsCertificates::new(MAKE_RUN_SECRET).service("make-run-controller-manager-metrics-service")
}

/// Log lines written while the test runs (a current-thread runtime: the manager's tasks
/// run on this thread too).
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        std::io::Write::write(&mut *self.0.lock().unwrap(), bytes)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn get(port: u16, path: &str) -> String {
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return String::new();
    };
    let request = format!("GET {path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n");
    let mut body = String::new();
    if stream.write_all(request.as_bytes()).await.is_ok() {
        let _ = stream.read_to_string(&mut body).await;
    }
    body
}

async fn until_ready(probe_port: u16) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let report = get(probe_port, "/readyz?verbose").await;
        if report.starts_with("HTTP/1.1 200") {
            return report;
        }
        assert!(Instant::now() < deadline, "not ready: {report}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Takes whatever certificate the server presents, to look at it afterwards.
#[derive(Debug)]
struct Anything;

impl ServerCertVerifier for Anything {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, tokio_rustls::rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, tokio_rustls::rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }
    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, tokio_rustls::rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        tokio_rustls::rustls::crypto::ring::default_provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The certificate the metrics server on `port` presents.
async fn presented(port: u16) -> CertificateDer<'static> {
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Anything))
        .with_no_client_auth();
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let tls = TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), stream)
        .await
        .unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0]
        .clone()
        .into_owned()
}

/// Whether `cert`, trusted as its own root (it is self-signed), is good for `name`.
fn self_signed_for(cert: &CertificateDer<'static>, name: &str) -> bool {
    let mut roots = RootCertStore::empty();
    roots.add(cert.clone()).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .unwrap();
    verifier
        .verify_server_cert(
            cert,
            &[],
            &ServerName::try_from(name.to_owned()).unwrap(),
            &[],
            UnixTime::now(),
        )
        .is_ok()
}

/// `make run` with `webhookCerts: self`: the scaffolded `main.rs` gives the manager its
/// metrics certificates, and the manager runs on a developer's machine against a cluster
/// (here envtest), where there is no metrics Service to name and no namespace of its own.
/// It must neither fail nor write a Secret into the kubeconfig context's namespace.
///
/// The test runs itself again as a child process without `KUBERNETES_SERVICE_HOST`, so
/// that it holds outside a cluster even when the tests run in a pod.
#[test]
fn make_run_with_self_managed_metrics_certificates_writes_no_secret_and_serves_localhost() {
    const CHILD: &str = "RKB_TEST_OUT_OF_CLUSTER";
    if std::env::var_os(CHILD).is_none() {
        // The test's name as the runner knows it: its module path without the crate's.
        let module = module_path!()
            .split_once("::")
            .map_or("", |(_, module)| module);
        let name = format!(
            "{module}::make_run_with_self_managed_metrics_certificates_writes_no_secret_and_serves_localhost"
        );
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name.as_str(), "--exact", "--nocapture"])
            .env(CHILD, "1")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            output.status.success() && said.contains("1 passed"),
            "{said}"
        );
        return;
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(make_run_outside_a_cluster());
}

async fn make_run_outside_a_cluster() {
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let logs = logs.clone();
            move || logs.clone()
        })
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let env = rkb_envtest::shared_by(module_path!()).await;
    let namespace = env.create_namespace().await.unwrap();
    // The kubeconfig context's namespace, where the manager would otherwise write.
    let mut config = env.config().clone();
    config.default_namespace = namespace.clone();
    let client = kube::Client::try_from(config).unwrap();
    let secrets = Api::<Secret>::namespaced(env.client(), &namespace);

    // `make run`: `cargo run -- $(RUN_ARGS)`, metrics off by default (the probe port
    // moved only so that tests run side by side).
    let probe_port = rkb_envtest::free_port("127.0.0.1");
    let args = Args::parse_from([
        "manager".to_owned(),
        format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
    ]);
    let manager = Manager::new("make-run", client.clone(), args)
        .metrics_certificates(make_run_certificates());
    let shutdown = manager.shutdown_token();
    let run = tokio::spawn(manager.run(vec![]));
    let report = until_ready(probe_port).await;
    assert!(!report.contains("metrics-certificates"), "{report}");
    assert!(secrets.get_opt(MAKE_RUN_SECRET).await.unwrap().is_none());
    shutdown.cancel();
    run.await.unwrap().unwrap();

    // `make run RUN_ARGS=--metrics-bind-address=:8443`: a self-signed certificate for
    // localhost, as without the option, no Secret, and the reason said once.
    let (probe_port, metrics_port) = (
        rkb_envtest::free_port("127.0.0.1"),
        rkb_envtest::free_port("127.0.0.1"),
    );
    let args = Args::parse_from([
        "manager".to_owned(),
        format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
        format!("--metrics-bind-address=127.0.0.1:{metrics_port}"),
    ]);
    let manager =
        Manager::new("make-run", client, args).metrics_certificates(make_run_certificates());
    let shutdown = manager.shutdown_token();
    let run = tokio::spawn(manager.run(vec![]));
    let report = until_ready(probe_port).await;
    assert!(!report.contains("metrics-certificates"), "{report}");
    let cert = presented(metrics_port).await;
    assert!(self_signed_for(&cert, "localhost"));
    assert!(!self_signed_for(
        &cert,
        &format!("make-run-controller-manager-metrics-service.{namespace}.svc")
    ));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(secrets.get_opt(MAKE_RUN_SECRET).await.unwrap().is_none());
    shutdown.cancel();
    run.await.unwrap().unwrap();
    let text = String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned();
    assert_eq!(
        text.matches("not in a cluster (no KUBERNETES_SERVICE_HOST)")
            .count(),
        1,
        "{text}"
    );
}

/// With exactly the rules `metrics_certificate_rules` gives (and leader election's, and
/// the metrics authentication's of config/rbac/metrics_auth_role.yaml), the manager
/// running as its own ServiceAccount makes the Secret and serves a certificate that
/// verifies: nothing more is needed.
#[tokio::test]
async fn with_exactly_its_rules_the_manager_keeps_the_metrics_certificate() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let token = scraper_token(env, &namespace).await;
    let port = rkb_envtest::free_port("127.0.0.1");
    let certs = certificates(&namespace);
    let rules = rkb_runtime::metrics_certificate_rules(&certs);
    let mut namespaced: Vec<PolicyRule> = rules.iter().map(|r| r.to_policy_rule()).collect();
    namespaced.push(PolicyRule {
        api_groups: Some(vec!["coordination.k8s.io".into()]),
        resources: Some(vec!["leases".into()]),
        verbs: vec!["get".into(), "create".into(), "update".into()],
        ..Default::default()
    });
    let reviews = |group: &str, resource: &str| PolicyRule {
        api_groups: Some(vec![group.into()]),
        resources: Some(vec![resource.into()]),
        verbs: vec!["create".into()],
        ..Default::default()
    };
    let cluster = vec![
        reviews("authentication.k8s.io", "tokenreviews"),
        reviews("authorization.k8s.io", "subjectaccessreviews"),
    ];
    let name = format!("{namespace}-operator");
    let meta = |namespace: Option<&str>| ObjectMeta {
        name: Some(name.clone()),
        namespace: namespace.map(str::to_owned),
        ..Default::default()
    };
    let subjects = Some(vec![Subject {
        kind: "ServiceAccount".into(),
        name: "operator".into(),
        namespace: Some(namespace.clone()),
        ..Default::default()
    }]);
    let role_ref = |kind: &str| RoleRef {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.clone(),
    };
    let apply = PatchParams::apply("metrics-certs-test").force();
    let role = Role {
        metadata: meta(Some(&namespace)),
        rules: Some(namespaced),
    };
    Api::<Role>::namespaced(admin.clone(), &namespace)
        .patch(&name, &apply, &Patch::Apply(&role))
        .await
        .unwrap();
    let binding = RoleBinding {
        metadata: meta(Some(&namespace)),
        role_ref: role_ref("Role"),
        subjects: subjects.clone(),
    };
    Api::<RoleBinding>::namespaced(admin.clone(), &namespace)
        .patch(&name, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    let cluster_role = ClusterRole {
        metadata: meta(None),
        rules: Some(cluster),
        ..Default::default()
    };
    Api::<ClusterRole>::all(admin.clone())
        .patch(&name, &apply, &Patch::Apply(&cluster_role))
        .await
        .unwrap();
    let cluster_binding = ClusterRoleBinding {
        metadata: meta(None),
        role_ref: role_ref("ClusterRole"),
        subjects,
    };
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch(&name, &apply, &Patch::Apply(&cluster_binding))
        .await
        .unwrap();
    let operator = env
        .service_account_client(&namespace, "operator")
        .await
        .unwrap();

    // The Role takes effect within moments; the manager retries until it does.
    let manager = Running::metrics_manager(operator, port, &namespace, certs);
    let stored = first_verified_scrape(&admin, &namespace, port, &token).await;
    assert!(stored.contains_key("ca.crt"));
    let report = wait_for("ready", async || {
        let report = manager.readyz().await;
        report.contains("HTTP/1.1 200").then_some(report)
    })
    .await;
    assert!(report.contains("[+]metrics-certificates ok"), "{report}");
    manager.stop().await;
}
