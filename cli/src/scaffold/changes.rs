//! An in-memory change set over a project directory, applied all at once.
//!
//! Every command first plans all its writes here (new files, regenerated files,
//! insertions at `+rkb:scaffold:` markers), validating as it goes. Only when the
//! whole plan is valid does [`Changes::commit`] stage each file next to its target
//! and rename it into place; if anything fails, what was already moved is restored,
//! so the user's directory is either fully updated or byte-for-byte unchanged.
//!
//! The writer trusts nothing it did not create: the project is locked for the run (a
//! second `rkb` waits its turn instead of losing an update to `PROJECT`), staging and
//! backup files get fresh random names and are opened with `create_new` (a link planted
//! at a predictable name cannot redirect a write), symbolic links inside the project are
//! refused rather than followed out of it, and each file is checked to still hold what
//! was read before it is replaced (an editor's save is never clobbered).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};

use super::journal::{self, FileEntry, Journal};
use super::plan::Marker;

#[derive(Debug)]
struct Planned {
    /// Content on disk when planning started; `None` for a new file.
    original: Option<String>,
    /// `None`: the file is removed.
    content: Option<String>,
}

/// What [`Changes::commit`] did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Updated,
    Removed,
}

#[derive(Debug)]
pub struct Changes {
    root: PathBuf,
    files: BTreeMap<PathBuf, Planned>,
    /// Held from the first read to the end of the commit; `None` while the root does not
    /// exist yet (`rkb init --dir new`), where no-clobber creation guards instead.
    _lock: Option<File>,
    /// What was done to finish an interrupted earlier command, if anything.
    recovered: Option<String>,
}

impl Changes {
    /// Starts a change set over `root`, locking the project against other rkb runs, and
    /// first brings back to a whole state a project whose last command was interrupted.
    pub fn open(root: impl Into<PathBuf>) -> anyhow::Result<Self> {
        let root = root.into();
        check_dir_name(&root)?;
        let lock = lock_project(&root)?;
        let recovered = match &lock {
            Some(_) => journal::recover(&root)?,
            None => None,
        };
        Ok(Changes {
            _lock: lock,
            root,
            files: BTreeMap::new(),
            recovered,
        })
    }

    /// What [`open`](Self::open) did to finish an interrupted earlier command.
    pub fn recovered(&self) -> Option<&str> {
        self.recovered.as_deref()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The planned content of `rel`, or what is on disk.
    pub fn read(&self, rel: &str) -> anyhow::Result<Option<String>> {
        if let Some(planned) = self.files.get(Path::new(rel)) {
            return Ok(planned.content.clone());
        }
        read_in_project(&self.root, Path::new(rel))
    }

    /// What `rel` held on disk before this change set planned anything for it.
    pub fn original(&self, rel: &str) -> anyhow::Result<Option<String>> {
        match self.files.get(Path::new(rel)) {
            Some(planned) => Ok(planned.original.clone()),
            None => read_in_project(&self.root, Path::new(rel)),
        }
    }

    pub fn exists(&self, rel: &str) -> anyhow::Result<bool> {
        Ok(self.read(rel)?.is_some())
    }

    fn set(&mut self, rel: &str, content: Option<String>) -> anyhow::Result<()> {
        match self.files.get_mut(Path::new(rel)) {
            Some(planned) => planned.content = content,
            None => {
                check_file_name(&self.root, rel)?;
                let original = read_in_project(&self.root, Path::new(rel))?;
                self.files.insert(rel.into(), Planned { original, content });
            }
        }
        Ok(())
    }
    /// Plans a new file. An existing file is an error unless `overwrite` (i.e. `--force`
    /// on a file rkb owns).
    pub fn create(&mut self, rel: &str, content: String, overwrite: bool) -> anyhow::Result<()> {
        let existing = self.read(rel)?;
        if !overwrite && existing.is_some() {
            bail!(
                "{rel} already exists; rkb does not overwrite files without --force \
                 (and --force only regenerates the files rkb owns for this API)"
            );
        }
        // A file rewritten whole (PROJECT, a regenerated one) keeps CRLF line endings, as
        // an insertion does.
        let crlf = existing
            .is_some_and(|old| old.contains("\r\n") && !old.replace("\r\n", "").contains('\n'));
        let content = if crlf && !content.contains('\r') {
            content.replace('\n', "\r\n")
        } else {
            content
        };
        self.set(rel, Some(content))
    }

    /// Plans moving `from` to `to` (which must not exist), content unchanged.
    pub fn rename(&mut self, from: &str, to: &str) -> anyhow::Result<()> {
        let content = self
            .read(from)?
            .with_context(|| format!("{from} is missing, so rkb cannot move it to {to}"))?;
        if self.exists(to)? {
            bail!("cannot move {from} to {to}: {to} exists already; move or delete it first");
        }
        self.set(to, Some(content))?;
        self.set(from, None)
    }

    /// Plans a file only if it does not exist yet (a module file shared by several APIs).
    pub fn ensure(
        &mut self,
        rel: &str,
        content: impl FnOnce() -> anyhow::Result<String>,
    ) -> anyhow::Result<()> {
        if self.exists(rel)? {
            return Ok(());
        }
        self.set(rel, Some(content()?))
    }

    /// Inserts `snippet` on the lines before the `+rkb:scaffold:<marker>` line, indented like
    /// the marker. Idempotent: a snippet already in the file is not inserted again.
    pub fn insert_at_marker(
        &mut self,
        rel: &str,
        marker: Marker,
        snippet: &str,
    ) -> anyhow::Result<()> {
        self.edit_at_marker(rel, marker, |content, hidden| {
            insert_at_marker(content, marker.name(), snippet, hidden)
        })
    }

    /// Inserts the one-line `snippet` into the block of lines right above the marker,
    /// keeping the block in rustfmt's order (its `reorder_modules`/imports rules), so a
    /// project stays `cargo fmt`-clean whatever order APIs are created in.
    pub fn insert_sorted_at_marker(
        &mut self,
        rel: &str,
        marker: Marker,
        snippet: &str,
    ) -> anyhow::Result<()> {
        self.edit_at_marker(rel, marker, |content, hidden| {
            insert_sorted(content, marker.name(), snippet.trim(), hidden)
        })
    }

    /// Inserts `snippet` like [`Self::insert_at_marker`]; when the file has the snippet's
    /// first line already, replaces the lines under it with the snippet's instead, so a
    /// later run changes a value (`--force` with another image) rather than repeating it.
    pub fn upsert_at_marker(
        &mut self,
        rel: &str,
        marker: Marker,
        snippet: &str,
    ) -> anyhow::Result<()> {
        self.edit_at_marker(rel, marker, |content, hidden| {
            upsert(content, marker.name(), snippet, hidden)
        })
    }

    /// Removes the lines an insertion of `snippet` at `marker` left in `rel`, the inverse of
    /// [`Self::insert_at_marker`] and its sorted and upserting kinds. The lines are matched
    /// ignoring whitespace (and, in Rust, the trailing commas rustfmt adds when it wraps a
    /// line), nearest above the marker. Returns whether they were found; a missing file has
    /// nothing to remove.
    pub fn remove_inserted(
        &mut self,
        rel: &str,
        marker: Marker,
        snippet: &str,
    ) -> anyhow::Result<bool> {
        if !self.exists(rel)? {
            return Ok(true);
        }
        let mut found = false;
        self.edit_lf(rel, |content, hidden| {
            let rust = rel.ends_with(".rs");
            Ok(
                match remove_snippet(content, marker.name(), snippet, hidden, rust) {
                    Some(removed) => {
                        found = true;
                        removed
                    }
                    None => content.to_owned(),
                },
            )
        })?;
        Ok(found)
    }

    /// Takes back out what [`Self::upsert_at_marker`] put in with the snippet keyed `key`:
    /// the YAML list item whose first line is `key` (with the lines under it), and the
    /// list's own key line (`env:`) when no item of it is left above the marker.
    pub fn withdraw_at_marker(
        &mut self,
        rel: &str,
        marker: Marker,
        key: &str,
    ) -> anyhow::Result<()> {
        if !self.exists(rel)? {
            return Ok(());
        }
        self.edit_at_marker(rel, marker, |content, hidden| {
            withdraw(content, marker.name(), key.trim(), hidden)
        })
    }

    /// Plans the removal of `rel`, if it exists (`rkb delete`, a forced re-run).
    pub fn remove(&mut self, rel: &str) -> anyhow::Result<()> {
        if self.exists(rel)? {
            self.set(rel, None)?;
        }
        Ok(())
    }

    /// Plans `edit` of the file that holds `marker`, if it changes anything. The file keeps
    /// its line endings (the edit sees LF), and in Rust sources a marker inside a block
    /// comment or a string literal is text, not a marker (`edit` gets those lines).
    fn edit_at_marker(
        &mut self,
        rel: &str,
        marker: Marker,
        edit: impl FnOnce(&str, &[bool]) -> anyhow::Result<String>,
    ) -> anyhow::Result<()> {
        let marker = marker.name();
        if !self.exists(rel)? {
            bail!(
                "{rel} is missing; rkb inserts code there at the `+rkb:scaffold:{marker}` marker. \
                 Restore the file from a fresh `rkb init` or add the code by hand"
            );
        }
        self.edit_lf(rel, edit)
    }

    /// Plans `edit` of the existing file `rel`, if it changes anything. The edit sees LF
    /// line endings and which lines of Rust lie in a comment or literal.
    fn edit_lf(
        &mut self,
        rel: &str,
        edit: impl FnOnce(&str, &[bool]) -> anyhow::Result<String>,
    ) -> anyhow::Result<()> {
        let content = self.read(rel)?.context("a file checked above")?;
        let crlf = content.contains("\r\n");
        if crlf && content.replace("\r\n", "").contains('\n') {
            bail!(
                "cannot update {rel}: it mixes Windows (CRLF) and Unix (LF) line endings, so rkb \
                 cannot tell which to write. Convert it to one of them (e.g. `dos2unix {rel}` or \
                 your editor's line-ending setting) and run the command again"
            );
        }
        let lf = if crlf {
            content.replace("\r\n", "\n")
        } else {
            content.clone()
        };
        let hidden = if rel.ends_with(".rs") {
            rust_lines_in_literals(&lf)
        } else {
            Vec::new()
        };
        let updated = edit(&lf, &hidden).with_context(|| format!("cannot update {rel}"))?;
        let updated = if crlf {
            updated.replace('\n', "\r\n")
        } else {
            updated
        };
        if updated != content {
            self.set(rel, Some(updated))?;
        }
        Ok(())
    }

    /// Files whose content will change, relative to the root.
    pub fn pending(&self) -> impl Iterator<Item = (&Path, Written)> {
        self.files
            .iter()
            .filter_map(|(path, p)| match (&p.original, &p.content) {
                (None, Some(_)) => Some((path.as_path(), Written::Created)),
                (Some(_), None) => Some((path.as_path(), Written::Removed)),
                (Some(original), Some(content)) if original != content => {
                    Some((path.as_path(), Written::Updated))
                }
                _ => None,
            })
    }

    /// Writes every planned file, or none, even if the process is killed half way (see
    /// [`journal`]). Returns what changed, in path order.
    pub fn commit(self) -> anyhow::Result<Vec<(PathBuf, Written)>> {
        let written: Vec<(PathBuf, Written)> =
            self.pending().map(|(p, w)| (p.to_path_buf(), w)).collect();
        if written.is_empty() {
            return Ok(written);
        }
        let mut tx = Transaction::default();
        match self.apply(&written, &mut tx) {
            Ok(mut journal) => {
                // Every file is in place: from here an interruption is finished, not undone.
                journal.done = true;
                let _ = journal.save(&self.root);
                tx.discard_backups();
                let _ = Journal::remove(&self.root);
                Ok(written)
            }
            Err(error) => match tx.roll_back(&self.root) {
                Ok(()) => Err(error.context("no files were changed")),
                Err(leftovers) => Err(error.context(format!(
                    "rkb could not undo every change; restore these by hand (or run rkb again, \
                     which retries from its journal {}):\n  {}",
                    journal::FILE,
                    leftovers.join("\n  ")
                ))),
            },
        }
    }

    /// The journal of a commit of `written`: fresh names for the staged copies and the
    /// backups, the directories to create, and the digest of every content.
    fn journal(&self, written: &[(PathBuf, Written)]) -> anyhow::Result<Journal> {
        let mut journal = Journal::default();
        let relative = |path: PathBuf| path.strip_prefix(&self.root).map(Path::to_path_buf);
        for (rel, _) in written {
            refuse_links(&self.root, rel)?;
            let target = self.root.join(rel);
            let planned = &self.files[rel];
            let name =
                |tag| relative(sibling_name(&target, tag)).expect("a sibling is under the root");
            journal.files.push(FileEntry {
                target: rel.clone(),
                staged: planned.content.as_ref().map(|_| name("new")),
                backup: planned.original.as_ref().map(|_| name("old")),
                original: planned.original.as_deref().map(journal::digest),
                new: planned.content.as_deref().map(journal::digest),
            });
            let parent = target.parent().expect("a file under the root has a parent");
            for d in missing_dirs(parent) {
                // Directories above the root are not the project's to undo.
                let d = match relative(d) {
                    Ok(rel) if rel.as_os_str().is_empty() => PathBuf::from("."),
                    Ok(rel) => rel,
                    Err(_) => continue,
                };
                if !journal.dirs.contains(&d) {
                    journal.dirs.push(d);
                }
            }
        }
        Ok(journal)
    }

    fn apply(
        &self,
        written: &[(PathBuf, Written)],
        tx: &mut Transaction,
    ) -> anyhow::Result<Journal> {
        // The journal goes first, into the root (created for it if need be): from here on,
        // an interruption at any instant is undone by the next run.
        let journal = self.journal(written)?;
        tx.create_dir_all(&self.root)
            .with_context(|| format!("cannot create directory {}", self.root.display()))?;
        journal
            .save(&self.root)
            .with_context(|| format!("cannot write {}", self.root.join(journal::FILE).display()))?;
        tx.journal = true;
        // Stage: everything that can fail (directories, disk space) happens before
        // any target file is touched.
        let mut staged = Vec::new();
        for ((rel, _), entry) in written.iter().zip(&journal.files) {
            let target = self.root.join(rel);
            let planned = &self.files[rel];
            let backup = entry.backup.as_ref().map(|b| self.root.join(b));
            let Some(content) = &planned.content else {
                staged.push((rel, None, target, backup));
                continue;
            };
            let dir = target.parent().expect("a file under the root has a parent");
            tx.create_dir_all(dir)
                .with_context(|| format!("cannot create directory {}", dir.display()))?;
            let temp = self
                .root
                .join(entry.staged.as_ref().expect("content is staged"));
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
                .with_context(|| format!("cannot stage {}", target.display()))?;
            tx.temps.push(temp.clone());
            file.write_all(content.as_bytes())
                .and_then(|()| file.sync_all())
                .with_context(|| format!("cannot write {}", temp.display()))?;
            if planned.original.is_some() {
                // An updated file keeps its mode (an executable script stays executable).
                let permissions = fs::metadata(&target)
                    .with_context(|| format!("cannot read {}", target.display()))?
                    .permissions();
                fs::set_permissions(&temp, permissions)
                    .with_context(|| format!("cannot set the mode of {}", temp.display()))?;
            }
            staged.push((rel, Some(temp), target, backup));
        }
        // Swap: renames within one directory, each after checking that nobody changed
        // the file since it was read.
        for (rel, temp, target, backup) in staged {
            let original = &self.files[rel].original;
            let now = read_in_project(&self.root, rel)?;
            if now != *original {
                bail!(
                    "{} changed on disk while rkb was running (saved by an editor or another \
                     tool?); rkb does not overwrite it. Run the command again",
                    rel.display()
                );
            }
            if let Some(backup) = backup {
                // The original is kept under its fresh journal name until the commit
                // succeeds, so a roll back is a rename that restores it exactly (content
                // and mode). A rename replaces whatever is at that name, never writing
                // through it.
                fs::rename(&target, &backup)
                    .with_context(|| format!("cannot back up {}", target.display()))?;
                tx.moved.push((target.clone(), Some(backup)));
            }
            let Some(temp) = temp else {
                // A removal: moving the original to its backup was all of it.
                continue;
            };
            if original.is_some() {
                fs::rename(&temp, &target)
                    .with_context(|| format!("cannot replace {}", target.display()))?;
            } else {
                // A hard link never replaces a file that appeared in the meantime.
                match fs::hard_link(&temp, &target) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => bail!(
                        "{} appeared while rkb was running; rkb does not overwrite it. \
                         Run the command again",
                        rel.display()
                    ),
                    // A filesystem without hard links: check, then rename.
                    Err(_) if !target.exists() => fs::rename(&temp, &target)
                        .with_context(|| format!("cannot create {}", target.display()))?,
                    Err(e) => {
                        return Err(e)
                            .with_context(|| format!("cannot create {}", target.display()));
                    }
                }
                tx.moved.push((target.clone(), None));
                if temp.exists() {
                    fs::remove_file(&temp)
                        .with_context(|| format!("cannot remove {}", temp.display()))?;
                }
            }
            tx.temps.retain(|t| *t != temp);
        }
        Ok(journal)
    }
}

/// Undo log of a commit in progress.
#[derive(Debug, Default)]
struct Transaction {
    created_dirs: Vec<PathBuf>,
    /// Staging files and backup placeholders to delete.
    temps: Vec<PathBuf>,
    /// Targets already replaced or removed, with the backup of their original (`None`: a
    /// new file).
    moved: Vec<(PathBuf, Option<PathBuf>)>,
    /// The journal was written: a complete roll back removes it.
    journal: bool,
}

impl Transaction {
    fn create_dir_all(&mut self, dir: &Path) -> io::Result<()> {
        for d in missing_dirs(dir) {
            fs::create_dir(&d)?;
            self.created_dirs.push(d);
        }
        Ok(())
    }

    /// Restores originals from their backups, deletes new files and staged copies, then
    /// the directories this commit created (deepest first). Returns what it could not
    /// undo, each with where the original is kept.
    fn roll_back(self, root: &Path) -> Result<(), Vec<String>> {
        let mut leftovers = Vec::new();
        for (target, backup) in self.moved.into_iter().rev() {
            let result = match &backup {
                Some(backup) => fs::rename(backup, &target),
                None => fs::remove_file(&target),
            };
            if let Err(e) = result {
                leftovers.push(match backup {
                    Some(backup) => format!(
                        "{}: its original is kept at {} ({e})",
                        target.display(),
                        backup.display()
                    ),
                    None => format!(
                        "{}: a new file rkb could not remove ({e})",
                        target.display()
                    ),
                });
            }
        }
        for temp in self.temps {
            match fs::remove_file(&temp) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    leftovers.push(format!("{}: a staging file ({e})", temp.display()))
                }
                _ => {}
            }
        }
        if self.journal && leftovers.is_empty() {
            // Kept otherwise: the next run retries the roll back from it.
            if let Err(e) = Journal::remove(root) {
                leftovers.push(format!(
                    "{}: the journal ({e})",
                    root.join(journal::FILE).display()
                ));
            }
        }
        for dir in self.created_dirs.into_iter().rev() {
            // Left alone if not empty: then it holds a leftover listed above.
            let _ = fs::remove_dir(dir);
        }
        if leftovers.is_empty() {
            Ok(())
        } else {
            Err(leftovers)
        }
    }

    /// After a successful commit the originals are no longer needed.
    fn discard_backups(self) {
        for backup in self.moved.into_iter().filter_map(|(_, backup)| backup) {
            let _ = fs::remove_file(backup);
        }
    }
}

/// The directories `dir` needs created, parents first (empty when it exists).
fn missing_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// How long a run waits for the project lock before it reports another run.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Locks the project directory for the rest of the run (an advisory `flock`, released
/// when the process exits however it exits, so a crash leaves nothing stale behind).
fn lock_project(root: &Path) -> anyhow::Result<Option<File>> {
    #[cfg(unix)]
    {
        let dir = match File::open(root) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot open {}", root.display())),
        };
        // A lock just released can look held for a moment: a process forked elsewhere in
        // this one (a test harness running commands on threads) shares the descriptor until
        // it execs. So wait briefly before calling it another rkb run.
        let deadline = std::time::Instant::now() + LOCK_PATIENCE;
        let mut attempt = dir.try_lock();
        while matches!(attempt, Err(fs::TryLockError::WouldBlock))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
            attempt = dir.try_lock();
        }
        match attempt {
            Ok(()) => Ok(Some(dir)),
            Err(fs::TryLockError::WouldBlock) => bail!(
                "another rkb command is changing {} right now; wait for it to finish, then run \
                 this one again",
                root.display()
            ),
            Err(fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock {}", root.display()))
            }
        }
    }
    #[cfg(not(unix))]
    {
        // Directories cannot be opened as files here; the no-clobber checks still hold.
        let _ = root;
        Ok(None)
    }
}

/// Refuses a path inside the project that passes through a symbolic link: writing or
/// reading through it would reach outside the project. The root itself may be a link.
fn refuse_links(root: &Path, rel: &Path) -> anyhow::Result<()> {
    let mut path = root.to_path_buf();
    for component in rel.components() {
        let Component::Normal(name) = component else {
            bail!(
                "{} is not a plain path inside the project (a bug in rkb)",
                rel.display()
            );
        };
        path.push(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => bail!(
                "{} is a symbolic link; rkb reads and writes only inside the project and does \
                 not follow links out of it.\n  Replace the link with a copy of what it points to \
                 ({}), or run rkb on the real project directory",
                path.display(),
                fs::read_link(&path)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "unreadable".into())
            ),
            Ok(_) => {}
            // Nothing below a missing path can be a link.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                break;
            }
            Err(e) => return Err(e).with_context(|| format!("cannot inspect {}", path.display())),
        }
    }
    Ok(())
}

/// The longest name of a file or directory most file systems take (Linux's NAME_MAX), and
/// of a whole path (PATH_MAX, less its terminating NUL).
pub const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4095;
/// What a staged copy or backup adds to a file's name: `.` and `.rkb-new-<16 hex>`.
pub const STAGING_EXTRA: usize = ".".len() + ".rkb-new-".len() + 16;
/// The longest file name rkb can write: its staged copy must fit in [`NAME_MAX`] too.
pub const FILE_NAME_MAX: usize = NAME_MAX - STAGING_EXTRA;

/// Refuses a project directory whose name no file system takes, before the OS answers
/// with a bare "File name too long".
fn check_dir_name(root: &Path) -> anyhow::Result<()> {
    let long = root
        .components()
        .map(|c| c.as_os_str())
        .find(|name| name.len() > NAME_MAX);
    if let Some(name) = long {
        bail!(
            "the directory {} cannot be a project: its name {:?} is {} bytes long, and file \
             systems take names of at most {NAME_MAX} bytes. Choose a shorter directory (--dir)",
            root.display(),
            name.to_string_lossy(),
            name.len()
        );
    }
    // The nearest existing path up from the root must be a directory: a file there gives
    // "Not a directory (os error 20)" at the first read.
    if let Some(file) = root
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .find(|p| p.exists())
        .filter(|p| !p.is_dir())
    {
        bail!(
            "{} cannot be a project directory: {} is a file, not a directory. Pass the project's \
             directory (--dir), or for `rkb init` a new or empty one",
            root.display(),
            file.display()
        );
    }
    let full = std::path::absolute(root).map_or(0, |r| r.as_os_str().len());
    if full > PATH_MAX {
        bail!(
            "the directory {} cannot be a project: its path is {full} bytes long, and file \
             systems take paths of at most {PATH_MAX} bytes. Choose a shorter directory (--dir)",
            root.display()
        );
    }
    Ok(())
}

/// Refuses a file whose name, or whose staged copy's name, is too long to create, naming
/// it and the limit rather than letting the commit fail with the OS's bare error.
fn check_file_name(root: &Path, rel: &str) -> anyhow::Result<()> {
    let path = Path::new(rel);
    let file = path.file_name().map_or(0, |n| n.len());
    let dir = path
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .map(|c| c.as_os_str())
        .find(|name| name.len() > NAME_MAX);
    if let Some(dir) = dir {
        bail!(
            "cannot write {rel}: its directory name {:?} is {} bytes long, and file systems take \
             names of at most {NAME_MAX} bytes. Shorten the names it is made of (such as --group)",
            dir.to_string_lossy(),
            dir.len()
        );
    }
    if file > FILE_NAME_MAX {
        bail!(
            "cannot write {rel}: its file name is {file} bytes long, and rkb writes names of at \
             most {FILE_NAME_MAX} bytes (file systems take {NAME_MAX}, and rkb stages each file \
             under a name {STAGING_EXTRA} bytes longer). Shorten the names it is made of (such \
             as --group or --kind)"
        );
    }
    let full = std::path::absolute(root).map_or(0, |r| r.as_os_str().len()) + 1 + rel.len();
    if full + STAGING_EXTRA > PATH_MAX {
        bail!(
            "cannot write {rel} in {}: the path would be {full} bytes long, and rkb writes \
             paths of at most {} bytes (file systems take {PATH_MAX}, and rkb stages each file \
             under a name {STAGING_EXTRA} bytes longer). Use a project directory with a shorter \
             path",
            root.display(),
            PATH_MAX - STAGING_EXTRA
        );
    }
    Ok(())
}

/// A fresh random name next to `target` (`.<name>.rkb-<tag>-<random>`), for a staged copy
/// or a backup. Staged copies are then opened with `create_new`, which fails rather than
/// follow or reuse whatever might be at that name.
fn sibling_name(target: &Path, tag: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("file");
    // RandomState is seeded from the OS per process; the counter varies the input.
    let random = RandomState::new().hash_one(COUNTER.fetch_add(1, Ordering::Relaxed));
    target.with_file_name(format!(".{name}.rkb-{tag}-{random:016x}"))
}

/// Reads `rel` under `root`, refusing symbolic links; `None` when it does not exist.
fn read_in_project(root: &Path, rel: &Path) -> anyhow::Result<Option<String>> {
    refuse_links(root, rel)?;
    let path = root.join(rel);
    match fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        // Under a regular file nothing exists; creating it fails later, at commit.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Index of the marker line, or an error telling how to restore it. A marker is a line
/// that is only a `//` or `#` comment `+rkb:scaffold:<marker>`, outside the lines `hidden`
/// marks (inside a Rust block comment or string literal).
fn marker_line(lines: &[&str], marker: &str, hidden: &[bool]) -> anyhow::Result<usize> {
    let tag = format!("+rkb:scaffold:{marker}");
    let is_marker = |line: &str| {
        let text = line.trim();
        let comment = text
            .strip_prefix("//")
            .or_else(|| text.strip_prefix('#'))
            .map(str::trim);
        comment == Some(tag.as_str())
    };
    lines
        .iter()
        .enumerate()
        .position(|(i, line)| !hidden.get(i).copied().unwrap_or(false) && is_marker(line))
        .with_context(|| {
            format!(
                "its `{tag}` marker line is gone; rkb inserts generated code right above it. \
                 Put the marker back (see a freshly generated project) and run the command again"
            )
        })
}

/// For each line of Rust source, whether it begins inside a block comment or a string
/// literal, where a `// +rkb:scaffold:` line is text rather than a marker.
fn rust_lines_in_literals(src: &str) -> Vec<bool> {
    let code = rust_code_mask(src);
    let mut hidden = vec![false];
    hidden.extend(
        src.bytes()
            .zip(&code)
            .filter(|(b, _)| *b == b'\n')
            .map(|(_, code)| !code),
    );
    hidden
}

/// For each byte of Rust source, whether it is code: not inside a comment, a string or a
/// char literal (the newline that ends a `//` comment counts as code). A lexer of just
/// what decides that: comments (nested), strings with escapes, raw strings, char literals.
pub(crate) fn rust_code_mask(src: &str) -> Vec<bool> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Code,
        Block(u32),
        Str,
        Raw(usize),
    }
    let b = src.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut state = State::Code;
    let mut code = vec![false; b.len()];
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match state {
            State::Code => {
                if c == b'/' && at(i + 1) == b'/' {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                if c == b'/' && at(i + 1) == b'*' {
                    state = State::Block(1);
                    i += 2;
                    continue;
                }
                if c == b'"' {
                    state = State::Str;
                } else if c == b'r' && matches!(at(i + 1), b'"' | b'#') {
                    let before = if at(i.wrapping_sub(1)) == b'b' {
                        i.wrapping_sub(2)
                    } else {
                        i.wrapping_sub(1)
                    };
                    let hashes = b[i + 1..].iter().take_while(|&&h| h == b'#').count();
                    if (i == 0 || !ident(at(before))) && at(i + 1 + hashes) == b'"' {
                        state = State::Raw(hashes);
                        i += 2 + hashes;
                        continue;
                    }
                } else if c == b'\'' {
                    // A char literal ('x', '\n', '"'), or a lifetime, which has no closing quote.
                    if at(i + 1) == b'\\' {
                        i += 2;
                        while i < b.len() && b[i] != b'\'' && b[i] != b'\n' {
                            i += 1;
                        }
                    } else if at(i + 2) == b'\'' {
                        i += 2;
                    }
                } else {
                    code[i] = true;
                }
                i += 1;
            }
            State::Block(depth) => {
                if c == b'/' && at(i + 1) == b'*' {
                    state = State::Block(depth + 1);
                    i += 2;
                } else if c == b'*' && at(i + 1) == b'/' {
                    state = if depth == 1 {
                        State::Code
                    } else {
                        State::Block(depth - 1)
                    };
                    i += 2;
                } else {
                    i += 1;
                }
            }
            State::Str => {
                if c == b'\\' {
                    i += 2;
                } else {
                    if c == b'"' {
                        state = State::Code;
                    }
                    i += 1;
                }
            }
            State::Raw(hashes) => {
                if c == b'"'
                    && b[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == b'#')
                        .count()
                        == hashes
                {
                    state = State::Code;
                    i += 1 + hashes;
                } else {
                    i += 1;
                }
            }
        }
    }
    code
}

/// `content` with `line` added to the contiguous block above the marker, in version-sort order.
fn insert_sorted(
    content: &str,
    marker: &str,
    line: &str,
    hidden: &[bool],
) -> anyhow::Result<String> {
    let lines: Vec<&str> = content.lines().collect();
    let at = marker_line(&lines, marker, hidden)?;
    let mut start = at;
    while start > 0
        && !lines[start - 1].trim().is_empty()
        && !lines[start - 1].trim_start().starts_with("//")
    {
        start -= 1;
    }
    // Already there, in this block or elsewhere in code (a comment between the block and
    // the marker starts a new block): a second `pub mod x;` would not compile.
    let present =
        |(i, l): (usize, &&str)| l.trim() == line && !hidden.get(i).copied().unwrap_or(false);
    if lines.iter().enumerate().any(present) {
        return Ok(content.to_owned());
    }
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    let position = start
        + lines[start..at]
            .iter()
            .take_while(|l| version_cmp(l.trim(), line).is_lt())
            .count();
    let new_line = format!("{indent}{line}");
    let mut out: Vec<&str> = lines[..position].to_vec();
    out.push(&new_line);
    out.extend_from_slice(&lines[position..]);
    let mut text = out.join("\n");
    if content.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// rustfmt's "version sort" (style edition 2024): digit runs compare as numbers,
/// so `v2` sorts before `v10` and `v1` before `v1alpha1`.
fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut rest = s;
        while let Some(first) = rest.chars().next() {
            let digit = first.is_ascii_digit();
            let len = rest
                .find(|c: char| c.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            out.push((digit, &rest[..len]));
            rest = &rest[len..];
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, xa), (db, xb)) in ca.iter().zip(&cb) {
        let ord = if *da && *db {
            let (na, nb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            na.len().cmp(&nb.len()).then(na.cmp(nb))
        } else {
            xa.cmp(xb)
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len())
}

/// `content` with the lines under `snippet`'s first line replaced by the snippet's, each
/// keeping its indent; or, without that line, with `snippet` inserted at the marker.
fn upsert(content: &str, marker: &str, snippet: &str, hidden: &[bool]) -> anyhow::Result<String> {
    let mut wanted = snippet.lines();
    let key = wanted.next().unwrap_or_default().trim();
    let mut lines: Vec<String> = content.lines().map(str::to_owned).collect();
    let Some(at) = lines.iter().position(|l| l.trim() == key) else {
        return insert_at_marker(content, marker, snippet, hidden);
    };
    // A line is replaced by one of the same field (`value:` by `value:`), never another.
    let field = |line: &str| line.trim().split(':').next().unwrap_or_default().to_owned();
    for (offset, new) in wanted.enumerate() {
        let Some(old) = lines
            .get_mut(at + 1 + offset)
            .filter(|old| field(old) == field(new))
        else {
            bail!(
                "`{key}` is not followed by `{}` as rkb writes it; set it to `{}` by hand, or remove \
                 the entry and run rkb again",
                field(new),
                new.trim()
            );
        };
        let indent = old.len() - old.trim_start().len();
        *old = format!("{}{}", &old[..indent], new.trim_start());
    }
    let mut text = lines.join("\n");
    if content.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// `text` without whitespace and, in Rust, without the commas before a closing bracket:
/// what survives rustfmt's rewrapping of an inserted snippet.
fn normalized(text: &str, rust: bool) -> String {
    let mut out: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if rust {
        for closer in [")", "]", ">", "}"] {
            out = out.replace(&format!(",{closer}"), closer);
        }
    }
    out
}

/// `content` without the whole lines that hold `snippet` (compared [`normalized`]): the
/// match nearest above the marker, else the first. `None` when no lines match.
fn remove_snippet(
    content: &str,
    marker: &str,
    snippet: &str,
    hidden: &[bool],
    rust: bool,
) -> Option<String> {
    let wanted = normalized(snippet, rust);
    if wanted.is_empty() {
        return Some(content.to_owned());
    }
    let lines: Vec<&str> = content.lines().collect();
    let mut matches = Vec::new();
    for start in 0..lines.len() {
        if lines[start].trim().is_empty() {
            continue;
        }
        let mut stripped = String::new();
        for (end, line) in lines.iter().enumerate().skip(start) {
            stripped.extend(line.chars().filter(|c| !c.is_whitespace()));
            let seen = normalized(&stripped, rust);
            if seen == wanted {
                matches.push(start..end + 1);
                break;
            }
            // A trailing comma may yet precede a closing bracket on the next line.
            if !wanted.starts_with(seen.strip_suffix(',').unwrap_or(&seen)) {
                break;
            }
        }
    }
    let marker_at = marker_line(&lines, marker, hidden).ok();
    let mut chosen = marker_at
        .and_then(|at| matches.iter().rev().find(|m| m.end <= at))
        .or(matches.first())?
        .clone();
    // Blank lines the snippet starts or ends with were inserted with it.
    let blank = |l: &str| l.trim().is_empty();
    let snippet_lines: Vec<&str> = snippet.lines().collect();
    let leading = snippet_lines.iter().take_while(|l| blank(l)).count();
    let trailing = snippet_lines.iter().rev().take_while(|l| blank(l)).count();
    for _ in 0..leading {
        if chosen.start > 0 && blank(lines[chosen.start - 1]) {
            chosen.start -= 1;
        }
    }
    for _ in 0..trailing {
        if chosen.end < lines.len() && blank(lines[chosen.end]) {
            chosen.end += 1;
        }
    }
    let mut out: Vec<&str> = lines[..chosen.start].to_vec();
    out.extend_from_slice(&lines[chosen.end..]);
    let mut text = out.join("\n");
    if content.ends_with('\n') && !text.is_empty() {
        text.push('\n');
    }
    Some(text)
}

/// `content` without the list item keyed `key` (see [`Changes::withdraw_at_marker`]).
fn withdraw(content: &str, marker: &str, key: &str, hidden: &[bool]) -> anyhow::Result<String> {
    let mut lines: Vec<&str> = content.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start().len();
    let Some(at) = lines.iter().position(|l| l.trim() == key) else {
        return Ok(content.to_owned());
    };
    // The item's body is indented under its `- ` line.
    let end = at
        + 1
        + lines[at + 1..]
            .iter()
            .take_while(|l| !l.trim().is_empty() && indent(l) > indent(lines[at]))
            .count();
    // A list key the first insertion opened (`env:`) goes with its last item, so the file
    // is again what it was before any: a key without items would be `env: null`.
    let opener = lines[..at].last().map(|l| l.trim()).unwrap_or_default();
    let last_item = marker_line(&lines, marker, hidden).is_ok_and(|m| m == end)
        && opener.ends_with(':')
        && !opener.starts_with(['-', '#']);
    lines.drain(at..end);
    if last_item {
        lines.remove(at - 1);
    }
    let mut text = lines.join("\n");
    if content.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// The text of `content` with `snippet` inserted before its marker line.
fn insert_at_marker(
    content: &str,
    marker: &str,
    snippet: &str,
    hidden: &[bool],
) -> anyhow::Result<String> {
    let lines: Vec<&str> = content.lines().collect();
    let at = marker_line(&lines, marker, hidden)?;
    let start: usize = lines[..at].iter().map(|l| l.len() + 1).sum();
    let marker_line = content[start..].lines().next().unwrap_or_default();
    let indent = &marker_line[..marker_line.len() - marker_line.trim_start().len()];
    let snippet_lines: Vec<&str> = snippet.lines().collect();
    // Already there (a re-run, or `--force`): leave the file alone.
    let existing: Vec<&str> = content.lines().map(str::trim).collect();
    let wanted: Vec<&str> = snippet_lines.iter().map(|l| l.trim()).collect();
    if !wanted.is_empty()
        && existing
            .windows(wanted.len())
            .any(|w| w == wanted.as_slice())
    {
        return Ok(content.to_owned());
    }
    // Multi-line snippets (YAML blocks, Rust items) keep their own nesting under the marker.
    let common_indent = snippet_lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut inserted = String::new();
    for line in snippet_lines {
        if line.trim().is_empty() {
            inserted.push('\n');
        } else {
            inserted.push_str(indent);
            inserted.push_str(&line[common_indent..]);
            inserted.push('\n');
        }
    }
    Ok(format!(
        "{}{inserted}{}",
        &content[..start],
        &content[start..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_above_marker_with_its_indent_once() {
        let text = "fn f() {\n    let v = vec![\n        // +rkb:scaffold:items\n    ];\n}\n";
        let once = insert_at_marker(text, "items", "a(),", &[]).unwrap();
        assert_eq!(
            once,
            "fn f() {\n    let v = vec![\n        a(),\n        // +rkb:scaffold:items\n    ];\n}\n"
        );
        assert_eq!(insert_at_marker(&once, "items", "a(),", &[]).unwrap(), once);
        let twice = insert_at_marker(&once, "items", "b(),", &[]).unwrap();
        assert!(twice.contains("        a(),\n        b(),\n        // +rkb"));
    }

    #[test]
    fn nested_snippets_keep_their_relative_indent() {
        let text = "spec:\n  # +rkb:scaffold:env\n";
        let snippet = "env:\n- name: A\n  value: b\n";
        assert_eq!(
            insert_at_marker(text, "env", snippet, &[]).unwrap(),
            "spec:\n  env:\n  - name: A\n    value: b\n  # +rkb:scaffold:env\n"
        );
    }

    #[test]
    fn upserts_replace_the_lines_under_their_key() {
        let text = "spec:\n  # +rkb:scaffold:env\n";
        let first = upsert(text, "env", "env:\n- name: A\n  value: b\n", &[]).unwrap();
        assert_eq!(
            first,
            "spec:\n  env:\n  - name: A\n    value: b\n  # +rkb:scaffold:env\n"
        );
        assert_eq!(
            upsert(&first, "env", "- name: A\n  value: c\n", &[]).unwrap(),
            "spec:\n  env:\n  - name: A\n    value: c\n  # +rkb:scaffold:env\n"
        );
        let edited = first.replace("value: b", "valueFrom: {}");
        let error = upsert(&edited, "env", "- name: A\n  value: c\n", &[]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`- name: A` is not followed by `value`"),
            "{error}"
        );
    }

    #[test]
    fn sorted_insertion_follows_rustfmt_order() {
        let mut text = String::from("//! docs\n\n// +rkb:scaffold:versions\n");
        for version in ["v2", "v1alpha1", "v10", "v1", "v1beta1", "v1"] {
            text = insert_sorted(&text, "versions", &format!("pub mod {version};"), &[]).unwrap();
        }
        assert_eq!(
            text,
            "//! docs\n\npub mod v1;\npub mod v1alpha1;\npub mod v1beta1;\npub mod v2;\npub mod v10;\n// +rkb:scaffold:versions\n"
        );
    }

    #[test]
    fn removal_undoes_an_insertion_even_after_rustfmt_rewrapped_it() {
        let before = "let v = vec![\n    a(),\n    // +rkb:scaffold:items\n];\n";
        let snippet = "webhook::<api::v1::Memcached, webhook::v1::memcached::MemcachedWebhook>(),";
        let inserted = insert_at_marker(before, "items", snippet, &[]).unwrap();
        assert_eq!(
            remove_snippet(&inserted, "items", snippet, &[], true).as_deref(),
            Some(before)
        );
        // As rustfmt wraps it: one argument a line, with a trailing comma.
        let wrapped = "let v = vec![\n    a(),\n    webhook::<\n        api::v1::Memcached,\n        \
                       webhook::v1::memcached::MemcachedWebhook,\n    >(),\n    // +rkb:scaffold:items\n];\n";
        assert_eq!(
            remove_snippet(wrapped, "items", snippet, &[], true).as_deref(),
            Some(before)
        );
        // Only whole lines go, and a changed line is not the snippet.
        assert_eq!(remove_snippet(before, "items", "a", &[], true), None);
        let changed = wrapped.replace("Memcached,", "Memcached, Extra,");
        assert_eq!(remove_snippet(&changed, "items", snippet, &[], true), None);
        // YAML keeps its commas; of two copies, the one above the marker goes.
        let yaml = "- a.yaml\n# +rkb:scaffold:samples\n- a.yaml\n";
        assert_eq!(
            remove_snippet(yaml, "samples", "- a.yaml", &[], false).as_deref(),
            Some("# +rkb:scaffold:samples\n- a.yaml\n")
        );
    }

    #[test]
    fn missing_marker_is_an_actionable_error() {
        let err = insert_at_marker("nothing here\n", "items", "x", &[]).unwrap_err();
        assert!(
            err.to_string()
                .contains("`+rkb:scaffold:items` marker line is gone")
        );
    }

    #[test]
    fn commit_creates_updates_and_reports() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("list.yaml"),
            "resources:\n# +rkb:scaffold:crds\n",
        )
        .unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .create("a/b/new.txt", "new\n".into(), false)
            .unwrap();
        changes
            .insert_at_marker("list.yaml", Marker::Crds, "- x.yaml")
            .unwrap();
        let written = changes.commit().unwrap();
        assert_eq!(
            written,
            vec![
                (PathBuf::from("a/b/new.txt"), Written::Created),
                (PathBuf::from("list.yaml"), Written::Updated)
            ]
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("list.yaml")).unwrap(),
            "resources:\n- x.yaml\n# +rkb:scaffold:crds\n"
        );
    }

    #[test]
    fn refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("mine.rs"), "user code").unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        let err = changes
            .create("mine.rs", "generated".into(), false)
            .unwrap_err();
        assert!(err.to_string().contains("--force"));
        changes.create("mine.rs", "generated".into(), true).unwrap();
    }

    #[test]
    fn failed_commit_leaves_the_directory_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("keep.txt"), "original").unwrap();
        // A file where a directory is needed makes staging fail after other files were staged.
        fs::write(dir.path().join("zz-blocker"), "not a directory").unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes.create("keep.txt", "changed".into(), true).unwrap();
        changes
            .create("new/dir/file.txt", "x".into(), false)
            .unwrap();
        changes
            .create("zz-blocker/file.txt", "x".into(), false)
            .unwrap();
        let before = snapshot(dir.path());
        let err = changes.commit().unwrap_err();
        assert!(format!("{err:#}").contains("no files were changed"));
        assert_eq!(snapshot(dir.path()), before);
    }

    #[cfg(unix)]
    #[test]
    fn staging_does_not_write_through_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        fs::write(&victim, "outside the project").unwrap();
        // The staging name an earlier rkb used was predictable: a link planted there must
        // never redirect the write.
        let planted = dir
            .path()
            .join(format!(".new.txt.rkb-{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, planted).unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .create("new.txt", "generated".into(), false)
            .unwrap();
        changes.commit().unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "outside the project");
        assert_eq!(
            fs::read_to_string(dir.path().join("new.txt")).unwrap(),
            "generated"
        );
    }

    #[test]
    fn staging_names_are_fresh_and_never_reused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f.txt");
        let (a, b) = (sibling_name(&target, "new"), sibling_name(&target, "new"));
        assert_ne!(a, b);
        assert!(
            a.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(".f.txt.rkb-new-")
        );
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinked_directories_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("config")).unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        let err = changes
            .create("config/rbac/role.yaml", "x".into(), false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("config is a symbolic link"), "{err}");
        assert!(err.contains("Replace the link"), "{err}");
        assert!(fs::read_dir(outside.path()).unwrap().next().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_to_read_a_symlinked_file() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "not yours").unwrap();
        fs::create_dir(dir.path().join("hack")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret"),
            dir.path().join("hack/boilerplate.rs.txt"),
        )
        .unwrap();
        let changes = Changes::open(dir.path()).unwrap();
        let err = changes
            .read("hack/boilerplate.rs.txt")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("boilerplate.rs.txt is a symbolic link"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_second_run_on_the_same_project_is_refused_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let first = Changes::open(dir.path()).unwrap();
        let err = Changes::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("another rkb command is changing"), "{err}");
        first.commit().unwrap();
        Changes::open(dir.path()).unwrap();
    }

    #[test]
    fn a_file_saved_during_the_run_is_not_clobbered() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("PROJECT"), "read by rkb").unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes.create("a-new.txt", "x".into(), false).unwrap();
        changes
            .create("PROJECT", "rkb's update".into(), true)
            .unwrap();
        fs::write(dir.path().join("PROJECT"), "saved by an editor").unwrap();
        let before = snapshot(dir.path());
        let err = format!("{:#}", changes.commit().unwrap_err());
        assert!(
            err.contains("PROJECT changed on disk while rkb was running"),
            "{err}"
        );
        assert!(err.contains("no files were changed"), "{err}");
        assert_eq!(snapshot(dir.path()), before);
    }

    #[test]
    fn a_file_created_during_the_run_is_not_clobbered() {
        let dir = tempfile::tempdir().unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .create("new.txt", "generated".into(), false)
            .unwrap();
        fs::write(dir.path().join("new.txt"), "the user's").unwrap();
        let err = format!("{:#}", changes.commit().unwrap_err());
        assert!(err.contains("new.txt changed on disk"), "{err}");
        assert_eq!(
            fs::read_to_string(dir.path().join("new.txt")).unwrap(),
            "the user's"
        );
    }

    #[cfg(unix)]
    #[test]
    fn updates_and_roll_backs_keep_the_file_mode() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.sh");
        fs::write(&script, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();

        // Rolled back: a later file cannot be created under a regular file.
        fs::write(dir.path().join("zz-blocker"), "not a directory").unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .create("script.sh", "#!/bin/sh\necho hi\n".into(), true)
            .unwrap();
        changes
            .create("zz-blocker/file.txt", "x".into(), false)
            .unwrap();
        let before = snapshot(dir.path());
        changes.commit().unwrap_err();
        assert_eq!(snapshot(dir.path()), before);
        assert_eq!(mode(&script), 0o750);

        // Committed: new content, same mode, no backup left behind.
        fs::remove_file(dir.path().join("zz-blocker")).unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .create("script.sh", "#!/bin/sh\necho hi\n".into(), true)
            .unwrap();
        changes.commit().unwrap();
        assert_eq!(mode(&script), 0o750);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "only script.sh remains"
        );
    }

    #[test]
    fn a_roll_back_that_cannot_restore_says_where_the_original_is() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("kept.txt");
        let backup = dir.path().join(".kept.txt.rkb-old-gone");
        let tx = Transaction {
            moved: vec![(target, Some(backup))],
            ..Transaction::default()
        };
        let leftovers = tx.roll_back(dir.path()).unwrap_err();
        assert_eq!(leftovers.len(), 1);
        assert!(
            leftovers[0].contains("kept.txt: its original is kept at")
                && leftovers[0].contains(".kept.txt.rkb-old-gone"),
            "{leftovers:?}"
        );
    }

    /// A commit cut short after each of its file-system steps, simulated from its journal:
    /// the next `open` gives back the tree as it was, or (once every file is in place) as
    /// the commit would leave it, never anything else.
    #[test]
    fn an_interrupted_commit_is_undone_or_finished_by_the_next_run() {
        let plan = |dir: &Path| {
            let mut changes = Changes::open(dir).unwrap();
            changes.create("keep.txt", "changed".into(), true).unwrap();
            changes
                .create("new/dir/file.txt", "new".into(), false)
                .unwrap();
            changes.set("gone.txt", None).unwrap();
            changes
        };
        let setup = |dir: &Path| {
            fs::write(dir.join("keep.txt"), "original").unwrap();
            fs::write(dir.join("gone.txt"), "to remove").unwrap();
        };
        let base = tempfile::tempdir().unwrap();
        setup(base.path());
        let before = snapshot_rel(base.path());
        plan(base.path()).commit().unwrap();
        let after = snapshot_rel(base.path());
        // Replay the commit's steps by hand from its journal, stopping after `steps`.
        for steps in 0..=12 {
            let dir = tempfile::tempdir().unwrap();
            setup(dir.path());
            let changes = plan(dir.path());
            let written: Vec<_> = changes
                .pending()
                .map(|(p, w)| (p.to_path_buf(), w))
                .collect();
            let mut journal = changes.journal(&written).unwrap();
            let root = dir.path();
            let mut ops: Vec<Box<dyn Fn()>> = vec![Box::new({
                let j = journal.clone();
                let root = root.to_path_buf();
                move || j.save(&root).unwrap()
            })];
            for d in journal.dirs.clone() {
                let root = root.to_path_buf();
                ops.push(Box::new(move || fs::create_dir_all(root.join(&d)).unwrap()));
            }
            for entry in journal.files.clone() {
                let root = root.to_path_buf();
                let content = changes.files[&entry.target].content.clone();
                ops.push(Box::new(move || {
                    if let (Some(staged), Some(content)) = (&entry.staged, &content) {
                        fs::write(root.join(staged), content).unwrap();
                    }
                }));
            }
            for entry in journal.files.clone() {
                let root = root.to_path_buf();
                ops.push(Box::new(move || {
                    if let Some(backup) = &entry.backup {
                        fs::rename(root.join(&entry.target), root.join(backup)).unwrap();
                    }
                    if let Some(staged) = &entry.staged {
                        fs::rename(root.join(staged), root.join(&entry.target)).unwrap();
                    }
                }));
            }
            journal.done = true;
            ops.push(Box::new({
                let root = root.to_path_buf();
                move || journal.save(&root).unwrap()
            }));
            drop(changes);
            for op in ops.iter().take(steps) {
                op();
            }
            let finished = steps >= ops.len();
            let reopened = Changes::open(root).unwrap();
            let tree = snapshot_rel(root);
            if finished {
                assert_eq!(tree, after, "after all {steps} steps");
                assert!(
                    reopened
                        .recovered()
                        .unwrap()
                        .contains("after writing all its files")
                );
            } else {
                assert_eq!(tree, before, "after {steps} steps");
                if steps > 0 {
                    assert!(reopened.recovered().unwrap().contains("were undone"));
                }
            }
        }
    }

    /// The tree under `dir`, relative, so that two directories compare.
    fn snapshot_rel(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        snapshot(dir)
            .into_iter()
            .map(|(p, c)| (p.strip_prefix(dir).unwrap().to_path_buf(), c))
            .collect()
    }

    #[test]
    fn crlf_files_keep_their_line_endings_and_mixed_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let crlf = "mod a;\r\n// +rkb:scaffold:modules\r\n\r\nfn main() {}\r\n";
        fs::write(dir.path().join("lib.rs"), crlf).unwrap();
        fs::write(
            dir.path().join("mixed.yaml"),
            "a: 1\r\nb: 2\n# +rkb:scaffold:crds\n",
        )
        .unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .insert_sorted_at_marker("lib.rs", Marker::Modules, "mod b;")
            .unwrap();
        assert_eq!(
            changes.read("lib.rs").unwrap().unwrap(),
            "mod a;\r\nmod b;\r\n// +rkb:scaffold:modules\r\n\r\nfn main() {}\r\n"
        );
        let err = changes
            .insert_at_marker("mixed.yaml", Marker::Crds, "- x.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mixes Windows (CRLF) and Unix (LF) line endings"),
            "{err}"
        );
    }

    /// Found by `command_sequences`: a file rewritten whole (PROJECT) lost its CRLF line
    /// endings, and a comment between a module list and its marker made a re-run declare
    /// a module twice.
    #[test]
    fn rewritten_files_keep_crlf_and_a_module_is_declared_once() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("PROJECT"), "domain: a\r\nresources: []\r\n").unwrap();
        fs::write(dir.path().join("lf.yaml"), "a: 1\n").unwrap();
        let mods =
            "pub mod cache;\n/* old\n// +rkb:scaffold:modules\n*/\n// +rkb:scaffold:modules\n";
        fs::write(dir.path().join("mod.rs"), mods).unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .create("PROJECT", "domain: b\nresources: []\n".into(), true)
            .unwrap();
        changes.create("lf.yaml", "a: 2\n".into(), true).unwrap();
        changes
            .insert_sorted_at_marker("mod.rs", Marker::Modules, "pub mod cache;")
            .unwrap();
        assert_eq!(
            changes.read("PROJECT").unwrap().unwrap(),
            "domain: b\r\nresources: []\r\n"
        );
        assert_eq!(changes.read("lf.yaml").unwrap().unwrap(), "a: 2\n");
        assert_eq!(changes.read("mod.rs").unwrap().unwrap(), mods);
    }

    #[test]
    fn markers_in_block_comments_and_strings_are_text() {
        let dir = tempfile::tempdir().unwrap();
        let source = "/* an example:\n// +rkb:scaffold:modules\n*/\nconst S: &str = r#\"\n// +rkb:scaffold:modules\n\"#;\n\
                      const T: &str = \"a \\\" quote\n// +rkb:scaffold:modules\n\";\nconst C: char = '\"';\n\
                      mod a;\n// +rkb:scaffold:modules\n";
        fs::write(dir.path().join("lib.rs"), source).unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .insert_sorted_at_marker("lib.rs", Marker::Modules, "mod b;")
            .unwrap();
        let updated = changes.read("lib.rs").unwrap().unwrap();
        assert!(
            updated.ends_with("mod a;\nmod b;\n// +rkb:scaffold:modules\n"),
            "{updated}"
        );
        assert_eq!(updated.matches("mod b;").count(), 1, "{updated}");
        // Only a comment in a string: no marker at all.
        fs::write(
            dir.path().join("only.rs"),
            "const S: &str = \"\n// +rkb:scaffold:modules\n\";\n",
        )
        .unwrap();
        let err = changes
            .insert_sorted_at_marker("only.rs", Marker::Modules, "mod b;")
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("marker line is gone"),
            "{err:#}"
        );
        let hidden =
            rust_lines_in_literals("fn f<'a>(x: &'a str) {}\n/* /* nested */\nstill */\nok\n");
        assert_eq!(hidden, [false, false, true, false, false]);
    }

    fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    out.push((path.clone(), None));
                    stack.push(path);
                } else {
                    out.push((path.clone(), Some(fs::read(&path).unwrap())));
                }
            }
        }
        out.sort();
        out
    }
}
