//! Every `console` block of the book (docs/src/) and of README.md runs, and prints what the
//! page shows (the rules are in `runner.rs` and docs/README.md). A page's blocks run in
//! order in one fresh directory, with this checkout's `rkb` first on PATH and projects
//! taking rkb's crates from this checkout.
//!
//! A page whose commands build or test a project (`cargo`, `make`) takes minutes: it runs
//! in `transcripts_that_build_run`, which `.ci/run` runs with `--ignored`. README.md's
//! first `console` block is its quick start, which `fresh_project.rs` runs against rkb's
//! packaged crates, before its own steps.

#[path = "transcripts/runner.rs"]
pub mod runner;

use std::path::{Path, PathBuf};

use runner::{Block, Session, console_blocks, line_matches, matches};

/// The pages whose transcripts run: README.md and the book's pages, relative to the repo.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_owned()];
    pages.extend(crate::book_pages());
    pages
}

/// A page's blocks that the book's tests run: all of them, but README.md's first, which
/// `fresh_project.rs` runs.
fn blocks_of(page: &str) -> Vec<Block> {
    let markdown = std::fs::read_to_string(crate::repo().join(page)).unwrap();
    let mut blocks = console_blocks(&markdown);
    if page == "README.md" && !blocks.is_empty() {
        blocks.remove(0);
    }
    blocks
}

fn builds(blocks: &[Block]) -> bool {
    blocks.iter().flat_map(|b| &b.steps).any(|s| s.builds())
}

/// Runs the blocks of one page in a fresh session; the number of commands run.
fn run_page(page: &str, blocks: &[Block], session: &mut Session) -> Result<usize, String> {
    for block in blocks {
        session.run_block(page, block)?;
    }
    Ok(blocks.iter().map(|b| b.steps.len()).sum())
}

fn checkout() -> PathBuf {
    std::fs::canonicalize(crate::repo()).unwrap()
}

/// Runs the pages (those that build or the others) and fails with every page's error.
fn run_pages(that_build: bool) {
    let (mut pages_run, mut commands, mut errors, mut other) = (0, 0, Vec::new(), Vec::new());
    for page in pages() {
        let blocks = blocks_of(&page);
        if blocks.is_empty() {
            continue;
        }
        if builds(&blocks) != that_build {
            other.push(page);
            continue;
        }
        let mut session = Session::new(&checkout());
        if that_build {
            session.envs(runner::fresh_project_build_env());
        }
        match run_page(&page, &blocks, &mut session) {
            Ok(n) => {
                pages_run += 1;
                commands += n;
            }
            Err(e) => errors.push(e),
        }
    }
    eprintln!(
        "transcripts: {commands} commands on {pages_run} pages ran{}; left to the {} test: {other:?}",
        if that_build { " (with builds)" } else { "" },
        if that_build { "quick" } else { "ignored" },
    );
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

#[test]
fn the_transcripts_of_the_book_and_the_readme_run() {
    run_pages(false);
}

#[test]
#[ignore = "builds and tests the projects the pages make; run by .ci/run"]
fn transcripts_that_build_run() {
    run_pages(true);
}

fn fixture(name: &str) -> (String, Vec<Block>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/transcripts")
        .join(name);
    let markdown = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    (name.to_owned(), console_blocks(&markdown))
}

/// The runner on pages written for it: init and create api with their output, a command
/// continued over two lines, a `cd` that carries over to the next block, a command that
/// must fail.
#[test]
fn the_runner_runs_transcripts_in_order_in_one_directory() {
    for name in ["init-and-create-api.md", "errors.md"] {
        let (page, blocks) = fixture(name);
        assert!(blocks.len() >= 2, "{page}: {blocks:?}");
        assert!(!builds(&blocks), "{page}");
        let mut session = Session::new(&checkout());
        let commands = run_page(&page, &blocks, &mut session).unwrap_or_else(|e| panic!("{e}"));
        assert!(commands >= 3, "{page}: {commands}");
    }
}

/// The same runner refuses a page whose output differs, or whose command fails, naming
/// the page's line.
#[test]
fn the_runner_refuses_wrong_output_and_failing_commands() {
    let (page, blocks) = fixture("broken/wrong-output.md");
    let error = run_page(&page, &blocks, &mut Session::new(&checkout())).unwrap_err();
    assert!(
        error.starts_with("broken/wrong-output.md:7: the output of `rkb version`"),
        "{error}"
    );
    let (page, blocks) = fixture("broken/failing-command.md");
    let error = run_page(&page, &blocks, &mut Session::new(&checkout())).unwrap_err();
    assert!(
        error.starts_with("broken/failing-command.md:5: `rkb create api"),
        "{error}"
    );
    assert!(error.contains("failed (exit status: "), "{error}");
}

#[test]
fn blocks_are_the_console_fences_with_their_commands_and_output() {
    let page = "text\n\n```console\n$ echo a \\\n  b\na b\n$ true\n```\n\n```sh\n$ not run\n```\n\
                ````markdown\n```console\n$ nested, not run\n```\n````\n~~~console\n$ ls\n...\n~~~\n";
    let blocks = console_blocks(page);
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    assert_eq!(blocks[0].line, 3);
    assert_eq!(blocks[0].steps[0].command, "echo a \\\n  b");
    assert_eq!(blocks[0].steps[0].expected, ["a b"]);
    assert_eq!(blocks[0].steps[1].line, 7);
    assert_eq!(blocks[0].steps[1].command, "true");
    assert!(blocks[0].steps[1].expected.is_empty());
    assert_eq!(blocks[1].steps[0].expected, ["..."]);
    assert!(console_blocks("```console`\n$ not a block\n```\n").is_empty());
    let build = console_blocks("```console\n$ cd x && make test\n```\n");
    assert!(build[0].steps[0].builds());
    assert!(!console_blocks("```console\n$ rkb make-believe\n```\n")[0].steps[0].builds());
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

#[test]
fn the_matcher_takes_wildcards_within_lines_and_over_lines() {
    assert!(line_matches("rkb [..]", "rkb 0.1.0"));
    assert!(line_matches(
        "[..] create [..]/memcached.rs",
        "  create src/controller/memcached.rs"
    ));
    assert!(line_matches("a[..]b[..]c", "abc"));
    assert!(line_matches("exact", "exact"));
    assert!(matches(&lines("one\n...\nfour"), "one\ntwo\nthree\nfour\n"));
    assert!(matches(&lines("one\n...\ntwo"), "one\ntwo"));
    assert!(matches(&lines("..."), ""));
    assert!(matches(&lines("...\nlast [..]"), "a\nb\nlast line"));
    assert!(matches(&lines("trailing  \n\n"), "trailing\n"));
    assert!(matches(&[], ""));
}

#[test]
fn the_matcher_refuses_what_differs() {
    assert!(!line_matches("rkb [..]", "rk 0.1.0"));
    assert!(!line_matches("[..]b", "abc"));
    assert!(!line_matches("a[..]b[..]c", "acb"));
    assert!(!line_matches("exact", "exactly"));
    // `[..]` stays within its line; `...` is the only way to skip lines.
    assert!(!matches(&lines("one[..]"), "one\ntwo"));
    assert!(!matches(&lines("one\nthree"), "one\ntwo\nthree"));
    assert!(!matches(&lines("one\n...\nfour"), "one\ntwo\nthree"));
    assert!(!matches(&lines("one\n..."), "two"));
    // Output where the page shows none, and none where it shows some.
    assert!(!matches(&[], "surprise\n"));
    assert!(!matches(&lines("expected"), ""));
}
