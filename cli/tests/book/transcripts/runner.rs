//! Reads the `console` blocks of a markdown page and runs them: the book's transcripts
//! (`transcripts.rs`) and the README's quick start (`fresh_project.rs`, which includes this
//! file by path).
//!
//! A block holds `$ command` lines, each followed by its output. A command line ending in
//! `\` continues on the next line. The commands of a page run in order, each in `bash -c`,
//! stdout and stderr together as a terminal shows them; a `cd` carries over to the next
//! command (nothing else does: each command is its own shell). A command must succeed;
//! `$ ! command` shows one that must fail. In the expected output, `[..]` matches any text
//! within a line, and a line `...` any number of lines.
#![allow(dead_code)] // each test binary that includes this file uses part of it

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One `console` block: where it starts and its commands.
#[derive(Debug)]
pub struct Block {
    /// The 1-based line of the opening fence.
    pub line: usize,
    pub steps: Vec<Step>,
}

/// A command and the output the page shows for it.
#[derive(Debug)]
pub struct Step {
    /// The 1-based line of the `$ ` line.
    pub line: usize,
    /// The command without its `$ `, continuation lines kept (bash reads `\`+newline).
    pub command: String,
    pub expected: Vec<String>,
}

impl Step {
    /// Whether the command builds or tests a project (runs `cargo` or `make`): minutes,
    /// not seconds, so it is not run by the quick tests.
    pub fn builds(&self) -> bool {
        self.command
            .split(|c: char| c.is_whitespace() || ";&|()".contains(c))
            .any(|word| word == "cargo" || word == "make")
    }
}

/// The `console` blocks of a markdown page, in order. A fence nested in a longer one (a
/// markdown example of a transcript) is not a block of the page.
pub fn console_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let Some((fence, info)) = fence_open(line) else {
            continue;
        };
        let mut body = Vec::new();
        for (body_index, body_line) in lines.by_ref() {
            if is_fence_close(body_line, &fence) {
                break;
            }
            body.push((body_index + 1, body_line));
        }
        let language = info.split([',', ' ', '{']).next().unwrap_or_default();
        if language == "console" {
            blocks.push(Block {
                line: index + 1,
                steps: steps(&body),
            });
        }
    }
    blocks
}

/// The fence (its backticks or tildes) and info string of a line that opens a code block.
pub fn fence_open(line: &str) -> Option<(String, &str)> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let mark = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let fence: String = trimmed.chars().take_while(|c| *c == mark).collect();
    let info = trimmed[fence.len()..].trim();
    // A backtick fence's info string holds no backtick (CommonMark): ```a``` is code inline.
    (fence.len() >= 3 && !(mark == '`' && info.contains('`'))).then_some((fence, info))
}

/// Whether `line` closes a code block opened by `fence`.
pub fn is_fence_close(line: &str, fence: &str) -> bool {
    let trimmed = line.trim();
    let mark = fence.chars().next().unwrap_or('`');
    trimmed.len() >= fence.len() && trimmed.chars().all(|c| c == mark)
}

fn steps(body: &[(usize, &str)]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut continued = false;
    for &(line, text) in body {
        if continued {
            let step = steps.last_mut().unwrap();
            step.command.push('\n');
            step.command.push_str(text);
            continued = text.ends_with('\\');
        } else if let Some(command) = text.strip_prefix("$ ") {
            steps.push(Step {
                line,
                command: command.to_owned(),
                expected: Vec::new(),
            });
            continued = command.ends_with('\\');
        } else if let Some(step) = steps.last_mut() {
            step.expected.push(text.to_owned());
        } else if !text.trim().is_empty() {
            // Output before any command: kept as a step nobody can satisfy, so that the
            // page's author hears of it.
            steps.push(Step {
                line,
                command: String::new(),
                expected: vec![text.to_owned()],
            });
        }
    }
    steps
}

/// Whether `actual` output matches the `expected` lines: `[..]` matches any text within a
/// line, a line `...` any number of lines. Trailing blanks of lines and trailing empty
/// lines are not compared (markdown does not keep them).
pub fn matches(expected: &[String], actual: &str) -> bool {
    let expected: Vec<&str> = trim_lines(expected.iter().map(String::as_str));
    let actual: Vec<&str> = trim_lines(actual.lines());
    // reachable[j]: the expected lines so far can match the first j actual lines.
    let mut reachable = vec![false; actual.len() + 1];
    reachable[0] = true;
    for pattern in expected {
        let mut next = vec![false; actual.len() + 1];
        if pattern == "..." {
            let mut any = false;
            for j in 0..=actual.len() {
                any |= reachable[j];
                next[j] = any;
            }
        } else {
            for j in 0..actual.len() {
                next[j + 1] = reachable[j] && line_matches(pattern, actual[j]);
            }
        }
        reachable = next;
    }
    reachable[actual.len()]
}

fn trim_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut lines: Vec<&str> = lines.map(str::trim_end).collect();
    while lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// Whether one line matches a pattern whose `[..]` match any text.
pub fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The projects that the fresh-project test and the book's transcripts build share one
/// target directory, `target/fresh-project` (.ci/run runs the fresh project first), with
/// the same settings, so each dependency builds once for all of them: this machine's target
/// named explicitly, so that `+crt-static` (the fresh project's image is its statically
/// linked test build) reaches the projects' crates and not the proc macros the build runs.
pub fn fresh_project_build_env() -> [(&'static str, OsString); 3] {
    [
        ("CARGO_TARGET_DIR", fresh_project_target_dir().into()),
        ("CARGO_BUILD_TARGET", rkb::oci::host_target().into()),
        ("RUSTFLAGS", "-C target-feature=+crt-static".into()),
    ]
}

/// The target directory of [`fresh_project_build_env`].
pub fn fresh_project_target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fresh-project")
}

/// A fresh directory the commands of one page run in, with this checkout's `rkb` first on
/// PATH. Projects that `rkb init` makes there take rkb's crates from `RKB_PATH`.
pub struct Session {
    _root: tempfile::TempDir,
    cwd: PathBuf,
    cwd_file: PathBuf,
    env: Vec<(String, OsString)>,
}

impl Session {
    /// A session in an empty directory named `work`, whose projects take rkb's crates
    /// from `rkb_path` (this checkout, or its unpacked packages).
    pub fn new(rkb_path: &Path) -> Self {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("work");
        std::fs::create_dir(&cwd).unwrap();
        let bin = Path::new(env!("CARGO_BIN_EXE_rkb")).parent().unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path)),
        )
        .unwrap();
        Session {
            cwd_file: root.path().join("cwd"),
            cwd,
            _root: root,
            env: vec![
                ("PATH".into(), path),
                ("RKB_PATH".into(), rkb_path.into()),
                ("NO_COLOR".into(), "1".into()),
                ("CARGO_TERM_COLOR".into(), "never".into()),
            ],
        }
    }

    /// Sets an environment variable for the commands run from now on.
    pub fn env(&mut self, name: &str, value: impl Into<OsString>) -> &mut Self {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.into(), value.into()));
        self
    }

    /// Sets each of `vars` as [`Session::env`] does.
    pub fn envs<V: Into<OsString>>(
        &mut self,
        vars: impl IntoIterator<Item = (&'static str, V)>,
    ) -> &mut Self {
        for (name, value) in vars {
            self.env(name, value);
        }
        self
    }

    /// The directory the next command runs in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Runs a block's commands in order; the first that fails or whose output differs
    /// from the page's is the error, naming `page` and its line.
    pub fn run_block(&mut self, page: &str, block: &Block) -> Result<(), String> {
        if block.steps.is_empty() {
            return Err(format!(
                "{page}:{}: a `console` block without a `$ ` command; a block that only shows \
                 output is a `text` block",
                block.line
            ));
        }
        for step in &block.steps {
            self.run_step(page, step)?;
        }
        Ok(())
    }

    fn run_step(&mut self, page: &str, step: &Step) -> Result<(), String> {
        if step.command.is_empty() {
            return Err(format!(
                "{page}:{}: output before the block's first `$ ` command",
                step.line
            ));
        }
        // The command's own shell; its last directory is kept for the next command.
        let script = format!(
            "exec 2>&1\n{}\nstatus=$?\npwd >\"$RKB_TRANSCRIPT_CWD\"\nexit $status\n",
            step.command
        );
        let output = Command::new("bash")
            .args(["--noprofile", "--norc", "-c", &script])
            .current_dir(&self.cwd)
            // cargo test sets CARGO to its own path, which a user's shell does not have
            // (a generated Makefile's `CARGO ?= cargo` would print that path).
            .env_remove("CARGO")
            .envs(self.env.iter().map(|(n, v)| (n, v)))
            .env("RKB_TRANSCRIPT_CWD", &self.cwd_file)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run bash: {e}"))?;
        let actual = String::from_utf8_lossy(&output.stdout);
        if let Ok(cwd) = std::fs::read_to_string(&self.cwd_file) {
            self.cwd = PathBuf::from(cwd.trim_end_matches('\n'));
        }
        let _ = std::fs::remove_file(&self.cwd_file);
        if !output.status.success() {
            return Err(format!(
                "{page}:{}: `{}` failed ({}); a transcript shows commands that succeed, \
                 `$ ! command` one that must fail. Its output:\n{actual}",
                step.line, step.command, output.status
            ));
        }
        if !matches(&step.expected, &actual) {
            return Err(format!(
                "{page}:{}: the output of `{}` is not what the page shows \
                 (`[..]` matches any text within a line, a line `...` any lines).\n\
                 The page shows:\n{}\nThe command printed:\n{actual}",
                step.line,
                step.command,
                step.expected.join("\n"),
            ));
        }
        Ok(())
    }
}
