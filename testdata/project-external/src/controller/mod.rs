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

//! The controllers of external-operator, one module per reconciled kind.

use rkb_runtime::manager::Runnable;

pub mod access_policy;
pub mod certificate;
pub mod http_route;
pub mod postgresql;
pub mod schema;
pub mod service_monitor;
pub mod shape;
pub mod snapshot;
pub mod tunnel;
// +rkb:scaffold:modules

/// Every controller of this operator, by name (its metrics label and `--controller-concurrency`
/// key); `rkb create api` adds to this list. The manager starts them once this replica leads.
pub fn controllers() -> Vec<Runnable> {
    vec![
        Runnable::new("certificate", certificate::run),
        Runnable::new("servicemonitor", service_monitor::run),
        Runnable::new("httproute", http_route::run),
        Runnable::new("shape", shape::run),
        Runnable::new("schema", schema::run),
        Runnable::new("tunnel", tunnel::run),
        Runnable::new("postgresql", postgresql::run),
        Runnable::new("snapshot", snapshot::run),
        Runnable::new("accesspolicy", access_policy::run),
        // +rkb:scaffold:controllers
    ]
}
