//! The attack suite of issue #32: the manager binary on envtest, attacked on loopback, one
//! attack at a time for [`ATTACK`] each. During each attack two threads of their own
//! (blocking I/O, so the attackers' tasks in this process cannot delay them) send a valid
//! AdmissionReview to the webhook server and `GET /healthz` every 100 ms, each counted
//! as answered only if it is within 1 s, and the manager's RSS is sampled every 50 ms.
//!
//! It prints the figures the design note docs/src/design/hostile-clients.md quotes; it
//! asserts only that the attacks ran. Ignored (it takes about two and a half minutes and
//! loads the machine):
//!
//! ```sh
//! cargo test -p memcached-example --test manager attack -- --ignored --nocapture
//! ```

use std::io::{Read as _, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::DeleteParams;
use memcached_example::api::cache::v1alpha1::MemcachedSpec;

use super::*;

/// How long each attack lasts.
const ATTACK: Duration = Duration::from_secs(10);
/// What a probe or a review may take to count as answered (the kubelet's probe timeout).
const WITHIN: Duration = Duration::from_secs(1);
/// The scaffold's memory limit (config/manager/manager.yaml).
const LIMIT_MIB: u64 = 128;
const VALIDATE: &str = "/validate-cache-example-com-v1alpha1-memcached";
const MUTATE: &str = "/mutate-cache-example-com-v1alpha1-memcached";
/// Labels of a large review: about 2 MB of JSON, as in the issue.
const LABELS: usize = 150_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "the attack suite: about two and a half minutes of load; run it with --ignored --nocapture"]
async fn attack_suite() {
    let _serial = SERIAL.lock().await;
    let env = envtest::shared().await;
    let setup = setup().await;
    let manager = Manager::start(
        "attacked",
        &kubeconfig(env, setup, &unique("attacked"), None),
        &[],
    );
    let probes = manager.address("health probes").await;
    let metrics = manager.address("metrics").await;
    let webhooks = manager.address("webhooks").await;
    let pid = manager.child.id().unwrap();
    install_webhooks(env, webhooks).await;

    // Memory per MB of review: one large review, then twelve in a row. Sent straight to
    // the webhook server as the API server would send it: on this 2-core machine the API
    // server itself took over 30 s (its request timeout) for each 150,000-label object.
    let idle = rss_kib(pid);
    let large = large_review();
    let sampler = Sampler::start(pid);
    let answer = post(webhooks, MUTATE, &large).await;
    let peak = sampler.stop();
    eprintln!(
        "figure: one review of {:.1} MB ({}): RSS {} -> peak {} MiB, {:.1} MiB per MB of review",
        large.len() as f64 / 1e6,
        answer.lines().next().unwrap_or("no answer"),
        idle >> 10,
        peak >> 10,
        (peak.saturating_sub(idle)) as f64 / 1024.0 / (large.len() as f64 / 1e6)
    );
    let sampler = Sampler::start(pid);
    for _ in 0..12 {
        post(webhooks, MUTATE, &large).await;
    }
    let peak = sampler.stop();
    tokio::time::sleep(Duration::from_secs(2)).await;
    eprintln!(
        "figure: twelve more in a row: peak RSS {} MiB, {} MiB after",
        peak >> 10,
        rss_kib(pid) >> 10
    );

    let mut table = Vec::new();
    table.push((
        "none (baseline)",
        during(pid, probes, webhooks, async {}).await,
    ));
    table.push((
        "256 slow request bodies",
        during(pid, probes, webhooks, slow_bodies(webhooks, 256)).await,
    ));
    table.push((
        "4 clients sending 2 MB reviews",
        during(pid, probes, webhooks, large_reviews(webhooks, 4)).await,
    ));
    table.push((
        "1,000 idle reconnecting connections",
        during(
            pid,
            probes,
            webhooks,
            idle_connections(&[probes, metrics, webhooks], 1000),
        )
        .await,
    ));
    table.push((
        "1,000 of them on the probe port alone",
        during(pid, probes, webhooks, idle_connections(&[probes], 1000)).await,
    ));
    table.push((
        "1,000 of them on the webhook port alone",
        during(pid, probes, webhooks, idle_connections(&[webhooks], 1000)).await,
    ));
    table.push((
        "flood of made-up metrics tokens",
        during(pid, probes, webhooks, token_flood(metrics, 64)).await,
    ));
    eprintln!("figure: | attack | valid reviews within 1 s | /healthz within 1 s | peak RSS |");
    eprintln!("figure: |---|---:|---:|---:|");
    for (attack, figures) in &table {
        eprintln!(
            "figure: | {attack} | {} | {} | {} MiB |",
            figures.reviews,
            figures.healthz,
            figures.peak_rss_kib >> 10
        );
    }
    for (attack, figures) in &table {
        eprintln!(
            "figure: {attack}: CPU, in cores: manager {:.2}, attackers and measuring {:.2}; \
             load after: {}; slowest answered: review {} ms, /healthz {} ms; \
             reviews missed: [{}]; /healthz missed: [{}]",
            figures.manager_cores,
            figures.harness_cores,
            figures.load.trim(),
            figures.reviews.slowest.as_millis(),
            figures.healthz.slowest.as_millis(),
            figures.reviews.misses(),
            figures.healthz.misses(),
        );
    }
    let over = table
        .iter()
        .filter(|(_, f)| f.peak_rss_kib >> 10 >= LIMIT_MIB)
        .count();
    eprintln!("figure: attacks that took RSS past {LIMIT_MIB} MiB: {over}");
    uninstall_webhooks(env).await;
    assert!(
        table
            .iter()
            .all(|(_, f)| f.reviews.total > 0 && f.healthz.total > 0)
    );
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

/// An AdmissionReview of `object`, as the API server sends it.
fn review(object: Value) -> String {
    serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0c4d5a10-6b4f-4d1e-9f38-2a1c2e8f0001",
            "kind": {"group": "cache.example.com", "version": "v1alpha1", "kind": "Memcached"},
            "resource": {"group": "cache.example.com", "version": "v1alpha1", "resource": "memcacheds"},
            "name": object["metadata"]["name"],
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "attack-suite"},
            "object": object,
        }
    })
    .to_string()
}

/// A review of a Memcached with [`LABELS`] labels: about 2 MB.
fn large_review() -> String {
    let labels: serde_json::Map<String, Value> = (0..LABELS)
        .map(|i| (format!("l{i}"), Value::from("v")))
        .collect();
    review(serde_json::json!({
        "apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached",
        "metadata": {"name": "large", "namespace": "default", "labels": labels},
        "spec": {"size": 1},
    }))
}

/// POSTs `review` to `path`; the answer, or the error.
async fn post(addr: SocketAddr, path: &str, review: &str) -> String {
    let exchange = async {
        let mut stream = tls(addr).await?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            review.len()
        );
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(review.as_bytes()).await?;
        let mut answer = Vec::new();
        // A peer that closes without close_notify ends the read with an error.
        let _ = stream.read_to_end(&mut answer).await;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&answer).into_owned())
    };
    exchange
        .await
        .unwrap_or_else(|error| format!("error: {error}"))
}

/// The webhook configurations `make manifests` renders, pointed at the manager.
async fn install_webhooks(env: &Environment, addr: SocketAddr) {
    let files = memcached_example::manifests()
        .render()
        .unwrap_or_else(|e| panic!("{e}"));
    let objects = files[Path::new("config/webhook/manifests.yaml")]
        .split("\n---\n")
        .map(|doc| {
            let mut object: Value =
                serde_yaml_ng::from_str(doc.trim_start_matches("---\n")).unwrap();
            webhook_certs().point_at(addr, &mut object);
            serde_json::from_value(object).unwrap()
        })
        .collect();
    env.apply().objects(objects).await.unwrap();
    // The API server picks configurations up asynchronously: wait until it calls them.
    let namespace = env.create_namespace().await.unwrap();
    let api: Api<Memcached> = Api::namespaced(env.client(), &namespace);
    let deadline = Instant::now() + WAIT;
    let refused = Memcached::new(
        "probe.name",
        MemcachedSpec {
            size: 1,
            container_port: None,
        },
    );
    while !matches!(api.create(&dry_run(), &refused).await,
        Err(kube::Error::Api(status)) if status.message.contains("cannot name"))
    {
        assert!(
            Instant::now() < deadline,
            "the API server does not call the webhooks"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn uninstall_webhooks(env: &Environment) {
    // config/webhook/manifests.yaml's names (config/default prefixes them in a cluster).
    let params = DeleteParams::default();
    let _ = Api::<MutatingWebhookConfiguration>::all(env.client())
        .delete("mutating-webhook-configuration", &params)
        .await;
    let _ = Api::<ValidatingWebhookConfiguration>::all(env.client())
        .delete("validating-webhook-configuration", &params)
        .await;
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// The highest RSS seen, sampled every 50 ms on a thread of its own.
struct Sampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<u64>,
}

impl Sampler {
    fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let stop = stop.clone();
            move || {
                let mut peak = 0;
                while !stop.load(Ordering::Relaxed) {
                    peak = peak.max(rss_kib(pid));
                    std::thread::sleep(Duration::from_millis(50));
                }
                peak.max(rss_kib(pid))
            }
        });
        Self { stop, thread }
    }

    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// Answered within [`WITHIN`] out of sent, and the others by what went wrong.
#[derive(Clone, Debug, Default)]
struct Share {
    answered: u64,
    total: u64,
    misses: std::collections::BTreeMap<String, u64>,
    /// The longest an answered one took.
    slowest: Duration,
}

impl Share {
    fn misses(&self) -> String {
        let misses: Vec<String> = self
            .misses
            .iter()
            .map(|(m, n)| format!("{m} ×{n}"))
            .collect();
        misses.join(", ")
    }
}

impl std::fmt::Display for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let percent = 100.0 * self.answered as f64 / self.total.max(1) as f64;
        write!(f, "{percent:.0} % ({}/{})", self.answered, self.total)
    }
}

struct Figures {
    reviews: Share,
    healthz: Share,
    peak_rss_kib: u64,
    /// CPU the manager and this process (attackers and measuring threads) used during
    /// the attack, in cores (1.0: one core all the time), and the machine's load after.
    manager_cores: f64,
    harness_cores: f64,
    load: String,
}

/// CPU time used by process `pid` so far (user and system), from /proc.
fn cpu_time(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command (which may hold spaces), from the 3rd: utime is the 14th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // USER_HZ is 100 on Linux.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// Runs `attack` for [`ATTACK`] while measuring; the attack's tasks are dropped after.
async fn during(
    pid: u32,
    probes: SocketAddr,
    webhooks: SocketAddr,
    attack: impl Future<Output = ()> + Send + 'static,
) -> Figures {
    let attacking = tokio::spawn(attack);
    tokio::time::sleep(Duration::from_secs(1)).await; // let it take hold
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = Sampler::start(pid);
    let measure = |check: fn(SocketAddr) -> Result<(), String>, addr: SocketAddr| {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut share = Share::default();
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                share.total += 1;
                let checked = check(addr).and_then(|()| {
                    let took = started.elapsed();
                    if took <= WITHIN {
                        Ok(())
                    } else {
                        Err(format!("answered after {:.0} s", took.as_secs_f64().ceil()))
                    }
                });
                match checked {
                    Ok(()) => {
                        share.answered += 1;
                        share.slowest = share.slowest.max(started.elapsed());
                    }
                    Err(miss) => *share.misses.entry(miss).or_default() += 1,
                }
                std::thread::sleep(Duration::from_millis(100).saturating_sub(started.elapsed()));
            }
            share
        })
    };
    let healthz = measure(healthz_answers, probes);
    let reviews = measure(review_answers, webhooks);
    let (manager_cpu, harness_cpu) = (cpu_time(&pid.to_string()), cpu_time("self"));
    let started = Instant::now();
    tokio::time::sleep(ATTACK).await;
    let cores = |cpu: Duration| cpu.as_secs_f64() / started.elapsed().as_secs_f64();
    let manager_cores = cores(cpu_time(&pid.to_string()) - manager_cpu);
    let harness_cores = cores(cpu_time("self") - harness_cpu);
    stop.store(true, Ordering::Relaxed);
    attacking.abort();
    let figures = Figures {
        reviews: reviews.join().unwrap(),
        healthz: healthz.join().unwrap(),
        peak_rss_kib: sampler.stop(),
        manager_cores,
        harness_cores,
        load: std::fs::read_to_string("/proc/loadavg").unwrap_or_default(),
    };
    // Let the manager settle (closed connections, freed memory) before the next attack.
    tokio::time::sleep(Duration::from_secs(3)).await;
    figures
}

/// What went wrong in an exchange, by step: `connect`, `handshake`, `send`, `read`.
fn at(step: &'static str) -> impl Fn(std::io::Error) -> String {
    move |error| match error.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("{step} timed out")
        }
        kind => format!("{step}: {kind}"),
    }
}

/// The answer's status line, or what came instead.
fn status(answer: &[u8]) -> Result<&str, String> {
    let answer = std::str::from_utf8(answer).unwrap_or("");
    match answer.lines().next() {
        Some(line) if line.starts_with("HTTP/1.1 200") => Ok(answer),
        Some(line) if !line.is_empty() => Err(line.to_owned()),
        _ => Err("closed without an answer".to_owned()),
    }
}

fn healthz_answers(addr: SocketAddr) -> Result<(), String> {
    let mut stream = std::net::TcpStream::connect_timeout(&addr, WITHIN).map_err(at("connect"))?;
    stream
        .set_read_timeout(Some(WITHIN))
        .map_err(at("connect"))?;
    stream
        .set_write_timeout(Some(WITHIN))
        .map_err(at("connect"))?;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .map_err(at("send"))?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(at("read"))?;
    status(&answer).map(drop)
}

/// A valid review of a small Memcached, straight to the webhook server.
fn review_answers(addr: SocketAddr) -> Result<(), String> {
    let review = review(serde_json::json!({
        "apiVersion": "cache.example.com/v1alpha1", "kind": "Memcached",
        "metadata": {"name": "valid", "namespace": "default"}, "spec": {"size": 1},
    }));
    let stream = std::net::TcpStream::connect_timeout(&addr, WITHIN).map_err(at("connect"))?;
    stream
        .set_read_timeout(Some(WITHIN))
        .map_err(at("connect"))?;
    stream
        .set_write_timeout(Some(WITHIN))
        .map_err(at("connect"))?;
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let connection = rustls::ClientConnection::new(Arc::new(any_certificate()), name).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, stream);
    // The handshake on its own, to tell it apart from the request.
    while tls.conn.is_handshaking() {
        tls.conn
            .complete_io(&mut tls.sock)
            .map_err(at("handshake"))?;
    }
    let head = format!(
        "POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        review.len()
    );
    tls.write_all(head.as_bytes()).map_err(at("send"))?;
    tls.write_all(review.as_bytes()).map_err(at("send"))?;
    let mut answer = Vec::new();
    // A peer that closes without close_notify ends the read with an error.
    if let Err(error) = tls.read_to_end(&mut answer)
        && error.kind() != std::io::ErrorKind::UnexpectedEof
    {
        return Err(at("read")(error));
    }
    let answer = status(&answer)?;
    if answer.contains(r#""allowed":true"#) {
        Ok(())
    } else {
        Err("not allowed".to_owned())
    }
}

async fn tls(addr: SocketAddr) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let stream = TcpStream::connect(addr).await?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(any_certificate()));
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    connector.connect(name, stream).await
}

/// Runs `clients` copies of `client` until dropped.
async fn swarm<F, Fut>(clients: usize, client: F)
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..clients {
        tasks.spawn(client(i));
    }
    while tasks.join_next().await.is_some() {}
}

/// TLS connections that send a POST's headers announcing 1,000 bytes, then nothing; each
/// reconnects when the server closes it.
fn slow_bodies(addr: SocketAddr, clients: usize) -> impl Future<Output = ()> + Send {
    swarm(clients, move |_| async move {
        loop {
            let Ok(mut stream) = tls(addr).await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let head = format!(
                "POST {VALIDATE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
                 Content-Length: 1000\r\n\r\n"
            );
            if stream.write_all(head.as_bytes()).await.is_ok() {
                let mut sink = Vec::new();
                let _ = stream.read_to_end(&mut sink).await;
            }
        }
    })
}

/// Clients sending large reviews to the defaulting webhook, one after another.
fn large_reviews(addr: SocketAddr, clients: usize) -> impl Future<Output = ()> + Send {
    let large = Arc::new(large_review());
    swarm(clients, move |_| {
        let large = large.clone();
        async move {
            loop {
                post(addr, MUTATE, &large).await;
            }
        }
    })
}

/// TCP connections that send nothing, spread over `ports`; each reconnects when closed.
fn idle_connections(
    ports: &[SocketAddr],
    clients: usize,
) -> impl Future<Output = ()> + Send + use<> {
    let ports = ports.to_vec();
    swarm(clients, move |i| {
        let addr = ports[i % ports.len()];
        async move {
            loop {
                match TcpStream::connect(addr).await {
                    Ok(mut stream) => {
                        let mut sink = Vec::new();
                        let _ = stream.read_to_end(&mut sink).await;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        }
    })
}

/// Keep-alive connections scraping `/metrics` with made-up tokens as fast as answered.
fn token_flood(addr: SocketAddr, clients: usize) -> impl Future<Output = ()> + Send {
    static SENT: AtomicU64 = AtomicU64::new(0);
    swarm(clients, move |_| async move {
        loop {
            let Ok(stream) = tls(addr).await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let (read, mut write) = tokio::io::split(stream);
            let mut read = BufReader::new(read);
            loop {
                let token = format!(
                    "{:032x}",
                    SENT.fetch_add(1, Ordering::Relaxed) * 0x9e37_79b9
                );
                let request = format!(
                    "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\r\n"
                );
                if write.write_all(request.as_bytes()).await.is_err() {
                    break;
                }
                // Headers, then the body by its Content-Length.
                let mut length = 0;
                let mut line = String::new();
                loop {
                    line.clear();
                    match read.read_line(&mut line).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) if line == "\r\n" => break,
                        Ok(_) => {
                            if let Some(value) =
                                line.to_ascii_lowercase().strip_prefix("content-length:")
                            {
                                length = value.trim().parse().unwrap_or(0);
                            }
                        }
                    }
                }
                let mut body = vec![0; length];
                if line != "\r\n" || read.read_exact(&mut body).await.is_err() {
                    break;
                }
            }
        }
    })
}
