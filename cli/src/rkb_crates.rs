//! Where a generated project gets rkb's crates: by version from a registry, like every
//! other dependency, and, while they are not published, from an rkb source on this machine
//! through a `[patch.crates-io]` section (the project's `.cargo/config.toml`).
//!
//! An rkb source is either a checkout of rkb (`runtime/`, `core/`, ... beside each other)
//! or a directory of unpacked `.crate` files (`rkb-runtime-0.2.0/`, ...), which is what
//! a registry would serve.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Serialize;

/// The crates a project's `rkb-runtime` dependency pulls in, with their directory in a
/// checkout of rkb. Every one needs a patch entry: the packaged `rkb-runtime` names the
/// others by version.
pub const CRATES: &[(&str, &str)] = &[
    ("rkb-core", "core"),
    ("rkb-derive", "derive"),
    ("rkb-envtest", "envtest"),
    ("rkb-manager", "manager"),
    ("rkb-manifests", "manifests"),
    ("rkb-runtime", "runtime"),
    ("rkb-testing", "testing"),
];

/// The version of rkb's crates this rkb generates projects for: its own.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The requirement written into a project's Cargo.toml: `0.2` for rkb 0.2.x (cargo's
/// caret rules: a minor release of a 0.x crate may break, a patch release may not).
pub fn requirement() -> String {
    let mut parts = VERSION.split('.');
    let major = parts.next().unwrap_or("0");
    let minor = parts.next().unwrap_or("0");
    if major == "0" {
        format!("0.{minor}")
    } else {
        major.to_owned()
    }
}

/// One `[patch.crates-io]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Patch {
    pub name: &'static str,
    /// As written into the project: relative paths stay relative to the project.
    pub path: String,
    /// `path` as a TOML string, quoted and escaped (a path may hold `"`, `\` or spaces).
    pub path_literal: String,
}

impl Patch {
    pub fn new(name: &'static str, path: String) -> Self {
        // A JSON string is a valid TOML basic string: the same quotes, and only the escapes
        // TOML also has (\", \\, \b, \f, \n, \r, \t, \uXXXX).
        let path_literal = serde_json::to_string(&path).expect("a string serializes");
        Patch {
            name,
            path,
            path_literal,
        }
    }
}

/// What kind of rkb source a directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Checkout,
    Packages,
}

impl SourceKind {
    pub fn describe(self) -> &'static str {
        match self {
            SourceKind::Checkout => "a checkout of rkb",
            SourceKind::Packages => "rkb's packaged crates, unpacked",
        }
    }
}

/// The patch entries for the rkb source at `source` (as the user gave it), resolved from
/// the project directory `project_dir` when relative. `retry` is the user's `rkb init`
/// without its source, which the hints complete.
pub fn locate(
    source: &Path,
    project_dir: &Path,
    retry: &str,
) -> anyhow::Result<(SourceKind, Vec<Patch>)> {
    let written = source
        .to_str()
        .map(|s| s.trim_end_matches('/').to_owned())
        .context("the rkb path must be valid UTF-8 (it is written into .cargo/config.toml)")?;
    // Lexically: the project directory may not exist yet, so the OS cannot resolve `..` in it.
    let resolved = lexical_normalize(&std::path::absolute(project_dir.join(source))?);
    if !resolved.is_dir() {
        bail!(
            "the rkb source {} does not exist (resolved to {}).\n  \
             Pass a checkout of rkb or a directory of its unpacked crates, for example:  \
             {retry} --rkb-path /path/to/rkb\n  \
             or, once rkb's crates are on crates.io:  {retry} --rkb-source registry",
            source.display(),
            resolved.display()
        );
    }
    let checkout = CRATES
        .iter()
        .map(|(name, dir)| crate_at(&resolved, dir, name))
        .collect::<Vec<_>>();
    if checkout.iter().all(Result::is_ok) {
        let patches = CRATES
            .iter()
            .map(|(name, dir)| Patch::new(name, format!("{written}/{dir}")))
            .collect();
        return Ok((SourceKind::Checkout, patches));
    }
    let packaged = CRATES
        .iter()
        .map(|(name, _)| crate_at(&resolved, &format!("{name}-{VERSION}"), name))
        .collect::<Vec<_>>();
    if packaged.iter().all(Result::is_ok) {
        let patches = CRATES
            .iter()
            .map(|(name, _)| Patch::new(name, format!("{written}/{name}-{VERSION}")))
            .collect();
        return Ok((SourceKind::Packages, patches));
    }
    // Report against the layout the directory looks more like.
    let (layout, problems) = if checkout.iter().filter(|r| r.is_ok()).count()
        >= packaged.iter().filter(|r| r.is_ok()).count()
    {
        (
            "a checkout of rkb (core/, derive/, ..., runtime/)",
            checkout,
        )
    } else {
        (
            "unpacked crates (rkb-core-<version>/, ..., rkb-runtime-<version>/)",
            packaged,
        )
    };
    let problems: Vec<String> = problems.into_iter().filter_map(Result::err).collect();
    bail!(
        "{} does not hold rkb {VERSION}'s crates: as {layout} it lacks\n    {}\n  \
         Pass a checkout of rkb {VERSION} or a directory where its packages are unpacked, for \
         example:  {retry} --rkb-path /path/to/rkb",
        resolved.display(),
        problems.join("\n    ")
    )
}

/// Checks that `root/dir` holds the crate `name` at rkb's own version.
fn crate_at(root: &Path, dir: &str, name: &str) -> Result<(), String> {
    let manifest = root.join(dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|_| format!("{dir}/Cargo.toml (the crate {name})"))?;
    let table: toml::Table = text
        .parse()
        .map_err(|_| format!("{dir}/Cargo.toml: not valid TOML"))?;
    let package = table.get("package").and_then(toml::Value::as_table);
    let found = package
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str);
    if found != Some(name) {
        return Err(format!("{dir}/Cargo.toml: the crate {name}"));
    }
    // A checkout inherits the version from its workspace; a package has it spelled out.
    let version = match package.and_then(|p| p.get("version")) {
        Some(toml::Value::String(v)) => v.clone(),
        _ => workspace_version(root).unwrap_or_default(),
    };
    if version != VERSION {
        return Err(format!(
            "{dir}: {name} {VERSION} (found version {version:?}; use the rkb that matches the source)"
        ));
    }
    Ok(())
}

fn workspace_version(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let table: toml::Table = text.parse().ok()?;
    let version = table.get("workspace")?.get("package")?.get("version")?;
    version.as_str().map(str::to_owned)
}

/// The checkout this rkb was built from, when it still is one (`cargo install --path cli`).
pub fn default_source() -> Option<PathBuf> {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    checkout
        .join("runtime/Cargo.toml")
        .is_file()
        .then(|| checkout.to_path_buf())
}

/// `/a/b/../c` -> `/a/c` without touching the file system.
pub fn lexical_normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_requirement_is_caret_on_the_minor_for_0x() {
        assert_eq!(
            requirement(),
            format!("0.{}", VERSION.split('.').nth(1).unwrap())
        );
    }

    #[test]
    fn this_checkout_is_a_source() {
        let checkout = default_source().expect("tests run in a checkout");
        let (kind, patches) = locate(
            &checkout,
            Path::new("/elsewhere"),
            "rkb init --domain example.com",
        )
        .unwrap();
        assert_eq!(kind, SourceKind::Checkout);
        assert_eq!(patches.len(), CRATES.len());
        assert!(patches[5].path.ends_with("/runtime"), "{patches:?}");
    }

    #[test]
    fn unpacked_packages_are_a_source_and_relative_paths_stay_relative() {
        let tmp = tempfile::tempdir().unwrap();
        for (name, _) in CRATES {
            write(
                &tmp.path()
                    .join(format!("crates/{name}-{VERSION}/Cargo.toml")),
                &format!("[package]\nname = \"{name}\"\nversion = \"{VERSION}\"\n"),
            );
        }
        let project = tmp.path().join("op");
        let (kind, patches) = locate(
            Path::new("../crates"),
            &project,
            "rkb init --domain example.com",
        )
        .unwrap();
        assert_eq!(kind, SourceKind::Packages);
        assert_eq!(patches[0].path, format!("../crates/rkb-core-{VERSION}"));
    }

    #[test]
    fn paths_with_quotes_and_spaces_stay_valid_toml() {
        let tmp = tempfile::tempdir().unwrap();
        let odd = tmp.path().join("my \"rkb\" $HOME \\ copy");
        for (name, _) in CRATES {
            write(
                &odd.join(format!("{name}-{VERSION}/Cargo.toml")),
                &format!("[package]\nname = \"{name}\"\nversion = \"{VERSION}\"\n"),
            );
        }
        let (_, patches) = locate(&odd, tmp.path(), "rkb init --domain example.com").unwrap();
        let table: toml::Table = format!("p = {{ path = {} }}", patches[0].path_literal)
            .parse()
            .unwrap();
        assert_eq!(table["p"]["path"].as_str().unwrap(), patches[0].path);
    }

    #[test]
    fn a_directory_without_the_crates_is_refused_with_what_is_missing() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            &tmp.path().join("runtime/Cargo.toml"),
            "[package]\nname = \"rkb-runtime\"\nversion = \"0.0.1\"\n",
        );
        let message = locate(tmp.path(), tmp.path(), "rkb init --domain example.com")
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("core/Cargo.toml (the crate rkb-core)"),
            "{message}"
        );
        assert!(message.contains("found version \"0.0.1\""), "{message}");
        assert!(message.contains("--rkb-path"), "{message}");
        let missing = locate(
            &tmp.path().join("nope"),
            tmp.path(),
            "rkb init --domain example.com",
        )
        .unwrap_err();
        assert!(missing.to_string().contains("does not exist"), "{missing}");
    }
}
