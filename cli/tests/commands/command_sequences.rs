//! A property test of the project model: random sequences of `init`, `create api`,
//! `create webhook`, `delete api`, `delete webhook` and `edit --multigroup` with valid and
//! invalid flags, forced re-runs, and between commands the edits of a user: files
//! converted to CRLF line endings, and commented-out copies of markers (in a block comment
//! or a raw string, above the real marker). After every accepted command the project is
//! consistent (PROJECT loads and passes the whole-project checks, CRD and role names are
//! unique, every module and kustomize entry points at a file, every Rust file parses, no
//! file mixes line endings and a CRLF file stays CRLF, every copied marker is untouched),
//! and a forced re-run of the command just accepted changes nothing; after every refused
//! command the tree is byte-for-byte unchanged; and a create that added an API or
//! webhooks, undone by the matching delete, gives the tree back byte for byte, the user's
//! earlier edits included.
//! Whether such projects compile is sampled by `fresh_project.rs`, which runs cargo.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

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

/// The valid values of a flag, and all of them.
type Names = (&'static [&'static str], &'static [&'static str]);

/// Names that are all valid.
const fn only(valid: &'static [&'static str]) -> Names {
    (valid, valid)
}

/// A value of `valid` three times in four, else of `all`.
fn mostly((valid, all): Names) -> BoxedStrategy<&'static str> {
    prop_oneof![3 => prop::sample::select(valid), 1 => prop::sample::select(all)].boxed()
}

/// The names a sequence draws from.
#[derive(Clone, Copy)]
struct Pools {
    domains: Names,
    groups: Names,
    versions: Names,
    kinds: Names,
    plurals: &'static [Option<&'static str>],
    /// The weights of `create webhook` and `delete webhook` steps against 9 `create api`.
    webhooks: (u32, u32),
    /// Webhook and delete steps name only APIs PROJECT has, and ask for some webhook.
    mostly_accepted: bool,
}

/// Valid and invalid names, and names that clash.
const MIXED: Pools = Pools {
    domains: (VALID_DOMAINS, DOMAINS),
    groups: (VALID_GROUPS, GROUPS),
    versions: (VALID_VERSIONS, VERSIONS),
    kinds: (VALID_KINDS, KINDS),
    plurals: PLURALS,
    webhooks: (4, 2),
    mostly_accepted: false,
};

/// Valid names only, few of them, so that APIs, versions of one kind and webhooks pile
/// up and the deletes meet what they refuse (storage versions, spokes, webhooks).
const VALID: Pools = Pools {
    domains: only(&["example.com"]),
    groups: only(&["cache", "web", "core"]),
    versions: only(&["v1", "v1alpha1", "v1beta1"]),
    kinds: only(&["Memcached", "Foo", "Pod"]),
    plurals: &[None],
    webhooks: (9, 6),
    mostly_accepted: true,
};

/// Files a user's editor may convert to CRLF.
const CRLF_FILES: &[&str] = &[
    "PROJECT",
    "src/lib.rs",
    "src/main.rs",
    "api/src/lib.rs",
    "src/controller/mod.rs",
    "src/webhook/mod.rs",
    "config/rbac/kustomization.yaml",
    "config/samples/kustomization.yaml",
    "config/crd/kustomization.yaml",
    "config/default/kustomization.yaml",
];

/// Rust files and the markers `create api` and `create webhook` insert at in them (and
/// the deletes remove from).
const DECOYS: &[(&str, &str)] = &[
    ("api/src/lib.rs", "crds"),
    ("api/src/lib.rs", "webhooks"),
    ("src/main.rs", "webhooks"),
    ("api/src/lib.rs", "groups"),
    ("src/controller/mod.rs", "modules"),
    ("src/controller/mod.rs", "controllers"),
];
/// Which API a webhook or delete step names: one PROJECT lists (the n-th, modulo their
/// number), so that most are accepted, or names from the pools.
#[derive(Debug, Clone)]
enum Target {
    Existing(usize),
    /// The n-th of the resources with webhooks, if there are any.
    WithWebhooks(usize),
    Named(&'static str, &'static str, &'static str),
}

impl Target {
    fn resolve(&self, dir: &Path) -> (String, String, String) {
        let named = |(g, v, k): (&str, &str, &str)| (g.to_owned(), v.to_owned(), k.to_owned());
        match self {
            Target::Named(g, v, k) => named((g, v, k)),
            Target::Existing(n) | Target::WithWebhooks(n) => {
                let Ok(project) = Project::load(dir) else {
                    return named(("cache", "v1", "Memcached"));
                };
                let hooked: Vec<_> = project
                    .resources
                    .iter()
                    .filter(|r| r.webhooks.is_some())
                    .collect();
                let all: Vec<_> = project.resources.iter().collect();
                let pick = match self {
                    Target::WithWebhooks(_) if !hooked.is_empty() => hooked,
                    _ => all,
                };
                match pick.get(n % pick.len().max(1)) {
                    Some(r) => (r.group.clone(), r.version.clone(), r.kind.clone()),
                    None => named(("cache", "v1", "Memcached")),
                }
            }
        }
    }
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
        /// If it adds an API, delete it and create it again (see [`undo`]).
        undo: bool,
    },
    CreateWebhook {
        target: Target,
        defaulting: bool,
        validation: bool,
        /// `--conversion --spoke <version>`.
        spoke: Option<&'static str>,
        force: bool,
        undo: bool,
    },
    DeleteApi {
        target: Target,
        force: bool,
    },
    DeleteWebhook {
        target: Target,
        /// Every webhook the kind has, whatever the flags below say.
        all: bool,
        defaulting: bool,
        validation: bool,
        conversion: bool,
        force: bool,
    },
    EditMultigroup,
    /// A user's editor converts a file to CRLF line endings.
    Crlf(&'static str),
    /// A user's commented-out copy of a marker, above the real one: in a block comment
    /// (`raw: false`) or a raw string literal. rkb must edit at the real marker only.
    Decoy {
        file: &'static str,
        marker: &'static str,
        raw: bool,
    },
    /// The last accepted `create api` again, with `--force`.
    ForceAgain,
}

impl Step {
    /// The tally's name for the command or edit.
    fn name(&self) -> &'static str {
        match self {
            Step::CreateApi { .. } => "create api",
            Step::CreateWebhook { .. } => "create webhook",
            Step::DeleteApi { .. } => "delete api",
            Step::DeleteWebhook { .. } => "delete webhook",
            Step::EditMultigroup => "edit --multigroup",
            Step::Crlf(_) => "files converted to CRLF",
            Step::Decoy { .. } => "commented-out markers",
            Step::ForceAgain => "create api --force again",
        }
    }

    fn args(&self, dir: &str) -> Vec<String> {
        let path = Path::new(dir);
        let mut args: Vec<String> = match self {
            Step::EditMultigroup => words(&["edit", "--multigroup"]),
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
                undo: _,
            } => {
                let mut args = api_args("create", group, version, kind);
                if let Some(plural) = plural {
                    args.extend(words(&["--plural", plural]));
                }
                flags(
                    &mut args,
                    &[
                        (*no_resource, "--no-resource"),
                        (*no_controller, "--no-controller"),
                        (*cluster_scoped, "--cluster-scoped"),
                        (*force, "--force"),
                    ],
                );
                args
            }
            Step::CreateWebhook {
                target,
                defaulting,
                validation,
                spoke,
                force,
                undo: _,
            } => {
                let (g, v, k) = target.resolve(path);
                let mut args = webhook_args("create", &g, &v, &k);
                flags(
                    &mut args,
                    &[
                        (*defaulting, "--defaulting"),
                        (*validation, "--programmatic-validation"),
                        (*force, "--force"),
                    ],
                );
                if let Some(spoke) = spoke {
                    args.extend(words(&["--conversion", "--spoke", spoke]));
                }
                args
            }
            Step::DeleteApi { target, force } => {
                let (g, v, k) = target.resolve(path);
                let mut args = api_args("delete", &g, &v, &k);
                flags(&mut args, &[(*force, "--force")]);
                args
            }
            Step::DeleteWebhook {
                target,
                all,
                defaulting,
                validation,
                conversion,
                force,
            } => {
                let (g, v, k) = target.resolve(path);
                let mut args = webhook_args("delete", &g, &v, &k);
                let has = Project::load(path)
                    .ok()
                    .and_then(|p| p.find(&g, &v, &k).and_then(|r| r.webhooks.clone()));
                let (defaulting, validation, conversion) = match has {
                    Some(w) if *all => (w.defaulting, w.validation, w.conversion),
                    _ => (*defaulting, *validation, *conversion),
                };
                flags(
                    &mut args,
                    &[
                        (defaulting, "--defaulting"),
                        (validation, "--programmatic-validation"),
                        (conversion, "--conversion"),
                        (*force, "--force"),
                    ],
                );
                args
            }
        };
        args.extend(words(&["--dir", dir]));
        args
    }

    /// The command that undoes this one, if it is a create asked to be undone.
    fn undo(&self, dir: &str) -> Option<Vec<String>> {
        let mut args = match self {
            Step::CreateApi {
                group,
                version,
                kind,
                undo: true,
                ..
            } => api_args("delete", group, version, kind),
            Step::CreateWebhook {
                target,
                defaulting,
                validation,
                spoke,
                undo: true,
                ..
            } => {
                let (g, v, k) = target.resolve(Path::new(dir));
                let mut args = webhook_args("delete", &g, &v, &k);
                flags(
                    &mut args,
                    &[
                        (*defaulting, "--defaulting"),
                        (*validation, "--programmatic-validation"),
                        (spoke.is_some(), "--conversion"),
                    ],
                );
                args
            }
            _ => return None,
        };
        args.extend(words(&["--dir", dir]));
        Some(args)
    }
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

fn api_args(verb: &str, group: &str, version: &str, kind: &str) -> Vec<String> {
    words(&[
        verb,
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ])
}

fn webhook_args(verb: &str, group: &str, version: &str, kind: &str) -> Vec<String> {
    words(&[
        verb,
        "webhook",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ])
}

fn flags(args: &mut Vec<String>, list: &[(bool, &str)]) {
    args.extend(
        list.iter()
            .filter(|(on, _)| *on)
            .map(|(_, f)| (*f).to_owned()),
    );
}

fn target(pools: Pools) -> BoxedStrategy<Target> {
    let existing = (0..8usize).prop_map(Target::Existing);
    if pools.mostly_accepted {
        return existing.boxed();
    }
    let named = (
        mostly(pools.groups),
        mostly(pools.versions),
        mostly(pools.kinds),
    )
        .prop_map(|(g, v, k)| Target::Named(g, v, k));
    prop_oneof![4 => existing, 1 => named].boxed()
}

fn step(pools: Pools) -> impl Strategy<Value = Step> {
    let create = (
        mostly(pools.groups),
        mostly(pools.versions),
        mostly(pools.kinds),
        prop::sample::select(pools.plurals),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.4),
    )
        .prop_map(
            |(
                group,
                version,
                kind,
                plural,
                no_resource,
                no_controller,
                cluster_scoped,
                force,
                undo,
            )| {
                Step::CreateApi {
                    group,
                    version,
                    kind,
                    plural,
                    no_resource,
                    no_controller,
                    cluster_scoped,
                    force,
                    undo,
                }
            },
        );
    let create_webhook = (
        target(pools),
        prop::bool::weighted(0.5),
        prop::bool::weighted(0.5),
        prop::option::weighted(0.3, mostly(pools.versions)),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.5),
    )
        .prop_map(
            move |(target, defaulting, validation, spoke, force, undo)| Step::CreateWebhook {
                target,
                defaulting: defaulting || (pools.mostly_accepted && !validation && spoke.is_none()),
                validation,
                spoke,
                force,
                undo,
            },
        );
    let delete_api = (target(pools), prop::bool::weighted(0.1))
        .prop_map(|(target, force)| Step::DeleteApi { target, force });
    let delete_webhook = (
        prop_oneof![target(pools), (0..8usize).prop_map(Target::WithWebhooks)],
        prop::bool::weighted(0.5),
        prop::bool::weighted(0.5),
        prop::bool::weighted(0.5),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(target, all, defaulting, validation, conversion, force)| Step::DeleteWebhook {
                target,
                all,
                defaulting,
                validation,
                conversion,
                force,
            },
        );
    let decoy = (prop::sample::select(DECOYS), any::<bool>())
        .prop_map(|((file, marker), raw)| Step::Decoy { file, marker, raw });
    prop_oneof![
        9 => create,
        pools.webhooks.0 => create_webhook,
        2 => delete_api,
        pools.webhooks.1 => delete_webhook,
        1 => Just(Step::EditMultigroup),
        2 => prop::sample::select(CRLF_FILES).prop_map(Step::Crlf),
        2 => decoy,
        2 => Just(Step::ForceAgain),
    ]
}

#[derive(Default)]
struct Tally {
    sequences: usize,
    /// Per command: (run, accepted, refused).
    commands: BTreeMap<&'static str, (usize, usize, usize)>,
    /// Creates undone by their delete, the tree then checked against the one before.
    undone: BTreeMap<&'static str, usize>,
    /// The user's edits between commands, by kind.
    edits: BTreeMap<&'static str, usize>,
    /// Forced re-runs right after the same command, the tree then checked unchanged.
    unchanged: usize,
    refusals: BTreeSet<String>,
}

impl Tally {
    fn count(&mut self, command: &'static str, accepted: bool) {
        let entry = self.commands.entry(command).or_default();
        entry.0 += 1;
        if accepted {
            entry.1 += 1;
        } else {
            entry.2 += 1;
        }
    }
}

/// What the user did to the project between commands, checked after each command.
#[derive(Default)]
struct Edits {
    /// Files converted to CRLF.
    crlf: BTreeSet<&'static str>,
    /// (file, text): a copied marker's comment or literal, which must stay as it is.
    decoys: Vec<(&'static str, String)>,
    /// Decoys made so far: each one's item gets a name of its own.
    made: usize,
    /// Since the last accepted `create api`, the user or another command changed files.
    touched: bool,
}

impl Edits {
    /// Applies a user's edit `step` to the project in `dir`; `false` if it did not apply.
    fn apply(&mut self, step: &Step, dir: &Path) -> bool {
        let (Step::Crlf(file) | Step::Decoy { file, .. }) = *step else {
            unreachable!("a command")
        };
        let path = dir.join(file);
        let Ok(text) = fs::read_to_string(&path) else {
            return false;
        };
        let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
        match *step {
            Step::Crlf(file) => {
                fs::write(&path, text.replace("\r\n", "\n").replace('\n', "\r\n")).unwrap();
                self.crlf.insert(file);
            }
            Step::Decoy { file, marker, raw } => {
                let tag = format!("// +rkb:scaffold:{marker}");
                // The real marker: decoys go above it, so it is the last copy.
                let Some(at) = text.rfind(&tag) else {
                    return false;
                };
                let n = self.made;
                // Above the real marker, so that taking the first match would take it.
                let (decoy, at) = if raw {
                    // A top-level item: before the last `pub` item above the real marker
                    // (so the real marker stays the last copy), with a blank line after it
                    // as rustfmt leaves it (the commands format what they edit).
                    let Some(item) = text[..at].rfind("\npub ") else {
                        return false;
                    };
                    (
                        format!(
                            "#[allow(dead_code)]{eol}const DECOY_{n}: &str = r#\"{eol}{tag}{eol}\"#;{eol}{eol}"
                        ),
                        item + 1,
                    )
                } else {
                    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
                    let indent = &text[line..at];
                    // Closed with ` */`, as rustfmt aligns it: the commands format the Rust
                    // files they edit, and a user's `cargo fmt` would have done the same.
                    (
                        format!("{indent}/* decoy {n}{eol}{indent}{tag}{eol}{indent} */{eol}"),
                        line,
                    )
                };
                let mut edited = text.clone();
                edited.insert_str(at, &decoy);
                fs::write(&path, edited).unwrap();
                self.made += 1;
                self.decoys.push((file, decoy.replace("\r\n", "\n")));
            }
            _ => unreachable!("matched above"),
        }
        self.touched = true;
        true
    }

    /// The user's edits survived: CRLF files are still CRLF and every decoy is intact.
    fn check(&mut self, dir: &Path) -> Result<(), String> {
        // A file a command removed (`delete`, `edit --multigroup`) took the user's edits
        // with it; if a later command writes it again, it is rkb's.
        self.crlf.retain(|file| dir.join(file).is_file());
        self.decoys.retain(|(file, _)| dir.join(file).is_file());
        for file in &self.crlf {
            let text = fs::read_to_string(dir.join(file)).unwrap();
            if text.replace("\r\n", "").contains('\n') {
                return Err(format!("{file} was CRLF and now has LF line endings"));
            }
        }
        for (file, decoy) in &self.decoys {
            let text = fs::read_to_string(dir.join(file)).unwrap();
            if !text.replace("\r\n", "\n").contains(decoy.as_str()) {
                return Err(format!(
                    "{file}: the commented-out marker changed:\n{decoy}\nin:\n{text}"
                ));
            }
        }
        Ok(())
    }
}

/// PROJECT's resources, and each one's webhooks, as text: what a create added.
fn recorded(dir: &Path) -> BTreeSet<String> {
    let Ok(project) = Project::load(dir) else {
        return BTreeSet::new();
    };
    project
        .resources
        .iter()
        .map(|r| format!("{}/{}/{} {:?}", r.group, r.version, r.kind, r.webhooks))
        .collect()
}

#[test]
fn every_command_leaves_a_consistent_project_or_nothing_changed() {
    run_sequences(MIXED, 48, 1..12);
}

/// With valid names only, every command is both accepted and refused, and creates of
/// APIs and webhooks are undone by their deletes.
#[test]
fn creates_undone_by_their_deletes_give_the_tree_back() {
    let tally = run_sequences(VALID, 24, 4..16);
    for command in [
        "create api",
        "create webhook",
        "delete api",
        "delete webhook",
    ] {
        let (_, accepted, refused) = tally.commands.get(command).copied().unwrap_or_default();
        assert!(
            accepted > 0 && refused > 0,
            "{command}: {accepted} accepted, {refused} refused"
        );
        assert!(
            !command.starts_with("create") || tally.undone.get(command).is_some_and(|n| *n > 0),
            "no {command} was undone"
        );
    }
}

/// Runs `cases` random sequences of `length` steps over `pools`, checking the invariants
/// after each command, and prints the tally.
fn run_sequences(pools: Pools, cases: u32, length: std::ops::Range<usize>) -> Tally {
    let tally = std::sync::Mutex::new(Tally::default());
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        mostly(pools.domains),
        any::<bool>(),
        prop::collection::vec(step(pools), length),
    );
    runner
        .run(&strategy, |(domain, multigroup, steps)| {
            let mut tally = tally.lock().unwrap();
            tally.sequences += 1;
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
            for step in std::iter::once(None).chain(steps.iter().map(Some)) {
                let (args, repeats) = match step {
                    None => (init.clone(), false),
                    Some(edit @ (Step::Crlf(_) | Step::Decoy { .. })) => {
                        if edits.apply(edit, &dir) {
                            *tally.edits.entry(edit.name()).or_default() += 1;
                        }
                        continue;
                    }
                    Some(Step::ForceAgain) => {
                        let Some(mut args) = last_create.clone() else {
                            continue;
                        };
                        args.push("--force".into());
                        (args, !edits.touched)
                    }
                    Some(step) => (step.args(&d), false),
                };
                let name = step.map_or("init", Step::name);
                let before = common::files(&dir);
                let recorded_before = recorded(&dir);
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                match common::rkb(&argv) {
                    Ok(_) => {
                        tally.count(name, true);
                        check_project(&dir)
                            .and_then(|()| edits.check(&dir))
                            .map_err(|e| TestCaseError::fail(format!("after {argv:?}: {e}")))?;
                        if repeats {
                            // Nothing changed since the run it repeats: it regenerates the same.
                            prop_assert!(
                                common::files(&dir) == before,
                                "{argv:?} repeated the command before it and changed files"
                            );
                            tally.unchanged += 1;
                        }
                        // A create that added or changed one PROJECT entry (an API, its
                        // webhooks), undone by its delete, gives back the tree before it
                        // byte for byte, the user's earlier edits included: no edit comes
                        // between the two. Created again, the tree is as after the create,
                        // and the sequence goes on from there. Not undone: a new version
                        // that also joined its kind's conversion webhook as a spoke (two
                        // entries changed), which `delete api` refuses.
                        let recorded_now = recorded(&dir);
                        let one = recorded_now.difference(&recorded_before).count() == 1;
                        let forced = argv.contains(&"--force");
                        if let Some(undo) = step.and_then(|s| s.undo(&d)).filter(|_| one && !forced)
                        {
                            let after = common::files(&dir);
                            let undo: Vec<&str> = undo.iter().map(String::as_str).collect();
                            common::rkb(&undo).map_err(|e| {
                                TestCaseError::fail(format!(
                                    "{undo:?} after {argv:?} was refused: {e}"
                                ))
                            })?;
                            let differ = differing(&before, &common::files(&dir));
                            prop_assert!(
                                differ.is_empty(),
                                "{undo:?} after {argv:?} did not give the tree back: {differ:?}"
                            );
                            common::rkb(&argv).map_err(|e| {
                                TestCaseError::fail(format!("{argv:?} again was refused: {e}"))
                            })?;
                            let differ = differing(&after, &common::files(&dir));
                            prop_assert!(differ.is_empty(), "{argv:?} again differs: {differ:?}");
                            *tally.undone.entry(name).or_default() += 1;
                        }
                        // A forced re-run repeats the last `create api`; anything else
                        // accepted in between may change what it regenerates.
                        if matches!(step, Some(Step::CreateApi { .. } | Step::ForceAgain)) {
                            last_create =
                                Some(args.iter().filter(|a| *a != "--force").cloned().collect());
                            edits.touched = false;
                        } else {
                            edits.touched = true;
                        }
                    }
                    Err(message) => {
                        tally.count(name, false);
                        prop_assert!(
                            common::files(&dir) == before,
                            "{argv:?} was refused but changed files:\n{message}"
                        );
                        // Every refusal says something more than clap's generic usage line.
                        prop_assert!(message.len() > 20, "{argv:?}: terse error {message:?}");
                        // A first line that ends in `:` is followed by what it means.
                        let mut lines = message.lines();
                        let mut first = lines.next().unwrap_or_default().to_owned();
                        if first.ends_with(':') {
                            first = format!("{first} {}", lines.next().unwrap_or_default().trim());
                        }
                        tally.refusals.insert(first);
                    }
                }
                if !dir.join("PROJECT").exists() {
                    break; // init was refused: nothing to build on
                }
            }
            Ok(())
        })
        .unwrap();
    let tally = tally.into_inner().unwrap();
    let total: usize = tally.commands.values().map(|c| c.0).sum();
    eprintln!("{} sequences, {total} commands:", tally.sequences);
    for (command, (run, accepted, refused)) in &tally.commands {
        eprintln!("  {command}: {run} run, {accepted} accepted, {refused} refused");
    }
    for (command, undone) in &tally.undone {
        eprintln!("  {command}: {undone} undone by delete, tree checked byte for byte");
    }
    eprintln!(
        "  create api --force again: {} right after the same command, tree checked unchanged",
        tally.unchanged
    );
    eprintln!("user edits between commands:");
    for (edit, n) in &tally.edits {
        eprintln!("  {edit}: {n}");
    }
    eprintln!("{} distinct first lines of refusals:", tally.refusals.len());
    for refusal in &tally.refusals {
        eprintln!("  refused: {refusal}");
    }
    tally
}

/// The files whose content differs between two trees.
fn differing(
    a: &BTreeMap<std::path::PathBuf, Vec<u8>>,
    b: &BTreeMap<std::path::PathBuf, Vec<u8>>,
) -> BTreeSet<std::path::PathBuf> {
    a.keys()
        .chain(b.keys())
        .filter(|p| a.get(*p) != b.get(*p))
        .cloned()
        .collect()
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
