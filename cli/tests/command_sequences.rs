//! A property test of the project model: random sequences of `init`, `create api` and
//! `edit --multigroup` with valid and invalid flags. After every accepted command the
//! project is consistent (PROJECT loads and passes the whole-project checks, CRD and
//! role names are unique, every module and kustomize entry points at a file, every Rust
//! file parses); after every refused command the tree is byte-for-byte unchanged.
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
}

impl Step {
    fn args(&self, dir: &str) -> Vec<String> {
        let mut args: Vec<&str> = match self {
            Step::EditMultigroup => vec!["edit", "--multigroup"],
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
        prop::sample::select(GROUPS),
        prop::sample::select(VERSIONS),
        prop::sample::select(KINDS),
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
    prop_oneof![9 => create, 1 => Just(Step::EditMultigroup)]
}

#[derive(Default)]
struct Tally {
    commands: AtomicUsize,
    accepted: AtomicUsize,
    refused: AtomicUsize,
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
        prop::sample::select(DOMAINS),
        any::<bool>(),
        prop::collection::vec(step(), 1..10),
    );
    runner
        .run(&strategy, |(domain, multigroup, steps)| {
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
            for args in std::iter::once(init).chain(steps.iter().map(|s| s.args(&d))) {
                let before = common::files(&dir);
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                tally.commands.fetch_add(1, Ordering::Relaxed);
                match common::rkb(&argv) {
                    Ok(_) => {
                        tally.accepted.fetch_add(1, Ordering::Relaxed);
                        check_project(&dir)
                            .map_err(|e| TestCaseError::fail(format!("after {argv:?}: {e}")))?;
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
        "{} commands: {} accepted, {} refused ({} distinct first lines)",
        tally.commands.into_inner(),
        tally.accepted.into_inner(),
        tally.refused.into_inner(),
        refusals.len()
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
