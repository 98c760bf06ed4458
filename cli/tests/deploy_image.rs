//! `rkb create api --image`: the manager's image variables and PROJECT's plugin entries
//! follow repeated and forced runs.

mod common;

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
    assert!(dir.path().join("tests/redis_controller.rs").exists());
}
