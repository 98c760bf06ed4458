//! What a new project ships with beside its code: GitHub workflows that actionlint accepts
//! and that run the Makefile's own targets, and a dev container.
//!
//! actionlint is built by `.ci/install-tools` (`.ci/go-tools`) into ~/.cache/rkb/tools/bin.
//! Where it is missing, the actionlint test fails when `CI` is set, and is skipped with the
//! reason printed otherwise.

use crate::common;

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
    // With the autoupdate plugin's workflow too.
    common::rkb_in(dir.path(), &["edit", "--plugins", "autoupdate"]);
    let files: Vec<String> = WORKFLOWS
        .iter()
        .chain(&["auto-update.yml"])
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
        // rkb comes from the Makefile, at PROJECT's cliVersion, never from a cargo install
        // of another version.
        assert!(
            runs.iter().all(|run| !run.contains("cargo install")),
            "{workflow}: {runs:?}"
        );
    }
    let test = std::fs::read_to_string(dir.path().join(".github/workflows/test.yml")).unwrap();
    assert!(test.contains("\n      run: make rkb\n"), "{test}");
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
    // rkb is the Makefile's (PROJECT's cliVersion in bin/), on PATH in the container.
    let post = json["postCreateCommand"].as_str().unwrap();
    assert!(post.starts_with("make rkb setup-envtest && "), "{post}");
    assert_eq!(
        json["remoteEnv"]["PATH"],
        "${containerWorkspaceFolder}/bin:${containerEnv:PATH}"
    );
    assert!(post.contains("sigs.k8s.io/kind@"), "{post}");
}

/// A stand-in for cargo that the Makefile runs: it logs its arguments and does nothing, but
/// for `install`, which fails where the test says (`FAIL_PATH`: a `--path` install;
/// `FAIL_REGISTRY`: one from crates.io) and otherwise "installs" this rkb into `--root`.
const FAKE_CARGO: &str = r#"#!/bin/sh
echo "$*" >> "$CARGO_LOG"
[ "$1" = install ] || exit 0
root=""; from_path=""; prev=""
for arg in "$@"; do
  [ "$prev" = "--root" ] && root="$arg"
  [ "$arg" = "--path" ] && from_path=1
  prev="$arg"
done
if [ -n "$from_path" ] && [ -n "$FAIL_PATH" ]; then echo "error: the source does not build" >&2; exit 101; fi
if [ -z "$from_path" ] && [ -n "$FAIL_REGISTRY" ]; then echo "error: no such crate" >&2; exit 101; fi
[ -n "$root" ] || { echo "error: install without --root" >&2; exit 101; }
mkdir -p "$root/bin" && cp "$RKB_BIN" "$root/bin/rkb"
"#;

/// PATH with an `rkb` of another version first, which the Makefile must not take.
fn path_with_another_rkb() -> std::ffi::OsString {
    let dir = std::env::temp_dir().join(format!("rkb-workflows-{}", std::process::id()));
    let rkb = dir.join("rkb");
    if !rkb.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&rkb, "#!/bin/sh\necho 'rkb 0.0.0-another'\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rkb, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path))).unwrap()
}

/// Runs make in `dir` with the fake cargo, an rkb of another version first on PATH, and
/// `env`: (success, stdout + stderr).
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
        .env("PATH", path_with_another_rkb())
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
    path.push(path_with_another_rkb());
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

    // With the helm plugin, `make manifests` runs rkb too.
    common::rkb_in(&dir, &["edit", "--plugins", "helm", "--no-chart"]);
    std::fs::remove_dir_all(dir.join("bin")).unwrap();
    let (ok, planned) = make(&dir, &["-n", "manifests"], &[]);
    assert!(ok, "{planned}");
    let install = planned
        .find("cargo install")
        .expect("rkb is installed first");
    let runs = planned
        .find(&format!("{}/bin/rkb edit --plugins helm", dir.display()))
        .expect("manifests runs bin/rkb");
    assert!(install < runs, "{planned}");
    make(&dir, &["rkb"], &[]);

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

/// The autoupdate workflow's install step: `make rkb RKB_VERSION=<newer>` puts that rkb at
/// bin/rkb, from crates.io, whatever PROJECT's cliVersion is.
/// (cargo is a stand-in here, as above.)
#[test]
fn make_rkb_installs_the_version_it_is_given() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &["--plugins", "autoupdate"]);
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/auto-update.yml")).unwrap();
    assert!(
        workflow.contains("run: make rkb RKB_VERSION=\"$RKB_VERSION\""),
        "{workflow}"
    );
    let (ok, out) = make(&dir, &["rkb", "RKB_VERSION=9.8.7"], &[("FAIL_PATH", "1")]);
    assert!(ok, "{out}");
    let log = std::fs::read_to_string(dir.join("cargo.log")).unwrap();
    assert!(
        log.ends_with(&format!(
            "install --quiet --locked rkb --version =9.8.7 --root {}/bin/.rkb-install\n",
            dir.display()
        )),
        "{log}"
    );
    assert_eq!(
        std::fs::read_link(dir.join("bin/rkb")).unwrap(),
        Path::new("rkb-9.8.7")
    );
}

/// kubebuilder's kind targets and `lint-fix`: `setup-test-e2e` creates the kind cluster
/// unless it exists, `cleanup-test-e2e` deletes it, `lint-fix` applies clippy's and
/// rustfmt's fixes. kind, kubectl and cargo are stand-ins that log what they were asked.
#[test]
fn the_makefile_has_kubebuilders_kind_and_lint_fix_targets() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &[]);
    let tool = |name: &str, body: &str| {
        let path = scratch.path().join(name);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho \"{name} $*\" >> \"$CARGO_LOG\"\n{body}"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let kind = tool(
        "kind",
        "[ \"$1 $2\" = \"get clusters\" ] && printf '%s' \"$KIND_CLUSTERS\"\nexit 0\n",
    );
    let kubectl = tool("kubectl", "exit 0\n");
    let tools = [
        format!("KIND={}", kind.display()),
        format!("KUBECTL={}", kubectl.display()),
    ];
    let log = || std::fs::read_to_string(dir.join("cargo.log")).unwrap_or_default();
    let run = |target: &str, env: &[(&str, &str)]| {
        std::fs::remove_file(dir.join("cargo.log")).ok();
        let mut args = vec![target];
        args.extend(tools.iter().map(String::as_str));
        let (ok, out) = make(&dir, &args, env);
        assert!(ok, "make {target}: {out}");
        log()
    };

    assert_eq!(
        run("setup-test-e2e", &[("KIND_CLUSTERS", "other\n")]),
        "kind get clusters\nkind create cluster --name kind --wait 120s\n"
    );
    assert_eq!(
        run("setup-test-e2e", &[("KIND_CLUSTERS", "other\nkind\n")]),
        "kind get clusters\nkubectl config use-context kind-kind\n"
    );
    assert_eq!(
        run("cleanup-test-e2e", &[]),
        "kind delete cluster --name kind\n"
    );
    assert_eq!(
        run("lint-fix", &[]),
        // Both crates of the workspace by name: one operator of a larger workspace at a time.
        "clippy --fix --allow-dirty --allow-staged -p demo -p demo-api --all-targets\n\
         clippy --fix --allow-dirty --allow-staged --test e2e\n\
         fmt --all\n\
         clippy -p demo -p demo-api --all-targets -- -D warnings\n\
         clippy --test e2e -- -D warnings\n"
    );
    // Without kind: what to install.
    let (ok, out) = make(&dir, &["setup-test-e2e", "KIND=no-such-kind"], &[]);
    assert!(
        !ok && out.contains("setup-test-e2e: no-such-kind is not installed; install kind"),
        "{out}"
    );
}

/// A new project has kubebuilder's AGENTS.md and a lint configuration, clippy.toml and
/// rustfmt.toml, that clippy and rustfmt accept; the generated code is formatted by it.
#[test]
fn new_projects_have_agents_md_and_a_lint_configuration_the_tools_accept() {
    let project = project();
    let dir = project.path();
    let agents = std::fs::read_to_string(dir.join("AGENTS.md")).unwrap();
    for rule in [
        "make manifests",
        "make test",
        "make lint",
        "+rkb:scaffold:",
        "rkb create api",
    ] {
        assert!(
            agents.contains(rule),
            "AGENTS.md does not mention {rule}:\n{agents}"
        );
    }

    // rustfmt, run on the generated sources in the project, finds rustfmt.toml there.
    let mut sources = Vec::new();
    let mut stack = vec![dir.join("src"), dir.join("tests")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(path);
            }
        }
    }
    let formatted = Command::new("rustfmt")
        .arg("--check")
        .args(&sources)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        formatted.status.success(),
        "{}{}",
        String::from_utf8_lossy(&formatted.stdout),
        String::from_utf8_lossy(&formatted.stderr)
    );

    // clippy reads clippy.toml, and refuses a key it does not know: the file is checked.
    let krate = tempfile::tempdir().unwrap();
    std::fs::create_dir(krate.path().join("src")).unwrap();
    std::fs::write(
        krate.path().join("Cargo.toml"),
        "[package]\nname = \"lint-config\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(krate.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    let clippy_toml = std::fs::read_to_string(dir.join("clippy.toml")).unwrap();
    let clippy = |config: &str| {
        std::fs::write(krate.path().join("clippy.toml"), config).unwrap();
        let output = Command::new("cargo")
            .args(["clippy", "--quiet", "--", "-D", "warnings"])
            .current_dir(krate.path())
            .env("CARGO_TARGET_DIR", krate.path().join("target"))
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (ok, err) = clippy(&clippy_toml);
    assert!(ok, "clippy refuses the project's clippy.toml:\n{err}");
    let (ok, err) = clippy(&format!("{clippy_toml}no-such-setting = true\n"));
    assert!(!ok && err.contains("no-such-setting"), "{err}");
}

/// The autoupdate workflow's first step, run as GitHub runs it (`bash -e`), with a stand-in
/// for `cargo search`: it names the newest rkb on crates.io (or the one asked for), and
/// skips the update when PROJECT is on it already or `origin` has its branch.
#[test]
fn the_autoupdate_workflow_updates_only_to_a_newer_rkb_that_waits_for_no_review() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &["--plugins", "autoupdate"]);
    let text = std::fs::read_to_string(dir.join(".github/workflows/auto-update.yml")).unwrap();
    let yaml: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
    let step = yaml["jobs"]["auto-update"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|step| step["id"] == "versions")
        .expect("a step with id versions");
    let script = step["run"].as_str().unwrap();
    let git = |args: &[&str]| {
        let output = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}");
    };
    let origin = scratch.path().join("origin.git");
    git(&["init", "-q", "--bare", origin.to_str().unwrap()]);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "scaffold"]);
    git(&["remote", "add", "origin", origin.to_str().unwrap()]);
    git(&["push", "-q", "origin", "main"]);

    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\n[ \"$1 $2\" = \"search rkb\" ] || exit 1\n[ -n \"$NEWEST\" ] && echo \"rkb = \\\"$NEWEST\\\"    # Kubebuilder for Rust\"\necho \"rkb-other = \\\"5.0.0\\\"    # another\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    // (success, what it wrote to GITHUB_OUTPUT, what it printed)
    let run = |newest: &str, requested: &str| {
        let outputs = scratch.path().join("outputs");
        std::fs::write(&outputs, "").unwrap();
        let output = Command::new("bash")
            .args(["-e", "-c", script])
            .current_dir(&dir)
            .env("PATH", &path)
            .env("NEWEST", newest)
            .env("REQUESTED", requested)
            .env("GITHUB_OUTPUT", &outputs)
            .output()
            .unwrap();
        (
            output.status.success(),
            std::fs::read_to_string(&outputs).unwrap(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let current = env!("CARGO_PKG_VERSION");

    assert_eq!(run("9.9.9", ""), (true, "to=9.9.9\n".into(), String::new()));
    assert_eq!(
        run("9.9.9", "9.10.0"),
        (true, "to=9.10.0\n".into(), String::new())
    );
    let (ok, outputs, printed) = run(current, "");
    assert!(
        ok && outputs == format!("skip=true\nto={current}\n"),
        "{outputs}"
    );
    assert!(printed.contains("is on rkb"), "{printed}");
    let (ok, _, printed) = run("", "");
    assert!(
        !ok && printed.contains("::error::crates.io has no rkb"),
        "{printed}"
    );

    let branch = format!("rkb-update-from-{current}-to-9.9.9");
    git(&["push", "-q", "origin", &format!("main:{branch}")]);
    let (ok, outputs, printed) = run("9.9.9", "");
    assert!(ok && outputs == "skip=true\nto=9.9.9\n", "{outputs}");
    assert!(
        printed.contains(&format!("{branch} waits for review")),
        "{printed}"
    );
}
