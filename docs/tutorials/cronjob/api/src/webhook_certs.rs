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

//! The webhooks' certificates, which the manager makes, injects and rotates itself
//! (PROJECT's `webhookCerts: self`): no cert-manager in the cluster. `rkb create webhook`
//! adds each webhook configuration and CRD at the marker; `rkb edit --webhook-certs
//! cert-manager` hands the certificates to cert-manager instead.

use rkb_runtime::certs::WebhookCertificates;

/// The Secret the manager keeps its CA and serving certificate in (in its namespace), the
/// webhook Service the certificate names, and the objects whose `caBundle` it keeps, by
/// their names once config/default's `namePrefix` is applied (change them with it).
/// The manager gets them (`main.rs`), and `make manifests` turns them into RBAC rules that
/// name each object (`crate::manifests`): one home for both.
pub fn certificates() -> WebhookCertificates {
    WebhookCertificates::new("cronjob-webhook-server-cert")
        .service("cronjob-webhook-service")
        .mutating_webhook_configuration("cronjob-mutating-webhook-configuration")
        .validating_webhook_configuration("cronjob-validating-webhook-configuration")
    // +rkb:scaffold:webhook-certificates
}
