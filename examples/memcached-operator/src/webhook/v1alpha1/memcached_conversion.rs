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

//! Conversion between the versions of Memcached, the memcacheds.cache.example.com CRD:
//! v1alpha1 is the hub (and the storage version the controller reconciles), and v1beta1,
//! which calls `size` `replicas`, converts to and from it. `make manifests` sets the CRD's
//! conversion strategy to `Webhook` (served at /convert).

use rkb_runtime::webhook::{Conversion, ConversionError, Convertible, Hub};

use crate::api::cache::{v1alpha1, v1beta1};

impl Hub for v1alpha1::Memcached {}

/// The conversion the manager serves for the memcacheds.cache.example.com CRD.
pub fn conversion() -> Conversion<v1alpha1::Memcached> {
    Conversion::hub().spoke::<v1beta1::Memcached>()
    // +rkb:scaffold:spokes
}

/// The versions hold the same information under other names: nothing needs keeping in
/// an annotation (`rkb_runtime::webhook::preserve`/`restore`).
impl Convertible<v1alpha1::Memcached> for v1beta1::Memcached {
    fn to_hub(self) -> Result<v1alpha1::Memcached, ConversionError> {
        Ok(v1alpha1::Memcached {
            metadata: self.metadata,
            spec: v1alpha1::MemcachedSpec {
                size: self.spec.replicas,
                container_port: self.spec.container_port,
            },
            status: self.status.map(|status| v1alpha1::MemcachedStatus {
                nodes: status.nodes,
                conditions: status.conditions,
            }),
        })
    }

    fn from_hub(hub: v1alpha1::Memcached) -> Result<Self, ConversionError> {
        Ok(v1beta1::Memcached {
            metadata: hub.metadata,
            spec: v1beta1::MemcachedSpec {
                replicas: hub.spec.size,
                container_port: hub.spec.container_port,
            },
            status: hub.status.map(|status| v1beta1::MemcachedStatus {
                nodes: status.nodes,
                conditions: status.conditions,
            }),
        })
    }
}

// +rkb:scaffold:spoke-impls

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_is_served() {
        assert_eq!(
            conversion().versions(),
            ["cache.example.com/v1alpha1", "cache.example.com/v1beta1"]
        );
    }

    fn spoke() -> v1beta1::Memcached {
        let mut spoke = v1beta1::Memcached::new(
            "cache",
            v1beta1::MemcachedSpec {
                replicas: 3,
                container_port: Some(11311),
            },
        );
        spoke.status = Some(v1beta1::MemcachedStatus {
            nodes: vec!["cache-0".into(), "cache-1".into()],
            conditions: Vec::new(),
        });
        spoke
    }

    #[test]
    fn replicas_is_v1alpha1s_size() {
        let hub = spoke().to_hub().unwrap();
        assert_eq!(hub.spec.size, 3);
        assert_eq!(hub.spec.container_port, Some(11311));
        assert_eq!(hub.status.unwrap().nodes, ["cache-0", "cache-1"]);
    }

    #[test]
    fn v1beta1_round_trips_through_the_hub() {
        let spoke = spoke();
        let hub = spoke.clone().to_hub().unwrap();
        let back = v1beta1::Memcached::from_hub(hub.clone()).unwrap();
        assert_eq!(back, spoke);
        assert_eq!(back.to_hub().unwrap(), hub);
    }

    #[test]
    fn v1beta1_objects_drawn_from_its_schema_survive_the_hub() {
        // Arbitrary v1beta1 objects valid for its schema (types, enums, bounds,
        // lengths, patterns) must come back unchanged; a failure names the field that does not.
        rkb_runtime::testing::conversion::assert_round_trips(|spoke: v1beta1::Memcached| {
            v1beta1::Memcached::from_hub(spoke.to_hub()?)
        });
    }

    // +rkb:scaffold:spoke-tests
}
