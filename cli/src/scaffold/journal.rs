//! The commit journal: what a commit is about to do, written to `.rkb-journal` before it
//! touches any file, so that a command interrupted at any instant (Ctrl-C, SIGKILL, a
//! power cut) leaves a project the next command can bring back to a whole state: as it
//! was before the interrupted command, or, once every file was in place, as it would be
//! after it. No half-written project survives the next `rkb` run.
//!
//! Every file is identified by the SHA-256 of its content, so recovery touches only what
//! the interrupted commit wrote: an original is put back only from a backup that holds
//! exactly the original, and a new file is removed only if it holds exactly what the
//! commit wrote.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::read::read_optional;

/// The journal's name in the project root.
pub const FILE: &str = ".rkb-journal";

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Journal {
    /// Every file is in place; only backups and the journal remain to be removed.
    pub done: bool,
    /// Directories the commit creates, parents first, relative to the root (`.` for the
    /// root itself).
    pub dirs: Vec<PathBuf>,
    pub files: Vec<FileEntry>,
}

/// One file of the commit, paths relative to the root.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileEntry {
    pub target: PathBuf,
    /// Where the new content is staged; `None` for a removal.
    pub staged: Option<PathBuf>,
    /// Where the original is kept while the commit runs; `None` for a new file.
    pub backup: Option<PathBuf>,
    /// SHA-256 of the original and of the new content.
    pub original: Option<String>,
    pub new: Option<String>,
}

pub fn digest(content: &str) -> String {
    format!("{:x}", Sha256::digest(content.as_bytes()))
}

fn digest_of(path: &Path) -> Option<String> {
    fs::read(path)
        .ok()
        .map(|bytes| format!("{:x}", Sha256::digest(bytes)))
}

impl Journal {
    /// Writes the journal whole (a staged copy renamed over it) and makes it durable
    /// before the commit goes on.
    pub fn save(&self, root: &Path) -> io::Result<()> {
        let text = serde_json::to_vec_pretty(self).expect("the journal serializes");
        let staged = root.join(format!("{FILE}.new"));
        let mut file = fs::File::create(&staged)?;
        file.write_all(&text)?;
        file.sync_all()?;
        fs::rename(&staged, root.join(FILE))?;
        // The rename itself must reach the disk before any file is replaced.
        fs::File::open(root)?.sync_all()
    }

    pub fn remove(root: &Path) -> io::Result<()> {
        match fs::remove_file(root.join(FILE)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// Brings back to a whole state a project whose last command was interrupted, and says
/// what it did; `None` when there was nothing to recover.
pub fn recover(root: &Path) -> anyhow::Result<Option<String>> {
    let path = root.join(FILE);
    // A journal copy that never got renamed into place is never authoritative: either
    // nothing was touched yet, or the journal it was to replace still says what happened.
    let _ = fs::remove_file(root.join(format!("{FILE}.new")));
    let Some(text) = read_optional(&path)? else {
        return Ok(None);
    };
    let journal: Journal = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not an rkb journal rkb can read; it records an interrupted rkb command. \
             Check the project with `git status`, then delete the file",
            path.display()
        )
    })?;
    let undone = if journal.done {
        finish(root, &journal);
        false
    } else {
        roll_back(root, &journal)?;
        true
    };
    Journal::remove(root).with_context(|| format!("cannot remove {}", path.display()))?;
    if journal.dirs.iter().any(|d| d == Path::new(".")) {
        // The root was made for the commit (`rkb init --dir new`); now empty, it goes too.
        let _ = fs::remove_dir(root);
    }
    let files: Vec<String> = journal
        .files
        .iter()
        .map(|f| f.target.display().to_string())
        .collect();
    Ok(Some(if undone {
        format!(
            "an earlier rkb command was interrupted before it finished; its changes to {} were \
             undone, so the project is as it was before it. Run that command again.",
            files.join(", ")
        )
    } else {
        format!(
            "an earlier rkb command was interrupted after writing all its files ({}); its \
             leftover backups were removed.",
            files.join(", ")
        )
    }))
}

/// Every file was in place: only the staged copies and backups go.
fn finish(root: &Path, journal: &Journal) {
    for entry in &journal.files {
        for leftover in [&entry.staged, &entry.backup].into_iter().flatten() {
            let _ = fs::remove_file(root.join(leftover));
        }
    }
}

/// Puts every original back, removes every file the commit created, then the staged
/// copies and the directories it made (when empty).
fn roll_back(root: &Path, journal: &Journal) -> anyhow::Result<()> {
    for entry in journal.files.iter().rev() {
        let target = root.join(&entry.target);
        if let (Some(backup), Some(original)) = (&entry.backup, &entry.original) {
            let backup = root.join(backup);
            if digest_of(&backup).as_ref() == Some(original) {
                fs::rename(&backup, &target).with_context(|| {
                    format!(
                        "cannot restore {} from {}; move it back by hand",
                        target.display(),
                        backup.display()
                    )
                })?;
            }
        }
        if entry.original.is_none() && entry.new.is_some() && digest_of(&target) == entry.new {
            fs::remove_file(&target)
                .with_context(|| format!("cannot remove {}", target.display()))?;
        }
        if let Some(staged) = &entry.staged {
            let _ = fs::remove_file(root.join(staged));
        }
    }
    for dir in journal.dirs.iter().rev().filter(|d| *d != Path::new(".")) {
        // Left alone if not empty: it holds something the commit did not write.
        let _ = fs::remove_dir(root.join(dir));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Killed while replacing the journal (the `done` save): the old journal rules, and the
    /// copy that never got renamed into place goes with the recovery.
    #[test]
    fn an_unrenamed_journal_copy_goes_with_the_recovery() {
        let root = tempfile::tempdir().unwrap();
        let journal = Journal {
            done: false,
            dirs: vec![],
            files: vec![FileEntry {
                target: "new.rs".into(),
                staged: None,
                backup: None,
                original: None,
                new: Some(digest("fn main() {}\n")),
            }],
        };
        journal.save(root.path()).unwrap();
        fs::write(root.path().join("new.rs"), "fn main() {}\n").unwrap();
        fs::write(root.path().join(format!("{FILE}.new")), "{\"done\": tr").unwrap();

        let said = recover(root.path()).unwrap().unwrap();
        assert!(said.contains("undone"), "{said}");
        let left: Vec<_> = fs::read_dir(root.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");

        fs::write(root.path().join(format!("{FILE}.new")), "{").unwrap();
        assert!(recover(root.path()).unwrap().is_none());
        assert!(fs::read_dir(root.path()).unwrap().next().is_none());
    }
}
