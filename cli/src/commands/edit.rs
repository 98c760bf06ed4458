//! `rkb edit --multigroup`: moves a project to kubebuilder's multigroup layout.
//!
//! Each controller moves from `src/controller/<kind>.rs` to
//! `src/controller/<group>/<kind>.rs` and every path to it in the project's Rust code
//! follows; PROJECT records the layout, so later `create api` runs scaffold there and one
//! kind may get a controller in each of several groups. Controller names (metrics labels,
//! `--controller-concurrency` keys) and role names stay as they are: the operator keeps
//! behaving exactly as before.

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde::Serialize;

use crate::cli::EditArgs;
use crate::model::{self, Layout, ProjectNames};
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::plan::{self, Entry, Marker, Text::Template};
use crate::scaffold::{Changes, Templates};

/// What the templates of a moved controller's group module see.
#[derive(Debug, Serialize)]
pub(super) struct Context<'a> {
    #[serde(flatten)]
    pub names: &'a ProjectNames,
    pub api: model::Resource,
    /// The controller's layout after the move.
    pub layout: Layout,
    #[serde(skip)]
    pub project: &'a Project,
}

impl plan::Model for Context<'_> {
    fn project(&self) -> &Project {
        self.project
    }
}

/// What moving one controller generates: its group's module, declared in the controllers'
/// module, declaring the controller.
pub(super) const PLAN: &[Entry<()>] = &[
    Entry::insert_sorted(
        model::CONTROLLERS,
        Marker::Modules,
        Template("api/insert/api_mod.rs.tera"),
    ),
    Entry::shared(
        "{{ layout.group_mod_file }}",
        "api/controller_group_mod.rs.tera",
    ),
    Entry::insert_sorted(
        "{{ layout.group_mod_file }}",
        Marker::Modules,
        Template(super::create_api::CONTROLLER_MOD),
    ),
];

/// Project directories whose Rust code may name a controller module.
const RUST_DIRS: &[&str] = &["src", "tests", "benches", "examples"];

pub fn edit(args: &EditArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut changes = Changes::open(&args.dir)?;
    let mut project = super::load_project(&args.dir, out)?;
    if project.multigroup {
        writeln!(
            out,
            "{} uses the multigroup layout already; nothing to change.",
            args.dir.join(project::FILE_NAME).display()
        )?;
        return Ok(());
    }
    project.multigroup = true;

    let templates = Templates::load()?;
    let names = ProjectNames::read(&project, &changes)?;
    let rust_files = rust_files(&args.dir)?;
    for resource in project.resources.iter().filter(|r| r.controller) {
        let api = model::Resource::recorded(resource);
        let from = Layout::single_group(&api);
        let context = Context {
            names: &names,
            layout: Layout::multigroup(&api),
            api,
            project: &project,
        };
        move_controller(&mut changes, &context, &from)?;
        plan::apply(PLAN, &(), &templates, &context, false, &mut changes)?;
        for file in &rust_files {
            let Some(text) = changes.read(file)? else {
                continue;
            };
            let moved = rename_path(
                &text,
                &format!("controller::{}", from.controller_module),
                &format!("controller::{}", context.layout.controller_module),
                true,
            );
            if moved != text {
                changes.create(file, moved, true)?;
            }
        }
    }
    changes.create(project::FILE_NAME, project.to_yaml(), true)?;
    super::commit(changes, out)?;
    writeln!(
        out,
        "\n{} now uses the multigroup layout: new controllers go to src/controller/<group>/<kind>.rs, \
         and one kind may have a controller in each group.\n\
         Controllers and roles keep their names, so metrics labels, --controller-concurrency keys and \
         deployed roles stay as they were.",
        project.project_name
    )?;
    Ok(())
}

/// Plans the move of one controller module, and its registration in
/// `src/controller/mod.rs` under its group's module.
fn move_controller(changes: &mut Changes, to: &Context, from: &Layout) -> anyhow::Result<()> {
    const CONTROLLERS: &str = model::CONTROLLERS;
    let api = &to.api;
    if let Err(invalid) = names::check_kind_not_group(&api.kind, &api.group) {
        bail!(
            "the {} controller cannot move to the multigroup layout: {}.\n  \
             Keep the single-group layout, or give the kind another name by hand first",
            api.kind,
            invalid.problem
        );
    }
    if !changes.exists(&from.controller_file)? {
        bail!(
            "PROJECT lists a controller for {}/{} {}, but {} is missing; rkb moves only the \
             files it scaffolded.\n  Restore the file, or move the project to the multigroup \
             layout by hand (see `rkb edit --help`)",
            api.group,
            api.version,
            api.kind,
            from.controller_file
        );
    }
    changes.rename(&from.controller_file, &to.layout.controller_file)?;

    let registry = changes
        .read(CONTROLLERS)?
        .with_context(|| format!("{CONTROLLERS} is missing; restore it from a fresh `rkb init`"))?;
    let declaration = format!("pub mod {};", api.kind_snake);
    if !registry.lines().any(|l| l.trim() == declaration) {
        bail!(
            "{CONTROLLERS} has no `{declaration}` line, so rkb cannot tell how the {} controller \
             is declared; restore the line or move the module by hand",
            api.kind
        );
    }
    let registry: String = registry
        .lines()
        .filter(|l| l.trim() != declaration)
        .map(|l| format!("{l}\n"))
        .collect();
    // `Runnable::new("memcached", memcached::run)` -> `cache::memcached::run`.
    let run = format!("{}::run", from.controller_module);
    let registered = rename_path(
        &registry,
        &run,
        &format!("{}::run", to.layout.controller_module),
        false,
    );
    if registered == registry {
        bail!(
            "{CONTROLLERS} does not register the {} controller as rkb scaffolded it \
             (`Runnable::new(\"{}\", {run})`); restore that line or move the module by hand",
            api.kind,
            from.controller_name
        );
    }
    changes.create(CONTROLLERS, registered, true)
}

/// `text` with every path `from` replaced by `to`: whole path segments only, and only
/// after `::` (as in `crate::controller::x`) when `qualified`.
fn rename_path(text: &str, from: &str, to: &str, qualified: bool) -> String {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = rest[at + from.len()..].chars().next();
        let whole = !before.is_some_and(|c| is_ident(c) || (c == ':' && !qualified))
            && !after.is_some_and(is_ident);
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

/// The project's Rust files, relative to `root`, in a stable order. Symbolic links are
/// left alone (the writer refuses them anyway).
fn rust_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = RUST_DIRS.iter().map(|d| root.join(d)).collect();
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
        };
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let kind = entry.file_type()?;
            let path = entry.path();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("listed under the root");
                files.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::rename_path;

    #[test]
    fn renames_whole_paths_only() {
        let text = "use crate::controller::memcached::Reconciler;\n\
                    x::controller::memcached_v2::y; mycontroller::memcached::z;\n\
                    controller::memcached}";
        assert_eq!(
            rename_path(
                text,
                "controller::memcached",
                "controller::cache::memcached",
                true
            ),
            "use crate::controller::cache::memcached::Reconciler;\n\
             x::controller::memcached_v2::y; mycontroller::memcached::z;\n\
             controller::cache::memcached}"
        );
        assert_eq!(
            rename_path(
                "Runnable::new(\"memcached\", memcached::run),",
                "memcached::run",
                "cache::memcached::run",
                false
            ),
            "Runnable::new(\"memcached\", cache::memcached::run),"
        );
        assert_eq!(
            rename_path("a::memcached::run", "memcached::run", "x", false),
            "a::memcached::run"
        );
    }
}
