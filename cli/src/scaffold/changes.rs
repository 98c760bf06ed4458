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
//!
//! This file is the transaction; the edits at `+rkb:scaffold:` markers are in
//! [`markers`](super::markers).

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, bail};

use super::journal::{self, FileEntry, Journal};
use super::read::read_optional;

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
    /// exist yet (`rkb init --dir new`), which the commit then creates and locks.
    _lock: Option<File>,
    /// The root did not exist when the change set was opened.
    new_root: bool,
    /// What was done to finish an interrupted earlier command, if anything.
    recovered: Option<String>,
}

impl Changes {
    /// Starts a change set over `root`, locking the project against other rkb runs, and
    /// first brings back to a whole state a project whose last command was interrupted.
    pub fn open(root: impl Into<PathBuf>) -> anyhow::Result<Self> {
        let root = root.into();
        check_dir_name(&root)?;
        let new_root = !root.exists();
        let lock = lock_project(&root)?;
        let recovered = match &lock {
            Some(_) => journal::recover(&root)?,
            None => None,
        };
        Ok(Changes {
            _lock: lock,
            new_root,
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

    pub(super) fn set(&mut self, rel: &str, content: Option<String>) -> anyhow::Result<()> {
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
        if !overwrite
            && existing.is_some()
            && self.new_root
            && !self.files.contains_key(Path::new(rel))
        {
            // The root did not exist when this command began: another made the file since.
            return Err(another_created(&self.root));
        }
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

    /// Plans the removal of `rel`, if it exists (`rkb delete`, a forced re-run).
    pub fn remove(&mut self, rel: &str) -> anyhow::Result<()> {
        if self.exists(rel)? {
            self.set(rel, None)?;
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

    /// Creates the root of a project that did not exist at [`open`](Self::open), and locks
    /// it for the rest of the commit. A root that appeared in the meantime is another rkb
    /// command's (two `rkb init`s into one new directory): this one writes nothing there.
    fn claim_root(&self, tx: &mut Transaction) -> anyhow::Result<Option<File>> {
        if !self.new_root {
            return Ok(None);
        }
        let created = match tx.create_dir_all(&self.root) {
            Ok(()) => tx.created_dirs.last() == Some(&self.root),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot create directory {}", self.root.display()));
            }
        };
        if !created {
            return Err(another_created(&self.root));
        }
        lock_project(&self.root)
    }

    fn apply(
        &self,
        written: &[(PathBuf, Written)],
        tx: &mut Transaction,
    ) -> anyhow::Result<Journal> {
        // The journal goes first, into the root (created for it if need be): from here on,
        // an interruption at any instant is undone by the next run.
        let journal = self.journal(written)?;
        tx.root_lock = self.claim_root(tx)?;
        tx.create_dir_all(&self.root)
            .with_context(|| format!("cannot create directory {}", self.root.display()))?;
        journal
            .save(&self.root)
            .with_context(|| format!("cannot write {}", self.root.join(journal::FILE).display()))?;
        tx.journal = true;
        let staged = self.stage(written, &journal, tx)?;
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

    /// Writes each planned content to its staged copy: everything that can fail
    /// (directories, disk space) happens before any target file is touched. Returns, per
    /// file, the staged copy (`None`: a removal), the target and the backup's name.
    fn stage<'a>(
        &self,
        written: &'a [(PathBuf, Written)],
        journal: &Journal,
        tx: &mut Transaction,
    ) -> anyhow::Result<Vec<Staged<'a>>> {
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
        Ok(staged)
    }
}

/// A file of a commit once staged: its path, its staged copy (`None`: a removal), its
/// target and the name its original is backed up under.
type Staged<'a> = (&'a PathBuf, Option<PathBuf>, PathBuf, Option<PathBuf>);

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
    /// The lock of a root this commit created, held until the commit ends.
    root_lock: Option<File>,
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

/// The refusal of a command whose new project directory another rkb command made meanwhile.
fn another_created(root: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "another rkb command created {dir} while this one was running (two `rkb init`s into the \
         same new directory?), so this one wrote nothing there.\n  Look at what the other one \
         wrote (its PROJECT); if it is not the project you meant, run this command again with \
         another directory (--dir <new-dir>)",
        dir = root.display()
    )
}

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
    // Under a regular file nothing exists; creating it fails later, at commit.
    read_optional(&root.join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaffold::Marker;
    use crate::scaffold::plan::Edit;

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
            .edit_at_marker("list.yaml", Marker::Crds, Edit::Insert, "- x.yaml")
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
            .edit_at_marker("mod.rs", Marker::Modules, Edit::Sorted, "pub mod cache;")
            .unwrap();
        assert_eq!(
            changes.read("PROJECT").unwrap().unwrap(),
            "domain: b\r\nresources: []\r\n"
        );
        assert_eq!(changes.read("lf.yaml").unwrap().unwrap(), "a: 2\n");
        assert_eq!(changes.read("mod.rs").unwrap().unwrap(), mods);
    }

    /// Found by an outside tester: the loser of two `rkb init`s into one new directory
    /// was told that an editor had changed a file.
    #[test]
    fn a_new_root_another_run_created_meanwhile_is_left_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("new");
        let mut changes = Changes::open(&root).unwrap();
        changes.create("PROJECT", "mine\n".into(), false).unwrap();
        // The other `rkb init --dir new` commits first.
        fs::create_dir(&root).unwrap();
        fs::write(root.join("PROJECT"), "theirs\n").unwrap();
        let err = format!("{:#}", changes.commit().unwrap_err());
        assert!(err.contains("another rkb command created"), "{err}");
        assert!(err.contains("--dir <new-dir>"), "{err}");
        assert!(!err.contains("editor"), "{err}");
        assert_eq!(
            fs::read_to_string(root.join("PROJECT")).unwrap(),
            "theirs\n"
        );
        assert_eq!(fs::read_dir(&root).unwrap().count(), 1);
    }

    #[test]
    fn a_file_another_run_made_in_a_new_root_before_this_one_plans_it_is_left_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("new");
        let mut changes = Changes::open(&root).unwrap();
        changes.create("PROJECT", "mine\n".into(), false).unwrap();
        // The other `rkb init --dir new` commits before this one plans its next file.
        fs::create_dir(&root).unwrap();
        fs::write(root.join("Makefile"), "theirs\n").unwrap();
        let err = format!(
            "{:#}",
            changes
                .create("Makefile", "mine\n".into(), false)
                .unwrap_err()
        );
        assert!(err.contains("another rkb command created"), "{err}");
        assert!(!err.contains("--force"), "{err}");
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
