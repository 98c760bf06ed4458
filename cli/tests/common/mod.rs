//! Helpers shared by rkb's integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Every file under `dir` (relative path -> bytes), skipping build output.
pub fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// Runs rkb in-process, as the binary would, returning its output or error text.
pub fn rkb(args: &[&str]) -> Result<String, String> {
    use clap::Parser;
    let cli = rkb::cli::Cli::try_parse_from(std::iter::once("rkb").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    rkb::commands::run(cli, &mut out).map_err(|e| format!("{e:#}"))?;
    Ok(String::from_utf8(out).unwrap())
}

/// The golden projects and the examples: every directory with a PROJECT file.
pub fn projects() -> Vec<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut out = Vec::new();
    for parent in ["testdata", "examples"] {
        let Ok(entries) = fs::read_dir(repo.join(parent)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.join("PROJECT").is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    assert!(
        out.len() >= 2,
        "expected the golden projects, found {out:?}"
    );
    out
}

/// Runs a test tool, failing with an install hint when it is missing.
pub fn tool(program: &str, args: &[&str], dir: &Path) -> std::process::Output {
    std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {program} ({e}); install the test tools with `bash .ci/install-tools`"
            )
        })
}

/// `kubectl kustomize <config>` in `project`: the YAML, which must build.
pub fn kustomize(project: &Path, config: &str) -> String {
    let built = tool("kubectl", &["kustomize", config], project);
    assert!(
        built.status.success(),
        "{}: kubectl kustomize {config} failed:\n{}",
        project.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    String::from_utf8(built.stdout).unwrap()
}

/// `kubectl kustomize config/default` of a project, which must build.
pub fn kustomize_default(project: &Path) -> String {
    kustomize(project, "config/default")
}

/// Every object in `file` passes `kubernetes-validate --strict` (run in `dir`), against
/// the schemas of the Kubernetes release envtest runs.
pub fn kubernetes_validate(file: &Path, dir: &Path) {
    rkb_envtest::kubernetes_validate(&[file], dir);
}

/// Makes `dir` look like a checkout of rkb to `--rkb-path`: the workspace manifest and the
/// crate directories of this checkout, linked.
#[allow(dead_code)]
pub fn stand_in_for_checkout(dir: &Path) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(repo.join("Cargo.toml"), dir.join("Cargo.toml")).unwrap();
    for (_, crate_dir) in rkb::rkb_crates::CRATES {
        std::os::unix::fs::symlink(repo.join(crate_dir), dir.join(crate_dir)).unwrap();
    }
}

/// A unified diff of a golden file (`old`, under testdata/) against what rkb generated.
pub fn unified_diff(path: &Path, old: &[u8], new: &[u8]) -> String {
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("testdata/{}", path.display()), "generated")
        .to_string()
}

/// Runs rkb in-process in `dir` (`--dir`), panicking with its message if it refuses.
pub fn rkb_in(dir: &Path, args: &[&str]) -> String {
    let mut full = args.to_vec();
    full.extend(["--dir", dir.to_str().unwrap()]);
    rkb(&full).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// `rkb init` of a project named demo in `dir`, taking rkb's crates from this checkout,
/// with `extra` flags.
pub fn init_demo(dir: &Path, extra: &[&str]) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut args = vec![
        "init",
        "--domain",
        "example.com",
        "--project-name",
        "demo",
        "--rkb-path",
        repo.to_str().unwrap(),
    ];
    args.extend(extra);
    rkb_in(dir, &args);
}

/// A copy of `project`'s config/ in a temporary directory with every optional section of
/// config/default and config/prometheus switched on, the way a user uncomments them:
/// [METRICS-WITH-CERTS], [PROMETHEUS], [PROMETHEUS-WITH-CERTS] and [NETWORK POLICY].
/// [SHARDING] is a way of running the manager rather than a section, and the Helm chart has
/// no switch for it: [`sharding_on`] switches it on alone.
pub fn all_sections_on(project: &Path) -> tempfile::TempDir {
    let (copy, switched) = sections_on(project, |section| section != "SHARDING");
    assert!(
        switched >= 8,
        "{}: only {switched} commented-out lines to switch on",
        project.display()
    );
    copy
}

/// A copy of `project`'s config/ with [PROMETHEUS] alone switched on in config/default.
pub fn prometheus_on(project: &Path) -> tempfile::TempDir {
    let (copy, switched) = sections_on(project, |section| section == "PROMETHEUS");
    assert_eq!(
        switched,
        1,
        "{}: [PROMETHEUS]'s one line",
        project.display()
    );
    copy
}

/// A copy of `project`'s config/ with [SHARDING] switched on in config/default.
pub fn sharding_on(project: &Path) -> tempfile::TempDir {
    let (copy, switched) = sections_on(project, |section| section == "SHARDING");
    assert_eq!(switched, 2, "{}: [SHARDING]'s two lines", project.display());
    copy
}

/// A copy of `project`'s config/ with the commented-out lines of the sections `on` accepts
/// uncommented, and how many. A section is what follows a `# [SECTION]` comment. A
/// commented-out YAML line is `#` right before the YAML (`#- ../prometheus`, `#  target:`,
/// `#patches:`); explanations are `# ` and a word, and stay.
fn sections_on(project: &Path, on: impl Fn(&str) -> bool) -> (tempfile::TempDir, usize) {
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&project.join("config"), &copy.path().join("config"));
    let mut switched = 0;
    for file in [
        "config/default/kustomization.yaml",
        "config/prometheus/kustomization.yaml",
    ] {
        let path = copy.path().join(file);
        let text = fs::read_to_string(&path).unwrap();
        let mut out = String::new();
        let mut section = "";
        for line in text.lines() {
            if let Some(tag) = line
                .strip_prefix("# [")
                .and_then(|rest| rest.split_once(']'))
            {
                section = tag.0;
            }
            let yaml = line
                .strip_prefix('#')
                .filter(|rest| rest.starts_with("  ") || !rest.starts_with([' ', '#']))
                .filter(|rest| !rest.is_empty())
                .filter(|_| on(section));
            match yaml {
                Some(rest) => {
                    switched += 1;
                    out.push_str(rest);
                }
                None => out.push_str(line),
            }
            out.push('\n');
        }
        fs::write(&path, out).unwrap();
    }
    (copy, switched)
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A copy of `project` (PROJECT, Makefile, Cargo.toml, hack/, src/ and config/) whose
/// webhook certificates `rkb edit --webhook-certs cert-manager` moved to cert-manager.
pub fn switched_to_cert_manager(project: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for file in ["PROJECT", "Makefile", "Cargo.toml"] {
        fs::copy(project.join(file), copy.path().join(file)).unwrap();
    }
    for dir in ["hack", "src", "config"] {
        copy_dir(&project.join(dir), &copy.path().join(dir));
    }
    rkb_in(copy.path(), &["edit", "--webhook-certs", "cert-manager"]);
    copy
}
