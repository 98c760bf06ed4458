//! An in-memory change set over a project directory, applied all at once.
//!
//! Every command first plans all its writes here (new files, regenerated files,
//! insertions at `+rkb:scaffold:` markers), validating as it goes. Only when the
//! whole plan is valid does [`Changes::commit`] stage each file next to its target
//! and rename it into place; if anything fails, what was already moved is restored,
//! so the user's directory is either fully updated or byte-for-byte unchanged.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

#[derive(Debug)]
struct Planned {
    /// Content on disk when planning started; `None` for a new file.
    original: Option<String>,
    content: String,
}

/// What [`Changes::commit`] did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Updated,
}

#[derive(Debug)]
pub struct Changes {
    root: PathBuf,
    files: BTreeMap<PathBuf, Planned>,
}

impl Changes {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Changes {
            root: root.into(),
            files: BTreeMap::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The planned content of `rel`, or what is on disk.
    pub fn read(&self, rel: &str) -> anyhow::Result<Option<String>> {
        if let Some(planned) = self.files.get(Path::new(rel)) {
            return Ok(Some(planned.content.clone()));
        }
        read_optional(&self.root.join(rel))
    }

    pub fn exists(&self, rel: &str) -> anyhow::Result<bool> {
        Ok(self.read(rel)?.is_some())
    }

    fn set(&mut self, rel: &str, content: String) -> anyhow::Result<()> {
        match self.files.get_mut(Path::new(rel)) {
            Some(planned) => planned.content = content,
            None => {
                let original = read_optional(&self.root.join(rel))?;
                self.files.insert(rel.into(), Planned { original, content });
            }
        }
        Ok(())
    }

    /// Plans a new file. An existing file is an error unless `overwrite` (i.e. `--force`
    /// on a file rkb owns).
    pub fn create(&mut self, rel: &str, content: String, overwrite: bool) -> anyhow::Result<()> {
        if !overwrite && self.exists(rel)? {
            bail!(
                "{rel} already exists; rkb does not overwrite files without --force \
                 (and --force only regenerates the files rkb owns for this API)"
            );
        }
        self.set(rel, content)
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
        self.set(rel, content()?)
    }

    /// Inserts `snippet` on the lines before the `+rkb:scaffold:<marker>` line, indented like
    /// the marker. Idempotent: a snippet already in the file is not inserted again.
    pub fn insert_at_marker(
        &mut self,
        rel: &str,
        marker: &str,
        snippet: &str,
    ) -> anyhow::Result<()> {
        self.edit_at_marker(rel, marker, |content| {
            insert_at_marker(content, marker, snippet)
        })
    }

    /// Inserts the one-line `snippet` into the block of lines right above the marker,
    /// keeping the block in rustfmt's order (its `reorder_modules`/imports rules), so a
    /// project stays `cargo fmt`-clean whatever order APIs are created in.
    pub fn insert_sorted_at_marker(
        &mut self,
        rel: &str,
        marker: &str,
        snippet: &str,
    ) -> anyhow::Result<()> {
        self.edit_at_marker(rel, marker, |content| {
            insert_sorted(content, marker, snippet.trim())
        })
    }

    /// Plans `edit` of the file that holds `marker`, if it changes anything.
    fn edit_at_marker(
        &mut self,
        rel: &str,
        marker: &str,
        edit: impl FnOnce(&str) -> anyhow::Result<String>,
    ) -> anyhow::Result<()> {
        let content = self.read(rel)?.with_context(|| {
            format!(
                "{rel} is missing; rkb inserts code there at the `+rkb:scaffold:{marker}` marker. \
                 Restore the file from a fresh `rkb init` or add the code by hand"
            )
        })?;
        let updated = edit(&content).with_context(|| format!("cannot update {rel}"))?;
        if updated != content {
            self.set(rel, updated)?;
        }
        Ok(())
    }

    /// Files whose content will change, relative to the root.
    pub fn pending(&self) -> impl Iterator<Item = (&Path, Written)> {
        self.files.iter().filter_map(|(path, p)| match &p.original {
            None => Some((path.as_path(), Written::Created)),
            Some(original) if *original != p.content => Some((path.as_path(), Written::Updated)),
            Some(_) => None,
        })
    }

    /// Writes every planned file, or none. Returns what changed, in path order.
    pub fn commit(self) -> anyhow::Result<Vec<(PathBuf, Written)>> {
        let written: Vec<(PathBuf, Written)> =
            self.pending().map(|(p, w)| (p.to_path_buf(), w)).collect();
        let mut tx = Transaction::default();
        let result = (|| -> anyhow::Result<()> {
            // Stage: everything that can fail (directories, disk space) happens before
            // any target file is touched.
            let mut staged = Vec::new();
            for (rel, _) in &written {
                let target = self.root.join(rel);
                let dir = target.parent().expect("a file under the root has a parent");
                tx.create_dir_all(dir)
                    .with_context(|| format!("cannot create directory {}", dir.display()))?;
                let temp = staging_path(&target);
                fs::write(&temp, &self.files[rel].content)
                    .with_context(|| format!("cannot write {}", temp.display()))?;
                tx.temps.push(temp.clone());
                staged.push((temp, target, self.files[rel].original.clone()));
            }
            // Swap: renames within one directory.
            for (temp, target, original) in staged {
                fs::rename(&temp, &target)
                    .with_context(|| format!("cannot replace {}", target.display()))?;
                tx.temps.retain(|t| *t != temp);
                tx.moved.push((target, original));
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(written),
            Err(error) => {
                tx.roll_back();
                Err(error.context("no files were changed"))
            }
        }
    }
}

/// Undo log of a commit in progress.
#[derive(Default)]
struct Transaction {
    created_dirs: Vec<PathBuf>,
    temps: Vec<PathBuf>,
    moved: Vec<(PathBuf, Option<String>)>,
}

impl Transaction {
    fn create_dir_all(&mut self, dir: &Path) -> io::Result<()> {
        let mut missing = Vec::new();
        let mut cursor = Some(dir);
        while let Some(d) = cursor {
            if d.as_os_str().is_empty() || d.exists() {
                break;
            }
            missing.push(d.to_path_buf());
            cursor = d.parent();
        }
        for d in missing.into_iter().rev() {
            fs::create_dir(&d)?;
            self.created_dirs.push(d);
        }
        Ok(())
    }

    /// Best effort: restores originals, deletes new files and staged copies, then
    /// the directories this commit created (deepest first).
    fn roll_back(self) {
        for (target, original) in self.moved.into_iter().rev() {
            let _ = match original {
                Some(content) => fs::write(&target, content),
                None => fs::remove_file(&target),
            };
        }
        for temp in self.temps {
            let _ = fs::remove_file(temp);
        }
        for dir in self.created_dirs.into_iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

fn staging_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("file");
    target.with_file_name(format!(".{name}.rkb-{}.tmp", std::process::id()))
}

fn read_optional(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::read_to_string(path) {
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

/// Index of the marker line, or an error telling how to restore it.
fn marker_line(lines: &[&str], marker: &str) -> anyhow::Result<usize> {
    let tag = format!("+rkb:scaffold:{marker}");
    lines
        .iter()
        .position(|line| line.trim_end().ends_with(&tag))
        .with_context(|| {
            format!(
                "its `{tag}` marker line is gone; rkb inserts generated code right above it. \
                 Put the marker back (see a freshly generated project) and run the command again"
            )
        })
}

/// `content` with `line` added to the contiguous block above the marker, in version-sort order.
fn insert_sorted(content: &str, marker: &str, line: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = content.lines().collect();
    let at = marker_line(&lines, marker)?;
    let mut start = at;
    while start > 0
        && !lines[start - 1].trim().is_empty()
        && !lines[start - 1].trim_start().starts_with("//")
    {
        start -= 1;
    }
    if lines[start..at].iter().any(|l| l.trim() == line) {
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

/// The text of `content` with `snippet` inserted before its marker line.
fn insert_at_marker(content: &str, marker: &str, snippet: &str) -> anyhow::Result<String> {
    let lines: Vec<&str> = content.lines().collect();
    let at = marker_line(&lines, marker)?;
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
    let mut inserted = String::new();
    for line in snippet_lines {
        if line.trim().is_empty() {
            inserted.push('\n');
        } else {
            inserted.push_str(indent);
            inserted.push_str(line.trim_start());
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
        let once = insert_at_marker(text, "items", "a(),").unwrap();
        assert_eq!(
            once,
            "fn f() {\n    let v = vec![\n        a(),\n        // +rkb:scaffold:items\n    ];\n}\n"
        );
        assert_eq!(insert_at_marker(&once, "items", "a(),").unwrap(), once);
        let twice = insert_at_marker(&once, "items", "b(),").unwrap();
        assert!(twice.contains("        a(),\n        b(),\n        // +rkb"));
    }

    #[test]
    fn sorted_insertion_follows_rustfmt_order() {
        let mut text = String::from("//! docs\n\n// +rkb:scaffold:versions\n");
        for version in ["v2", "v1alpha1", "v10", "v1", "v1beta1", "v1"] {
            text = insert_sorted(&text, "versions", &format!("pub mod {version};")).unwrap();
        }
        assert_eq!(
            text,
            "//! docs\n\npub mod v1;\npub mod v1alpha1;\npub mod v1beta1;\npub mod v2;\npub mod v10;\n// +rkb:scaffold:versions\n"
        );
    }

    #[test]
    fn missing_marker_is_an_actionable_error() {
        let err = insert_at_marker("nothing here\n", "items", "x").unwrap_err();
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
            "resources:\n# +rkb:scaffold:res\n",
        )
        .unwrap();
        let mut changes = Changes::new(dir.path());
        changes
            .create("a/b/new.txt", "new\n".into(), false)
            .unwrap();
        changes
            .insert_at_marker("list.yaml", "res", "- x.yaml")
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
            "resources:\n- x.yaml\n# +rkb:scaffold:res\n"
        );
    }

    #[test]
    fn refuses_to_overwrite_without_force() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("mine.rs"), "user code").unwrap();
        let mut changes = Changes::new(dir.path());
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
        let mut changes = Changes::new(dir.path());
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
