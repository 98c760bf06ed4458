//! The files a later scaffold keeps elsewhere than the base scaffold did, and how their text
//! changes with the move; `plan` merges them at their new paths.

use std::collections::BTreeMap;
use std::path::Path;

use super::{files, read_ours};
use crate::model;
use crate::scaffold::Changes;

/// The generator of `make manifests` and the certificates' names, which moved into the API
/// crate after the types (its generator reads them without the operator): old path, new.
const MOVED_TO_THE_API_CRATE: &[(&str, &str)] = &[
    ("src/bin/manifests.rs", model::API_GENERATOR),
    ("src/metrics_certs.rs", model::METRICS_CERTS),
    ("src/webhook/certs.rs", model::WEBHOOK_CERTS),
];

/// The files a later scaffold keeps elsewhere, merged at their new paths (new path -> old
/// path and how its text changes, for the base scaffold's files and the user's alike):
/// - into the API crate (rkb 0.3): `src/api/<path>` is `api/src/<path>`, its `mod.rs` the
///   crate's `lib.rs`, a kind's conversion file
///   (`src/webhook/[<group>/]<version>/<kind>_conversion.rs`) sits beside its types,
///   `api/src/<group>/<version>/`, and the files of [`MOVED_TO_THE_API_CRATE`] at theirs.
///   Inside the API crate the types are `crate::<group>::...`, not `crate::api::<group>::...`;
///   the operator keeps `crate::api::` (its lib.rs re-exports the crate);
/// - into the operator's library, so that `cargo test` links one test binary for it:
///   `tests/webhooks.rs` is `src/webhook/tests.rs`, an `--image` controller's
///   `tests/[<group>_]<kind>_controller.rs` is `src/controller/[<group>/]<kind>/tests.rs`.
///   They name the operator `crate::`, not by its name, and reach config/ one level further up.
pub(super) struct Moves {
    /// New path -> the old path, and how its text changes.
    pub(super) to: BTreeMap<String, (String, Rewrite)>,
    /// The operator's crate name, as the moved tests named it.
    crate_name: String,
}

/// How a moved file's text changes with its place.
#[derive(Clone, Copy)]
pub(super) enum Rewrite {
    IntoApiCrate,
    IntoOperatorLibrary,
}

impl Moves {
    pub(super) fn find(
        dir: &Path,
        crate_name: &str,
        base: &BTreeMap<String, Vec<u8>>,
        new: &BTreeMap<String, Vec<u8>>,
    ) -> anyhow::Result<Self> {
        let mut moves = BTreeMap::new();
        // The user's files under src/api/, the scaffold's among them.
        let theirs = match dir.join("src/api").is_dir() {
            true => files(&dir.join("src/api"))?
                .into_keys()
                .map(|rel| format!("src/api/{rel}"))
                .collect(),
            false => Vec::new(),
        };
        for old in base.keys().chain(&theirs) {
            if new.contains_key(old) {
                continue;
            }
            let found = into_api_crate(old, new)
                .map(|to| (to, Rewrite::IntoApiCrate))
                .or_else(|| {
                    into_operator_library(old, new).map(|to| (to, Rewrite::IntoOperatorLibrary))
                });
            if let Some((to, rewrite)) = found.filter(|(to, _)| !base.contains_key(to)) {
                moves.insert(to, (old.clone(), rewrite));
            }
        }
        Ok(Self {
            to: moves,
            crate_name: crate_name.to_owned(),
        })
    }

    pub(super) fn moved_from(&self, path: &str) -> Option<&str> {
        self.to.get(path).map(|(from, _)| from.as_str())
    }

    /// `content` as it reads at its new place.
    fn rewrite(&self, rewrite: Rewrite, content: &[u8]) -> Vec<u8> {
        let Ok(text) = std::str::from_utf8(content) else {
            return content.to_vec();
        };
        match rewrite {
            Rewrite::IntoApiCrate => model::in_api_crate(text),
            Rewrite::IntoOperatorLibrary => text
                .replace(&format!("{}::", self.crate_name), "crate::")
                .replace("include_str!(\"../", "include_str!(\"../../"),
        }
        .into_bytes()
    }

    /// The base scaffold with its moved files at their new paths.
    pub(super) fn apply_to(&self, base: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
        let mut moved = base.clone();
        for (to, (from, rewrite)) in &self.to {
            if let Some(content) = moved.remove(from) {
                moved.insert(to.clone(), self.rewrite(*rewrite, &content));
            }
        }
        moved
    }

    /// The user's file at `path`, or the one that moves there (then planned away from its
    /// old path).
    pub(super) fn read_ours(
        &self,
        dir: &Path,
        path: &str,
        changes: &mut Changes,
    ) -> anyhow::Result<Option<Vec<u8>>> {
        let ours = read_ours(dir, path)?;
        let Some((from, rewrite)) = self.to.get(path).filter(|_| ours.is_none()) else {
            return Ok(ours);
        };
        let Some(theirs) = read_ours(dir, from)? else {
            return Ok(None);
        };
        changes.remove(from)?;
        Ok(Some(self.rewrite(*rewrite, &theirs)))
    }
}

/// Where a file of the old layout's operator is in the API crate of `new`.
fn into_api_crate(old: &str, new: &BTreeMap<String, Vec<u8>>) -> Option<String> {
    if let Some(rest) = old.strip_prefix("src/api/") {
        return Some(match rest {
            "mod.rs" => model::API_LIB.to_owned(),
            _ => format!("api/src/{rest}"),
        });
    }
    if let Some((_, to)) = MOVED_TO_THE_API_CRATE.iter().find(|(from, _)| *from == old) {
        return Some((*to).to_owned()).filter(|to| new.contains_key(to));
    }
    if old.starts_with("src/webhook/") && old.ends_with("_conversion.rs") {
        let mut parts = old.rsplit('/');
        let (file, version) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        let beside_types = format!("/{version}/{file}");
        return new
            .keys()
            .find(|p| p.starts_with("api/src/") && p.ends_with(&beside_types))
            .cloned();
    }
    None
}

/// Where a test file of the old layout's `tests/` is in the operator's library of `new`.
fn into_operator_library(old: &str, new: &BTreeMap<String, Vec<u8>>) -> Option<String> {
    if old == "tests/webhooks.rs" {
        return Some("src/webhook/tests.rs".to_owned()).filter(|to| new.contains_key(to));
    }
    let prefix = old.strip_prefix("tests/")?.strip_suffix("_controller.rs")?;
    new.keys()
        .find(|path| {
            path.strip_prefix("src/controller/")
                .and_then(|rest| rest.strip_suffix("/tests.rs"))
                .is_some_and(|module| module.replace('/', "_") == prefix)
        })
        .cloned()
}
