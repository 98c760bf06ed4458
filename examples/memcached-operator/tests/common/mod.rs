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

//! What the tests and benchmarks that need the webhooks share: the webhook server of the
//! test binary, and the CRD and webhook configurations installed pointing at it.

// Each test binary compiles this module and uses a part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kube::Api;
use kube::api::{DynamicObject, PostParams};
use memcached_example::api::cache::v1alpha1::{Memcached, MemcachedSpec};
use rkb_runtime::testing::envtest::{Environment, WebhookCerts};
use rkb_runtime::webhook::TlsFiles;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The webhook server of this test binary, on a thread and runtime of its own so that it
/// outlives each test's runtime.
pub fn served() -> &'static (SocketAddr, WebhookCerts) {
    static SERVED: OnceLock<(SocketAddr, WebhookCerts)> = OnceLock::new();
    SERVED.get_or_init(|| {
        let certs = WebhookCerts::generate().unwrap();
        let files = TlsFiles::in_dir(certs.dir());
        let (bound, addr) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let server = memcached_example::webhook::webhooks()
                    .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)), &files)
                    .await
                    .unwrap();
                bound.send(server.local_addr().unwrap()).unwrap();
                server.serve(CancellationToken::new()).await;
            });
        });
        (addr.recv().unwrap(), certs)
    })
}

/// Installs (server-side applies) the CRD that `make manifests` renders, with `storage` as
/// its storage version, converting through the test's webhook server, and the webhook
/// configurations, pointed at that server. Applying it again with another `storage` moves
/// the storage version, as a new release's CRD would.
pub async fn install(env: &Environment, storage: &str) {
    let (addr, certs) = served();
    let manifests = memcached_example::manifests();
    let mut objects: Vec<Value> = manifests
        .crds()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|crd| serde_json::to_value(crd).unwrap())
        .collect();
    for crd in &mut objects {
        let versions = crd["spec"]["versions"].as_array_mut().unwrap();
        assert!(
            versions.iter().any(|v| v["name"] == storage),
            "no version {storage}"
        );
        for version in versions {
            version["storage"] = Value::Bool(version["name"] == storage);
        }
    }
    let files = manifests.render().unwrap_or_else(|e| panic!("{e}"));
    objects.extend(
        files[Path::new("config/webhook/manifests.yaml")]
            .split("\n---\n")
            .map(|doc| serde_yaml_ng::from_str(doc.trim_start_matches("---\n")).unwrap()),
    );
    let objects = objects
        .into_iter()
        .map(|mut object| {
            certs.point_at(*addr, &mut object);
            serde_json::from_value::<DynamicObject>(object).unwrap()
        })
        .collect();
    env.apply().objects(objects).await.unwrap();
}

/// The API server picks webhook configurations up asynchronously: dry-run a name the
/// validator refuses until it is refused.
pub async fn wait_until_called(api: &Api<Memcached>) {
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let probe = Memcached::new(
        "probe.name",
        MemcachedSpec {
            size: 3,
            container_port: None,
        },
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match api.create(&dry_run, &probe).await {
            Err(kube::Error::Api(status)) if status.message.contains("cannot name") => return,
            other if Instant::now() > deadline => {
                panic!("the API server does not call the webhooks: {other:?}")
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
