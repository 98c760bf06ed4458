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

//! cronjob: a Kubernetes operator scaffolded by rkb.
//!
//! `api` is the API crate (api/, the custom resource types), `controller` holds their
//! reconcilers, and [`manifests`] lists what `make manifests` turns into config/ YAML.

pub use cronjob_api as api;

pub mod controller;
pub mod metrics_certs;
pub mod webhook;
// +rkb:scaffold:modules

/// The CRDs of this operator's APIs, the RBAC rules of its controllers and its webhooks:
/// `make manifests` writes them to config/crd/bases/, config/rbac/role.yaml and
/// config/webhook/manifests.yaml.
pub fn manifests() -> rkb_runtime::Manifests {
    let crds = api::crds();
    let rbac = vec![
        rkb_runtime::metrics_certificate_rules(&metrics_certs::certificates()),
        rkb_runtime::webhook_certificate_rules(&webhook::certs::certificates()),
        // +rkb:scaffold:webhook-rbac
        rkb_runtime::rbac_rules::<controller::cron_job::CronJobReconciler>(),
        // +rkb:scaffold:rbac
    ];
    let webhooks = vec![
        rkb_runtime::defaulting_webhook::<
            api::batch::v1::CronJob,
            webhook::v1::cron_job::CronJobWebhook,
        >(),
        rkb_runtime::validating_webhook::<
            api::batch::v1::CronJob,
            webhook::v1::cron_job::CronJobWebhook,
        >(),
        // +rkb:scaffold:webhooks
    ];
    rkb_runtime::Manifests::new(crds, rbac).webhooks(webhooks)
}

#[cfg(test)]
mod tests {
    /// Fails when the types or RBAC attributes changed but config/ was not regenerated.
    #[test]
    fn manifests_are_up_to_date() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        if let Err(error) = super::manifests().check(root) {
            panic!("{error}");
        }
    }
}
