//! How long a control plane takes to start (the cost every test binary pays once), and
//! how much memory its two processes hold: `cargo bench -p rkb-envtest`.

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
    println!(
        "RSS {when}: kube-apiserver {} MiB + etcd {} MiB = {} MiB",
        api / 1024,
        etcd / 1024,
        (api + etcd) / 1024
    );
}

criterion_group!(benches, start);
criterion_main!(benches);
