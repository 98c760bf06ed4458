//! reference/markers.md, from the scaffold markers: `Marker::ALL` and its names, their doc
//! comments (cli/src/scaffold/plan.rs), the templates that hold each marker line and the
//! commands whose scaffold tables insert at it.

use std::path::Path;

use rkb::scaffold::plan::Marker;

use super::markdown::{cell, code, table, text};

/// The command each module of cli/src/commands/ is, for the modules that insert at markers.
const COMMANDS: &[(&str, &str)] = &[
    ("create_api", "rkb create api"),
    ("create_webhook", "rkb create webhook"),
    ("edit", "rkb edit --multigroup"),
    ("namespaced", "rkb init/edit --namespaced"),
    ("webhook_certs", "rkb init/edit --webhook-certs"),
];

#[test]
fn markers_reference_page() {
    let repo = crate::repo();
    let plan = std::fs::read_to_string(repo.join("cli/src/scaffold/plan.rs")).unwrap();
    let templates = files(&repo.join("templates"));
    let commands = modules_naming_markers(&repo.join("cli/src/commands"));

    let mut rows = Vec::new();
    for marker in Marker::ALL {
        let tag = format!("+rkb:scaffold:{}", marker.name());
        let files: Vec<String> = templates
            .iter()
            .filter(|(_, source)| source.lines().any(|l| l.trim_end().ends_with(&tag)))
            .map(|(path, _)| code(path))
            .collect();
        assert!(!files.is_empty(), "no template has a `{tag}` line");
        let variant = format!("Marker::{marker:?}");
        let mut inserting: Vec<String> = commands
            .iter()
            .filter(|(_, source)| mentions(source, &variant))
            .map(|(command, _)| code(command))
            .collect();
        // A command in a folder names a marker in more than one of its files.
        inserting.dedup();
        assert!(!inserting.is_empty(), "no command inserts at {variant}");
        rows.push(vec![
            code(&tag),
            files.join("<br>"),
            inserting.join("<br>"),
            cell(&doc_comment(&plan, &format!("{marker:?}"))),
        ]);
    }

    let mut page = crate::generated_from(
        "`Marker` (cli/src/scaffold/plan.rs), the templates under templates/ and the scaffold \
         tables of cli/src/commands/",
        "markers.rs",
    );
    page.push_str(&text(
        "# Scaffold markers\n\n\
         A line ending in `+rkb:scaffold:<name>` (a `//` comment in Rust, `#` in YAML) marks \
         where a later command inserts code, right above it: kubebuilder's \
         `+kubebuilder:scaffold:` markers. Keep them where they are; code you write around them \
         stays. `rkb delete api` and `rkb delete webhook` take out what the create commands \
         inserted.\n\n\
         Each marker is in the template of a file another command wrote first: templates/init/ \
         holds what `rkb init` writes, templates/api/ what `rkb create api` writes, \
         templates/webhook/ what `rkb create webhook` writes.\n\n",
    ));
    page.push_str(&table(
        &["Marker", "Template", "Inserted by", "What goes there"],
        &rows,
    ));
    crate::generated_page("reference/markers.md", &page);
}

/// Every file under `dir`, as (path from the repository root, text).
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(source) = std::fs::read_to_string(&path) {
                let relative = path.strip_prefix(crate::repo()).unwrap();
                out.push((relative.to_string_lossy().replace('\\', "/"), source));
            }
        }
    }
    out.sort();
    out
}

/// The command modules that name a marker, as (command, source); each must be in [`COMMANDS`].
fn modules_naming_markers(dir: &Path) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (path, source) in files(dir) {
        // Their inline tests name markers too (a `#[cfg(test)] mod tests;` line cuts nothing).
        let source = source
            .split("\n#[cfg(test)]\nmod tests {")
            .next()
            .unwrap()
            .to_owned();
        if !source.contains("Marker::") {
            continue;
        }
        // The command's module: a file `commands/<module>.rs` or a folder `commands/<module>/`.
        let relative = path.strip_prefix("cli/src/commands/").unwrap_or(&path);
        let module = relative.split('/').next().unwrap().trim_end_matches(".rs");
        let command = COMMANDS
            .iter()
            .find(|(name, _)| *name == module)
            .unwrap_or_else(|| panic!("{path} inserts at markers: name its command in COMMANDS"));
        out.push((command.1, source));
    }
    out
}

/// Whether `source` names `variant` (`Marker::Crd`, not `Marker::Crds`).
fn mentions(source: &str, variant: &str) -> bool {
    source.match_indices(variant).any(|(at, _)| {
        !source[at + variant.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

/// The doc comment of the variant `name` of `enum Marker` in plan.rs; a variant without one
/// shares the comment above it (`Kinds` and `Exports`: one file, two markers).
fn doc_comment(plan: &str, name: &str) -> String {
    let body = plan
        .split("\nmarkers! {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .expect("plan.rs lists the markers in `markers! { ... }`");
    let mut doc: Vec<&str> = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(comment) = line.strip_prefix("///") {
            pending.push(comment.trim());
            continue;
        }
        if !pending.is_empty() {
            doc = std::mem::take(&mut pending);
        }
        // `Variant = "name",`
        if line.split(" = ").next() == Some(name) {
            assert!(!doc.is_empty(), "Marker::{name} has no doc comment");
            return doc.join(" ");
        }
    }
    panic!("no variant {name} in `enum Marker` of plan.rs")
}
