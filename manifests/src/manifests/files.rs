//! The files on disk: [`Manifests::write`] writes what changed and removes what is
//! stale, [`Manifests::check`] reports how disk differs ([`Drift`]).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::error::{io_err, read_if_exists};
use super::{CRD_DIR, Error, Manifests, NAMESPACED_RBAC_DIR, NAMESPACED_RBAC_FILES, released};

/// How a file on disk differs from the rendered manifests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    /// The file should exist but does not.
    Missing(PathBuf),
    /// The file's content differs.
    Changed(PathBuf),
    /// The file belongs to no CRD any more.
    Stale(PathBuf),
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drift::Missing(p) => write!(f, "{} (missing)", p.display()),
            Drift::Changed(p) => write!(f, "{} (changed)", p.display()),
            Drift::Stale(p) => write!(f, "{} (stale)", p.display()),
        }
    }
}

/// What [`Manifests::write`] did; paths relative to the project root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Files created or rewritten.
    pub written: Vec<PathBuf>,
    /// Files that already had the right content (left untouched).
    pub unchanged: Vec<PathBuf>,
    /// Stale CRD files removed.
    pub removed: Vec<PathBuf>,
    /// What the size policy did to fit CRDs into their budget.
    pub notes: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.written.is_empty() && self.removed.is_empty() {
            write!(f, "manifests: {} files up to date", self.unchanged.len())?;
        } else {
            write!(f, "manifests:")?;
            if !self.written.is_empty() {
                write!(f, " wrote {}", list(&self.written))?;
            }
            if !self.removed.is_empty() {
                let sep = if self.written.is_empty() { "" } else { ";" };
                write!(f, "{sep} removed {}", list(&self.removed))?;
            }
            write!(f, " ({} unchanged)", self.unchanged.len())?;
        }
        for note in &self.notes {
            write!(f, "\nnote: {note}")?;
        }
        Ok(())
    }
}

impl Manifests {
    /// Writes changed files only (so mtimes of unchanged files stay), and
    /// removes stale `config/crd/bases/*.yaml` files that no CRD renders to.
    /// Nothing is written if rendering fails, or if a CRD breaks the released one
    /// (see [`Manifests::allow_breaking`] and [`crate::compat`]).
    pub fn write(&self, project_root: &Path) -> Result<Report, Error> {
        let (files, mut notes) = self.render_with_notes()?;
        let gate = Self::gate(project_root, &files, &self.allow_breaking)?;
        released::record(project_root, &self.allow_breaking)?;
        notes.extend(gate.note());
        let mut report = Report {
            notes,
            ..Report::default()
        };
        for (rel, content) in &files {
            let path = project_root.join(rel);
            if read_if_exists(&path)?.as_deref() == Some(content.as_str()) {
                report.unchanged.push(rel.clone());
                continue;
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
            }
            std::fs::write(&path, content).map_err(io_err("write", &path))?;
            report.written.push(rel.clone());
        }
        for rel in stale_files(project_root, &files)? {
            let path = project_root.join(&rel);
            std::fs::remove_file(&path).map_err(io_err("remove", &path))?;
            report.removed.push(rel);
        }
        // The overlay's directory goes with its files, unless something else is in it.
        let _ = std::fs::remove_dir(project_root.join(NAMESPACED_RBAC_DIR));
        Ok(report)
    }

    /// Fails with [`Error::OutOfDate`] when any rendered file differs from
    /// disk or a stale CRD file is left, and with [`Error::Breaking`] when a CRD breaks
    /// the released one; writes nothing.
    pub fn check(&self, project_root: &Path) -> Result<(), Error> {
        self.check_files(project_root).map(drop)
    }

    /// [`Manifests::check`], returning how many files are up to date.
    pub(super) fn check_files(&self, project_root: &Path) -> Result<usize, Error> {
        let files = self.render()?;
        Self::gate(project_root, &files, &[])?;
        let mut drift = Vec::new();
        for (rel, content) in &files {
            match read_if_exists(&project_root.join(rel))? {
                None => drift.push(Drift::Missing(rel.clone())),
                Some(disk) if disk != *content => drift.push(Drift::Changed(rel.clone())),
                Some(_) => {}
            }
        }
        drift.extend(
            stale_files(project_root, &files)?
                .into_iter()
                .map(Drift::Stale),
        );
        if drift.is_empty() {
            Ok(files.len())
        } else {
            Err(Error::OutOfDate { files: drift })
        }
    }
}

/// The files `make manifests` owns that nothing renders to any more: CRD files, and the
/// namespaced-RBAC overlay once no rule names another namespace.
fn stale_files(root: &Path, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, Error> {
    let mut stale = stale_crd_files(root, files)?;
    for rel in NAMESPACED_RBAC_FILES.map(PathBuf::from) {
        let path = root.join(&rel);
        if !files.contains_key(&rel) && path.try_exists().map_err(io_err("read", &path))? {
            stale.push(rel);
        }
    }
    Ok(stale)
}

/// `*.yaml` files in the CRD directory that `files` does not contain, sorted.
fn stale_crd_files(root: &Path, files: &BTreeMap<PathBuf, String>) -> Result<Vec<PathBuf>, Error> {
    let dir = root.join(CRD_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(io_err("list", &dir)(err)),
    };
    let mut stale = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err("list", &dir))?;
        let rel = Path::new(CRD_DIR).join(entry.file_name());
        let is_yaml = rel.extension().is_some_and(|e| e == "yaml");
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_yaml && is_file && !files.contains_key(&rel) {
            stale.push(rel);
        }
    }
    stale.sort();
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_summary() {
        let p = |s: &str| PathBuf::from(s);
        let mut report = Report {
            unchanged: vec![p("a"), p("b")],
            ..Report::default()
        };
        assert_eq!(report.to_string(), "manifests: 2 files up to date");
        report.written = vec![p("c")];
        assert_eq!(report.to_string(), "manifests: wrote c (2 unchanged)");
        report.removed = vec![p("d")];
        assert_eq!(
            report.to_string(),
            "manifests: wrote c; removed d (2 unchanged)"
        );
    }

    #[test]
    fn notes_follow_the_summary() {
        let report = Report {
            written: vec![PathBuf::from("a")],
            notes: vec!["CRD x is big".into()],
            ..Report::default()
        };
        assert_eq!(
            report.to_string(),
            "manifests: wrote a (0 unchanged)\nnote: CRD x is big"
        );
    }
}
