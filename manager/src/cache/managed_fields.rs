//! The caches keep objects without `metadata.managedFields`, as controller-runtime's
//! `TransformStripManagedFields` does: kube decodes each `fieldsV1` set into a tree of
//! JSON maps, which made up most of a cached Deployment (~22 KiB of one; 2,000 of them
//! were 44 MiB of the race's 94 MiB heap). Only
//! [`TypedApi::apply_if_changed`](crate::TypedApi::apply_if_changed) needs them, to tell
//! whether an apply would remove a field: it finds them here, kept as JSON text (a tenth of
//! the size) by UID for the version the cache holds.
//!
//! An object written back from a cache without `managedFields` (a PUT) keeps the ones the
//! API server has: it replaces them only when the request carries some.
//!
//! An entry goes with its object's deletion. One deleted while a watch was down (its
//! relist shows it gone, with no deletion event) stays, a few KiB, until the process ends.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use crate::sync::lock;
use kube::Resource;
use kube::runtime::watcher::Event;
use serde_json::Value;

/// By UID: the resourceVersion a cache last saw, and that version's `managedFields` as
/// JSON. One table for every cache of the process: caches of the same object see the same
/// versions, and a miss only costs a request.
type Table = HashMap<String, (String, Box<str>)>;
static PACKED: LazyLock<Mutex<Table>> = LazyLock::new(Mutex::default);

/// Moves the `managedFields` of the objects of `event` into the table (removes them for
/// a deletion), before the event reaches a store.
pub(crate) fn pack<K: Resource>(mut event: Event<K>) -> Event<K> {
    match &mut event {
        Event::Apply(object) | Event::InitApply(object) => keep(object),
        Event::Delete(object) => {
            object.meta_mut().managed_fields = None;
            if let Some(uid) = &object.meta().uid {
                table().remove(uid);
            }
        }
        Event::Init | Event::InitDone => {}
    }
    event
}

fn keep<K: Resource>(object: &mut K) {
    let Some(fields) = object.meta_mut().managed_fields.take() else {
        return;
    };
    let meta = object.meta();
    let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
        return;
    };
    if let Ok(json) = serde_json::to_string(&fields) {
        table().insert(uid.clone(), (version.clone(), json.into()));
    }
}

/// The `managedFields` of the version `version` of the object `uid`, if a cache holds it.
pub(crate) fn unpacked(uid: &str, version: &str) -> Option<Value> {
    let table = table();
    let (kept, json) = table.get(uid)?;
    (kept == version)
        .then(|| serde_json::from_str(json).ok())
        .flatten()
}

fn table() -> std::sync::MutexGuard<'static, Table> {
    lock(&PACKED)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
    use kube::api::ObjectMeta;

    use super::*;

    fn config_map(uid: &str, version: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                uid: Some(uid.into()),
                resource_version: Some(version.into()),
                managed_fields: Some(vec![ManagedFieldsEntry {
                    manager: Some("op".into()),
                    operation: Some("Apply".into()),
                    fields_v1: Some(FieldsV1(serde_json::json!({"f:data": {"f:a": {}}}))),
                    ..ManagedFieldsEntry::default()
                }]),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn cached_objects_keep_their_managed_fields_aside_for_the_version_they_are() {
        let Event::Apply(cached) = pack(Event::Apply(config_map("mf-1", "7"))) else {
            unreachable!()
        };
        assert_eq!(cached.metadata.managed_fields, None);
        let fields = unpacked("mf-1", "7").expect("kept for version 7");
        assert_eq!(fields[0]["manager"], "op");
        assert_eq!(
            fields[0]["fieldsV1"]["f:data"],
            serde_json::json!({"f:a": {}})
        );
        assert_eq!(unpacked("mf-1", "6"), None, "another version");
        pack(Event::Delete(config_map("mf-1", "8")));
        assert_eq!(unpacked("mf-1", "7"), None, "gone with the object");
    }
}
