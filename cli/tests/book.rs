//! The book's tests (docs/): generated reference pages, executed transcripts, links.
//! One test binary for all of them, so CI links it once.
//!
//! A generated page is rendered here from the code it describes and compared with the
//! file under `docs/src/`; `RKB_BLESS=1 cargo test -p rkb --test book` rewrites it.

use std::path::{Path, PathBuf};

mod common;

#[path = "book/attributes.rs"]
mod attributes;

/// The repository's root (the parent of `cli/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Compares `content` with the page `docs/src/<page>`, or writes it there under `RKB_BLESS`.
/// Panics with a unified diff and the command that regenerates the page.
#[allow(dead_code)] // the generated reference pages call it
pub fn generated_page(page: &str, content: &str) {
    let path = repo().join("docs/src").join(page);
    if std::env::var_os("RKB_BLESS").is_some() {
        std::fs::write(&path, content).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let old = std::fs::read(&path).unwrap_or_default();
    if old != content.as_bytes() {
        panic!(
            "docs/src/{page} is not what the code it describes renders; regenerate it with \
             `RKB_BLESS=1 cargo test -p rkb --test book` and review the diff:\n{}",
            common::unified_diff(Path::new(page), &old, content.as_bytes())
        );
    }
}

/// Every page SUMMARY.md lists exists, and every page under docs/src/ is listed: a page
/// nobody can reach from the table of contents is as lost as a missing one.
#[test]
fn every_page_is_in_the_summary_and_every_entry_is_a_page() {
    let src = repo().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: std::collections::BTreeSet<String> = summary
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target.to_string()))
        .collect();
    let mut pages = std::collections::BTreeSet::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let page = path
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                if page != "SUMMARY.md" {
                    pages.insert(page);
                }
            }
        }
    }
    let missing: Vec<_> = listed.difference(&pages).collect();
    let unlisted: Vec<_> = pages.difference(&listed).collect();
    assert!(
        missing.is_empty() && unlisted.is_empty(),
        "docs/src/SUMMARY.md lists pages that do not exist: {missing:?}; \
         pages not listed in it: {unlisted:?}"
    );
}
