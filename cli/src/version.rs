//! What PROJECT's `cliVersion` means: the rkb whose scaffold the project follows. A newer
//! rkb's project is refused (this rkb could undo or misread what it scaffolded); an older
//! one's is edited, with the changes to its scaffold since then named (CHANGELOG.md has
//! them all).

use std::path::Path;

use anyhow::bail;
use semver::Version;

/// This rkb.
pub const CURRENT: &str = env!("CARGO_PKG_VERSION");

/// Changes to generated projects that an older project needs by hand, newest first: the
/// version that made them and what to do. Kept in step with CHANGELOG.md.
const UPGRADES: &[(&str, &str)] = &[(
    "0.2.0",
    "rkb's crates by version: in Cargo.toml, `rkb-runtime = { path = \"<rkb>/runtime\" }` becomes \
     `rkb-runtime = \"0.2\"` (and `{ version = \"0.2\", features = [\"testing\"] }` in \
     [dev-dependencies]), with a `.cargo/config.toml` whose [patch.crates-io] points at the rkb \
     source (`rkb init --dir /tmp/scratch` writes one to copy); in the Makefile, \
     `$(RKB_PATH)/envtest/setup-envtest.sh` becomes `$(RKB) setup-envtest` (`RKB ?= rkb`), and \
     `make image` builds the image without a container engine; a conversion webhook's file gets \
     the `+rkb:scaffold:spokes`, `spoke-impls` and `spoke-tests` markers, where a later version \
     joins as a spoke",
)];

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
    let changes: Vec<String> = UPGRADES
        .iter()
        .filter(|(version, _)| Version::parse(version).is_ok_and(|v| v > written))
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
        let versions: Vec<Version> = UPGRADES
            .iter()
            .map(|(v, _)| Version::parse(v).unwrap())
            .collect();
        assert!(versions.windows(2).all(|w| w[0] > w[1]));
        assert!(versions.iter().all(|v| *v <= current()));
    }
}
