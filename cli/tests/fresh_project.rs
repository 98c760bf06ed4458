//! A project generated outside the rkb repository builds and passes its own tests
//! right after `init`, after each `create api`, after `edit --multigroup` and with
//! webhooks, and stays rustfmt- and clippy-clean.
//!
//! This compiles a whole operator from scratch (minutes), so it is `#[ignore]`d in
//! quick runs; `.ci/run` runs it with `--ignored`.

mod common;

use std::path::Path;
use std::process::Command;

fn run(dir: &Path, program: &str, args: &[&str]) {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fresh-project");
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        status.success(),
        "`{program} {}` failed in {}",
        args.join(" "),
        dir.display()
    );
}

#[test]
#[ignore = "builds an operator from scratch; run by .ci/run"]
fn generated_project_builds_and_passes_its_tests_after_each_step() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("fresh-operator");
    let d = dir.to_str().unwrap();
    // No --rkb-path: the default (the checkout rkb was built from) must work anywhere.
    common::rkb(&[
        "init",
        "--domain",
        "example.org",
        "--dir",
        d,
        "--owner",
        "The Fresh Authors",
    ])
    .unwrap();
    run(&dir, "cargo", &["test", "--quiet"]);

    for api in [
        &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ][..],
        &[
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Foo",
            "--cluster-scoped",
        ],
        &[
            "--group",
            "cache",
            "--version",
            "v1beta1",
            "--kind",
            "Memcached",
            "--no-controller",
        ],
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--no-resource",
        ],
        // The deploy-image controller with only --image (no port, no command), next to
        // other controllers: its RBAC test checks its own rules, not the whole role.yaml.
        &[
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Redis",
            "--image",
            "redis:7.2",
        ],
    ] {
        let mut args = vec!["create", "api", "--dir", d];
        args.extend(api);
        common::rkb(&args).unwrap_or_else(|e| panic!("{api:?}: {e}"));
        run(&dir, "make", &["--quiet", "test"]);
    }
    // The multigroup layout: existing controllers move, and Memcached gets a second
    // controller in another group.
    common::rkb(&["edit", "--multigroup", "--dir", d]).unwrap();
    common::rkb(&[
        "create",
        "api",
        "--dir",
        d,
        "--group",
        "web",
        "--version",
        "v1",
        "--kind",
        "Memcached",
    ])
    .unwrap();
    // Webhooks in the multigroup layout: for a built-in kind, a cluster-scoped kind, and
    // defaulting plus conversion between Memcached's two versions.
    for webhook in [
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--defaulting",
            "--programmatic-validation",
        ][..],
        &[
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Foo",
            "--programmatic-validation",
        ],
        &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
            "--conversion",
            "--spoke",
            "v1beta1",
        ],
    ] {
        let mut args = vec!["create", "webhook", "--dir", d];
        args.extend(webhook);
        common::rkb(&args).unwrap_or_else(|e| panic!("{webhook:?}: {e}"));
    }
    run(&dir, "make", &["--quiet", "test"]);
    run(
        &dir,
        "kubectl",
        &["kustomize", "config/default", "-o", "/dev/null"],
    );
    run(&dir, "cargo", &["fmt", "--check"]);
    run(
        &dir,
        "cargo",
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
    let crds = std::fs::read_dir(dir.join("config/crd/bases"))
        .unwrap()
        .count();
    assert_eq!(
        crds, 4,
        "cache's Memcached (two versions, merged), infra's Foo and Redis, and web's Memcached"
    );
}
