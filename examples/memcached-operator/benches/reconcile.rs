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

//! Reconcile throughput against a real kube-apiserver and etcd (envtest, started by the
//! bench), for 100 Memcached objects reconciled one after another:
//! `cargo bench -p memcached-example` (a few minutes). Criterion reports objects/second as
//! `thrpt` (elements/s).
//!
//! - `create/100`: the first reconcile of each object (applies that create its Deployment
//!   and Service, the status write, and two Events queued, sent off the reconcile path);
//! - `steady/100`: reconciles of objects already converged: reads from the caches, and
//!   no request at all (no apply that would change nothing, no status write, no Event).
//!
//! The reconciler reads the caches of watches on the bench's namespace
//! ([`Caches::reflect`]); each round waits until they hold what it wrote before.
//!
//! Each request is a round trip to the API server over loopback TLS, and etcd's writes
//! dominate the first reconciles. envtest's Service range (10.0.0.0/24) holds about 250
//! cluster IPs and nothing garbage-collects, so each `create` round deletes its Services.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use memcached_example::controller::memcached::{Caches, MemcachedReconciler, reconcile};
use rkb_runtime::testing::envtest;

const OBJECTS: usize = 100;

/// A fresh namespace holding `OBJECTS` Memcached objects, as the API returned them, and a
/// reconciler reading the caches of that namespace.
async fn setup(client: &Client) -> (String, Vec<Arc<Memcached>>, Arc<MemcachedReconciler>) {
    let namespace = envtest::shared().await.create_namespace().await.unwrap();
    let (caches, filling) = Caches::reflect(client, Some(&namespace));
    tokio::spawn(filling);
    let ctx = Arc::new(MemcachedReconciler::new(client.clone(), caches));
    let api: Api<Memcached> = Api::namespaced(client.clone(), &namespace);
    let mut objects = Vec::with_capacity(OBJECTS);
    for i in 0..OBJECTS {
        let mut object = Memcached::new(
            &format!("cache-{i:04}"),
            MemcachedSpec {
                size: 1 + (i % 10) as i32,
                container_port: None,
            },
        );
        object.metadata.namespace = Some(namespace.clone());
        let created = api.create(&PostParams::default(), &object).await.unwrap();
        objects.push(Arc::new(created));
    }
    (namespace, objects, ctx)
}

/// Waits until `caches` hold every Deployment and Service of `namespace`.
async fn until_cached(caches: &Caches, namespace: &str) {
    while caches.deployments.list(namespace).len() < OBJECTS
        || caches.services.list(namespace).len() < OBJECTS
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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
    let client = rt.block_on(async {
        let env = envtest::shared().await;
        let crds = memcached_example::manifests()
            .crds()
            .unwrap_or_else(|e| panic!("{e}"));
        env.apply().crds(crds).await.unwrap();
        env.client()
    });
    let mut group = c.benchmark_group("reconcile");
    group
        .throughput(Throughput::Elements(OBJECTS as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(60));

    group.bench_function(format!("create/{OBJECTS}"), |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (namespace, objects, ctx) = setup(&client).await;
                    let start = Instant::now();
                    reconcile_all(&ctx, &objects).await;
                    total += start.elapsed();
                    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
                    let created = deployments.list(&ListParams::default()).await.unwrap();
                    assert_eq!(created.items.len(), OBJECTS);
                    Api::<Service>::namespaced(client.clone(), &namespace)
                        .delete_collection(&DeleteParams::default(), &ListParams::default())
                        .await
                        .unwrap();
                }
                total
            })
        });
    });

    // Converged objects: reconcile once, then measure reconciles of their current state.
    let (ctx, objects) = rt.block_on(async {
        let (namespace, objects, ctx) = setup(&client).await;
        reconcile_all(&ctx, &objects).await;
        until_cached(ctx.caches(), &namespace).await;
        let api: Api<Memcached> = Api::namespaced(client.clone(), &namespace);
        let current = api.list(&ListParams::default()).await.unwrap().items;
        (ctx, current.into_iter().map(Arc::new).collect::<Vec<_>>())
    });
    group.bench_function(format!("steady/{OBJECTS}"), |b| {
        b.iter(|| rt.block_on(reconcile_all(&ctx, &objects)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
