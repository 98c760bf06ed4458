//! Bad input: every case exits non-zero with an actionable message and leaves the
//! directory byte-for-byte as it was.

use crate::common;

use std::path::Path;
use std::process::Command;

/// Runs rkb in `dir` with `env` set (and no `RKB_PATH` of the caller's): whether it
/// succeeded, and what it printed.
fn rkb_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_rkb"))
        .args(args)
        .current_dir(dir)
        .env_remove("RKB_PATH")
        .envs(env.iter().copied())
        .output()
        .expect("rkb runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// [`rkb_env`] without an environment of its own.
fn rkb_in(dir: &Path, args: &[&str]) -> (bool, String) {
    rkb_env(dir, args, &[])
}

/// This checkout, whose crates the scratch projects use (`init --rkb-path`).
fn repo() -> &'static str {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
}

/// `init`'s flags of the projects below.
const DEMO: &[&str] = &["--domain", "example.com", "--project-name", "demo"];

/// A scratch project: `rkb init` with the `init` flags (and this checkout's crates), then
/// each of `steps`, which must succeed.
fn scaffolded(init: &[&str], steps: &[Vec<&str>]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let init: Vec<&str> = ["init"]
        .iter()
        .chain(init)
        .chain(&["--rkb-path", repo()])
        .copied()
        .collect();
    for args in std::iter::once(&init).chain(steps) {
        rkb_ok(dir.path(), args);
    }
    dir
}

/// A project with one API, as a user would have it.
fn project() -> tempfile::TempDir {
    scaffolded(DEMO, &[api("cache", "v1alpha1", "Memcached", &[])])
}

/// `rkb create api` of `group`, `version` and `kind`, with `extra` flags.
fn api<'a>(group: &'a str, version: &'a str, kind: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "create",
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ];
    args.extend(extra);
    args
}

/// (arguments, fragments the message must contain)
const CREATE_API_CASES: &[(&[&str], &[&str])] = &[
    (
        &["--group", "cache", "--version", "v1", "--kind", "memcached"],
        &[
            "invalid --kind \"memcached\"",
            "uppercase",
            "example:  --kind Memcached",
        ],
    ),
    (
        // The project has cache/Memcached: one kind in two groups needs the multigroup layout.
        &["--group", "web", "--version", "v1", "--kind", "Memcached"],
        &[
            "a controller for Memcached exists already in group cache",
            "rkb edit --multigroup",
        ],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--no-controller",
        ],
        &[
            "kind Memcached exists already in group cache",
            "config/rbac/memcached_*_role.yaml",
            "rkb edit --multigroup",
        ],
    ),
    (
        &["--group", "cache", "--version", "v1", "--kind", "Wid-get"],
        &["invalid --kind \"Wid-get\"", "'-'"],
    ),
    (
        &["--group", "cache", "--version", "v1", "--kind", ""],
        &["invalid --kind \"\"", "empty"],
    ),
    (
        &["--group", "cache", "--version", "v1", "--kind", "Option"],
        &["already uses the name Option"],
    ),
    (
        &["--group", "cache", "--version", "v1", "--kind", "Type"],
        &["keyword"],
    ),
    (
        &["--group", "Cache", "--version", "v1", "--kind", "Foo"],
        &[
            "invalid --group \"Cache\"",
            "uppercase",
            "example:  --group cache",
        ],
    ),
    (
        &["--group", "cache_x", "--version", "v1", "--kind", "Foo"],
        &["invalid --group \"cache_x\"", "'_'"],
    ),
    (
        &["--group", "cache", "--version", "1", "--kind", "Foo"],
        &[
            "invalid --version \"1\"",
            "start with a lowercase letter",
            "example:  --version v1alpha1",
        ],
    ),
    (
        &["--group", "cache", "--version", "V1", "--kind", "Foo"],
        &["invalid --version \"V1\"", "uppercase"],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Foo",
            "--plural",
            "Foos",
        ],
        &["invalid --plural \"Foos\""],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ],
        &["already exists in PROJECT", "--force"],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1beta1",
            "--kind",
            "Memcached",
        ],
        &[
            "a controller for Memcached exists already",
            "--no-controller",
        ],
    ),
    (
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pods",
            "--no-resource",
        ],
        &["neither an API of this project nor a built-in", "Pod,"],
    ),
    (
        &[
            "--group",
            "apps",
            "--version",
            "v2",
            "--kind",
            "Deployment",
            "--no-resource",
        ],
        &["that group has versions v1"],
    ),
    (
        &[
            "--group",
            "authentication.k8s.io",
            "--version",
            "v1",
            "--kind",
            "TokenReview",
            "--no-resource",
        ],
        &["create-only kind"],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Foo",
            "--no-resource",
            "--no-controller",
        ],
        &["nothing to scaffold"],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "MemcachedStatus",
        ],
        &["clash"],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--plural",
            "memcacheds",
        ],
        &[
            "resource names clash in API group \"cache.example.com\"",
            "the plural \"memcacheds\" of Cache cache/v1 is also the plural of Memcached cache/v1alpha1 (in PROJECT)",
            "example:  rkb create api --group cache --version v1 --kind Cache --plural caches",
        ],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcacheds",
            "--no-controller",
        ],
        &[
            "the singular (the lowercased kind) \"memcacheds\" of Memcacheds cache/v1 is also the plural of \
             Memcached cache/v1alpha1",
            "so --plural cannot help",
            "example:  rkb create api --group cache --version v1 --kind MemcachedsItem",
        ],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "MEMCACHED",
            "--no-controller",
        ],
        &[
            "the singular (the lowercased kind) \"memcached\" of MEMCACHED cache/v1 is also the singular \
           (the lowercased kind) of Memcached cache/v1alpha1",
        ],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "MemcachedList",
            "--no-controller",
        ],
        &[
            "the kind \"MemcachedList\" of MemcachedList cache/v1 is also the list kind of Memcached \
           cache/v1alpha1",
        ],
    ),
    (
        &[
            "--group",
            "cache",
            "--version",
            "v1beta1",
            "--kind",
            "Memcached",
            "--no-controller",
            "--plural",
            "mcs",
        ],
        &[
            "Memcached cache/v1beta1 would have the plural \"mcs\", but Memcached cache/v1alpha1 has \
             \"memcacheds\"",
            "share one plural",
            "example:  rkb create api --group cache --version v1beta1 --kind Memcached --no-controller --plural \
             memcacheds",
        ],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "Memcached:1",
        ],
        &[
            "invalid --image \"Memcached:1\"",
            "uppercase",
            "accepted: a container image reference",
            "example:  --image memcached:1.6.26-alpine3.19",
        ],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached@sha256:abc",
        ],
        &["the digest \"sha256:abc\" needs at least 32 hex digits"],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1",
            "--image-container-port",
            "70000",
        ],
        &[
            "invalid --image-container-port \"70000\"",
            "a port number from 1 to 65535",
        ],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1",
            "--run-as-user",
            "0",
        ],
        &[
            "invalid --run-as-user \"0\"",
            "UID 0 is root",
            "example:  --run-as-user 1001",
        ],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1",
            "--run-as-user",
            "memcache",
        ],
        &["invalid --run-as-user \"memcache\"", "a numeric user ID"],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1",
            "--image-container-command",
            "memcached,,-v",
        ],
        &["invalid --image-container-command", "empty word"],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image-container-port",
            "11211",
        ],
        &[
            "--image-container-port configures the container of `--image`, and no --image was given",
            "--image memcached:1.6.26-alpine3.19",
        ],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1",
            "--cluster-scoped",
        ],
        &[
            "cannot be combined with --cluster-scoped",
            "Drop --cluster-scoped",
        ],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1",
            "--no-controller",
        ],
        &["cannot be combined with --no-controller"],
    ),
    // Names the generated code imports or defines next to the kind (E0252, E0255).
    (
        &["--group", "cache", "--version", "v1", "--kind", "Time"],
        &[
            "invalid --kind \"Time\": generated code already uses the name Time: api/controller.rs.tera \
             imports it, so a kind of that name would be imported twice (error E0252)",
            "accepted: an UpperCamelCase Rust type name that the generated code does not import",
            "example:  --kind TimeResource",
        ],
    ),
    (
        &["--group", "cache", "--version", "v1", "--kind", "Error"],
        &["api/controller.rs.tera defines it", "error E0255"],
    ),
    (
        &[
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Container",
            "--image",
            "memcached:1",
        ],
        &[
            "invalid --kind \"Container\"",
            "api/deploy-image/controller.rs.tera imports it",
        ],
    ),
    (
        &["--group", "cache--x", "--version", "v1", "--kind", "Foo"],
        &[
            "invalid --group \"cache--x\": its module name `cache__x` would hold `__`, which rustc's \
             non_snake_case lint rejects",
            "accepted: a name whose Rust module",
            "example:  --group cache",
        ],
    ),
    (
        &["--group", "1cache", "--version", "v1", "--kind", "Foo"],
        &["invalid --group \"1cache\"", "would start with a digit"],
    ),
    (
        &["--group", "cache", "--version", "v1--x", "--kind", "Foo"],
        &["invalid --version \"v1--x\"", "`v1__x` would hold `__`"],
    ),
    (&["--version", "v1", "--kind", "Foo"], &["--group <GROUP>"]),
    (
        &["--group", "--version", "v1", "--kind", "Foo"],
        &["a value is required for '--group <GROUP>'"],
    ),
];

/// Runs rkb in `dir`, expecting a refusal: a non-zero exit, a message that names every
/// fragment, and the directory byte-for-byte as it was. Returns the message.
fn assert_rejected(dir: &Path, args: &[&str], fragments: &[&str]) -> String {
    refused(dir, args, &[], fragments)
}

/// [`assert_rejected`] with `env` set.
fn refused(dir: &Path, args: &[&str], env: &[(&str, &str)], fragments: &[&str]) -> String {
    let before = common::files(dir);
    let (ok, text) = rkb_env(dir, args, env);
    assert!(!ok, "{args:?} should fail:\n{text}");
    for fragment in fragments {
        assert!(
            text.contains(fragment),
            "{args:?}: expected {fragment:?} in:\n{text}"
        );
    }
    assert!(
        common::files(dir) == before,
        "{args:?} changed files although it failed"
    );
    text
}

#[test]
fn create_api_rejects_bad_input_without_touching_files() {
    let project = project();
    for (args, fragments) in CREATE_API_CASES {
        let mut full = vec!["create", "api"];
        full.extend(*args);
        assert_rejected(project.path(), &full, fragments);
    }
}

#[test]
fn a_namespace_scoped_operator_refuses_controllers_of_cluster_scoped_kinds() {
    let dir = scaffolded(&[DEMO, &["--namespaced"]].concat(), &[]);
    let cases: [(&[&str], &[&str]); 2] = [
        (
            &api(
                "infra",
                "v1",
                "Policy",
                &["--plural", "policies", "--cluster-scoped"],
            ),
            &[
                "Policy is cluster-scoped",
                "`namespaced: true`",
                "--kind Policy --no-controller --cluster-scoped",
            ],
        ),
        (
            &api("core", "v1", "Node", &["--no-resource"]),
            &["Node is cluster-scoped", "--kind Pod --no-resource"],
        ),
    ];
    for (args, fragments) in cases {
        assert_rejected(dir.path(), args, fragments);
    }
}

#[test]
fn kinds_whose_names_clash_with_an_irregular_plural_are_refused() {
    let project = project();
    let person = api("crew", "v1", "Person", &[]);
    let (ok, text) = rkb_in(project.path(), &person);
    assert!(ok, "{text}");
    let project_file = std::fs::read_to_string(project.path().join("PROJECT")).unwrap();
    assert!(project_file.contains("plural: people"), "{project_file}");
    assert_rejected(
        project.path(),
        &api("crew", "v1", "People", &["--no-controller"]),
        &[
            "the singular (the lowercased kind) \"people\" of People crew/v1 is also the plural of Person crew/v1",
            "example:  rkb create api --group crew --version v1 --kind PeopleItem",
        ],
    );
}

#[test]
fn a_new_version_keeps_the_kinds_plural() {
    let project = project();
    for args in [
        &api("infra", "v1alpha1", "Policy", &["--plural", "rules"])[..],
        &api("infra", "v1", "Policy", &["--no-controller"]),
    ] {
        let (ok, text) = rkb_in(project.path(), args);
        assert!(ok, "{args:?}: {text}");
    }
    let types = std::fs::read_to_string(project.path().join("api/src/infra/v1/policy.rs")).unwrap();
    assert!(types.contains("plural = \"rules\""), "{types}");
}

#[test]
fn a_missing_marker_fails_the_whole_command() {
    let project = project();
    let lib = project.path().join("api/src/lib.rs");
    let edited = std::fs::read_to_string(&lib)
        .unwrap()
        .replace("// +rkb:scaffold:crds", "");
    std::fs::write(&lib, edited).unwrap();
    let site = api("web", "v1", "Site", &[]);
    assert_rejected(
        project.path(),
        &site,
        &["`+rkb:scaffold:crds` marker line is gone"],
    );
}

#[cfg(unix)]
#[test]
fn symlinks_inside_the_project_are_refused_not_followed() {
    let project = project();
    let outside = tempfile::tempdir().unwrap();
    let samples = project.path().join("config/samples");
    std::fs::rename(&samples, outside.path().join("samples")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("samples"), &samples).unwrap();
    let outside_before = common::files(outside.path());
    let site = api("web", "v1", "Site", &[]);
    assert_rejected(
        project.path(),
        &site,
        &["config/samples is a symbolic link", "Replace the link"],
    );
    assert!(common::files(outside.path()) == outside_before);
}

#[test]
fn edit_refuses_what_it_cannot_move_and_needs_a_flag() {
    let project = project();
    assert_rejected(project.path(), &["edit"], &["--multigroup"]);
    // A controller the user moved or deleted: rkb does not guess where it went.
    std::fs::remove_file(project.path().join("src/controller/memcached.rs")).unwrap();
    assert_rejected(
        project.path(),
        &["edit", "--multigroup"],
        &[
            "src/controller/memcached.rs is missing",
            "cache/v1alpha1 Memcached",
        ],
    );
}

#[test]
fn init_refuses_existing_projects_and_keeps_unrelated_files() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo();
    let init = [
        "init",
        "--domain",
        "example.com",
        "--project-name",
        "x",
        "--rkb-path",
        repo,
    ];
    for marker in ["Cargo.toml", "Makefile", "PROJECT"] {
        std::fs::write(dir.path().join(marker), "mine").unwrap();
        let found = format!("already holds a project ({marker} found)");
        assert_rejected(dir.path(), &init, &[&found, "rkb create api"]);
        std::fs::remove_file(dir.path().join(marker)).unwrap();
    }
    std::fs::create_dir(dir.path().join("src")).unwrap();
    assert_rejected(dir.path(), &init, &["(src found)"]);
    std::fs::remove_dir(dir.path().join("src")).unwrap();

    std::fs::write(dir.path().join("README.md"), "my notes").unwrap();
    let (ok, text) = rkb_in(dir.path(), &init);
    assert!(ok, "{text}");
    assert!(text.contains("keep README.md"), "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
        "my notes"
    );
}

#[test]
fn init_rejects_bad_input_without_touching_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["init", "--domain", "Example.com"],
            "invalid --domain \"Example.com\"",
        ),
        (&["init", "--domain", "example..com"], "empty label"),
        (
            &["init", "--domain", "example.com", "--project-name", "My_Op"],
            "invalid --project-name",
        ),
        (
            &["init", "--domain", "example.com", "--project-name", "1op"],
            "start with a letter",
        ),
        (
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "op",
                "--rkb-path",
                "/nonexistent",
            ],
            "the rkb source /nonexistent does not exist",
        ),
        (
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "op",
                "--license",
                "mit",
            ],
            "possible values: apache2, none",
        ),
        (
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "op",
                "--owner",
                "Us\n*/ fn x() {}",
            ],
            "invalid --owner \"Us\\n*/ fn x() {}\": it holds a line break",
        ),
        (&["init"], "--domain <DOMAIN>"),
        (&api("a", "v1", "A", &[]), "rkb init --domain example.com"),
        (&["creat"], "unrecognized subcommand"),
    ];
    for (args, fragment) in cases {
        assert_rejected(dir.path(), args, &[fragment]);
    }
}

#[test]
fn init_refuses_project_names_of_its_own_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let repo = repo();
    for (name, crate_name, dependency) in [
        ("kube", "kube", "kube"),
        ("rkb-runtime", "rkb_runtime", "rkb-runtime"),
        ("serde-json", "serde_json", "serde_json"),
        ("tokio", "tokio", "tokio"),
        // A dev-dependency counts too: the test binaries link it.
        ("futures", "futures", "futures"),
    ] {
        let init = [
            "init",
            "--domain",
            "example.com",
            "--project-name",
            name,
            "--rkb-path",
            repo,
        ];
        let problem = format!(
            "invalid --project-name {name:?}: its crate name `{crate_name}` is that of `{dependency}`, a \
             dependency of the generated project: the crate would shadow its own dependency and not compile \
             (error E0464"
        );
        let example = format!("example:  --project-name {name}-operator");
        assert_rejected(
            dir.path(),
            &init,
            &[&problem, "accepted: a DNS-1123 label", &example],
        );
    }
    // A name taken from the directory says so.
    let anyhow = dir.path().join("anyhow");
    std::fs::create_dir(&anyhow).unwrap();
    std::fs::write(anyhow.join("notes.txt"), "mine").unwrap();
    assert_rejected(
        &anyhow,
        &["init", "--domain", "example.com", "--rkb-path", repo],
        &[
            "the directory name \"anyhow\" cannot be the project name (its crate name `anyhow` is that of \
             `anyhow`",
            "pass --project-name",
            "example:  --project-name anyhow-operator",
        ],
    );
}

#[test]
fn init_refuses_project_names_cargo_forbids_for_binaries() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let repo = repo();
    for name in ["build", "deps", "examples", "incremental"] {
        let init = [
            "init",
            "--domain",
            "example.com",
            "--project-name",
            name,
            "--rkb-path",
            repo,
        ];
        let problem = format!(
            "invalid --project-name {name:?}: Cargo forbids `{name}` as the name of the project's manager binary"
        );
        assert_rejected(
            dir.path(),
            &init,
            &[
                &problem,
                "not a binary name Cargo forbids",
                "example:  --project-name",
            ],
        );
    }
    // Also as the default, the directory's name.
    let build = dir.path().join("build");
    std::fs::create_dir(&build).unwrap();
    assert_rejected(
        &build,
        &["init", "--domain", "example.com", "--rkb-path", repo],
        &[
            "the directory name \"build\" cannot be the project name (Cargo forbids `build`",
            "pass --project-name",
        ],
    );
}

#[test]
fn a_crd_name_longer_than_253_characters_is_refused() {
    // 247 characters: `cache.<domain>` is a valid API group of 253, its CRD name is not.
    let domain = format!("{}.com", vec!["a".repeat(60); 4].join("."));
    let dir = scaffolded(&["--domain", &domain, "--project-name", "demo"], &[]);
    assert_rejected(
        dir.path(),
        &api("cache", "v1", "Memcached", &[]),
        &[
            "invalid --group \"cache\": the CRD name \"memcacheds.cache.aaa",
            "is 264 characters long, more than 253",
            "accepted: a plural, group and domain whose CRD name",
        ],
    );
}

#[test]
fn a_controller_module_named_like_its_group_is_refused() {
    // Multigroup: src/controller/cache/cache.rs fails clippy's module_inception.
    let project = project();
    rkb_ok(project.path(), &["edit", "--multigroup"]);
    let args = api("cache", "v1", "Cache", &[]);
    assert_rejected(
        project.path(),
        &args,
        &[
            "invalid --kind \"Cache\": in the multigroup layout its controller module would be \
             `cache::cache` (src/controller/cache/cache.rs), which clippy's module_inception lint rejects",
            "accepted: in the multigroup layout, a kind whose module name",
            "example:  --kind CacheApp",
        ],
    );
    // Types only need no controller module.
    let types_only = [&args[..], &["--no-controller"]].concat();
    rkb_ok(project.path(), &types_only);

    // Single-group: the kind is fine until the move.
    let project = self::project();
    rkb_ok(project.path(), &args);
    assert_rejected(
        project.path(),
        &["edit", "--multigroup"],
        &[
            "the Cache controller cannot move to the multigroup layout: in the multigroup layout its \
           controller module would be `cache::cache`",
        ],
    );
}

#[test]
fn project_entries_rkb_cannot_derive_paths_from_are_refused() {
    let project = project();
    let file = project.path().join("PROJECT");
    let text = std::fs::read_to_string(&file).unwrap();
    for (from, to, fragment) in [
        (
            "group: cache",
            "group: ../../../escape",
            "PROJECT lists Memcached ../../../escape/v1alpha1 with the group \"../../../escape\", which rkb \
             cannot derive names and paths from",
        ),
        (
            "path: crate::api::cache::v1alpha1::Memcached",
            "path: crate::api::cache::v1alpha1::Memcached; std::process::exit(1)",
            "with the path \"crate::api::cache::v1alpha1::Memcached; std::process::exit(1)\"",
        ),
        // The domain is PROJECT's, not the --group's the API group joins it with.
        (
            "domain: example.com",
            "domain: Bad Domain",
            "PROJECT has the domain \"Bad Domain\", which rkb cannot derive API groups from",
        ),
    ] {
        assert!(text.contains(from), "{text}");
        std::fs::write(&file, text.replace(from, to)).unwrap();
        for args in [
            &api("web", "v1", "Site", &[])[..],
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
        ] {
            assert_rejected(project.path(), args, &[fragment, "Fix the entry"]);
        }
    }
}

/// PROJECT is checked at load as the model checks a new resource (`Resource::check`): an
/// entry edited by hand into one `create api` would have refused is blamed on the file
/// and the entry, not on a flag the command was not given, with what is accepted.
#[test]
fn a_hand_edited_project_entry_is_checked_like_a_new_resource() {
    let project = project();
    let file = project.path().join("PROJECT");
    let text = std::fs::read_to_string(&file).unwrap();
    // The entry's own domain (indented, not the project's), 247 characters: valid, but
    // the CRD name memcacheds.cache.<domain> would have 264.
    let domain = format!("{}.com", vec!["a".repeat(60); 4].join("."));
    let entry_domain = "\n  domain: example.com\n";
    assert!(text.contains(entry_domain), "{text}");
    std::fs::write(
        &file,
        text.replace(entry_domain, &format!("\n  domain: {domain}\n")),
    )
    .unwrap();
    for args in [
        &api("web", "v1", "Site", &[])[..],
        &webhook_args("v1alpha1", &["--defaulting"]),
        &[
            "delete",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ],
    ] {
        let message = assert_rejected(
            project.path(),
            args,
            &[
                "PROJECT lists Memcached cache/v1alpha1 with the group \"cache\", which rkb cannot \
                 derive names and paths from: the CRD name \"memcacheds.cache.aaa",
                "is 264 characters long, more than 253",
                "accepted: a plural, group and domain whose CRD name",
                "Fix the entry (edited by hand?) and run rkb again",
            ],
        );
        assert!(!message.contains("invalid --"), "{message}");
    }
}

#[test]
fn help_shows_examples_and_version_names_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--help"][..],
        &["init", "--help"],
        &["create", "api", "--help"],
        &["create", "webhook", "--help"],
        &["completion", "--help"],
    ] {
        let (ok, text) = rkb_in(dir.path(), args);
        assert!(ok && text.contains("Example"), "{args:?}:\n{text}");
    }
    let (ok, text) = rkb_in(dir.path(), &["version"]);
    assert!(
        ok && text.contains("kube 5.0") && text.contains("k8s-openapi 0.29"),
        "{text}"
    );
    let (ok, text) = rkb_in(dir.path(), &["completion", "bash"]);
    assert!(ok && text.contains("_rkb()"), "{text}");
}

/// `rkb create webhook` for cache/v1alpha1 Memcached with `extra` flags.
fn webhook_args<'a>(version: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "create",
        "webhook",
        "--group",
        "cache",
        "--version",
        version,
        "--kind",
        "Memcached",
    ];
    args.extend(extra);
    args
}

fn rkb_ok(dir: &Path, args: &[&str]) {
    let (ok, text) = rkb_in(dir, args);
    assert!(ok, "{args:?}: {text}");
}

#[test]
fn create_webhook_rejects_bad_input_without_touching_files() {
    let project = project();
    let dir = project.path();
    // No webhook type at all.
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &[]),
        &[
            "no webhook chosen",
            "--defaulting, --programmatic-validation and --conversion",
            "example:  rkb create webhook --group cache --version v1alpha1 --kind Memcached --defaulting",
        ],
    );
    // Custom paths the API server or the manager cannot serve.
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--defaulting", "--defaulting-path", "mutate"]),
        &[
            "--defaulting-path \"mutate\": webhook path \"mutate\" must start with '/'",
            "example:  rkb create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --defaulting-path /my-custom-path",
        ],
    );
    assert_rejected(
        dir,
        &webhook_args(
            "v1alpha1",
            &["--programmatic-validation", "--validation-path", "/convert"],
        ),
        &[
            "--validation-path \"/convert\": the manager serves conversion reviews there",
            "--programmatic-validation --validation-path /my-custom-path",
        ],
    );
    assert_rejected(
        dir,
        &webhook_args(
            "v1alpha1",
            &[
                "--defaulting",
                "--programmatic-validation",
                "--defaulting-path",
                "/hook",
                "--validation-path",
                "/hook",
            ],
        ),
        &["--defaulting-path and --validation-path are both \"/hook\""],
    );
    assert_rejected(
        dir,
        &webhook_args(
            "v1alpha1",
            &["--programmatic-validation", "--defaulting-path", "/m"],
        ),
        &["--defaulting-path <PATH>", "--defaulting"],
    );
    // A kind, or a version of it, the project does not have.
    let mut typo = webhook_args("v1alpha1", &["--defaulting"]);
    typo[7] = "Memcache";
    assert_rejected(
        dir,
        &typo,
        &[
            "no API cache/v1alpha1 Memcache in PROJECT",
            "accepted: --group cache --version v1alpha1 --kind Memcached",
            "example:  rkb create api --group cache --version v1alpha1 --kind Memcache",
        ],
    );
    assert_rejected(
        dir,
        &webhook_args("v1", &["--programmatic-validation"]),
        &["no API cache/v1 Memcached in PROJECT", "rkb create api"],
    );
    // Conversion needs a second version of the kind, and --spoke needs --conversion.
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--conversion", "--spoke", "v1"]),
        &[
            "--conversion needs another version of Memcached",
            "PROJECT has only cache/v1alpha1 Memcached",
            "rkb create api --group cache --version <other version> --kind Memcached --no-controller",
        ],
    );
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--defaulting", "--spoke", "v1"]),
        &["--conversion"],
    );

    // A second webhook of a type the kind has.
    rkb_ok(dir, &webhook_args("v1alpha1", &["--defaulting"]));
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--defaulting"]),
        &[
            "a defaulting webhook for cache/v1alpha1 Memcached exists already",
            "accepted: the webhooks it lacks (--programmatic-validation, --conversion), or --force",
            "example:  rkb create webhook --group cache --version v1alpha1 --kind Memcached --programmatic-validation",
        ],
    );

    // Spokes: another existing version of the same kind.
    rkb_ok(
        dir,
        &api("cache", "v1beta1", "Memcached", &["--no-controller"]),
    );
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--conversion"]),
        &[
            "--conversion needs --spoke",
            "accepted: v1beta1",
            "example:  rkb create webhook --group cache --version v1alpha1 --kind Memcached --conversion --spoke v1beta1",
        ],
    );
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--conversion", "--spoke", "v2"]),
        &[
            "invalid --spoke \"v2\": Memcached has no version v2 in PROJECT",
            "accepted: v1beta1",
            "--spoke v1beta1",
        ],
    );
    assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--conversion", "--spoke", "v1alpha1,v1beta1"]),
        &["--spoke v1alpha1 is the hub itself", "accepted: v1beta1"],
    );
    // One hub per CRD.
    rkb_ok(
        dir,
        &webhook_args("v1alpha1", &["--conversion", "--spoke", "v1beta1"]),
    );
    assert_rejected(
        dir,
        &webhook_args("v1beta1", &["--conversion", "--spoke", "v1alpha1"]),
        &[
            "Memcached already has a conversion webhook with hub v1alpha1",
            "--version v1alpha1 --kind Memcached --conversion --spoke <versions> --force",
        ],
    );
    // Built-in kinds are converted by the API server.
    rkb_ok(dir, &api("core", "v1", "Pod", &["--no-resource"]));
    assert_rejected(
        dir,
        &[
            "create",
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--defaulting",
            "--conversion",
            "--spoke",
            "v2",
        ],
        &["core/v1 Pod is a built-in Kubernetes kind", "--defaulting"],
    );
}

#[test]
fn create_webhook_needs_the_markers_of_a_current_project() {
    let project = project();
    let main = project.path().join("src/main.rs");
    let edited = std::fs::read_to_string(&main)
        .unwrap()
        .replace("// +rkb:scaffold:webhooks", "");
    std::fs::write(&main, edited).unwrap();
    assert_rejected(
        project.path(),
        &webhook_args("v1alpha1", &["--defaulting"]),
        &[
            "src/main.rs",
            "`+rkb:scaffold:webhooks` marker line is gone",
        ],
    );
}

/// Re-running with --force regenerates the webhook files but registers nothing twice.
#[test]
fn create_webhook_force_regenerates_without_registering_twice() {
    let project = project();
    let dir = project.path();
    rkb_ok(
        dir,
        &webhook_args("v1alpha1", &["--defaulting", "--programmatic-validation"]),
    );
    let file = dir.join("src/webhook/v1alpha1/memcached.rs");
    let generated = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, "// edited\n").unwrap();
    let before = common::files(dir);
    rkb_ok(dir, &webhook_args("v1alpha1", &["--defaulting", "--force"]));
    let after = common::files(dir);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), generated);
    let changed: Vec<_> = after
        .iter()
        .filter(|(path, content)| before.get(*path) != Some(content))
        .map(|(path, _)| path.clone())
        .collect();
    assert_eq!(changed, [Path::new("src/webhook/v1alpha1/memcached.rs")]);
}

#[test]
fn init_refuses_bad_rkb_sources_and_registry_needs_no_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(elsewhere.path().join("runtime")).unwrap();
    let no_crates = elsewhere.path().to_str().unwrap();
    let init = ["init", "--domain", "example.com", "--project-name", "op"];
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["--rkb-source", "git"],
            &[
                "invalid value 'git' for '--rkb-source",
                "possible values: path, registry",
            ],
        ),
        (
            &["--rkb-source", "registry", "--rkb-path", no_crates],
            &[
                "was given with --rkb-source registry",
                "rkb init --domain example.com --project-name op --rkb-source registry",
            ],
        ),
        (
            &["--rkb-path", no_crates],
            &[
                "does not hold rkb",
                "core/Cargo.toml (the crate rkb-core)",
                "rkb init --domain example.com --project-name op --rkb-path",
            ],
        ),
        (
            &["--rkb-path", "/nonexistent/rkb"],
            &[
                "the rkb source /nonexistent/rkb does not exist",
                "--rkb-source registry",
            ],
        ),
    ];
    for (extra, fragments) in cases {
        let args: Vec<&str> = init.iter().chain(extra.iter()).copied().collect();
        assert_rejected(dir.path(), &args, fragments);
    }
    // A registry project names rkb's crates by version and has no patch.
    let args: Vec<&str> = init
        .iter()
        .copied()
        .chain(["--rkb-source", "registry"])
        .collect();
    let (ok, text) = rkb_in(dir.path(), &args);
    assert!(ok, "{text}");
    assert!(!dir.path().join(".cargo").exists());
    let manifest = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
    assert!(manifest.contains("rkb-runtime = \"0."), "{manifest}");
}

#[test]
fn projects_of_newer_rkbs_and_of_kubebuilder_are_refused_by_what_they_are() {
    let project = project();
    let path = project.path().join("PROJECT");
    let original = std::fs::read_to_string(&path).unwrap();
    let api = api("web", "v1", "Site", &[]);
    let newer = original.replace(
        &format!("cliVersion: {}", rkb::version::CURRENT),
        "cliVersion: 9.0.0",
    );
    std::fs::write(&path, &newer).unwrap();
    assert_rejected(
        project.path(),
        &api,
        &[
            "written by rkb 9.0.0, newer than this rkb",
            "cargo install rkb --version 9.0.0",
        ],
    );
    // kubebuilder's own PROJECT (its resources lack rkb's `plural`-style fields too).
    std::fs::write(
        &path,
        "domain: my.domain\nlayout:\n- go.kubebuilder.io/v4\nprojectName: project\nrepo: example.com/project\n\
         resources:\n- api:\n    crdVersion: v1\n  domain: my.domain\n  group: batch\n  kind: CronJob\n  version: v1\n\
         version: \"3\"\n",
    )
    .unwrap();
    assert_rejected(
        project.path(),
        &api,
        &["it is a kubebuilder Go project", "rkb init --domain"],
    );
    // An older rkb's project is edited, with what changed since.
    let older = original.replace(
        &format!("cliVersion: {}", rkb::version::CURRENT),
        "cliVersion: 0.1.0",
    );
    std::fs::write(&path, older).unwrap();
    let (ok, text) = rkb_in(project.path(), &api);
    assert!(ok, "{text}");
    assert!(text.contains("scaffolded by rkb 0.1.0"), "{text}");
    assert!(text.contains("0.2.0: rkb's crates by version"), "{text}");
}

#[test]
fn build_image_refuses_what_cannot_run_in_an_image_without_a_base() {
    let project = project();
    let script = project.path().join("manager.sh");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let this_test = std::env::current_exe().unwrap();
    let image = ["build-image", "--tag", "example.com/demo:v1"];
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["build-image", "--tag", "Example.com/Demo:latest!"],
            &[
                "invalid --tag",
                "example:  --tag example.com/memcached-operator:v0.0.1",
            ],
        ),
        (
            &[
                "build-image",
                "--tag",
                "example.com/demo:v1",
                "--user",
                "0:0",
            ],
            &["uid 0 is root", "65532:65532"],
        ),
        (
            &[
                "build-image",
                "--tag",
                "example.com/demo:v1",
                "--user",
                "nobody",
            ],
            &["expected <uid>:<gid> in numbers"],
        ),
    ];
    for (args, fragments) in cases {
        assert_rejected(project.path(), args, fragments);
    }
    let binary = |path: &Path| -> Vec<String> {
        image
            .iter()
            .map(|s| s.to_string())
            .chain(["--binary".into(), path.display().to_string()])
            .collect()
    };
    let args = binary(&script);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_rejected(project.path(), &args, &["not a 64-bit Linux executable"]);
    let args = binary(&this_test);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_rejected(
        project.path(),
        &args,
        &["is linked dynamically", "+crt-static"],
    );
}

#[test]
fn versions_of_a_kind_share_its_scope_and_a_forced_first_version_stays_the_storage() {
    let project = project();
    let dir = project.path();
    let v1beta1 = api("cache", "v1beta1", "Memcached", &[]);
    let scoped: Vec<&str> = v1beta1
        .iter()
        .copied()
        .chain(["--cluster-scoped", "--no-controller"])
        .collect();
    assert_rejected(
        dir,
        &scoped,
        &[
            "Memcached cache/v1alpha1 is namespaced",
            "one CRD with one scope",
            "rkb create api --group cache --version v1beta1 --kind Memcached",
        ],
    );
    // The hint's command does what it says.
    let hinted: Vec<&str> = v1beta1.iter().copied().chain(["--no-controller"]).collect();
    let (ok, text) = rkb_in(dir, &hinted);
    assert!(ok, "{text}");
    let (ok, text) = rkb_in(dir, &api("cache", "v1alpha1", "Memcached", &["--force"]));
    assert!(ok, "{text}");
    let first = std::fs::read_to_string(dir.join("api/src/cache/v1alpha1/memcached.rs")).unwrap();
    let second = std::fs::read_to_string(dir.join("api/src/cache/v1beta1/memcached.rs")).unwrap();
    assert!(
        !first.contains("storage = false"),
        "the first version keeps storage:\n{first}"
    );
    assert!(second.contains("storage = false"), "{second}");
}

/// The commands a message suggests: every `rkb ...` after a `:  ` (the hints' form), as
/// the arguments after `rkb`.
fn hinted_commands(message: &str) -> Vec<Vec<String>> {
    message
        .lines()
        .filter_map(|line| line.split_once(":  rkb ").map(|(_, command)| command))
        .map(|command| command.split_whitespace().map(String::from).collect())
        .collect()
}

/// Names no file system takes are refused by what they are, with the limit, before the OS
/// answers "File name too long (os error 36)"; nothing is written.
#[test]
fn names_too_long_for_the_file_system_say_which_and_the_limit() {
    let project = project();
    // A valid API group of 223 characters: its sample's file name would be 235 bytes.
    let group = ["g", "h", "i"].map(|c| c.repeat(60)).join(".") + "." + &"j".repeat(40);
    let args = api(&group, "v1", "Foo", &[]);
    let sample =
        format!("the file config/samples/{group}_v1_foo.yaml would have a name of 235 bytes");
    let text = assert_rejected(
        project.path(),
        &args,
        &[
            &format!("invalid --group \"{group}\""),
            &sample,
            "6 more than rkb can write (229: file systems take 255",
            "the group may have at most 217 characters",
            "example:  --group cache",
        ],
    );
    assert!(!text.contains("os error"), "{text}");

    // A directory name of 300 bytes, for a new project and an existing one.
    let long = project.path().join("d".repeat(300));
    let long = long.to_str().unwrap();
    for args in [
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "x",
            "--dir",
            long,
        ][..],
        &api("cache", "v1", "Foo", &["--dir", long]),
    ] {
        let text = assert_rejected(
            project.path(),
            args,
            &[
                &format!("its name \"{}\" is 300 bytes long", "d".repeat(300)),
                "file systems take names of at most 255 bytes",
                "Choose a shorter directory (--dir)",
            ],
        );
        assert!(!text.contains("os error"), "{text}");
    }
}

/// A --dir that is (or is below) a regular file is named as such, not as the OS's
/// "Not a directory (os error 20)".
#[test]
fn a_dir_that_is_a_file_is_named() {
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(scratch.path().join("afile"), "mine").unwrap();
    for dir in ["afile", "afile/sub"] {
        for args in [
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "x",
                "--dir",
                dir,
            ][..],
            &api("cache", "v1", "Foo", &["--dir", dir]),
        ] {
            let text = assert_rejected(
                scratch.path(),
                args,
                &[&format!(
                    "{dir} cannot be a project directory: afile is a file, not a directory"
                )],
            );
            assert!(!text.contains("os error"), "{text}");
        }
    }
}

/// A default the user did not type is not blamed on a flag: the project name taken from
/// the directory, and `RKB_PATH` from the environment. The hinted commands work.
#[test]
fn defaults_are_blamed_on_where_they_came_from_and_the_hints_work() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = repo();
    let dir = scratch.path().join("My_Op");
    std::fs::create_dir(&dir).unwrap();
    let init = ["init", "--domain", "example.com", "--rkb-path", repo];
    let text = assert_rejected(
        &dir,
        &init,
        &[
            "invalid project name \"my_op\": no --project-name was given",
            "the directory name \"My_Op\" cannot be the project name (it contains '_')",
            "example:  --project-name my-op",
        ],
    );
    assert!(!text.contains("invalid --project-name"), "{text}");
    let named: Vec<&str> = init
        .iter()
        .copied()
        .chain(["--project-name", "my-op"])
        .collect();
    let (ok, text) = rkb_in(&dir, &named);
    assert!(ok, "{text}");
    assert!(
        std::fs::read_to_string(dir.join("PROJECT"))
            .unwrap()
            .contains("projectName: my-op")
    );

    // $RKB_PATH is a default of --rkb-path: --rkb-source registry overrides it, and a bad
    // one is named as the environment's.
    let registry = scratch.path().join("registry");
    std::fs::create_dir(&registry).unwrap();
    let env = [("RKB_PATH", repo)];
    let init = ["init", "--domain", "example.com", "--project-name", "op"];
    let with_registry: Vec<&str> = init
        .iter()
        .copied()
        .chain(["--rkb-source", "registry"])
        .collect();
    let (ok, text) = rkb_env(&registry, &with_registry, &env);
    assert!(ok, "{text}");
    assert!(!registry.join(".cargo").exists());

    let missing = scratch.path().join("missing");
    std::fs::create_dir(&missing).unwrap();
    let env = [("RKB_PATH", "/nonexistent/rkb")];
    let text = refused(
        &missing,
        &init,
        &env,
        &[
            "RKB_PATH=/nonexistent/rkb is set in the environment, and rkb takes it as --rkb-path",
            "the rkb source /nonexistent/rkb does not exist",
        ],
    );
    assert!(common::files(&missing).is_empty());
    // Its hints, with RKB_PATH still set: a checkout by --rkb-path, or the registry.
    let hinted = hinted_commands(&text);
    assert_eq!(hinted.len(), 2, "{text}");
    let with_path: Vec<&str> = hinted[0]
        .iter()
        .map(|w| {
            if w == "/path/to/rkb" {
                repo
            } else {
                w.as_str()
            }
        })
        .collect();
    let (ok, text) = rkb_env(&missing, &with_path, &env);
    assert!(ok, "{with_path:?}: {text}");
    let other = scratch.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let registry_hint: Vec<&str> = hinted[1].iter().map(String::as_str).collect();
    let (ok, text) = rkb_env(&other, &registry_hint, &env);
    assert!(ok, "{registry_hint:?}: {text}");
}

/// What the user wrote is never reported as "a bug in rkb": a boilerplate header that is
/// not a comment, and a file of theirs that rkb inserts into but that does not parse.
#[test]
fn a_users_file_that_breaks_the_generated_code_is_named_not_called_a_bug() {
    let project = project();
    let dir = project.path();
    let boilerplate = dir.join("hack/boilerplate.rs.txt");
    let site = api("web", "v1", "Site", &[]);
    for (header, fragments) in [
        (
            "Copyright 2026 Me\n",
            &[
                "hack/boilerplate.rs.txt is not a Rust comment: line 1 (\"Copyright 2026 Me\") is code",
                "e.g. `// Copyright 2026 The Authors.`",
            ][..],
        ),
        (
            "/* Copyright 2026 Me\n",
            &["hack/boilerplate.rs.txt opens a /* comment it does not close"],
        ),
    ] {
        std::fs::write(&boilerplate, header).unwrap();
        let text = assert_rejected(dir, &site, fragments);
        assert!(
            !text.contains("a bug in rkb") && !text.contains("marker"),
            "{text}"
        );
    }
    // Its hint: a // comment works.
    std::fs::write(&boilerplate, "// Copyright 2026 The Authors.\n").unwrap();
    rkb_ok(dir, &site);

    let main = dir.join("src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, format!("{text}fn broken( {{\n")).unwrap();
    let text = assert_rejected(
        dir,
        &webhook_args("v1alpha1", &["--defaulting"]),
        &[
            "src/main.rs does not parse as Rust, so rkb cannot insert code into it",
            "fn broken( {",
            "Fix the file",
        ],
    );
    assert!(!text.contains("a bug in rkb"), "{text}");
}

/// Runs `args` in `dir`, expecting a refusal that leaves the files alone and suggests
/// `hint`; then runs the hint with `placeholders` filled in, which must succeed.
fn follow_hint(dir: &Path, args: &[&str], hint: &str, placeholders: &[(&str, &str)]) {
    assert_rejected(dir, args, &[hint]);
    let mut command = hint.to_owned();
    for (placeholder, value) in placeholders {
        command = command.replace(placeholder, value);
    }
    let words: Vec<&str> = command.split_whitespace().skip(1).collect();
    let (ok, text) = rkb_in(dir, &words);
    assert!(ok, "the hint `{command}` of {args:?} failed:\n{text}");
}

/// `create api` with `args` (after `create api`).
fn api_args<'a>(args: &[&'a str]) -> Vec<&'a str> {
    ["create", "api"].iter().chain(args).copied().collect()
}

/// Every hint that suggests a command works: run as printed (placeholders filled in), it
/// does what the hint says, and where it is a step before the refused command, that
/// command then succeeds.
#[test]
fn every_hinted_command_does_what_it_says() {
    let flags = |g, v, k| vec!["--group", g, "--version", v, "--kind", k];
    // create api: nothing to scaffold, for a new kind and for an existing type.
    let dir = project();
    let dir = dir.path();
    let mut args = api("web", "v1", "Site", &[]);
    args.extend(["--no-resource", "--no-controller"]);
    follow_hint(
        dir,
        &args,
        "rkb create api --group web --version v1 --kind Site --no-controller",
        &[],
    );
    let mut args = api("core", "v1", "Pod", &[]);
    args.extend(["--no-resource", "--no-controller"]);
    follow_hint(
        dir,
        &args,
        "rkb create api --group core --version v1 --kind Pod --no-resource",
        &[],
    );
    // An unknown built-in kind.
    let mut args = api("core", "v1", "Secrets", &[]);
    args.push("--no-resource");
    assert_rejected(
        dir,
        &args,
        &["rkb create api --group core --version v1 --kind Pod --no-resource"],
    );
    // --image companions without --image, and --image with a flag it cannot take.
    let mut args = api("web", "v1", "Cache", &[]);
    args.extend(["--image-container-port", "11211"]);
    follow_hint(
        dir,
        &args,
        "rkb create api --group web --version v1 --kind Cache --image memcached:1.6.26-alpine3.19",
        &[],
    );
    let mut args = api("web", "v1", "Store", &[]);
    args.extend(["--image", "redis:7", "--cluster-scoped"]);
    follow_hint(
        dir,
        &args,
        "rkb create api --group web --version v1 --kind Store --image memcached:1.6.26-alpine3.19",
        &[],
    );
    // A second version of a kind with a controller: its types only.
    follow_hint(
        dir,
        &api("cache", "v1beta1", "Memcached", &[]),
        "rkb create api --group cache --version v1beta1 --kind Memcached --no-controller",
        &[],
    );

    // One kind in two groups: `rkb edit --multigroup` first, then the command works.
    for extra in [&[][..], &["--no-controller"]] {
        let project = project();
        let mut args = api("web", "v1", "Memcached", &[]);
        args.extend(extra);
        follow_hint(project.path(), &args, "rkb edit --multigroup", &[]);
        rkb_ok(project.path(), &args);
    }

    // Resource names that clash: the example names work.
    let project = self::project();
    let dir = project.path();
    for (args, hint) in [
        (
            &[
                "--group",
                "cache",
                "--version",
                "v1",
                "--kind",
                "Cache",
                "--plural",
                "memcacheds",
            ][..],
            "rkb create api --group cache --version v1 --kind Cache --plural caches",
        ),
        (
            &[
                "--group",
                "cache",
                "--version",
                "v1",
                "--kind",
                "Memcacheds",
                "--no-controller",
            ],
            "rkb create api --group cache --version v1 --kind MemcachedsItem --no-controller",
        ),
        (
            &[
                "--group",
                "cache",
                "--version",
                "v1beta1",
                "--kind",
                "Memcached",
                "--no-controller",
                "--plural",
                "mcs",
            ],
            "rkb create api --group cache --version v1beta1 --kind Memcached --no-controller --plural memcacheds",
        ),
    ] {
        follow_hint(dir, &api_args(args), hint, &[]);
    }

    // create webhook.
    let project = self::project();
    let dir = project.path();
    let example = "rkb create webhook --group cache --version v1alpha1 --kind Memcached";
    // The kind in another version: the webhook for the version it has.
    follow_hint(
        dir,
        &webhook_args("v2", &["--defaulting"]),
        "rkb create webhook --group cache --version v1alpha1 --kind Memcached --defaulting",
        &[],
    );
    // That made the hinted `--defaulting` of the next case a duplicate: start afresh.
    let project = self::project();
    let dir = project.path();
    follow_hint(
        dir,
        &webhook_args("v1alpha1", &[]),
        &format!("{example} --defaulting"),
        &[],
    );
    follow_hint(
        dir,
        &webhook_args("v1alpha1", &["--defaulting"]),
        &format!("{example} --programmatic-validation"),
        &[],
    );
    let mut typo = webhook_args("v1alpha1", &["--defaulting"]);
    typo[7] = "Memcache";
    follow_hint(
        dir,
        &typo,
        "rkb create api --group cache --version v1alpha1 --kind Memcache",
        &[],
    );
    rkb_ok(dir, &typo);
    let to_v1 = webhook_args("v1alpha1", &["--conversion", "--spoke", "v1"]);
    follow_hint(
        dir,
        &to_v1,
        "rkb create api --group cache --version <other version> --kind Memcached --no-controller",
        &[("<other version>", "v1")],
    );
    follow_hint(
        dir,
        &webhook_args("v1alpha1", &["--conversion"]),
        &format!("{example} --conversion --spoke v1"),
        &[],
    );
    follow_hint(
        dir,
        &webhook_args("v1", &["--conversion", "--spoke", "v1alpha1"]),
        "rkb create webhook --group cache --version v1alpha1 --kind Memcached --conversion --spoke <versions> --force",
        &[("<versions>", "v1")],
    );
    rkb_ok(dir, &api("core", "v1", "Pod", &["--no-resource"]));
    let mut pod = vec!["create", "webhook"];
    pod.extend(flags("core", "v1", "Pod"));
    pod.extend(["--conversion", "--spoke", "v2"]);
    follow_hint(
        dir,
        &pod,
        "rkb create webhook --group core --version v1 --kind Pod --defaulting",
        &[],
    );
}

/// The hints of `init` and of a directory without a project.
#[test]
fn every_hinted_init_command_does_what_it_says() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = repo();
    let dir = scratch.path().join("op");
    std::fs::create_dir(&dir).unwrap();
    // No project yet.
    follow_hint(
        &dir,
        &api("web", "v1", "Site", &[]),
        "rkb init --domain example.com",
        &[],
    );
    // A project already: add an API, or start afresh elsewhere.
    let init = ["init", "--domain", "example.com", "--project-name", "op"];
    follow_hint(
        &dir,
        &init,
        "rkb create api --group <group> --version <version> --kind <Kind>",
        &[("<group>", "web"), ("<version>", "v1"), ("<Kind>", "Site")],
    );
    follow_hint(
        &dir,
        &init,
        "rkb init --domain example.com --project-name op --dir <new-dir>",
        &[("<new-dir>", "../fresh")],
    );
    assert!(scratch.path().join("fresh/PROJECT").is_file());
    // --rkb-path with --rkb-source registry: either of them.
    for (name, hint) in [
        (
            "a",
            "rkb init --domain example.com --project-name op --rkb-source registry".to_owned(),
        ),
        (
            "b",
            format!("rkb init --domain example.com --project-name op --rkb-path {repo}"),
        ),
    ] {
        let dir = scratch.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let args: Vec<&str> = init
            .iter()
            .copied()
            .chain(["--rkb-source", "registry", "--rkb-path", repo])
            .collect();
        follow_hint(&dir, &args, &hint, &[]);
    }
    // A source without rkb's crates.
    let dir = scratch.path().join("c");
    std::fs::create_dir(&dir).unwrap();
    let args: Vec<&str> = init
        .iter()
        .copied()
        .chain(["--rkb-path", "/nonexistent/rkb"])
        .collect();
    follow_hint(
        &dir,
        &args,
        "rkb init --domain example.com --project-name op --rkb-path /path/to/rkb",
        &[("/path/to/rkb", repo)],
    );
}

/// A CRD of `group` with one version, v1, and a schema with a spec.
fn small_crd(group: &str, kind: &str, plural: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\n\
         spec:\n  group: {group}\n  names:\n    kind: {kind}\n    plural: {plural}\n  scope: Namespaced\n  versions:\n\
         \x20 - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n\
         \x20       properties:\n          spec:\n            type: object\n"
    )
}

#[test]
fn create_api_refuses_bad_external_crds_without_touching_files() {
    let project = project();
    let inputs = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = inputs.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let certificates = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/external-crds/cert-manager/cert-manager.io_certificates.yaml");
    let certificates_text = std::fs::read_to_string(&certificates).unwrap();
    let config_map = write(
        "configmap.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n",
    );
    let several = write(
        "several.yaml",
        &format!(
            "{}---\n{}",
            small_crd("widgets.example.org", "Widget", "widgets"),
            small_crd("widgets.example.org", "Gadget", "gadgets")
        ),
    );
    let own = write(
        "own.yaml",
        &small_crd("cache.example.com", "Cache", "caches"),
    );
    let not_yaml = write("broken.yaml", "apiVersion: [unclosed\n");
    let missing = inputs.path().join("absent.yaml");
    let certificates = certificates.to_str().unwrap();
    let cases: &[(Vec<&str>, &[&str])] = &[
        (
            vec!["--external-crd", &config_map],
            &[
                "holds no apiextensions.k8s.io/v1 CustomResourceDefinition (found: v1 ConfigMap)",
                "e.g.  rkb create api --external-crd",
            ],
        ),
        (
            vec!["--external-crd", certificates, "--version", "v2"],
            &[
                "the CRD certificates.cert-manager.io",
                "has no version v2; its versions: v1",
                "--version v1",
            ],
        ),
        (
            vec!["--external-crd", &several],
            &[
                "holds 2 CRDs (Widget, Gadget); say which kind to reconcile with --kind",
                "--kind Widget",
            ],
        ),
        (
            vec!["--external-crd", &several, "--kind", "Sprocket"],
            &["has no CRD of kind Sprocket; its kinds: Widget, Gadget"],
        ),
        (
            vec!["--external-crd", &own],
            &[
                "the CRD caches.cache.example.com",
                "is in this project's domain example.com",
                "it is not external",
                "rkb create api --group cache --version v1 --kind Cache",
            ],
        ),
        (
            vec!["--external-crd", missing.to_str().unwrap()],
            &["cannot read --external-crd", "absent.yaml", "No such file"],
        ),
        (
            vec!["--external-crd", &not_yaml],
            &["document 1 is not valid YAML"],
        ),
        (
            vec!["--external-crd", certificates, "--group", "cert-manager"],
            &[
                "cannot be used with",
                "'--group <GROUP>'",
                "'--external-crd <FILE.yaml>'",
            ],
        ),
    ];
    for (args, fragments) in cases {
        let mut full = vec!["create", "api"];
        full.extend(args.iter().copied());
        assert_rejected(project.path(), &full, fragments);
    }
    // The file is read, not changed; and a good one is then accepted, once.
    assert_eq!(
        std::fs::read_to_string(certificates).unwrap(),
        certificates_text
    );
    let (ok, text) = rkb_in(
        project.path(),
        &["create", "api", "--external-crd", certificates],
    );
    assert!(ok, "{text}");
    assert_rejected(
        project.path(),
        &["create", "api", "--external-crd", certificates],
        &[
            "a controller for cert-manager/v1 Certificate already exists in PROJECT",
            "--force",
        ],
    );
}

/// A second version of an external kind: its types join the first's, without a second
/// controller and from the same CRD.
#[test]
fn create_api_refuses_a_second_version_of_an_external_kind_that_cannot_be() {
    let project = project();
    let tunnels = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/external-crds/kinds/relay.example.net_tunnels.yaml");
    let tunnels = tunnels.to_str().unwrap();
    let (ok, text) = rkb_in(
        project.path(),
        &["create", "api", "--external-crd", tunnels],
    );
    assert!(ok, "{text}");
    let message = assert_rejected(
        project.path(),
        &[
            "create",
            "api",
            "--external-crd",
            tunnels,
            "--version",
            "v1beta1",
        ],
        &[
            "the external kind Tunnel relay.example.net has a controller already \
             (src/controller/tunnel.rs, which reconciles its version v1)",
            "--version v1beta1 --kind Tunnel --no-controller",
        ],
    );
    assert!(!message.contains("--group"), "{message}");
    let inputs = tempfile::tempdir().unwrap();
    let newer = inputs.path().join("tunnels.yaml");
    std::fs::write(
        &newer,
        std::fs::read_to_string(tunnels).unwrap().replace(
            "Whether the tunnel is up.",
            "Whether the tunnel carries traffic.",
        ),
    )
    .unwrap();
    assert_rejected(
        project.path(),
        &[
            "create",
            "api",
            "--external-crd",
            newer.to_str().unwrap(),
            "--version",
            "v1beta1",
            "--no-controller",
        ],
        &[
            "config/external-crds/relay.example.net_tunnels.yaml holds another copy of the CRD \
             tunnels.relay.example.net than",
            "run again with --force",
            "--version <version> --kind Tunnel --force",
        ],
    );
}

/// Webhooks on an external kind: admission, as for a built-in kind; no conversion, which
/// belongs to the project that owns the CRD.
#[test]
fn create_webhook_refuses_a_conversion_webhook_for_an_external_kind() {
    let project = project();
    let tunnels = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/external-crds/kinds/relay.example.net_tunnels.yaml");
    let tunnels = tunnels.to_str().unwrap();
    for args in [
        &["create", "api", "--external-crd", tunnels][..],
        &[
            "create",
            "api",
            "--external-crd",
            tunnels,
            "--version",
            "v1beta1",
            "--no-controller",
        ],
    ] {
        let (ok, text) = rkb_in(project.path(), args);
        assert!(ok, "{text}");
    }
    let message = assert_rejected(
        project.path(),
        &[
            "create",
            "webhook",
            "--group",
            "relay",
            "--version",
            "v1",
            "--kind",
            "Tunnel",
            "--conversion",
            "--spoke",
            "v1beta1",
        ],
        &[
            "--conversion is for kinds this project defines; Tunnel relay.example.net is an \
             external API (`create api --external-crd`)",
            "belong to the project that defines it",
            "accepted: --defaulting and --programmatic-validation",
            "example:  rkb create webhook --group relay --version v1 --kind Tunnel --defaulting",
        ],
    );
    assert!(
        message.lines().all(|l| !l.trim_start().contains("   ")),
        "a run of spaces mid-sentence:\n{message}"
    );
}

/// (what the row shows, arguments, fragments the message has, fragments it must not have)
type BlameCase = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// Refusals blame what the user gave and give a command that does what they meant, one
/// row per class: (what the row shows, arguments, fragments the message has, fragments
/// it must not have). The project has cache/v1alpha1 Memcached; `KIND63` stands for a
/// kind of 63 characters, the most a kind may have.
const BLAME_CASES: &[BlameCase] = &[
    (
        "a derived value is blamed on the flag it came from, not on one never given",
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "KIND63",
        ],
        &[
            "invalid --kind \"KIND63\": the plural rkb derives from it when no --plural is given",
            "example:  rkb create api --group cache --version v1 --kind KIND63 --plural kind63",
        ],
        &["invalid --plural"],
    ),
    (
        "a lowercase kind is matched to the kind the project has (delete api)",
        &[
            "delete",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "memcached",
        ],
        &[
            "no API cache/v1alpha1 memcached in PROJECT (kinds are case-sensitive, and PROJECT has \
             Memcached (cache/v1alpha1), not memcached)",
            "example:  rkb delete api --group cache --version v1alpha1 --kind Memcached",
        ],
        &[],
    ),
    (
        "a lowercase kind is matched to the kind the project has (create webhook)",
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "memcached",
            "--defaulting",
        ],
        &[
            "kinds are case-sensitive, and PROJECT has Memcached (cache/v1alpha1), not memcached",
            "example:  rkb create webhook --group cache --version v1alpha1 --kind Memcached --defaulting",
        ],
        &["rkb create api --group cache --version v1alpha1 --kind memcached"],
    ),
    (
        "a hint never deletes another kind than the one asked for",
        &[
            "delete",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Redis",
        ],
        &[
            "no API cache/v1alpha1 Redis in PROJECT",
            "accepted: --group cache --version v1alpha1 --kind Memcached",
        ],
        &["example:  rkb delete api"],
    ),
    (
        "a hint never deletes another kind's webhooks",
        &[
            "delete",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
        &["no webhooks for cache/v1alpha1 Memcached in PROJECT"],
        &["example:  rkb delete webhook"],
    ),
    (
        "a number too large is called too large, not not positive",
        &[
            "create",
            "api",
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1.6",
            "--run-as-user",
            "4294967296",
        ],
        &[
            "invalid --run-as-user \"4294967296\": it is larger than 2147483647",
            "example:  --run-as-user 1001",
        ],
        &["not a positive number"],
    ),
    (
        "a port too large is called too large",
        &[
            "create",
            "api",
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Cache",
            "--image",
            "memcached:1.6",
            "--image-container-port",
            "70000",
        ],
        &["invalid --image-container-port \"70000\": it is larger than 65535"],
        &[],
    ),
];

#[test]
fn refusals_blame_what_the_user_gave_and_hint_at_what_they_meant() {
    let project = project();
    let dir = project.path();
    let kind63 = format!("K{}", "d".repeat(62));
    for (class, args, fragments, absent) in BLAME_CASES {
        let with_kind = |text: &str| {
            text.replace("KIND63", &kind63)
                .replace("--plural kind63", &format!("--plural k{}", "d".repeat(62)))
        };
        let args: Vec<String> = args.iter().map(|a| with_kind(a)).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let fragments: Vec<String> = fragments.iter().map(|f| with_kind(f)).collect();
        let fragments: Vec<&str> = fragments.iter().map(String::as_str).collect();
        let text = assert_rejected(dir, &args, &fragments);
        for fragment in *absent {
            assert!(
                !text.contains(fragment),
                "{class}: {fragment:?} in:\n{text}"
            );
        }
    }
    // The hint of the derived plural works as printed.
    let long = api("cache", "v1", &kind63, &[]);
    let text = assert_rejected(dir, &long, &[]);
    let hinted = hinted_commands(&text);
    assert_eq!(hinted.len(), 1, "{text}");
    let hint: Vec<&str> = hinted[0].iter().map(String::as_str).collect();
    let (ok, text) = rkb_in(dir, &hint);
    assert!(ok, "{hint:?}: {text}");
}

/// A valid reference to an image in a registry at an IPv6 address is accepted, and the
/// manager's Deployment stays valid YAML.
#[test]
fn an_image_in_an_ipv6_registry_is_accepted() {
    let project = project();
    let dir = project.path();
    let image = "[fd00::1]:5000/memcached:1.6";
    let args = api("web", "v1", "Cache", &["--image", image]);
    let (ok, text) = rkb_in(dir, &args);
    assert!(ok, "{text}");
    let manager = std::fs::read_to_string(dir.join("config/manager/manager.yaml")).unwrap();
    let deployment: serde_yaml_ng::Value = serde_yaml_ng::Deserializer::from_str(&manager)
        .map(|doc| serde::Deserialize::deserialize(doc).expect("manager.yaml is YAML"))
        .find(|doc: &serde_yaml_ng::Value| doc["kind"] == "Deployment")
        .expect("a Deployment");
    let env = &deployment["spec"]["template"]["spec"]["containers"][0]["env"];
    assert_eq!(env[0]["value"], image, "{manager}");
    // An unclosed bracket is still refused, by what is wrong with it.
    assert_rejected(
        dir,
        &api("web", "v1", "Other", &["--image", "[fd00::1/memcached"]),
        &["invalid --image", "does not close it"],
    );
}

/// A PROJECT that lists one kind twice is named as such, not reported as a missing file
/// when the second entry is undone.
#[test]
fn a_project_with_a_duplicated_entry_is_named_as_such() {
    let project = project();
    let dir = project.path();
    let path = dir.join("PROJECT");
    let text = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = text.split_once("resources:\n").unwrap();
    let (entries, tail) = rest.split_once("version: '3'").unwrap();
    std::fs::write(
        &path,
        format!("{head}resources:\n{entries}{entries}version: '3'{tail}"),
    )
    .unwrap();
    for args in [
        &[
            "delete",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ][..],
        &api("cache", "v1", "Memcached", &["--no-controller"]),
    ] {
        assert_rejected(
            dir,
            args,
            &[
                "PROJECT lists Memcached cache/v1alpha1 twice (resources 1 and 2)",
                "Merge the two entries into one",
            ],
        );
    }
}

/// Two `rkb init`s into one new directory: one scaffolds it, and the other is told that
/// another rkb command made it (not that an editor changed a file), with what to do.
#[test]
fn the_loser_of_two_concurrent_inits_is_told_another_rkb_made_the_project() {
    let parent = tempfile::tempdir().unwrap();
    let repo = repo();
    for round in 0..3 {
        let dir = format!("new-{round}");
        let init = [
            "init",
            "--dir",
            &dir,
            "--domain",
            "example.com",
            "--project-name",
            "x",
            "--rkb-path",
            repo,
        ];
        let both = std::thread::scope(|s| {
            let runs = [0, 1].map(|_| s.spawn(|| rkb_in(parent.path(), &init)));
            runs.map(|run| run.join().unwrap())
        });
        assert!(both.iter().any(|(ok, _)| *ok), "{both:?}");
        for (_, text) in both.iter().filter(|(ok, _)| !ok) {
            assert!(text.contains("another rkb command"), "{text}");
            assert!(!text.contains("editor"), "{text}");
        }
    }
}

/// A `rustfmt.toml` of the user's that rustfmt cannot read is named as theirs, with what
/// rustfmt said, not reported as a bug in rkb or as a Rust file that does not parse.
#[test]
fn a_users_invalid_rustfmt_toml_is_named_not_called_a_bug() {
    let project = project();
    let dir = project.path();
    let site = api("web", "v1", "Site", &[]);
    std::fs::write(dir.join("rustfmt.toml"), "max_width = \"wide\"\n").unwrap();
    let text = assert_rejected(
        dir,
        &site,
        &[
            "rustfmt cannot read",
            "rustfmt.toml, so rkb cannot format the Rust files it writes",
            "That file is yours",
            "max_width",
            "Fix or remove it",
        ],
    );
    assert!(
        !text.contains("a bug in rkb") && !text.contains("does not parse as Rust"),
        "{text}"
    );
    std::fs::remove_file(dir.join("rustfmt.toml")).unwrap();
    rkb_ok(dir, &site);
}

/// How rkb answers a flag of kubebuilder's.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    /// Taken with kubebuilder's meaning.
    Same,
    /// Taken, changing nothing, with a one-line note on stderr saying why.
    Ignored,
    /// Refused with the reason and what to type in rkb, files unchanged.
    Refused,
}

/// Where kubebuilder's flags below were read: the flag definitions of `init`, `create
/// api`, `create webhook` and `edit` (go/v4, kustomize/v2, deploy-image/v1-alpha and
/// helm/v2-alpha plugins, and the root command's `--plugins` and `--project-version`).
const KUBEBUILDER_READ_AT: &str = "kubebuilder v4.15.0 (master at 5c40072)";

/// (command, kubebuilder flag, rkb's answer, command lines run in a fresh project, split
/// at spaces: the last one has the flag and is the one checked).
type FlagRow = (&'static str, &'static str, Answer, &'static [&'static str]);

#[rustfmt::skip]
const KUBEBUILDER_FLAGS: &[FlagRow] = {
    use Answer::*;
    &[
        ("init", "--domain", Same, &["init --domain example.com"]),
        ("init", "--project-name", Same, &["init --domain example.com --project-name demo"]),
        ("init", "--repo", Ignored, &["init --domain example.com --repo github.com/example/demo"]),
        ("init", "--owner", Same, &["init --domain example.com --owner Demo"]),
        ("init", "--license", Same, &["init --domain example.com --license none"]),
        ("init", "--license-file", Same, &["init --domain example.com --license-file header.txt"]),
        ("init", "--fetch-deps", Ignored, &["init --domain example.com --fetch-deps=false"]),
        ("init", "--skip-go-version-check", Ignored, &["init --domain example.com --skip-go-version-check"]),
        ("init", "--multigroup", Same, &["init --domain example.com --multigroup=true"]),
        ("init", "--namespaced", Same, &["init --domain example.com --namespaced=false"]),
        ("init", "--plugins", Same, &["init --domain example.com --plugins grafana/v1-alpha,helm"]),
        ("init", "--plugins", Ignored, &["init --domain example.com --plugins go/v4"]),
        ("init", "--plugins", Same, &["init --domain example.com --plugins autoupdate/v1-alpha"]),
        ("init", "--plugins", Refused, &["init --domain example.com --plugins go/v4,helm/v1-alpha"]),
        ("init", "--project-version", Ignored, &["init --domain example.com --project-version 3"]),
        ("create api", "--group", Same, &["create api --group cache --version v1 --kind Captain"]),
        ("create api", "--version", Same, &["create api --group cache --version v1 --kind Captain"]),
        ("create api", "--kind", Same, &["create api --group cache --version v1 --kind Captain"]),
        ("create api", "--plural", Same, &["create api --group cache --version v1 --kind Admiral --plural admirales"]),
        ("create api", "--resource", Same, &["create api --group apps --version v1 --kind Deployment --resource=false --controller=true"]),
        ("create api", "--controller", Same, &["create api --group cache --version v1 --kind Sailor --controller=false"]),
        ("create api", "--controller-name", Same, &["create api --group cache --version v1alpha1 --kind Memcached --resource=false --controller-name memcached-backup"]),
        ("create api", "--namespaced", Same, &["create api --group cache --version v1 --kind Admiral --namespaced=false"]),
        ("create api", "--ssa", Ignored, &["create api --group cache --version v1 --kind Navigator --ssa"]),
        ("create api", "--make", Ignored, &["create api --group cache --version v1 --kind Captain --make=false"]),
        ("create api", "--force", Same, &["create api --group cache --version v1alpha1 --kind Memcached --force"]),
        ("create api", "--external-api-path", Refused, &["create api --group cert-manager --version v1 --kind Certificate --resource=false --external-api-path github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"]),
        ("create api", "--external-api-domain", Refused, &["create api --group cert-manager --version v1 --kind Certificate --resource=false --external-api-domain io"]),
        ("create api", "--external-api-module", Refused, &["create api --group cert-manager --version v1 --kind Certificate --resource=false --external-api-module github.com/cert-manager/cert-manager@v1.20.2"]),
        ("create api", "--image", Same, &["create api --group cache --version v1 --kind Busybox --image busybox:1.36.1"]),
        ("create api", "--image-container-command", Same, &["create api --group cache --version v1 --kind Busybox --image busybox:1.36.1 --image-container-command sleep,3600"]),
        ("create api", "--image-container-port", Same, &["create api --group cache --version v1 --kind Busybox --image busybox:1.36.1 --image-container-port 8080"]),
        ("create api", "--run-as-user", Same, &["create api --group cache --version v1 --kind Busybox --image busybox:1.36.1 --run-as-user 1001"]),
        ("create api", "--manifests", Ignored, &["create api --group cache --version v1 --kind Busybox --image busybox:1.36.1 --manifests=false"]),
        ("create api", "--plugins", Ignored, &["create api --group cache --version v1 --kind Busybox --image busybox:1.36.1 --plugins deploy-image/v1-alpha"]),
        ("create api", "--plugins", Refused, &["create api --group cache --version v1 --kind Busybox --plugins deploy-image/v1-alpha"]),
        ("create webhook", "--group", Same, &["create webhook --group cache --version v1alpha1 --kind Memcached --defaulting"]),
        ("create webhook", "--version", Same, &["create webhook --group cache --version v1alpha1 --kind Memcached --defaulting"]),
        ("create webhook", "--kind", Same, &["create webhook --group cache --version v1alpha1 --kind Memcached --defaulting"]),
        ("create webhook", "--defaulting", Same, &["create webhook --group cache --version v1alpha1 --kind Memcached --defaulting"]),
        ("create webhook", "--programmatic-validation", Same, &["create webhook --group cache --version v1alpha1 --kind Memcached --programmatic-validation"]),
        ("create webhook", "--conversion", Same, &[
            "create api --group cache --version v1beta1 --kind Memcached --controller=false",
            "create webhook --group cache --version v1alpha1 --kind Memcached --conversion --spoke v1beta1",
        ]),
        ("create webhook", "--spoke", Same, &[
            "create api --group cache --version v1beta1 --kind Memcached --controller=false",
            "create webhook --group cache --version v1alpha1 --kind Memcached --conversion --spoke v1beta1",
        ]),
        ("create webhook", "--force", Same, &[
            "create webhook --group cache --version v1alpha1 --kind Memcached --defaulting",
            "create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --force",
        ]),
        ("create webhook", "--plural", Ignored, &["create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --plural memcacheds"]),
        ("create webhook", "--make", Ignored, &["create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --make=false"]),
        ("create webhook", "--defaulting-path", Same, &["create webhook --group cache --version v1alpha1 --kind Memcached --defaulting --defaulting-path /my-custom-mutate-path"]),
        ("create webhook", "--validation-path", Same, &["create webhook --group cache --version v1alpha1 --kind Memcached --programmatic-validation --validation-path /my-custom-validate-path"]),
        ("create webhook", "--external-api-path", Refused, &["create webhook --group cert-manager --version v1 --kind Issuer --defaulting --external-api-path github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"]),
        ("create webhook", "--external-api-domain", Refused, &["create webhook --group cert-manager --version v1 --kind Issuer --defaulting --external-api-domain io"]),
        ("create webhook", "--external-api-module", Refused, &["create webhook --group cert-manager --version v1 --kind Issuer --defaulting --external-api-module github.com/cert-manager/cert-manager@v1.20.2"]),
        ("edit", "--multigroup", Same, &["edit --multigroup=true"]),
        ("edit", "--multigroup", Refused, &["edit --multigroup=false"]),
        ("edit", "--namespaced", Same, &["edit --namespaced"]),
        ("edit", "--force", Ignored, &["edit --plugins grafana --force"]),
        ("edit", "--license", Refused, &["edit --license none"]),
        ("edit", "--license-file", Refused, &["edit --license-file LICENSE.txt"]),
        ("edit", "--owner", Refused, &["edit --owner Demo"]),
        ("edit", "--plugins", Same, &["edit --plugins grafana/v1-alpha,helm.kubebuilder.io/v2-alpha --no-chart"]),
        ("edit", "--plugins", Same, &["edit --plugins autoupdate/v1-alpha"]),
        ("edit", "--plugins", Refused, &["edit --plugins helm/v1-alpha"]),
        ("edit", "--manifests", Ignored, &["edit --plugins helm/v2-alpha --no-chart --manifests dist/install.yaml"]),
        ("edit", "--output-dir", Ignored, &["edit --plugins helm/v2-alpha --no-chart --output-dir dist"]),
        ("edit", "--output-dir", Refused, &["edit --plugins helm/v2-alpha --output-dir charts"]),
    ]
};

/// Runs rkb in `dir`: (success, stdout, stderr).
fn rkb_split(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_rkb"))
        .args(args)
        .current_dir(dir)
        .env_remove("RKB_PATH")
        .output()
        .expect("rkb runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (
        output.status.success(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

#[test]
fn every_kubebuilder_flag_is_taken_ignored_with_a_note_or_refused_with_rkbs_spelling() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for (command, flag, answer, steps) in KUBEBUILDER_FLAGS {
        let row = format!("{KUBEBUILDER_READ_AT}: {command} {flag} ({answer:?})");
        let (checked, setup) = steps.split_last().unwrap();
        let mut args: Vec<&str> = checked.split_whitespace().collect();
        assert!(
            args.iter().any(|a| a.split('=').next() == Some(*flag)),
            "{row}: the checked command line lacks the flag"
        );
        // init runs in an empty directory demo/; the other commands in a project with an API.
        let (_scratch, dir) = if *command == "init" {
            let scratch = tempfile::tempdir().unwrap();
            let dir = scratch.path().join("demo");
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("header.txt"), "Copyright 2026 Demo.\n").unwrap();
            args.extend(["--rkb-path", repo.to_str().unwrap()]);
            (scratch, dir)
        } else {
            let project = project();
            let dir = project.path().to_path_buf();
            (project, dir)
        };
        for step in setup {
            let step: Vec<&str> = step.split_whitespace().collect();
            let (ok, out, err) = rkb_split(&dir, &step);
            assert!(ok, "{row}: setup {step:?} failed:\n{out}{err}");
        }
        let before = common::files(&dir);
        let (ok, out, err) = rkb_split(&dir, &args);
        let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("note: ")).collect();
        match answer {
            Answer::Same => {
                assert!(ok, "{row}: {args:?} failed:\n{out}{err}");
                assert!(
                    notes.is_empty(),
                    "{row}: a note for a flag rkb takes:\n{err}"
                );
            }
            Answer::Ignored => {
                assert!(ok, "{row}: {args:?} failed:\n{out}{err}");
                assert!(
                    notes.len() == 1
                        && notes[0].starts_with(&format!("note: {flag}"))
                        && notes[0].contains("changes nothing in rkb: "),
                    "{row}: expected one note on stderr, saying why, got:\n{err}"
                );
            }
            Answer::Refused => {
                assert!(!ok, "{row}: {args:?} succeeded:\n{out}{err}");
                assert!(
                    err.starts_with(&format!("error: {flag}")),
                    "{row}: the refusal does not start with the flag it blames:\n{err}"
                );
                let (why, instead) = err.split_once("\n  ").unwrap_or_else(|| {
                    panic!("{row}: no reason and hint on lines of their own:\n{err}")
                });
                assert!(why.contains(": ") && instead.len() > 20, "{row}:\n{err}");
                assert!(
                    common::files(&dir) == before,
                    "{row}: files changed although it failed"
                );
            }
        }
    }
}

/// `init --license-file`: a plain-text header becomes `//` lines, a Go `/* */` header is kept,
/// and every generated source starts with it; an unreadable or empty file is refused.
#[test]
fn init_takes_the_license_header_from_a_file() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for (header, boilerplate) in [
        (
            "Copyright 2026 The Demo Authors.\n\nSPDX-License-Identifier: MIT\n",
            "// Copyright 2026 The Demo Authors.\n//\n// SPDX-License-Identifier: MIT\n\n",
        ),
        (
            "/*\nCopyright 2026 The Demo Authors.\n*/\n",
            "/*\nCopyright 2026 The Demo Authors.\n*/\n\n",
        ),
    ] {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("demo");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(scratch.path().join("header.txt"), header).unwrap();
        let (ok, text) = rkb_in(
            &dir,
            &[
                "init",
                "--domain",
                "example.com",
                "--license-file",
                "../header.txt",
                "--rkb-path",
                repo.to_str().unwrap(),
            ],
        );
        assert!(ok, "{text}");
        assert_eq!(
            std::fs::read_to_string(dir.join("hack/boilerplate.rs.txt")).unwrap(),
            boilerplate
        );
        let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
        assert!(main.starts_with(boilerplate), "{main}");
        let (ok, text) = rkb_in(
            &dir,
            &[
                "create",
                "api",
                "--group",
                "cache",
                "--version",
                "v1",
                "--kind",
                "Memcached",
            ],
        );
        assert!(ok, "{text}");
        let types = std::fs::read_to_string(dir.join("api/src/cache/v1/memcached.rs")).unwrap();
        assert!(types.starts_with(boilerplate), "{types}");
    }
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(scratch.path().join("empty.txt"), "\n").unwrap();
    for (file, fragments) in [
        (
            "missing.txt",
            &[
                "cannot read --license-file missing.txt",
                "e.g.  rkb init --domain example.com --license-file",
            ][..],
        ),
        (
            "empty.txt",
            &["--license-file empty.txt is empty", "--license none"][..],
        ),
    ] {
        assert_rejected(
            scratch.path(),
            &[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "demo",
                "--license-file",
                file,
            ],
            fragments,
        );
    }
}

#[test]
fn webhook_certs_refuses_unknown_values_namespaced_operators_and_hand_edited_parts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let init = ["init", "--domain", "example.com", "--project-name", "op"];
    let mut unknown = init.to_vec();
    unknown.extend(["--webhook-certs", "selfsigned"]);
    assert_rejected(
        dir.path(),
        &unknown,
        &[
            "invalid value 'selfsigned' for '--webhook-certs <SOURCE>'",
            "[possible values: self, cert-manager]",
        ],
    );
    let mut namespaced = init.to_vec();
    namespaced.extend(["--namespaced", "--webhook-certs", "self"]);
    assert_rejected(
        dir.path(),
        &namespaced,
        &[
            "--webhook-certs self does not work in a namespace-scoped operator",
            "cluster-scoped",
            "--webhook-certs cert-manager",
        ],
    );

    let project = scaffolded(
        &[DEMO, &["--webhook-certs", "cert-manager"]].concat(),
        &[
            api("cache", "v1alpha1", "Memcached", &[]),
            webhook_args("v1alpha1", &["--defaulting"]),
        ],
    );
    let dir = project.path();
    assert_rejected(
        dir,
        &["edit", "--webhook-certs", "none"],
        &[
            "invalid value 'none' for '--webhook-certs <SOURCE>'",
            "self, cert-manager",
        ],
    );
    let issuer = dir.join("config/certmanager/issuer.yaml");
    let original = std::fs::read_to_string(&issuer).unwrap();
    std::fs::write(
        &issuer,
        format!("{original}# our own CA, see the runbook\n"),
    )
    .unwrap();
    let kustomization = dir.join("config/default/kustomization.yaml");
    let before = std::fs::read_to_string(&kustomization).unwrap();
    std::fs::write(
        &kustomization,
        before.replace(
            "      name: serving-cert\n",
            "      name: our-serving-cert\n",
        ),
    )
    .unwrap();
    assert_rejected(
        dir,
        &["edit", "--webhook-certs", "self"],
        &[
            "nothing was changed",
            "from cert-manager to self",
            "config/certmanager/issuer.yaml: changed since rkb scaffolded it",
            "config/default/kustomization.yaml: the lines rkb inserted are not there",
            "run `rkb edit --webhook-certs self` again",
            "`webhookCerts: self` in PROJECT",
        ],
    );
    // As the message says: the edited parts deleted (or put back), the switch goes through.
    std::fs::remove_file(&issuer).unwrap();
    std::fs::write(&kustomization, before).unwrap();
    rkb_ok(dir, &["edit", "--webhook-certs", "self"]);
    assert!(!dir.join("config/certmanager").exists());
    assert!(dir.join("api/src/webhook_certs.rs").is_file());
}
