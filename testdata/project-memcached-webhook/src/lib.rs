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

//! memcached-webhook: a Kubernetes operator scaffolded by rkb.
//!
//! `api` is the API crate (api/: the custom resource types, and `api::manifests()`, what
//! `make manifests` turns into config/ YAML), `controller` holds their reconcilers.

pub use memcached_webhook_api as api;

pub mod controller;
pub mod webhook;
// +rkb:scaffold:modules
