//! The arguments of `rkb alpha`'s commands: `generate`, and `update` with kubebuilder's git
//! flow.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct AlphaUpdateArgs {
    /// The project to update: a directory with a PROJECT file made by rkb.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The older rkb executable, whose scaffold is the merge base (any rkb; one without
    /// `alpha generate` has its commands replayed).
    #[arg(long, value_name = "RKB", conflicts_with = "from_version")]
    pub from: Option<PathBuf>,
    /// Install rkb <VERSION> from crates.io for the merge base (it must be published there)
    /// [default: PROJECT's cliVersion].
    #[arg(long, value_name = "VERSION")]
    pub from_version: Option<String>,
    /// The version to update to; it must be this rkb's, which scaffolds the new side
    /// [default: this rkb's version].
    #[arg(long, value_name = "VERSION")]
    pub to_version: Option<String>,
    /// Update a git working tree with uncommitted changes, and exit 0 when files conflict
    /// (with a git flag: go on to --push and --open-gh-issue).
    #[arg(long)]
    pub force: bool,
    /// Update from this branch's last commit and write the result to a new branch, leaving
    /// the working tree as it is [default: main, when another git flag is given].
    #[arg(long, value_name = "BRANCH", help_heading = "Git")]
    pub from_branch: Option<String>,
    /// The branch to write the update to; it must not exist
    /// [default: rkb-update-from-<from>-to-<to>].
    #[arg(long, value_name = "BRANCH", help_heading = "Git")]
    pub output_branch: Option<String>,
    /// Keep the commit of each step on the output branch (the old scaffold, --from-branch, the
    /// new scaffold, their merge) instead of one commit on top of --from-branch.
    #[arg(long, conflicts_with = "restore_path", help_heading = "Git")]
    pub show_commits: bool,
    /// A path of the project to keep as it is on --from-branch, e.g. .github/workflows
    /// (repeatable).
    #[arg(long, value_name = "PATH", help_heading = "Git")]
    pub restore_path: Vec<PathBuf>,
    /// Push the output branch to the `origin` remote.
    #[arg(long, help_heading = "Git")]
    pub push: bool,
    /// The message of the update's commit when nothing conflicts
    /// [default: chore(rkb): update scaffold <from> -> <to>].
    #[arg(long, value_name = "MESSAGE", help_heading = "Git")]
    pub merge_message: Option<String>,
    /// The message of the update's commit when files conflict
    /// [default: chore(rkb): update scaffold <from> -> <to> (conflicts to resolve)].
    #[arg(long, value_name = "MESSAGE", help_heading = "Git")]
    pub conflict_message: Option<String>,
    /// Open a GitHub issue with a link to compare the output branch (runs the `gh` CLI, which
    /// must be logged in; an open issue of the same title is not repeated).
    #[arg(long, help_heading = "Git")]
    pub open_gh_issue: bool,
    /// A git setting for every git command of the update, e.g. user.name=bot (repeatable;
    /// `disable` is kubebuilder's and changes nothing: rkb sets none of its own).
    #[arg(long, value_name = "KEY=VALUE", help_heading = "Git")]
    pub git_config: Vec<String>,
}

impl AlphaUpdateArgs {
    /// Whether a flag of the git flow was given (the update then works on branches).
    pub fn git_flow(&self) -> bool {
        self.from_branch.is_some()
            || self.output_branch.is_some()
            || self.show_commits
            || !self.restore_path.is_empty()
            || self.push
            || self.merge_message.is_some()
            || self.conflict_message.is_some()
            || self.open_gh_issue
            || !self.git_config.is_empty()
    }
}

#[derive(Debug, Args)]
pub struct AlphaGenerateArgs {
    /// The project to scaffold again: a directory with a PROJECT file made by rkb.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub input_dir: PathBuf,
    /// Where to scaffold it: an absent or empty directory outside the input
    /// [default: <input-dir>-generated, beside the input].
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Don't run `make manifests` in the output, which compiles the project (rkb's own tests
    /// pass this); the CRDs, the role and the webhook configuration are then missing (or
    /// `init`'s placeholders) until you run it.
    #[arg(long)]
    pub no_manifests: bool,
}
