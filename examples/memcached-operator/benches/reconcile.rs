// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! Reconcile throughput against kube-fake-client's in-memory API, for 1,000 Memcached
//! objects: `cargo bench -p memcached-example` (under a minute). Criterion reports
//! objects/second as `thrpt` (elements/s).
//!
//! - `create/1000`: the first reconcile of each object (creates its Deployment and Service,
//!   records two Events, writes the status);
//! - `steady/1000`: reconciles of objects already converged (server-side applies that change
//!   nothing; no status write, no Event).
//!
//! This measures the reconciler and the in-memory API, not a real API server: there, network
//! round trips dominate.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client};
use kube_fake_client::ClientBuilder;
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use memcached_example::controller::memcached::{MemcachedReconciler, reconcile};

const OBJECTS: usize = 1_000;
const NS: &str = "bench";

/// A fresh in-memory API holding `OBJECTS` Memcached objects, as the API returned them.
async fn setup() -> (Client, Vec<Arc<Memcached>>) {
    let client = ClientBuilder::new()
        .with_resource::<Memcached>()
        .with_status_subresource::<Memcached>()
        .with_status_subresource::<Deployment>()
        .build()
        .await
        .expect("the in-memory API starts");
    let api: Api<Memcached> = Api::namespaced(client.clone(), NS);
    let mut objects = Vec::with_capacity(OBJECTS);
    for i in 0..OBJECTS {
        let mut object = Memcached::new(
            &format!("cache-{i:04}"),
            MemcachedSpec {
                size: 1 + (i % 10) as i32,
                container_port: None,
            },
        );
        object.metadata.namespace = Some(NS.into());
        let created = api.create(&PostParams::default(), &object).await.unwrap();
        objects.push(Arc::new(created));
    }
    (client, objects)
}

async fn reconcile_all(ctx: &Arc<MemcachedReconciler>, objects: &[Arc<Memcached>]) {
    for object in objects {
        black_box(reconcile(object.clone(), ctx.clone()).await.unwrap());
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("reconcile");
    group
        .throughput(Throughput::Elements(OBJECTS as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));

    group.bench_function("create/1000", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (client, objects) = setup().await;
                    let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
                    let start = Instant::now();
                    reconcile_all(&ctx, &objects).await;
                    total += start.elapsed();
                    let deployments: Api<Deployment> = Api::namespaced(client, NS);
                    let created = deployments.list(&ListParams::default()).await.unwrap();
                    assert_eq!(created.items.len(), OBJECTS);
                }
                total
            })
        });
    });

    // Converged objects: reconcile once, then measure reconciles of their current state.
    let (ctx, objects) = rt.block_on(async {
        let (client, objects) = setup().await;
        let ctx = Arc::new(MemcachedReconciler::new(client.clone()));
        reconcile_all(&ctx, &objects).await;
        let api: Api<Memcached> = Api::namespaced(client, NS);
        let current = api.list(&ListParams::default()).await.unwrap().items;
        (ctx, current.into_iter().map(Arc::new).collect::<Vec<_>>())
    });
    group.bench_function("steady/1000", |b| {
        b.iter(|| rt.block_on(reconcile_all(&ctx, &objects)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
