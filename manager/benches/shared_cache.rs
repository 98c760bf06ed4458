//! Watches and memory of a manager whose controllers own one kind, with a watch per
//! controller (`cache::owns`) and with the manager's shared cache (`ctx.cache().owns`), on a
//! real API server (envtest). Issue #29's figure: `cargo bench -p rkb-manager --bench
//! shared_cache` (needs KUBEBUILDER_ASSETS or `rkb setup-envtest`).
//!
//! Each case runs in a process of its own (this executable again), so that one case's
//! allocations cannot count in another's: it creates a ConfigMap and `OBJECTS` Secrets of
//! 1 KiB owned by it, reads its resident memory, starts the manager with the case's
//! controllers, waits until every controller's cache holds every Secret, and reads the
//! memory again. Printed: the watches of Secrets the manager opened, resident memory
//! added by the manager (VmRSS after minus before), and the process's peak (VmHWM).

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Api, Resource as _};
use rkb_manager::Lister;
use rkb_manager::cache;
use rkb_manager::manager::{Args, Context, Manager, Runnable};

/// Secrets every controller caches.
#[path = "../tests/integration/support/count_watches.rs"]
mod count_watches;
use count_watches::CountWatches;

const OBJECTS: usize = 2_000;
/// The variable that makes this executable run one case: `owns:2` or `shared:4`.
const CASE: &str = "RKB_SHARED_CACHE_CASE";

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

type Listers = Arc<Mutex<Vec<Lister<Secret>>>>;

/// A controller of ConfigMaps that owns Secrets, handing its Secrets' lister to the bench.
fn controller(name: String, namespace: &str, shared: bool, listers: &Listers) -> Runnable {
    let (namespace, listers) = (namespace.to_owned(), listers.clone());
    Runnable::new(name, move |ctx: Context| async move {
        let client = ctx.client();
        let config_maps = cache::controller(
            Api::<ConfigMap>::namespaced(client.clone(), &namespace),
            watcher::Config::default(),
        );
        let secrets = Api::<Secret>::namespaced(client, &namespace);
        let (controller, lister) = if shared {
            ctx.cache()
                .owns(config_maps, secrets, watcher::Config::default())
        } else {
            cache::owns(config_maps, secrets, watcher::Config::default())
        };
        listers.lock().unwrap().push(lister);
        let reconcile =
            |_: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, Never>(Action::await_change()) };
        let error_policy = |_: Arc<ConfigMap>, _: &Never, _: Arc<()>| Action::await_change();
        ctx.run(controller, reconcile, error_policy, Arc::new(()))
            .await
    })
}

/// `VmRSS` and `VmHWM` of this process, in KiB.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// One case, in this process: prints `watches added_kib peak_kib`.
async fn run_case(shared: bool, controllers: usize) {
    let env = rkb_envtest::shared().await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let mut owner = ConfigMap::default();
    owner.metadata.name = Some("owner".into());
    let owner = Api::<ConfigMap>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &owner)
        .await
        .unwrap();
    let secrets = Api::<Secret>::namespaced(admin.clone(), &namespace);
    let data = BTreeMap::from([("data".to_owned(), ByteString(vec![b'x'; 1024]))]);
    for i in 0..OBJECTS {
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(format!("s-{i}")),
                owner_references: Some(vec![owner.controller_owner_ref(&()).unwrap()]),
                ..ObjectMeta::default()
            },
            data: Some(data.clone()),
            ..Secret::default()
        };
        secrets
            .create(&PostParams::default(), &secret)
            .await
            .unwrap();
    }
    let (before, _) = memory();

    let watches = Arc::new(Mutex::new(BTreeMap::new()));
    let counted = CountWatches::client(admin, &watches);
    let args = Args::parse_from([
        "manager",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
    ]);
    let manager = Manager::new("shared-cache-bench", counted, args);
    let shutdown = manager.shutdown_token();
    let listers = Listers::default();
    let runnables: Vec<Runnable> = (0..controllers)
        .map(|i| controller(format!("c{i}"), &namespace, shared, &listers))
        .collect();
    let running = tokio::spawn(manager.run(runnables));
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let full = {
            let listers = listers.lock().unwrap();
            listers.len() == controllers
                && listers.iter().all(|l| l.list(&namespace).len() == OBJECTS)
        };
        if full {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the caches never held every Secret"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Let the allocator settle after the initial lists.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (after, peak) = memory();
    shutdown.cancel();
    running.await.unwrap().unwrap();
    let path = format!("/api/v1/namespaces/{namespace}/secrets");
    let opened = watches.lock().unwrap().get(&path).copied().unwrap_or(0);
    println!("{opened} {} {peak}", after.saturating_sub(before));
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used.
    if let Ok(case) = std::env::var(CASE) {
        let (variant, controllers) = case.split_once(':').expect("variant:controllers");
        let controllers: usize = controllers.parse().expect("a number of controllers");
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(run_case(variant == "shared", controllers));
        return;
    }
    let exe = std::env::current_exe().unwrap();
    println!(
        "{OBJECTS} Secrets of 1 KiB owned by one ConfigMap; load before: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "| controllers | cache | watches of Secrets | memory added by the manager | peak RSS of the process |"
    );
    println!("|---:|---|---:|---:|---:|");
    for controllers in [2, 4] {
        for variant in ["owns", "shared"] {
            let output = Command::new(&exe)
                .env(CASE, format!("{variant}:{controllers}"))
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "{variant}:{controllers} failed:\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let line = stdout.lines().last().unwrap_or_default();
            let fields: Vec<u64> = line
                .split_whitespace()
                .map(|f| f.parse().unwrap())
                .collect();
            let cache = match variant {
                "owns" => "a watch per controller (`cache::owns`)",
                _ => "shared (`ctx.cache().owns`)",
            };
            println!(
                "| {controllers} | {cache} | {} | {:.1} MiB | {:.1} MiB |",
                fields[0],
                fields[1] as f64 / 1024.0,
                fields[2] as f64 / 1024.0
            );
        }
    }
}
