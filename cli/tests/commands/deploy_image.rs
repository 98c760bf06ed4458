//! `rkb create api --image`: the manager's image variables and PROJECT's plugin entries
//! follow repeated and forced runs.

use crate::common;

use std::path::Path;

use rkb::project::Project;
use serde::Deserialize as _;

fn create(dir: &Path, kind: &str, image: &str, extra: &[&str]) -> Result<String, String> {
    let dir = dir.to_str().unwrap();
    let mut args = vec![
        "create",
        "api",
        "--dir",
        dir,
        "--group",
        "cache",
        "--version",
        "v1",
        "--kind",
        kind,
        "--image",
        image,
    ];
    args.extend(extra);
    common::rkb(&args)
}

/// The manager container's environment as (name, value).
fn manager_env(dir: &Path) -> Vec<(String, String)> {
    let yaml = std::fs::read_to_string(dir.join("config/manager/manager.yaml")).unwrap();
    let deployment = serde_yaml_ng::Deserializer::from_str(&yaml)
        .map(|doc| serde_yaml_ng::Value::deserialize(doc).unwrap())
        .find(|doc| doc["kind"] == "Deployment")
        .unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    container["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().into(),
                e["value"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn images_are_recorded_in_the_manager_and_project() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    common::rkb(&[
        "init",
        "--dir",
        path,
        "--domain",
        "example.com",
        "--project-name",
        "demo",
    ])
    .unwrap();
    create(
        dir.path(),
        "Memcached",
        "memcached:1.6",
        &["--image-container-port", "11211"],
    )
    .unwrap();
    create(dir.path(), "Redis", "redis:7", &[]).unwrap();
    assert_eq!(
        manager_env(dir.path()),
        [
            ("MEMCACHED_IMAGE".into(), "memcached:1.6".into()),
            ("REDIS_IMAGE".into(), "redis:7".into())
        ]
    );

    // Without --force the API exists; with it, the image changes in place.
    let refused = create(dir.path(), "Memcached", "memcached:1.7", &[]).unwrap_err();
    assert!(refused.contains("already exists"), "{refused}");
    create(
        dir.path(),
        "Memcached",
        "memcached:1.7",
        &["--force", "--run-as-user", "2000"],
    )
    .unwrap();
    let env = manager_env(dir.path());
    assert_eq!(env[0], ("MEMCACHED_IMAGE".into(), "memcached:1.7".into()));
    assert_eq!(env.len(), 2);

    let project = Project::load(dir.path()).unwrap();
    let entries = project.plugins.deploy_image.unwrap().resources;
    let summary: Vec<_> = entries
        .iter()
        .map(|r| {
            (
                r.kind.as_str(),
                r.image.as_str(),
                r.container_port.as_deref(),
                r.run_as_user.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("Memcached", "memcached:1.7", None, Some("2000")),
            ("Redis", "redis:7", None, None)
        ]
    );
    let controller =
        std::fs::read_to_string(dir.path().join("src/controller/memcached.rs")).unwrap();
    assert!(controller.contains("pub const RUN_AS_USER: i64 = 2000;"));
    assert!(dir.path().join("src/controller/redis/tests.rs").exists());
}

/// A project of `init` and then `steps`, each a `create api` for cache/v1 (a kind, then
/// its flags), in a new directory.
fn project_of(steps: &[(&str, &[&str])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    common::rkb(&[
        "init",
        "--dir",
        path,
        "--domain",
        "example.com",
        "--project-name",
        "demo",
    ])
    .unwrap();
    for (kind, flags) in steps {
        run_in(dir.path(), &create_args(kind, flags)).unwrap();
    }
    dir
}

fn create_args(kind: &str, flags: &[&str]) -> Vec<String> {
    [
        "create",
        "api",
        "--group",
        "cache",
        "--version",
        "v1",
        "--kind",
        kind,
    ]
    .iter()
    .chain(flags)
    .map(|s| s.to_string())
    .collect()
}

fn run_in(dir: &Path, args: &[String]) -> Result<String, String> {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--dir", dir.to_str().unwrap()]);
    common::rkb(&args)
}

/// The commands a message suggests: every `rkb ...` after a `:  ` (the hints' form),
/// as arguments after `rkb`.
fn hinted_commands(message: &str) -> Vec<Vec<String>> {
    message
        .lines()
        .filter_map(|line| line.split_once(":  rkb ").map(|(_, command)| command))
        .map(|command| command.split_whitespace().map(String::from).collect())
        .collect()
}

const IMAGE: &[&str] = &[
    "--image",
    "memcached:1.6",
    "--image-container-port",
    "11211",
];

/// `--force` without `--image` on an API scaffolded with it leaves what `create api`
/// without `--image` scaffolds, byte for byte: no image tests that no longer compile, no
/// image variable in the manager, no plugin entry in PROJECT. Another image API keeps its
/// own; the hint printed brings the image controller back.
#[test]
fn a_forced_re_run_without_image_leaves_exactly_a_plain_api() {
    for others in [&[][..], &[("Redis", &["--image", "redis:7"][..])]] {
        let with_image: Vec<_> = others
            .iter()
            .copied()
            .chain([("Memcached", IMAGE)])
            .collect();
        let image = project_of(&with_image);
        let image_files = common::files(image.path());
        let plain = project_of(&[others, &[("Memcached", &[][..])]].concat());
        let note = run_in(image.path(), &create_args("Memcached", &["--force"])).unwrap();
        let (forced, plain_files) = (common::files(image.path()), common::files(plain.path()));
        for (path, content) in &plain_files {
            assert!(
                forced.get(path) == Some(content),
                "{}:\n{}",
                path.display(),
                common::unified_diff(path, content, forced.get(path).map_or(&[][..], |c| c))
            );
        }
        let extra: Vec<_> = forced
            .keys()
            .filter(|p| !plain_files.contains_key(*p))
            .collect();
        assert!(extra.is_empty(), "left behind: {extra:?}");

        assert!(
            note.contains("Memcached no longer deploys memcached:1.6"),
            "{note}"
        );
        assert!(
            note.contains(" are gone.\n  To scaffold the image controller again:  rkb "),
            "{note}"
        );
        let hinted = hinted_commands(&note);
        assert_eq!(hinted.len(), 1, "{note}");
        run_in(image.path(), &hinted[0]).unwrap();
        assert!(
            common::files(image.path()) == image_files,
            "{:?}",
            hinted[0]
        );
    }
}

/// Regenerating only the types or only the controller of an image API is refused: the
/// image controller needs its types. Both hinted commands do what they say.
#[test]
fn a_forced_partial_re_run_of_an_image_api_is_refused_with_what_to_pass() {
    let plain = common::files(project_of(&[("Memcached", &[])]).path());
    for flag in ["--no-controller", "--no-resource"] {
        let project = project_of(&[("Memcached", IMAGE)]);
        let before = common::files(project.path());
        let refused = run_in(
            project.path(),
            &create_args("Memcached", &[flag, "--force"]),
        )
        .unwrap_err();
        for fragment in [
            "Memcached cache/v1 was scaffolded with --image memcached:1.6",
            &format!(
                "so --force {flag} cannot regenerate one part of them.\n  To regenerate it as it is:  rkb"
            ),
            "\n  To make it a plain API (its image's tests, variable in config/manager/manager.yaml and \
             PROJECT entry go):  rkb",
            "rkb create api --group cache --version v1 --kind Memcached --image memcached:1.6 \
             --image-container-port 11211 --force",
        ] {
            assert!(refused.contains(fragment), "{fragment:?} in:\n{refused}");
        }
        assert!(
            common::files(project.path()) == before,
            "{flag}: files changed"
        );
        let hinted = hinted_commands(&refused);
        assert_eq!(hinted.len(), 2, "{refused}");
        // As it is: regenerated unchanged.
        run_in(project.path(), &hinted[0]).unwrap();
        assert!(common::files(project.path()) == before, "{:?}", hinted[0]);
        // A plain API.
        run_in(project.path(), &hinted[1]).unwrap();
        assert!(common::files(project.path()) == plain, "{:?}", hinted[1]);
    }
}
