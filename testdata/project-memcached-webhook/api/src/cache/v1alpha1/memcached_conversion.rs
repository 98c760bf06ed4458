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

//! Conversion between the versions of the memcacheds.cache.example.com CRD. v1alpha1 is the
//! hub: each spoke converts to and from it, so that the API server serves every version
//! whichever one an object was stored in. `make manifests` sets the CRD's conversion
//! strategy to `Webhook` (served at /convert).
//!
//! In the API crate beside the types, as the traits' rules want it, and built only with its
//! `manager` feature, which the operator turns on: `make manifests` builds the types without
//! rkb's manager.

#![cfg(feature = "manager")]

use rkb_runtime::webhook::{Conversion, ConversionError, Convertible, Hub};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cache::v1alpha1::Memcached;

impl Hub for Memcached {}

/// The conversion the manager serves for the memcacheds.cache.example.com CRD.
/// `rkb create api` adds a later version as a spoke at the `+rkb:scaffold:` markers.
pub fn conversion() -> Conversion<Memcached> {
    Conversion::hub().spoke::<crate::cache::v1beta1::Memcached>()
    // +rkb:scaffold:spokes
}

impl Convertible<Memcached> for crate::cache::v1beta1::Memcached {
    fn to_hub(self) -> Result<Memcached, ConversionError> {
        // TODO(user): map the fields that differ between v1beta1 and v1alpha1; keep what
        // v1beta1 cannot hold with rkb_runtime::webhook::{preserve, restore}.
        same_fields(self)
    }

    fn from_hub(hub: Memcached) -> Result<Self, ConversionError> {
        same_fields(hub)
    }
}

// +rkb:scaffold:spoke-impls

/// Converts between two versions with the same fields, as rkb scaffolds them: the object
/// goes through JSON, and any field that does not survive the trip is an error, so that a
/// version which gains or loses a field fails loudly until its conversion maps the field.
fn same_fields<From: Serialize, To: Serialize + DeserializeOwned>(
    object: From,
) -> Result<To, ConversionError> {
    let error = |e: serde_json::Error| ConversionError::new(e.to_string());
    let before = serde_json::to_value(object).map_err(error)?;
    let converted: To = serde_json::from_value(before.clone()).map_err(error)?;
    let after = serde_json::to_value(&converted).map_err(error)?;
    for part in ["metadata", "spec", "status"] {
        if before.get(part) != after.get(part) {
            return Err(ConversionError::new(format!(
                "the {part} of this Memcached does not convert field by field: map it in \
                 Convertible::to_hub and from_hub"
            )));
        }
    }
    Ok(converted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hub_is_served_first() {
        assert_eq!(conversion().versions()[0], "cache.example.com/v1alpha1");
    }

    #[test]
    fn v1beta1_is_served_and_round_trips_through_the_hub() {
        assert!(
            conversion()
                .versions()
                .iter()
                .any(|v| v == "cache.example.com/v1beta1")
        );
        let spoke = crate::cache::v1beta1::Memcached::default();
        let hub = spoke.clone().to_hub().unwrap_or_else(|e| panic!("{e}"));
        let back = <crate::cache::v1beta1::Memcached>::from_hub(hub.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, spoke);
        assert_eq!(back.to_hub().unwrap_or_else(|e| panic!("{e}")), hub);
    }

    #[test]
    fn v1beta1_objects_drawn_from_its_schema_survive_the_hub() {
        // Arbitrary v1beta1 objects valid for its schema (types, enums, bounds,
        // lengths, patterns) must come back unchanged; a failure names the field that does not.
        rkb_runtime::testing::conversion::assert_round_trips(
            |spoke: crate::cache::v1beta1::Memcached| {
                <crate::cache::v1beta1::Memcached>::from_hub(spoke.to_hub()?)
            },
        );
    }

    // +rkb:scaffold:spoke-tests
}
