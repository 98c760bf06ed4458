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

//! The metrics server's certificate, which the manager makes and rotates itself
//! (PROJECT's `webhookCerts: self`), so that config/prometheus's ServiceMonitor verifies it
//! without cert-manager. `rkb edit --webhook-certs cert-manager` takes it out (then
//! config/default's [METRICS-WITH-CERTS] gives the metrics server cert-manager's).

use rkb_runtime::certs::MetricsCertificates;

/// The Secret the manager keeps the metrics CA and serving certificate in (in its
/// namespace; Prometheus verifies against its `ca.crt`), and the metrics Service the
/// certificate names, by their names once config/default's `namePrefix` is applied (change
/// them with it, and in config/prometheus/monitor.yaml). The manager gets them (`main.rs`),
/// and `make manifests` turns them into RBAC rules that name the Secret (`crate::manifests`).
pub fn certificates() -> MetricsCertificates {
    MetricsCertificates::new("memcached-image-metrics-server-cert")
        .service("memcached-image-controller-manager-metrics-service")
}
