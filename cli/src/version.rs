//! What PROJECT's `cliVersion` means: the rkb whose scaffold the project follows. A newer
//! rkb's project is refused (this rkb could undo or misread what it scaffolded); an older
//! one's is edited, with the changes to its scaffold since then named (CHANGELOG.md has
//! them all).

use std::path::Path;

use anyhow::bail;
use semver::Version;

/// This rkb.
pub const CURRENT: &str = env!("CARGO_PKG_VERSION");

/// CHANGELOG.md, through the link `cli/CHANGELOG.md` (a plain file in the package).
const CHANGELOG: &str = include_str!("../CHANGELOG.md");

/// What introduces a release's summary of the edits an older project needs.
const UPGRADE_NOTES: &str = "*Upgrade notes:* ";

/// Changes to generated projects that an older project needs by hand, newest first: the
/// version that made them and what to do. They are the *Upgrade notes* paragraphs of
/// CHANGELOG.md's release sections (`## <version>`), so the two cannot disagree.
fn upgrades() -> Vec<(Version, String)> {
    let mut upgrades = Vec::new();
    let mut release = None;
    let mut lines = CHANGELOG.lines();
    while let Some(line) = lines.next() {
        if let Some(heading) = line.strip_prefix("## ") {
            release = Version::parse(heading.trim()).ok();
        } else if let (Some(version), Some(first)) = (&release, line.strip_prefix(UPGRADE_NOTES)) {
            let mut paragraph = vec![first];
            paragraph.extend(lines.by_ref().take_while(|l| !l.trim().is_empty()));
            upgrades.push((version.clone(), paragraph.join(" ")));
        }
    }
    upgrades
}

/// Refuses a PROJECT written by a newer rkb, or with a `cliVersion` that is no version.
pub fn check_project(cli_version: Option<&str>, path: &Path) -> anyhow::Result<()> {
    let Some(written) = cli_version else {
        bail!(
            "{} has no cliVersion: rkb records there the version that scaffolded the project.\n  \
             Add the version of the rkb that generated it, e.g.  cliVersion: {CURRENT}",
            path.display()
        );
    };
    let Ok(written) = Version::parse(written) else {
        bail!(
            "{} has cliVersion {written:?}, which is not a version: rkb records there the version \
             that scaffolded the project, e.g. cliVersion: {CURRENT}",
            path.display()
        );
    };
    let current = current();
    if written > current {
        bail!(
            "{} was written by rkb {written}, newer than this rkb {current}: its scaffold may hold \
             what this rkb cannot read, and files it adds would follow an older scaffold.\n  \
             Use rkb {written} or newer:  cargo install rkb --version {written}  \
             (or `cargo install --path cli` in a checkout of that version)",
            path.display()
        );
    }
    Ok(())
}

/// For a project scaffolded by an older rkb: what changed in the scaffold since then.
pub fn upgrade_note(cli_version: &str) -> Option<String> {
    let written = Version::parse(cli_version).ok()?;
    if written >= current() {
        return None;
    }
    let changes: Vec<String> = upgrades()
        .into_iter()
        .filter(|(version, _)| *version > written)
        .map(|(version, what)| format!("  {version}: {what}"))
        .collect();
    let mut note = format!(
        "note: this project was scaffolded by rkb {written}; this is rkb {CURRENT}. What rkb adds \
         now follows {CURRENT}'s scaffold; the rest of the project keeps {written}'s until you \
         bring it forward: `rkb alpha update --from <rkb {written}>` merges it for you, and \
         CHANGELOG.md lists every change to generated projects."
    );
    if !changes.is_empty() {
        note.push_str("\n  Changes that need an edit:\n");
        note.push_str(&changes.join("\n"));
    }
    Some(note)
}

fn current() -> Version {
    Version::parse(CURRENT).expect("the crate version is semver")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_and_malformed_versions_are_refused_with_what_to_do() {
        let path = Path::new("PROJECT");
        assert!(check_project(Some(CURRENT), path).is_ok());
        assert!(check_project(Some("0.0.1"), path).is_ok());
        let newer = check_project(Some("99.0.0"), path).unwrap_err().to_string();
        assert!(newer.contains("rkb 99.0.0, newer than this rkb"), "{newer}");
        assert!(
            newer.contains("cargo install rkb --version 99.0.0"),
            "{newer}"
        );
        let bad = check_project(Some("x"), path).unwrap_err().to_string();
        assert!(bad.contains("not a version"), "{bad}");
        assert!(check_project(None, path).is_err());
    }

    #[test]
    fn older_projects_are_told_what_changed_since() {
        assert_eq!(upgrade_note(CURRENT), None);
        let note = upgrade_note("0.1.0").unwrap();
        assert!(note.contains("scaffolded by rkb 0.1.0"), "{note}");
        assert!(note.contains("0.2.0: rkb's crates by version"), "{note}");
    }

    #[test]
    fn upgrades_are_versions_newest_first_and_not_newer_than_rkb() {
        let versions: Vec<Version> = upgrades().into_iter().map(|(v, _)| v).collect();
        assert!(!versions.is_empty(), "CHANGELOG.md has no *Upgrade notes*");
        assert!(versions.windows(2).all(|w| w[0] > w[1]));
        assert!(versions.iter().all(|v| *v <= current()));
    }
}
