//! `rkb alpha generate`: replaying a golden project's PROJECT gives the golden project,
//! and every input it refuses is refused with the reason and nothing written.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

/// Files `make manifests` owns (not written with --no-manifests), as in golden.rs.
fn owned_by_make_manifests(path: &Path) -> bool {
    path.starts_with("config/crd/bases")
        || path == Path::new("config/rbac/role.yaml")
        || path == Path::new("config/webhook/manifests.yaml")
}

/// Build artifacts that live beside the golden sources.
fn ignored(path: &Path) -> bool {
    path == Path::new("Cargo.lock") || path.starts_with("dist")
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// Every golden project: the directories of testdata/ with a PROJECT file.
fn goldens() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("PROJECT").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        names.len() >= 4,
        "expected the golden projects, found {names:?}"
    );
    names
}

#[test]
fn generate_replays_every_golden_project_exactly() {
    let mut report = String::new();
    for name in goldens() {
        // Two levels below a stand-in for rkb's checkout, so the copied
        // `.cargo/config.toml` (`../../core`, ...) resolves as it does in testdata/.
        let tmp = tempfile::tempdir().unwrap();
        let fake_repo = tmp.path().join("repo");
        common::stand_in_for_checkout(&fake_repo);
        let out = fake_repo.join("testdata").join(&name);
        let input = testdata().join(&name);
        let before = common::files(&input);
        common::rkb(&[
            "alpha",
            "generate",
            "--input-dir",
            input.to_str().unwrap(),
            "--output-dir",
            out.to_str().unwrap(),
            "--no-manifests",
        ])
        .unwrap_or_else(|e| panic!("{name}: rkb alpha generate failed: {e}"));
        assert_eq!(common::files(&input), before, "{name}: the input changed");

        let generated = common::files(&out);
        let mut paths: Vec<&PathBuf> = generated.keys().chain(before.keys()).collect();
        paths.sort();
        paths.dedup();
        for path in paths {
            if ignored(path) {
                continue;
            }
            let shown = Path::new(&name).join(path);
            match (generated.get(path), before.get(path)) {
                (Some(_), None) => report.push_str(&format!(
                    "generate wrote {}, which testdata lacks\n",
                    shown.display()
                )),
                // --no-manifests: what `make manifests` writes is missing or still the
                // placeholder `rkb init` writes, and only that.
                (None, Some(_)) | (Some(_), Some(_)) if owned_by_make_manifests(path) => {}
                (None, Some(_)) => report.push_str(&format!(
                    "testdata has {}, which generate did not write\n",
                    shown.display()
                )),
                (Some(new), Some(old)) if new != old => {
                    report.push_str(&common::unified_diff(&shown, old, new));
                }
                _ => {}
            }
        }
    }
    assert!(
        report.is_empty(),
        "alpha generate does not reproduce the golden projects:\n{report}"
    );
}

/// A copy of the memcached golden's PROJECT with `edit` applied to its text.
fn input_with(dir: &Path, edit: impl FnOnce(String) -> String) -> PathBuf {
    let input = dir.join("input");
    fs::create_dir_all(&input).unwrap();
    let project = fs::read_to_string(testdata().join("project-memcached/PROJECT")).unwrap();
    fs::write(input.join("PROJECT"), edit(project)).unwrap();
    input
}

/// Runs generate from `input` into `output` and returns its error, checking that the
/// input is unchanged.
fn refused(input: &Path, output: &Path) -> String {
    let before = common::files(input);
    let err = common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        input.to_str().unwrap(),
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .expect_err("generate should refuse");
    assert_eq!(common::files(input), before, "the input changed: {err}");
    err
}

#[test]
fn an_unknown_plugin_is_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let input = input_with(tmp.path(), |p| {
        p.replace(
            "projectName:",
            "plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\nprojectName:",
        )
    });
    let output = tmp.path().join("out");
    let err = refused(&input, &output);
    assert!(
        err.contains("\"grafana.kubebuilder.io/v1-alpha\"") && err.contains("does not know"),
        "{err}"
    );
    assert!(err.contains("deploy-image.rkb.io/v1-alpha"), "{err}");
    assert!(!output.exists(), "{err}");
}

#[test]
fn a_kubebuilder_go_project_is_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let input = input_with(tmp.path(), |p| {
        p.replace("rust.rkb.dev/v1alpha1", "go.kubebuilder.io/v4")
    });
    let output = tmp.path().join("out");
    let err = refused(&input, &output);
    assert!(
        err.contains("kubebuilder Go project") && err.contains("Use kubebuilder"),
        "{err}"
    );
    assert!(!output.exists(), "{err}");
}

#[test]
fn a_project_of_a_newer_rkb_is_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let input = input_with(tmp.path(), |p| {
        p.replace(
            &format!("cliVersion: {}", env!("CARGO_PKG_VERSION")),
            "cliVersion: 99.0.0",
        )
    });
    let output = tmp.path().join("out");
    let err = refused(&input, &output);
    assert!(
        err.contains("rkb 99.0.0, newer than this rkb")
            && err.contains("cargo install rkb --version 99.0.0"),
        "{err}"
    );
    assert!(!output.exists(), "{err}");
}

#[test]
fn an_output_dir_that_is_not_empty_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let input = input_with(tmp.path(), |p| p);
    let output = tmp.path().join("out");
    fs::create_dir_all(&output).unwrap();
    fs::write(output.join("notes.txt"), "mine").unwrap();
    let err = refused(&input, &output);
    assert!(
        err.contains("is not empty") && err.contains("Pick a new one"),
        "{err}"
    );
    let left = common::files(&output);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[Path::new("notes.txt")], b"mine");
}

#[test]
fn an_output_dir_inside_the_input_is_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let input = input_with(tmp.path(), |p| p);
    let output = input.join("regenerated");
    let err = refused(&input, &output);
    assert!(
        err.contains("inside the input project") && err.contains("--output-dir"),
        "{err}"
    );
    assert!(!output.exists(), "{err}");
}

#[test]
fn a_failing_replay_leaves_nothing_behind() {
    // A PROJECT whose second entry cannot be scaffolded (a built-in kind rkb does not
    // know): the init and first API written before it are removed again.
    let tmp = tempfile::tempdir().unwrap();
    let input = input_with(tmp.path(), |p| {
        p.replace(
            "version: '3'",
            "- controller: true\n  core: true\n  group: core\n  kind: NoSuchKind\n  \
             path: k8s_openapi::api::core::v1::NoSuchKind\n  plural: nosuchkinds\n  version: v1\n\
             version: '3'",
        )
    });
    let output = tmp.path().join("out");
    let err = refused(&input, &output);
    assert!(
        err.contains("NoSuchKind") && err.contains("nothing was left in"),
        "{err}"
    );
    assert!(!output.exists(), "{err}");
}

#[test]
fn the_multigroup_layout_and_a_license_without_owner_are_replayed() {
    // A project made with init --multigroup --license none and a cluster-scoped API with
    // an irregular plural, replayed: the same files.
    let tmp = tempfile::tempdir().unwrap();
    let original = tmp.path().join("original");
    let dir = original.to_str().unwrap();
    let steps: &[&[&str]] = &[
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "groups",
            "--license",
            "none",
            "--rkb-source",
            "registry",
            "--multigroup",
        ],
        &[
            "create",
            "api",
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Policy",
            "--plural",
            "policyset",
            "--cluster-scoped",
        ],
        &[
            "create",
            "api",
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Policy",
        ],
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--no-resource",
        ],
        // Webhooks for a built-in kind the project has no API or controller for, at a
        // path of their own (PROJECT's defaultingPath, replayed as --defaulting-path).
        &[
            "create",
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "ConfigMap",
            "--defaulting",
            "--defaulting-path",
            "/mutate-configmaps",
        ],
        // An API after it: PROJECT keeps the order (the replay adds webhooks last).
        &[
            "create",
            "api",
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Gateway",
        ],
    ];
    for step in steps {
        let mut args = step.to_vec();
        args.extend(["--dir", dir]);
        common::rkb(&args).unwrap_or_else(|e| panic!("{step:?}: {e}"));
    }
    let output = tmp.path().join("generated");
    common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        dir,
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap();
    assert_eq!(common::files(&output), common::files(&original));
}

#[test]
fn a_layout_changed_by_edit_multigroup_is_replayed_at_that_point() {
    // APIs and a webhook before `rkb edit --multigroup` keep their single-group roles and
    // webhook files; the API after it gets group-qualified ones. The replay does the same.
    let tmp = tempfile::tempdir().unwrap();
    let original = tmp.path().join("original");
    let dir = original.to_str().unwrap();
    let steps: &[&[&str]] = &[
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "moved",
            "--owner",
            "The Moved Authors",
            "--rkb-source",
            "registry",
        ],
        &[
            "create",
            "api",
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
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
        &["edit", "--multigroup"],
        &[
            "create",
            "api",
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Memcached",
        ],
    ];
    for step in steps {
        let mut args = step.to_vec();
        args.extend(["--dir", dir]);
        common::rkb(&args).unwrap_or_else(|e| panic!("{step:?}: {e}"));
    }
    let output = tmp.path().join("generated");
    let log = common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        dir,
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap();
    assert!(log.contains("edit --dir"), "{log}");
    let (generated, expected) = (common::files(&output), common::files(&original));
    assert_eq!(
        generated.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (path, content) in &expected {
        assert!(
            generated[path] == *content,
            "{} differs:\n{}",
            path.display(),
            common::unified_diff(path, content, &generated[path])
        );
    }
}

/// The `make manifests` step that ends a replay, without compiling the generated project:
/// a stand-in `make` first on PATH records where and with what it ran, and exits as told.
/// (That the Makefile's `manifests` target itself works is what the golden projects'
/// `manifests_are_up_to_date` tests and `fresh_project.rs` check.)
#[test]
fn generate_ends_with_make_manifests_in_the_output_and_reports_its_failure() {
    use std::os::unix::fs::PermissionsExt;
    use std::process::Command;

    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let make = bin.join("make");
    fs::write(
        &make,
        "#!/bin/sh\necho \"$PWD $*\" >> \"$STUB_LOG\"\nexit \"$STUB_EXIT\"\n",
    )
    .unwrap();
    fs::set_permissions(&make, fs::Permissions::from_mode(0o755)).unwrap();
    let log = tmp.path().join("make.log");
    let input = testdata().join("project-memcached");
    let generate = |output: &Path, path: &str, exit: &str| {
        Command::new(env!("CARGO_BIN_EXE_rkb"))
            .args(["alpha", "generate", "--input-dir"])
            .arg(&input)
            .arg("--output-dir")
            .arg(output)
            .env("PATH", path)
            .env("STUB_LOG", &log)
            .env("STUB_EXIT", exit)
            .output()
            .unwrap()
    };
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());

    let out = tmp.path().join("ok");
    let run = generate(&out, &path, "0");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("$ make manifests"), "{stdout}");
    let ran = fs::read_to_string(&log).unwrap();
    let out = out.canonicalize().unwrap();
    assert_eq!(ran, format!("{} manifests\n", out.display()));

    // A failing `make manifests` fails the command and says where the scaffold is.
    let failed = tmp.path().join("failed");
    let run = generate(&failed, &path, "2");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr.contains("`make manifests` failed in") && stderr.contains("the scaffold is there"),
        "{stderr}"
    );
    assert!(failed.join("PROJECT").is_file(), "the scaffold was removed");

    // Without make, the message says what to do.
    let none = tmp.path().join("none");
    let run = generate(&none, tmp.path().join("empty").to_str().unwrap(), "0");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr.contains("cannot run `make`") && stderr.contains("--no-manifests"),
        "{stderr}"
    );
}
