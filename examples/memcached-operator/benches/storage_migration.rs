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

//! Storage version migration of 1,000 Memcached objects on envtest (started by the bench),
//! printed, not timed by criterion: `cargo bench -p memcached-example --bench
//! storage_migration` (about two minutes; `MIGRATION_OBJECTS=N` for another count).
//!
//! 1. The CRD is installed with v1alpha1 as the storage version (converting through the
//!    example's webhook, served by this process), and the objects are created.
//! 2. The storage version moves to v1beta1; the migration runs without a rate limit.
//! 3. It runs again (what a restart does): every object is current, nothing is written.
//! 4. The storage version moves back to v1alpha1 and the migration runs at the default rate
//!    of `--migrate-storage-qps`.
//!
//! Each pass prints its time, the requests it made (its own count) and the API server's
//! `apiserver_request_total` for the Memcached and CRD resources over the pass, by verb and
//! resource, and the objects etcd still holds at the old version (read from etcd itself; the
//! bench fails unless it is 0).

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kube::api::PostParams;
use kube::{Api, Client};
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use rkb_runtime::migrate::{self, Migration};
use rkb_runtime::testing::envtest::{self, Environment};

const CRD: &str = "memcacheds.cache.example.com";

/// `apiserver_request_total` for the Memcached and CRD resources: (verb, resource) → count.
fn request_totals(env: &Environment) -> BTreeMap<(String, String), u64> {
    let output = env
        .kubectl()
        .args(["get", "--raw", "/metrics"])
        .output()
        .expect("kubectl runs");
    assert!(output.status.success(), "kubectl get --raw /metrics failed");
    let text = String::from_utf8(output.stdout).unwrap();
    let mut totals = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix("=\""))
                .map(|v| v.trim_end_matches('"').to_owned())
                .unwrap_or_default()
        };
        let resource = match label("subresource").as_str() {
            "" => label("resource"),
            sub => format!("{}/{sub}", label("resource")),
        };
        if !resource.starts_with("memcacheds") && !resource.starts_with("customresourcedefinitions")
        {
            continue;
        }
        let count: f64 = value.trim().parse().unwrap_or(0.0);
        *totals.entry((label("verb"), resource)).or_default() += count as u64;
    }
    totals
}

fn delta(
    before: &BTreeMap<(String, String), u64>,
    after: &BTreeMap<(String, String), u64>,
) -> String {
    after
        .iter()
        .filter_map(|(key, n)| {
            let d = n - before.get(key).copied().unwrap_or(0);
            (d > 0).then(|| format!("{} {} {d}", key.0, key.1))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

async fn at_version(env: &Environment, version: &str) -> usize {
    let api_version = format!("cache.example.com/{version}");
    env.etcd_prefix("/registry/cache.example.com/memcacheds/")
        .await
        .unwrap()
        .iter()
        .filter(|stored| stored.json().unwrap()["apiVersion"] == api_version.as_str())
        .count()
}

async fn move_storage(env: &Environment, client: &Client, version: &str) {
    common::install(env, version).await;
    let expected = migrate::storage_version_hash("cache.example.com", version, "Memcached");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = client
            .list_api_group_resources("cache.example.com/v1beta1")
            .await
            .ok()
            .and_then(|list| list.resources.into_iter().find(|r| r.name == "memcacheds"))
            .and_then(|r| r.storage_version_hash);
        if found.as_deref() == Some(expected.as_str()) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "storage did not move to {version}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn pass(env: &Environment, client: &Client, title: &str, old: &str, qps: f64) {
    let before = request_totals(env);
    let started = Instant::now();
    let report = Migration::new(client.clone())
        .requests_per_second(qps)
        .migrate(CRD)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let elapsed = started.elapsed();
    let after = request_totals(env);
    let left = at_version(env, old).await;
    let rate = if qps > 0.0 {
        format!("{qps} requests/s")
    } else {
        "no rate limit".into()
    };
    println!("{title} ({rate})");
    println!(
        "  time {:.2} s; objects {} (rewritten {}, unchanged {}, deleted {}); storedVersions {:?} -> [{}]",
        elapsed.as_secs_f64(),
        report.listed,
        report.rewritten,
        report.unchanged,
        report.deleted,
        report.stored_versions_before,
        report.storage_version,
    );
    println!(
        "  requests made by the migration: {} ({} retried)",
        report.requests, report.retries
    );
    println!(
        "  apiserver_request_total over the pass: {}",
        delta(&before, &after)
    );
    println!("  objects left at {old} in etcd: {left}");
    assert_eq!(left, 0, "objects left at {old}");
}

#[tokio::main]
async fn main() {
    // `cargo bench` passes `--bench`; a filter that names nothing of this file skips it.
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !"storage_migration".contains(&a))
    {
        return;
    }
    let objects: usize = std::env::var("MIGRATION_OBJECTS")
        .ok()
        .map_or(1000, |n| n.parse().expect("MIGRATION_OBJECTS is a number"));
    let env = envtest::shared().await;
    let client = env.client();
    common::install(env, "v1alpha1").await;
    let namespace = env.create_namespace().await.unwrap();
    let api: Api<Memcached> = Api::namespaced(client.clone(), &namespace);
    common::wait_until_called(&api).await;

    let started = Instant::now();
    futures::stream::iter(0..objects)
        .map(|i| {
            let api = api.clone();
            async move {
                let spec = MemcachedSpec {
                    size: 1 + (i % 10) as i32,
                    container_port: None,
                };
                api.create(
                    &PostParams::default(),
                    &Memcached::new(&format!("cache-{i:04}"), spec),
                )
                .await
                .unwrap();
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<()>>()
        .await;
    println!(
        "created {objects} Memcached objects at v1alpha1 in {:.1} s; etcd holds {} at v1alpha1",
        started.elapsed().as_secs_f64(),
        at_version(env, "v1alpha1").await
    );

    move_storage(env, &client, "v1beta1").await;
    pass(env, &client, "v1alpha1 -> v1beta1", "v1alpha1", 0.0).await;
    pass(
        env,
        &client,
        "again (a restart: nothing to rewrite)",
        "v1alpha1",
        0.0,
    )
    .await;
    move_storage(env, &client, "v1alpha1").await;
    pass(
        env,
        &client,
        "v1beta1 -> v1alpha1 at the default rate",
        "v1beta1",
        migrate::DEFAULT_REQUESTS_PER_SECOND,
    )
    .await;
}
