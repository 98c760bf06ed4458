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

//! The webhooks called by a real API server (envtest), as kubebuilder's
//! `webhook_suite_test.go` runs them: [`webhooks`](super::webhooks) is served in the test
//! binary, and the CRDs and config/webhook/manifests.yaml that `make manifests` writes are
//! installed pointed at it, on an API server of this module's own (webhook configurations
//! apply cluster-wide: the controllers' tests must not meet them). The admission files' own
//! tests call the impls directly; these show that the API server calls them and keeps what
//! they answer. `rkb create webhook` adds a test per webhook at the marker.

use rkb_runtime::testing::envtest::{self, Environment};
use rkb_runtime::testing::webhooks;
use tokio::sync::OnceCell;

/// This module's API server with the webhooks installed and served (once: they apply to
/// every test of the module), and a fresh namespace for the test.
async fn api_server() -> (&'static Environment, String) {
    static INSTALLED: OnceCell<()> = OnceCell::const_new();
    let env = envtest::shared_by(module_path!()).await;
    INSTALLED
        .get_or_init(|| async {
            let served = crate::webhook::webhooks();
            let manifests = crate::api::manifests();
            webhooks::install(env, served, &manifests)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        })
        .await;
    (env, env.create_namespace().await.unwrap())
}
/// The API server accepts config/webhook/manifests.yaml and calls every webhook it lists, at
/// the path and with the settings this binary serves it (a webhook listed for `make
/// manifests` but not served, or served otherwise, fails here).
#[tokio::test]
async fn the_api_server_calls_the_webhooks_make_manifests_lists() {
    api_server().await;
}
// +rkb:scaffold:webhook-tests
