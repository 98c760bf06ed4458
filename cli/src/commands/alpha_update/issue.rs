//! `rkb alpha update --open-gh-issue`: the GitHub issue about an update on its branch,
//! opened with the `gh` CLI, as kubebuilder's is.

use std::io::Write;
use std::process::Command;

use anyhow::bail;
use semver::Version;

use super::Report;
use super::finish_tool;

/// Refuses `--open-gh-issue` without the `gh` CLI, before anything is done.
pub(super) fn check_gh() -> anyhow::Result<()> {
    match Command::new("gh").arg("--version").output() {
        Ok(output) if output.status.success() => Ok(()),
        _ => bail!(
            "--open-gh-issue opens the issue with GitHub's `gh` CLI, which cannot be run here.\n  \
             Install it (https://cli.github.com) and log in (gh auth login, or GH_TOKEN in CI), \
             or leave --open-gh-issue out"
        ),
    }
}

/// The GitHub issue `--open-gh-issue` opens about an update on its branch.
pub(super) struct Issue<'a> {
    pub from_branch: &'a str,
    pub output_branch: &'a str,
    pub from: &'a Version,
    pub to: &'a Version,
    pub report: &'a Report,
}

impl Issue<'_> {
    fn title(&self) -> String {
        format!("Update the rkb scaffold from {} to {}", self.from, self.to)
    }

    fn body(&self, repository: &str) -> String {
        let compare = format!(
            "https://github.com/{repository}/compare/{}...{}?expand=1",
            self.from_branch, self.output_branch
        );
        let mut body = format!(
            "`rkb alpha update` brought this project's scaffold from rkb {} to rkb {} on the \
             branch `{}`: a three-way merge of rkb {}'s scaffold, this project as it is on \
             `{}`, and rkb {}'s scaffold.\n\n\
             Open a pull request to review it: {compare}\n",
            self.from, self.to, self.output_branch, self.from, self.from_branch, self.to
        );
        let conflicted: Vec<&String> = self
            .report
            .conflicted
            .iter()
            .chain(&self.report.not_text)
            .collect();
        if !conflicted.is_empty() {
            body.push_str(
                "\n**Files to merge by hand.** These are committed with conflict markers \
                 (`<<<<<<< ours` your lines, `||||||| original` the old scaffold's, `=======`, \
                 `>>>>>>> theirs` the new scaffold's) or, if not text, as you had them:\n\n",
            );
            for file in conflicted {
                body.push_str(&format!("- `{file}`\n"));
            }
        }
        body.push_str(&format!(
            "\n**Before merging.** On the branch, run `make manifests` (the CRDs, the role and \
             the webhook configuration are generated from your code, not merged), then \
             `make lint test`. The CHANGELOG of rkb {} lists what changed and what to change \
             in code you own.\n",
            self.to
        ));
        body
    }

    pub fn open(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        let repository = gh(
            &[
                "repo",
                "view",
                "--json",
                "nameWithOwner",
                "--jq",
                ".nameWithOwner",
            ],
            "finding the GitHub repository",
        )?;
        let title = self.title();
        let open = gh(
            &[
                "issue",
                "list",
                "--repo",
                &repository,
                "--state",
                "open",
                "--search",
                &format!("in:title \"{title}\""),
                "--json",
                "title",
                "--jq",
                ".[].title",
            ],
            "looking for an open issue of the update",
        )?;
        if open.lines().any(|line| line == title) {
            writeln!(
                out,
                "An open issue of {repository} is titled {title:?} already; none opened."
            )?;
            return Ok(());
        }
        let created = gh(
            &[
                "issue",
                "create",
                "--repo",
                &repository,
                "--title",
                &title,
                "--body",
                &self.body(&repository),
            ],
            "opening the issue",
        )?;
        writeln!(out, "Opened the issue {}", created.trim())?;
        Ok(())
    }
}

/// Runs the `gh` CLI; its trimmed stdout.
fn gh(args: &[&str], doing: &str) -> anyhow::Result<String> {
    let output = Command::new("gh").args(args).output();
    finish_tool("gh", output, doing).map_err(|e| {
        e.context(format!(
            "{doing} with `gh` failed: is gh logged in (gh auth status; GH_TOKEN in CI), and is \
             the repository on GitHub?"
        ))
    })
}
