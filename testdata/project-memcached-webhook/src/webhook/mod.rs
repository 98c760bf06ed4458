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

//! The admission and conversion webhooks of memcached-webhook: [`webhooks`] is what the
//! manager serves over HTTPS (`--webhook-bind-address`, :9443 by default), and the API
//! crate's `manifests()` lists the same webhooks for `make manifests`, by the paths of their
//! impls. `rkb create webhook` adds new ones at the markers.

use rkb_runtime::webhook::Webhooks;

pub mod v1alpha1;
// +rkb:scaffold:modules

/// Every webhook of this operator, for `Manager::webhooks`.
pub fn webhooks() -> Webhooks {
    let mut webhooks = Webhooks::new();
    webhooks = webhooks.defaulter::<crate::api::cache::v1alpha1::Memcached, _>(
        v1alpha1::memcached::MemcachedWebhook,
    );
    webhooks = webhooks.validator::<crate::api::cache::v1alpha1::Memcached, _>(
        v1alpha1::memcached::MemcachedWebhook,
    );
    webhooks = webhooks.conversion(crate::api::cache::v1alpha1::memcached_conversion::conversion());
    // +rkb:scaffold:webhooks
    webhooks
}

// The webhooks called by a real API server (envtest).
#[cfg(test)]
mod tests;
