//! How long a control plane takes to start (the cost every test binary pays once), and
//! how much memory its processes hold, without and with kube-controller-manager:
//! `cargo bench -p rkb-envtest` (the second group needs
//! `rkb setup-envtest --with controller-manager`; it is skipped, saying so, without).

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use rkb_envtest::Environment;

fn start(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut group = c.benchmark_group("control_plane");
    group.sample_size(10);
    group.bench_function("start", |b| {
        b.iter(|| {
            let env = runtime.block_on(Environment::start()).unwrap();
            drop(env); // kills both processes
        })
    });
    let controller_manager =
        rkb_envtest::Assets::locate().is_ok_and(|assets| assets.controller_manager().is_ok());
    if controller_manager {
        group.bench_function("start_with_controller_manager", |b| {
            b.iter(|| {
                let env = runtime.block_on(async {
                    let env = Environment::start().await.unwrap();
                    env.start_controller_manager().await.unwrap();
                    env
                });
                drop(env);
            })
        });
    }
    group.finish();

    // Memory after start, and after a thousand objects (what a test suite leaves).
    let env = runtime.block_on(Environment::start()).unwrap();
    report_rss("after start", &env);
    runtime.block_on(async {
        let namespace = env.create_namespace().await.unwrap();
        let config_maps: Api<ConfigMap> = Api::namespaced(env.client(), &namespace);
        for i in 0..1000 {
            let object = ConfigMap {
                metadata: ObjectMeta {
                    name: Some(format!("object-{i}")),
                    ..Default::default()
                },
                ..Default::default()
            };
            config_maps
                .create(&PostParams::default(), &object)
                .await
                .unwrap();
        }
    });
    report_rss("after 1000 objects", &env);
    drop(env);

    if controller_manager {
        let env = runtime.block_on(async {
            let env = Environment::start().await.unwrap();
            env.start_controller_manager().await.unwrap();
            env
        });
        report_rss("after start with kube-controller-manager", &env);
    } else {
        println!("no kube-controller-manager: `rkb setup-envtest --with controller-manager`");
    }
}

fn report_rss(when: &str, env: &Environment) {
    let Some((api, etcd)) = env.process_ids() else {
        return;
    };
    let rss = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|status| {
                let line = status.lines().find(|l| l.starts_with("VmRSS:"))?.to_owned();
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .unwrap_or(0)
    };
    let (api, etcd) = (rss(api), rss(etcd));
    let manager = env.controller_manager_process_id().map_or(0, rss);
    let manager_part = match env.controller_manager_process_id() {
        Some(_) => format!(" + kube-controller-manager {} MiB", manager / 1024),
        None => String::new(),
    };
    println!(
        "RSS {when}: kube-apiserver {} MiB + etcd {} MiB{manager_part} = {} MiB",
        api / 1024,
        etcd / 1024,
        (api + etcd + manager) / 1024
    );
}

criterion_group!(benches, start);
criterion_main!(benches);
