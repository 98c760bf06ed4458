//! The manager binary against a real API server (envtest): leader election between two
//! replicas (hand-over on SIGTERM, take-over after the lease expires on SIGKILL or when
//! the leader's API server stops answering), `/healthz` and `/readyz`, metrics behind a
//! real TokenReview and SubjectAccessReview, and graceful shutdown mid-reconcile.
//!
//! Every manager here is a `memcached-example` process acting as the operator's
//! ServiceAccount with `config/default`'s RBAC applied (its ClusterRole, its
//! leader-election Role, its metrics-auth ClusterRole), so the API server's authorizer
//! judges its requests as in a cluster.
//!
//! The tests take turns ([`SERIAL`]): each manager reconciles every namespace, so two
//! tests' managers would reconcile each other's objects.
//!
//! These tests run without kube-controller-manager and there is no kubelet: the Deployments
//! the operator creates never get pods, which these tests do not need.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use kube::api::{ObjectMeta, PostParams};
use kube::config::{AuthInfo, Kubeconfig};
use kube::{Api, CustomResourceExt, ResourceExt};
use memcached_example::api::cache::v1alpha1::Memcached;
use rkb_runtime::testing::envtest::{self, Environment, WebhookCerts};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::sync::watch;

/// Where `config/default` puts the manager, its ServiceAccount and its Lease Role.
const NAMESPACE: &str = "memcached-example-system";
const ACCOUNT: &str = "memcached-example-controller-manager";
const METRICS_READER: &str = "memcached-example-metrics-reader";

/// Leader-election timing for the tests: the defaults' proportions (15 s, 10 s, 2 s)
/// shrunk so that a take-over after expiry takes seconds.
const LEASE: Duration = Duration::from_secs(4);
const RENEW: Duration = Duration::from_secs(3);
const RETRY: Duration = Duration::from_millis(500);

/// Waits for conditions that should hold within moments; generous for a loaded CI machine.
const WAIT: Duration = Duration::from_secs(60);
/// What a loaded 2-core machine may add to a timing bound (scheduling, process start).
const SLACK: Duration = Duration::from_secs(3);

#[path = "manager/attack.rs"]
mod attack;

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What every test needs once: the CRD, the operator's RBAC and a token of its account.
struct Setup {
    token: String,
    api_server: SocketAddr,
}

async fn setup() -> &'static Setup {
    static SETUP: tokio::sync::OnceCell<Setup> = tokio::sync::OnceCell::const_new();
    SETUP
        .get_or_init(|| async {
            let env = envtest::shared().await;
            env.apply().crds([Memcached::crd()]).await.unwrap();
            let config_default = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default");
            // Applies config/default's RBAC and waits until the authorizer knows it.
            env.operator_client(&config_default).await.unwrap();
            let token = env.service_account_token(NAMESPACE, ACCOUNT).await.unwrap();
            let url = env.config().cluster_url.clone();
            let api_server = format!("{}:{}", url.host().unwrap(), url.port_u16().unwrap_or(443))
                .parse()
                .expect("envtest's API server listens on an IP address");
            Setup { token, api_server }
        })
        .await
}

/// A kubeconfig for the operator's ServiceAccount, to the API server or to `proxy`.
fn kubeconfig(env: &Environment, setup: &Setup, name: &str, proxy: Option<&Proxy>) -> PathBuf {
    let mut config = Kubeconfig::read_from(env.kubeconfig_path()).unwrap();
    if let Some(proxy) = proxy {
        for cluster in config
            .clusters
            .iter_mut()
            .filter_map(|c| c.cluster.as_mut())
        {
            // The same IP as the API server's, so its certificate still matches.
            cluster.server = Some(format!("https://{}", proxy.addr));
        }
    }
    for user in &mut config.auth_infos {
        user.auth_info = Some(AuthInfo {
            token: Some(setup.token.clone().into()),
            ..Default::default()
        });
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("manager-{}-{name}.kubeconfig", std::process::id()));
    std::fs::write(&path, serde_yaml_ng::to_string(&config).unwrap()).unwrap();
    path
}

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{prefix}-{nanos:x}")
}

/// The flags of a replica that elects a leader on the Lease `lease`.
fn leader_flags(lease: &str) -> Vec<String> {
    let secs = |d: Duration| format!("{}ms", d.as_millis());
    vec![
        "--leader-elect".into(),
        format!("--leader-election-id={lease}"),
        format!("--leader-election-namespace={NAMESPACE}"),
        format!("--leader-election-lease-duration={}", secs(LEASE)),
        format!("--leader-election-renew-deadline={}", secs(RENEW)),
        format!("--leader-election-retry-period={}", secs(RETRY)),
    ]
}

/// One line the manager logged (JSON), and when the test read it.
#[derive(Clone, Debug)]
struct Line {
    at: Instant,
    json: Value,
}

impl Line {
    fn message(&self) -> &str {
        self.json["message"].as_str().unwrap_or_default()
    }

    fn is(&self, message: &str) -> bool {
        self.message().starts_with(message)
    }

    /// A "reconciled" line for the Memcached `namespace/name`.
    fn reconciled(&self, namespace: &str, name: &str) -> bool {
        // kube's ObjectRef prints `Memcached.v1alpha1.cache.example.com/<name>.<namespace>`.
        self.is("reconciled")
            && self.json["object"]
                .as_str()
                .is_some_and(|o| o.ends_with(&format!("/{name}.{namespace}")))
    }
}

/// The webhook server's test certificate, shared by every manager of this binary.
fn webhook_certs() -> &'static WebhookCerts {
    static WEBHOOK_CERTS: OnceLock<WebhookCerts> = OnceLock::new();
    WEBHOOK_CERTS.get_or_init(|| WebhookCerts::generate().unwrap())
}

/// A `memcached-example` process and what it logged.
struct Manager {
    name: String,
    /// Removed when the manager is dropped: it holds a token.
    kubeconfig: PathBuf,
    child: Child,
    started: Instant,
    lines: Arc<Mutex<Vec<Line>>>,
}

impl Manager {
    /// Starts the manager as `name` (its `HOSTNAME`, so its Lease identity starts with
    /// `<name>_`) with probes and metrics on free ports.
    fn start(name: &str, kubeconfig: &Path, flags: &[String]) -> Self {
        // The manager serves the webhooks too: on a free port, with a test certificate.
        let certs = webhook_certs();
        let mut command = Command::new(env!("CARGO_BIN_EXE_memcached-example"));
        command
            .args([
                "--log-format=json",
                "--health-probe-bind-address=127.0.0.1:0",
                "--metrics-bind-address=127.0.0.1:0",
                "--webhook-bind-address=127.0.0.1:0",
            ])
            .arg(format!("--webhook-cert-path={}", certs.dir().display()))
            .args(flags)
            .env("KUBECONFIG", kubeconfig)
            .env("HOSTNAME", name)
            .env("RUST_LOG", "info")
            .env_remove("POD_NAMESPACE")
            .env_remove("LOG_FORMAT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let started = Instant::now();
        let mut child = command
            .spawn()
            .expect("the memcached-example binary starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().unwrap();
        tokio::spawn({
            let lines = lines.clone();
            async move {
                let mut reader = BufReader::new(stdout).lines();
                while let Ok(Some(text)) = reader.next_line().await {
                    let json = serde_json::from_str(&text)
                        .unwrap_or_else(|_| serde_json::json!({ "message": text }));
                    lines.lock().unwrap().push(Line {
                        at: Instant::now(),
                        json,
                    });
                }
            }
        });
        Self {
            name: name.into(),
            kubeconfig: kubeconfig.to_owned(),
            child,
            started,
            lines,
        }
    }

    fn lines(&self) -> Vec<Line> {
        self.lines.lock().unwrap().clone()
    }

    fn find(&self, matches: impl Fn(&Line) -> bool) -> Option<Line> {
        self.lines().into_iter().find(matches)
    }

    fn log(&self) -> String {
        let lines: Vec<String> = self.lines().iter().map(|l| l.json.to_string()).collect();
        format!("--- {} logged:\n{}", self.name, lines.join("\n"))
    }

    /// Waits until the manager logs a line that `matches`.
    async fn wait_for(&self, what: &str, matches: impl Fn(&Line) -> bool) -> Line {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(line) = self.find(&matches) {
                return line;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not log {what} within {WAIT:?}\n{}",
                self.name,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn wait_for_message(&self, message: &str) -> Line {
        self.wait_for(message, |l| l.is(message)).await
    }

    /// The address a server listens on, from the manager's log (`what`: "health probes"
    /// or "metrics").
    async fn address(&self, what: &str) -> SocketAddr {
        let line = self.wait_for_message(&format!("serving {}", what)).await;
        line.json["addr"].as_str().unwrap().parse().unwrap()
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("the manager still runs").to_string();
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal} {pid}");
    }

    /// Waits for the process to exit.
    async fn exited(&mut self, within: Duration) -> ExitStatus {
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(status) => status.unwrap(),
            Err(_) => panic!(
                "{} did not exit within {within:?}\n{}",
                self.name,
                self.log()
            ),
        }
    }

    /// Resident memory, from /proc.
    fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.kubeconfig);
    }
}

/// A TCP proxy between a manager and the API server that the test can stall, as a hung
/// network path would: connections stay open, bytes are held. TLS passes through untouched.
struct Proxy {
    addr: SocketAddr,
    stall: watch::Sender<Stall>,
    accept: tokio::task::JoinHandle<()>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    /// Forward everything.
    No,
    /// Hold what the manager sends (new requests); answers and watch events still arrive.
    Requests,
    /// Hold both directions: the API server is black-holed.
    Everything,
}

impl Proxy {
    async fn start(upstream: SocketAddr, stall: Stall) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (sender, receiver) = watch::channel(stall);
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(pump(client_read, server_write, receiver.clone(), |s| {
                    s != Stall::No
                }));
                tokio::spawn(pump(server_read, client_write, receiver.clone(), |s| {
                    s == Stall::Everything
                }));
            }
        });
        Self {
            addr,
            stall: sender,
            accept,
        }
    }

    fn set(&self, stall: Stall) {
        self.stall.send_replace(stall);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // The pumps stop once the stall channel is gone.
        self.accept.abort();
    }
}

async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut stall: watch::Receiver<Stall>,
    holds: fn(Stall) -> bool,
) {
    let mut buffer = vec![0; 16 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if stall.wait_for(|s| !holds(*s)).await.is_err() {
            break;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// `GET path` over HTTP/1.1 (TLS when `tls`), with a bearer token if given: the status
/// and the body.
async fn get(addr: SocketAddr, path: &str, tls: bool, token: Option<&str>) -> (u16, String) {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{auth}\r\n");
    let stream = TcpStream::connect(addr).await.unwrap();
    let mut response = Vec::new();
    if tls {
        let connector = tokio_rustls::TlsConnector::from(Arc::new(any_certificate()));
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut stream = connector.connect(name, stream).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        // A peer that closes without close_notify ends the read with an error; what
        // arrived is complete (Connection: close).
        let _ = stream.read_to_end(&mut response).await;
    } else {
        let mut stream = stream;
        stream.write_all(request.as_bytes()).await.unwrap();
        stream.read_to_end(&mut response).await.unwrap();
    }
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    let body = response
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_owned());
    (status, body)
}

/// The manager's metrics certificate is self-signed (no `--metrics-cert-path`), so the
/// scraper trusts any certificate; the handshake signatures are still checked.
fn any_certificate() -> rustls::ClientConfig {
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{DigitallySignedStruct, SignatureScheme};

    #[derive(Debug)]
    struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

    impl ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _: &CertificateDer<'_>,
            _: &[CertificateDer<'_>],
            _: &ServerName<'_>,
            _: &[u8],
            _: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    }

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth()
}

/// Polls `GET path` until it answers `status`; returns when it did.
async fn wait_for_status(addr: SocketAddr, path: &str, status: u16) -> Instant {
    let deadline = Instant::now() + WAIT;
    loop {
        let (answer, body) = get(addr, path, false, None).await;
        if answer == status {
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{path} still answers {answer} after {WAIT:?}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn create_memcached(env: &Environment, namespace: &str, name: &str) {
    let yaml = format!(
        "apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata:\n  name: {name}\nspec:\n  size: 1\n"
    );
    env.apply().namespace(namespace).yaml(&yaml).await.unwrap();
}

async fn holder(env: &Environment, lease: &str) -> Option<String> {
    let lease = Api::<Lease>::namespaced(env.client(), NAMESPACE)
        .get_opt(lease)
        .await
        .unwrap()?;
    lease.spec?.holder_identity.filter(|h| !h.is_empty())
}

async fn wait_for_holder(env: &Environment, lease: &str, replica: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let current = holder(env, lease).await;
        if current
            .as_deref()
            .is_some_and(|h| h.starts_with(&format!("{replica}_")))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "Lease {lease} is held by {current:?}, not {replica}, after {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Two replicas on one Lease; the first leads, the second waits as a ready standby.
async fn two_replicas(
    env: &Environment,
    setup: &Setup,
    lease: &str,
    first_proxy: Option<&Proxy>,
) -> (Manager, Manager) {
    let flags = leader_flags(lease);
    let a = Manager::start(
        "replica-a",
        &kubeconfig(env, setup, &format!("{lease}-a"), first_proxy),
        &flags,
    );
    a.wait_for_message("became the leader").await;
    wait_for_holder(env, lease, "replica-a").await;
    let probes = a.address("health probes").await;
    let ready = wait_for_status(probes, "/readyz", 200).await;
    eprintln!(
        "figure: leader ready {:?} after start (RSS {:?} KiB)",
        ready - a.started,
        a.rss_kib()
    );

    let b = Manager::start(
        "replica-b",
        &kubeconfig(env, setup, &format!("{lease}-b"), None),
        &flags,
    );
    b.wait_for_message("waiting to become the leader").await;
    // A standby is live and ready: it has no controllers to sync (see health.rs).
    let probes = b.address("health probes").await;
    assert_eq!(get(probes, "/healthz", false, None).await.0, 200);
    assert_eq!(get(probes, "/readyz", false, None).await.0, 200);
    eprintln!(
        "figure: RSS leader {:?} KiB, standby {:?} KiB",
        a.rss_kib(),
        b.rss_kib()
    );
    (a, b)
}

/// No reconcile of `old` after `new` became the leader, and `new` none before.
fn assert_one_reconciler_at_a_time(old: &Manager, new: &Manager, new_leads_at: Instant) {
    for line in old.lines().iter().filter(|l| l.is("reconciled")) {
        assert!(
            line.at < new_leads_at,
            "{} reconciled after {} became the leader\n{}\n{}",
            old.name,
            new.name,
            old.log(),
            new.log()
        );
    }
    let new_became = new.find(|l| l.is("became the leader")).unwrap();
    for line in new.lines().iter().filter(|l| l.is("reconciled")) {
        assert!(
            line.at >= new_became.at,
            "{} reconciled before it became the leader\n{}",
            new.name,
            new.log()
        );
    }
}

#[tokio::test]
async fn sigterm_hands_the_lease_over_at_once() {
    let _serial = SERIAL.lock().await;
    let env = envtest::shared().await;
    let setup = setup().await;
    let namespace = env.create_namespace().await.unwrap();
    let lease = unique("sigterm");
    let (mut a, b) = two_replicas(env, setup, &lease, None).await;

    create_memcached(env, &namespace, "first").await;
    a.wait_for("first reconciled", |l| l.reconciled(&namespace, "first"))
        .await;

    let stopped = Instant::now();
    a.signal("TERM");
    let status = a.exited(WAIT).await;
    assert!(status.success(), "{status}\n{}", a.log());
    a.wait_for_message("released the leader Lease").await;
    let took_over = b.wait_for_message("became the leader").await.at;
    wait_for_holder(env, &lease, "replica-b").await;
    eprintln!("figure: SIGTERM failover {:?}", took_over - stopped);
    // Released, not expired: the standby takes over within its retry period, well
    // before the lease duration.
    assert!(
        took_over - stopped < LEASE,
        "took over {:?} after SIGTERM",
        took_over - stopped
    );

    create_memcached(env, &namespace, "second").await;
    b.wait_for("second reconciled", |l| l.reconciled(&namespace, "second"))
        .await;
    assert_one_reconciler_at_a_time(&a, &b, took_over);
}

#[tokio::test]
async fn sigkill_lets_the_standby_take_over_once_the_lease_expires() {
    let _serial = SERIAL.lock().await;
    let env = envtest::shared().await;
    let setup = setup().await;
    let namespace = env.create_namespace().await.unwrap();
    let lease = unique("sigkill");
    let (mut a, b) = two_replicas(env, setup, &lease, None).await;

    create_memcached(env, &namespace, "first").await;
    a.wait_for("first reconciled", |l| l.reconciled(&namespace, "first"))
        .await;

    let killed = Instant::now();
    a.child.start_kill().unwrap();
    a.exited(WAIT).await;
    let took_over = b.wait_for_message("became the leader").await.at;
    wait_for_holder(env, &lease, "replica-b").await;
    let failover = took_over - killed;
    eprintln!("figure: SIGKILL failover {failover:?}");
    // The last renewal landed about a retry period before the kill at most, and the
    // standby waits a whole lease duration from when it saw it (up to a retry period
    // later): a take-over before LEASE - 2 x RETRY would not have waited for expiry.
    assert!(
        failover >= LEASE - 2 * RETRY,
        "took over {failover:?} after SIGKILL, before the lease expired"
    );
    assert!(
        failover <= LEASE + 2 * RETRY + SLACK,
        "took over only {failover:?} after SIGKILL"
    );

    create_memcached(env, &namespace, "second").await;
    b.wait_for("second reconciled", |l| l.reconciled(&namespace, "second"))
        .await;
    assert_one_reconciler_at_a_time(&a, &b, took_over);
}

/// The leader's API server stops answering (a network partition): it must stop
/// reconciling within the renew deadline, before a standby can take over, and exit
/// (non-zero, to restart as a standby) even though its requests hang.
#[tokio::test]
async fn a_black_holed_leader_stops_before_the_standby_takes_over() {
    let _serial = SERIAL.lock().await;
    let env = envtest::shared().await;
    let setup = setup().await;
    let namespace = env.create_namespace().await.unwrap();
    let lease = unique("blackhole");
    let proxy = Proxy::start(setup.api_server, Stall::No).await;
    let (mut a, b) = two_replicas(env, setup, &lease, Some(&proxy)).await;
    create_memcached(env, &namespace, "first").await;
    a.wait_for("first reconciled", |l| l.reconciled(&namespace, "first"))
        .await;

    let cut = Instant::now();
    proxy.set(Stall::Everything);
    let lost = a.wait_for_message("lost the leader Lease").await.at;
    let status = a.exited(WAIT).await;
    let exited = Instant::now();
    assert!(!status.success(), "{status}\n{}", a.log());
    let took_over = b.wait_for_message("became the leader").await.at;
    eprintln!(
        "figure: black-holed leader stopped leading {:?} after the cut, exited {:?} after; standby took over {:?} after the cut",
        lost - cut,
        exited - lost,
        took_over - cut
    );
    assert!(
        lost < took_over,
        "the standby took over {:?} before the old leader stopped\n{}\n{}",
        lost - took_over,
        a.log(),
        b.log()
    );
    assert!(
        lost - cut <= RENEW + SLACK,
        "stopped leading {:?} after the cut",
        lost - cut
    );
    // Releasing the Lease is time-boxed too (by the renew deadline): a hung request must
    // not keep the process, its probes saying "alive", from restarting.
    assert!(
        exited - lost <= RENEW + SLACK,
        "exited only {:?} after it stopped leading\n{}",
        exited - lost,
        a.log()
    );
    assert_one_reconciler_at_a_time(&a, &b, took_over);
    create_memcached(env, &namespace, "second").await;
    b.wait_for("second reconciled", |l| l.reconciled(&namespace, "second"))
        .await;
}

#[tokio::test]
async fn readyz_waits_for_the_caches_and_healthz_does_not() {
    let _serial = SERIAL.lock().await;
    let env = envtest::shared().await;
    let setup = setup().await;
    // Requests hang until the test lets them through, so the cache cannot sync yet.
    let proxy = Proxy::start(setup.api_server, Stall::Requests).await;
    let manager = Manager::start(
        "probes",
        &kubeconfig(env, setup, &unique("probes"), Some(&proxy)),
        &[],
    );
    let probes = manager.address("health probes").await;
    manager.wait_for_message("starting controller").await;
    assert_eq!(get(probes, "/healthz", false, None).await.0, 200);
    let (status, body) = get(probes, "/readyz", false, None).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("[-]controller/memcached"), "{body}");
    assert_eq!(get(probes, "/metrics", false, None).await.0, 404);

    proxy.set(Stall::No);
    let ready = wait_for_status(probes, "/readyz", 200).await;
    eprintln!("figure: ready {:?} after start", ready - manager.started);
    let (_, body) = get(probes, "/readyz", false, None).await;
    assert!(body.contains("[+]controller/memcached"), "{body}");
}

#[tokio::test]
async fn metrics_need_a_token_allowed_to_get_metrics() {
    let _serial = SERIAL.lock().await;
    let env = envtest::shared().await;
    let setup = setup().await;
    let namespace = env.create_namespace().await.unwrap();
    let reader = env
        .service_account_token(&namespace, "scraper")
        .await
        .unwrap();
    let stranger = env
        .service_account_token(&namespace, "stranger")
        .await
        .unwrap();
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(format!("scraper-{namespace}")),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: METRICS_READER.into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: "scraper".into(),
            namespace: Some(namespace.clone()),
            ..Default::default()
        }]),
    };
    Api::<ClusterRoleBinding>::all(env.client())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    // The manager caches a denial, so ask first only once the authorizer knows the binding.
    wait_until_allowed_to_scrape(env, &namespace, "scraper").await;

    let manager = Manager::start(
        "metrics",
        &kubeconfig(env, setup, &unique("metrics"), None),
        &[],
    );
    let metrics = manager.address("metrics").await;
    // The reconcile counters appear with the first reconcile: one of this test's own, so
    // that the scrape does not race the controller's start (it did on a loaded machine).
    create_memcached(env, &namespace, "scraped").await;
    manager
        .wait_for("its reconcile", |l| l.reconciled(&namespace, "scraped"))
        .await;
    let (status, body) = get(metrics, "/metrics", true, Some(&reader)).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("controller_runtime_reconcile_total"),
        "{body}"
    );
    assert_eq!(get(metrics, "/metrics", true, None).await.0, 401);
    assert_eq!(
        get(metrics, "/metrics", true, Some("not-a-token")).await.0,
        401
    );
    assert_eq!(get(metrics, "/metrics", true, Some(&stranger)).await.0, 403);
    // The operator's own token is authenticated but not bound to metrics-reader.
    assert_eq!(
        get(metrics, "/metrics", true, Some(&setup.token)).await.0,
        403
    );
}

async fn wait_until_allowed_to_scrape(env: &Environment, namespace: &str, account: &str) {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{namespace}:{account}")),
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some("/metrics".into()),
                verb: Some("get".into()),
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviews = Api::<SubjectAccessReview>::all(env.client());
    let deadline = Instant::now() + WAIT;
    loop {
        let answer = reviews
            .create(&PostParams::default(), &review)
            .await
            .unwrap();
        if answer.status.is_some_and(|s| s.allowed) {
            return;
        }
        assert!(Instant::now() < deadline, "the binding never took effect");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until plain-HTTP `/metrics` shows `sample`.
async fn wait_for_metric(metrics: SocketAddr, sample: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let (_, body) = get(metrics, "/metrics", false, None).await;
        if body.contains(sample) {
            return;
        }
        assert!(Instant::now() < deadline, "no {sample} in {body}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// SIGTERM while a reconcile waits on the API server: the manager takes no new work but
/// lets that reconcile finish, then exits 0.
#[tokio::test]
async fn sigterm_lets_the_reconcile_in_flight_finish_then_exits_0() {
    let _serial = SERIAL.lock().await;
    let env = envtest::shared().await;
    let setup = setup().await;
    let namespace = env.create_namespace().await.unwrap();
    // Earlier tests' objects, which the manager reconciles first.
    let earlier = Api::<Memcached>::all(env.client())
        .list(&Default::default())
        .await
        .unwrap();
    let proxy = Proxy::start(setup.api_server, Stall::No).await;
    let mut manager = Manager::start(
        "shutdown",
        &kubeconfig(env, setup, &unique("shutdown"), Some(&proxy)),
        // Plain metrics: reading them needs no TokenReview through the stalled proxy.
        &["--metrics-secure=false".into()],
    );
    let probes = manager.address("health probes").await;
    let metrics = manager.address("metrics").await;
    wait_for_status(probes, "/readyz", 200).await;
    // Idle before the test's own object, so that its reconcile is the one in flight.
    for object in &earlier {
        let (namespace, name) = (object.namespace().unwrap(), object.name_any());
        manager
            .wait_for(&format!("{namespace}/{name} reconciled"), |l| {
                l.reconciled(&namespace, &name)
            })
            .await;
    }
    wait_for_metric(
        metrics,
        r#"controller_runtime_active_workers{controller="memcached"} 0"#,
    )
    .await;

    // The reconcile's first request hangs in the proxy; the watch event still arrives.
    proxy.set(Stall::Requests);
    create_memcached(env, &namespace, "slow").await;
    wait_for_metric(
        metrics,
        r#"controller_runtime_active_workers{controller="memcached"} 1"#,
    )
    .await;

    manager.signal("TERM");
    manager
        .wait_for_message("shutting down: finishing in-flight reconciles")
        .await;
    assert!(
        manager.child.try_wait().unwrap().is_none(),
        "exited with a reconcile in flight\n{}",
        manager.log()
    );
    proxy.set(Stall::No);
    let status = manager.exited(WAIT).await;
    assert!(status.success(), "{status}\n{}", manager.log());
    assert!(
        manager.find(|l| l.reconciled(&namespace, "slow")).is_some(),
        "the reconcile in flight did not finish\n{}",
        manager.log()
    );
    // Written after SIGTERM, by the reconcile that was let finish.
    Api::<Deployment>::namespaced(env.client(), &namespace)
        .get("slow")
        .await
        .unwrap();
}
