//! Where the keys of `#[rkb(...)]` (rkb-core's table) may be written, and the messages
//! for a key written in the wrong place or unknown.

use rkb_core::attributes::rkb::{ALIASES, KEYS, Key, Kind};

use super::Place;
use crate::suggest;

/// The names of all keys, and of those that may be written more than once.
pub(super) fn names() -> (Vec<&'static str>, Vec<&'static str>) {
    let all = KEYS.iter().map(|k| k.name).collect();
    let repeatable = KEYS
        .iter()
        .filter(|k| k.repeatable)
        .map(|k| k.name)
        .collect();
    (all, repeatable)
}

pub(super) fn allowed(def: &Key, place: Place) -> bool {
    match place {
        Place::Field => def.places.field,
        Place::Type => def.places.ty,
        Place::Spec => def.places.ty || def.places.spec,
        Place::Items => def.places.items,
    }
}

pub(super) fn place_name(place: Place) -> &'static str {
    match place {
        Place::Field => "a field",
        Place::Type => "a type",
        Place::Spec => "the spec struct",
        Place::Items => "`items(...)`",
    }
}

pub(super) fn misplaced(def: &Key, place: Place) -> String {
    let name = def.name;
    if def.kind == Kind::Crd {
        return format!(
            "`{name}` describes the CRD: put it on the spec struct, next to \
             #[rkb_runtime::api] and #[kube(...)]"
        );
    }
    if def.kind == Kind::FieldGroup {
        return format!(
            "`{name}` names fields of a struct: put it on the struct, next to \
             #[rkb_runtime::schema] or #[rkb_runtime::api]"
        );
    }
    if def.places.field && !def.places.ty && matches!(place, Place::Type | Place::Spec) {
        return format!("`{name}` applies to a field's value: put #[rkb({name} ...)] on the field");
    }
    if place == Place::Items {
        return format!("`{name}` cannot apply to array items: put it on the field itself");
    }
    format!("`{name}` is not allowed on {}", place_name(place))
}

pub(super) fn unknown_key(name: &str, place: Place) -> String {
    let names: Vec<&str> = KEYS
        .iter()
        .filter(|k| allowed(k, place))
        .map(|k| k.name)
        .collect();
    if matches!(name, "optional" | "required") {
        return format!(
            "there is no `{name}` key: a field is optional when its type is Option<T> or it \
             has #[serde(default)], and required otherwise"
        );
    }
    if matches!(name, "skipversion" | "skip_version" | "skip") {
        return format!(
            "there is no `{name}` key: a version is in the CRD when its kind is in \
             `manifests()` (src/lib.rs); leave the version's `crd::<...>()` out there"
        );
    }
    if name == "unique_items" {
        return "`unique_items` is forbidden by Kubernetes (its validation cost is quadratic): \
                use `list_type = set` to reject duplicates"
            .to_owned();
    }
    let all: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
    let hint = suggest::intended_key(name, ALIASES, &all);
    let at = format!("#[rkb(...)] on {}", place_name(place));
    suggest::unknown_key(name, &at, hint, &names)
}
