//! `rkb alpha update`: with this rkb as the older one the project comes back unchanged; with
//! a stand-in for an older rkb (this one, then a script that alters its scaffold) files
//! merge cleanly or conflict as the three-way rules say; bad input is refused with
//! nothing written.

use crate::common;
mod git;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

const RKB: &str = env!("CARGO_BIN_EXE_rkb");

/// A project of this rkb with an API, a controller and a defaulting webhook.
fn project(root: &Path) -> PathBuf {
    let dir = root.join("project");
    let d = dir.to_str().unwrap();
    let steps: &[&[&str]] = &[
        &[
            "init",
            "--dir",
            d,
            "--domain",
            "example.com",
            "--project-name",
            "demo",
            "--rkb-source",
            "registry",
        ],
        &[
            "create",
            "api",
            "--dir",
            d,
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ],
        &[
            "create",
            "webhook",
            "--dir",
            d,
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
    ];
    for step in steps {
        common::rkb(step).unwrap_or_else(|e| panic!("rkb {step:?}: {e}"));
    }
    dir
}

/// Runs the rkb binary (its exit status is part of what is tested).
fn rkb_bin(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = std::process::Command::new(RKB);
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn update(project: &Path, from: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "alpha",
        "update",
        "--dir",
        project.to_str().unwrap(),
        "--from",
        from.to_str().unwrap(),
    ];
    args.extend(extra);
    rkb_bin(&args, &[])
}

fn script(path: &Path, body: &str) -> PathBuf {
    fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// A stand-in for an older rkb, reporting version 0.1.0: this one, whose `alpha generate`
/// output is then altered the way `old <dir>` alters a project. The same alteration
/// applied to the user's project makes it one that "the older rkb" scaffolded.
fn older_rkb(root: &Path) -> PathBuf {
    // An older Makefile line, an older main.rs line, a file the older rkb did not write and
    // one it wrote that the new one does not.
    stand_in(
        root,
        r#"  sed -i 's/^IMG ?= .*/IMG ?= controller:old/' "$1/Makefile"
  sed -i 's|^use clap::Parser;$|use clap::Parser; // old|' "$1/src/main.rs"
  rm "$1/Dockerfile"
  echo "an old note" > "$1/OLD_NOTES.md"
  sed -i '1i # an older placeholder' "$1/config/rbac/role.yaml"
  sed -i 's|^rkb-runtime = ".*"$|rkb-runtime = { path = "../rkb/runtime" }|' "$1/Cargo.toml"
"#,
    )
}

/// A stand-in for rkb 0.1.0 (`root/old-rkb`): this rkb, whose `alpha generate` output is
/// then altered by the shell lines `alter` (on the directory `$1`); `old-rkb old <dir>`
/// alters a project the same way.
fn stand_in(root: &Path, alter: &str) -> PathBuf {
    script(
        &root.join("old-rkb"),
        &format!(
            r#"old() {{
{alter}  sed -i 's/^cliVersion: .*/cliVersion: 0.1.0/' "$1/PROJECT"
}}
if [ "$1" = old ]; then old "$2"; exit; fi
if [ "$1" = --version ]; then echo "rkb 0.1.0"; exit; fi
"{RKB}" "$@" || exit $?
if [ "$1" = alpha ] && [ "$2" = generate ]; then
  while [ "$#" -gt 0 ]; do
    if [ "$1" = --output-dir ]; then old "$2"; fi
    shift
  done
fi
"#
        ),
    )
}

/// The files the summary lists under the section that starts with `title`.
fn section<'a>(shown: &'a str, title: &str) -> Vec<&'a str> {
    let mut lines = shown.lines();
    lines
        .find(|line| line.trim_start().starts_with(title))
        .unwrap_or_else(|| panic!("no {title:?} section:\n{shown}"));
    lines
        .take_while(|line| line.starts_with("    "))
        .map(str::trim)
        .collect()
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{}: no {from:?}", path.display());
    fs::write(path, text.replacen(from, to, 1)).unwrap();
}

fn files_of(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    common::files(dir)
}

#[test]
fn this_rkb_as_the_older_one_gives_the_users_tree_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    // User edits: a field, a line of reconcile logic, a flag, a file deleted, a file added.
    let types = dir.join("api/src/cache/v1alpha1/memcached.rs");
    let types_text = fs::read_to_string(&types).unwrap();
    assert!(
        types_text.contains("pub struct MemcachedSpec {"),
        "{types_text}"
    );
    edit(
        &types,
        "pub struct MemcachedSpec {",
        "pub struct MemcachedSpec {\n    /// Replicas.\n    pub size: i32,",
    );
    edit(
        &dir.join("src/main.rs"),
        "use clap::Parser;",
        "use clap::Parser;\n// my flag goes here",
    );
    fs::remove_file(dir.join("Dockerfile")).unwrap();
    fs::write(dir.join("NOTES.md"), "mine\n").unwrap();
    let before = files_of(&dir);

    let output = update(&dir, Path::new(RKB), &[]);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert_eq!(files_of(&dir), before, "the tree changed:\n{shown}");
    assert!(
        shown.contains("summary: 0 merged cleanly, 0 conflicted, 0 taken from the new scaffold, 2 untouched, 1 deleted by you"),
        "{shown}"
    );
    assert!(shown.contains("    Dockerfile"), "{shown}");
}

/// A project of the layout before the operator's tests moved into its library: the
/// webhooks' envtest tests in tests/webhooks.rs, naming the operator by its crate name.
/// `alpha update` moves them to src/webhook/tests.rs with the user's edit, and the webhook
/// module declares them.
#[test]
fn the_webhook_tests_move_from_tests_into_the_library() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let new_tests = fs::read_to_string(dir.join("src/webhook/tests.rs")).unwrap();
    let old = stand_in(
        tmp.path(),
        r#"  mv "$1/src/webhook/tests.rs" "$1/tests/webhooks.rs"
  sed -i -e 's/crate::/demo::/g' -e 's|include_str!("../../|include_str!("../|' "$1/tests/webhooks.rs"
  sed -i '/^\/\/ The webhooks called by a real API server (envtest).$/,/^mod tests;$/d' "$1/src/webhook/mod.rs"
"#,
    );
    let altered = std::process::Command::new(&old)
        .args(["old", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(altered.success());
    assert!(!dir.join("src/webhook/tests.rs").exists());
    edit(
        &dir.join("tests/webhooks.rs"),
        "let manifests = demo::api::manifests();",
        "let manifests = demo::api::manifests(); // mine",
    );

    let output = update(&dir, &old, &[]);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(
        shown.contains("tests/webhooks.rs -> src/webhook/tests.rs"),
        "{shown}"
    );
    assert!(!dir.join("tests/webhooks.rs").exists(), "{shown}");
    let moved = fs::read_to_string(dir.join("src/webhook/tests.rs")).unwrap();
    assert_eq!(
        moved,
        new_tests.replace(
            "let manifests = crate::api::manifests();",
            "let manifests = crate::api::manifests(); // mine"
        ),
        "{shown}"
    );
    let module = fs::read_to_string(dir.join("src/webhook/mod.rs")).unwrap();
    assert!(module.contains("#[cfg(test)]\nmod tests;"), "{module}");
}

#[test]
fn an_older_scaffold_merges_what_it_can_and_marks_conflicts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let old = older_rkb(tmp.path());
    // The user's project as the older rkb scaffolded it, then the user's edits: one in
    // another part of the Makefile (merges), one on the main.rs line rkb changed
    // (conflicts), one in a file rkb did not change (kept).
    let altered = std::process::Command::new(&old)
        .args(["old", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(altered.success());
    edit(
        &dir.join("Makefile"),
        "\nhelp:",
        "\nmy-target:\n\t@echo mine\n\nhelp:",
    );
    edit(
        &dir.join("src/main.rs"),
        "use clap::Parser; // old",
        "use clap::Parser; // mine",
    );
    edit(&dir.join("README.md"), "\n", "\nMy notes.\n");
    // What `make manifests` wrote from the user's code: kept, not merged with placeholders.
    fs::write(
        dir.join("config/rbac/role.yaml"),
        "kind: ClusterRole # generated\n",
    )
    .unwrap();
    let before = files_of(&dir);

    let output = update(&dir, &old, &[]);
    let shown = text(&output);
    assert!(
        !output.status.success(),
        "conflicts exit non-zero:\n{shown}"
    );
    assert!(shown.contains("need your hand"), "{shown}");

    let makefile = fs::read_to_string(dir.join("Makefile")).unwrap();
    assert!(makefile.contains("my-target:\n\t@echo mine"), "{makefile}");
    assert!(makefile.contains("IMG ?= controller:latest"), "{makefile}");
    assert!(!makefile.contains("controller:old"), "{makefile}");

    let main = fs::read_to_string(dir.join("src/main.rs")).unwrap();
    let conflict = "<<<<<<< ours\nuse clap::Parser; // mine\n||||||| original\nuse clap::Parser; // old\n=======\nuse clap::Parser;\n>>>>>>> theirs\n";
    assert!(main.contains(conflict), "{main}");

    for kept in ["README.md", "config/rbac/role.yaml"] {
        assert_eq!(
            fs::read(dir.join(kept)).unwrap(),
            before[Path::new(kept)],
            "{kept} is kept"
        );
    }
    assert!(
        dir.join("Dockerfile").is_file(),
        "added by the new scaffold"
    );
    assert_eq!(
        fs::read_to_string(dir.join("OLD_NOTES.md")).unwrap(),
        "an old note\n",
        "rkb no longer generates it: kept"
    );
    assert!(
        shown.contains(&format!("rkb 0.1.0 -> {}", env!("CARGO_PKG_VERSION"))),
        "{shown}"
    );
    let project_file = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project_file.contains(&format!("cliVersion: {}", env!("CARGO_PKG_VERSION"))),
        "{project_file}"
    );
    for (title, file) in [
        ("merged cleanly", "Makefile"),
        ("conflicted", "src/main.rs"),
        ("added by the new scaffold", "Dockerfile"),
        ("untouched: only you changed them", "README.md"),
        ("untouched: rkb no longer generates them", "OLD_NOTES.md"),
        (
            "untouched: `make manifests` writes them",
            "config/rbac/role.yaml",
        ),
    ] {
        assert_eq!(section(&shown, title), [file], "{shown}");
    }
    assert!(
        shown.contains("summary: 1 merged cleanly, 1 conflicted, 2 taken from the new scaffold, 3 untouched, 0 deleted by you"),
        "{shown}"
    );
}

#[test]
fn force_exits_zero_with_conflicts_and_a_file_the_user_left_alone_takes_the_new_scaffold() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let old = older_rkb(tmp.path());
    let altered = std::process::Command::new(&old)
        .args(["old", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(altered.success());
    edit(
        &dir.join("src/main.rs"),
        "use clap::Parser; // old",
        "use clap::Parser; // mine",
    );

    let output = update(&dir, &old, &["--force"]);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    let makefile = fs::read_to_string(dir.join("Makefile")).unwrap();
    assert!(makefile.contains("IMG ?= controller:latest"), "{makefile}");
    assert_eq!(
        section(&shown, "taken from the new scaffold"),
        ["Cargo.toml", "Makefile"],
        "{shown}"
    );
    // The older scaffold's rkb crates by path are gone, and the user is told what 0.2 needs.
    let cargo_toml = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        !cargo_toml.contains("path = \"../rkb/runtime\""),
        "{cargo_toml}"
    );
    assert!(
        shown.contains("needs the [patch.crates-io] section"),
        "{shown}"
    );
    assert!(
        fs::read_to_string(dir.join("src/main.rs"))
            .unwrap()
            .contains("<<<<<<< ours")
    );
}

#[test]
fn an_rkb_without_alpha_generate_has_its_commands_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    edit(
        &dir.join("src/main.rs"),
        "use clap::Parser;",
        "use clap::Parser;\n// mine",
    );
    let before = files_of(&dir);
    let older = script(
        &tmp.path().join("rkb-before-alpha"),
        &format!(
            "if [ \"$1\" = alpha ]; then echo \"error: unrecognized subcommand 'alpha'\" >&2; exit 2; fi\nexec \"{RKB}\" \"$@\"\n"
        ),
    );
    let output = update(&dir, &older, &[]);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(
        shown.contains("has no `alpha generate`: replaying PROJECT"),
        "{shown}"
    );
    assert!(shown.contains(" init --dir "), "{shown}");
    assert!(shown.contains(" create webhook --dir "), "{shown}");
    assert_eq!(files_of(&dir), before, "the tree changed:\n{shown}");
}

/// An rkb older than `init --webhook-certs` and `--rkb-source` (0.1.0) gets its replay
/// without them: what it did by default is what they would ask of it.
#[test]
fn a_replay_leaves_out_the_init_flags_the_older_rkb_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let older = script(
        &tmp.path().join("rkb-0.1.0"),
        &format!(
            r#"if [ "$1" = alpha ]; then echo "error: unrecognized subcommand 'alpha'" >&2; exit 2; fi
for a in "$@"; do
  case "$a" in --webhook-certs|--rkb-source) echo "error: unexpected argument '$a' found" >&2; exit 2;; esac
done
if [ "$1" = init ] && [ "$2" = --help ]; then "{RKB}" init --help | grep -v -e --webhook-certs -e --rkb-source; exit; fi
exec "{RKB}" "$@"
"#
        ),
    );
    let output = update(&dir, &older, &["--force"]);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    let init = shown
        .lines()
        .find(|line| line.contains(" init --dir "))
        .unwrap_or_else(|| panic!("no init replayed:\n{shown}"));
    assert!(!init.contains("--webhook-certs"), "{init}");
    assert!(!init.contains("--rkb-source"), "{init}");
    assert!(shown.contains(" create webhook --dir "), "{shown}");
}

/// Runs `alpha update` with `args` on the project, which must be refused with `expected`
/// and left as it was.
fn refused(dir: &Path, args: &[&str], env: &[(&str, &Path)], expected: &str) {
    let before = files_of(dir);
    let mut all = vec!["alpha", "update", "--dir", dir.to_str().unwrap()];
    all.extend(args);
    let output = rkb_bin(&all, env);
    let shown = text(&output);
    assert!(!output.status.success(), "{args:?} was accepted:\n{shown}");
    assert!(
        shown.contains(expected),
        "{args:?}: expected {expected:?} in:\n{shown}"
    );
    assert_eq!(files_of(dir), before, "{args:?} changed the project");
}

#[test]
fn a_from_that_is_not_rkb_is_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let liar = script(&tmp.path().join("hello"), "echo hello\n");
    let failing = script(&tmp.path().join("failing"), "exit 3\n");
    for from in [
        "/bin/true",
        liar.to_str().unwrap(),
        failing.to_str().unwrap(),
    ] {
        refused(&dir, &["--from", from], &[], "is not an rkb executable");
    }
    let missing = tmp.path().join("no-such-rkb");
    refused(
        &dir,
        &["--from", missing.to_str().unwrap()],
        &[],
        "cannot run --from",
    );
}

#[test]
fn versions_that_cannot_be_updated_between_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let current = env!("CARGO_PKG_VERSION");
    refused(
        &dir,
        &["--from-version", current],
        &[],
        "there is nothing to update",
    );
    // Without --from, the base is PROJECT's cliVersion: this rkb's own here.
    refused(&dir, &[], &[], "PROJECT's cliVersion");
    refused(&dir, &["--from-version", "99.0.0"], &[], "newer than rkb");
    let newer = script(&tmp.path().join("newer-rkb"), "echo 'rkb 99.0.0'\n");
    refused(
        &dir,
        &["--from", newer.to_str().unwrap()],
        &[],
        "is rkb 99.0.0, newer than rkb",
    );
    refused(&dir, &["--from-version", "x"], &[], "is not a version");
    refused(
        &dir,
        &["--from", RKB, "--to-version", "99.0.0"],
        &[],
        "updates projects to its own scaffold only",
    );
}

#[test]
fn a_version_that_cannot_be_installed_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    // An empty cargo home, offline: no registry to install from.
    let home = tmp.path().join("cargo-home");
    fs::create_dir(&home).unwrap();
    refused(
        &dir,
        &["--from-version", "0.1.0"],
        &[
            ("CARGO_HOME", &home),
            ("CARGO_NET_OFFLINE", Path::new("true")),
        ],
        "cannot install rkb 0.1.0 from crates.io",
    );
}

#[test]
fn a_directory_that_is_not_an_rkb_project_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    refused(&empty, &["--from", RKB], &[], "no PROJECT file");
    let go = tmp.path().join("go");
    fs::create_dir(&go).unwrap();
    fs::write(
        go.join("PROJECT"),
        "version: \"3\"\ndomain: x.io\nlayout: [go.kubebuilder.io/v4]\nprojectName: p\ncliVersion: 4.0.0\n",
    )
    .unwrap();
    refused(&go, &["--from", RKB], &[], "kubebuilder Go project");
}

fn git(dir: &Path, args: &[&str]) {
    let output = common::tool(
        "git",
        &[
            &["-c", "user.name=t", "-c", "user.email=t@example.com"],
            args,
        ]
        .concat(),
        dir,
    );
    assert!(output.status.success(), "git {args:?}: {}", text(&output));
}

#[test]
fn uncommitted_changes_in_git_are_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "scaffold"]);
    edit(
        &dir.join("src/main.rs"),
        "use clap::Parser;",
        "use clap::Parser; // wip",
    );
    refused(&dir, &["--from", RKB], &[], "Commit or stash them first");

    let output = update(&dir, Path::new(RKB), &["--force"]);
    assert!(output.status.success(), "{}", text(&output));
    // Committed, the same tree updates without --force.
    git(&dir, &["commit", "-q", "-am", "wip"]);
    let output = update(&dir, Path::new(RKB), &[]);
    assert!(output.status.success(), "{}", text(&output));
}

#[test]
fn a_write_that_fails_leaves_every_file_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let old = older_rkb(tmp.path());
    let altered = std::process::Command::new(&old)
        .args(["old", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(altered.success());
    // The Makefile would be taken from the new scaffold and Dockerfile added; a link
    // where main.rs is makes the writer refuse, and then neither may be written.
    edit(
        &dir.join("src/main.rs"),
        "use clap::Parser; // old",
        "use clap::Parser; // mine",
    );
    let main = dir.join("src/main.rs");
    let elsewhere = tmp.path().join("main.rs");
    fs::rename(&main, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &main).unwrap();
    refused(&dir, &["--from", old.to_str().unwrap()], &[], "link");
    assert!(!dir.join("Dockerfile").exists());
}

/// A project from an rkb that wrote no CI workflows, dev container, metrics certificate or
/// webhook network policy (before #28) gets them all from `alpha update`, as files new in
/// the scaffold, and the files the user has are left as they are.
#[test]
fn a_project_from_before_the_workflows_gets_them_added() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    let new_files = [
        ".devcontainer/devcontainer.json",
        ".github/workflows/lint.yml",
        ".github/workflows/test-e2e.yml",
        ".github/workflows/test.yml",
        "config/certmanager-metrics/certificate.yaml",
        "config/certmanager-metrics/issuer.yaml",
        "config/certmanager-metrics/kustomization.yaml",
        "config/certmanager-metrics/kustomizeconfig.yaml",
        "config/default/cert_metrics_manager_patch.yaml",
        "config/default/metrics_certificate_replacements.yaml",
        "config/network-policy/allow-webhook-traffic.yaml",
        "config/prometheus/monitor_tls_patch.yaml",
    ];
    let removals: String = new_files
        .iter()
        .map(|f| format!("  rm \"$1/{f}\"\n"))
        .collect();
    let old = script(
        &tmp.path().join("old-rkb"),
        &format!(
            r#"old() {{
{removals}  rmdir "$1/.github/workflows" "$1/.github" "$1/.devcontainer" "$1/config/certmanager-metrics"
  sed -i 's/^cliVersion: .*/cliVersion: 0.1.0/' "$1/PROJECT"
}}
if [ "$1" = old ]; then old "$2"; exit; fi
if [ "$1" = --version ]; then echo "rkb 0.1.0"; exit; fi
"{RKB}" "$@" || exit $?
if [ "$1" = alpha ] && [ "$2" = generate ]; then
  while [ "$#" -gt 0 ]; do
    if [ "$1" = --output-dir ]; then old "$2"; fi
    shift
  done
fi
"#
        ),
    );
    let altered = std::process::Command::new(&old)
        .args(["old", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(altered.success());
    for file in new_files {
        assert!(!dir.join(file).exists(), "{file}");
    }
    let before = files_of(&dir);

    let output = update(&dir, &old, &[]);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert_eq!(
        section(&shown, "added by the new scaffold"),
        new_files,
        "{shown}"
    );
    let fresh = tempfile::tempdir().unwrap();
    let again = project(fresh.path());
    for file in new_files {
        assert_eq!(
            fs::read(dir.join(file)).unwrap(),
            fs::read(again.join(file)).unwrap(),
            "{file} is this rkb's"
        );
    }
    for (path, content) in &before {
        if path != Path::new("PROJECT") {
            assert_eq!(
                &fs::read(dir.join(path)).unwrap(),
                content,
                "{}",
                path.display()
            );
        }
    }
}
