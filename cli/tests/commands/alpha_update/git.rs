//! `rkb alpha update` with kubebuilder's git flags, on real repositories in temporary
//! directories (a bare one as `origin` for --push): the update lands on a new branch, one
//! commit or one per step, the working tree is left alone, and what cannot work is refused
//! before any branch is made.

use std::collections::BTreeMap;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{RKB, edit, files_of, older_rkb, project, script, stand_in, text};

/// The files of the working tree in `dir` (not of `.git`, where commits are written), each
/// with a digest of its content, so that a difference names the file.
fn work_tree(dir: &Path) -> BTreeMap<PathBuf, u64> {
    files_of(dir)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(".git"))
        .map(|(path, bytes)| {
            let mut hasher = std::hash::DefaultHasher::new();
            bytes.hash(&mut hasher);
            (path, hasher.finish())
        })
        .collect()
}

const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "t"),
    ("GIT_AUTHOR_EMAIL", "t@example.com"),
    ("GIT_COMMITTER_NAME", "t"),
    ("GIT_COMMITTER_EMAIL", "t@example.com"),
];

/// git in `dir`, isolated from the machine's git configuration, with an identity.
fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .envs(IDENTITY);
    command
}

/// Runs git, which must succeed; its trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = git_command(dir).args(args).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", text(&output));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn git_ok(dir: &Path, args: &[&str]) -> bool {
    git_command(dir)
        .args(args)
        .output()
        .unwrap()
        .status
        .success()
}

/// `rkb alpha update --dir <dir> <args>` with git as [`git_command`] runs it, and `path`
/// first on PATH when given.
fn run(dir: &Path, args: &[&str], path: Option<&Path>) -> Output {
    let mut command = Command::new(RKB);
    command
        .args(["alpha", "update", "--dir", dir.to_str().unwrap()])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .envs(IDENTITY);
    if let Some(first) = path {
        let rest = std::env::var_os("PATH").unwrap_or_default();
        let paths = std::iter::once(first.to_path_buf()).chain(std::env::split_paths(&rest));
        command.env("PATH", std::env::join_paths(paths).unwrap());
    }
    command.output().unwrap()
}

/// A project of "rkb 0.1.0" (see [`older_rkb`]) committed on `main`, then a commit of the
/// user's: a Makefile target (merges with rkb's change), and, with `conflicting`, an edit
/// of the main.rs line rkb changes too. Returns the project and the older rkb.
fn repository(root: &Path, conflicting: bool) -> (PathBuf, PathBuf) {
    let dir = project(root);
    let old = older_rkb(root);
    let altered = Command::new(&old)
        .args(["old", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(altered.success());
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "scaffold of rkb 0.1.0"]);
    edit(
        &dir.join("Makefile"),
        "\nhelp:",
        "\nmy-target:\n\t@echo mine\n\nhelp:",
    );
    if conflicting {
        edit(
            &dir.join("src/main.rs"),
            "use clap::Parser; // old",
            "use clap::Parser; // mine",
        );
    }
    git(&dir, &["commit", "-q", "-am", "my edits"]);
    (dir, old)
}

fn show(dir: &Path, rev: &str, path: &str) -> String {
    git(dir, &["show", &format!("{rev}:{path}")])
}

fn default_branch() -> String {
    format!("rkb-update-from-0.1.0-to-{}", env!("CARGO_PKG_VERSION"))
}

#[test]
fn the_update_is_one_commit_on_a_new_branch_and_the_working_tree_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, old) = repository(tmp.path(), false);
    let main = git(&dir, &["rev-parse", "main"]);
    let before = work_tree(&dir);

    let output = run(
        &dir,
        &["--from", old.to_str().unwrap(), "--from-branch", "main"],
        None,
    );
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    let branch = default_branch();
    assert!(
        shown.contains(&format!("{branch} holds the update")),
        "{shown}"
    );

    // One commit on top of main, with kubebuilder's default message (rkb's name in it).
    assert_eq!(git(&dir, &["rev-parse", &format!("{branch}^")]), main);
    assert_eq!(
        git(&dir, &["log", "-1", "--format=%s", &branch]),
        format!(
            "chore(rkb): update scaffold 0.1.0 -> {}",
            env!("CARGO_PKG_VERSION")
        )
    );
    let makefile = show(&dir, &branch, "Makefile");
    assert!(makefile.contains("my-target:\n\t@echo mine"), "{makefile}");
    assert!(makefile.contains("IMG ?= controller:latest"), "{makefile}");
    assert!(show(&dir, &branch, "Dockerfile").contains("FROM"));
    assert!(
        show(&dir, &branch, "PROJECT")
            .contains(&format!("cliVersion: {}", env!("CARGO_PKG_VERSION")))
    );

    // The user's checkout: the same files, branch and index.
    assert_eq!(work_tree(&dir), before);
    assert_eq!(git(&dir, &["symbolic-ref", "--short", "HEAD"]), "main");
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");

    // The branch holds what the update in place writes.
    let in_place = super::update(&dir, &old, &[]);
    assert!(in_place.status.success(), "{}", text(&in_place));
    git(&dir, &["add", "--all"]);
    assert_eq!(
        git(&dir, &["diff", "--cached", "--stat", &branch]),
        "",
        "the branch and the update in place differ"
    );
}

#[test]
fn show_commits_keeps_a_commit_per_step() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, old) = repository(tmp.path(), false);
    let output = run(
        &dir,
        &[
            "--from",
            old.to_str().unwrap(),
            "--show-commits",
            "--output-branch",
            "update",
            "--merge-message",
            "Update the scaffold",
        ],
        None,
    );
    assert!(output.status.success(), "{}", text(&output));
    let to = env!("CARGO_PKG_VERSION");
    assert_eq!(
        git(
            &dir,
            &["log", "--format=%s", "--topo-order", "main..update"]
        ),
        format!(
            "Update the scaffold\nrkb alpha update: main as it is\nrkb alpha update: the \
             scaffold of rkb {to}\nrkb alpha update: the scaffold of rkb 0.1.0"
        )
    );
    // The merge's parents: the new scaffold, and main as it is (on top of the old one).
    assert_eq!(
        git(&dir, &["rev-parse", "update^2^{tree}"]),
        git(&dir, &["rev-parse", "main^{tree}"])
    );
    assert!(show(&dir, "update^1", "Makefile").contains("IMG ?= controller:latest"));
    assert!(!show(&dir, "update^1", "Makefile").contains("my-target"));
    assert!(show(&dir, "update^1^", "Makefile").contains("IMG ?= controller:old"));
    assert_eq!(
        git(&dir, &["rev-parse", "update^1^^"]),
        git(&dir, &["rev-parse", "main"])
    );
    // The merge holds both sides' changes.
    let makefile = show(&dir, "update", "Makefile");
    assert!(
        makefile.contains("my-target") && makefile.contains("controller:latest"),
        "{makefile}"
    );
}

#[test]
fn conflicts_stop_before_the_push_unless_forced_and_force_pushes_to_origin() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, old) = repository(tmp.path(), true);
    let origin = tmp.path().join("origin.git");
    git(
        tmp.path(),
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    git(&dir, &["remote", "add", "origin", origin.to_str().unwrap()]);
    let from = old.to_str().unwrap();

    let output = run(
        &dir,
        &[
            "--from",
            from,
            "--push",
            "--output-branch",
            "held",
            "--conflict-message",
            "Update with conflicts",
        ],
        None,
    );
    let shown = text(&output);
    assert!(!output.status.success(), "{shown}");
    assert!(
        shown.contains("need your hand on held") && shown.contains("Not pushed"),
        "{shown}"
    );
    // Committed with the markers and the conflict message, not pushed.
    assert!(show(&dir, "held", "src/main.rs").contains(
        "<<<<<<< ours\nuse clap::Parser; // mine\n||||||| original\nuse clap::Parser; // old\n"
    ));
    assert_eq!(
        git(&dir, &["log", "-1", "--format=%s", "held"]),
        "Update with conflicts"
    );
    assert_eq!(git(&origin, &["branch", "--list"]), "");

    let output = run(&dir, &["--from", from, "--push", "--force"], None);
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    let branch = default_branch();
    assert_eq!(
        git(&origin, &["rev-parse", &branch]),
        git(&dir, &["rev-parse", &branch])
    );
    assert_eq!(
        git(
            &dir,
            &[
                "rev-parse",
                "--abbrev-ref",
                &format!("{branch}@{{upstream}}")
            ]
        ),
        format!("origin/{branch}")
    );

    // Again: the branch is there, here and on origin.
    refused(&dir, &["--from", from, "--push"], None, "exists already");
    git(&dir, &["branch", "-D", &branch]);
    refused(
        &dir,
        &["--from", from, "--push"],
        None,
        &format!("origin has a branch {branch} already"),
    );
}

#[test]
fn restore_path_keeps_the_base_branchs_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path());
    // rkb 0.1.0 wrote no lint workflow and an older test workflow; the user's test workflow
    // is theirs.
    let old = stand_in(
        tmp.path(),
        "  rm \"$1/.github/workflows/lint.yml\"\n  sed -i 's/^name: Tests$/name: Old tests/' \"$1/.github/workflows/test.yml\"\n",
    );
    assert!(
        Command::new(&old)
            .args(["old", dir.to_str().unwrap()])
            .status()
            .unwrap()
            .success()
    );
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "scaffold of rkb 0.1.0"]);
    let from = old.to_str().unwrap();

    let output = run(&dir, &["--from", from, "--output-branch", "plain"], None);
    assert!(output.status.success(), "{}", text(&output));
    assert!(git_ok(
        &dir,
        &["cat-file", "-e", "plain:.github/workflows/lint.yml"]
    ));
    assert!(show(&dir, "plain", ".github/workflows/test.yml").contains("name: Tests\n"));

    let output = run(
        &dir,
        &[
            "--from",
            from,
            "--output-branch",
            "restored",
            "--restore-path",
            ".github/workflows/",
            "--restore-path",
            "no-such-dir",
        ],
        None,
    );
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(
        shown.contains("neither the base branch nor the update has it"),
        "{shown}"
    );
    assert!(!git_ok(
        &dir,
        &["cat-file", "-e", "restored:.github/workflows/lint.yml"]
    ));
    assert_eq!(
        git(&dir, &["rev-parse", "restored:.github/workflows"]),
        git(&dir, &["rev-parse", "main:.github/workflows"])
    );
    // Everything else is updated.
    assert!(
        show(&dir, "restored", "PROJECT")
            .contains(&format!("cliVersion: {}", env!("CARGO_PKG_VERSION")))
    );
}

/// A stand-in for the `gh` CLI that records its arguments and answers as GitHub would for
/// the repository acme/demo, with `OPEN_TITLE` as the title of its open issue, if any.
/// It only checks the call: what GitHub does with it is not tested.
fn fake_gh(dir: &Path, log: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    script(
        &dir.join("gh"),
        &format!(
            r#"for arg in "$@"; do printf '%s\n' "$arg"; done >> "{log}"
echo "--" >> "{log}"
case "$1 $2" in
  "--version ") echo "gh version 2.0.0" ;;
  "repo view") echo "acme/demo" ;;
  "issue list") [ -n "$OPEN_TITLE" ] && echo "$OPEN_TITLE" ;;
  "issue create") echo "https://github.com/acme/demo/issues/7" ;;
esac
exit 0
"#,
            log = log.display()
        ),
    );
    dir.to_path_buf()
}

#[test]
fn open_gh_issue_opens_one_issue_with_a_compare_link() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, old) = repository(tmp.path(), true);
    let log = tmp.path().join("gh.log");
    let bin = fake_gh(&tmp.path().join("bin"), &log);
    let from = old.to_str().unwrap();

    let output = run(
        &dir,
        &["--from", from, "--force", "--open-gh-issue"],
        Some(&bin),
    );
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(
        shown.contains("Opened the issue https://github.com/acme/demo/issues/7"),
        "{shown}"
    );
    let calls = fs::read_to_string(&log).unwrap();
    let calls: Vec<Vec<&str>> = calls
        .split("--\n")
        .filter(|c| !c.is_empty())
        .map(|c| c.lines().collect())
        .collect();
    let to = env!("CARGO_PKG_VERSION");
    let title = format!("Update the rkb scaffold from 0.1.0 to {to}");
    let create = calls
        .iter()
        .find(|c| c.starts_with(&["issue", "create"]))
        .unwrap_or_else(|| panic!("no issue create in {calls:?}"));
    assert_eq!(
        create[..6],
        [
            "issue",
            "create",
            "--repo",
            "acme/demo",
            "--title",
            title.as_str()
        ]
    );
    assert_eq!(create[6], "--body");
    let body = create[7..].join("\n");
    let compare = format!(
        "https://github.com/acme/demo/compare/main...{}?expand=1",
        default_branch()
    );
    assert!(body.contains(&compare), "{body}");
    assert!(body.contains("- `src/main.rs`"), "{body}");
    assert!(
        calls.iter().any(|c| c.starts_with(&[
            "issue",
            "list",
            "--repo",
            "acme/demo",
            "--state",
            "open"
        ])),
        "{calls:?}"
    );

    // An open issue of the same title: none is opened again.
    fs::remove_file(&log).unwrap();
    git(&dir, &["branch", "-D", &default_branch()]);
    let mut command = Command::new(RKB);
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let paths = std::iter::once(bin.clone()).chain(std::env::split_paths(&rest));
    let output = command
        .args(["alpha", "update", "--dir", dir.to_str().unwrap()])
        .args(["--from", from, "--force", "--open-gh-issue"])
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env("OPEN_TITLE", &title)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .envs(IDENTITY)
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(shown.contains("none opened"), "{shown}");
    assert!(
        !fs::read_to_string(&log).unwrap().contains("create"),
        "an issue was opened again"
    );
}

/// Runs the update with `args`, which must be refused with `expected`, leaving the files,
/// the branches and the index as they were.
fn refused(dir: &Path, args: &[&str], path: Option<&Path>, expected: &str) {
    let before = work_tree(dir);
    let branches = || {
        if git_ok(dir, &["rev-parse", "--git-dir"]) {
            git(dir, &["for-each-ref", "--format=%(refname) %(objectname)"])
        } else {
            String::new()
        }
    };
    let refs = branches();
    let output = run(dir, args, path);
    let shown = text(&output);
    assert!(!output.status.success(), "{args:?} was accepted:\n{shown}");
    assert!(
        shown.contains(expected),
        "{args:?}: expected {expected:?} in:\n{shown}"
    );
    assert_eq!(work_tree(dir), before, "{args:?} changed the project");
    assert_eq!(branches(), refs, "{args:?} changed the branches");
}

#[test]
fn what_the_git_flow_cannot_work_with_is_refused_before_anything_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, old) = repository(tmp.path(), false);
    let from = old.to_str().unwrap();

    refused(
        &dir,
        &["--from", from, "--from-branch", "trunk"],
        None,
        "--from-branch trunk: there is no such local branch (the local branches: main)",
    );
    git(&dir, &["branch", "-m", "main", "trunk"]);
    refused(
        &dir,
        &["--from", from, "--push"],
        None,
        "(main is the default, as in kubebuilder)",
    );
    git(&dir, &["branch", "-m", "trunk", "main"]);
    refused(
        &dir,
        &["--from", from, "--push"],
        None,
        "--push pushes to the remote `origin`, and this repository has none",
    );
    for (path, shown) in [("../elsewhere", "../elsewhere"), ("/etc", "/etc")] {
        refused(
            &dir,
            &["--from", from, "--restore-path", path],
            None,
            &format!("--restore-path {shown}: a restored path is one of the project's"),
        );
    }
    refused(
        &dir,
        &[
            "--from",
            from,
            "--show-commits",
            "--restore-path",
            ".github",
        ],
        None,
        "cannot be used with",
    );
    refused(
        &dir,
        &["--from", from, "--git-config", "nonsense"],
        None,
        "a git setting is <section>.<key>=<value>",
    );
    refused(
        &dir,
        &["--from", from, "--output-branch", "bad..name"],
        None,
        "is not a valid branch name",
    );
    // No name and email for the commits (git may not guess them).
    let no_identity = Command::new(RKB)
        .args(["alpha", "update", "--dir", dir.to_str().unwrap()])
        .args(["--from", from, "--git-config", "user.useConfigOnly=true"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("EMAIL")
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .output()
        .unwrap();
    let shown = text(&no_identity);
    assert!(
        !no_identity.status.success() && shown.contains("git has no name and email"),
        "{shown}"
    );
    // gh missing: a PATH with git only.
    let only_git = tmp.path().join("only-git");
    fs::create_dir(&only_git).unwrap();
    let real_git = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::os::unix::fs::symlink(real_git.trim(), only_git.join("git")).unwrap();
    let output = Command::new(RKB)
        .args(["alpha", "update", "--dir", dir.to_str().unwrap()])
        .args(["--from", from, "--open-gh-issue"])
        .env("PATH", &only_git)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .envs(IDENTITY)
        .output()
        .unwrap();
    let shown = text(&output);
    assert!(
        !output.status.success()
            && shown.contains("--open-gh-issue opens the issue with GitHub's `gh` CLI"),
        "{shown}"
    );

    // Uncommitted changes would be left out of the update: refused unless forced.
    edit(&dir.join("README.md"), "\n", "\nwork in progress\n");
    refused(
        &dir,
        &["--from", from, "--from-branch", "main"],
        None,
        "would leave them out; or pass --force",
    );
    let output = run(
        &dir,
        &["--from", from, "--from-branch", "main", "--force"],
        None,
    );
    let shown = text(&output);
    assert!(output.status.success(), "{shown}");
    assert!(!show(&dir, &default_branch(), "README.md").contains("work in progress"));
    git(&dir, &["checkout", "-q", "--", "README.md"]);

    // Not in a git repository.
    let plain = project(&tmp.path().join("plain"));
    refused(
        &plain,
        &["--from", from, "--from-branch", "main"],
        None,
        "is not in one",
    );
    // A branch without the project.
    git(&dir, &["checkout", "-q", "--orphan", "empty"]);
    git(&dir, &["rm", "-rq", "--cached", "."]);
    git(&dir, &["commit", "-q", "--allow-empty", "-m", "empty"]);
    git(&dir, &["checkout", "-q", "-f", "main"]);
    refused(
        &dir,
        &["--from", from, "--from-branch", "empty"],
        None,
        "empty has no PROJECT",
    );
}
