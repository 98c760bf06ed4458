//! "A file, or `None`": the one read of a file that may be absent, for the writer, the
//! journal, helm and the commands; and the list of a project's Rust files, which the
//! commands that rename or switch code in them read.

use std::io::ErrorKind::{NotADirectory, NotFound};
use std::path::Path;

use anyhow::Context as _;

/// The text of `path`, or `None` when there is no such file (nor can there be one: a path
/// under a regular file).
pub fn read_optional(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if matches!(e.kind(), NotFound | NotADirectory) => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Project directories whose Rust code may name a controller module.
const RUST_DIRS: &[&str] = &["src", "tests", "benches", "examples"];

/// The project's Rust files, relative to `root`, in a stable order. Symbolic links are
/// left alone (the writer refuses them anyway).
pub fn rust_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = RUST_DIRS.iter().map(|d| root.join(d)).collect();
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
        };
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("listed under the root");
                files.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    Ok(files)
}
