//! Scaffolding machinery: embedded tera templates ([`Templates`]), the tables that say
//! what each command generates ([`plan`]), and the all-or-nothing file writer with
//! marker-based insertion ([`Changes`]).

pub mod builtin_kinds;
mod changes;
pub mod journal;
mod markers;
pub mod plan;
mod read;
pub mod rust_text;

pub use changes::{Changes, FILE_NAME_MAX, NAME_MAX, STAGING_EXTRA, Written};
pub(crate) use markers::normalized;
pub use plan::{Entry, IfExists, Marker, Text};
pub use read::{read_optional, rust_files};

use anyhow::Context as _;
use include_dir::{Dir, include_dir};

/// `templates/` of the rkb repository, compiled into the binary so an installed rkb
/// works from any directory.
static TEMPLATE_DIR: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// One template per generated file (kubebuilder's rule), addressed by its path under `templates/`.
#[derive(Debug)]
pub struct Templates {
    tera: tera::Tera,
}

impl Templates {
    pub fn load() -> anyhow::Result<Self> {
        let mut tera = tera::Tera::default();
        // Generated files are code and YAML, never HTML.
        tera.autoescape_on(Vec::new());
        let mut sources = Vec::new();
        collect(&TEMPLATE_DIR, &mut sources);
        tera.add_raw_templates(sources)
            .context("rkb's embedded templates do not parse (a bug in rkb)")?;
        Ok(Templates { tera })
    }

    pub fn render(&self, name: &str, context: &tera::Context) -> anyhow::Result<String> {
        self.tera
            .render(name, context)
            .with_context(|| format!("rendering template {name} failed (a bug in rkb)"))
    }

    /// Renders `name` over a typed context.
    pub fn render_model(
        &self,
        name: &str,
        model: &impl serde::Serialize,
    ) -> anyhow::Result<String> {
        self.render(name, &context_of(model)?)
    }

    /// The names of every embedded template, `init/Cargo.toml.tera` and so on.
    pub fn names() -> Vec<&'static str> {
        let mut sources = Vec::new();
        collect(&TEMPLATE_DIR, &mut sources);
        sources.into_iter().map(|(name, _)| name).collect()
    }

    /// The unrendered text of an embedded template.
    pub fn source(name: &str) -> Option<&'static str> {
        TEMPLATE_DIR.get_file(name).and_then(|f| f.contents_utf8())
    }

    /// Renders a one-line template string, such as an output path.
    pub fn render_str(&self, template: &str, context: &tera::Context) -> anyhow::Result<String> {
        tera::Tera::one_off(template, context, false)
            .with_context(|| format!("rendering {template:?} failed (a bug in rkb)"))
    }
}

/// A typed context as tera takes it: its fields are the templates' variables.
pub fn context_of(model: &impl serde::Serialize) -> anyhow::Result<tera::Context> {
    tera::Context::from_serialize(model)
        .context("the template context does not serialise (a bug in rkb)")
}

/// The license header that starts every generated Rust file: `hack/boilerplate.rs.txt`
/// (editable by the user) followed by a blank line, or nothing.
pub fn source_header(boilerplate: &str) -> String {
    let boilerplate = boilerplate.trim_end();
    if boilerplate.is_empty() {
        String::new()
    } else {
        format!("{boilerplate}\n\n")
    }
}

/// Formats generated Rust sources with rustfmt (edition 2024), so lines that depend on
/// the length of a kind's name wrap exactly as `cargo fmt` would wrap them. `originals` are
/// the files as they were before this command (`None`: new), for telling a user's file that
/// does not parse from a bug in what rkb generated.
///
/// Each source goes through its own rustfmt process on stdin, all at once: on stdin
/// rustfmt never follows `mod` declarations into the user's files. Without rustfmt the
/// sources stay as rendered and the returned warning says so.
pub fn rustfmt(
    paths: &[String],
    sources: Vec<String>,
    originals: &[Option<String>],
) -> anyhow::Result<(Vec<String>, Option<String>)> {
    let mut children = Vec::new();
    for source in &sources {
        match spawn_rustfmt(source) {
            Ok(child) => children.push(child),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let warning = "rustfmt was not found, so the new Rust files are not formatted: run `cargo fmt`";
                return Ok((sources, Some(warning.into())));
            }
            Err(e) => return Err(e).context("cannot run rustfmt"),
        }
    }
    let mut formatted = Vec::with_capacity(children.len());
    for ((child, path), original) in children.into_iter().zip(paths).zip(originals) {
        let output = child.wait_with_output().context("rustfmt did not finish")?;
        if !output.status.success() {
            check_rustfmt_config()?;
            // A file of the user's that rkb inserted into: is it theirs that does not parse?
            if let Some(original) = original {
                let theirs = spawn_rustfmt(original)
                    .and_then(|child| child.wait_with_output())
                    .context("cannot run rustfmt")?;
                anyhow::ensure!(
                    theirs.status.success(),
                    "{path} does not parse as Rust, so rkb cannot insert code into it (it \
                     formats the file afterwards), and nothing was written. rustfmt says:\n{}\n  \
                     Fix the file (`cargo check` shows the same) and run the command again",
                    String::from_utf8_lossy(&theirs.stderr).trim_end()
                );
            }
            anyhow::bail!(
                "rustfmt rejected the generated {path}, so nothing was written (a bug in rkb: \
                 please report it with the command you ran):\n{}",
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
        }
        formatted.push(String::from_utf8(output.stdout).context("rustfmt printed non-UTF-8")?);
    }
    Ok((formatted, None))
}

/// Refuses with what rustfmt said when it cannot format even an empty file: then its
/// configuration is at fault (a `rustfmt.toml` of the user's, since rkb writes none), not
/// the Rust it was given.
fn check_rustfmt_config() -> anyhow::Result<()> {
    let empty = spawn_rustfmt("")
        .and_then(|child| child.wait_with_output())
        .context("cannot run rustfmt")?;
    if empty.status.success() {
        return Ok(());
    }
    let file = rustfmt_config().map_or("rustfmt's configuration file".to_owned(), |f| {
        f.display().to_string()
    });
    anyhow::bail!(
        "rustfmt cannot read {file}, so rkb cannot format the Rust files it writes, and nothing \
         was written. That file is yours (rkb writes no rustfmt configuration); rustfmt says:\n{}\n  \
         Fix or remove it (`cargo fmt` reports the same) and run the command again",
        String::from_utf8_lossy(&empty.stderr).trim_end()
    )
}

/// The configuration rustfmt reads here: the nearest `rustfmt.toml` or `.rustfmt.toml` in
/// the current directory or above it.
fn rustfmt_config() -> Option<std::path::PathBuf> {
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .flat_map(|dir| [dir.join("rustfmt.toml"), dir.join(".rustfmt.toml")])
        .find(|file| file.is_file())
}

/// A rustfmt process formatting `source`, fed on stdin.
fn spawn_rustfmt(source: &str) -> std::io::Result<std::process::Child> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin.write_all(source.as_bytes())?;
    Ok(child)
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(&'static str, &'static str)>) {
    for file in dir.files() {
        let name = file.path().to_str().expect("template paths are UTF-8");
        let body = file
            .contents_utf8()
            .unwrap_or_else(|| panic!("template {name} is not UTF-8"));
        out.push((name, body));
    }
    for sub in dir.dirs() {
        collect(sub, out);
    }
}
