//! `rkb delete api` and `rkb delete webhook`: `create` then `delete` gives the tree back
//! byte for byte, for one API, a second version, `--image` APIs, every kind of webhook and
//! the multigroup layout; refusals name what is wrong and change nothing.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::rkb_in;

/// Runs a command that must be refused; returns its message after checking that the
/// tree did not change.
fn refused(dir: &Path, args: &[&str]) -> String {
    let before = common::files(dir);
    let mut full = args.to_vec();
    full.extend(["--dir", dir.to_str().unwrap()]);
    let message = common::rkb(&full).expect_err(&format!("{args:?} was accepted"));
    assert!(
        common::files(dir) == before,
        "{args:?} was refused but changed files:\n{message}"
    );
    message
}

fn api<'a>(verb: &'a str, group: &'a str, version: &'a str, kind: &'a str) -> Vec<&'a str> {
    vec![
        verb,
        "api",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ]
}

fn webhook<'a>(verb: &'a str, version: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        verb,
        "webhook",
        "--group",
        "cache",
        "--version",
        version,
        "--kind",
        "Memcached",
    ];
    args.extend(flags);
    args
}

/// Asserts the project holds exactly `expected`, naming the files that differ.
fn assert_tree(dir: &Path, expected: &BTreeMap<PathBuf, Vec<u8>>, after: &str) {
    let now = common::files(dir);
    let differ: std::collections::BTreeSet<&PathBuf> = expected
        .keys()
        .chain(now.keys())
        .filter(|p| expected.get(*p) != now.get(*p))
        .collect();
    assert!(differ.is_empty(), "after {after}, these differ: {differ:?}");
    assert!(
        empty_dirs(dir).is_empty(),
        "after {after}: empty directories {:?}",
        empty_dirs(dir)
    );
}

fn empty_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if fs::read_dir(&path).unwrap().next().is_none() {
                out.push(path);
            } else {
                out.extend(empty_dirs(&path));
            }
        }
    }
    out
}

/// Runs `create`, then its `delete`, and checks the tree is as before `create`; then
/// runs `create` again and checks it is as after the first, so the caller goes on with
/// what `create` made.
fn create_then_delete(dir: &Path, create: &[&str], delete: &[&str]) {
    let before = common::files(dir);
    rkb_in(dir, create);
    let after = common::files(dir);
    let report = rkb_in(dir, delete);
    assert!(
        report.contains("remove") || report.contains("update"),
        "{report}"
    );
    assert_tree(dir, &before, &format!("{create:?} then {delete:?}"));
    rkb_in(dir, create);
    assert_tree(dir, &after, &format!("{create:?} again"));
}

#[test]
fn a_single_api_and_a_second_version_come_and_go() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    create_then_delete(
        dir,
        &api("create", "cache", "v1alpha1", "Memcached"),
        &api("delete", "cache", "v1alpha1", "Memcached"),
    );
    // A second version keeps the kind's roles, module and CRD entry to the first.
    let mut second = api("create", "cache", "v1beta1", "Memcached");
    second.push("--no-controller");
    create_then_delete(
        dir,
        &second,
        &api("delete", "cache", "v1beta1", "Memcached"),
    );
    // A cluster-scoped kind with its own plural, and a controller for a built-in kind.
    let mut policy = api("create", "infra", "v1", "Policy");
    policy.extend(["--plural", "policies", "--cluster-scoped"]);
    create_then_delete(dir, &policy, &api("delete", "infra", "v1", "Policy"));
    let mut pod = api("create", "core", "v1", "Pod");
    pod.push("--no-resource");
    create_then_delete(dir, &pod, &api("delete", "core", "v1", "Pod"));
}

/// Names long enough for rustfmt to wrap the lines `create api` inserts into src/lib.rs
/// and src/controller/mod.rs: `create webhook` formats those files, and `delete webhook`
/// must give back what `create api` wrote.
#[test]
fn long_names_wrapped_by_rustfmt_come_and_go() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    let (group, kind) = (
        "averyveryverylonggroupname",
        "AVeryLongKindNameForTestingPurposes",
    );
    create_then_delete(
        dir,
        &api("create", group, "v1alpha1", kind),
        &api("delete", group, "v1alpha1", kind),
    );
    let hook = |verb| {
        vec![
            verb,
            "webhook",
            "--group",
            group,
            "--version",
            "v1alpha1",
            "--kind",
            kind,
            "--defaulting",
        ]
    };
    create_then_delete(dir, &hook("create"), &hook("delete"));
}

#[test]
fn image_apis_come_and_go_in_any_order() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    let before = common::files(dir);
    let mut redis = api("create", "web", "v1", "Redis");
    redis.extend(["--image", "redis:7", "--image-container-port", "6379"]);
    let mut nginx = api("create", "web", "v1", "Nginx");
    nginx.extend([
        "--image",
        "nginx:1.27",
        "--image-container-command",
        "nginx,-g,daemon off;",
        "--run-as-user",
        "101",
    ]);
    // The first image's controller starts the manager's `env:` list.
    create_then_delete(dir, &redis, &api("delete", "web", "v1", "Redis"));
    create_then_delete(dir, &nginx, &api("delete", "web", "v1", "Nginx"));
    // The first one goes first: the second keeps the `env:` list.
    rkb_in(dir, &api("delete", "web", "v1", "Redis"));
    let manager = fs::read_to_string(dir.join("config/manager/manager.yaml")).unwrap();
    assert!(
        manager.contains("env:") && manager.contains("NGINX_IMAGE"),
        "{manager}"
    );
    assert!(!manager.contains("REDIS_IMAGE"), "{manager}");
    rkb_in(dir, &api("delete", "web", "v1", "Nginx"));
    assert_tree(dir, &before, "deleting both image APIs");
}

/// With the manager's own certificates (api/src/webhook_certs.rs) and with cert-manager's
/// (config/certmanager).
#[test]
fn every_kind_of_webhook_comes_and_goes() {
    for certs in ["self", "cert-manager"] {
        let scratch = tempfile::tempdir().unwrap();
        every_kind_of_webhook_comes_and_goes_in(scratch.path(), certs);
    }
}

fn every_kind_of_webhook_comes_and_goes_in(dir: &Path, certs: &str) {
    common::init_demo(dir, &["--webhook-certs", certs]);
    rkb_in(dir, &api("create", "cache", "v1alpha1", "Memcached"));
    let mut second = api("create", "cache", "v1beta1", "Memcached");
    second.push("--no-controller");
    rkb_in(dir, &second);
    let no_webhooks = common::files(dir);
    // One at a time, as golden.rs builds project-memcached-webhook: the second goes
    // through the markers of the admission file the first wrote.
    for flags in [
        &["--defaulting"][..],
        &["--programmatic-validation"],
        &["--conversion", "--spoke", "v1beta1"],
    ] {
        let delete_flags = &flags[..1];
        create_then_delete(
            dir,
            &webhook("create", "v1alpha1", flags),
            &webhook("delete", "v1alpha1", delete_flags),
        );
    }
    let kept = if certs == "self" {
        "api/src/webhook_certs.rs"
    } else {
        "config/certmanager/certificate.yaml"
    };
    assert!(dir.join(kept).is_file(), "{certs}: no {kept}");
    // The last webhook of the project takes config/webhook and the certificates' parts along.
    rkb_in(dir, &webhook("delete", "v1alpha1", &["--conversion"]));
    rkb_in(
        dir,
        &webhook(
            "delete",
            "v1alpha1",
            &["--defaulting", "--programmatic-validation"],
        ),
    );
    assert_tree(dir, &no_webhooks, "deleting every webhook");
    // Both admission webhooks at once, then one of them: the other stays in its file.
    let both = ["--defaulting", "--programmatic-validation"];
    create_then_delete(
        dir,
        &webhook("create", "v1alpha1", &both),
        &webhook("delete", "v1alpha1", &both),
    );
    rkb_in(dir, &webhook("delete", "v1alpha1", &["--defaulting"]));
    let admission = fs::read_to_string(dir.join("src/webhook/v1alpha1/memcached.rs")).unwrap();
    assert!(
        admission.contains("webhook::Validator<Memcached>"),
        "{admission}"
    );
    assert!(
        !admission.contains("impl webhook::Defaulter"),
        "{admission}"
    );
    rkb_in(
        dir,
        &webhook("delete", "v1alpha1", &["--programmatic-validation"]),
    );
    assert_tree(dir, &no_webhooks, "deleting them one after the other");
    // Custom paths (kubebuilder's --defaulting-path, --validation-path): in the attributes
    // and PROJECT, and gone with their webhooks.
    let custom = [
        "--defaulting",
        "--programmatic-validation",
        "--defaulting-path",
        "/my-mutate-path",
        "--validation-path",
        "/my-validate-path",
    ];
    create_then_delete(
        dir,
        &webhook("create", "v1alpha1", &custom),
        &webhook("delete", "v1alpha1", &both),
    );
    let admission = fs::read_to_string(dir.join("src/webhook/v1alpha1/memcached.rs")).unwrap();
    assert!(
        admission.contains(r#"path = "/my-mutate-path""#)
            && admission.contains(r#"path = "/my-validate-path""#),
        "{admission}"
    );
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("defaultingPath: /my-mutate-path")
            && project.contains("validationPath: /my-validate-path"),
        "{project}"
    );
    rkb_in(dir, &webhook("delete", "v1alpha1", &["--defaulting"]));
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        !project.contains("defaultingPath") && project.contains("validationPath"),
        "{project}"
    );
    rkb_in(
        dir,
        &webhook("delete", "v1alpha1", &["--programmatic-validation"]),
    );
    assert_tree(dir, &no_webhooks, "deleting the webhooks with custom paths");
}

/// Webhooks for a built-in kind need no API or controller of the project (kubebuilder's
/// `create webhook --group core --version v1 --kind Pod`): PROJECT records the kind with
/// its webhooks only, and deleting the last one takes the entry and every file along.
/// Conversion is refused: the API server converts its own kinds' versions.
#[test]
fn webhooks_for_a_built_in_kind_come_and_go_without_an_api() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    let pod = |verb, flags: &[&'static str]| {
        let mut args = vec![
            verb,
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
        ];
        args.extend(flags);
        args
    };
    let both = ["--defaulting", "--programmatic-validation"];
    create_then_delete(dir, &pod("create", &both), &pod("delete", &both));
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("core: true") && project.contains("kind: Pod"),
        "{project}"
    );
    assert!(!project.contains("controller: true"), "{project}");
    let admission = fs::read_to_string(dir.join("src/webhook/v1/pod.rs")).unwrap();
    assert!(admission.contains("webhook::Defaulter<Pod>"), "{admission}");
    let refusal = refused(dir, &pod("create", &["--conversion"]));
    assert!(refusal.contains("API server converts"), "{refusal}");
    // Without the entry, the refusal is the same.
    rkb_in(dir, &pod("delete", &both));
    let refusal = refused(dir, &pod("create", &["--conversion"]));
    assert!(refusal.contains("API server converts"), "{refusal}");
    let unknown = refused(
        dir,
        &[
            "create",
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pond",
            "--defaulting",
        ],
    );
    assert!(unknown.contains("no API core/v1 Pond"), "{unknown}");
}

#[test]
fn multigroup_apis_and_webhooks_come_and_go() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &["--multigroup"]);
    create_then_delete(
        dir,
        &api("create", "cache", "v1alpha1", "Memcached"),
        &api("delete", "cache", "v1alpha1", "Memcached"),
    );
    // The same kind in a second group: its own controller module, roles and webhooks.
    create_then_delete(
        dir,
        &api("create", "web", "v1", "Memcached"),
        &api("delete", "web", "v1", "Memcached"),
    );
    let web = |verb| {
        vec![
            verb,
            "webhook",
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--defaulting",
        ]
    };
    create_then_delete(dir, &web("create"), &web("delete"));
    create_then_delete(
        dir,
        &webhook("create", "v1alpha1", &["--programmatic-validation"]),
        &webhook("delete", "v1alpha1", &["--programmatic-validation"]),
    );
}

/// `edit --multigroup` moves controllers but keeps their names and roles: APIs created
/// before it are deleted under those, leaving what `init` and `edit` alone leave.
#[test]
fn apis_from_before_edit_multigroup_are_deleted_whole() {
    let scratch = tempfile::tempdir().unwrap();
    let (dir, bare) = (scratch.path().join("p"), scratch.path().join("bare"));
    for dir in [&dir, &bare] {
        common::init_demo(dir, &[]);
    }
    rkb_in(&dir, &api("create", "cache", "v1alpha1", "Memcached"));
    let mut pod = api("create", "core", "v1", "Pod");
    pod.push("--no-resource");
    rkb_in(&dir, &pod);
    rkb_in(&dir, &webhook("create", "v1alpha1", &["--defaulting"]));
    for dir in [&dir, &bare] {
        rkb_in(dir, &["edit", "--multigroup"]);
    }
    rkb_in(&dir, &webhook("delete", "v1alpha1", &["--defaulting"]));
    rkb_in(&dir, &api("delete", "cache", "v1alpha1", "Memcached"));
    rkb_in(&dir, &api("delete", "core", "v1", "Pod"));
    assert_tree(&dir, &common::files(&bare), "deleting every API");
}

#[test]
fn refusals_say_what_is_wrong_and_change_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    let message = refused(dir, &api("delete", "cache", "v1alpha1", "Memcached"));
    assert!(
        message.contains("no API cache/v1alpha1 Memcached"),
        "{message}"
    );
    assert!(message.contains("none"), "{message}");

    rkb_in(dir, &api("create", "cache", "v1alpha1", "Memcached"));
    let mut second = api("create", "cache", "v1beta1", "Memcached");
    second.push("--no-controller");
    rkb_in(dir, &second);
    let message = refused(dir, &api("delete", "cache", "v2", "Memcached"));
    assert!(
        message.contains(
            "--group cache --version v1alpha1 --kind Memcached; --group cache --version v1beta1"
        ),
        "{message}"
    );
    // The storage version goes last, or after another version took its place.
    let message = refused(dir, &api("delete", "cache", "v1alpha1", "Memcached"));
    assert!(
        message.contains("storage version")
            && message.contains("api/src/cache/v1beta1/memcached.rs"),
        "{message}"
    );

    rkb_in(
        dir,
        &webhook(
            "create",
            "v1alpha1",
            &["--conversion", "--spoke", "v1beta1"],
        ),
    );
    let message = refused(dir, &api("delete", "cache", "v1beta1", "Memcached"));
    assert!(
        message.contains("spoke of the conversion webhook")
            && message.contains(
                "rkb delete webhook --group cache --version v1alpha1 --kind Memcached --conversion"
            ),
        "{message}"
    );
    let message = refused(dir, &webhook("delete", "v1alpha1", &["--defaulting"]));
    assert!(
        message.contains("has no webhook of --defaulting")
            && message.contains("accepted: --conversion"),
        "{message}"
    );
    let message = refused(dir, &webhook("delete", "v1alpha1", &[]));
    assert!(message.contains("no webhook chosen"), "{message}");
    let message = refused(dir, &webhook("delete", "v1beta1", &["--conversion"]));
    assert!(
        message.contains("no webhooks for cache/v1beta1"),
        "{message}"
    );
    rkb_in(dir, &webhook("create", "v1alpha1", &["--defaulting"]));
    let message = refused(dir, &api("delete", "cache", "v1alpha1", "Memcached"));
    assert!(
        message.contains("has webhooks") && message.contains("--defaulting --conversion"),
        "{message}"
    );
}

#[test]
fn changed_files_are_refused_unless_forced() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    let before = common::files(dir);
    rkb_in(dir, &api("create", "cache", "v1alpha1", "Memcached"));
    let types = dir.join("api/src/cache/v1alpha1/memcached.rs");
    let edited = fs::read_to_string(&types).unwrap() + "// my field\n";
    fs::write(&types, &edited).unwrap();
    let message = refused(dir, &api("delete", "cache", "v1alpha1", "Memcached"));
    assert!(
        message.contains("api/src/cache/v1alpha1/memcached.rs: changed since rkb scaffolded it")
            && message.contains("--force")
            && message.contains("move it out of the project"),
        "{message}"
    );
    assert!(!message.contains("controller/memcached.rs"), "{message}");

    // Moved away, the file is the user's; the rest goes without --force.
    fs::rename(&types, dir.join("kept.rs")).unwrap();
    rkb_in(dir, &api("delete", "cache", "v1alpha1", "Memcached"));
    fs::remove_file(dir.join("kept.rs")).unwrap();
    assert_tree(dir, &before, "deleting with the types moved away");

    // With --force the changed file goes, and the report says so.
    rkb_in(dir, &api("create", "cache", "v1alpha1", "Memcached"));
    fs::write(&types, &edited).unwrap();
    let report = rkb_in(
        dir,
        &[
            "delete",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--force",
        ],
    );
    assert!(
        report.contains("removed api/src/cache/v1alpha1/memcached.rs, which had changed"),
        "{report}"
    );
    assert_tree(dir, &before, "deleting with --force");

    // A line rkb inserted, edited by hand, is refused too: the file is named.
    rkb_in(dir, &api("create", "cache", "v1alpha1", "Memcached"));
    let samples = dir.join("config/samples/kustomization.yaml");
    let text = fs::read_to_string(&samples).unwrap();
    fs::write(
        &samples,
        text.replace(
            "- cache_v1alpha1_memcached.yaml",
            "- ./cache_v1alpha1_memcached.yaml",
        ),
    )
    .unwrap();
    let message = refused(dir, &api("delete", "cache", "v1alpha1", "Memcached"));
    assert!(
        message.contains("config/samples/kustomization.yaml: the lines rkb inserted are not there"),
        "{message}"
    );
}
