//! The manager end to end, against a scripted API server (tower-test) for controllers and
//! the real one (envtest) for the Lease.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use clap::Parser;
use http::{Request, Response};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::PostParams;
use kube::client::Body;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client};
use serde_json::json;
use tokio::sync::Notify;
use tower_test::mock::{self, Handle};

use super::*;
// Port 0 is not exposed once bound by the manager: tests ask for a free one first.
use rkb_envtest::free_port;

const WAIT: Duration = Duration::from_secs(10);

/// Flags for tests: no servers, so that tests do not fight over ports.
fn args(extra: &[&str]) -> Args {
    let mut argv = vec![
        "manager",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
    ];
    argv.extend(extra);
    Args::parse_from(argv)
}

/// An API server that lists `objects` ConfigMaps and then holds every watch open.
fn config_map_api(objects: usize) -> (Client, tokio::sync::oneshot::Sender<()>) {
    let (service, mut handle): (_, Handle<Request<Body>, Response<Body>>) = mock::pair();
    let (list_now, list_gate) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut list_gate = Some(list_gate);
        let mut watches = Vec::new();
        while let Some((request, reply)) = handle.next_request().await {
            if request
                .uri()
                .query()
                .unwrap_or_default()
                .contains("watch=true")
            {
                watches.push(reply); // never answered: no changes
                continue;
            }
            if let Some(gate) = list_gate.take() {
                let _ = gate.await;
            }
            let items: Vec<_> = (0..objects)
                .map(|i| json!({"metadata": {"name": format!("cm-{i}"), "namespace": "default", "resourceVersion": "1"}}))
                .collect();
            let list = json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"resourceVersion": "1"}, "items": items});
            reply.send_response(Response::new(Body::from(
                serde_json::to_vec(&list).unwrap(),
            )));
        }
    });
    (Client::new(service, "default"), list_now)
}

async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

#[tokio::test]
async fn readiness_flips_once_the_controller_cache_is_synced() {
    let (client, list_now) = config_map_api(0);
    let manager = Manager::new("op", client.clone(), args(&[]));
    let readiness = manager.readiness().clone();
    let shutdown = manager.shutdown_token();
    let run = tokio::spawn(
        manager.run([Runnable::new("configmaps", |ctx: Context| async move {
            let controller = Controller::new(
                Api::<ConfigMap>::default_namespaced(ctx.client()),
                watcher::Config::default(),
            );
            ctx.run(
                controller,
                |_, _| async { Ok::<_, Never>(Action::await_change()) },
                |_, _, _| Action::await_change(),
                Arc::new(()),
            )
            .await
        })]),
    );

    eventually("the controller registered its check", || {
        !readiness.is_ready()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!readiness.is_ready(), "not ready before the initial list");
    list_now.send(()).unwrap();
    eventually("the cache is synced", || readiness.is_ready()).await;

    stop(shutdown, run).await;
}

#[tokio::test]
async fn shutdown_waits_for_in_flight_reconciles_and_takes_no_new_work() {
    let (client, list_now) = config_map_api(3);
    list_now.send(()).unwrap();
    let manager = Manager::new("op", client, args(&[]));
    let metrics = manager.metrics().clone();
    let shutdown = manager.shutdown_token();
    let started = Arc::new(Notify::new());
    let (reconciles, finished) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let run = tokio::spawn(manager.run([Runnable::new("configmaps", {
        let (started, reconciles, finished) =
            (started.clone(), reconciles.clone(), finished.clone());
        move |ctx: Context| async move {
            let controller = Controller::new(
                Api::<ConfigMap>::default_namespaced(ctx.client()),
                watcher::Config::default(),
            );
            // --concurrency=1: one object at a time, so two are still queued at shutdown.
            let reconcile = move |_, _| {
                let (started, reconciles, finished) =
                    (started.clone(), reconciles.clone(), finished.clone());
                async move {
                    reconciles.fetch_add(1, Ordering::SeqCst);
                    started.notify_one();
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    finished.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, Never>(Action::await_change())
                }
            };
            ctx.run(
                controller,
                reconcile,
                |_, _, _| Action::await_change(),
                Arc::new(()),
            )
            .await
        }
    })]));

    tokio::time::timeout(WAIT, started.notified())
        .await
        .expect("a reconcile started");
    stop(shutdown, run).await;
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "the in-flight reconcile finished"
    );
    assert_eq!(
        reconciles.load(Ordering::SeqCst),
        1,
        "queued objects were not started"
    );
    let text = metrics.encode();
    assert!(
        text.contains(
            r#"controller_runtime_reconcile_total{controller="configmaps",result="success"} 1"#
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_failing_controller_stops_the_manager_with_its_error() {
    let (client, _) = config_map_api(0);
    let manager = Manager::new("op", client, args(&[]));
    let error = manager
        .run([Runnable::new("broken", |_| async {
            anyhow::bail!("cannot list widgets: is the CRD installed?")
        })])
        .await
        .unwrap_err();
    assert_eq!(
        format!("{error:#}"),
        "controller broken failed: cannot list widgets: is the CRD installed?"
    );
}

// Leader election, against a real API server (envtest), each test with the Lease in a
// namespace of its own. Expiry is measured on the real clock, so these take a few real
// seconds.

const LEASE: &str = "op-leader";

fn leader_args(namespace: &str) -> Args {
    args(&[
        "--leader-elect",
        &format!("--leader-election-namespace={namespace}"),
        "--leader-election-lease-duration=2s",
        "--leader-election-renew-deadline=1s",
        "--leader-election-retry-period=100ms",
    ])
}

fn lease_held_by(holder: &str, duration_seconds: i32, namespace: &str) -> Lease {
    let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
    Lease {
        metadata: ObjectMeta {
            name: Some(LEASE.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(duration_seconds),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            lease_transitions: Some(0),
            ..Default::default()
        }),
    }
}

/// An admin client of the shared envtest API server, and a fresh namespace.
async fn api_server() -> (Client, String) {
    let env = rkb_envtest::shared().await;
    let namespace = env.create_namespace().await.expect("a test namespace");
    (env.client(), namespace)
}

/// Shuts a manager down and waits for its `run` to return `Ok`.
async fn stop(shutdown: CancellationToken, run: tokio::task::JoinHandle<anyhow::Result<()>>) {
    shutdown.cancel();
    tokio::time::timeout(WAIT, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// Sets its flag when dropped, i.e. when the task holding it ends or is aborted.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A runnable that records that it started, and stays until shutdown.
fn recorder(started: &Arc<AtomicBool>) -> Runnable {
    recorder_with_stop(started, &Arc::default())
}

/// Also records when it stopped, gracefully or aborted.
fn recorder_with_stop(started: &Arc<AtomicBool>, stopped: &Arc<AtomicBool>) -> Runnable {
    recorder_named("recorder", started, stopped)
}

fn recorder_named(name: &str, started: &Arc<AtomicBool>, stopped: &Arc<AtomicBool>) -> Runnable {
    let (started, stopped) = (started.clone(), stopped.clone());
    Runnable::new(name, move |ctx: Context| async move {
        let _stopped = SetOnDrop(stopped);
        started.store(true, Ordering::SeqCst);
        ctx.set_ready();
        ctx.shutdown().cancelled().await;
        Ok(())
    })
}

fn holder(lease: &Lease) -> Option<String> {
    lease.spec.as_ref().and_then(|s| s.holder_identity.clone())
}

#[tokio::test]
async fn a_standby_waits_for_the_lease_to_expire_then_leads_until_it_loses_it() {
    let (client, namespace) = api_server().await;
    let leases = Api::<Lease>::namespaced(client.clone(), &namespace);
    leases
        .create(
            &PostParams::default(),
            &lease_held_by("other-replica", 3, &namespace),
        )
        .await
        .unwrap();

    let manager = Manager::new("op", client, leader_args(&namespace));
    let metrics = manager.metrics().clone();
    let (started, stopped) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let run = tokio::spawn(manager.run([recorder_with_stop(&started, &stopped)]));
    let leading = || {
        metrics
            .encode()
            .contains(r#"leader_election_master_status{name="op-leader"} 1"#)
    };

    // The standby waits the lease duration (3 s) from when it first saw the Lease.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !started.load(Ordering::SeqCst),
        "controllers wait while another replica holds the lease"
    );
    assert!(
        metrics
            .encode()
            .contains(r#"leader_election_master_status{name="op-leader"} 0"#)
    );

    eventually("the expired lease is taken over", || {
        started.load(Ordering::SeqCst)
    })
    .await;
    assert!(leading());
    let lease = leases.get(LEASE).await.unwrap();
    assert!(
        holder(&lease).unwrap().contains('_'),
        "identity is <host>_<uuid>: {lease:?}"
    );

    // Another replica takes the lease (e.g. after this one was partitioned away). The
    // leader renews every retry period, so a renewal between get and replace is a
    // conflict: read again and retry.
    let mut usurped = lease;
    loop {
        let spec = usurped.spec.as_mut().unwrap();
        spec.holder_identity = Some("usurper".into());
        spec.renew_time = Some(MicroTime(k8s_openapi::jiff::Timestamp::now()));
        match leases
            .replace(LEASE, &PostParams::default(), &usurped)
            .await
        {
            Ok(_) => break,
            Err(kube::Error::Api(status)) if status.code == 409 => {
                usurped = leases.get(LEASE).await.unwrap();
            }
            Err(error) => panic!("cannot replace the Lease: {error}"),
        }
    }
    let error = tokio::time::timeout(WAIT, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert!(
        error.to_string().contains("lost the leader Lease"),
        "{error:#}"
    );
    assert!(
        stopped.load(Ordering::SeqCst),
        "controllers are stopped at once"
    );
    assert!(!leading());
}

#[tokio::test]
async fn the_leader_releases_the_lease_on_shutdown_so_a_standby_takes_over_at_once() {
    let (client, namespace) = api_server().await;
    let leases = Api::<Lease>::namespaced(client.clone(), &namespace);
    let manager = Manager::new("op", client, leader_args(&namespace));
    let shutdown = manager.shutdown_token();
    let started = Arc::new(AtomicBool::new(false));
    let run = tokio::spawn(manager.run([recorder(&started)]));

    eventually("a free lease is acquired", || {
        started.load(Ordering::SeqCst)
    })
    .await;
    assert!(holder(&leases.get(LEASE).await.unwrap()).is_some());
    stop(shutdown, run).await;
    let released = leases.get(LEASE).await.unwrap();
    assert_eq!(holder(&released), None, "released: {released:?}");
}

#[tokio::test]
async fn with_sharding_a_single_runnable_runs_on_one_replica_and_moves_when_it_goes() {
    let (client, namespace) = api_server().await;
    let namespace_flag = format!("--leader-election-namespace={namespace}");
    let flags = [
        "--sharding",
        &namespace_flag,
        "--leader-election-lease-duration=2s",
        "--leader-election-renew-deadline=1s",
        "--leader-election-retry-period=100ms",
    ];
    let flag = |n: usize| {
        (0..n)
            .map(|_| Arc::new(AtomicBool::new(false)))
            .collect::<Vec<_>>()
    };
    let (sharded, single, stopped) = (flag(2), flag(2), flag(2));
    let mut replicas = Vec::new();
    for at in 0..2 {
        let manager = Manager::new("op", client.clone(), args(&flags));
        let shutdown = manager.shutdown_token();
        let run = tokio::spawn(manager.run([
            recorder_named("sharded", &sharded[at], &Arc::default()),
            recorder_named("single", &single[at], &stopped[at]).single(),
        ]));
        replicas.push((shutdown, run));
    }
    let running =
        |flags: &[Arc<AtomicBool>]| flags.iter().filter(|f| f.load(Ordering::SeqCst)).count();
    eventually(
        "every replica runs the sharded runnable, one the single",
        || running(&sharded) == 2 && running(&single) == 1,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(running(&single), 1, "still one writer");

    // Its replica goes (releasing the Lease): the other starts the single runnable.
    let holder = single
        .iter()
        .position(|f| f.load(Ordering::SeqCst))
        .unwrap();
    let (shutdown, run) = replicas.remove(holder);
    stop(shutdown, run).await;
    assert!(stopped[holder].load(Ordering::SeqCst));
    eventually("the other replica runs the single runnable", || {
        single[1 - holder].load(Ordering::SeqCst)
    })
    .await;
    let (shutdown, run) = replicas.remove(0);
    stop(shutdown, run).await;
}

#[tokio::test]
async fn a_standby_shuts_down_without_leading() {
    let (client, namespace) = api_server().await;
    let leases = Api::<Lease>::namespaced(client.clone(), &namespace);
    leases
        .create(
            &PostParams::default(),
            &lease_held_by("other-replica", 60, &namespace),
        )
        .await
        .unwrap();
    let manager = Manager::new("op", client, leader_args(&namespace));
    let shutdown = manager.shutdown_token();
    let started = Arc::new(AtomicBool::new(false));
    let run = tokio::spawn(manager.run([recorder(&started)]));
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop(shutdown, run).await;
    assert!(!started.load(Ordering::SeqCst));
    assert_eq!(
        holder(&leases.get(LEASE).await.unwrap()).as_deref(),
        Some("other-replica")
    );
}

/// `GET path` on `host:port` over plain HTTP/1.1, retried while the server starts.
async fn get_when_up(host: std::net::IpAddr, port: u16, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let get = || async {
        let mut stream = tokio::net::TcpStream::connect((host, port)).await?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut response = String::new();
        stream.read_to_string(&mut response).await?;
        Ok::<_, std::io::Error>(response)
    };
    let mut answer = get().await;
    for _ in 0..50 {
        if answer.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        answer = get().await;
    }
    answer.unwrap_or_else(|error| panic!("GET {path} on {host}:{port}: {error}"))
}

#[tokio::test]
async fn probes_are_served_over_http() {
    let (client, _) = config_map_api(0);
    let port = free_port("127.0.0.1");
    let manager = Manager::new(
        "op",
        client,
        Args::parse_from([
            "manager",
            &format!("--health-probe-bind-address=127.0.0.1:{port}"),
        ]),
    );
    let shutdown = manager.shutdown_token();
    let run = tokio::spawn(manager.run([]));
    let localhost = std::net::Ipv4Addr::LOCALHOST.into();
    let healthz = get_when_up(localhost, port, "/healthz").await;
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz}");
    let readyz = get_when_up(localhost, port, "/readyz").await;
    assert!(
        readyz.starts_with("HTTP/1.1 200") && readyz.ends_with("readyz check passed\n"),
        "{readyz}"
    );
    stop(shutdown, run).await;
}

/// A manager serving metrics over TLS with a certificate for `host` from
/// --metrics-cert-path, and a client that trusts only that certificate.
struct TlsMetrics {
    certified: rcgen::CertifiedKey<rcgen::KeyPair>,
    host: String,
    port: u16,
    _mounted: tempfile::TempDir,
    shutdown: CancellationToken,
    run: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl TlsMetrics {
    fn start(host: &str, flags: &[&str]) -> Self {
        let certified =
            rcgen::generate_simple_self_signed([host.to_owned(), format!("{host}.cluster.local")])
                .unwrap();
        let mounted = tempfile::tempdir().unwrap();
        std::fs::write(mounted.path().join("tls.crt"), certified.cert.pem()).unwrap();
        std::fs::write(
            mounted.path().join("tls.key"),
            certified.signing_key.serialize_pem(),
        )
        .unwrap();
        let (client, _) = config_map_api(0);
        let port = free_port("127.0.0.1");
        let mut args = vec![
            "manager".to_owned(),
            "--health-probe-bind-address=0".to_owned(),
            format!("--metrics-bind-address=127.0.0.1:{port}"),
            format!("--metrics-cert-path={}", mounted.path().display()),
        ];
        args.extend(flags.iter().map(|f| (*f).to_owned()));
        let manager = Manager::new("op", client, Args::parse_from(args));
        let shutdown = manager.shutdown_token();
        let run = tokio::spawn(manager.run([]));
        TlsMetrics {
            certified,
            host: host.to_owned(),
            port,
            _mounted: mounted,
            shutdown,
            run,
        }
    }

    /// A TLS connection offering `alpn`, checking the certificate against `host`.
    async fn connect(
        &self,
        alpn: &[&[u8]],
    ) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
        use tokio_rustls::rustls;
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.certified.cert.der().clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let name = rustls::pki_types::ServerName::try_from(self.host.clone()).unwrap();
        for _ in 0..100 {
            if let Ok(tcp) = tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await {
                return connector.connect(name, tcp).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the metrics server does not listen");
    }

    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(WAIT, self.run)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
}

/// With --metrics-cert-path (config/default's [METRICS-WITH-CERTS] patch passes the mounted
/// cert-manager Secret), the metrics server presents the certificate from there: a client
/// that trusts only it and checks the metrics Service's DNS name, as the ServiceMonitor of
/// monitor_tls_patch.yaml does, completes the handshake and gets that certificate, and a
/// scrape without a token is still refused (401).
#[tokio::test]
async fn metrics_are_served_with_the_certificate_in_metrics_cert_path() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let metrics = TlsMetrics::start(
        "demo-controller-manager-metrics-service.demo-system.svc",
        &[],
    );
    let mut stream = metrics.connect(&[]).await;
    let presented = stream.get_ref().1.peer_certificates().unwrap()[0].clone();
    assert_eq!(presented.as_ref(), metrics.certified.cert.der().as_ref());
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = Vec::new();
    // The answer counts, not how the connection ends (with or without close_notify).
    let _ = stream.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");
    metrics.stop().await;
}

/// `--enable-http2` (as kubebuilder's main.go has it): the metrics server offers HTTP/2 in
/// the TLS handshake and answers an HTTP/2 scrape; without it a client offering both gets
/// HTTP/1.1, as controller-runtime has done since the HTTP/2 CVEs.
#[tokio::test]
async fn enable_http2_offers_http2_on_the_metrics_server_and_only_then() {
    use http::StatusCode;

    async fn negotiate(enable_http2: bool) -> (Vec<u8>, Option<StatusCode>) {
        let flag = format!("--enable-http2={enable_http2}");
        let metrics = TlsMetrics::start("localhost", &[&flag]);
        let stream = metrics.connect(&[b"h2", b"http/1.1"]).await;
        let protocol = stream.get_ref().1.alpn_protocol().unwrap().to_vec();
        let status = if protocol == b"h2" {
            let io = hyper_util::rt::TokioIo::new(stream);
            let (mut sender, connection) =
                hyper::client::conn::http2::handshake(hyper_util::rt::TokioExecutor::new(), io)
                    .await
                    .unwrap();
            tokio::spawn(connection);
            let request = Request::get("https://localhost/metrics")
                .body(http_body_util::Empty::<bytes::Bytes>::new())
                .unwrap();
            Some(sender.send_request(request).await.unwrap().status())
        } else {
            None
        };
        metrics.stop().await;
        (protocol, status)
    }

    // Without a token the scrape is refused: over HTTP/2 as over HTTP/1.1.
    assert_eq!(
        negotiate(true).await,
        (b"h2".to_vec(), Some(StatusCode::UNAUTHORIZED))
    );
    assert_eq!(negotiate(false).await, (b"http/1.1".to_vec(), None));
}

/// `--health-probe-bind-address=:port`, as config/manager passes it, answers on IPv6 and
/// IPv4 alike: on an IPv6-only cluster the kubelet probes the pod's IPv6 address.
#[tokio::test]
async fn go_style_probe_addresses_answer_on_ipv6_and_ipv4() {
    let (client, _) = config_map_api(0);
    let port = free_port("::");
    let manager = Manager::new(
        "op",
        client,
        Args::parse_from(["manager", &format!("--health-probe-bind-address=:{port}")]),
    );
    let shutdown = manager.shutdown_token();
    let run = tokio::spawn(manager.run([]));
    for host in [
        std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::Ipv6Addr::LOCALHOST.into(),
    ] {
        let answer = get_when_up(host, port, "/healthz").await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{host}: {answer}");
    }
    stop(shutdown, run).await;
}

/// A controller's own default concurrency applies only where no flag names one.
#[tokio::test]
async fn a_controllers_default_concurrency_gives_way_to_the_flags() {
    let cases: [(&[&str], u16); 4] = [
        (&[], 4),
        (&["--concurrency=2"], 2),
        (&["--controller-concurrency=memcached=3"], 3),
        (&["--controller-concurrency=other=3"], 4),
    ];
    for (flags, expected) in cases {
        let (client, _list_now) = config_map_api(0);
        let manager = Manager::new("op", client, args(flags));
        let shutdown = manager.shutdown_token();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let run = tokio::spawn(manager.run([Runnable::new(
            "memcached",
            move |ctx: Context| async move {
                let _ = tx.send(ctx.clone().default_concurrency(4).concurrency());
                ctx.shutdown().cancelled().await;
                Ok(())
            },
        )]));
        assert_eq!(rx.await.unwrap(), expected, "{flags:?}");
        stop(shutdown, run).await;
    }
}

#[tokio::test]
async fn a_panicking_reconcile_is_retried_with_backoff_and_the_others_keep_going() {
    let (client, list_now) = config_map_api(3);
    list_now.send(()).unwrap();
    let manager = Manager::new("op", client, args(&["--concurrency=2"]));
    let metrics = manager.metrics().clone();
    let shutdown = manager.shutdown_token();
    let (panics, others) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let run = tokio::spawn(manager.run([Runnable::new("configmaps", {
        let (panics, others) = (panics.clone(), others.clone());
        move |ctx: Context| async move {
            let controller = Controller::new(
                Api::<ConfigMap>::default_namespaced(ctx.client()),
                watcher::Config::default(),
            );
            // cm-1 panics in its reconcile future, cm-2 before returning one.
            let reconcile = move |object: Arc<ConfigMap>, _| {
                let (panics, others) = (panics.clone(), others.clone());
                let name = object.metadata.name.clone().unwrap();
                if name == "cm-2" {
                    panics.fetch_add(1, Ordering::SeqCst);
                    panic!("a synchronous panic");
                }
                async move {
                    if name == "cm-1" {
                        panics.fetch_add(1, Ordering::SeqCst);
                        panic!("an unwrap() on a missing field");
                    }
                    others.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, Never>(Action::await_change())
                }
            };
            ctx.run(
                controller,
                reconcile,
                |_, _, _| Action::await_change(),
                Arc::new(()),
            )
            .await
        }
    })]));

    // Retried with the object's backoff (5 ms, 10 ms, ...), not dropped.
    eventually("the panicking objects are retried", || {
        panics.load(Ordering::SeqCst) >= 6
    })
    .await;
    eventually("the other object is reconciled", || {
        others.load(Ordering::SeqCst) == 1
    })
    .await;
    assert!(!run.is_finished(), "the manager stays up");
    let text = metrics.encode();
    let counted = text
        .lines()
        .find_map(|l| {
            l.strip_prefix(r#"controller_runtime_reconcile_panics_total{controller="configmaps"} "#)
        })
        .unwrap_or_else(|| panic!("no panics counter in\n{text}"));
    assert!(counted.parse::<u64>().unwrap() >= 6, "{text}");
    assert!(
        text.contains(
            r#"controller_runtime_reconcile_total{controller="configmaps",result="success"} 1"#
        ),
        "{text}"
    );

    stop(shutdown, run).await;
}

/// Two controllers, as `rkb create api` made them for the kinds `FooBar` and `Foobar`.
async fn foo_bar(_: Context) -> anyhow::Result<()> {
    Ok(())
}

async fn foobar(_: Context) -> anyhow::Result<()> {
    Ok(())
}

#[tokio::test]
async fn controllers_with_the_same_name_are_refused() {
    let (client, _) = config_map_api(0);
    let manager = Manager::new("op", client, args(&[]));
    let readiness = manager.readiness().clone();
    let run = manager.run([
        Runnable::new("memcached", foobar),
        Runnable::new("foobar", foo_bar),
        Runnable::new("foobar", foobar),
    ]);
    let error = tokio::time::timeout(WAIT, run)
        .await
        .expect("refused at once")
        .unwrap_err();
    let message = format!("{error:#}");
    assert!(
        message.contains(r#""foobar""#)
            && message.contains("manager::tests::foo_bar")
            && message.contains("manager::tests::foobar"),
        "{message}"
    );
    assert!(readiness.is_ready(), "no controller was started");
}

#[tokio::test]
async fn an_invalid_sharding_configuration_is_refused_at_start() {
    for (flags, reason) in [
        (
            &["--sharding", "--leader-elect"][..],
            "--sharding and --leader-elect",
        ),
        (&["--sharding", "--sharding-slices=0"], "between 1 and 1024"),
        (
            &["--sharding", "--leader-election-renew-deadline=20s"],
            "must be shorter than --leader-election-lease-duration",
        ),
    ] {
        let (client, _) = config_map_api(0);
        let run = Manager::new("op", client, args(flags)).run([]);
        let error = tokio::time::timeout(WAIT, run)
            .await
            .expect("refused at once")
            .unwrap_err();
        assert!(
            format!("{error:#}").contains(reason),
            "{flags:?}: {error:#}"
        );
    }
}
