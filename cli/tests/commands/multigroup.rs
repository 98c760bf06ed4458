//! `rkb edit --multigroup` and `init --multigroup`: controllers laid out by group, so one
//! kind can have a controller in each of several groups. (That the result builds and
//! passes its tests is checked by `fresh_project.rs`, which compiles it.)

use crate::common;

use std::fs;
use std::path::Path;

use common::rkb_in;

fn read(dir: &Path, rel: &str) -> String {
    fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn create_api(dir: &Path, group: &str, version: &str, kind: &str, extra: &[&str]) {
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
    args.extend(extra);
    rkb_in(dir, &args);
}

#[test]
fn edit_moves_controllers_and_every_path_to_them() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    create_api(dir, "cache", "v1alpha1", "Memcached", &[]);
    create_api(dir, "core", "v1", "Pod", &["--no-resource"]);
    let reconciler = read(dir, "src/controller/memcached.rs");
    // User code elsewhere that names the module follows the move.
    fs::create_dir_all(dir.join("tests")).unwrap();
    fs::write(
        dir.join("tests/mine.rs"),
        "use demo::controller::memcached::MemcachedReconciler;\n",
    )
    .unwrap();

    let report = rkb_in(dir, &["edit", "--multigroup"]).replace(&format!("{}/", dir.display()), "");
    for line in [
        "create src/controller/cache/memcached.rs",
        "create src/controller/core/pod.rs",
        "remove src/controller/memcached.rs",
        "remove src/controller/pod.rs",
        "update tests/mine.rs",
        "update PROJECT",
    ] {
        assert!(report.contains(line), "{line:?} in:\n{report}");
    }
    assert_eq!(read(dir, "src/controller/cache/memcached.rs"), reconciler);
    assert!(!dir.join("src/controller/memcached.rs").exists());
    let registry = read(dir, "src/controller/mod.rs");
    assert!(registry.contains("pub mod cache;\npub mod core;\n// +rkb:scaffold:modules"));
    assert!(!registry.contains("pub mod memcached;"));
    // Names stay: metrics labels and --controller-concurrency keys do not change.
    assert!(registry.contains("Runnable::new(\"memcached\", cache::memcached::run)"));
    assert!(registry.contains("Runnable::new(\"pod\", core::pod::run)"));
    assert!(read(dir, "src/controller/cache/mod.rs").contains("pub mod memcached;"));
    assert!(dir.join("src/controller/cache/memcached.rs").is_file());
    assert_eq!(
        read(dir, "tests/mine.rs"),
        "use demo::controller::cache::memcached::MemcachedReconciler;\n"
    );
    assert!(read(dir, "PROJECT").contains("multigroup: true"));

    // Once is enough: a second run changes nothing.
    let before = common::files(dir);
    assert!(rkb_in(dir, &["edit", "--multigroup"]).contains("multigroup layout already"));
    assert!(common::files(dir) == before);

    // Now one kind gets a controller and roles per group, and a new version of the
    // moved kind keeps its existing roles.
    create_api(dir, "web", "v1", "Memcached", &[]);
    create_api(dir, "cache", "v1beta1", "Memcached", &["--no-controller"]);
    let registry = read(dir, "src/controller/mod.rs");
    assert!(registry.contains("Runnable::new(\"web-memcached\", web::memcached::run)"));
    assert!(dir.join("src/controller/web/memcached.rs").exists());
    let role = read(dir, "config/rbac/web_memcached_editor_role.yaml");
    assert!(role.contains("name: web-memcached-editor-role"), "{role}");
    assert!(role.contains("- web.example.com"), "{role}");
    assert!(
        !dir.join("config/rbac/cache_memcached_editor_role.yaml")
            .exists()
    );
    let roles = read(dir, "config/rbac/kustomization.yaml");
    assert!(roles.contains("- memcached_editor_role.yaml"), "{roles}");
    assert!(
        roles.contains("- web_memcached_editor_role.yaml"),
        "{roles}"
    );
}

/// An `--image` controller's tests, a child module of its file, move with it and name it
/// by its new path; the directory they leave is gone.
#[test]
fn edit_moves_an_image_controllers_tests_with_it() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    create_api(dir, "infra", "v1", "Redis", &["--image", "redis:7.2"]);
    let tests = read(dir, "src/controller/redis/tests.rs");
    assert!(tests.contains("use crate::controller::redis::{"), "{tests}");

    let report = rkb_in(dir, &["edit", "--multigroup"]).replace(&format!("{}/", dir.display()), "");
    for line in [
        "create src/controller/infra/redis.rs",
        "create src/controller/infra/redis/tests.rs",
        "remove src/controller/redis.rs",
        "remove src/controller/redis/tests.rs",
    ] {
        assert!(report.contains(line), "{line:?} in:\n{report}");
    }
    assert_eq!(
        read(dir, "src/controller/infra/redis/tests.rs"),
        tests.replace(
            "use crate::controller::redis::{",
            "use crate::controller::infra::redis::{"
        )
    );
    assert!(!dir.join("src/controller/redis").exists());
}

/// User code that reaches controllers by `super::` and by grouped `use` paths follows the
/// move, so the project still compiles: a controller naming another through `super::`, a
/// module beside them that stays, and a test importing two controllers in one `use`.
#[test]
fn edit_rewrites_relative_and_grouped_paths_to_the_moved_controllers() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    create_api(dir, "cache", "v1alpha1", "Memcached", &[]);
    create_api(dir, "web", "v1", "Site", &[]);
    let append = |rel: &str, text: &str| {
        let path = dir.join(rel);
        let old = fs::read_to_string(&path).unwrap_or_default();
        fs::write(path, old + text).unwrap();
    };
    let registry = read(dir, "src/controller/mod.rs")
        .replace("pub mod site;\n", "pub mod site;\npub mod util;\n");
    fs::write(dir.join("src/controller/mod.rs"), registry).unwrap();
    fs::write(
        dir.join("src/controller/util.rs"),
        "pub const ANSWER: usize = 42;\npub use super::site::SiteReconciler;\n",
    )
    .unwrap();
    append(
        "src/controller/site.rs",
        "\npub use super::memcached::run as run_memcached;\n\
         use super::{memcached as cache_controller, util};\n\
         pub fn sizes() -> usize {\n    \
         util::ANSWER + std::mem::size_of::<cache_controller::MemcachedReconciler>()\n}\n",
    );
    fs::create_dir_all(dir.join("tests")).unwrap();
    fs::write(
        dir.join("tests/both.rs"),
        "use demo::controller::{memcached, site::{self, SiteReconciler}, util};\n\
         use demo::{api, controller::{memcached::MemcachedReconciler as M}};\n",
    )
    .unwrap();

    rkb_in(dir, &["edit", "--multigroup"]);
    let site = read(dir, "src/controller/web/site.rs");
    for line in [
        "pub use super::super::cache::memcached::run as run_memcached;",
        "use super::super::{cache::memcached as cache_controller, util};",
        // The controller's own tests module still means the controller by `super`.
        "    use super::*;",
    ] {
        assert!(site.contains(line), "{line:?} in:\n{site}");
    }
    assert!(
        read(dir, "src/controller/util.rs").contains("pub use super::web::site::SiteReconciler;")
    );
    assert_eq!(
        read(dir, "tests/both.rs"),
        "use demo::controller::{cache::memcached, web::site::{self, SiteReconciler}, util};\n\
         use demo::{api, controller::{cache::memcached::MemcachedReconciler as M}};\n"
    );
    let registry = read(dir, "src/controller/mod.rs");
    assert!(
        registry.contains("pub mod cache;\npub mod util;\npub mod web;\n"),
        "{registry}"
    );
}

#[test]
fn init_can_start_in_the_multigroup_layout() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &["--multigroup"]);
    assert!(read(dir, "PROJECT").contains("multigroup: true"));
    create_api(dir, "cache", "v1", "Memcached", &[]);
    create_api(dir, "web", "v1", "Memcached", &[]);
    let registry = read(dir, "src/controller/mod.rs");
    assert!(registry.contains("Runnable::new(\"cache-memcached\", cache::memcached::run)"));
    assert!(registry.contains("Runnable::new(\"web-memcached\", web::memcached::run)"));
    assert!(
        dir.join("config/rbac/cache_memcached_admin_role.yaml")
            .exists()
    );
    // Still one controller per kind and group.
    let err = common::rkb(&[
        "create",
        "api",
        "--dir",
        dir.to_str().unwrap(),
        "--group",
        "cache",
        "--version",
        "v2",
        "--kind",
        "Memcached",
    ])
    .unwrap_err();
    assert!(
        err.contains(
            "a controller for Memcached exists already (src/controller/cache/memcached.rs"
        ),
        "{err}"
    );
}

#[test]
fn webhooks_from_before_the_edit_stay_where_they_are() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    create_api(dir, "cache", "v1alpha1", "Memcached", &[]);
    let webhook = |group: &str, flag: &str| {
        rkb_in(
            dir,
            &[
                "create",
                "webhook",
                "--group",
                group,
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
                flag,
            ],
        )
    };
    webhook("cache", "--defaulting");
    rkb_in(dir, &["edit", "--multigroup"]);
    // The kind's second webhook joins its first, in the module the edit left in place.
    webhook("cache", "--programmatic-validation");
    assert!(
        !dir.join("src/webhook/cache").exists(),
        "a second module for the same kind"
    );
    let admission = read(dir, "src/webhook/v1alpha1/memcached.rs");
    assert_eq!(
        admission.matches("Defaulter<Memcached> for").count(),
        1,
        "{admission}"
    );
    assert_eq!(
        admission.matches("Validator<Memcached> for").count(),
        1,
        "{admission}"
    );
    let registry = read(dir, "src/webhook/mod.rs");
    assert!(
        registry.contains(
            "v1alpha1::memcached::MemcachedWebhook,\n    );\n    webhooks = webhooks.validator"
        ),
        "{registry}"
    );

    // The same kind in a new group starts the group's module.
    create_api(dir, "web", "v1alpha1", "Memcached", &[]);
    webhook("web", "--defaulting");
    assert!(dir.join("src/webhook/web/v1alpha1/memcached.rs").exists());
    assert!(read(dir, "src/webhook/mod.rs").contains("pub mod web;"));
    assert!(!read(dir, "src/webhook/v1alpha1/memcached.rs").contains("crate::api::web"));
}
