//! The race of issue #27: kubebuilder's deploy-image Memcached operator (controller-runtime,
//! scaffolded and built by `hack/race/prepare.sh`) against the operator `rkb create api
//! --image` scaffolds for the same kind, one at a time, each run on a fresh envtest control
//! plane (kube-apiserver + etcd, no kube-controller-manager, no kubelet).
//!
//! A run: start the control plane, apply the side's CRD, start the operator, wait until it
//! is ready and idle, then
//! 1. create `RACE_OBJECTS` Memcacheds (size 1) at once and wait until all converged;
//! 2. patch all of them to size 2 and wait until all converged again.
//!
//! **Converged** means the same for both sides, and needs neither a kubelet nor a
//! kube-controller-manager: the Memcached's Deployment exists with `spec.replicas` equal to
//! the Memcached's `spec.size`, and the Memcached was written after that Deployment (its
//! resourceVersion, an etcd revision, is newer) and carries an `Available` condition: the
//! operator has reported a status for the Deployment as it now is. (Without a kubelet no
//! pod ever becomes available: the Go operator reports `Available=True` once the replicas
//! match, rkb's `Available=False, 0 of N pods are available`; both are a report.)
//!
//! Figures per run: both times, the operator's CPU (utime + stime from /proc) and peak
//! RSS (VmHWM), the API server's `apiserver_request_total` by verb and resource (after
//! minus before, minus the bench's own creates and patches; those answered 409 Conflict
//! counted apart), kube-apiserver's and etcd's
//! CPU, the operator's reconciles (`controller_runtime_reconcile_total`, both sides export
//! it) and where the time goes (server-side request time, etcd time, reconcile time; per
//! rescaled object, the reconciles' time split into their requests' server-side time and
//! the client's, and the time spent waiting for the watch to deliver the next change; the
//! peaks of anonymous and of file-backed resident memory, sampled every 100 ms).
//!
//! Settings (environment): `RACE_DIR` (where prepare.sh put the operators, default
//! `~/.cache/rkb/race`), `RACE_OBJECTS` (200), `RACE_RUNS` (3), `RACE_SIDES` (`go,rkb`;
//! `rkb-<label>` races another build of the rkb operator put in `bin/rkb-<label>-manager`,
//! e.g. `go,rkb,rkb-before`), `RACE_CONCURRENCY` (`default`: each side's own; a list such
//! as `default,1,2,4,8` races every entry in turn, both sides at that many reconciles at
//! once), `RACE_LOAD_WIDTH` (requests of the load in flight at once, 200), `RACE_TIMEOUT`
//! (seconds per phase, 600), `RACE_OUT` (a file to write the report to as well),
//! `RACE_RKB_ARGS` (extra arguments of the rkb operator), `RACE_RKB_ENV` (extra
//! environment of the rkb operator, `NAME=value ...`).
//!
//! `make race` (or `cargo bench -p rkb-race`) after `hack/race/prepare.sh`.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube::{Api, Client};
use rkb_envtest::Environment;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::watch;

/// The operators' image; neither side ever pulls it (no kubelet).
const IMAGE: &str = "memcached:1.6.26-alpine3.19";
/// After the operator is ready, before the first create: its caches sync, it goes idle.
const SETTLE_BEFORE: Duration = Duration::from_secs(3);
/// After each phase converged: what the operator still does then (trailing reconciles,
/// writes, Events) is counted in its requests and CPU, not in the phase's time.
const SETTLE_AFTER: Duration = Duration::from_secs(2);

struct Settings {
    dir: PathBuf,
    objects: usize,
    runs: usize,
    sides: Vec<Side>,
    /// The concurrencies to race at (`RACE_CONCURRENCY`), each with both sides: a number
    /// (rkb's `--concurrency`, controller-runtime's `MaxConcurrentReconciles`) or each
    /// side's default.
    concurrencies: Vec<Concurrency>,
    load_width: usize,
    timeout: Duration,
    out: Option<PathBuf>,
    /// Extra arguments of the rkb operator (`RACE_RKB_ARGS`, whitespace-separated).
    rkb_args: Vec<String>,
    /// Extra environment of the rkb operator (`RACE_RKB_ENV`, whitespace-separated
    /// `NAME=value`), e.g. `LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2` to try
    /// another allocator without rebuilding.
    rkb_env: Vec<(String, String)>,
}

/// An operator in the race: `go` (controller-runtime), or `rkb` and any other name that
/// starts with `rkb-` (another build of the rkb operator, e.g. `rkb-before`, whose binary
/// is `bin/rkb-before-manager`), so that two builds race in the same run.
#[derive(Clone, PartialEq, Eq)]
struct Side {
    name: String,
}

impl Side {
    fn parse(name: &str) -> anyhow::Result<Self> {
        let name = name.trim();
        let another_rkb = name
            .strip_prefix("rkb-")
            .is_some_and(|label| !label.is_empty());
        if !(name == "go" || name == "rkb" || another_rkb) {
            bail!(
                "RACE_SIDES: unknown side {name:?}: go, rkb, or rkb-<label> for another build of \
                 the rkb operator in bin/rkb-<label>-manager (e.g. go,rkb,rkb-before)"
            );
        }
        Ok(Side { name: name.into() })
    }
    fn is_go(&self) -> bool {
        self.name == "go"
    }
    fn title(&self) -> &str {
        if self.is_go() {
            "controller-runtime"
        } else {
            &self.name
        }
    }
}

/// How many reconciles each operator runs at once.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Concurrency {
    /// Each side's own default: no flag, no setting.
    Default,
    /// Both sides at `n`: rkb's `--concurrency=n`, controller-runtime's
    /// `MaxConcurrentReconciles` (through `RACE_MAX_CONCURRENT_RECONCILES`, which
    /// prepare.sh adds to its controller).
    Both(u16),
}

impl Concurrency {
    fn parse(text: &str) -> anyhow::Result<Self> {
        match text.trim() {
            "default" => Ok(Concurrency::Default),
            n => match n.parse() {
                Ok(n) if n > 0 => Ok(Concurrency::Both(n)),
                _ => bail!(
                    "RACE_CONCURRENCY: {n:?} is not a concurrency: a number from 1, or default \
                     (each side's own), e.g. default,1,2,4,8"
                ),
            },
        }
    }
    fn title(self) -> String {
        match self {
            Concurrency::Default => "each side's default concurrency".into(),
            Concurrency::Both(n) => format!("both at concurrency {n}"),
        }
    }
    fn short(self) -> String {
        match self {
            Concurrency::Default => "default".into(),
            Concurrency::Both(n) => n.to_string(),
        }
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> anyhow::Result<T> {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .map_err(|_| anyhow::anyhow!("{name}={value} is not valid")),
        Err(_) => Ok(default),
    }
}

impl Settings {
    fn from_env() -> anyhow::Result<Self> {
        let dir = match std::env::var_os("RACE_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?)
                .join(".cache/rkb/race"),
        };
        let sides = std::env::var("RACE_SIDES")
            .unwrap_or_else(|_| "go,rkb".into())
            .split(',')
            .map(Side::parse)
            .collect::<anyhow::Result<Vec<_>>>()?;
        let concurrencies = std::env::var("RACE_CONCURRENCY")
            .unwrap_or_else(|_| "default".into())
            .split(',')
            .map(Concurrency::parse)
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Self {
            dir,
            objects: env_or("RACE_OBJECTS", 200)?,
            runs: env_or("RACE_RUNS", 3)?,
            sides,
            concurrencies,
            load_width: env_or("RACE_LOAD_WIDTH", 200)?,
            timeout: Duration::from_secs(env_or("RACE_TIMEOUT", 600)?),
            out: std::env::var_os("RACE_OUT").map(PathBuf::from),
            rkb_args: std::env::var("RACE_RKB_ARGS")
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
            rkb_env: std::env::var("RACE_RKB_ENV")
                .unwrap_or_default()
                .split_whitespace()
                .map(|pair| match pair.split_once('=') {
                    Some((name, value)) if !name.is_empty() => Ok((name.into(), value.into())),
                    _ => bail!("RACE_RKB_ENV: {pair:?} is not NAME=value"),
                })
                .collect::<anyhow::Result<_>>()?,
        })
    }

    fn binary(&self, side: &Side) -> PathBuf {
        self.dir.join(format!("bin/{}-manager", side.name))
    }

    /// Every build of the rkb operator serves the same CRD.
    fn crd(&self, side: &Side) -> PathBuf {
        let kind = if side.is_go() { "go" } else { "rkb" };
        self.dir.join(format!("crds/{kind}.yaml"))
    }
}

/// What one run measured.
#[derive(Default)]
struct Run {
    converge: f64,
    rescale: f64,
    operator_cpu: f64,
    peak_rss_mib: f64,
    /// The operator's requests, by "VERB resource[/subresource]".
    requests: BTreeMap<String, f64>,
    apiserver_cpu: f64,
    etcd_cpu: f64,
    reconciles: f64,
    reconcile_seconds: f64,
    /// Requests the API server answered with 409 Conflict (the load never gets one).
    conflicts: f64,
    /// Server-side time of every request completed during the run (the load's too), s.
    server_seconds: f64,
    /// The API server's time waiting on etcd, s.
    etcd_seconds: f64,
    /// Server-side time and count of requests by "VERB resource[/subresource]" (the
    /// load's included), for the mean latency of each kind.
    server_time: BTreeMap<String, f64>,
    server_calls: BTreeMap<String, f64>,
    /// The rescale phase alone: where its time goes.
    rescale_phase: Phase,
    /// Peaks of the operator's resident memory by kind, sampled every 100 ms.
    memory: MemoryPeaks,
    load: String,
}

/// The counters of one phase (after minus before), for where its time goes.
#[derive(Default)]
struct Phase {
    reconciles: f64,
    reconcile_seconds: f64,
    /// Server-side time by "VERB resource[/subresource]", the load's included.
    server_time: BTreeMap<String, f64>,
    /// CPU of the API server and etcd, and of the operator, in the phase (its trailing
    /// settle included), s: whether the phase's time is the control plane's CPU.
    control_plane_cpu: f64,
    operator_cpu: f64,
    /// Time the phase's objects waited in the work queue for a worker, s.
    queue_seconds: f64,
}

impl Phase {
    fn between(before: &Snapshot, after: &Snapshot) -> Self {
        Self {
            reconciles: after.reconciles - before.reconciles,
            reconcile_seconds: after.reconcile_seconds - before.reconcile_seconds,
            server_time: diff(&after.server_time, &before.server_time),
            control_plane_cpu: (after.apiserver_cpu + after.etcd_cpu)
                - (before.apiserver_cpu + before.etcd_cpu),
            operator_cpu: after.operator_cpu - before.operator_cpu,
            queue_seconds: after.queue_seconds - before.queue_seconds,
        }
    }

    /// Server-side time of the requests the reconciles waited for: every kind but the
    /// load's patches (`PATCH memcacheds`; neither operator patches Memcacheds when
    /// rescaling) and the Events (rkb sends them from a task of their own; Go sends none
    /// here).
    fn reconcile_request_seconds(&self) -> f64 {
        self.server_time
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "PATCH memcacheds" | "POST events"))
            // Relists and the API server's own lease renewals are no reconcile's.
            .filter(|(key, _)| !key.starts_with("LIST ") && !key.ends_with(" leases"))
            .map(|(_, seconds)| seconds)
            .sum()
    }
}

/// Peak resident memory by kind (`RssAnon` and `RssFile` of /proc/<pid>/status): the
/// heap, stacks and allocator's pages, and the pages of the binary and libraries mapped
/// from files. Each kind peaks on its own, so the two need not add up to VmHWM.
#[derive(Clone, Copy, Default)]
struct MemoryPeaks {
    anonymous_kib: f64,
    file_kib: f64,
}

impl Run {
    fn total_requests(&self) -> f64 {
        self.requests.values().sum()
    }
}

fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; a filter argument selects nothing here.
    let settings = Settings::from_env()?;
    for side in &settings.sides {
        for path in [settings.binary(side), settings.crd(side)] {
            if !path.exists() {
                bail!(
                    "{} is missing: run hack/race/prepare.sh first (RACE_DIR={})",
                    path.display(),
                    settings.dir.display()
                );
            }
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Every concurrency in turn; within one, the sides alternate run by run, so that a
    // change of the machine's load hits all of them.
    let mut results: Vec<(Concurrency, Results)> = Vec::new();
    for &concurrency in &settings.concurrencies {
        let mut runs: Results = settings
            .sides
            .iter()
            .map(|side| (side.clone(), Vec::new()))
            .collect();
        for run in 1..=settings.runs {
            for (side, side_runs) in &mut runs {
                eprintln!(
                    "race: {} run {run}/{} with {} objects, concurrency {} (load: {})",
                    side.name,
                    settings.runs,
                    settings.objects,
                    concurrency.short(),
                    load_average()
                );
                let result = runtime
                    .block_on(race(&settings, side, concurrency, run))
                    .with_context(|| format!("{} run {run}", side.name))?;
                eprintln!(
                    "race: {} run {run}: converged in {:.2} s, rescaled in {:.2} s, {} requests, {} conflicts, \
                     {} reconciles, operator CPU {:.2} s, peak RSS {:.1} MiB, API server + etcd CPU {:.2} s, load {}",
                    side.name,
                    result.converge,
                    result.rescale,
                    result.total_requests(),
                    result.conflicts,
                    result.reconciles,
                    result.operator_cpu,
                    result.peak_rss_mib,
                    result.apiserver_cpu + result.etcd_cpu,
                    result.load
                );
                side_runs.push(result);
            }
        }
        results.push((concurrency, runs));
    }
    let mut report_text = String::new();
    for (concurrency, runs) in &results {
        report_text.push_str(&report(&settings, *concurrency, runs));
    }
    if results.len() > 1 || settings.sides.len() > 2 {
        report_text.push_str(&summary(&settings, &results));
    }
    print!("{report_text}");
    if let Some(out) = &settings.out {
        std::fs::write(out, &report_text)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(())
}

/// Each side's runs at one concurrency, in the order of `RACE_SIDES`.
type Results = Vec<(Side, Vec<Run>)>;

/// One run of one side on a fresh control plane.
async fn race(
    settings: &Settings,
    side: &Side,
    concurrency: Concurrency,
    run: usize,
) -> anyhow::Result<Run> {
    let env = Environment::start().await?;
    env.apply().files([settings.crd(side)]).await?;
    let namespace = env.create_namespace().await?;
    let client = env.client();

    let logs = settings.dir.join("logs");
    std::fs::create_dir_all(&logs)?;
    let log = logs.join(format!(
        "{}-{}-c{}-{run}.log",
        side.name,
        settings.objects,
        concurrency.short()
    ));
    let metrics_port = rkb_envtest::free_port("127.0.0.1");
    let probe_port = rkb_envtest::free_port("127.0.0.1");
    let mut operator = tokio::process::Command::new(settings.binary(side))
        .arg(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"))
        .arg("--metrics-secure=false")
        .arg(format!(
            "--health-probe-bind-address=127.0.0.1:{probe_port}"
        ))
        .args(match (side.is_go(), concurrency) {
            (false, Concurrency::Both(n)) => vec![format!("--concurrency={n}")],
            _ => Vec::new(),
        })
        .args(if side.is_go() {
            &[]
        } else {
            settings.rkb_args.as_slice()
        })
        .env("KUBECONFIG", env.kubeconfig_path())
        .env("MEMCACHED_IMAGE", IMAGE)
        .envs(match (side.is_go(), concurrency) {
            (true, Concurrency::Both(n)) => {
                vec![("RACE_MAX_CONCURRENT_RECONCILES".to_owned(), n.to_string())]
            }
            _ => Vec::new(),
        })
        .envs(if side.is_go() {
            Vec::new()
        } else {
            settings.rkb_env.clone()
        })
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log)?)
        .stderr(std::fs::File::create(&log)?.try_clone()?)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {}", settings.binary(side).display()))?;
    let pid = operator.id().context("the operator exited at once")?;
    let result = measure(
        settings,
        &env,
        &client,
        &namespace,
        pid,
        metrics_port,
        probe_port,
    )
    .await;
    operator.start_kill()?;
    operator.wait().await?;
    drop(env);
    result.with_context(|| format!("the operator's log: {}", log.display()))
}

#[allow(clippy::too_many_arguments)]
async fn measure(
    settings: &Settings,
    env: &Environment,
    client: &Client,
    namespace: &str,
    pid: u32,
    metrics_port: u16,
    probe_port: u16,
) -> anyhow::Result<Run> {
    let (apiserver_pid, etcd_pid) = env.process_ids().context("not a local control plane")?;
    wait_ready(probe_port, Duration::from_secs(60)).await?;
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cache.example.com", "v1alpha1", "Memcached"),
        "memcacheds",
    );
    let memcacheds: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let (state, tracker) = track(client.clone(), namespace, &resource);
    let mut state = state;
    tokio::time::timeout(Duration::from_secs(60), state.wait_for(|s| s.synced()))
        .await
        .context("the bench's watches did not sync")??;
    tokio::time::sleep(SETTLE_BEFORE).await;

    let before = Snapshot::take(client, pid, apiserver_pid, etcd_pid, metrics_port).await?;
    let (memory, sampler) = sample_memory(pid);
    let n = settings.objects;

    // Phase 1: every object at once.
    let start = Instant::now();
    futures::stream::iter((0..n).map(|i| {
        let memcacheds = memcacheds.clone();
        let object = memcached(i, namespace, &resource);
        async move { memcacheds.create(&PostParams::default(), &object).await }
    }))
    .buffer_unordered(settings.load_width)
    .try_collect::<Vec<_>>()
    .await
    .context("cannot create the Memcacheds")?;
    wait_converged(&mut state, 1, n, settings.timeout).await?;
    let converge = start.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE_AFTER).await;
    let between = Snapshot::take(client, pid, apiserver_pid, etcd_pid, metrics_port).await?;

    // Phase 2: every object rescaled.
    let start = Instant::now();
    let patch = serde_json::json!({ "spec": { "size": 2 } });
    futures::stream::iter((0..n).map(|i| {
        let memcacheds = memcacheds.clone();
        let patch = &patch;
        async move {
            memcacheds
                .patch(&name(i), &PatchParams::default(), &Patch::Merge(patch))
                .await
        }
    }))
    .buffer_unordered(settings.load_width)
    .try_collect::<Vec<_>>()
    .await
    .context("cannot rescale the Memcacheds")?;
    wait_converged(&mut state, 2, n, settings.timeout).await?;
    let rescale = start.elapsed().as_secs_f64();
    tokio::time::sleep(SETTLE_AFTER).await;

    let after = Snapshot::take(client, pid, apiserver_pid, etcd_pid, metrics_port).await?;
    tracker.abort();
    let memory = *memory.borrow();
    sampler.abort();

    // The load's own requests: one create and one patch per object.
    let mut requests = diff(&after.requests, &before.requests);
    for key in ["POST memcacheds", "PATCH memcacheds"] {
        if let Some(count) = requests.get_mut(key) {
            *count -= n as f64;
        }
    }
    requests.retain(|_, count| *count != 0.0);
    Ok(Run {
        converge,
        rescale,
        operator_cpu: after.operator_cpu - before.operator_cpu,
        peak_rss_mib: after.operator_rss_kib / 1024.0,
        requests,
        apiserver_cpu: after.apiserver_cpu - before.apiserver_cpu,
        etcd_cpu: after.etcd_cpu - before.etcd_cpu,
        reconciles: after.reconciles - before.reconciles,
        reconcile_seconds: after.reconcile_seconds - before.reconcile_seconds,
        conflicts: after.conflicts - before.conflicts,
        server_seconds: after.server_seconds - before.server_seconds,
        etcd_seconds: after.etcd_seconds - before.etcd_seconds,
        server_time: diff(&after.server_time, &before.server_time),
        server_calls: diff(&after.server_calls, &before.server_calls),
        rescale_phase: Phase::between(&between, &after),
        memory,
        load: load_average(),
    })
}

fn name(i: usize) -> String {
    format!("memcached-{i:05}")
}

fn memcached(i: usize, namespace: &str, resource: &ApiResource) -> DynamicObject {
    let mut object = DynamicObject::new(&name(i), resource).within(namespace);
    // Both CRDs accept this spec (the Go one requires containerPort).
    object.data = serde_json::json!({ "spec": { "size": 1, "containerPort": 11211 } });
    object
}

async fn wait_converged(
    state: &mut watch::Receiver<Tracked>,
    size: i64,
    n: usize,
    timeout: Duration,
) -> anyhow::Result<()> {
    let waited = tokio::time::timeout(timeout, state.wait_for(|s| s.converged(size) >= n))
        .await
        .map(|result| result.map(drop));
    match waited {
        Ok(result) => result.context("the bench's watches stopped"),
        Err(_) => bail!(
            "only {} of {n} Memcacheds converged to size {size} within {timeout:?}",
            state.borrow().converged(size)
        ),
    }
}

/// What the bench's own watches saw: per Memcached, its size, resourceVersion and whether
/// it has an Available condition; per Deployment, its replicas and resourceVersion.
#[derive(Clone, Default)]
struct Tracked {
    memcacheds_synced: bool,
    deployments_synced: bool,
    /// Converged Memcacheds by the size they converged at.
    converged: BTreeMap<i64, usize>,
}

impl Tracked {
    fn synced(&self) -> bool {
        self.memcacheds_synced && self.deployments_synced
    }
    fn converged(&self, size: i64) -> usize {
        self.converged.get(&size).copied().unwrap_or(0)
    }
}

#[derive(Default)]
struct Objects {
    /// name -> (spec.size, resourceVersion, has an Available condition)
    memcacheds: HashMap<String, (i64, u64, bool)>,
    /// name -> (spec.replicas, resourceVersion)
    deployments: HashMap<String, (i64, u64)>,
    /// name -> the size it converged at
    converged: HashMap<String, i64>,
}

impl Objects {
    /// Re-evaluates `name` after an event; updates the counts.
    fn update(&mut self, name: &str, counts: &mut BTreeMap<i64, usize>) {
        let now = match (self.memcacheds.get(name), self.deployments.get(name)) {
            (Some(&(size, memcached_rv, available)), Some(&(replicas, deployment_rv)))
                if available && replicas == size && memcached_rv > deployment_rv =>
            {
                Some(size)
            }
            _ => None,
        };
        let was = match now {
            Some(size) => self.converged.insert(name.to_owned(), size),
            None => self.converged.remove(name),
        };
        if was != now {
            if let Some(size) = was {
                *counts.entry(size).or_default() -= 1;
            }
            if let Some(size) = now {
                *counts.entry(size).or_default() += 1;
            }
        }
    }
}

// Each event is moved once, from the watch to the tracker: the size does not matter.
#[allow(clippy::large_enum_variant)]
enum Seen {
    Memcached(watcher::Event<DynamicObject>),
    Deployment(watcher::Event<Deployment>),
}

fn resource_version(meta: &kube::api::ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// Watches the namespace's Memcacheds and Deployments; the receiver says how many
/// converged.
fn track(
    client: Client,
    namespace: &str,
    resource: &ApiResource,
) -> (watch::Receiver<Tracked>, tokio::task::JoinHandle<()>) {
    let memcacheds: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, resource);
    let deployments: Api<Deployment> = Api::namespaced(client, namespace);
    let (tx, rx) = watch::channel(Tracked::default());
    let events = futures::stream::select(
        watcher(memcacheds, watcher::Config::default()).map(|e| e.map(Seen::Memcached)),
        watcher(deployments, watcher::Config::default()).map(|e| e.map(Seen::Deployment)),
    );
    let task = tokio::spawn(async move {
        let mut objects = Objects::default();
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            let Ok(event) = event else { continue };
            tx.send_modify(|tracked| match event {
                Seen::Memcached(watcher::Event::InitDone) => tracked.memcacheds_synced = true,
                Seen::Deployment(watcher::Event::InitDone) => tracked.deployments_synced = true,
                Seen::Memcached(
                    watcher::Event::Apply(object) | watcher::Event::InitApply(object),
                ) => {
                    let name = object.metadata.name.clone().unwrap_or_default();
                    let size = object.data["spec"]["size"].as_i64().unwrap_or(0);
                    let available = object.data["status"]["conditions"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|c| c["type"] == "Available"));
                    let rv = resource_version(&object.metadata);
                    objects
                        .memcacheds
                        .insert(name.clone(), (size, rv, available));
                    objects.update(&name, &mut tracked.converged);
                }
                Seen::Deployment(
                    watcher::Event::Apply(object) | watcher::Event::InitApply(object),
                ) => {
                    let name = object.metadata.name.clone().unwrap_or_default();
                    let replicas = object.spec.replicas.unwrap_or(1).into();
                    let rv = resource_version(&object.metadata);
                    objects.deployments.insert(name.clone(), (replicas, rv));
                    objects.update(&name, &mut tracked.converged);
                }
                Seen::Memcached(watcher::Event::Delete(object)) => {
                    let name = object.metadata.name.clone().unwrap_or_default();
                    objects.memcacheds.remove(&name);
                    objects.update(&name, &mut tracked.converged);
                }
                Seen::Deployment(watcher::Event::Delete(object)) => {
                    let name = object.metadata.name.clone().unwrap_or_default();
                    objects.deployments.remove(&name);
                    objects.update(&name, &mut tracked.converged);
                }
                Seen::Memcached(watcher::Event::Init) | Seen::Deployment(watcher::Event::Init) => {}
            });
        }
    });
    (rx, task)
}

/// Counters read at the start and at the end of the measured phases.
struct Snapshot {
    requests: BTreeMap<String, f64>,
    conflicts: f64,
    server_time: BTreeMap<String, f64>,
    server_calls: BTreeMap<String, f64>,
    server_seconds: f64,
    etcd_seconds: f64,
    operator_cpu: f64,
    operator_rss_kib: f64,
    apiserver_cpu: f64,
    etcd_cpu: f64,
    reconciles: f64,
    reconcile_seconds: f64,
    /// Time objects waited in the work queue for a worker (both operators export it).
    queue_seconds: f64,
}

impl Snapshot {
    async fn take(
        client: &Client,
        operator: u32,
        apiserver: u32,
        etcd: u32,
        metrics_port: u16,
    ) -> anyhow::Result<Self> {
        let request = http::Request::get("/metrics").body(Vec::new())?;
        let text = client
            .request_text(request)
            .await
            .context("cannot read the API server's /metrics")?;
        let apiserver_metrics = parse_metrics(&text);
        let mut requests = BTreeMap::new();
        let mut server_time = BTreeMap::new();
        let mut server_calls = BTreeMap::new();
        let mut server_seconds = 0.0;
        let mut etcd_seconds = 0.0;
        let mut conflicts = 0.0;
        for (name, labels, value) in &apiserver_metrics {
            match name.as_str() {
                "apiserver_request_total" => {
                    if labels.get("code").is_some_and(|code| code == "409") {
                        conflicts += value;
                    }
                    if let Some(key) = request_key(labels) {
                        *requests.entry(key).or_insert(0.0) += value;
                    }
                }
                "apiserver_request_duration_seconds_sum"
                    if labels.get("verb").is_some_and(|v| v != "WATCH") =>
                {
                    server_seconds += value;
                    if let Some(key) = request_key(labels) {
                        *server_time.entry(key).or_insert(0.0) += value;
                    }
                }
                "apiserver_request_duration_seconds_count" => {
                    if let Some(key) = request_key(labels) {
                        *server_calls.entry(key).or_insert(0.0) += value;
                    }
                }
                "etcd_request_duration_seconds_sum" => etcd_seconds += value,
                _ => {}
            }
        }
        let operator_metrics = parse_metrics(&http_get(metrics_port, "/metrics").await?);
        let sum = |metric: &str| -> f64 {
            operator_metrics
                .iter()
                .filter(|(name, _, _)| name == metric)
                .map(|(_, _, value)| value)
                .sum()
        };
        Ok(Self {
            requests,
            conflicts,
            server_time,
            server_calls,
            server_seconds,
            etcd_seconds,
            operator_cpu: cpu_seconds(operator)?,
            operator_rss_kib: peak_rss_kib(operator)?,
            apiserver_cpu: cpu_seconds(apiserver)?,
            etcd_cpu: cpu_seconds(etcd)?,
            reconciles: sum("controller_runtime_reconcile_total"),
            reconcile_seconds: sum("controller_runtime_reconcile_time_seconds_sum"),
            queue_seconds: sum("workqueue_queue_duration_seconds_sum"),
        })
    }
}

/// "VERB resource[/subresource]"; none for non-resource URLs (this scrape, discovery),
/// which are not the operator's.
fn request_key(labels: &BTreeMap<String, String>) -> Option<String> {
    let resource = labels.get("resource").filter(|r| !r.is_empty())?;
    let mut key = format!(
        "{} {resource}",
        labels.get("verb").map_or("?", String::as_str)
    );
    if let Some(sub) = labels.get("subresource").filter(|s| !s.is_empty()) {
        let _ = write!(key, "/{sub}");
    }
    Some(key)
}

fn diff(after: &BTreeMap<String, f64>, before: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(key, value)| (key.clone(), value - before.get(key).copied().unwrap_or(0.0)))
        .collect()
}

type Sample = (String, BTreeMap<String, String>, f64);

/// Prometheus' text format: `name{label="value",...} value`, comments skipped.
fn parse_metrics(text: &str) -> Vec<Sample> {
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (series, value) = match line.rsplit_once(' ') {
            Some(split) => split,
            None => continue,
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, parse_labels(rest.trim_end_matches('}'))),
            None => (series, BTreeMap::new()),
        };
        samples.push((name.to_owned(), labels, value));
    }
    samples
}

fn parse_labels(text: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let mut rest = text;
    while let Some((key, after)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(if escaped == 'n' { '\n' } else { escaped });
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        labels.insert(key.trim_start_matches(',').trim().to_owned(), value);
        rest = &after[end..];
    }
    labels
}

/// A plain HTTP GET on localhost (the operators' metrics and probes): the body, or an
/// error for anything but 200.
async fn http_get(port: u16, path: &str) -> anyhow::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream
        .write_all(
            format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.lines().next().unwrap_or_default();
    if !status.contains(" 200") {
        bail!("GET 127.0.0.1:{port}{path}: {status}");
    }
    Ok(body.to_owned())
}

async fn wait_ready(port: u16, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        match http_get(port, "/readyz").await {
            Ok(_) => return Ok(()),
            Err(error) if Instant::now() > deadline => {
                return Err(error.context("the operator did not become ready"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// utime + stime of a process (all its threads), in seconds.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("process {pid} is gone"))?;
    // The fields after the command name (which may hold spaces), from field 3 (state).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let ticks = |i: usize| -> anyhow::Result<f64> {
        Ok(fields
            .get(i)
            .context("short /proc/<pid>/stat")?
            .parse::<f64>()?)
    };
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after the state.
    Ok((ticks(11)? + ticks(12)?) / clock_ticks())
}

fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|out| String::from_utf8(out.stdout).ok())
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

fn peak_rss_kib(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status_kib(&status, "VmHWM:").context("no VmHWM in /proc/<pid>/status")
}

/// The value in kB of `field` (e.g. `"VmHWM:"`) in the text of /proc/<pid>/status.
fn status_kib(status: &str, field: &str) -> Option<f64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Samples the operator's `RssAnon` and `RssFile` every 100 ms until aborted; the
/// receiver holds their peaks so far.
fn sample_memory(pid: u32) -> (watch::Receiver<MemoryPeaks>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = watch::channel(MemoryPeaks::default());
    let task = tokio::spawn(async move {
        let kib = |status: &str, field: &str| status_kib(status, field).unwrap_or(0.0);
        loop {
            if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
                let (anonymous, file) = (kib(&status, "RssAnon:"), kib(&status, "RssFile:"));
                tx.send_modify(|peaks| {
                    peaks.anonymous_kib = peaks.anonymous_kib.max(anonymous);
                    peaks.file_kib = peaks.file_kib.max(file);
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    (rx, task)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// The median over a side's runs of `figure`.
fn med(runs: &[Run], figure: impl Fn(&Run) -> f64) -> f64 {
    median(runs.iter().map(figure).collect())
}

/// The runs of `side` in `results`.
fn runs_of<'a>(results: &'a Results, side: &Side) -> &'a [Run] {
    results
        .iter()
        .find(|(s, _)| s == side)
        .map(|(_, runs)| runs.as_slice())
        .unwrap_or_default()
}

fn report(settings: &Settings, concurrency: Concurrency, results: &Results) -> String {
    let mut out = String::new();
    let runs = |side: &Side| runs_of(results, side);
    let sides: Vec<&Side> = results.iter().map(|(side, _)| side).collect();
    let go = sides.iter().copied().find(|side| side.is_go());
    let _ = writeln!(
        out,
        "\n## Race: {} Memcacheds, {}, medians of {} runs per side\n",
        settings.objects,
        concurrency.title(),
        settings.runs
    );
    for side in &sides {
        let loads: Vec<&str> = runs(side).iter().map(|r| r.load.as_str()).collect();
        let _ = writeln!(
            out,
            "- {}: load average at the end of each run: {}",
            side.title(),
            loads.join("; ")
        );
    }
    let _ = writeln!(out);
    let mut header = String::from("| figure |");
    let mut rule = String::from("|---|");
    for side in &sides {
        let _ = write!(header, " {} |", side.title());
        rule.push_str("---|");
    }
    if go.is_some() {
        for side in sides.iter().filter(|side| !side.is_go()) {
            let _ = write!(header, " {} / Go |", side.name);
            rule.push_str("---|");
        }
    }
    let _ = writeln!(out, "{header}\n{rule}");
    let n = settings.objects;
    type Figure<'a> = (String, Box<dyn Fn(&Run) -> f64 + 'a>, fn(f64) -> String);
    let seconds: fn(f64) -> String = |v| format!("{v:.2} s");
    let count: fn(f64) -> String = |v| format!("{v:.0}");
    let figures: Vec<Figure> = vec![
        (
            format!("time from the first create until all {n} converged"),
            Box::new(|r: &Run| r.converge),
            seconds,
        ),
        (
            format!("time from the first patch until all {n} rescaled"),
            Box::new(|r: &Run| r.rescale),
            seconds,
        ),
        (
            "operator CPU, both phases".into(),
            Box::new(|r: &Run| r.operator_cpu),
            seconds,
        ),
        ("peak RSS".into(), Box::new(|r: &Run| r.peak_rss_mib), |v| {
            format!("{v:.1} MiB")
        }),
        (
            "requests to the API server (the operator's)".into(),
            Box::new(Run::total_requests),
            count,
        ),
        (
            "API server + etcd CPU".into(),
            Box::new(|r: &Run| r.apiserver_cpu + r.etcd_cpu),
            seconds,
        ),
        ("reconciles".into(), Box::new(|r: &Run| r.reconciles), count),
        (
            "conflicts (409)".into(),
            Box::new(|r: &Run| r.conflicts),
            count,
        ),
        (
            "requests per reconcile".into(),
            Box::new(|r: &Run| r.total_requests() / r.reconciles),
            |v| format!("{v:.2}"),
        ),
        (
            "time per reconcile".into(),
            Box::new(|r: &Run| 1000.0 * r.reconcile_seconds / r.reconciles),
            |v| format!("{v:.1} ms"),
        ),
    ];
    for (title, figure, format) in &figures {
        let mut row = format!("| {title} |");
        let values: Vec<f64> = sides.iter().map(|s| med(runs(s), figure)).collect();
        for value in &values {
            let _ = write!(row, " {} |", format(*value));
        }
        if let Some(go) = go {
            let go = med(runs(go), figure);
            for (side, value) in sides.iter().zip(&values) {
                if !side.is_go() {
                    let _ = write!(row, " {:.2}× |", value / go);
                }
            }
        }
        let _ = writeln!(out, "{row}");
    }

    // Requests by verb and resource.
    let _ = writeln!(
        out,
        "\nThe operator's requests by verb and resource (medians; the load's {n} creates and \
         {n} patches of memcacheds are not counted; server-side ms: the API server's mean time \
         per request of that kind, the load's included):\n"
    );
    let mut header = String::from("| request |");
    let mut rule = String::from("|---|");
    for side in &sides {
        let _ = write!(
            header,
            " {} | per reconcile | server-side ms |",
            side.title()
        );
        rule.push_str("---|---|---|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    let mut keys: Vec<&String> = results
        .iter()
        .flat_map(|(_, runs)| runs)
        .flat_map(|r| r.requests.keys())
        .collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let mut row = format!("| {key} |");
        for side in &sides {
            let runs = runs(side);
            let count = med(runs, |r| r.requests.get(key).copied().unwrap_or(0.0));
            let per = med(runs, |r| {
                r.requests.get(key).copied().unwrap_or(0.0) / r.reconciles
            });
            let latency = med(runs, |r| {
                1000.0 * r.server_time.get(key).copied().unwrap_or(f64::NAN)
                    / r.server_calls.get(key).copied().unwrap_or(f64::NAN)
            });
            let _ = write!(row, " {count:.0} | {per:.2} | {latency:.1} |");
        }
        let _ = writeln!(out, "{row}");
    }

    // Where the time goes.
    let _ = writeln!(
        out,
        "\nWhere the time goes (medians; the first rows cover both phases, and their server-side and etcd \
         time include the load's requests; the rescale rows cover the rescale alone; \"not reconciling\" \
         assumes one reconcile at a time):\n"
    );
    let mut header = String::from("| |");
    let mut rule = String::from("|---|");
    for side in &sides {
        let _ = write!(header, " {} |", side.title());
        rule.push_str("---|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    let rows: Vec<Figure> = vec![
        (
            "both phases' time".into(),
            Box::new(|r: &Run| r.converge + r.rescale),
            seconds,
        ),
        (
            "reconciling (sum of reconcile times)".into(),
            Box::new(|r: &Run| r.reconcile_seconds),
            seconds,
        ),
        (
            "operator CPU".into(),
            Box::new(|r: &Run| r.operator_cpu),
            seconds,
        ),
        (
            "API server: time serving requests (sum, WATCH excluded)".into(),
            Box::new(|r: &Run| r.server_seconds),
            seconds,
        ),
        (
            "API server: time waiting on etcd (sum)".into(),
            Box::new(|r: &Run| r.etcd_seconds),
            seconds,
        ),
        (
            "kube-apiserver CPU".into(),
            Box::new(|r: &Run| r.apiserver_cpu),
            seconds,
        ),
        ("etcd CPU".into(), Box::new(|r: &Run| r.etcd_cpu), seconds),
    ];
    // The rescale, per object. At a concurrency of one the reconciles run one after
    // another: the phase's time is the reconciles' plus the time the worker waited for the
    // watch to deliver the next change (idle), and a reconcile's time is its requests'
    // server-side time plus the client's (encoding, TLS, decoding, waiting for a core).
    // At any concurrency, the reconciles running at once and the time objects waited in
    // the queue tell whether the workers were the limit, and the phase's CPU whether the
    // control plane was.
    let per_object = |figure: fn(&Run) -> f64| -> Box<dyn Fn(&Run) -> f64> {
        Box::new(move |r: &Run| 1000.0 * figure(r) / n as f64)
    };
    let ms: fn(f64) -> String = |v| format!("{v:.1} ms");
    let rescale_rows: Vec<Figure> = vec![
        (
            "rescale: time per object".into(),
            per_object(|r| r.rescale),
            ms,
        ),
        (
            "rescale: reconciling, per object".into(),
            per_object(|r| r.rescale_phase.reconcile_seconds),
            ms,
        ),
        (
            "rescale: … of which the reconciles' requests, server-side".into(),
            per_object(|r| r.rescale_phase.reconcile_request_seconds()),
            ms,
        ),
        (
            "rescale: … of which the client (the rest)".into(),
            per_object(|r| {
                r.rescale_phase.reconcile_seconds - r.rescale_phase.reconcile_request_seconds()
            }),
            ms,
        ),
        (
            "rescale: not reconciling (waiting for deliveries), per object".into(),
            per_object(|r| (r.rescale - r.rescale_phase.reconcile_seconds).max(0.0)),
            ms,
        ),
        (
            "rescale: reconciles running at once, on average".into(),
            Box::new(|r: &Run| r.rescale_phase.reconcile_seconds / r.rescale),
            |v| format!("{v:.2}"),
        ),
        (
            "rescale: waiting in the work queue for a worker, per object".into(),
            per_object(|r| r.rescale_phase.queue_seconds),
            ms,
        ),
        (
            "rescale: every request's server-side time (the load's, Events'), per object".into(),
            per_object(|r| {
                let phase = &r.rescale_phase;
                let relists = |key: &String| key.starts_with("LIST ") || key.ends_with(" leases");
                phase
                    .server_time
                    .iter()
                    .filter(|(key, _)| !relists(key))
                    .map(|(_, s)| s)
                    .sum()
            }),
            ms,
        ),
        (
            "rescale: API server + etcd CPU, per object".into(),
            per_object(|r| r.rescale_phase.control_plane_cpu),
            ms,
        ),
        (
            "rescale: operator CPU, per object".into(),
            per_object(|r| r.rescale_phase.operator_cpu),
            ms,
        ),
        (
            "rescale: reconciles per object".into(),
            Box::new(move |r: &Run| r.rescale_phase.reconciles / n as f64),
            |v| format!("{v:.2}"),
        ),
        (
            "peak RSS: anonymous (heap, stacks)".into(),
            Box::new(|r: &Run| r.memory.anonymous_kib / 1024.0),
            |v| format!("{v:.1} MiB"),
        ),
        (
            "peak RSS: file-backed (the binary's and libraries' pages)".into(),
            Box::new(|r: &Run| r.memory.file_kib / 1024.0),
            |v| format!("{v:.1} MiB"),
        ),
    ];
    for (title, figure, format) in rows.iter().chain(&rescale_rows) {
        let mut row = format!("| {title} |");
        for side in &sides {
            let _ = write!(row, " {} |", format(med(runs(side), figure)));
        }
        let _ = writeln!(out, "{row}");
    }

    // Every run, for the record.
    let _ = writeln!(out, "\nEvery run:\n");
    let _ = writeln!(
        out,
        "| side | converge | rescale | CPU | RSS | requests | conflicts | reconciles | apiserver+etcd CPU | load |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    for side in &sides {
        for r in runs(side) {
            let _ = writeln!(
                out,
                "| {} | {:.2} s | {:.2} s | {:.2} s | {:.1} MiB | {:.0} | {:.0} | {:.0} | {:.2} s | {} |",
                side.title(),
                r.converge,
                r.rescale,
                r.operator_cpu,
                r.peak_rss_mib,
                r.total_requests(),
                r.conflicts,
                r.reconciles,
                r.apiserver_cpu + r.etcd_cpu,
                r.load
            );
        }
    }
    out
}

/// One table over every concurrency raced: each side's medians, and their ratios against
/// controller-runtime at the same concurrency and at its default.
fn summary(settings: &Settings, results: &[(Concurrency, Results)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Summary: {} Memcacheds, medians of {} runs per side and concurrency\n",
        settings.objects, settings.runs
    );
    let go_default = results
        .iter()
        .find(|(c, _)| *c == Concurrency::Default)
        .and_then(|(_, r)| r.iter().find(|(side, _)| side.is_go()))
        .map(|(_, runs)| runs.as_slice());
    let _ = writeln!(
        out,
        "Ratios: against controller-runtime at the same concurrency; in brackets, against \
         controller-runtime at its default (one at a time), where raced.\n"
    );
    let _ = writeln!(
        out,
        "| concurrency | side | converge | rescale | API server + etcd CPU | conflicts (409) | reconciles | peak RSS | load (last run) |\n|---|---|---|---|---|---|---|---|---|"
    );
    for (concurrency, by_side) in results {
        let go = by_side
            .iter()
            .find(|(side, _)| side.is_go())
            .map(|(_, runs)| runs.as_slice());
        for (side, runs) in by_side {
            let cell = |figure: fn(&Run) -> f64, unit: &str| {
                let value = med(runs, figure);
                let mut cell = format!("{value:.2}{unit}");
                if let Some(go) = go.filter(|_| !side.is_go()) {
                    let _ = write!(cell, " ({:.2}×", value / med(go, figure));
                    if let Some(default) = go_default {
                        let _ = write!(cell, " [{:.2}×]", value / med(default, figure));
                    }
                    cell.push(')');
                }
                cell
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.1} MiB | {} |",
                concurrency.short(),
                side.title(),
                cell(|r| r.converge, " s"),
                cell(|r| r.rescale, " s"),
                cell(|r| r.apiserver_cpu + r.etcd_cpu, " s"),
                med(runs, |r| r.conflicts),
                med(runs, |r| r.reconciles),
                med(runs, |r| r.peak_rss_mib),
                runs.last().map_or("", |r| r.load.as_str()),
            );
        }
    }
    out
}
