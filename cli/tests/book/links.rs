//! Links, offline: every relative link and `#anchor` of the book, the READMEs, ARCHITECTURE.md
//! and CHANGELOG.md resolves; every `{{#include file:anchor}}` names a file and an anchor in
//! it; a book page links only into the book (what mdBook renders); no document names a path
//! of a particular machine or links into a `shared/` folder.
//!
//! Anchors are the heading ids mdBook and GitHub make: the heading's text, lowercased,
//! spaces to `-`, punctuation dropped (`-` and `_` kept), a repeat suffixed `-1`, `-2`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use super::transcripts::runner::{fence_open, is_fence_close};

/// The documents checked, relative to the repository.
fn documents() -> Vec<PathBuf> {
    let repo = crate::repo();
    let mut out: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    // The crates' READMEs, docs/README.md, and those of the examples and golden projects.
    for parent in ["", "examples", "testdata"] {
        let Ok(entries) = std::fs::read_dir(repo.join(parent)) else {
            continue;
        };
        for entry in entries {
            let readme = entry.unwrap().path().join("README.md");
            if readme.is_file() {
                out.push(readme.strip_prefix(&repo).unwrap().to_path_buf());
            }
        }
    }
    out.extend(crate::book_pages().into_iter().map(PathBuf::from));
    out.sort();
    out.dedup();
    out
}

/// A markdown file split into what is prose and what is code.
struct Document {
    /// Lines outside fenced code blocks, by line number.
    prose: Vec<(usize, String)>,
    /// Every line, code blocks included (for includes), by line number.
    all: Vec<(usize, String)>,
}

fn read(path: &Path) -> Document {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut prose = Vec::new();
    let mut all = Vec::new();
    let mut fence: Option<String> = None;
    for (index, line) in text.lines().enumerate() {
        all.push((index + 1, line.to_owned()));
        match &fence {
            Some(open) => {
                if is_fence_close(line, open) {
                    fence = None;
                }
            }
            None => match fence_open(line) {
                Some((open, _)) => fence = Some(open),
                None => prose.push((index + 1, line.to_owned())),
            },
        }
    }
    Document { prose, all }
}

/// `line` with the text of its `code spans` replaced by spaces (a link in code is none).
fn blank_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// The targets of the links on a line: `[text](target)`, `![alt](target)`, and reference
/// definitions `[name]: target`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let trimmed = line.trim_start();
    if trimmed.starts_with('[')
        && let Some((label, target)) = trimmed.split_once("]:")
        && !label.contains(']')
    {
        out.extend(target.split_whitespace().next().map(str::to_owned));
    }
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        // The target ends at the `)` that balances, or at a space before a title.
        let mut depth = 0;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = i;
                    break;
                }
                ')' => depth -= 1,
                ' ' => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let target = after[..end].trim_matches(['<', '>']);
        if !target.is_empty() {
            out.push(target.to_owned());
        }
        rest = &after[end..];
    }
    out
}

/// The ids of the headings of a markdown file.
pub fn heading_ids(path: &Path) -> BTreeSet<String> {
    let document = read(path);
    let mut ids = anchors(&document);
    ids.retain(|id| {
        // Only headings: not the ids of HTML tags in the text.
        !document
            .prose
            .iter()
            .any(|(_, l)| l.contains(&format!("id=\"{id}\"")))
    });
    ids
}

/// The ids of a markdown file's headings (and of its `<a id>`/`<a name>` tags).
fn anchors(document: &Document) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids = BTreeSet::new();
    let mut previous = String::new();
    for (_, line) in &document.prose {
        let heading = if let Some(text) = atx_heading(line) {
            Some(text)
        } else if !previous.trim().is_empty()
            && !line.is_empty()
            && !line.trim().is_empty()
            && (line.trim_end().chars().all(|c| c == '=')
                || line.trim_end().chars().all(|c| c == '-') && !previous.contains('|'))
            && !previous.trim_start().starts_with(['-', '*', '>', '#', '|'])
        {
            Some(previous.trim().to_owned()) // a setext heading: the line above, underlined
        } else {
            None
        };
        if let Some(text) = heading {
            let id = match text.rsplit_once("{#") {
                Some((_, custom)) if custom.ends_with('}') => {
                    custom.trim_end_matches('}').to_owned()
                }
                _ => {
                    let base = heading_id(&text);
                    let n = seen.entry(base.clone()).or_insert(0);
                    *n += 1;
                    if *n == 1 {
                        base
                    } else {
                        format!("{base}-{}", *n - 1)
                    }
                }
            };
            ids.insert(id);
        }
        for tag in [" id=\"", "<a name=\""] {
            let mut rest = line.as_str();
            while let Some(at) = rest.find(tag) {
                rest = &rest[at + tag.len()..];
                if let Some((id, _)) = rest.split_once('"') {
                    ids.insert(id.to_owned());
                }
            }
        }
        previous = line.clone();
    }
    ids
}

fn atx_heading(line: &str) -> Option<String> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    let text = line.get(hashes..)?;
    if !(1..=6).contains(&hashes) || !(text.is_empty() || text.starts_with(' ')) {
        return None;
    }
    Some(text.trim().trim_end_matches('#').trim().to_owned())
}

/// The id mdBook and GitHub give a heading: its text without markup, lowercased, spaces
/// to `-`, other punctuation than `-` and `_` dropped.
pub fn heading_id(heading: &str) -> String {
    // Links keep their text; code spans and emphasis lose their marks.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.split_once("](") {
            Some((label, tail)) if !label.contains('[') => {
                text.push_str(label);
                rest = tail.split_once(')').map_or("", |(_, t)| t);
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// `base/relative` with `.` and `..` resolved, or None when it climbs out of the repository.
fn resolve(base: &Path, relative: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in base.join(relative).components() {
        match component {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// Paths that name a particular machine: never in a document. `/tmp/` is a reader's scratch
/// directory in a command (a code block or span), but in prose it is a run's leftover.
const MACHINE_PATHS: [&str; 5] = ["/work/", "/root/", "/home/", "/Users/", "/tmp/.tmp"];

#[derive(Default)]
struct Findings {
    errors: Vec<String>,
    links: usize,
    anchors: usize,
    includes: usize,
}

#[test]
fn every_link_anchor_and_include_resolves_and_no_document_names_a_machine() {
    let repo = crate::repo();
    let documents = documents();
    let mut parsed: BTreeMap<PathBuf, Document> = BTreeMap::new();
    let mut findings = Findings::default();
    for file in &documents {
        parsed.insert(file.clone(), read(&repo.join(file)));
    }
    for file in &documents {
        check(&repo, file, &parsed, &mut findings);
    }
    eprintln!(
        "links: {} documents, {} relative links, {} anchors, {} includes checked",
        documents.len(),
        findings.links,
        findings.anchors,
        findings.includes
    );
    assert!(
        documents.len() > 40 && findings.links > 20,
        "too little found to check: {documents:?}"
    );
    assert!(
        findings.errors.is_empty(),
        "{} broken links, anchors or includes:\n{}",
        findings.errors.len(),
        findings.errors.join("\n")
    );
}

fn check(repo: &Path, file: &Path, parsed: &BTreeMap<PathBuf, Document>, found: &mut Findings) {
    let document = &parsed[file];
    let dir = file.parent().unwrap_or(Path::new(""));
    let in_book = file.starts_with("docs/src");
    let mut errors = Vec::new();
    for (line, text) in &document.all {
        for machine in MACHINE_PATHS {
            if text.contains(machine) {
                errors.push(format!(
                    "{line}: names {machine}, a path of a particular machine; say it relative \
                     to the repository (or to the reader's project)"
                ));
            }
        }
        if text.contains("../shared/") || text.contains("](shared/") {
            errors.push(format!(
                "{line}: points into a shared/ folder outside the repository"
            ));
        }
        for include in includes(text).into_iter().filter(|_| in_book) {
            found.includes += 1;
            if let Err(e) = check_include(repo, dir, &include) {
                errors.push(format!("{line}: {{{{#include {include}}}}}: {e}"));
            }
        }
    }
    for (line, text) in &document.prose {
        let text = &blank_code_spans(text);
        if text.contains("/tmp/") {
            errors.push(format!(
                "{line}: names /tmp/ in prose; a scratch directory belongs in a command"
            ));
        }
        for target in link_targets(text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            found.links += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if path.is_empty() {
                Some(file.to_path_buf())
            } else {
                resolve(dir, path)
            };
            let Some(resolved) = resolved.filter(|p| repo.join(p).exists()) else {
                errors.push(format!(
                    "{line}: ({target}): no such file in the repository"
                ));
                continue;
            };
            if resolved.components().any(|c| c.as_os_str() == "shared") {
                errors.push(format!("{line}: ({target}) links into a shared/ folder"));
            }
            if in_book && !resolved.starts_with("docs/src") {
                errors.push(format!(
                    "{line}: ({target}) leaves the book, which mdBook does not render; link \
                     https://github.com/rkb-rs/rkb/blob/main/{} instead",
                    resolved.display()
                ));
            }
            if anchor.is_empty() || resolved.extension().is_none_or(|e| e != "md") {
                continue;
            }
            found.anchors += 1;
            let ids = match parsed.get(&resolved) {
                Some(target) => anchors(target),
                None => anchors(&read(&repo.join(&resolved))),
            };
            if !ids.contains(anchor) {
                errors.push(format!(
                    "{line}: ({target}): {} has no heading with the id `{anchor}`; its ids: {}",
                    resolved.display(),
                    ids.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    found.errors.extend(
        errors
            .into_iter()
            .map(|e| format!("{}:{e}", file.display())),
    );
}

/// The `path:anchor` of each `{{#include ...}}` (or `rustdoc_include`) on a line.
fn includes(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for directive in ["{{#include ", "{{#rustdoc_include "] {
        let mut rest = line;
        while let Some(at) = rest.find(directive) {
            let escaped = rest[..at].ends_with('\\');
            rest = &rest[at + directive.len()..];
            if escaped {
                continue;
            }
            if let Some((argument, _)) = rest.split_once("}}") {
                out.push(argument.trim().to_owned());
            }
        }
    }
    out
}

/// The file exists (inside the repository) and, when an anchor is named, holds its
/// `ANCHOR: name` and `ANCHOR_END: name` lines. Line ranges (`file:3:10`) need the file only.
fn check_include(repo: &Path, dir: &Path, include: &str) -> Result<(), String> {
    let (path, anchor) = include.split_once(':').unwrap_or((include, ""));
    let resolved = resolve(dir, path).ok_or("leaves the repository")?;
    let text = std::fs::read_to_string(repo.join(&resolved))
        .map_err(|e| format!("{}: {e}", resolved.display()))?;
    let is_range = anchor
        .split(':')
        .all(|n| n.is_empty() || n.parse::<usize>().is_ok());
    if anchor.is_empty() || is_range {
        return Ok(());
    }
    let marked = |mark: &str| {
        text.lines().any(|l| {
            l.split_once(mark)
                .is_some_and(|(_, name)| name.trim().trim_end_matches("-->").trim() == anchor)
        })
    };
    if !marked("ANCHOR:") || !marked("ANCHOR_END:") {
        return Err(format!(
            "{} has no `ANCHOR: {anchor}` ... `ANCHOR_END: {anchor}` lines",
            resolved.display()
        ));
    }
    Ok(())
}

#[test]
fn heading_ids_are_those_mdbook_and_github_make() {
    assert_eq!(
        heading_id("Set-up on a fresh machine"),
        "set-up-on-a-fresh-machine"
    );
    assert_eq!(
        heading_id("`#[rkb]` schema attributes"),
        "rkb-schema-attributes"
    );
    assert_eq!(
        heading_id("Standalone projects (rkb's crates by version)"),
        "standalone-projects-rkbs-crates-by-version"
    );
    assert_eq!(
        heading_id("The [CLI](cli.md) and `make_test`"),
        "the-cli-and-make_test"
    );
    let document =
        read_str("# A\n\n## A\n\nText\n----\n\n```\n# not a heading\n```\n## A {#custom}\n");
    let ids = anchors(&document);
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        ["a", "a-1", "custom", "text"]
    );
}

#[test]
fn links_are_found_outside_code_only() {
    let document = read_str(
        "See [the CLI](reference/cli.md#rkb-init) and ![x](img.png \"title\").\n\
         `[not](a-link.md)` and\n```md\n[nor](this.md)\n```\n[def]: ../README.md\n",
    );
    let targets: Vec<String> = document
        .prose
        .iter()
        .flat_map(|(_, l)| link_targets(&blank_code_spans(l)))
        .collect();
    assert_eq!(
        targets,
        ["reference/cli.md#rkb-init", "img.png", "../README.md"]
    );
    assert_eq!(
        includes("{{#include ../../examples/a/src/lib.rs:reconcile}}"),
        ["../../examples/a/src/lib.rs:reconcile"]
    );
}

fn read_str(text: &str) -> Document {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    read(file.path())
}

/// The checks on a small repository with one mistake of each kind.
#[test]
fn broken_links_anchors_includes_and_machine_paths_are_reported() {
    let repo = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = repo.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "README.md",
        "# Top\n\n## Set-up\n\n[ok](#set-up) [ok](docs/src/a.md#a-page)\n",
    );
    write(
        "lib.rs",
        "// ANCHOR: main\nfn main() {}\n// ANCHOR_END: main\n",
    );
    write(
        "docs/src/a.md",
        "# A page\n\n[gone](missing.md) [anchor](../../README.md#setup)\n\
         [out of the book](../../README.md) [shared](../../shared/review.md)\n\
         Built in /work/rkb, see `/tmp/x` (fine) but not /tmp/y.\n\n\
         ```rust\n{{#include ../../lib.rs:main}}\n{{#include ../../lib.rs:other}}\n\
         {{#include ../../nope.rs}}\n```\n",
    );
    let mut parsed = BTreeMap::new();
    for file in ["README.md", "docs/src/a.md"] {
        parsed.insert(PathBuf::from(file), read(&repo.path().join(file)));
    }
    let mut found = Findings::default();
    for file in ["README.md", "docs/src/a.md"] {
        check(repo.path(), Path::new(file), &parsed, &mut found);
    }
    let errors = found.errors.join("\n");
    let expected = [
        "docs/src/a.md:3: (missing.md): no such file",
        "docs/src/a.md:3: (../../README.md#setup) leaves the book",
        "docs/src/a.md:3: (../../README.md#setup): README.md has no heading with the id `setup`",
        "docs/src/a.md:4: (../../README.md) leaves the book",
        "docs/src/a.md:4: (../../shared/review.md): no such file",
        "docs/src/a.md:5: names /work/",
        "docs/src/a.md:5: names /tmp/ in prose",
        "docs/src/a.md:9: {{#include ../../lib.rs:other}}: lib.rs has no `ANCHOR: other`",
        "docs/src/a.md:10: {{#include ../../nope.rs}}: nope.rs: ",
        "docs/src/a.md:4: points into a shared/ folder",
    ];
    for line in expected {
        assert!(errors.contains(line), "`{line}` not in:\n{errors}");
    }
    assert_eq!(found.errors.len(), expected.len(), "{errors}");
    assert_eq!((found.links, found.anchors, found.includes), (6, 3, 3));
}
