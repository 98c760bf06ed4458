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

//! Moving the Memcached CRD's storage version from v1alpha1 to v1beta1 on a real
//! kube-apiserver and etcd (envtest), with objects stored at both, and migrating them: the
//! library's `Migration` (through faults and an RBAC audit), then the manager binary's
//! `--migrate-storage`. What is stored is read from etcd itself. This binary has a control
//! plane of its own, so moving the storage version touches no other test.

mod common;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use memcached_example::api::cache::{v1alpha1, v1beta1};
use rkb_runtime::migrate::{self, Migration};
use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::{self, Fault, Faults, RbacAudit};

const CRD: &str = "memcacheds.cache.example.com";

/// The apiVersion of each Memcached as etcd holds it, counted.
async fn stored_versions_in_etcd(env: &Environment) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for stored in env
        .etcd_prefix("/registry/cache.example.com/memcacheds/")
        .await
        .unwrap()
    {
        let json = stored
            .json()
            .unwrap_or_else(|| panic!("{} is not JSON", stored.key));
        let version = json["apiVersion"].as_str().unwrap().to_owned();
        *counts.entry(version).or_default() += 1;
    }
    counts
}

async fn crd_stored_versions(client: &Client) -> Vec<String> {
    let crd = Api::<CustomResourceDefinition>::all(client.clone())
        .get(CRD)
        .await
        .unwrap();
    crd.status.unwrap().stored_versions.unwrap()
}

/// Waits until discovery publishes `version` as the storage version: from then on the API
/// server encodes new writes at it. (The hash the migration computes is the API server's
/// own, or this never ends.)
async fn wait_for_storage_version(client: &Client, version: &str) {
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
            "discovery shows storageVersionHash {found:?}, not {expected:?} ({version})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `count` objects created through v1alpha1 (`size`) and as many through v1beta1
/// (`replicas`), named `<prefix>-a<i>` and `<prefix>-b<i>`, each sized `i % 10 + 1`.
async fn create(client: &Client, namespace: &str, prefix: &str, count: usize) {
    let alpha: Api<v1alpha1::Memcached> = Api::namespaced(client.clone(), namespace);
    let beta: Api<v1beta1::Memcached> = Api::namespaced(client.clone(), namespace);
    let post = PostParams::default();
    for i in 0..count {
        let size = (i % 10 + 1) as i32;
        let spec = v1alpha1::MemcachedSpec {
            size,
            container_port: None,
        };
        alpha
            .create(
                &post,
                &v1alpha1::Memcached::new(&format!("{prefix}-a{i}"), spec),
            )
            .await
            .unwrap();
        let spec = v1beta1::MemcachedSpec {
            replicas: size,
            container_port: None,
        };
        beta.create(
            &post,
            &v1beta1::Memcached::new(&format!("{prefix}-b{i}"), spec),
        )
        .await
        .unwrap();
    }
}

/// name → (resourceVersion, replicas), read through v1beta1.
async fn objects(client: &Client, namespace: &str) -> BTreeMap<String, (String, i32)> {
    let beta: Api<v1beta1::Memcached> = Api::namespaced(client.clone(), namespace);
    beta.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|m| {
            let version = m.resource_version().unwrap();
            (m.name_any(), (version, m.spec.replicas))
        })
        .collect()
}

#[tokio::test]
async fn the_storage_version_moves_from_v1alpha1_to_v1beta1_with_objects_stored_at_both() {
    let env = envtest::shared().await;
    let client = env.client();
    common::install(env, "v1alpha1").await;
    let namespace = env.create_namespace().await.unwrap();
    common::wait_until_called(&Api::namespaced(client.clone(), &namespace)).await;

    // Six objects while v1alpha1 is the storage version (three of them written through
    // v1beta1 and converted by the webhook), then four after it moved to v1beta1.
    create(&client, &namespace, "before", 3).await;
    assert_eq!(
        stored_versions_in_etcd(env).await,
        BTreeMap::from([("cache.example.com/v1alpha1".into(), 6)])
    );
    common::install(env, "v1beta1").await;
    wait_for_storage_version(&client, "v1beta1").await;
    create(&client, &namespace, "after", 2).await;
    assert_eq!(
        stored_versions_in_etcd(env).await,
        BTreeMap::from([
            ("cache.example.com/v1alpha1".into(), 6),
            ("cache.example.com/v1beta1".into(), 4),
        ]),
        "objects stored at both versions"
    );
    assert_eq!(crd_stored_versions(&client).await, ["v1alpha1", "v1beta1"]);
    let before = objects(&client, &namespace).await;

    // The migration, through conflicts and server errors, every request audited.
    let audit = RbacAudit::default();
    let faults = Faults::default()
        .fail(
            Fault::conflict()
                .on_verb("patch")
                .on_resource("memcacheds")
                .times(2),
        )
        .fail(Fault::server_error().on_verb("patch").times(1))
        .fail(Fault::server_error().on_verb("list").times(1))
        .fail(
            Fault::conflict()
                .on_resource("customresourcedefinitions/status")
                .times(1),
        );
    let migration = Migration::new(testing::wrap(client.clone(), &audit, &faults))
        .page_size(4)
        .retries(6, Duration::from_millis(20));
    let report = migration.migrate(CRD).await.unwrap();

    // What was asked for: storedVersions trimmed, and etcd holding nothing at v1alpha1.
    assert_eq!(crd_stored_versions(&client).await, ["v1beta1"]);
    assert_eq!(
        stored_versions_in_etcd(env).await,
        BTreeMap::from([("cache.example.com/v1beta1".into(), 10)]),
        "nothing left at v1alpha1 in etcd"
    );
    assert_eq!(faults.injected().len(), 5, "every planned fault hit");
    assert_eq!(report.storage_version, "v1beta1");
    assert_eq!(report.stored_versions_before, ["v1alpha1", "v1beta1"]);
    assert_eq!(
        (
            report.listed,
            report.rewritten,
            report.unchanged,
            report.deleted
        ),
        (10, 6, 4, 0),
        "{report:?}"
    );
    assert!(report.trimmed);
    // Rewritten through the conversion webhook without losing a field: every object still
    // has its size, and exactly the six stored at v1alpha1 got a new resourceVersion.
    let after = objects(&client, &namespace).await;
    assert_eq!(after.len(), 10);
    for (name, (version, replicas)) in &after {
        let (old_version, old_replicas) = &before[name];
        assert_eq!(replicas, old_replicas, "{name}");
        assert_eq!(
            version != old_version,
            name.starts_with("before-"),
            "{name}: rewritten if and only if it was stored at v1alpha1"
        );
    }
    // Exactly the rules `storage_migration_rules` gives `make manifests`: none missing,
    // none unused.
    let rules = rkb_runtime::storage_migration_rules::<v1alpha1::Memcached>();
    if let Err(report) = audit.check_rules(&rules) {
        panic!("{report}");
    }

    // The manager binary's one-shot mode, run again: it checks that every object is at the
    // storage version, and the API server writes nothing (no resourceVersion moves).
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_memcached-example"))
        .args(["--migrate-storage", "--migrate-storage-qps=50"])
        .env("KUBECONFIG", env.kubeconfig_path())
        .env("RUST_LOG", "info")
        .env_remove("LOG_FORMAT")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    let logs = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}\n{logs}", output.status);
    assert!(
        logs.contains("storage version migration done")
            && logs.contains("rewritten=0")
            && logs.contains("unchanged=10"),
        "{logs}"
    );
    assert_eq!(objects(&client, &namespace).await, after);
    assert_eq!(crd_stored_versions(&client).await, ["v1beta1"]);
}
