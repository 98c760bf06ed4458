//! What a new project ships with beside its code: GitHub workflows that actionlint accepts
//! and that run the Makefile's own targets, and a dev container.
//!
//! actionlint is built by `.ci/install-tools` (`.ci/go-tools`) into ~/.cache/rkb/tools/bin.
//! Where it is missing, the actionlint test fails when `CI` is set, and is skipped with the
//! reason printed otherwise.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const WORKFLOWS: [&str; 3] = ["lint.yml", "test.yml", "test-e2e.yml"];

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // As a project outside rkb's checkout is: rkb's crates from the registry.
    common::rkb_in(
        dir.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "demo",
            "--rkb-source",
            "registry",
        ],
    );
    dir
}

/// actionlint from PATH, else from where `.ci/go-tools` puts it.
fn actionlint() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("actionlint"));
    let cache = std::env::var_os("RKB_TOOLS_BIN")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|c| Path::new(&c).join("rkb/tools/bin")))
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/rkb/tools/bin")))
        .map(|dir| dir.join("actionlint"));
    on_path.chain(cache).find(|path| path.is_file())
}

fn run_actionlint(actionlint: &Path, dir: &Path, files: &[&str]) -> std::process::Output {
    Command::new(actionlint)
        .arg("-no-color")
        .args(files)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn the_workflows_pass_actionlint() {
    let Some(actionlint) = actionlint() else {
        let reason = "actionlint is not installed (on PATH or in ~/.cache/rkb/tools/bin); \
                      build it with `bash .ci/go-tools`";
        assert!(std::env::var_os("CI").is_none(), "CI is set and {reason}");
        eprintln!("SKIPPED the_workflows_pass_actionlint: {reason}");
        return;
    };
    let dir = project();
    let files: Vec<String> = WORKFLOWS
        .iter()
        .map(|w| format!(".github/workflows/{w}"))
        .collect();
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let output = run_actionlint(&actionlint, dir.path(), &files);
    assert!(
        output.status.success(),
        "actionlint rejects the generated workflows:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    // The same actionlint refuses a workflow with a mistake in it, so a pass means something.
    let broken = dir.path().join(".github/workflows/broken.yml");
    let lint = std::fs::read_to_string(dir.path().join(".github/workflows/lint.yml")).unwrap();
    std::fs::write(
        &broken,
        lint.replace(
            "runs-on: ubuntu-latest",
            "runs-on: ${{ github.no_such_context }}",
        ),
    )
    .unwrap();
    let output = run_actionlint(&actionlint, dir.path(), &[".github/workflows/broken.yml"]);
    assert!(
        !output.status.success()
            && String::from_utf8_lossy(&output.stdout).contains("no_such_context"),
        "actionlint accepts a broken workflow:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Each workflow runs the Makefile target it is named for (a target the Makefile has), on
/// pushes and pull requests, with read-only repository access.
#[test]
fn the_workflows_run_the_makefile_targets() {
    let dir = project();
    let makefile = std::fs::read_to_string(dir.path().join("Makefile")).unwrap();
    for (workflow, target) in WORKFLOWS.iter().zip(["lint", "test", "test-e2e"]) {
        let text =
            std::fs::read_to_string(dir.path().join(".github/workflows").join(workflow)).unwrap();
        let yaml: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        assert!(
            makefile.contains(&format!("\n{target}: ")),
            "the Makefile has no {target} target"
        );
        let runs: Vec<&str> = yaml["jobs"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|job| job["steps"].as_array().unwrap())
            .filter_map(|step| step["run"].as_str())
            .collect();
        assert!(
            runs.iter().any(|run| run
                .lines()
                .any(|l| l.starts_with(&format!("make {target}")))),
            "{workflow} does not run `make {target}`: {runs:?}"
        );
        assert!(
            yaml["on"]["push"].is_null() && yaml["on"].get("push").is_some(),
            "{workflow}"
        );
        assert!(yaml["on"].get("pull_request").is_some(), "{workflow}");
        assert_eq!(yaml["permissions"]["contents"], "read", "{workflow}");
    }
    // test-e2e loads the image into the cluster it creates: the Makefile does that when the
    // current context is kind-$(KIND_CLUSTER), so both name the same cluster.
    let e2e = std::fs::read_to_string(dir.path().join(".github/workflows/test-e2e.yml")).unwrap();
    assert!(
        e2e.contains("kind create cluster --name \"$KIND_CLUSTER\""),
        "{e2e}"
    );
    assert!(
        e2e.contains("make test-e2e KIND_CLUSTER=\"$KIND_CLUSTER\""),
        "{e2e}"
    );
    assert!(makefile.contains("kind-$(KIND_CLUSTER)"), "{makefile}");
}

#[test]
fn the_dev_container_has_rust_go_docker_and_kubectl() {
    let dir = project();
    let text = std::fs::read_to_string(dir.path().join(".devcontainer/devcontainer.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["name"], "demo");
    assert!(
        json["image"]
            .as_str()
            .unwrap()
            .contains("devcontainers/rust"),
        "{json}"
    );
    let features = json["features"].as_object().unwrap();
    for feature in ["/go:", "/docker-in-docker:", "/kubectl-helm-minikube:"] {
        assert!(
            features.keys().any(|k| k.contains(feature)),
            "no {feature} feature in {features:?}"
        );
    }
    let post = json["postCreateCommand"].as_str().unwrap();
    assert!(post.contains("cargo install --locked rkb"), "{post}");
    assert!(post.contains("sigs.k8s.io/kind@"), "{post}");
}

/// A stand-in for cargo that the Makefile's `$(CARGO) install` runs: it logs its arguments,
/// fails where the test says (`FAIL_PATH`: a `--path` install; `FAIL_REGISTRY`: one from
/// crates.io) and otherwise "installs" this rkb into `--root`.
const FAKE_CARGO: &str = r#"#!/bin/sh
echo "$*" >> "$CARGO_LOG"
root=""; from_path=""; prev=""
for arg in "$@"; do
  [ "$prev" = "--root" ] && root="$arg"
  [ "$arg" = "--path" ] && from_path=1
  prev="$arg"
done
if [ -n "$from_path" ] && [ -n "$FAIL_PATH" ]; then echo "error: the source does not build" >&2; exit 101; fi
if [ -z "$from_path" ] && [ -n "$FAIL_REGISTRY" ]; then echo "error: no such crate" >&2; exit 101; fi
mkdir -p "$root/bin" && cp "$RKB_BIN" "$root/bin/rkb"
"#;

/// PATH without the directories that hold an `rkb`.
fn path_without_rkb() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).filter(|dir| !dir.join("rkb").exists());
    std::env::join_paths(dirs).unwrap()
}

/// Runs make in `dir` with the fake cargo, no rkb on PATH, and `env`: (success, stdout +
/// stderr).
fn make(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let cargo = dir.join("fake-cargo");
    if !cargo.exists() {
        std::fs::write(&cargo, FAKE_CARGO).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let output = Command::new("make")
        .args(args)
        .arg(format!("CARGO={}", cargo.display()))
        .current_dir(dir)
        .env_remove("RKB")
        .env_remove("MAKEFLAGS")
        .env("CARGO_LOG", dir.join("cargo.log"))
        .env("RKB_BIN", env!("CARGO_BIN_EXE_rkb"))
        .env("PATH", path_without_rkb())
        .envs(env.iter().copied())
        .output()
        .expect("make runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// `make` finds rkb at PROJECT's cliVersion on PATH or installs it into bin/ on first use:
/// from the rkb source `.cargo/config.toml` names, else from crates.io, and says what to do
/// when neither works.
/// (cargo is a stand-in here; the real `cargo install` of both is what the Makefile runs.)
#[test]
fn make_finds_or_installs_rkb_itself_at_the_projects_version() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &[]);
    let log = || std::fs::read_to_string(dir.join("cargo.log")).unwrap_or_default();

    // Found on PATH at PROJECT's cliVersion: linked, nothing installed.
    let on_path = scratch.path().join("on-path");
    std::fs::create_dir(&on_path).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rkb"), on_path.join("rkb")).unwrap();
    let mut path = std::ffi::OsString::from(&on_path);
    path.push(":");
    path.push(path_without_rkb());
    let (ok, out) = make(&dir, &["rkb"], &[("PATH", path.to_str().unwrap())]);
    assert!(ok, "{out}");
    assert_eq!(log(), "", "rkb was installed although PATH has it");
    assert_eq!(
        std::fs::canonicalize(dir.join("bin/rkb")).unwrap(),
        std::fs::canonicalize(env!("CARGO_BIN_EXE_rkb")).unwrap()
    );
    std::fs::remove_dir_all(dir.join("bin")).unwrap();

    // From the checkout .cargo/config.toml patches rkb's crates to.
    let (ok, out) = make(&dir, &["rkb"], &[]);
    assert!(ok, "{out}");
    let install = log();
    assert!(
        install.starts_with(&format!(
            "install --quiet --locked --path {}/cli --root ",
            repo.display()
        )),
        "{install}"
    );
    let rkb = dir.join("bin/rkb");
    assert_eq!(
        std::fs::read_link(&rkb).unwrap(),
        Path::new(&format!("rkb-{version}"))
    );
    let printed = Command::new(&rkb).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout).trim(),
        format!("rkb {version}")
    );
    // Once: the next run finds it.
    let (ok, out) = make(&dir, &["rkb"], &[]);
    assert!(ok, "{out}");
    assert_eq!(log(), install, "rkb was installed twice");
    // Every target that runs rkb runs bin/rkb.
    let (ok, planned) = make(&dir, &["-n", "setup-envtest", "test", "image"], &[]);
    assert!(ok, "{planned}");
    let runs: Vec<&str> = planned
        .lines()
        .filter(|l| l.contains("setup-envtest --") || l.contains("build-image"))
        .collect();
    assert_eq!(runs.len(), 3, "{planned}");
    for line in runs {
        assert!(
            line.contains(&format!("{}/bin/rkb ", dir.display())),
            "{line}"
        );
    }

    // When the source does not build: crates.io, at PROJECT's cliVersion.
    std::fs::remove_dir_all(dir.join("bin")).unwrap();
    let (ok, out) = make(&dir, &["rkb"], &[("FAIL_PATH", "1")]);
    assert!(ok, "{out}");
    assert!(
        log().ends_with(&format!(
            "install --quiet --locked rkb --version ={version} --root {}/bin/.rkb-install\n",
            dir.display()
        )),
        "{}",
        log()
    );

    // Neither: what failed, and what to do.
    std::fs::remove_dir_all(dir.join("bin")).unwrap();
    let (ok, out) = make(
        &dir,
        &["setup-envtest"],
        &[("FAIL_PATH", "1"), ("FAIL_REGISTRY", "1")],
    );
    assert!(!ok, "{out}");
    let fragments = [
        format!(
            "error: cannot install rkb {version} (PROJECT's cliVersion): {}/cli did not build, \
             and crates.io has no rkb {version} or is out of reach.",
            repo.display()
        ),
        "  Install rkb yourself and name it, e.g.:  cargo install --locked --path <rkb checkout>/cli \
         && make setup-envtest RKB=rkb"
            .to_owned(),
    ];
    for fragment in &fragments {
        assert!(
            out.contains(fragment.as_str()),
            "{fragment:?} not in:\n{out}"
        );
    }
    assert!(!dir.join("bin/rkb").exists(), "a broken bin/rkb was left");
}
