//! Sharded replicas (`--sharding`) of a Memcached-like operator on a real API server
//! (envtest), with 1, 2 and 4 replicas, once with the API server filtering each replica's
//! watch (`--feature-gates=ShardedListAndWatch=true`: the server-side selector) and once
//! without (each replica watches every object and its gate filters). Issue #45's figures:
//! `cargo bench -p rkb-manager --bench sharding` (needs KUBEBUILDER_ASSETS or
//! `rkb setup-envtest`). The number of objects is `RKB_SHARDING_BENCH_OBJECTS`, 20,000 by
//! default.
//!
//! The workload stands for the Memcached operator of `rkb create api --image`: a CRD
//! (`Memcached`, `spec.size`) whose controller (`cache::controller` and `cache::owns`, as
//! scaffolded) applies one owned Deployment per object with `size` replicas, skipped when
//! the Deployment in its cache already has them, and writes `status.size` and
//! `status.observedGeneration` back. No kube-controller-manager runs, so the Deployments
//! start no pods, and the controller watches no pods and writes no Service or Events. Each
//! replica reconciles one object at a time (the manager's default; the scaffold's `--image`
//! controller asks four), so the replicas are the only parallelism being measured;
//! `RKB_SHARDING_BENCH_CONCURRENCY` sets another.
//!
//! For each mode and replica count, in a fresh namespace: the objects are created, then the
//! replicas are started, each a process of its own (this executable again), so that its
//! peak resident memory (VmHWM) is its own. Printed per case:
//! - converge: from the replicas' start until the bench's own watch of the Memcacheds shows
//!   every one's status written for its generation;
//! - rescale: from the first write of `spec.size` 1 → 2 to every object's status showing
//!   it (the writes, 50 at a time, are part of it: their duration is printed too);
//! - the API server's CPU time (user + system, from /proc) during each of those phases; it
//!   includes serving the bench's own writes and watch;
//! - per replica: peak RSS, watch events received (lines of watch responses, bookmarks
//!   included) of Memcacheds and of everything (Deployments, Leases), and bytes of every
//!   response body received, counted by a client layer under the manager's client.

use std::collections::BTreeMap;
use std::io::{BufRead as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use futures::StreamExt as _;
use http_body_util::BodyExt as _;
use http_body_util::combinators::UnsyncBoxBody;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, ContainerPort, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Client, CustomResource, CustomResourceExt as _, Resource as _, ResourceExt as _};
use rkb_manager::Lister;
use rkb_manager::cache;
use rkb_manager::manager::{Args, Context, Manager, Runnable};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How many Memcacheds each case creates.
const OBJECTS: &str = "RKB_SHARDING_BENCH_OBJECTS";
/// Reconciles each replica runs at once (`--concurrency`), 1 unless set.
const CONCURRENCY: &str = "RKB_SHARDING_BENCH_CONCURRENCY";
/// Set, this executable runs one replica: the kubeconfig path and the namespace, separated
/// by a newline.
const REPLICA: &str = "RKB_SHARDING_BENCH_REPLICA";
const FIELD_MANAGER: &str = "memcached-bench";
const GATE: &str = "--feature-gates=ShardedListAndWatch=true";

#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    namespaced,
    status = "MemcachedStatus"
)]
pub struct MemcachedSpec {
    size: i32,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    size: Option<i32>,
    observed_generation: Option<i64>,
}

/// Whether `memcached`'s status shows `size`, written for its current spec.
fn reconciled(memcached: &Memcached, size: i32) -> bool {
    memcached.status.as_ref().is_some_and(|status| {
        status.size == Some(size) && status.observed_generation == memcached.metadata.generation
    })
}

/// What a replica received from the API server.
#[derive(Default)]
struct Received {
    bytes: AtomicU64,
    memcached_events: AtomicU64,
    events: AtomicU64,
}

/// `inner`, counting what its responses bring into `received`.
fn counting(inner: Client, received: &Arc<Received>) -> Client {
    let received = received.clone();
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let (inner, received) = (inner.clone(), received.clone());
        let query = request.uri().query().unwrap_or_default();
        let watch = query.split('&').any(|kv| kv == "watch=true");
        let memcacheds = request.uri().path().ends_with("/memcacheds");
        async move {
            let response = inner.send(request).await?;
            Ok::<_, kube::Error>(response.map(|body| -> UnsyncBoxBody<Bytes, kube::Error> {
                body.map_frame(move |frame| {
                    if let Some(data) = frame.data_ref() {
                        received
                            .bytes
                            .fetch_add(data.len() as u64, Ordering::Relaxed);
                        if watch {
                            // One JSON object a line: one event.
                            let lines = data.iter().filter(|b| **b == b'\n').count() as u64;
                            received.events.fetch_add(lines, Ordering::Relaxed);
                            if memcacheds {
                                received
                                    .memcached_events
                                    .fetch_add(lines, Ordering::Relaxed);
                            }
                        }
                    }
                    frame
                })
                .boxed_unsync()
            }))
        }
    });
    Client::new(service, "default")
}

struct State {
    client: Client,
    deployments: Lister<Deployment>,
}

/// The Deployment of `memcached`: `size` memcached pods, owned by it.
fn deployment(memcached: &Memcached) -> Deployment {
    let labels = BTreeMap::from([("app.kubernetes.io/instance".into(), memcached.name_any())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(memcached.name_any()),
            namespace: memcached.namespace(),
            labels: Some(labels.clone()),
            owner_references: memcached.controller_owner_ref(&()).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(memcached.spec.size),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "memcached".into(),
                        image: Some("memcached:1.6-alpine".into()),
                        command: Some(vec!["memcached".into(), "--port=11211".into()]),
                        ports: Some(vec![ContainerPort {
                            container_port: 11211,
                            name: Some("memcached".into()),
                            ..ContainerPort::default()
                        }]),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

async fn reconcile(memcached: Arc<Memcached>, state: Arc<State>) -> Result<Action, kube::Error> {
    state.deployments.wait_until_synced().await;
    let (name, namespace) = (
        memcached.name_any(),
        memcached.namespace().unwrap_or_default(),
    );
    let size = memcached.spec.size;
    let current = state.deployments.get(&namespace, &name);
    if current.and_then(|d| d.spec.replicas) != Some(size) {
        Api::<Deployment>::namespaced(state.client.clone(), &namespace)
            .patch(
                &name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(deployment(&memcached)),
            )
            .await?;
    }
    if !reconciled(&memcached, size) {
        let status = serde_json::json!({"status": {
            "size": size,
            "observedGeneration": memcached.metadata.generation,
        }});
        Api::<Memcached>::namespaced(state.client.clone(), &namespace)
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(status))
            .await?;
    }
    Ok(Action::await_change())
}

fn controller(namespace: String) -> Runnable {
    Runnable::new("memcached", move |ctx: Context| async move {
        let client = ctx.client();
        let memcacheds = cache::controller(
            Api::<Memcached>::namespaced(client.clone(), &namespace),
            watcher::Config::default(),
        );
        let (controller, deployments) = cache::owns(
            memcacheds,
            Api::<Deployment>::namespaced(client.clone(), &namespace),
            watcher::Config::default(),
        );
        let state = Arc::new(State {
            client,
            deployments,
        });
        let error_policy = |_: Arc<Memcached>, _: &kube::Error, _: Arc<State>| {
            Action::requeue(Duration::from_secs(1))
        };
        ctx.run(controller, reconcile, error_policy, state).await
    })
}

/// `VmHWM` of this process, in KiB.
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// One replica, in this process, until its standard input closes: prints `peak_kib
/// memcached_events events bytes`.
async fn run_replica(kubeconfig: &str, namespace: &str) {
    let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
    let kubeconfig = Kubeconfig::read_from(kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    let received = Arc::new(Received::default());
    let client = counting(Client::try_from(config).unwrap(), &received);
    let args = Args::parse_from([
        "manager",
        "--sharding",
        &format!("--concurrency={}", concurrency()),
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
        &format!("--leader-election-namespace={namespace}"),
    ]);
    let manager = Manager::new(FIELD_MANAGER, client, args);
    let shutdown = manager.shutdown_token();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        shutdown.cancel();
    });
    manager
        .run([controller(namespace.to_owned())])
        .await
        .unwrap();
    println!(
        "{} {} {} {}",
        peak_memory(),
        received.memcached_events.load(Ordering::Relaxed),
        received.events.load(Ordering::Relaxed),
        received.bytes.load(Ordering::Relaxed),
    );
}

/// CPU time (user + system) process `pid` has used.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command name in parentheses: field 3 (state) first, utime and stime are
    // fields 14 and 15.
    let fields: Vec<u64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().map(|f| f.parse().unwrap_or(0)))
        .into_iter()
        .flatten()
        .collect();
    let ticks = fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0);
    // In USER_HZ, 100 a second on Linux's common architectures (`getconf CLK_TCK`).
    Duration::from_millis(ticks * 10)
}

/// Waits until every one of `objects` Memcacheds in `store` shows `size`.
async fn converged(store: &Store<Memcached>, objects: usize, size: i32) {
    let deadline =
        Instant::now() + Duration::from_secs(600) + Duration::from_millis(objects as u64 * 50);
    loop {
        let done = store.state().iter().filter(|m| reconciled(m, size)).count();
        if done == objects {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {done} of {objects} Memcacheds reached size {size}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Per replica: peak RSS (KiB), Memcached watch events, all watch events, bytes received.
type ReplicaFigures = [u64; 4];

struct Figures {
    converge: Duration,
    converge_cpu: Duration,
    writes: Duration,
    rescale: Duration,
    rescale_cpu: Duration,
    replicas: Vec<ReplicaFigures>,
}

async fn run_case(env: &rkb_envtest::Environment, objects: usize, replicas: usize) -> Figures {
    let (api_server, _etcd) = env.process_ids().expect("a control plane started here");
    let namespace = env.create_namespace().await.unwrap();
    let memcacheds = Api::<Memcached>::namespaced(env.client(), &namespace);
    futures::stream::iter(0..objects)
        .map(|n| {
            let memcacheds = memcacheds.clone();
            async move {
                let memcached =
                    Memcached::new(&format!("memcached-{n}"), MemcachedSpec { size: 1 });
                memcacheds
                    .create(&PostParams::default(), &memcached)
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(50)
        .collect::<()>()
        .await;
    let (store, writer) = reflector::store();
    let watching = tokio::spawn(
        watcher(memcacheds.clone(), watcher::Config::default())
            .reflect(writer)
            .for_each(|_| async {}),
    );
    store.wait_until_ready().await.unwrap();

    let cpu = cpu_time(api_server);
    let started = Instant::now();
    let exe = std::env::current_exe().unwrap();
    let kubeconfig = env.kubeconfig_path().to_str().unwrap().to_owned();
    let mut children: Vec<Child> = (0..replicas)
        .map(|_| {
            Command::new(&exe)
                .env(REPLICA, format!("{kubeconfig}\n{namespace}"))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    converged(&store, objects, 1).await;
    let converge = started.elapsed();
    let converge_cpu = cpu_time(api_server) - cpu;
    // Let hand-offs end before the change.
    tokio::time::sleep(Duration::from_secs(5)).await;

    let cpu = cpu_time(api_server);
    let started = Instant::now();
    let patch = serde_json::json!({"spec": {"size": 2}});
    futures::stream::iter(0..objects)
        .map(|n| {
            let (memcacheds, patch) = (memcacheds.clone(), patch.clone());
            async move {
                memcacheds
                    .patch(
                        &format!("memcached-{n}"),
                        &PatchParams::default(),
                        &Patch::Merge(patch),
                    )
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(50)
        .collect::<()>()
        .await;
    let writes = started.elapsed();
    converged(&store, objects, 2).await;
    let rescale = started.elapsed();
    let rescale_cpu = cpu_time(api_server) - cpu;
    watching.abort();

    for child in &mut children {
        // Closing its standard input stops a replica.
        drop(child.stdin.take());
    }
    let replicas = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "a replica failed");
            let line = output.stdout.lines().map_while(Result::ok).last();
            let fields: Vec<u64> = line
                .unwrap_or_default()
                .split_whitespace()
                .map(|f| f.parse().unwrap())
                .collect();
            fields.try_into().expect("four figures from each replica")
        })
        .collect();
    Figures {
        converge,
        converge_cpu,
        writes,
        rescale,
        rescale_cpu,
        replicas,
    }
}

/// A figure of each replica, formatted, separated by commas.
fn each(replicas: &[ReplicaFigures], value: impl Fn(&ReplicaFigures) -> String) -> String {
    replicas.iter().map(value).collect::<Vec<_>>().join(", ")
}

/// [`CONCURRENCY`]: the replicas, started by [`bench`], inherit it.
fn concurrency() -> u16 {
    match std::env::var(CONCURRENCY) {
        Ok(n) => n.parse().ok().filter(|n| *n > 0).unwrap_or_else(|| {
            panic!("{CONCURRENCY}={n:?}: expected reconciles at once per replica, e.g. 4")
        }),
        Err(_) => 1,
    }
}

async fn bench() {
    let objects: usize = match std::env::var(OBJECTS) {
        Ok(n) => n
            .parse()
            .unwrap_or_else(|_| panic!("{OBJECTS}={n:?}: expected a number of objects, e.g. 2000")),
        Err(_) => 20_000,
    };
    println!(
        "{objects} Memcacheds, {} reconciles at once per replica; load before: {}",
        concurrency(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "| filtering | replicas | converge | rescale (writes) | API-server CPU converge / rescale | peak RSS per replica | Memcached / all watch events per replica | received per replica |"
    );
    println!("|---|---:|---:|---:|---:|---|---|---|");
    for (filtering, flags) in [
        ("server-side selector", vec![GATE]),
        ("client-side", vec![]),
    ] {
        let env = rkb_envtest::Environment::start_with_api_server_flags(flags)
            .await
            .unwrap();
        env.apply().crds([Memcached::crd()]).await.unwrap();
        for replicas in [1, 2, 4] {
            let f = run_case(&env, objects, replicas).await;
            let mib = |kib: u64| format!("{:.1}", kib as f64 / 1024.0);
            println!(
                "| {filtering} | {replicas} | {:.1} s | {:.1} s ({:.1} s) | {:.1} s / {:.1} s | {} MiB | {} | {} MiB |",
                f.converge.as_secs_f64(),
                f.rescale.as_secs_f64(),
                f.writes.as_secs_f64(),
                f.converge_cpu.as_secs_f64(),
                f.rescale_cpu.as_secs_f64(),
                each(&f.replicas, |r| mib(r[0])),
                each(&f.replicas, |r| format!("{} / {}", r[1], r[2])),
                each(&f.replicas, |r| mib(r[3] / 1024)),
            );
            std::io::stdout().flush().unwrap();
        }
    }
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // `cargo bench` passes `--bench`; a filter argument is not used.
    if let Ok(replica) = std::env::var(REPLICA) {
        let (kubeconfig, namespace) = replica.split_once('\n').expect("kubeconfig\\nnamespace");
        runtime.block_on(run_replica(kubeconfig, namespace));
        return;
    }
    runtime.block_on(bench());
}
