//! A property test of the project model: random sequences of `init`, `create api` and
//! `edit --multigroup` with valid and invalid flags, forced re-runs, and between commands
//! the edits of a user: files converted to CRLF line endings, and commented-out copies of
//! markers (in a block comment or a raw string, above the real marker). After every
//! accepted command the project is consistent (PROJECT loads and passes the whole-project
//! checks, CRD and role names are unique, every module and kustomize entry points at a
//! file, every Rust file parses, no file mixes line endings and a CRLF file stays CRLF,
//! every copied marker is untouched), and a forced re-run of the command just accepted
//! changes nothing; after every refused command the tree is byte-for-byte unchanged.
//! Whether such projects compile is sampled by `fresh_project.rs`, which runs cargo.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rkb::names;
use rkb::project::Project;

// Pools mixing valid values, invalid ones, and names that clash with each other
// (irregular plurals, built-in kinds, generated type names, keywords).
const DOMAINS: &[&str] = &["example.com", "demo.io", "Example.com", "x", ""];
const GROUPS: &[&str] = &["cache", "web", "apps", "core", "batch", "Cache", "x_y", ""];
const VERSIONS: &[&str] = &["v1", "v1alpha1", "v2beta3", "V1", "1"];
const KINDS: &[&str] = &[
    "Memcached",
    "Foo",
    "FooSpec",
    "Policy",
    "Person",
    "People",
    "Sheep",
    "Pod",
    "Deployment",
    "foo",
    "Type",
    "Option",
    "",
];
const PLURALS: &[Option<&str>] = &[None, None, None, Some("foos"), Some("people"), Some("Bad")];
// Valid values, drawn more often, so that sequences get past `init` and build up projects
// for the later steps to work on.
const VALID_DOMAINS: &[&str] = &["example.com", "demo.io"];
const VALID_GROUPS: &[&str] = &["cache", "web", "crew"];
const VALID_VERSIONS: &[&str] = &["v1", "v1alpha1", "v2beta3"];
const VALID_KINDS: &[&str] = &["Memcached", "Foo", "Policy", "Person", "Sheep"];

/// A value of `valid` three times in four, else of `all`.
fn mostly(
    valid: &'static [&'static str],
    all: &'static [&'static str],
) -> BoxedStrategy<&'static str> {
    prop_oneof![3 => prop::sample::select(valid), 1 => prop::sample::select(all)].boxed()
}

#[derive(Debug, Clone)]
enum Step {
    CreateApi {
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: Option<&'static str>,
        no_resource: bool,
        no_controller: bool,
        cluster_scoped: bool,
        force: bool,
    },
    EditMultigroup,
    /// A user's editor converts a file to CRLF line endings.
    Crlf(&'static str),
    /// A user's commented-out copy of a marker, above the real one: in a block comment
    /// (`raw: false`) or a raw string literal. rkb must insert at the real marker only.
    Decoy {
        file: &'static str,
        marker: &'static str,
        raw: bool,
    },
    /// The last accepted `create api` again, with `--force`.
    ForceAgain,
}

/// Files a user's editor may convert to CRLF.
const CRLF_FILES: &[&str] = &[
    "PROJECT",
    "src/lib.rs",
    "src/main.rs",
    "src/api/mod.rs",
    "src/controller/mod.rs",
    "config/rbac/kustomization.yaml",
    "config/samples/kustomization.yaml",
    "config/crd/kustomization.yaml",
    "config/default/kustomization.yaml",
];

/// Rust files and the markers `create api` inserts at in them.
const DECOYS: &[(&str, &str)] = &[
    ("src/lib.rs", "crds"),
    ("src/lib.rs", "rbac"),
    ("src/api/mod.rs", "groups"),
    ("src/controller/mod.rs", "modules"),
    ("src/controller/mod.rs", "controllers"),
];

impl Step {
    fn args(&self, dir: &str) -> Vec<String> {
        let mut args: Vec<&str> = match self {
            Step::EditMultigroup => vec!["edit", "--multigroup"],
            Step::Crlf(_) | Step::Decoy { .. } | Step::ForceAgain => {
                unreachable!("not a command of its own")
            }
            Step::CreateApi {
                group,
                version,
                kind,
                plural,
                no_resource,
                no_controller,
                cluster_scoped,
                force,
            } => {
                let mut args = vec![
                    "create",
                    "api",
                    "--group",
                    group,
                    "--version",
                    version,
                    "--kind",
                    kind,
                ];
                if let Some(plural) = plural {
                    args.extend(["--plural", plural]);
                }
                for (on, flag) in [
                    (*no_resource, "--no-resource"),
                    (*no_controller, "--no-controller"),
                    (*cluster_scoped, "--cluster-scoped"),
                    (*force, "--force"),
                ] {
                    if on {
                        args.push(flag);
                    }
                }
                args
            }
        };
        args.extend(["--dir", dir]);
        args.into_iter().map(String::from).collect()
    }
}

fn step() -> impl Strategy<Value = Step> {
    let create = (
        mostly(VALID_GROUPS, GROUPS),
        mostly(VALID_VERSIONS, VERSIONS),
        mostly(VALID_KINDS, KINDS),
        prop::sample::select(PLURALS),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(group, version, kind, plural, no_resource, no_controller, cluster_scoped, force)| {
                Step::CreateApi {
                    group,
                    version,
                    kind,
                    plural,
                    no_resource,
                    no_controller,
                    cluster_scoped,
                    force,
                }
            },
        );
    let decoy = (prop::sample::select(DECOYS), any::<bool>())
        .prop_map(|((file, marker), raw)| Step::Decoy { file, marker, raw });
    prop_oneof![
        9 => create,
        1 => Just(Step::EditMultigroup),
        2 => prop::sample::select(CRLF_FILES).prop_map(Step::Crlf),
        2 => decoy,
        2 => Just(Step::ForceAgain),
    ]
}

#[derive(Default)]
struct Tally {
    sequences: AtomicUsize,
    commands: AtomicUsize,
    accepted: AtomicUsize,
    refused: AtomicUsize,
    crlf_files: AtomicUsize,
    decoys: AtomicUsize,
    forced: AtomicUsize,
    forced_unchanged: AtomicUsize,
}

/// What the user did to the project between commands, checked after each command.
#[derive(Default)]
struct Edits {
    /// Files converted to CRLF.
    crlf: BTreeSet<&'static str>,
    /// (file, text): a copied marker's comment or literal, which must stay as it is.
    decoys: Vec<(&'static str, String)>,
    /// Since the last accepted `create api`, the user changed files.
    touched: bool,
}

impl Edits {
    /// Applies a user's edit `step` to the project in `dir`; `false` if it did not apply.
    fn apply(&mut self, step: &Step, dir: &Path) -> bool {
        match *step {
            Step::Crlf(file) => {
                let path = dir.join(file);
                let Ok(text) = fs::read_to_string(&path) else {
                    return false;
                };
                fs::write(&path, text.replace("\r\n", "\n").replace('\n', "\r\n")).unwrap();
                self.crlf.insert(file);
            }
            Step::Decoy { file, marker, raw } => {
                let path = dir.join(file);
                let Ok(text) = fs::read_to_string(&path) else {
                    return false;
                };
                let tag = format!("// +rkb:scaffold:{marker}");
                // The real marker: decoys go above it, so it is the last copy.
                let Some(at) = text.rfind(&tag) else {
                    return false;
                };
                let n = self.decoys.len();
                // Above the real marker, so that taking the first match would take it.
                let (decoy, at) = if raw {
                    // A top-level item: before the file's first `pub` item.
                    let Some(item) = text.find("\npub ") else {
                        return false;
                    };
                    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
                    (
                        format!(
                            "{eol}#[allow(dead_code)]{eol}const DECOY_{n}: &str = r#\"{eol}{tag}{eol}\"#;{eol}"
                        ),
                        item + 1,
                    )
                } else {
                    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
                    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
                    let indent = &text[line..at];
                    (
                        format!("{indent}/* decoy {n}{eol}{indent}{tag}{eol}{indent}*/{eol}"),
                        line,
                    )
                };
                let mut edited = text.clone();
                edited.insert_str(at, &decoy);
                fs::write(&path, edited).unwrap();
                self.decoys.push((file, decoy.replace("\r\n", "\n")));
            }
            _ => unreachable!("a command"),
        }
        self.touched = true;
        true
    }

    /// The user's edits survived: CRLF files are still CRLF and every decoy is intact.
    fn check(&self, dir: &Path) -> Result<(), String> {
        for file in &self.crlf {
            let Ok(text) = fs::read_to_string(dir.join(file)) else {
                continue; // moved or removed by a command (edit --multigroup)
            };
            if text.replace("\r\n", "").contains('\n') {
                return Err(format!("{file} was CRLF and now has LF line endings"));
            }
        }
        for (file, decoy) in &self.decoys {
            let Ok(text) = fs::read_to_string(dir.join(file)) else {
                continue;
            };
            if !text.replace("\r\n", "\n").contains(decoy.as_str()) {
                return Err(format!(
                    "{file}: the commented-out marker changed:\n{decoy}\nin:\n{text}"
                ));
            }
        }
        Ok(())
    }
}

#[test]
fn every_command_leaves_a_consistent_project_or_nothing_changed() {
    let tally = Tally::default();
    let refusals = std::sync::Mutex::new(BTreeSet::new());
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        mostly(VALID_DOMAINS, DOMAINS),
        any::<bool>(),
        prop::collection::vec(step(), 1..12),
    );
    runner
        .run(&strategy, |(domain, multigroup, steps)| {
            tally.sequences.fetch_add(1, Ordering::Relaxed);
            let scratch = tempfile::tempdir().unwrap();
            let dir = scratch.path().join("p");
            let d = dir.to_str().unwrap().to_owned();
            let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
            let mut init = vec!["init", "--domain", domain, "--project-name", "demo"];
            init.extend(["--rkb-path", repo.to_str().unwrap(), "--dir", &d]);
            if multigroup {
                init.push("--multigroup");
            }
            let init: Vec<String> = init.into_iter().map(String::from).collect();
            let mut edits = Edits::default();
            // The last accepted `create api`, for a forced re-run.
            let mut last_create: Option<Vec<String>> = None;
            // `None`: the init that starts the sequence.
            let steps = std::iter::once(None).chain(steps.iter().map(Some));
            for step in steps {
                let (args, forced) = match step {
                    None => (init.clone(), false),
                    Some(edit @ (Step::Crlf(_) | Step::Decoy { .. })) => {
                        if edits.apply(edit, &dir) {
                            let counter = match edit {
                                Step::Crlf(_) => &tally.crlf_files,
                                _ => &tally.decoys,
                            };
                            counter.fetch_add(1, Ordering::Relaxed);
                        }
                        continue;
                    }
                    Some(Step::ForceAgain) => {
                        let Some(mut args) = last_create.clone() else {
                            continue;
                        };
                        args.push("--force".into());
                        tally.forced.fetch_add(1, Ordering::Relaxed);
                        (args, !edits.touched)
                    }
                    Some(step) => (step.args(&d), false),
                };
                let before = common::files(&dir);
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                tally.commands.fetch_add(1, Ordering::Relaxed);
                match common::rkb(&argv) {
                    Ok(_) => {
                        tally.accepted.fetch_add(1, Ordering::Relaxed);
                        check_project(&dir)
                            .and_then(|()| edits.check(&dir))
                            .map_err(|e| TestCaseError::fail(format!("after {argv:?}: {e}")))?;
                        if forced {
                            // Nothing changed since the run it repeats: it regenerates the same.
                            prop_assert!(
                                common::files(&dir) == before,
                                "{argv:?} repeated the command before it and changed files"
                            );
                            tally.forced_unchanged.fetch_add(1, Ordering::Relaxed);
                        }
                        if argv[..2] == ["create", "api"] {
                            last_create =
                                Some(args.iter().filter(|a| *a != "--force").cloned().collect());
                            edits.touched = false;
                        } else {
                            edits.touched = true;
                        }
                    }
                    Err(message) => {
                        tally.refused.fetch_add(1, Ordering::Relaxed);
                        prop_assert!(
                            common::files(&dir) == before,
                            "{argv:?} was refused but changed files:\n{message}"
                        );
                        // Every refusal says something more than clap's generic usage line.
                        prop_assert!(message.len() > 20, "{argv:?}: terse error {message:?}");
                        refusals
                            .lock()
                            .unwrap()
                            .insert(message.lines().next().unwrap_or_default().to_owned());
                    }
                }
                if !dir.join("PROJECT").exists() {
                    break; // init was refused: nothing to build on
                }
            }
            Ok(())
        })
        .unwrap();
    let refusals = refusals.into_inner().unwrap();
    eprintln!(
        "{} sequences, {} commands: {} accepted, {} refused ({} distinct first lines); \
         {} forced re-runs ({} right after the same command, all leaving the tree unchanged); \
         user edits between commands: {} files converted to CRLF, {} commented-out markers",
        tally.sequences.into_inner(),
        tally.commands.into_inner(),
        tally.accepted.into_inner(),
        tally.refused.into_inner(),
        refusals.len(),
        tally.forced.into_inner(),
        tally.forced_unchanged.into_inner(),
        tally.crlf_files.into_inner(),
        tally.decoys.into_inner()
    );
    for refusal in &refusals {
        eprintln!("  refused: {refusal}");
    }
}

/// The invariants of a project rkb left behind.
fn check_project(dir: &Path) -> Result<(), String> {
    let project = Project::load(dir).map_err(|e| format!("{e:#}"))?;
    for resource in &project.resources {
        project
            .check_resource_names(resource)
            .map_err(|e| format!("{e:#}"))?;
    }
    // One CRD per (group, plural), holding one kind; the versions of a kind share a plural.
    let mut crds: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for r in project.resources.iter().filter(|r| r.api.is_some()) {
        crds.entry((r.group.clone(), r.plural.clone()))
            .or_default()
            .insert(r.kind.clone());
    }
    if let Some(((group, plural), kinds)) = crds.iter().find(|(_, kinds)| kinds.len() > 1) {
        return Err(format!("{plural}.{group} is claimed by {kinds:?}"));
    }
    // Each controller's module is where the layout says.
    for r in project.resources.iter().filter(|r| r.controller) {
        let snake = names::snake(&r.kind);
        let file = if project.multigroup {
            format!("src/controller/{}/{snake}.rs", names::module_name(&r.group))
        } else {
            format!("src/controller/{snake}.rs")
        };
        if !dir.join(&file).is_file() {
            return Err(format!(
                "the controller of {} {} is not at {file}",
                r.group, r.kind
            ));
        }
    }
    check_rust(dir, &dir.join("src"))?;
    unique(
        dir,
        "src/controller/mod.rs",
        "Runnable::new(\"",
        "controller names",
    )?;
    for kustomization in ["config/rbac", "config/samples", "config/crd"] {
        check_kustomization(dir, kustomization)?;
    }
    let mut role_names = BTreeSet::new();
    for entry in fs::read_dir(dir.join("config/rbac")).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        if let Some(name) = text
            .lines()
            .find_map(|l| l.strip_prefix("  name: "))
            .filter(|_| text.contains("\nkind: ClusterRole\n") || text.contains("\nkind: Role\n"))
            && !role_names.insert(name.to_owned())
        {
            return Err(format!("two roles are named {name}"));
        }
    }
    Ok(())
}

/// Every Rust file parses, and every `mod x;` names one existing file, once.
fn check_rust(root: &Path, dir: &Path) -> Result<(), String> {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            check_rust(root, &path)?;
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        syn::parse_file(&text).map_err(|e| format!("{rel} does not parse: {e}"))?;
        let name = path.file_stem().unwrap().to_str().unwrap();
        let module_dir = if ["mod", "lib", "main"].contains(&name) {
            path.parent().unwrap().to_path_buf()
        } else {
            path.with_extension("")
        };
        let mut seen = BTreeSet::new();
        for line in text.lines().map(str::trim) {
            let Some(module) = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))
                .and_then(|m| m.strip_suffix(';'))
            else {
                continue;
            };
            if !seen.insert(module) {
                return Err(format!("{rel} declares `mod {module}` twice"));
            }
            let file = module_dir.join(format!("{module}.rs"));
            let nested = module_dir.join(module).join("mod.rs");
            if !file.is_file() && !nested.is_file() {
                return Err(format!("{rel} declares `mod {module}` but it has no file"));
            }
        }
    }
    Ok(())
}

fn unique(dir: &Path, rel: &str, prefix: &str, what: &str) -> Result<(), String> {
    let text = fs::read_to_string(dir.join(rel)).unwrap();
    let mut seen = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix(prefix) {
            let name = rest.split('"').next().unwrap();
            if !seen.insert(name) {
                return Err(format!("{rel}: two {what} are {name:?}"));
            }
        }
    }
    Ok(())
}

/// Every `- file.yaml` a kustomization lists exists (CRD bases only after `make manifests`).
fn check_kustomization(dir: &Path, rel: &str) -> Result<(), String> {
    let text = fs::read_to_string(dir.join(rel).join("kustomization.yaml")).unwrap();
    let mut seen = BTreeSet::new();
    for entry in text.lines().filter_map(|l| l.strip_prefix("- ")) {
        if !seen.insert(entry) {
            return Err(format!("{rel}/kustomization.yaml lists {entry} twice"));
        }
        if entry.ends_with(".yaml")
            && !entry.starts_with("bases/")
            && !dir.join(rel).join(entry).is_file()
        {
            return Err(format!(
                "{rel}/kustomization.yaml lists {entry}, which does not exist"
            ));
        }
    }
    Ok(())
}
