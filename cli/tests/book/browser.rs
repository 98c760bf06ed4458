//! The book as a reader sees it: built with mdbook and opened in headless Chromium (Debian's
//! `chromium`), the introduction, a tutorial and the attribute reference load without
//! console errors and show every heading of their source, and the search finds what the
//! attribute reference documents.
//!
//! mdbook and chromium are installed by `.ci/install-tools`. Where one is missing, the test
//! fails when `CI` is set, and is skipped with the reason printed otherwise.
//! `RKB_BOOK_SCREENSHOTS=<dir>` also saves a screenshot of each page there.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pages opened (the book's front page is its first chapter), and their sources under
/// docs/src.
const PAGES: [(&str, &str); 3] = [
    ("index.html", "introduction.md"),
    ("tutorials/memcached.html", "tutorials/memcached.md"),
    ("reference/attributes.html", "reference/attributes.md"),
];

/// What the search must find, on the page that documents it.
const SEARCHED: (&str, &str) = ("printcolumn", "reference/attributes.md");

/// `program` on PATH, or in cargo's bin directory (where `cargo install` puts mdbook).
fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .map(|home| home.join("bin"));
    std::env::split_paths(&path)
        .chain(cargo_bin)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// A file of the built book as Chromium opens it: its DOM after the scripts ran (search
/// included), and the console messages it logged.
struct Rendered {
    dom: String,
    console: Vec<String>,
}

fn open(chromium: &Path, profile: &Path, url: &str, screenshot: Option<PathBuf>) -> Rendered {
    let mut command = Command::new(chromium);
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        "--window-size=1280,900",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    match screenshot {
        Some(file) => command.arg(format!("--screenshot={}", file.display())),
        None => command.arg("--dump-dom"),
    };
    let output = command.arg(url).output().unwrap();
    assert!(
        output.status.success(),
        "chromium could not open {url}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let console = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Rendered {
        dom: String::from_utf8_lossy(&output.stdout).into_owned(),
        console,
    }
}

#[test]
fn the_book_loads_in_chromium_with_its_headings_and_search() {
    let (Some(mdbook), Some(chromium)) = (find("mdbook"), find("chromium")) else {
        let reason =
            "mdbook or chromium is not installed; install them with `bash .ci/install-tools`";
        assert!(std::env::var_os("CI").is_none(), "CI is set and {reason}");
        eprintln!("SKIPPED the_book_loads_in_chromium_with_its_headings_and_search: {reason}");
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let book = scratch.path().join("book");
    let built = Command::new(&mdbook)
        .arg("build")
        .arg(crate::repo().join("docs"))
        .arg("--dest-dir")
        .arg(&book)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "mdbook build docs failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let profile = scratch.path().join("chromium-profile");
    let screenshots = std::env::var_os("RKB_BOOK_SCREENSHOTS").map(PathBuf::from);
    let url = |page: &str| format!("file://{}", book.join(page).display());

    for (page, source) in PAGES {
        let rendered = open(&chromium, &profile, &url(page), None);
        assert!(
            rendered.console.is_empty(),
            "{page}: the browser's console logged:\n{}",
            rendered.console.join("\n")
        );
        let headings = super::links::heading_ids(&crate::repo().join("docs/src").join(source));
        assert!(!headings.is_empty(), "{page} has no heading");
        for id in &headings {
            assert!(
                rendered.dom.contains(&format!("id=\"{id}\"")),
                "{page}: the rendered page has no heading `{id}`:\n{}",
                rendered.dom
            );
        }
        if let Some(dir) = &screenshots {
            let file = dir.join(page.replace('/', "-") + ".png");
            open(&chromium, &profile, &url(page), Some(file));
        }
    }

    // mdBook runs the search of `?search=` when the page loads; a hit links to the page.
    let (term, page) = SEARCHED;
    let text = std::fs::read_to_string(crate::repo().join("docs/src").join(page)).unwrap();
    // Until the attribute reference documents `printcolumn`, a word it has today stands in.
    let stand_in = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .find(|word| word.len() >= 6)
        .unwrap_or_else(|| panic!("docs/src/{page} has no word to search"));
    let term = if text.contains(term) {
        term
    } else {
        eprintln!("NOTE: docs/src/{page} does not mention `{term}` yet; searching `{stand_in}`");
        stand_in
    };
    let search = format!("{}?search={term}", url("index.html"));
    let rendered = open(&chromium, &profile, &search, None);
    let results = rendered
        .dom
        .split_once("id=\"mdbook-searchresults\"")
        .map(|(_, rest)| rest.split_once("</ul>").map_or(rest, |(list, _)| list))
        .unwrap_or_else(|| panic!("no search results list in:\n{}", rendered.dom));
    let link = format!("href=\"{}", page.replace(".md", ".html"));
    assert!(
        results.contains(&link),
        "searching `{term}` does not find {page}; the results:\n{results}"
    );
    assert!(
        rendered.console.is_empty(),
        "{}",
        rendered.console.join("\n")
    );
    if let Some(dir) = &screenshots {
        open(&chromium, &profile, &search, Some(dir.join("search.png")));
    }
}
