//! Sharded managers on a real API server (envtest): replicas in one process reconcile a few
//! hundred ConfigMaps, scale 3 → 5 → 2 while the objects change, and one replica is dropped
//! without releasing anything. A checker records every reconcile's start and end per object
//! and replica, and fails on any overlap and on any object left unreconciled. With the API
//! server's `ShardedListAndWatch` gate on, each replica's watch holds only its slices'
//! objects; without it, every object.
//!
//! Run with `--nocapture` to see the figures.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use futures::future::join_all;
use futures::{FutureExt as _, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use rkb_manager::manager::{Args, Context, Manager, Runnable};
use rkb_manager::shard::{Gate, Slices, shard_key};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const OBJECTS: usize = 300;
const WAIT: Duration = Duration::from_secs(90);
const LEASE_DURATION: Duration = Duration::from_secs(4);

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

/// Every reconcile, as the replicas report them.
#[derive(Default)]
struct Checker {
    /// Object → (replica, the generation of its data it saw) of the reconcile running now.
    running: HashMap<String, (usize, u64)>,
    /// Object → (replica, start, generation seen) of every reconcile started.
    started: HashMap<String, Vec<(usize, Instant, u64)>>,
    overlaps: Vec<String>,
    /// Replica → its view, and whether its controller has returned: for the report of a
    /// stall.
    replicas: std::collections::BTreeMap<usize, (View, Arc<AtomicBool>)>,
}

/// Ends a reconcile in the checker when dropped: when it returns, or when its replica is
/// killed in the middle of it.
struct Running {
    checker: Arc<Mutex<Checker>>,
    key: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.checker.lock().unwrap().running.remove(&self.key);
    }
}

impl Checker {
    fn start(this: &Arc<Mutex<Self>>, key: &str, replica: usize, generation: u64) -> Running {
        let mut checker = this.lock().unwrap();
        if let Some((other, seen)) = checker.running.get(key) {
            let overlap = format!(
                "{key}: replica {replica} started while replica {other} (generation {seen}) still ran"
            );
            checker.overlaps.push(overlap);
        }
        checker
            .running
            .insert(key.to_owned(), (replica, generation));
        checker.started.entry(key.to_owned()).or_default().push((
            replica,
            Instant::now(),
            generation,
        ));
        Running {
            checker: this.clone(),
            key: key.to_owned(),
        }
    }

    /// When each object was first reconciled at `generation`, if all were.
    fn served_at(&self, generation: u64) -> Option<Vec<Instant>> {
        (0..OBJECTS)
            .map(|n| {
                self.started
                    .get(&name(n))?
                    .iter()
                    .find(|(_, _, seen)| *seen >= generation)
                    .map(|(_, at, _)| *at)
            })
            .collect()
    }

    fn replicas_serving_since(&self, since: Instant) -> usize {
        let mut replicas: Vec<usize> = self
            .started
            .values()
            .flatten()
            .filter(|(_, at, _)| *at >= since)
            .map(|(replica, _, _)| *replica)
            .collect();
        replicas.sort_unstable();
        replicas.dedup();
        replicas.len()
    }
}

fn name(n: usize) -> String {
    format!("object-{n:03}")
}

/// A replica's gate and its controller's store, once its controller is built.
type View = Arc<Mutex<Option<(Gate, Store<ConfigMap>)>>>;

struct Replica {
    shutdown: CancellationToken,
    running: JoinHandle<anyhow::Result<()>>,
    view: View,
}

impl Replica {
    /// The slices it serves and the names of the objects its watch holds.
    fn view(&self) -> Option<(Gate, Vec<Arc<ConfigMap>>)> {
        let view = self.view.lock().unwrap();
        let (gate, store) = view.as_ref()?;
        Some((gate.clone(), store.state()))
    }
}

fn start_replica(
    client: kube::Client,
    namespace: &str,
    index: usize,
    checker: &Arc<Mutex<Checker>>,
) -> Replica {
    // ANCHOR: flags
    let args = Args::parse_from([
        "manager",
        "--sharding",
        "--sharding-slices=32",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
        "--concurrency=4",
        &format!("--leader-election-namespace={namespace}"),
        &format!(
            "--leader-election-lease-duration={}s",
            LEASE_DURATION.as_secs()
        ),
        "--leader-election-renew-deadline=3s",
        "--leader-election-retry-period=500ms",
    ]);
    // ANCHOR_END: flags
    let manager = Manager::new("sharding-test", client, args);
    let shutdown = manager.shutdown_token();
    let view = View::default();
    let returned = Arc::new(AtomicBool::new(false));
    checker
        .lock()
        .unwrap()
        .replicas
        .insert(index, (view.clone(), returned.clone()));
    let controller = Runnable::new("configmap", {
        let (namespace, checker, view) = (namespace.to_owned(), checker.clone(), view.clone());
        move |ctx: Context| async move {
            // rkb's controller: its watch follows the slices this replica serves.
            let controller = rkb_manager::cache::controller_of_every_change(
                Api::<ConfigMap>::namespaced(ctx.client(), &namespace),
                watcher::Config::default(),
            );
            *view.lock().unwrap() = Some((ctx.shard().unwrap().clone(), controller.store()));
            let reconcile = move |object: Arc<ConfigMap>, checker: Arc<Mutex<Checker>>| async move {
                let key = object.metadata.name.clone().unwrap_or_default();
                let generation = object
                    .data
                    .as_ref()
                    .and_then(|d| d.get("generation"))
                    .and_then(|g| g.parse().ok())
                    .unwrap_or(0);
                let _running = Checker::start(&checker, &key, index, generation);
                // Long enough for a second replica to start on it, were it allowed to.
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, Never>(Action::await_change())
            };
            let error_policy =
                |_: Arc<ConfigMap>, _: &Never, _: Arc<Mutex<Checker>>| Action::await_change();
            let ran = ctx.run(controller, reconcile, error_policy, checker).await;
            returned.store(true, Ordering::SeqCst);
            ran
        }
    });
    Replica {
        shutdown,
        running: tokio::spawn(manager.run([controller])),
        view,
    }
}

/// Sets every object's data to `generation`, returning when the writes were done.
async fn change_all(objects: &Api<ConfigMap>, generation: u64) -> Instant {
    let patch = serde_json::json!({"data": {"generation": generation.to_string()}});
    futures::stream::iter(0..OBJECTS)
        .map(|n| {
            let patch = patch.clone();
            async move {
                objects
                    .patch(&name(n), &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(50)
        .collect::<()>()
        .await;
    Instant::now()
}

/// Waits until every object was reconciled at `generation`; returns the latest of those
/// reconciles' starts.
async fn converged(
    checker: &Arc<Mutex<Checker>>,
    leases: &Api<Lease>,
    generation: u64,
    phase: &str,
) -> Instant {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(starts) = checker.lock().unwrap().served_at(generation) {
            return starts.into_iter().max().unwrap();
        }
        if Instant::now() > deadline {
            // What the replicas published, to tell a stuck hand-off from a stuck watch.
            for lease in leases.list(&Default::default()).await.unwrap() {
                eprintln!(
                    "{}: {:?} renewed {:?}",
                    lease.metadata.name.unwrap_or_default(),
                    lease.metadata.annotations.unwrap_or_default(),
                    lease.spec.and_then(|s| s.renew_time),
                );
            }
            let objects = Api::<ConfigMap>::namespaced(
                leases.clone().into_client(),
                leases.namespace().unwrap(),
            );
            let uids: HashMap<String, String> = objects
                .list(&Default::default())
                .await
                .unwrap()
                .into_iter()
                .map(|o| (o.metadata.name.unwrap(), o.metadata.uid.unwrap()))
                .collect();
            let checker = checker.lock().unwrap();
            report_stall(&checker, &uids, generation);
            let missing: Vec<String> = (0..OBJECTS)
                .map(name)
                .filter(|key| {
                    checker
                        .started
                        .get(key)
                        .is_none_or(|s| s.iter().all(|(_, _, seen)| *seen < generation))
                })
                .collect();
            panic!(
                "{phase}: {} objects never reconciled at generation {generation}, e.g. {:?}",
                missing.len(),
                &missing[..missing.len().min(5)]
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What each replica was doing when objects went unserved: the slices it served and
/// the reconciles in flight in them, what its watch held, whether its controller had
/// returned; and the slices of the objects not reconciled, with the last replica that
/// reconciled each and what it saw.
fn report_stall(checker: &Checker, uids: &HashMap<String, String>, generation: u64) {
    let slices = Slices::new(32).unwrap();
    for (index, (view, returned)) in &checker.replicas {
        let view = view.lock().unwrap();
        match view.as_ref() {
            Some((gate, store)) => eprintln!(
                "replica {index}: serving {:?}, in flight {:?}, server-side {:?}, its watch holds {} objects (ready: {}), controller returned: {}",
                gate.serving(),
                slices
                    .all()
                    .filter(|s| gate.in_flight(*s) > 0)
                    .collect::<Vec<_>>(),
                gate.server_side(),
                store.len(),
                store.wait_until_ready().now_or_never().is_some(),
                returned.load(Ordering::SeqCst),
            ),
            None => eprintln!("replica {index}: no controller built"),
        }
    }
    let mut missing: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
    for n in 0..OBJECTS {
        let key = name(n);
        let last = checker.started.get(&key).and_then(|s| s.last()).copied();
        if last.is_none_or(|(_, _, seen)| seen < generation) {
            let slice = uids.get(&key).map_or(u32::MAX, |uid| slices.of_key(uid));
            let last = last.map(|(replica, at, seen)| {
                format!("replica {replica} saw {seen} {:?} ago", at.elapsed())
            });
            missing.entry(slice).or_default().push(format!(
                "{key} ({})",
                last.unwrap_or_else(|| "never reconciled".into())
            ));
        }
    }
    for (slice, objects) in missing {
        eprintln!(
            "slice {slice}: {} unserved, e.g. {:?}",
            objects.len(),
            &objects[..objects.len().min(2)]
        );
    }
}

async fn stop(replica: Replica) {
    replica.shutdown.cancel();
    tokio::time::timeout(WAIT, replica.running)
        .await
        .expect("a replica did not stop")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "one unexplained stall in about 18 runs (docs/src/design/sharded-operators.md, Not done): run by hand with --ignored"]
async fn sharded_replicas_never_reconcile_one_object_at_once() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let namespace = env.create_namespace().await.unwrap();
    scale_and_kill(env.client(), &namespace).await;
}

/// The same on an API server that filters watches by shard: every replica's watch lists
/// again at each hand-off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "as above: run by hand with --ignored"]
async fn sharded_replicas_on_sharded_watches_never_reconcile_one_object_at_once() {
    let gated = rkb_envtest::Environment::start_with_api_server_flags([
        "--feature-gates=ShardedListAndWatch=true",
    ])
    .await
    .unwrap();
    let namespace = gated.create_namespace().await.unwrap();
    scale_and_kill(gated.client(), &namespace).await;
}

/// 3 replicas, then 5, then 2 (three stop gracefully), then one killed, while every object
/// changes at each step; no overlap, and the killed replica's slices served again within a
/// lease duration and a few rounds.
async fn scale_and_kill(client: kube::Client, namespace: &str) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
        .with_test_writer()
        .try_init();
    let namespace = namespace.to_owned();
    let objects = Api::<ConfigMap>::namespaced(client.clone(), &namespace);
    for n in 0..OBJECTS {
        let object = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name(n)),
                ..Default::default()
            },
            data: Some([("generation".to_owned(), "0".to_owned())].into()),
            ..Default::default()
        };
        objects
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }
    let leases = Api::<Lease>::namespaced(client.clone(), &namespace);
    let checker = Arc::new(Mutex::new(Checker::default()));
    let mut figures = Vec::new();

    // Three replicas share the objects.
    let started = Instant::now();
    let mut replicas: Vec<Replica> = (0..3)
        .map(|i| start_replica(client.clone(), &namespace, i, &checker))
        .collect();
    let done = converged(&checker, &leases, 0, "3 replicas").await;
    figures.push(format!(
        "3 replicas: every object reconciled {:?} after start",
        done - started
    ));
    // Let the group settle, then see that each replica did a share.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = Instant::now();
    let changed = change_all(&objects, 1).await;
    let done = converged(&checker, &leases, 1, "3 replicas, changed").await;
    figures.push(format!(
        "3 replicas: a change of every object served in {:?}",
        done - changed
    ));
    assert_eq!(checker.lock().unwrap().replicas_serving_since(before), 3);

    // Scale to 5 while the objects change.
    replicas.extend((3..5).map(|i| start_replica(client.clone(), &namespace, i, &checker)));
    let changed = change_all(&objects, 2).await;
    let done = converged(&checker, &leases, 2, "3 → 5 replicas").await;
    figures.push(format!(
        "3 → 5: a change of every object served in {:?}",
        done - changed
    ));
    tokio::time::sleep(LEASE_DURATION).await;
    let before = Instant::now();
    let changed = change_all(&objects, 3).await;
    let done = converged(&checker, &leases, 3, "5 replicas").await;
    figures.push(format!(
        "5 replicas: a change of every object served in {:?}",
        done - changed
    ));
    assert_eq!(checker.lock().unwrap().replicas_serving_since(before), 5);

    // Scale to 2 (three stop gracefully, handing their slices over) while objects change.
    let leaving: Vec<Replica> = [0, 2, 4]
        .into_iter()
        .rev()
        .map(|i| replicas.remove(i))
        .collect();
    let changing = tokio::spawn({
        let objects = objects.clone();
        async move { change_all(&objects, 4).await }
    });
    join_all(leaving.into_iter().map(stop)).await;
    let changed = changing.await.unwrap();
    let done = converged(&checker, &leases, 4, "5 → 2 replicas").await;
    figures.push(format!(
        "5 → 2: a change of every object served {:?} after the writes",
        done.saturating_duration_since(changed)
    ));

    // Kill one of the two without releasing anything (SIGKILL: its Lease is no longer
    // renewed); change everything; the survivor takes its slices once its Lease expires.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let killed = replicas.remove(0);
    killed.running.abort();
    let killed_at = Instant::now();
    let changed = change_all(&objects, 5).await;
    let done = converged(&checker, &leases, 5, "after the kill").await;
    let longest_unserved = done - killed_at;
    figures.push(format!("kill: the last object served {longest_unserved:?} after the kill (Lease duration {LEASE_DURATION:?}; writes done {:?} after it)", changed - killed_at));

    let overlaps = checker.lock().unwrap().overlaps.clone();
    let reconciles: usize = checker.lock().unwrap().started.values().map(Vec::len).sum();
    figures.push(format!(
        "{reconciles} reconciles of {OBJECTS} objects, overlaps: {}",
        overlaps.len()
    ));
    println!("{}", figures.join("\n"));
    assert!(overlaps.is_empty(), "{overlaps:#?}");
    // A lease duration, the claim's rounds, and the reconciles of the taken-over slices.
    assert!(
        longest_unserved < LEASE_DURATION + Duration::from_secs(4),
        "{longest_unserved:?}"
    );
    for replica in replicas {
        stop(replica).await;
    }
}

/// Lists ConfigMaps of `namespace` with `shardSelector` (kube's `ListParams` has no field for
/// it, so the query is written by hand): the names listed, and the selector the API server
/// echoed in `metadata.shardInfo` (none: it did not filter).
async fn list_sharded(
    client: &kube::Client,
    namespace: &str,
    selector: &str,
) -> (Vec<String>, Option<String>) {
    list_sharded_at(
        client,
        &format!("/api/v1/namespaces/{namespace}/configmaps"),
        selector,
    )
    .await
}

/// [`list_sharded`] of the collection at `path`.
async fn list_sharded_at(
    client: &kube::Client,
    path: &str,
    selector: &str,
) -> (Vec<String>, Option<String>) {
    let query: String = url_encode(selector);
    let request = http::Request::get(format!("{path}?shardSelector={query}"))
        .body(Vec::new())
        .unwrap();
    let list: serde_json::Value = client.request(request).await.unwrap();
    let mut names: Vec<String> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    let echoed = list["metadata"]["shardInfo"]["selector"]
        .as_str()
        .map(str::to_owned);
    (names, echoed)
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// The API server's sharded lists (KEP-5866, gate `ShardedListAndWatch`) select exactly the
/// objects rkb puts in those slices: same hash, same bounds, same selector syntax. Without
/// the gate the selector is ignored and no `shardInfo` comes back, which is how a replica
/// can tell.
#[tokio::test]
async fn the_api_servers_sharded_lists_agree_with_rkbs_slices() {
    let gated = rkb_envtest::Environment::start_with_api_server_flags([
        "--feature-gates=ShardedListAndWatch=true",
    ])
    .await
    .unwrap();
    let client = gated.client();
    let namespace = gated.create_namespace().await.unwrap();
    let objects = Api::<ConfigMap>::namespaced(client.clone(), &namespace);
    let mut created = Vec::new();
    for n in 0..64 {
        let object = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name(n)),
                ..Default::default()
            },
            ..Default::default()
        };
        created.push(
            objects
                .create(&PostParams::default(), &object)
                .await
                .unwrap(),
        );
    }
    let slices = Slices::new(8).unwrap();
    let in_slices = |wanted: &[u32]| {
        let mut names: Vec<String> = created
            .iter()
            .filter(|o| wanted.contains(&slices.of_key(shard_key(&o.metadata).unwrap())))
            .map(|o| o.metadata.name.clone().unwrap())
            .collect();
        names.sort();
        names
    };
    let mut seen = 0;
    for slice in slices.all() {
        let selector = slices.selector([slice]).unwrap();
        let (names, echoed) = list_sharded(&client, &namespace, &selector).await;
        assert_eq!(echoed.as_deref(), Some(selector.as_str()), "the gate is on");
        assert_eq!(names, in_slices(&[slice]), "slice {slice}");
        seen += names.len();
    }
    assert_eq!(seen, 64, "the slices tile the objects");
    // Several slices, adjacent ones merged into one range.
    let selector = slices.selector([0, 1, 2, 6]).unwrap();
    assert_eq!(selector.matches("shardRange").count(), 2);
    let (names, _) = list_sharded(&client, &namespace, &selector).await;
    assert_eq!(names, in_slices(&[0, 1, 2, 6]));

    // Custom resources, which scaffolded controllers reconcile, are filtered too, but 1.37.2
    // does not echo shardInfo for them: a replica tells from the objects listed, all of
    // its slices (shard::watch). When this fails on shardInfo, the server has started
    // echoing it.
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.sharding.rkb.dev"},
        "spec": {
            "group": "sharding.rkb.dev",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
        },
    });
    gated
        .apply()
        .crds([serde_json::from_value(crd).unwrap()])
        .await
        .unwrap();
    let widgets: String = (0..32)
        .map(|n| {
            format!("---\napiVersion: sharding.rkb.dev/v1\nkind: Widget\nmetadata:\n  name: widget-{n}\n  namespace: {namespace}\n")
        })
        .collect();
    let widgets = gated.apply().yaml(&widgets).await.unwrap();
    let selector = slices.selector([1, 4]).unwrap();
    let path = format!("/apis/sharding.rkb.dev/v1/namespaces/{namespace}/widgets");
    let (names, echoed) = list_sharded_at(&client, &path, &selector).await;
    let mut wanted: Vec<String> = widgets
        .iter()
        .filter(|w| [1, 4].contains(&slices.of_key(shard_key(&w.metadata).unwrap())))
        .map(|w| w.metadata.name.clone().unwrap())
        .collect();
    wanted.sort();
    assert_eq!(echoed, None, "no shardInfo for custom resources");
    assert_eq!(names, wanted);

    // Without the gate: everything, and no shardInfo.
    let plain = rkb_envtest::shared_by(module_path!()).await;
    let client = plain.client();
    let namespace = plain.create_namespace().await.unwrap();
    let objects = Api::<ConfigMap>::namespaced(client.clone(), &namespace);
    for n in 0..4 {
        let mut object = ConfigMap::default();
        object.metadata.name = Some(name(n));
        objects
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }
    let (names, echoed) = list_sharded(&client, &namespace, &slices.selector([0]).unwrap()).await;
    assert_eq!((names.len(), echoed), (4, None));
}

/// A client whose requests on Leases hang while `cut` is set: a replica cut off from its
/// Lease renewals (an asymmetric partition) that still receives its watch events.
fn lease_partitionable(client: kube::Client, cut: Arc<AtomicBool>) -> kube::Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let (client, cut) = (client.clone(), cut.clone());
        async move {
            if cut.load(Ordering::SeqCst) && request.uri().path().contains("/leases") {
                std::future::pending::<()>().await;
            }
            client.send(request).await
        }
    });
    kube::Client::new(service, "default")
}

/// One of two replicas can no longer renew its Lease but still sees every change: it stops
/// reconciling at its renew deadline and exits, and the other takes its slices over once its
/// Lease expired, never while it still reconciled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_cut_off_from_its_lease_stops_before_its_slices_move() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let client = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let objects = Api::<ConfigMap>::namespaced(client.clone(), &namespace);
    let leases = Api::<Lease>::namespaced(client.clone(), &namespace);
    for n in 0..OBJECTS {
        let mut object = ConfigMap::default();
        object.metadata.name = Some(name(n));
        objects
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }
    let checker = Arc::new(Mutex::new(Checker::default()));
    let cut = Arc::new(AtomicBool::new(false));
    let partitioned = start_replica(
        lease_partitionable(client.clone(), cut.clone()),
        &namespace,
        0,
        &checker,
    );
    let other = start_replica(client.clone(), &namespace, 1, &checker);
    converged(&checker, &leases, 0, "2 replicas").await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    cut.store(true, Ordering::SeqCst);
    let cut_at = Instant::now();
    change_all(&objects, 1).await;
    let done = converged(&checker, &leases, 1, "after the partition").await;
    let exited = tokio::time::timeout(WAIT, partitioned.running)
        .await
        .expect("the cut-off replica exits")
        .unwrap()
        .unwrap_err();
    assert!(format!("{exited:#}").contains("shard Lease"), "{exited:#}");
    let exited_after = cut_at.elapsed();
    // The survivor serves every slice once the cut-off replica's Lease expired.
    let before = Instant::now();
    change_all(&objects, 2).await;
    let taken_over = converged(&checker, &leases, 2, "after the takeover").await;
    let overlaps = checker.lock().unwrap().overlaps.clone();
    println!(
        "partition: changes before the renew deadline served {:?} after the cut (by both); \
         the cut-off replica exited {exited_after:?} after the cut; every slice served by the other \
         {:?} after the cut; overlaps: {}",
        done - cut_at,
        taken_over - cut_at,
        overlaps.len()
    );
    assert_eq!(checker.lock().unwrap().replicas_serving_since(before), 1);
    assert!(overlaps.is_empty(), "{overlaps:#?}");
    // The cut-off replica reconciled nothing after its renew deadline.
    let late = checker
        .lock()
        .unwrap()
        .started
        .values()
        .flatten()
        .filter(|(replica, at, _)| *replica == 0 && *at > cut_at + Duration::from_secs(3))
        .count();
    assert_eq!(late, 0, "reconciles started after the renew deadline");
    stop(other).await;
}

/// Two replicas, then three, reconcile every object once per change, never two at once; at
/// the end, with the API server's `ShardedListAndWatch` gate on, each replica's watch holds
/// exactly the objects of the slices it serves, and without it every object.
async fn watches_follow_the_served_slices(client: kube::Client, namespace: &str, gated: bool) {
    let objects = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    for n in 0..OBJECTS {
        let mut object = ConfigMap::default();
        object.metadata.name = Some(name(n));
        object.data = Some([("generation".to_owned(), "0".to_owned())].into());
        objects
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }
    let leases = Api::<Lease>::namespaced(client.clone(), namespace);
    let checker = Arc::new(Mutex::new(Checker::default()));
    let mut replicas: Vec<Replica> = (0..2)
        .map(|i| start_replica(client.clone(), namespace, i, &checker))
        .collect();
    converged(&checker, &leases, 0, "2 replicas").await;
    change_all(&objects, 1).await;
    converged(&checker, &leases, 1, "2 replicas, changed").await;

    // A third replica takes slices from both: their watches list again, under new selectors.
    replicas.push(start_replica(client.clone(), namespace, 2, &checker));
    let slices = Slices::new(32).unwrap();
    let settled = |replicas: &[Replica]| {
        let views: Vec<_> = replicas.iter().filter_map(Replica::view).collect();
        let served: Vec<u32> = views.iter().flat_map(|(gate, _)| gate.serving()).collect();
        views.len() == 3
            && views.iter().all(|(gate, _)| !gate.serving().is_empty())
            && served.len() == 32
            && views.iter().all(|(gate, store)| {
                let held = store.len() == OBJECTS
                    || store.iter().all(|object| {
                        let key = shard_key(&object.metadata).unwrap();
                        gate.serving().contains(&slices.of_key(key))
                    });
                held && gate.server_side().is_some()
            })
    };
    let deadline = Instant::now() + WAIT;
    while !settled(&replicas) {
        assert!(Instant::now() < deadline, "3 replicas never settled");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let before = Instant::now();
    let changed = change_all(&objects, 2).await;
    let done = converged(&checker, &leases, 2, "3 replicas").await;
    assert_eq!(checker.lock().unwrap().replicas_serving_since(before), 3);

    let mut held = Vec::new();
    for replica in &replicas {
        let (gate, store) = replica.view().unwrap();
        assert_eq!(
            gate.server_side(),
            Some(gated),
            "the server filters iff gated"
        );
        for object in &store {
            let slice = slices.of_key(shard_key(&object.metadata).unwrap());
            assert!(
                !gated || gate.serving().contains(&slice),
                "{:?} in slice {slice}, not served here ({:?})",
                object.metadata.name,
                gate.serving()
            );
        }
        held.push(store.len());
    }
    let overlaps = checker.lock().unwrap().overlaps.clone();
    println!(
        "gate {}: objects each replica's watch holds {held:?} of {OBJECTS}; a change of \
         every object served in {:?}; overlaps: {}",
        if gated { "on" } else { "off" },
        done - changed,
        overlaps.len()
    );
    assert!(overlaps.is_empty(), "{overlaps:#?}");
    if gated {
        assert_eq!(
            held.iter().sum::<usize>(),
            OBJECTS,
            "the slices tile the objects"
        );
    } else {
        assert_eq!(held, [OBJECTS; 3]);
    }
    join_all(replicas.into_iter().map(stop)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_gate_each_replica_watches_only_its_slices() {
    let gated = rkb_envtest::Environment::start_with_api_server_flags([
        "--feature-gates=ShardedListAndWatch=true",
    ])
    .await
    .unwrap();
    let namespace = gated.create_namespace().await.unwrap();
    watches_follow_the_served_slices(gated.client(), &namespace, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_gate_each_replica_watches_everything_and_reconciles_its_slices() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let namespace = env.create_namespace().await.unwrap();
    watches_follow_the_served_slices(env.client(), &namespace, false).await;
}

/// A sharded replica whose controller returns before shutdown would keep renewing its
/// Lease and holding slices it no longer serves: the manager stops instead, releasing them.
#[tokio::test]
async fn a_sharded_replica_whose_controller_stops_hands_its_slices_over() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let namespace = env.create_namespace().await.unwrap();
    let args = Args::parse_from([
        "manager",
        "--sharding",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
        &format!("--leader-election-namespace={namespace}"),
    ]);
    let manager = Manager::new("stopping", env.client(), args);
    let stops = Runnable::new("stops", |_ctx: Context| async { Ok(()) });
    let result = tokio::time::timeout(WAIT, manager.run([stops])).await;
    let error = result.expect("the manager stops").unwrap_err();
    assert!(
        format!("{error:#}").contains("controller stops stopped before shutdown"),
        "{error:#}"
    );
    let leases = Api::<Lease>::namespaced(env.client(), &namespace);
    let left: Vec<String> = leases
        .list(&Default::default())
        .await
        .unwrap()
        .into_iter()
        .filter_map(|lease| lease.metadata.name)
        .filter(|name| name.starts_with("stopping-shard-"))
        .collect();
    assert!(
        left.is_empty(),
        "its member Lease is deleted on the way out: {left:?}"
    );
}
