//! `rkb create api --controller-name`: several controllers for one kind, as kubebuilder's
//! flag gives them. Each has its own module, reconciler type, registration (metrics label),
//! RBAC entry, status condition and field manager; PROJECT lists them in kubebuilder's
//! `controllers:` form; `delete api --controller-name` and `alpha generate` follow them;
//! clashes are refused by name with the tree left as it was.

use crate::common;

use std::fs;
use std::path::Path;

use common::rkb_in;

/// `rkb <verb> api --group cache --version v1alpha1 --kind <kind> <extra>`.
fn command(verb: &str, kind: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [verb, "api", "--group", "cache", "--version", "v1alpha1"]
        .map(str::to_owned)
        .into();
    args.extend(["--kind".to_owned(), kind.to_owned()]);
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args
}

fn api(kind: &str, extra: &[&str]) -> Vec<String> {
    command("create", kind, extra)
}

fn delete(kind: &str, extra: &[&str]) -> Vec<String> {
    command("delete", kind, extra)
}

const BACKUP: &[&str] = &["--no-resource", "--controller-name", "memcached-backup"];

/// A project with Memcached and its second controller, `memcached-backup`.
fn with_backup(dir: &Path) {
    common::init_demo(dir, &[]);
    run(dir, &api("Memcached", &[]));
    run(dir, &api("Memcached", BACKUP));
}

/// Asserts the project holds exactly `expected`, naming the files that differ.
fn assert_tree(dir: &Path, expected: &std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>) {
    let now = common::files(dir);
    let differ: Vec<_> = now
        .keys()
        .chain(expected.keys())
        .filter(|f| now.get(*f) != expected.get(*f))
        .collect();
    assert!(differ.is_empty(), "files differ: {differ:?}");
}

fn run(dir: &Path, args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    rkb_in(dir, &args)
}

/// Runs a command that must be refused; returns its message after checking that the
/// tree did not change.
fn refused(dir: &Path, args: &[String]) -> String {
    let before = common::files(dir);
    let mut full: Vec<&str> = args.iter().map(String::as_str).collect();
    full.extend(["--dir", dir.to_str().unwrap()]);
    let message = common::rkb(&full).expect_err(&format!("{args:?} was accepted"));
    assert!(
        common::files(dir) == before,
        "{args:?} was refused but changed files:\n{message}"
    );
    message
}

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn a_second_controller_gets_its_own_module_name_rbac_condition_and_field_manager() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    run(dir, &api("Memcached", &[]));
    let one_controller = common::files(dir);
    run(dir, &api("Memcached", BACKUP));

    let controller = read(dir, "src/controller/memcached_backup.rs");
    for expected in [
        "pub struct MemcachedBackupReconciler {",
        "type_: \"MemcachedBackupReady\".into(),",
        ".with_field_manager(\"memcached-backup\")",
        "use crate::api::cache::v1alpha1::Memcached;",
    ] {
        assert!(controller.contains(expected), "missing {expected:?}");
    }
    // The kind's default controller is untouched.
    let first = "src/controller/memcached.rs";
    assert_eq!(
        read(dir, first).as_bytes(),
        one_controller[Path::new(first)]
    );
    let registry = read(dir, "src/controller/mod.rs");
    assert!(registry.contains("pub mod memcached_backup;"), "{registry}");
    assert!(
        registry.contains("Runnable::new(\"memcached-backup\", memcached_backup::run),"),
        "{registry}"
    );
    // `make manifests` reads its RBAC rules from the sources: nothing to register.
    let reconciler = read(dir, "src/controller/memcached_backup.rs");
    assert!(
        reconciler.contains("pub struct MemcachedBackupReconciler"),
        "{reconciler}"
    );
    let project = read(dir, "PROJECT");
    assert!(
        project.contains("  controllers:\n  - name: memcached\n  - name: memcached-backup\n"),
        "{project}"
    );
    assert!(!project.contains("controller: true"), "{project}");

    // A kind's first controller may carry a name too; the default name is the default controller.
    run(dir, &api("Foo", &["--controller-name", "foo-sync"]));
    assert!(dir.join("src/controller/foo_sync.rs").exists());
    assert!(!dir.join("src/controller/foo.rs").exists());
    let project = read(dir, "PROJECT");
    assert!(
        project.contains("  controllers:\n  - name: foo-sync\n"),
        "{project}"
    );
    run(
        dir,
        &api("Foo", &["--no-resource", "--controller-name", "foo"]),
    );
    assert!(dir.join("src/controller/foo.rs").exists());
    assert!(
        read(dir, "PROJECT").contains("  controllers:\n  - name: foo\n  - name: foo-sync\n"),
        "{}",
        read(dir, "PROJECT")
    );

    // alpha generate replays every controller: the same tree from PROJECT alone.
    let output = scratch.path().with_extension("generated");
    common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        dir.to_str().unwrap(),
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap_or_else(|e| panic!("rkb alpha generate failed: {e}"));
    for file in [
        "PROJECT",
        "src/controller/memcached_backup.rs",
        "src/controller/foo_sync.rs",
        "src/controller/foo.rs",
    ] {
        assert_eq!(read(&output, file), read(dir, file), "{file} differs");
    }
    // PROJECT lists a kind's default controller first, so the replay registers Foo's
    // controllers in that order rather than the order they were added.
    for file in ["src/controller/mod.rs", "src/lib.rs"] {
        let lines = |dir: &Path| {
            let mut lines: Vec<String> = read(dir, file).lines().map(str::to_owned).collect();
            lines.sort();
            lines
        };
        assert_eq!(lines(&output), lines(dir), "{file} differs");
    }
    fs::remove_dir_all(&output).unwrap();

    // delete api --controller-name takes one named controller and gives back the tree.
    let deleted = run(dir, &delete("Foo", &["--controller-name", "foo-sync"]));
    assert!(deleted.contains("remove"), "{deleted}");
    assert!(!dir.join("src/controller/foo_sync.rs").exists());
    // delete api without the flag takes the kind with every controller.
    run(dir, &delete("Foo", &[]));
    run(
        dir,
        &delete("Memcached", &["--controller-name", "memcached-backup"]),
    );
    assert_tree(dir, &one_controller);
}

#[test]
fn clashing_or_invalid_controller_names_are_refused_by_name() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    with_backup(dir);
    run(dir, &api("Foo", &[]));

    let cases: &[(&[&'static str], &str, &[&str])] = &[
        (
            &["--no-resource", "--controller-name", "memcached-backup"],
            "Memcached",
            &[
                "has a controller named memcached-backup already",
                "--controller-name memcached-backup-2",
            ],
        ),
        (
            &["--controller-name", "memcached-audit"],
            "Memcached",
            &[
                "exists already",
                "--no-resource --controller-name memcached-audit",
            ],
        ),
        (
            &["--no-resource", "--controller-name", "memcached-backup"],
            "Foo",
            &[
                "the name \"memcached-backup\" is taken by the controller \"memcached-backup\" of cache/v1alpha1 Memcached",
                "taken: memcached, memcached-backup, foo",
            ],
        ),
        (
            &["--no-resource", "--controller-name", "memcached"],
            "Foo",
            &["the name \"memcached\" is taken"],
        ),
        (
            &["--no-resource", "--controller-name", "Foo-b"],
            "Foo",
            &["invalid --controller-name \"Foo-b\"", "DNS-1123 label"],
        ),
        (
            &["--no-resource", "--controller-name", "2nd"],
            "Foo",
            &["must start with a letter"],
        ),
        (
            &["--no-resource", "--controller-name", "match"],
            "Foo",
            &["`match` would be a Rust keyword"],
        ),
        (
            &["--no-resource", "--controller-name", "foo--b"],
            "Foo",
            &["`foo__b` would hold `__`"],
        ),
        (
            &[
                "--no-resource",
                "--controller-name",
                "foo-b",
                "--image",
                "busybox:1",
            ],
            "Foo",
            &["cannot be used with"],
        ),
    ];
    for (flags, kind, expected) in cases {
        let message = refused(dir, &api(kind, flags));
        for part in *expected {
            assert!(
                message.contains(part),
                "{flags:?}: {part:?} not in:\n{message}"
            );
        }
    }
    // A file of the user's where the controller would go is not overwritten.
    fs::write(dir.join("src/controller/foo_b.rs"), "// mine\n").unwrap();
    let message = refused(
        dir,
        &api("Foo", &["--no-resource", "--controller-name", "foo-b"]),
    );
    assert!(message.contains("src/controller/foo_b.rs"), "{message}");
    fs::remove_file(dir.join("src/controller/foo_b.rs")).unwrap();

    let message = refused(
        dir,
        &delete("Memcached", &["--controller-name", "memcached-nope"]),
    );
    assert!(message.contains("accepted: memcached-backup"), "{message}");
    // In the multigroup layout a named controller's module may not be its group's.
    run(dir, &["edit", "--multigroup"].map(str::to_owned));
    let message = refused(
        dir,
        &api("Foo", &["--no-resource", "--controller-name", "cache"]),
    );
    assert!(message.contains("module_inception"), "{message}");
}

/// `edit --multigroup` moves named controllers with the default ones, keeping their names;
/// after the move, `delete api --controller-name` and `create api` again give the tree back.
#[test]
fn edit_multigroup_moves_named_controllers_under_their_group() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    with_backup(dir);
    run(dir, &["edit", "--multigroup"].map(str::to_owned));
    assert!(!dir.join("src/controller/memcached_backup.rs").exists());
    let moved = read(dir, "src/controller/cache/memcached_backup.rs");
    assert!(moved.contains(".with_field_manager(\"memcached-backup\")"));
    let registry = read(dir, "src/controller/mod.rs");
    assert!(
        registry.contains("Runnable::new(\"memcached-backup\", cache::memcached_backup::run),"),
        "{registry}"
    );
    assert!(read(dir, "src/controller/cache/mod.rs").contains("pub mod memcached_backup;"));
    let after_move = common::files(dir);
    let backup = ["--controller-name", "memcached-backup"];
    run(dir, &delete("Memcached", &backup));
    assert!(
        !dir.join("src/controller/cache/memcached_backup.rs")
            .exists()
    );
    run(dir, &api("Memcached", BACKUP));
    assert_tree(dir, &after_move);
}
