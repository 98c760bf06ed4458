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

use crate::cli::EditArgs;
use crate::names;
use crate::project;
use crate::scaffold::{Changes, Marker, Templates, source_header};

use super::layout::Layout;

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
    let header = source_header(&changes.read("hack/boilerplate.rs.txt")?.unwrap_or_default());
    let rust_files = rust_files(&args.dir)?;
    for resource in project.resources.iter().filter(|r| r.controller) {
        let from = Layout::single_group(&resource.kind);
        let to = Layout::multigroup(&resource.group, &resource.kind);
        move_controller(&mut changes, &templates, &header, resource, &from, &to)?;
        for file in &rust_files {
            let Some(text) = changes.read(file)? else {
                continue;
            };
            let moved = rename_path(
                &text,
                &format!("controller::{}", from.controller_module),
                &format!("controller::{}", to.controller_module),
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

/// Plans the move of one controller module and its registration in `src/controller/mod.rs`.
fn move_controller(
    changes: &mut Changes,
    templates: &Templates,
    header: &str,
    resource: &project::Resource,
    from: &Layout,
    to: &Layout,
) -> anyhow::Result<()> {
    const CONTROLLERS: &str = "src/controller/mod.rs";
    let kind_module = names::snake(&resource.kind);
    let group_module = names::module_name(&resource.group);
    if !changes.exists(&from.controller_file)? {
        bail!(
            "PROJECT lists a controller for {}/{} {}, but {} is missing; rkb moves only the \
             files it scaffolded.\n  Restore the file, or move the project to the multigroup \
             layout by hand (see `rkb edit --help`)",
            resource.group,
            resource.version,
            resource.kind,
            from.controller_file
        );
    }
    changes.rename(&from.controller_file, &to.controller_file)?;

    let registry = changes
        .read(CONTROLLERS)?
        .with_context(|| format!("{CONTROLLERS} is missing; restore it from a fresh `rkb init`"))?;
    let declaration = format!("pub mod {kind_module};");
    if !registry.lines().any(|l| l.trim() == declaration) {
        bail!(
            "{CONTROLLERS} has no `{declaration}` line, so rkb cannot tell how the {} controller \
             is declared; restore the line or move the module by hand",
            resource.kind
        );
    }
    let registry: String = registry
        .lines()
        .filter(|l| l.trim() != declaration)
        .map(|l| format!("{l}\n"))
        .collect();
    // `Runnable::new("memcached", memcached::run)` -> `cache::memcached::run`.
    let run = format!("{kind_module}::run");
    let registered = rename_path(&registry, &run, &format!("{group_module}::{run}"), false);
    if registered == registry {
        bail!(
            "{CONTROLLERS} does not register the {} controller as rkb scaffolded it \
             (`Runnable::new(\"{}\", {run})`); restore that line or move the module by hand",
            resource.kind,
            from.controller_name
        );
    }
    changes.create(CONTROLLERS, registered, true)?;
    changes.insert_sorted_at_marker(
        CONTROLLERS,
        Marker::Modules,
        &format!("pub mod {group_module};"),
    )?;

    let group_mod = to
        .group_mod_file
        .as_deref()
        .expect("the multigroup layout has group modules");
    let mut context = tera::Context::new();
    context.insert("header", header);
    context.insert(
        "api",
        &std::collections::BTreeMap::from([
            ("group", resource.group.as_str()),
            ("kind_snake", kind_module.as_str()),
        ]),
    );
    changes.ensure(group_mod, || {
        templates.render("api/controller_group_mod.rs.tera", &context)
    })?;
    changes.insert_sorted_at_marker(
        group_mod,
        Marker::Modules,
        &templates.render("api/insert/controller_mod.rs.tera", &context)?,
    )
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
