//! A version added with `create api` after the kind got a conversion webhook becomes a
//! spoke of its hub, as if `create webhook --conversion` had listed it.

use crate::common;

use std::path::Path;

use rkb::project::Project;

fn rkb_in(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut full = args.to_vec();
    full.extend(["--dir", dir.to_str().unwrap()]);
    common::rkb(&full)
}

fn api(version: &str, extra: &[&str]) -> Vec<String> {
    [
        "create",
        "api",
        "--group",
        "cache",
        "--version",
        version,
        "--kind",
        "Memcached",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect()
}

fn run(dir: &Path, args: &[String]) -> Result<String, String> {
    rkb_in(dir, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Memcached in v1alpha1 (the hub, with a controller) and v1beta1, converted by a webhook.
fn converted_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    rkb_in(
        dir.path(),
        &["init", "--domain", "example.com", "--project-name", "demo"],
    )
    .unwrap();
    run(dir.path(), &api("v1alpha1", &[])).unwrap();
    run(dir.path(), &api("v1beta1", &["--no-controller"])).unwrap();
    rkb_in(
        dir.path(),
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--conversion",
            "--spoke",
            "v1beta1",
        ],
    )
    .unwrap();
    dir
}

const CONVERSION: &str = "api/src/cache/v1alpha1/memcached_conversion.rs";

fn spokes(dir: &Path) -> Vec<String> {
    let project = Project::load(dir).unwrap();
    let hub = project.find("cache", "v1alpha1", "Memcached").unwrap();
    hub.webhooks.clone().unwrap().spoke
}

fn sorted_lines(text: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(text)
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

#[test]
fn a_later_version_joins_the_conversion_webhook_as_a_spoke() {
    let project = converted_project();
    let dir = project.path();
    let said = run(dir, &api("v1", &["--no-controller"])).unwrap();
    assert!(
        said.contains("v1 is now a spoke of the Memcached conversion webhook (hub v1alpha1)"),
        "{said}"
    );
    assert_eq!(spokes(dir), ["v1", "v1beta1"]);
    let wired = common::files(dir);
    let conversion = String::from_utf8(wired[Path::new(CONVERSION)].clone()).unwrap();
    for line in [
        ".spoke::<crate::cache::v1::Memcached>()",
        "impl Convertible<Memcached> for crate::cache::v1::Memcached {",
        "fn v1_is_served_and_round_trips_through_the_hub() {",
    ] {
        assert!(conversion.contains(line), "{line:?} in:\n{conversion}");
    }
    syn::parse_file(&conversion).unwrap();

    // What `create webhook` writes for both spokes, but for the order of the spokes.
    let again = [
        "create",
        "webhook",
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
        "Memcached",
        "--conversion",
        "--spoke",
        "v1beta1,v1",
        "--force",
    ];
    rkb_in(dir, &again).unwrap();
    let regenerated = common::files(dir);
    assert_eq!(
        wired.keys().collect::<Vec<_>>(),
        regenerated.keys().collect::<Vec<_>>()
    );
    for (path, content) in &regenerated {
        if path == Path::new(CONVERSION) {
            assert_eq!(sorted_lines(&wired[path]), sorted_lines(content));
        } else {
            assert!(wired[path] == *content, "{}", path.display());
        }
    }

    // A forced re-run of a spoke, or of the hub, adds nothing.
    let before = common::files(dir);
    run(dir, &api("v1", &["--no-controller", "--force"])).unwrap();
    run(dir, &api("v1alpha1", &["--force"])).unwrap();
    assert_eq!(spokes(dir), ["v1", "v1beta1"]);
    let after = common::files(dir);
    assert!(after[Path::new(CONVERSION)] == before[Path::new(CONVERSION)]);
}

/// A conversion file without the markers (an older scaffold's) is left alone, with a
/// warning whose command regenerates it with every spoke.
#[test]
fn a_conversion_file_without_markers_gets_a_warning_whose_command_wires_the_spoke() {
    let project = converted_project();
    let dir = project.path();
    let file = dir.join(CONVERSION);
    let old: String = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("+rkb:scaffold:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&file, &old).unwrap();
    let said = run(dir, &api("v1", &["--no-controller"])).unwrap();
    assert!(
        said.contains(
            "warning: Memcached has a conversion webhook, but its conversion file has no"
        ),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), old);
    assert_eq!(spokes(dir), ["v1beta1"]);
    let (_, hint) = said
        .split_once("(edits in it are lost):  rkb ")
        .expect(&said);
    let hint: Vec<&str> = hint.lines().next().unwrap().split_whitespace().collect();
    rkb_in(dir, &hint).unwrap();
    assert_eq!(spokes(dir), ["v1", "v1beta1"]);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains(".spoke::<crate::cache::v1::Memcached>()")
    );
}
