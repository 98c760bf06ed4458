//! `rkb create api` killed (SIGKILL) at random instants: after the next rkb run opens the
//! project, the tree is exactly as it was before the command, or exactly as the finished
//! command leaves it; never anything in between, and no staging file is left behind.

use crate::common;

use std::collections::BTreeMap;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const API: &[&str] = &[
    "create",
    "api",
    "--group",
    "web",
    "--version",
    "v1",
    "--kind",
    "Site",
];
const TRIES: usize = 40;

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in common::files(from) {
        let path = to.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    common::files(dir)
}

fn rkb(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rkb"));
    command.args(API).current_dir(dir);
    command
}

#[test]
fn a_killed_create_api_leaves_the_project_as_before_or_as_after() {
    let base = tempfile::tempdir().unwrap();
    let b = base.path().to_str().unwrap();
    common::init_demo(base.path(), &[]);
    common::rkb(&[
        "create",
        "api",
        "--dir",
        b,
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
        "Memcached",
    ])
    .unwrap();
    let before = tree(base.path());

    let finished = tempfile::tempdir().unwrap();
    copy_tree(base.path(), finished.path());
    let start = Instant::now();
    assert!(rkb(finished.path()).output().unwrap().status.success());
    let duration = start.elapsed();
    let after = tree(finished.path());
    assert_ne!(before, after);

    let (mut as_before, mut as_after, mut other) = (0, 0, Vec::new());
    for i in 0..TRIES {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(base.path(), dir.path());
        // An instant anywhere in the run, or a little past its usual end.
        let random = RandomState::new().hash_one(i);
        let delay = duration.mul_f64((random % 1200) as f64 / 1000.0);
        let mut child = rkb(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();
        // The next run's first step: lock the project and recover.
        drop(rkb::scaffold::Changes::open(dir.path()).unwrap());
        let found = tree(dir.path());
        if found == before {
            as_before += 1;
        } else if found == after {
            as_after += 1;
        } else {
            let changed: Vec<_> = found
                .keys()
                .chain(before.keys())
                .filter(|p| found.get(*p) != before.get(*p) && found.get(*p) != after.get(*p))
                .cloned()
                .collect();
            other.push((delay, changed));
        }
        // And the command then runs to the end.
        let retry = rkb(dir.path()).output().unwrap();
        assert!(retry.status.success() || tree(dir.path()) == after);
        assert_eq!(
            tree(dir.path()),
            after,
            "a retry after an interruption at {delay:?}"
        );
    }
    eprintln!(
        "{TRIES} interruptions of a {duration:?} run: {as_before} as before, {as_after} as after, {} other",
        other.len()
    );
    assert!(
        other.is_empty(),
        "trees neither before nor after: {other:?}"
    );
}

#[test]
fn the_scaffold_ignores_what_an_interrupted_run_could_leave() {
    let dir = tempfile::tempdir().unwrap();
    common::init_demo(dir.path(), &[]);
    for ignore in [".gitignore", ".dockerignore"] {
        let text = std::fs::read_to_string(dir.path().join(ignore)).unwrap();
        assert!(
            text.contains(".rkb-journal") && text.contains(".*.rkb-*"),
            "{ignore}: {text}"
        );
    }
}

/// `rkb init` killed at random instants: running it again finishes the project, never
/// refusing the directory for files the killed run had put in place.
#[test]
fn a_killed_init_can_be_run_again() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let init = |dir: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rkb"));
        command
            .args(["init", "--domain", "example.com", "--project-name", "demo"])
            .args(["--rkb-path", repo.to_str().unwrap()])
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command
    };
    let finished = tempfile::tempdir().unwrap();
    let start = Instant::now();
    assert!(init(finished.path()).status().unwrap().success());
    let duration = start.elapsed();
    let after = tree(finished.path());
    for i in 0..TRIES / 4 {
        let dir = tempfile::tempdir().unwrap();
        let random = RandomState::new().hash_one(i);
        let delay = duration.mul_f64((random % 1200) as f64 / 1000.0);
        let mut child = init(dir.path()).spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        child.wait().unwrap();
        let retry = init(dir.path()).output().unwrap();
        assert!(
            retry.status.success() || tree(dir.path()) == after,
            "a retry after an interruption at {delay:?} failed: {}",
            String::from_utf8_lossy(&retry.stderr)
        );
        assert_eq!(
            tree(dir.path()),
            after,
            "after an interruption at {delay:?}"
        );
    }
}
