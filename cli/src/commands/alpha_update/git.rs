//! `rkb alpha update` on git branches, with kubebuilder's flags: the update is made from
//! the last commit of `--from-branch` and written to a new branch, with a commit per step
//! as kubebuilder makes them (the old scaffold, the branch as it is, the new scaffold, the
//! merge).
//!
//! Where kubebuilder checks the steps out one after another and lets `git merge` merge them,
//! rkb merges file by file as it does in place ([`super::update`]) in a copy of the branch in a
//! temporary directory, and writes the commits with git's plumbing through an index of its
//! own: the user's working tree, index and current branch are never touched, and a failure
//! leaves no branch behind.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context as _, bail};
use semver::Version;

use super::issue::{self, Issue};
use super::{BaseRkb, Sides};
use crate::cli::AlphaUpdateArgs;
use crate::model;
use crate::project;

/// The branch kubebuilder updates from unless told otherwise.
const DEFAULT_FROM_BRANCH: &str = "main";
/// The remote `--push` pushes to, as kubebuilder's does.
const REMOTE: &str = "origin";
/// The directories of the temporary one where the branch is copied and merged, and where
/// the old and the new scaffold are made (at the project's place in the repository).
const ORIGINAL: &str = "original";
const ANCESTOR: &str = "ancestor";
const UPGRADE: &str = "upgrade";

pub(super) fn update(
    args: &AlphaUpdateArgs,
    dir: &Path,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let repo = Repo::open(dir, &args.git_config, out)?;
    let from_branch = args.from_branch.as_deref().unwrap_or(DEFAULT_FROM_BRANCH);
    let from_commit = repo.branch_commit(from_branch)?;
    let restore = restore_paths(&args.restore_path)?;
    super::check_clean(
        dir,
        args.force,
        &format!("as the update is made from {from_branch}'s last commit and would leave them out"),
        out,
    )?;
    repo.check_identity()?;
    let project_file = repo.check_project_on(from_branch, &from_commit)?;

    let work = tempfile::Builder::new()
        .prefix("rkb-update-")
        .tempdir()
        .context("cannot create a temporary directory for the update")?;
    let index = work.path().join("index");
    let original = work.path().join(ORIGINAL);
    repo.check_out(&from_commit, &original, &index)?;
    let copy = original.join(&repo.prefix);
    let mut project = model::load(&copy)
        .with_context(|| format!("{project_file} on {from_branch} cannot be read"))?;

    let to = super::to_version(args.to_version.as_deref())?;
    let from = BaseRkb::of(args, &project, &to)?;
    let from_version = from.version(&to)?;
    let output_branch = args
        .output_branch
        .clone()
        .unwrap_or_else(|| format!("rkb-update-from-{from_version}-to-{to}"));
    repo.check_new_branch(&output_branch, args.push)?;
    if args.open_gh_issue {
        issue::check_gh()?;
    }

    let binary = from.binary(work.path(), out)?;
    super::announce(&project, dir, &binary, &from_version, &to, out)?;
    writeln!(
        out,
        "From {from_branch} ({}) to a new branch, {output_branch}; your working tree is left as it is.",
        short(&from_commit)
    )?;
    let sides = Sides {
        base: work.path().join(ANCESTOR).join(&repo.prefix),
        new: work.path().join(UPGRADE).join(&repo.prefix),
    };
    let (changes, report) = super::update(&copy, &mut project, &binary, &sides, out)?;
    changes.commit()?;

    let steps = Steps {
        repo: &repo,
        index: &index,
        work: work.path(),
        from_branch,
        from_commit: &from_commit,
    };
    let message = message(args, report.conflicts() > 0, &from_version, &to);
    let commits = steps.commit_all(&from_version, &to, &message)?;
    let output = if args.show_commits {
        commits.merge.clone()
    } else {
        let tree = steps.restore(&restore, out)?;
        steps.commit(&tree, &[&from_commit], &message)?
    };
    repo.run(
        [
            "update-ref",
            "-m",
            "rkb alpha update",
            &format!("refs/heads/{output_branch}"),
            &output,
            "",
        ],
        "creating the output branch",
    )?;

    report.print(out, &from_version, &to)?;
    let made = Made {
        from_branch,
        output_branch: &output_branch,
        output: &output,
        commits: &commits,
        from: &from_version,
        to: &to,
    };
    made.describe(args.show_commits, out)?;
    made.push_and_tell(args, &repo, &report, out)
}

/// The message of the update's commit: the user's for a clean or a conflicted update, or
/// kubebuilder's wording.
fn message(args: &AlphaUpdateArgs, conflicted: bool, from: &Version, to: &Version) -> String {
    match (conflicted, &args.merge_message, &args.conflict_message) {
        (false, Some(message), _) | (true, _, Some(message)) => message.clone(),
        (false, None, _) => format!("chore(rkb): update scaffold {from} -> {to}"),
        (true, _, None) => {
            format!("chore(rkb): update scaffold {from} -> {to} (conflicts to resolve)")
        }
    }
}

/// The output branch as made: its commit, the steps' commits and the versions.
struct Made<'a> {
    from_branch: &'a str,
    output_branch: &'a str,
    output: &'a str,
    commits: &'a Commits,
    from: &'a Version,
    to: &'a Version,
}

impl Made<'_> {
    fn describe(&self, show_commits: bool, out: &mut dyn Write) -> anyhow::Result<()> {
        let Made {
            from_branch,
            output_branch,
            from,
            to,
            ..
        } = self;
        writeln!(
            out,
            "\n{output_branch} holds the update ({}): {}. The steps: {} the scaffold of rkb \
             {from}, {} {from_branch}, {} the scaffold of rkb {to}, {} their merge.\n\
             Review it:  git switch {output_branch}  (or git diff {from_branch}...{output_branch})",
            short(self.output),
            if show_commits {
                "the commits of each step"
            } else {
                "one commit on top of the base branch"
            },
            short(&self.commits.ancestor),
            short(&self.commits.original),
            short(&self.commits.upgrade),
            short(&self.commits.merge),
        )?;
        Ok(())
    }

    /// Stops on conflicts unless `--force`; then `--push` and `--open-gh-issue`.
    fn push_and_tell(
        &self,
        args: &AlphaUpdateArgs,
        repo: &Repo,
        report: &super::Report,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        let (output_branch, from, to) = (self.output_branch, self.from, self.to);
        if report.conflicts() > 0 && !args.force {
            bail!(
                "{} file(s) need your hand on {output_branch}: those listed as conflicted are \
                 committed with conflict markers (<<<<<<< ours: your lines, ||||||| original: rkb \
                 {from}'s scaffold, =======, >>>>>>> theirs: rkb {to}'s), those not merged \
                 are not text. Switch to the branch (git switch {output_branch}), resolve them, run \
                 `make manifests`, and commit.{}",
                report.conflicts(),
                if args.push || args.open_gh_issue {
                    " Not pushed and no issue opened: --force goes on with conflicts"
                } else {
                    ""
                }
            );
        }
        if args.push {
            repo.push(output_branch, out)?;
        }
        if args.open_gh_issue {
            let issue = Issue {
                from_branch: self.from_branch,
                output_branch,
                from,
                to,
                report,
            };
            issue.open(out)?;
        }
        Ok(())
    }
}

/// The first characters of a commit id, as git shows them.
fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// `--restore-path`s as paths inside the project: relative, without `..`.
fn restore_paths(paths: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    paths
        .iter()
        .map(|path| {
            let inside = !path.as_os_str().is_empty()
                && path
                    .components()
                    .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            let text = path.to_str().filter(|_| inside);
            let Some(text) = text else {
                bail!(
                    "--restore-path {}: a restored path is one of the project's, relative to its \
                     directory and inside it.\n  e.g.:  --restore-path .github/workflows",
                    path.display()
                );
            };
            Ok(text.trim_end_matches('/').to_owned())
        })
        .collect()
}

/// The git repository the project is in, and how to run git in it.
struct Repo {
    /// Its top directory, where git runs.
    top: PathBuf,
    /// Its git directory, for commands run in another work tree.
    git_dir: PathBuf,
    /// The project's directory in it: empty at the top, else `ops/` (git's `--show-prefix`).
    prefix: String,
    /// `--git-config`'s `key=value`s, each given to git with `-c`.
    config: Vec<String>,
}

impl Repo {
    /// The project's PROJECT file in the repository, refused when `branch` lacks it.
    fn check_project_on(&self, branch: &str, commit: &str) -> anyhow::Result<String> {
        let project_file = format!("{}{}", self.prefix, project::FILE_NAME);
        if !self.succeeds(["cat-file", "-e", &format!("{commit}:{project_file}")]) {
            bail!(
                "{branch} has no {project_file}, so there is no rkb project to update on it.\n  \
                 Name the branch that has it, e.g.:  rkb alpha update --from-branch <branch>; or \
                 commit the project to {branch} first"
            );
        }
        Ok(project_file)
    }

    fn open(dir: &Path, config: &[String], out: &mut dyn Write) -> anyhow::Result<Self> {
        let mut settings = Vec::new();
        for setting in config {
            if setting == "disable" {
                writeln!(
                    out,
                    "note: --git-config disable (kubebuilder's, which drops its default merge \
                     settings) changes nothing: rkb merges by itself and sets no git config"
                )?;
                continue;
            }
            let key = setting.split_once('=').map(|(key, _)| key);
            if !key.is_some_and(|key| key.contains('.') && !key.starts_with('.')) {
                bail!(
                    "--git-config {setting:?}: a git setting is <section>.<key>=<value>, as \
                     `git -c` takes it.\n  e.g.:  --git-config user.name=rkb-bot"
                );
            }
            settings.push(setting.clone());
        }
        let found = Command::new("git")
            .args([
                "rev-parse",
                "--show-toplevel",
                "--absolute-git-dir",
                "--show-prefix",
            ])
            .current_dir(dir)
            .output();
        let output = match found {
            Ok(output) if output.status.success() => output,
            Ok(output) => bail!(
                "the git flags of `rkb alpha update` (--from-branch, --output-branch, --push, …) \
                 work on a git repository, and {} is not in one ({}).\n  Commit the project to \
                 git first (git init && git add -A && git commit), or leave the git flags out to \
                 update the files in place:  rkb alpha update --dir {}",
                dir.display(),
                String::from_utf8_lossy(&output.stderr).trim(),
                dir.display()
            ),
            Err(e) => bail!(
                "cannot run git ({e}); the git flags of `rkb alpha update` need it. Install git, \
                 or leave the git flags out to update the files in place"
            ),
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut lines = stdout.lines();
        let (Some(top), Some(git_dir)) = (lines.next(), lines.next()) else {
            bail!("git rev-parse printed {stdout:?}, not the repository's directories");
        };
        Ok(Repo {
            top: top.into(),
            git_dir: git_dir.into(),
            prefix: lines.next().unwrap_or_default().to_owned(),
            config: settings,
        })
    }

    /// `git` with the settings, in the repository's top directory.
    fn git(&self) -> Command {
        let mut command = Command::new("git");
        for setting in &self.config {
            command.arg("-c").arg(setting);
        }
        command.current_dir(&self.top);
        command
    }

    fn succeeds<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&self, args: I) -> bool {
        self.git()
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Runs git with `args`; its stdout, trimmed.
    fn run<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(
        &self,
        args: I,
        doing: &str,
    ) -> anyhow::Result<String> {
        finish(self.git().args(args).output(), doing)
    }

    /// The commit `branch` (a local branch) points at.
    fn branch_commit(&self, branch: &str) -> anyhow::Result<String> {
        let spec = format!("refs/heads/{branch}^{{commit}}");
        if let Ok(id) = self.run(["rev-parse", "--verify", "--quiet", &spec], "") {
            return Ok(id);
        }
        let branches = self
            .run(
                ["branch", "--format=%(refname:short)"],
                "listing the branches",
            )
            .unwrap_or_default();
        let branches: Vec<&str> = branches.lines().collect();
        bail!(
            "--from-branch {branch}: there is no such local branch{}, so there is nothing to \
             update from{}.\n  Name the branch your project is on, e.g.:  rkb alpha update \
             --from-branch {}",
            if branches.is_empty() {
                String::new()
            } else {
                format!(" (the local branches: {})", branches.join(", "))
            },
            if branch == DEFAULT_FROM_BRANCH {
                format!(" ({DEFAULT_FROM_BRANCH} is the default, as in kubebuilder)")
            } else {
                String::new()
            },
            branches.first().copied().unwrap_or("<branch>")
        )
    }

    /// Refuses before anything is done when commits could not be made: git has no name and
    /// email to make them with.
    fn check_identity(&self) -> anyhow::Result<()> {
        for ident in ["GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"] {
            let output = self.git().args(["var", ident]).output();
            if !output.is_ok_and(|o| o.status.success()) {
                bail!(
                    "git has no name and email to make the update's commits with.\n  Set them, \
                     e.g.:  git config user.name \"Your Name\" && git config user.email \
                     you@example.com; or for this update only:  --git-config user.name=rkb-bot \
                     --git-config user.email=rkb-bot@example.com"
                );
            }
        }
        Ok(())
    }

    /// Refuses an output branch that exists, here or (with `push`) on the remote.
    fn check_new_branch(&self, branch: &str, push: bool) -> anyhow::Result<()> {
        if !self.succeeds(["check-ref-format", "--branch", branch]) {
            bail!(
                "--output-branch {branch:?} is not a valid branch name for git.\n  e.g.:  \
                 --output-branch rkb-update"
            );
        }
        let local = format!("refs/heads/{branch}");
        if self.succeeds(["show-ref", "--verify", "--quiet", &local]) {
            bail!(
                "the branch {branch} exists already, and the update does not overwrite it: it \
                 may hold an earlier update with your resolutions.\n  Name another one (e.g. \
                 --output-branch {branch}-2), or delete it if it is not needed:  git branch -D \
                 {branch}"
            );
        }
        if !push {
            return Ok(());
        }
        if !self.succeeds(["remote", "get-url", REMOTE]) {
            bail!(
                "--push pushes to the remote `{REMOTE}`, and this repository has none.\n  Add \
                 it (git remote add {REMOTE} <url>), or leave --push out and push the branch \
                 yourself"
            );
        }
        let remote = self.run(
            ["ls-remote", "--heads", REMOTE, &local],
            &format!("asking {REMOTE} for its branch {branch}"),
        )?;
        if !remote.is_empty() {
            bail!(
                "{REMOTE} has a branch {branch} already, which --push would not overwrite: an \
                 earlier update may wait there for review.\n  Merge or delete it first (git push \
                 {REMOTE} --delete {branch}), or name another one: --output-branch {branch}-2"
            );
        }
        Ok(())
    }

    /// `commit`'s files in `into`, through `index`.
    fn check_out(&self, commit: &str, into: &Path, index: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(into)
            .with_context(|| format!("cannot create {}", into.display()))?;
        let mut prefix = into.as_os_str().to_owned();
        prefix.push("/");
        let mut read = self.git();
        read.env("GIT_INDEX_FILE", index)
            .args(["read-tree", commit]);
        finish(read.output(), "reading the base branch")?;
        // `--prefix=<dir>/` is one argument.
        let mut argument = OsStr::new("--prefix=").to_owned();
        argument.push(&prefix);
        let mut write = self.git();
        write
            .env("GIT_INDEX_FILE", index)
            .args(["checkout-index", "--all"])
            .arg(argument);
        finish(write.output(), "copying the base branch")?;
        Ok(())
    }

    fn push(&self, branch: &str, out: &mut dyn Write) -> anyhow::Result<()> {
        writeln!(out, "$ git push --set-upstream {REMOTE} {branch}")?;
        let output = self
            .git()
            .args(["push", "--set-upstream", REMOTE, branch])
            .output();
        finish(output, &format!("pushing {branch} to {REMOTE}")).map(|_| ())
    }
}

/// A git command's trimmed stdout, or an error with what it printed.
fn finish(output: std::io::Result<Output>, doing: &str) -> anyhow::Result<String> {
    super::finish_tool("git", output, doing)
}

/// Makes the update's trees and commits, through an index of its own.
struct Steps<'a> {
    repo: &'a Repo,
    index: &'a Path,
    /// The temporary directory with the copy of the branch and the two scaffolds.
    work: &'a Path,
    from_branch: &'a str,
    from_commit: &'a str,
}

/// The commit of each step of an update, as kubebuilder's branches of the same names hold
/// them.
struct Commits {
    /// The old scaffold, on top of --from-branch.
    ancestor: String,
    /// --from-branch as it is, on top of the old scaffold.
    original: String,
    /// The new scaffold, on top of the old one.
    upgrade: String,
    /// The merge of the two above.
    merge: String,
}

impl Steps<'_> {
    fn commit_all(&self, from: &Version, to: &Version, message: &str) -> anyhow::Result<Commits> {
        let ancestor = self.commit(
            &self.tree(&self.work.join(ANCESTOR), None)?,
            &[self.from_commit],
            &format!("rkb alpha update: the scaffold of rkb {from}"),
        )?;
        let original = self.commit(
            &format!("{}^{{tree}}", self.from_commit),
            &[&ancestor],
            &format!("rkb alpha update: {} as it is", self.from_branch),
        )?;
        let upgrade = self.commit(
            &self.tree(&self.work.join(UPGRADE), None)?,
            &[&ancestor],
            &format!("rkb alpha update: the scaffold of rkb {to}"),
        )?;
        let merged = self.tree(&self.work.join(ORIGINAL), Some(self.from_commit))?;
        let merge = self.commit(&merged, &[&upgrade, &original], message)?;
        Ok(Commits {
            ancestor,
            original,
            upgrade,
            merge,
        })
    }

    /// git in `work_tree`, with the update's index.
    fn git(&self, work_tree: &Path) -> Command {
        let mut command = self.repo.git();
        command
            .env("GIT_INDEX_FILE", self.index)
            .arg("--git-dir")
            .arg(&self.repo.git_dir)
            .arg("--work-tree")
            .arg(work_tree)
            .current_dir(work_tree);
        command
    }

    fn run<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(
        &self,
        work_tree: &Path,
        args: I,
        doing: &str,
    ) -> anyhow::Result<String> {
        finish(self.git(work_tree).args(args).output(), doing)
    }

    /// The tree of the files in `work_tree` (as `git add --all` takes them: ignored files
    /// left out), on top of `start`'s files (so tracked files that are ignored stay).
    fn tree(&self, work_tree: &Path, start: Option<&str>) -> anyhow::Result<String> {
        self.index_of(work_tree, start)?;
        self.run(work_tree, ["write-tree"], "writing a tree")
    }

    fn index_of(&self, work_tree: &Path, start: Option<&str>) -> anyhow::Result<()> {
        match start {
            Some(commit) => self.run(work_tree, ["read-tree", commit], "reading a tree")?,
            None => self.run(work_tree, ["read-tree", "--empty"], "emptying the index")?,
        };
        self.run(work_tree, ["add", "--all", "."], "adding the files")?;
        Ok(())
    }

    /// The merged tree with `paths` of the project as they are on --from-branch.
    fn restore(&self, paths: &[String], out: &mut dyn Write) -> anyhow::Result<String> {
        let work_tree = &self.work.join(ORIGINAL);
        let base = self.from_commit;
        self.index_of(work_tree, Some(base))?;
        for path in paths {
            let path = format!("{}{path}", self.repo.prefix);
            let in_base = self.run(
                work_tree,
                ["ls-tree", "-r", "--name-only", base, "--", &path],
                "listing the base branch",
            )?;
            let in_update = self.run(work_tree, ["ls-files", "--", &path], "listing the update")?;
            if in_base.is_empty() && in_update.is_empty() {
                writeln!(
                    out,
                    "note: --restore-path {path}: neither the base branch nor the update has it"
                )?;
                continue;
            }
            self.run(
                work_tree,
                [
                    "rm",
                    "-r",
                    "--cached",
                    "--quiet",
                    "--ignore-unmatch",
                    "--",
                    &path,
                ],
                "restoring a path",
            )?;
            if !in_base.is_empty() {
                self.run(
                    work_tree,
                    ["restore", "--source", base, "--staged", "--", &path],
                    "restoring a path",
                )?;
            }
            writeln!(
                out,
                "{:>8} {path} (as on the base branch: --restore-path)",
                "keep"
            )?;
        }
        self.run(work_tree, ["write-tree"], "writing a tree")
    }

    /// A commit of `tree` with `parents` and `message`.
    fn commit(&self, tree: &str, parents: &[&str], message: &str) -> anyhow::Result<String> {
        let mut command = self.repo.git();
        command.args(["commit-tree", tree, "-m", message]);
        for parent in parents {
            command.args(["-p", parent]);
        }
        finish(command.output(), "committing a step of the update")
    }
}
