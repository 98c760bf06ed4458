//! `rkb alpha update`: brings a project forward to this rkb's scaffold, like kubebuilder's
//! `alpha update`: in the working tree, or, with a git flag, on a branch of its own ([`git`]).
//!
//! Three trees meet: the base, what the rkb that wrote the project scaffolds from PROJECT
//! (that executable's `alpha generate`, or its commands replayed when it has none); the new
//! scaffold, this rkb's `alpha generate` run in-process; and the user's project. Both
//! scaffolds go to a temporary directory, [`merge::file`] decides each file, and every
//! write goes through one [`Changes`] set, so the project is updated whole or not at all.
//! Everything that can be refused is checked before anything is scaffolded.

mod git;
mod issue;
mod moves;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context as _, bail};
use semver::Version;

use crate::cli::{AlphaGenerateArgs, AlphaUpdateArgs};
use crate::merge::{self, Outcome};
use crate::model;
use crate::project::{self, Project};
use crate::scaffold::Changes;
use crate::version::CURRENT;

use moves::Moves;

pub fn alpha_update(args: &AlphaUpdateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let dir = std::path::absolute(&args.dir)
        .with_context(|| format!("cannot resolve {}", args.dir.display()))?;
    if args.git_flow() {
        return git::update(args, &dir, out);
    }
    let mut project = model::load(&dir)?;
    let to = to_version(args.to_version.as_deref())?;
    let from = BaseRkb::of(args, &project, &to)?;
    let from_version = from.version(&to)?;
    check_committed(&dir, args.force, out)?;

    let work = tempfile::Builder::new()
        .prefix("rkb-update-")
        .tempdir()
        .context("cannot create a temporary directory for the two scaffolds")?;
    let binary = from.binary(work.path(), out)?;
    announce(&project, &dir, &binary, &from_version, &to, out)?;
    let sides = Sides {
        base: work.path().join("base"),
        new: work.path().join("new"),
    };
    let cargo_toml = read_ours(&dir, "Cargo.toml")?;
    let (changes, report) = update(&dir, &mut project, &binary, &sides, out)?;
    super::commit(changes, out)?;

    report.print(out, &from_version, &to)?;
    if let Some(note) = crates_note(&dir, cargo_toml.as_deref()) {
        writeln!(out, "{note}")?;
    }
    let conflicts = report.conflicts();
    if conflicts > 0 && !args.force {
        bail!(
            "{conflicts} file(s) need your hand: those listed as conflicted hold conflict markers \
             (<<<<<<< ours: your lines, ||||||| original: rkb {from_version}'s scaffold, =======, \
             >>>>>>> theirs: rkb {to}'s), those not merged are not text. Resolve them, then run \
             `make manifests`. Every other file is updated (--force exits 0 with conflicts)"
        );
    }
    Ok(())
}

/// Where the two scaffolds are written.
struct Sides {
    /// The older rkb's.
    base: PathBuf,
    /// This rkb's.
    new: PathBuf,
}

/// Notes a base that is not PROJECT's cliVersion, and says what is updated with what.
fn announce(
    project: &Project,
    dir: &Path,
    binary: &Path,
    from: &Version,
    to: &Version,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if from.to_string() != project.cli_version {
        writeln!(
            out,
            "note: PROJECT records cliVersion {}, and the base is scaffolded with rkb \
             {from}; the merge is only as good as that base is the scaffold your \
             project started from.",
            project.cli_version
        )?;
    }
    writeln!(
        out,
        "Updating {} from rkb {from} ({}) to rkb {to}.",
        dir.display(),
        binary.display()
    )?;
    Ok(())
}

/// Scaffolds both sides with `binary` and this rkb, and plans the merge of the project in
/// `dir` with PROJECT's new cliVersion; the caller commits the changes.
fn update(
    dir: &Path,
    project: &mut Project,
    binary: &Path,
    sides: &Sides,
    out: &mut dyn Write,
) -> anyhow::Result<(Changes, Report)> {
    scaffold_base(binary, project, dir, &sides.base, out)?;
    scaffold_new(dir, &sides.new, out)?;
    let base = files(&sides.base)?;
    let new = files(&sides.new)?;

    let mut changes = Changes::open(dir)?;
    let crate_name = crate::names::crate_name(&project.project_name);
    let report = plan(dir, &crate_name, &base, &new, &mut changes)?;
    project.cli_version = CURRENT.into();
    changes.create(project::FILE_NAME, project.to_yaml(), true)?;
    Ok((changes, report))
}

/// Plans into `changes` the outcome of every path of the two scaffolds for the project in
/// `dir`, and reports them. Files the API crate moved are merged at their new paths (see
/// [`Moves`]).
fn plan(
    dir: &Path,
    crate_name: &str,
    base: &BTreeMap<String, Vec<u8>>,
    new: &BTreeMap<String, Vec<u8>>,
    changes: &mut Changes,
) -> anyhow::Result<Report> {
    let mut report = Report::default();
    let moves = Moves::find(dir, crate_name, base, new)?;
    let base = moves.apply_to(base);
    // The user's own files under src/api/ are in neither scaffold: they move too.
    let mut paths: Vec<&String> = base
        .keys()
        .chain(new.keys())
        .chain(moves.to.keys())
        .collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        // PROJECT is the input of both scaffolds, not a file of theirs: it is the user's,
        // with the new cliVersion (planned by the caller).
        if path == project::FILE_NAME {
            continue;
        }
        let ours = moves.read_ours(dir, path, changes)?;
        let outcome = merge::file(
            base.get(path).map(Vec::as_slice),
            ours.as_deref(),
            new.get(path).map(Vec::as_slice),
        );
        let Some(outcome) = outcome else { continue };
        let rewrites = matches!(
            outcome,
            Outcome::TakenNew(_) | Outcome::Merged(_) | Outcome::Conflict(_) | Outcome::NotText
        );
        // Neither scaffold runs `make manifests` (it compiles the project), so when their
        // `init` placeholders differ, the user's real manifests are kept rather than merged
        // with them; their next `make manifests` rewrites them.
        if rewrites && model::written_by_make_manifests(path) {
            report.manifests.push(path.clone());
            continue;
        }
        match outcome.content() {
            Some(content) => changes.create(path, content.to_owned(), true)?,
            // The user's file, moved as it is (a module of their own under src/api/).
            None => {
                if let Some(moved) = ours.as_deref().filter(|_| moves.moved_from(path).is_some()) {
                    changes.create(path, String::from_utf8_lossy(moved).into_owned(), true)?;
                }
            }
        }
        report.add(path, &outcome);
    }
    for (to, (from, _)) in &moves.to {
        report.moved.push(format!("{from} -> {to}"));
    }
    Ok(report)
}

/// Where the rkb of the base scaffold comes from.
enum BaseRkb {
    Binary(PathBuf),
    Version(Version),
}

impl BaseRkb {
    fn of(args: &AlphaUpdateArgs, project: &Project, to: &Version) -> anyhow::Result<Self> {
        if let Some(path) = &args.from {
            return Ok(BaseRkb::Binary(path.clone()));
        }
        let (text, source) = match &args.from_version {
            Some(text) => (text.as_str(), "--from-version"),
            None => (project.cli_version.as_str(), "PROJECT's cliVersion"),
        };
        let version = parse_version(text, source)?;
        if version == *to {
            bail!(
                "{source} {version} is the version to update to (rkb {to}): there is nothing to \
                 update.\n  To merge the scaffold of another build of rkb {to} (a newer commit), \
                 pass that older build: --from <path to its rkb>"
            );
        }
        if version > *to {
            bail!(
                "{source} {version} is newer than rkb {to}: `rkb alpha update` moves a project \
                 forward only"
            );
        }
        Ok(BaseRkb::Version(version))
    }

    /// The base's version (that of the rkb --from names, which is run for it), no newer
    /// than `to`.
    fn version(&self, to: &Version) -> anyhow::Result<Version> {
        let path = match self {
            BaseRkb::Version(version) => return Ok(version.clone()),
            BaseRkb::Binary(path) => path,
        };
        let version = rkb_version(path)?;
        if version > *to {
            bail!(
                "{} is rkb {version}, newer than rkb {to}: `rkb alpha update` moves a project \
                 forward only. Pass an older rkb with --from",
                path.display()
            );
        }
        Ok(version)
    }

    /// The base's rkb executable: --from's, or rkb <version> installed into `work`.
    fn binary(&self, work: &Path, out: &mut dyn Write) -> anyhow::Result<PathBuf> {
        match self {
            BaseRkb::Binary(path) => Ok(path.clone()),
            BaseRkb::Version(version) => install(version, work, out),
        }
    }
}

fn parse_version(text: &str, source: &str) -> anyhow::Result<Version> {
    Version::parse(text.trim_start_matches('v')).with_context(|| {
        format!("{source} {text:?} is not a version; rkb versions look like {CURRENT}")
    })
}

/// The version to update to: only this rkb's own, which is what it scaffolds.
fn to_version(requested: Option<&str>) -> anyhow::Result<Version> {
    let current = Version::parse(CURRENT).expect("the crate version is semver");
    let Some(text) = requested else {
        return Ok(current);
    };
    let requested = parse_version(text, "--to-version")?;
    if requested != current {
        bail!(
            "--to-version {requested}: this is rkb {current}, which updates projects to its own \
             scaffold only.\n  Run the `rkb alpha update` of rkb {requested} instead:  cargo \
             install rkb --version {requested}"
        );
    }
    Ok(current)
}

/// Refuses, unless `force`, a project in a git working tree with uncommitted changes:
/// git is then the user's way back, and an update on top of unsaved work could not be
/// told apart from it. Without git (or outside a repository) the change set's journal is
/// the only backup there is, and the update goes ahead.
fn check_committed(dir: &Path, force: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    check_clean(
        dir,
        force,
        "so that the update is one change you can review and undo",
        out,
    )
}

/// Refuses, unless `force`, a git working tree with uncommitted changes in `dir`, with
/// `why` that matters; without git there is nothing to check.
fn check_clean(dir: &Path, force: bool, why: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    let status = Command::new("git")
        .args([
            "status",
            "--porcelain",
            "--untracked-files=normal",
            "--",
            ".",
        ])
        .current_dir(dir)
        .output();
    let Ok(status) = status else {
        return Ok(());
    };
    if !status.status.success() || status.stdout.is_empty() {
        return Ok(());
    }
    let listing = String::from_utf8_lossy(&status.stdout);
    let mut lines: Vec<&str> = listing.lines().take(10).collect();
    if listing.lines().count() > lines.len() {
        lines.push("...");
    }
    if force {
        writeln!(
            out,
            "note: going on with uncommitted changes (--force):\n  {}",
            lines.join("\n  ")
        )?;
        return Ok(());
    }
    bail!(
        "{} has uncommitted changes in git:\n  {}\n  Commit or stash them first (`git stash -u`), \
         {why}; or pass --force",
        dir.display(),
        lines.join("\n  ")
    )
}

/// `cargo install rkb --version =<version>` into `work`; the path of its rkb.
fn install(version: &Version, work: &Path, out: &mut dyn Write) -> anyhow::Result<PathBuf> {
    let root = work.join("from");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let exact = format!("={version}");
    writeln!(
        out,
        "$ cargo install --locked rkb --version {exact} --root {}",
        root.display()
    )?;
    let output = Command::new(&cargo)
        .args(["install", "--locked", "rkb", "--version", &exact, "--root"])
        .arg(&root)
        .output()
        .with_context(|| {
            format!(
                "cannot run {} to install rkb {version}; install Rust's cargo, or pass an rkb \
                 {version} you built: --from <path to its rkb>",
                Path::new(&cargo).display()
            )
        })?;
    if !output.status.success() {
        bail!(
            "cannot install rkb {version} from crates.io (`cargo install rkb --version {exact}` \
             failed):\n{}\n  --from-version needs rkb {version} published on crates.io, and rkb \
             is not published yet. Build rkb {version} from its source and pass it instead: \
             --from <path to its rkb>",
            tail(&output, 6)
        );
    }
    Ok(root.join("bin").join("rkb"))
}

/// The version an rkb executable reports; anything else is not an rkb.
fn rkb_version(binary: &Path) -> anyhow::Result<Version> {
    let output = Command::new(binary)
        .arg("--version")
        .output()
        .with_context(|| {
            format!(
                "cannot run --from {}: pass the path of an older rkb executable",
                binary.display()
            )
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let version = stdout
        .lines()
        .next()
        .and_then(|line| line.trim().strip_prefix("rkb "))
        .and_then(|version| Version::parse(version).ok());
    match version {
        Some(version) if output.status.success() => Ok(version),
        _ => bail!(
            "--from {} is not an rkb executable: `{} --version` {} instead of printing \
             `rkb <version>`.\n  Pass the rkb binary of the older version, e.g. \
             <its checkout>/target/release/rkb",
            binary.display(),
            binary.display(),
            if output.status.success() {
                format!("printed {:?}", stdout.trim())
            } else {
                format!("failed ({})", output.status)
            }
        ),
    }
}

/// The base scaffold in `output`: `<binary> alpha generate`, or, for an rkb that has none,
/// the commands that command would replay, run with `binary`.
fn scaffold_base(
    binary: &Path,
    project: &Project,
    dir: &Path,
    output: &Path,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let help = rkb(binary, ["alpha", "generate", "--help"]);
    if help.is_ok_and(|h| h.status.success() && stdout(&h).contains("--no-manifests")) {
        let args = [
            OsStr::new("alpha"),
            OsStr::new("generate"),
            OsStr::new("--input-dir"),
            dir.as_os_str(),
            OsStr::new("--output-dir"),
            output.as_os_str(),
            OsStr::new("--no-manifests"),
        ];
        writeln!(
            out,
            "$ {} alpha generate --input-dir {} --output-dir <base> --no-manifests",
            binary.display(),
            dir.display()
        )?;
        return run(binary, &args, "scaffolding the base");
    }
    writeln!(
        out,
        "{} has no `alpha generate`: replaying PROJECT with it.",
        binary.display()
    )?;
    let boilerplate = crate::scaffold::read_optional(&dir.join(model::BOILERPLATE))?;
    let steps = super::alpha_generate::replay(project, dir, boilerplate.as_deref(), output);
    // `init` flags newer than that rkb: what it did without them is what the replay asks
    // (path dependencies on its checkout, before `--rkb-source`; cert-manager's
    // certificates, the only kind before `--webhook-certs`).
    let init_help = rkb(binary, ["init", "--help"]).map(|h| stdout(&h).into_owned());
    let init_help = init_help.unwrap_or_default();
    let unknown: Vec<&str> = ["--rkb-source", "--webhook-certs"]
        .into_iter()
        .filter(|flag| !init_help.contains(flag))
        .collect();
    for step in steps {
        let mut args: Vec<String> = step.into_iter().skip(1).collect();
        for flag in &unknown {
            if let Some(at) = args.iter().position(|a| a == flag) {
                args.drain(at..(at + 2).min(args.len()));
            }
        }
        writeln!(
            out,
            "$ {} {}",
            binary.display(),
            super::alpha_generate::shown(&args)
        )?;
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        run(binary, &args, "replaying PROJECT for the base")?;
    }
    Ok(())
}

/// This rkb's scaffold of the project in `output`.
fn scaffold_new(dir: &Path, output: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(
        out,
        "$ rkb alpha generate --input-dir {} --output-dir <new> --no-manifests",
        dir.display()
    )?;
    let args = AlphaGenerateArgs {
        input_dir: dir.to_path_buf(),
        output_dir: Some(output.to_path_buf()),
        no_manifests: true,
    };
    // Its log is the replay's; only a failure is worth showing.
    let mut log = Vec::new();
    super::alpha_generate(&args, &mut log).with_context(|| {
        format!(
            "scaffolding the project with this rkb failed; nothing was written:\n{}",
            String::from_utf8_lossy(&log)
        )
    })
}

/// Runs the older rkb with `args`, as a command of its own: without `RKB_PATH`, which
/// `alpha generate` does not use either (the input's `.cargo/config.toml` says where rkb's
/// crates come from).
fn rkb<I, S>(binary: &Path, args: I) -> std::io::Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(binary)
        .args(args)
        .env_remove("RKB_PATH")
        .output()
}

fn run(binary: &Path, args: &[&OsStr], doing: &str) -> anyhow::Result<()> {
    let output =
        rkb(binary, args).with_context(|| format!("{doing}: cannot run {}", binary.display()))?;
    if !output.status.success() {
        bail!(
            "{doing} with {} failed ({}); nothing was written:\n{}",
            binary.display(),
            output.status,
            tail(&output, 12)
        );
    }
    Ok(())
}

fn stdout(output: &Output) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&output.stdout)
}

/// The last `n` lines of what a process printed, stdout then stderr, indented.
fn tail(output: &Output, n: usize) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every file under a scaffold, by its `/`-separated path.
fn files(root: &Path) -> anyhow::Result<BTreeMap<String, Vec<u8>>> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let rel = path.strip_prefix(root).expect("under the root");
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            files.insert(name, bytes);
        }
    }
    Ok(files)
}

/// rkb 0.1 projects took rkb's crates by path in Cargo.toml; since 0.2 they are named by
/// version, with a `[patch]` in `.cargo/config.toml` that `alpha generate` copies from the
/// project, and such a project has none to copy.
fn crates_note(dir: &Path, cargo_toml_before: Option<&[u8]>) -> Option<String> {
    let before = String::from_utf8_lossy(cargo_toml_before?);
    let by_path = before
        .lines()
        .any(|line| line.starts_with("rkb-runtime = {") && line.contains("path ="));
    if !by_path || dir.join(".cargo/config.toml").exists() {
        return None;
    }
    Some(
        "note: Cargo.toml took rkb's crates from a path; rkb 0.2 names them by version, and \
         until they are published a project needs the [patch.crates-io] section of \
         .cargo/config.toml: copy the one `rkb init --dir /tmp/scratch --domain x.io` writes \
         (CHANGELOG.md, 0.2.0)."
            .into(),
    )
}

/// The user's file at `rel`; `None` when there is none.
fn read_ours(dir: &Path, rel: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let path = dir.join(rel);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The files of each outcome, in path order.
#[derive(Default)]
struct Report {
    merged: Vec<String>,
    conflicted: Vec<String>,
    not_text: Vec<String>,
    taken: Vec<String>,
    added: Vec<String>,
    kept_yours: Vec<String>,
    no_longer_generated: Vec<String>,
    manifests: Vec<String>,
    deleted_by_you: Vec<String>,
    /// `old -> new`: files a later scaffold keeps elsewhere ([`Moves`]).
    moved: Vec<String>,
    up_to_date: usize,
}

impl Report {
    /// The files left for the user to merge: conflicted, or not text.
    fn conflicts(&self) -> usize {
        self.conflicted.len() + self.not_text.len()
    }

    fn add(&mut self, path: &str, outcome: &Outcome) {
        let list = match outcome {
            Outcome::UpToDate => {
                self.up_to_date += 1;
                return;
            }
            Outcome::KeptYours => &mut self.kept_yours,
            Outcome::TakenNew(_) => &mut self.taken,
            Outcome::Added(_) => &mut self.added,
            Outcome::Merged(_) => &mut self.merged,
            Outcome::Conflict(_) => &mut self.conflicted,
            Outcome::NotText => &mut self.not_text,
            Outcome::DeletedByYou => &mut self.deleted_by_you,
            Outcome::NoLongerGenerated => &mut self.no_longer_generated,
        };
        list.push(path.to_owned());
    }

    fn print(&self, out: &mut dyn Write, from: &Version, to: &Version) -> std::io::Result<()> {
        writeln!(out, "\nrkb alpha update, rkb {from} -> {to}:")?;
        let sections: [(&str, &[String]); 10] = [
            (
                "moved (into the API crate, or tests into the library)",
                &self.moved,
            ),
            ("merged cleanly (you and rkb changed them)", &self.merged),
            ("conflicted (markers written)", &self.conflicted),
            ("not merged: not text (left as they are)", &self.not_text),
            (
                "taken from the new scaffold (you had not changed them)",
                &self.taken,
            ),
            ("added by the new scaffold", &self.added),
            ("untouched: only you changed them", &self.kept_yours),
            (
                "untouched: rkb no longer generates them",
                &self.no_longer_generated,
            ),
            ("untouched: `make manifests` writes them", &self.manifests),
            (
                "deleted by you (rkb still generates them; left deleted)",
                &self.deleted_by_you,
            ),
        ];
        for (title, files) in sections {
            if files.is_empty() {
                continue;
            }
            writeln!(out, "  {title}: {}", files.len())?;
            for file in files {
                writeln!(out, "    {file}")?;
            }
        }
        writeln!(
            out,
            "summary: {} merged cleanly, {} conflicted, {} taken from the new scaffold, {} \
             untouched, {} deleted by you, {} already up to date",
            self.merged.len(),
            self.conflicted.len() + self.not_text.len(),
            self.taken.len() + self.added.len(),
            self.kept_yours.len() + self.no_longer_generated.len() + self.manifests.len(),
            self.deleted_by_you.len(),
            self.up_to_date
        )?;
        writeln!(
            out,
            "Next: resolve any conflicts, then `make manifests` (the CRDs, the role and the \
             webhook configuration are generated from your code, not merged) and `cargo build`."
        )
    }
}

/// `tool`'s trimmed stdout, or an error with what it printed.
pub(super) fn finish_tool(
    tool: &str,
    output: std::io::Result<Output>,
    doing: &str,
) -> anyhow::Result<String> {
    let output = output.with_context(|| format!("{doing}: cannot run {tool}"))?;
    if !output.status.success() {
        bail!(
            "{doing}: {tool} failed ({}):\n{}",
            output.status,
            tail(&output, 8)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project directory holding the user's `files`.
    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn tree(files: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        files
            .iter()
            .map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec()))
            .collect()
    }

    /// A project of the single-crate layout comes out in the API crate's: the scaffold's
    /// files and the user's own under src/api/ move, edits and all, and the conversion file
    /// names the types as the API crate does.
    #[test]
    fn the_types_move_into_the_api_crate_with_the_users_edits() {
        let user = [
            ("src/api/mod.rs", "pub mod cache;\n"),
            (
                "src/api/cache/v1/memcached.rs",
                "pub struct Spec { pub size: i32 }\n",
            ),
            ("src/api/cache/v1/helpers.rs", "pub fn mine() {}\n"),
            (
                "src/webhook/v1/memcached_conversion.rs",
                "use crate::api::cache::v1::Memcached;\n// mine\n",
            ),
        ];
        let dir = project(&user);
        let base = tree(&[
            ("src/api/mod.rs", "pub mod cache;\n"),
            ("src/api/cache/v1/memcached.rs", "pub struct Spec {}\n"),
            (
                "src/webhook/v1/memcached_conversion.rs",
                "use crate::api::cache::v1::Memcached;\n",
            ),
        ]);
        let new = tree(&[
            ("api/src/lib.rs", "pub mod cache;\npub fn crds() {}\n"),
            ("api/src/cache/v1/memcached.rs", "pub struct Spec {}\n"),
            (
                "api/src/cache/v1/memcached_conversion.rs",
                "use crate::cache::v1::Memcached;\n",
            ),
        ]);
        let mut changes = Changes::open(dir.path()).unwrap();
        let report = plan(dir.path(), "memcached_operator", &base, &new, &mut changes).unwrap();
        assert_eq!(report.conflicts(), 0, "{:?}", report.conflicted);
        let read = |path: &str| changes.read(path).unwrap();
        assert_eq!(
            read("api/src/lib.rs").unwrap(),
            "pub mod cache;\npub fn crds() {}\n"
        );
        assert_eq!(
            read("api/src/cache/v1/memcached.rs").unwrap(),
            "pub struct Spec { pub size: i32 }\n"
        );
        assert_eq!(
            read("api/src/cache/v1/helpers.rs").unwrap(),
            "pub fn mine() {}\n"
        );
        assert_eq!(
            read("api/src/cache/v1/memcached_conversion.rs").unwrap(),
            "use crate::cache::v1::Memcached;\n// mine\n"
        );
        for (old, _) in user {
            assert_eq!(read(old), None, "{old} is left behind");
        }
        assert_eq!(report.moved.len(), 4, "{:?}", report.moved);
    }

    /// The generator and the certificates' names move into the API crate: the user's
    /// edit of a certificate name comes along, the generator is the new scaffold's, and
    /// nothing is left at the old paths.
    #[test]
    fn the_generator_and_the_certificates_move_into_the_api_crate() {
        let old_certs = "pub fn certificates() { new(\"op-metrics-server-cert\") }\n";
        let user = [
            (
                "src/bin/manifests.rs",
                "fn main() { op::manifests().main() }\n",
            ),
            (
                "src/metrics_certs.rs",
                "pub fn certificates() { new(\"our-metrics-cert\") }\n",
            ),
        ];
        let dir = project(&user);
        let base = tree(&[
            (
                "src/bin/manifests.rs",
                "fn main() { op::manifests().main() }\n",
            ),
            ("src/metrics_certs.rs", old_certs),
        ]);
        let new = tree(&[
            (
                "api/src/bin/manifests.rs",
                "fn main() { op_api::manifests().main() }\n",
            ),
            ("api/src/metrics_certs.rs", old_certs),
        ]);
        let mut changes = Changes::open(dir.path()).unwrap();
        let report = plan(dir.path(), "memcached_operator", &base, &new, &mut changes).unwrap();
        assert_eq!(report.conflicts(), 0, "{:?}", report.conflicted);
        let read = |path: &str| changes.read(path).unwrap();
        assert_eq!(
            read("api/src/bin/manifests.rs").unwrap(),
            "fn main() { op_api::manifests().main() }\n"
        );
        assert_eq!(
            read("api/src/metrics_certs.rs").unwrap(),
            "pub fn certificates() { new(\"our-metrics-cert\") }\n"
        );
        for (old, _) in user {
            assert_eq!(read(old), None, "{old} is left behind");
        }
        assert_eq!(report.moved.len(), 2, "{:?}", report.moved);
    }

    /// The tests under tests/ move into the operator's library with the user's edits: an
    /// `--image` controller's (multigroup too) beside its module, the webhooks' into
    /// src/webhook/, naming the operator `crate::` and config/ one level further up.
    #[test]
    fn the_tests_move_into_the_operators_library_with_the_users_edits() {
        let controller_test = "use memcached_operator::controller::web::memcached;\n";
        let webhook_test = "let s = include_str!(\"../config/samples/a.yaml\");\n";
        let user = [
            (
                "tests/web_memcached_controller.rs",
                "use memcached_operator::controller::web::memcached;\n// mine\n",
            ),
            (
                "tests/webhooks.rs",
                "let s = include_str!(\"../config/samples/a.yaml\");\nlet t = memcached_operator::webhook::webhooks();\n",
            ),
        ];
        let dir = project(&user);
        let base = tree(&[
            ("tests/web_memcached_controller.rs", controller_test),
            ("tests/webhooks.rs", webhook_test),
            ("tests/e2e.rs", "// e2e\n"),
        ]);
        let new = tree(&[
            (
                "src/controller/web/memcached/tests.rs",
                "use crate::controller::web::memcached;\n",
            ),
            (
                "src/webhook/tests.rs",
                "let s = include_str!(\"../../config/samples/a.yaml\");\n",
            ),
            ("tests/e2e.rs", "// e2e\n"),
        ]);
        let mut changes = Changes::open(dir.path()).unwrap();
        let report = plan(dir.path(), "memcached_operator", &base, &new, &mut changes).unwrap();
        assert_eq!(report.conflicts(), 0, "{:?}", report.conflicted);
        let read = |path: &str| changes.read(path).unwrap();
        assert_eq!(
            read("src/controller/web/memcached/tests.rs").unwrap(),
            "use crate::controller::web::memcached;\n// mine\n"
        );
        assert_eq!(
            read("src/webhook/tests.rs").unwrap(),
            "let s = include_str!(\"../../config/samples/a.yaml\");\nlet t = crate::webhook::webhooks();\n"
        );
        for (old, _) in user {
            assert_eq!(read(old), None, "{old} is left behind");
        }
        assert_eq!(report.moved.len(), 2, "{:?}", report.moved);
    }
}
