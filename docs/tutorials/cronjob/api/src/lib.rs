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

//! The API of cronjob: its custom resource types, one module per group and
//! version (kubebuilder's `api/` package), and [`manifests`], what `make manifests` writes.
//! A crate of its own, so that `make manifests` builds the types without the operator.

pub mod batch;
// +rkb:scaffold:groups
pub mod metrics_certs;
pub mod webhook_certs;
// +rkb:scaffold:modules

/// The CRDs of this project's APIs: `make manifests` writes them to config/crd/bases/.
pub fn crds() -> Vec<Result<rkb_runtime::Crd, rkb_runtime::CrdError>> {
    vec![
        rkb_runtime::crd::<batch::v1::CronJob>(),
        // +rkb:scaffold:crds
    ]
}

/// The CRDs, the RBAC rules of the operator's controllers (its `#[rbac]` attributes, read
/// from its sources in src/) and its webhooks: `make manifests` writes them to
/// config/crd/bases/, config/rbac/role.yaml and config/webhook/manifests.yaml. A webhook
/// is named by its resource and the path of its impl in the operator, whose
/// `#[rkb_runtime::webhook(...)]` attribute gives the settings.
pub fn manifests() -> rkb_runtime::Manifests {
    let rbac = vec![
        rkb_runtime::metrics_certificate_rules(&metrics_certs::certificates()),
        rkb_runtime::webhook_certificate_rules(&webhook_certs::certificates()),
        // +rkb:scaffold:webhook-rbac
    ];
    let webhooks = vec![
        rkb_runtime::webhooks::defaulting::<batch::v1::CronJob>(
            "webhook::v1::cron_job::CronJobWebhook",
        ),
        rkb_runtime::webhooks::validating::<batch::v1::CronJob>(
            "webhook::v1::cron_job::CronJobWebhook",
        ),
        // +rkb:scaffold:webhooks
    ];
    rkb_runtime::Manifests::new(crds(), rbac)
        .rules_from(operator_root().join("src"))
        .webhooks(webhooks)
}

/// The operator's directory, this crate's parent: config/ and the sources are there.
fn operator_root() -> &'static std::path::Path {
    let api = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    api.parent().unwrap_or(api)
}

#[cfg(test)]
mod tests {
    /// Fails when the types or the operator's RBAC or webhook attributes changed but
    /// config/ was not regenerated.
    #[test]
    fn manifests_are_up_to_date() {
        if let Err(error) = super::manifests().check(super::operator_root()) {
            panic!("{error}");
        }
    }
}
