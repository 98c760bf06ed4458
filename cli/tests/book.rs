//! The book's tests (docs/): generated reference pages, executed transcripts, links.
//! One test binary for all of them, so CI links it once.
//!
//! A generated page is rendered here from the code it describes and compared with the
//! file under `docs/src/`; `RKB_BLESS=1 cargo test -p rkb --test book` rewrites it.

use std::path::{Path, PathBuf};

mod common;

/// The book's checks, in cli/tests/book/: a module per generated page (or per source several
/// pages share), the tutorials' regeneration, the transcripts, the links, and the browser.
mod book {
    mod attributes;
    mod browser;
    mod cli_pages;
    mod envtest_page;
    mod helm_values;
    mod links;
    mod makefile;
    mod markdown;
    mod markers;
    mod project_fields;
    mod transcripts;
    mod tutorials;
}

/// The repository's root (the parent of `cli/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every markdown file of the book (`SUMMARY.md` included), relative to the repository,
/// with `/` separators, sorted.
pub fn book_pages() -> Vec<String> {
    let repo = repo();
    let mut pages = Vec::new();
    let mut dirs = vec![repo.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let page = path.strip_prefix(&repo).unwrap();
                pages.push(page.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    pages.sort();
    pages
}

/// The first line of a generated page: what it is generated from, by which test, and how to
/// regenerate it (an HTML comment, so the reader of the book does not see it).
pub fn generated_from(sources: &str, renderer: &str) -> String {
    format!(
        "<!-- Generated from {sources} by cli/tests/book/{renderer}: edit those, then run \
         `RKB_BLESS=1 cargo test -p rkb --test book`. -->\n"
    )
}

/// The environment variables the Rust files at `path` (a file or a directory) read by name
/// (`var("NAME")`, `var_os("NAME")`), outside their tests: what a page of variables must
/// have a row for.
pub fn env_vars_read(path: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for source in rust_sources(path) {
        for call in ["var(\"", "var_os(\""] {
            for (at, _) in source.match_indices(call) {
                let rest = &source[at + call.len()..];
                out.insert(rest[..rest.find('"').unwrap()].to_owned());
            }
        }
    }
    out
}

/// The Rust files at `path` (a file or a directory), each without its `#[cfg(test)]` part,
/// and without `tests.rs` files.
pub fn rust_sources(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut paths = vec![path.to_path_buf()];
    while let Some(path) = paths.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                paths.push(entry.unwrap().path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
            let source = std::fs::read_to_string(&path).unwrap();
            out.push(source.split("\n#[cfg(test)]").next().unwrap().to_owned());
        }
    }
    out
}

/// Compares `content` with the page `docs/src/<page>`, or writes it there under `RKB_BLESS`.
/// Panics with a unified diff and the command that regenerates the page.
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
    let pages: std::collections::BTreeSet<String> = book_pages()
        .into_iter()
        .map(|page| page.trim_start_matches("docs/src/").to_owned())
        .filter(|page| page != "SUMMARY.md")
        .collect();
    let missing: Vec<_> = listed.difference(&pages).collect();
    let unlisted: Vec<_> = pages.difference(&listed).collect();
    assert!(
        missing.is_empty() && unlisted.is_empty(),
        "docs/src/SUMMARY.md lists pages that do not exist: {missing:?}; \
         pages not listed in it: {unlisted:?}"
    );
}
