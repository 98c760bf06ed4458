//! A project generated outside the rkb repository builds and passes its own tests
//! right after `init`, after each `create api`, after `edit --multigroup` and with
//! webhooks, and stays rustfmt- and clippy-clean.
//!
//! This compiles a whole operator from scratch (minutes), so it is `#[ignore]`d in
//! quick runs; `.ci/run` runs it with `--ignored`.

mod common;

use std::collections::BTreeSet;
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

/// Every kind name rkb accepts compiles. A kind can clash only with what the generated
/// code names, so the candidates are every UpperCamelCase word of the Rust templates;
/// each one `create api` accepts is scaffolded plainly and with `--image` (a group each),
/// the plain ones with a second version and every type of webhook, and the project must
/// pass clippy with `-D warnings`.
#[test]
#[ignore = "checks an operator with every accepted name; run by .ci/run"]
fn every_kind_name_rkb_accepts_compiles() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("names-operator");
    let d = dir.to_str().unwrap();
    // Multigroup, so that one kind may be in both groups.
    common::rkb(&[
        "init",
        "--domain",
        "example.org",
        "--dir",
        d,
        "--multigroup",
    ])
    .unwrap();
    let api = |kind: &str, group: &str, version: &str, extra: &[&str]| {
        let mut args = vec!["create", "api", "--dir", d, "--group", group];
        args.extend(["--version", version, "--kind", kind]);
        args.extend(extra);
        common::rkb(&args).is_ok()
    };
    let (mut plain, mut image) = (Vec::new(), Vec::new());
    for kind in template_words() {
        if api(&kind, "plain", "v1", &[]) {
            plain.push(kind.clone());
        }
        if api(&kind, "image", "v1", &["--image", "memcached:1.6"]) {
            image.push(kind);
        }
    }
    for kind in &plain {
        assert!(api(kind, "plain", "v2", &["--no-controller"]), "{kind} v2");
        let webhook = [
            "create",
            "webhook",
            "--dir",
            d,
            "--group",
            "plain",
            "--version",
            "v1",
            "--kind",
            kind,
            "--defaulting",
            "--programmatic-validation",
            "--conversion",
            "--spoke",
            "v2",
        ];
        common::rkb(&webhook).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    assert!(
        plain.len() > 40 && image.len() > 20,
        "few candidates accepted: {plain:?} {image:?}"
    );
    run(
        &dir,
        "cargo",
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
}

/// The UpperCamelCase words of the Rust templates' code: outside tera's `{{ }}` and
/// comments.
fn template_words() -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for name in rkb::scaffold::Templates::names() {
        if !name.ends_with(".rs.tera") {
            continue;
        }
        let mut source = rkb::scaffold::Templates::source(name).unwrap();
        let mut code = String::new();
        while let Some((before, rest)) = source.split_once("{{") {
            code.push_str(before);
            code.push(' ');
            source = rest.split_once("}}").map_or("", |(_, after)| after);
        }
        code.push_str(source);
        let code: String = code
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        words.extend(
            code.split(|c: char| !is_word(c))
                .filter(|w| w.len() > 1 && w.starts_with(|c: char| c.is_ascii_uppercase()))
                .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric()))
                .map(str::to_owned),
        );
    }
    words
}
