//! "A file, or `None`": the one read of a file that may be absent, for the writer, the
//! journal, helm and the commands.

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
