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

//! memcached-namespaced: a Kubernetes operator scaffolded by rkb.
//!
//! `api` is the API crate (api/: the custom resource types, and `api::manifests()`, what
//! `make manifests` turns into config/ YAML), `controller` holds their reconcilers, and
//! [`Args`] the manager's flags. Their tests, the controllers' against a real API server
//! among them, are in this library: `cargo test` links one test binary for the operator
//! (and one for the API crate).

pub use memcached_namespaced_api as api;

pub mod controller;
// +rkb:scaffold:modules

/// Manager of the memcached-namespaced operator.
#[derive(Debug, clap::Parser)]
#[command(version)]
pub struct Args {
    #[command(flatten)]
    pub manager: rkb_runtime::manager::Args,
    // TODO(user): add the operator's own flags here.
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Catches clashing or malformed flags, which clap otherwise reports only at start-up.
    #[test]
    fn flags_are_well_formed() {
        super::Args::command().debug_assert();
    }
}
