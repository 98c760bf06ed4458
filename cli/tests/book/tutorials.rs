//! The tutorials' projects (`docs/tutorials/*/`) are what their steps make: the rkb
//! commands their TUTORIAL.toml lists, run now, then the edits the tutorial makes by hand
//! to the files it lists as edited. Every other file must be exactly what rkb generates
//! today, as kubebuilder's `hack/docs/check.sh` checks its tutorials.
//!
//! On drift this fails with a unified diff per file. `docs/tutorials/regenerate.sh`
//! (`RKB_BLESS=1`) rewrites the files the tutorial does not edit, and removes those rkb no
//! longer generates; the edited ones are the tutorial's to update, and their own tests
//! (`cargo test -p <project>`) check them.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common;

/// A tutorial's TUTORIAL.toml: how its project is made.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Steps {
    /// The rkb commands, one a line, as the tutorial's page shows them (`rkb ...`); lines
    /// starting with `#` (the page's include anchors) are not commands.
    commands: String,
    /// The files the tutorial edits by hand, relative to the project.
    edited: Vec<PathBuf>,
}

impl Steps {
    fn read(project: &Path) -> Steps {
        let path = project.join("TUTORIAL.toml");
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The commands' arguments, without the leading `rkb`.
    fn commands(&self) -> Vec<Vec<&str>> {
        self.commands
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| {
                let mut words = line.split_whitespace();
                assert_eq!(
                    words.next(),
                    Some("rkb"),
                    "TUTORIAL.toml: `{line}` is not an rkb command"
                );
                words.collect()
            })
            .collect()
    }
}

/// Files of a tutorial's project that no command makes: its steps, and build output.
fn not_generated(path: &Path) -> bool {
    path == Path::new("TUTORIAL.toml")
        || path == Path::new("Cargo.lock")
        || path.starts_with("dist")
}

/// Files `make manifests` owns: the project's own `manifests_are_up_to_date` test checks
/// them, since only compiling the project (with the tutorial's edits) produces them.
fn owned_by_make_manifests(path: &Path) -> bool {
    path.starts_with("config/crd/bases")
        || path == Path::new("config/rbac/role.yaml")
        || path == Path::new("config/webhook/manifests.yaml")
}

/// A unified diff of the tutorial's file `path` (`old`) against what rkb generated.
fn unified_diff(path: &Path, old: &[u8], new: &[u8]) -> String {
    let (old, new) = (String::from_utf8_lossy(old), String::from_utf8_lossy(new));
    similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&path.display().to_string(), "generated")
        .to_string()
}

/// Runs the tutorial's commands in `into`, which sits where the tutorial's project sits
/// below a stand-in for rkb's checkout (`docs/tutorials/<name>`), so that `--rkb-path`
/// resolves as it does in the repository.
fn generate(steps: &Steps, into: &Path) {
    let dir = into.to_str().unwrap();
    for args in steps.commands() {
        let mut full = args.clone();
        full.extend(["--dir", dir]);
        if args.first() == Some(&"init") {
            full.extend(["--rkb-path", "../../.."]);
        }
        common::rkb(&full).unwrap_or_else(|e| panic!("rkb {}: {e}", args.join(" ")));
    }
}

/// Compares the tutorial's project in `project` with what its steps generate now; returns
/// the report (empty when they agree), or rewrites the unedited files under `RKB_BLESS`.
fn check(project: &Path, bless: bool) -> String {
    let name = project.file_name().unwrap();
    let steps = Steps::read(project);
    let tmp = tempfile::tempdir().unwrap();
    let fake_repo = tmp.path().join("repo");
    common::stand_in_for_checkout(&fake_repo);
    let out = fake_repo.join("docs/tutorials").join(name);
    generate(&steps, &out);

    let generated = common::files(&out);
    let checked_in: BTreeMap<PathBuf, Vec<u8>> = common::files(project);
    let shown = |path: &Path| Path::new("docs/tutorials").join(name).join(path);
    let mut report = String::new();
    for path in &steps.edited {
        if !checked_in.contains_key(path) {
            report.push_str(&format!(
                "TUTORIAL.toml lists {} as edited, but it does not exist\n",
                shown(path).display()
            ));
        }
    }
    let mut paths: Vec<&PathBuf> = generated.keys().chain(checked_in.keys()).collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        if not_generated(path) || steps.edited.contains(path) {
            continue;
        }
        match (generated.get(path), checked_in.get(path)) {
            (Some(new), None) => {
                if bless {
                    let target = project.join(path);
                    fs::create_dir_all(target.parent().unwrap()).unwrap();
                    fs::write(target, new).unwrap();
                } else {
                    report.push_str(&format!(
                        "rkb now generates {}, which the tutorial lacks\n",
                        shown(path).display()
                    ));
                }
            }
            (None, Some(_)) if owned_by_make_manifests(path) => {}
            (None, Some(_)) if bless => fs::remove_file(project.join(path)).unwrap(),
            (None, Some(_)) => report.push_str(&format!(
                "the tutorial has {}, which its commands do not generate; list it in \
                 TUTORIAL.toml's `edited` if the tutorial writes it by hand\n",
                shown(path).display()
            )),
            (Some(_), Some(_)) if owned_by_make_manifests(path) => {}
            (Some(new), Some(old)) if new != old => {
                if bless {
                    fs::write(project.join(path), new).unwrap();
                } else {
                    report.push_str(&unified_diff(&shown(path), old, new));
                }
            }
            _ => {}
        }
    }
    report
}

/// The tutorials: every directory of docs/tutorials/ with a TUTORIAL.toml.
fn tutorials() -> Vec<PathBuf> {
    let mut projects: Vec<PathBuf> = fs::read_dir(crate::repo().join("docs/tutorials"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("TUTORIAL.toml").is_file())
        .collect();
    projects.sort();
    assert!(!projects.is_empty(), "no docs/tutorials/*/TUTORIAL.toml");
    projects
}

#[test]
fn tutorial_projects_are_what_their_steps_generate() {
    let bless = std::env::var_os("RKB_BLESS").is_some();
    let report: String = tutorials().iter().map(|p| check(p, bless)).collect();
    assert!(
        report.is_empty(),
        "the tutorials' projects drifted from what their steps generate (if the generator \
         changed on purpose, run docs/tutorials/regenerate.sh and review the diff):\n{report}"
    );
}

/// The check fails as it should on a copy of a tutorial with an edit TUTORIAL.toml does
/// not list, a generated file removed, and a listed file that does not exist.
#[test]
fn drift_is_reported() {
    let original = &tutorials()[0];
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join(original.file_name().unwrap());
    for (path, content) in common::files(original) {
        let target = copy.join(path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(target, content).unwrap();
    }
    let mut main = fs::read_to_string(copy.join("src/main.rs")).unwrap();
    main.push_str("// an edit the tutorial does not list\n");
    fs::write(copy.join("src/main.rs"), main).unwrap();
    fs::remove_file(copy.join("Dockerfile")).unwrap();
    let steps = fs::read_to_string(copy.join("TUTORIAL.toml")).unwrap();
    let steps = steps.replacen("edited = [", "edited = [\"src/not_there.rs\", ", 1);
    fs::write(copy.join("TUTORIAL.toml"), steps).unwrap();

    let report = check(&copy, false);
    // The diff runs from the checked-in file to the generated one.
    assert!(
        report.contains("-// an edit the tutorial does not list"),
        "{report}"
    );
    assert!(
        report.contains("Dockerfile, which the tutorial lacks"),
        "{report}"
    );
    assert!(
        report.contains("src/not_there.rs as edited, but it does not exist"),
        "{report}"
    );
}
