//! `--webhook-certs`: `init` records the choice (and scaffolds the metrics certificate
//! with it), `create webhook` follows it, and `edit
//! --webhook-certs` switches a project both ways, giving the files back byte for byte when
//! switched back, and refuses (changing nothing) while a part it would take out was edited.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn scaffold(dir: &Path, certs: &str) {
    common::init_demo(dir, &["--webhook-certs", certs]);
    let api = [
        "create",
        "api",
        "--group",
        "cache",
        "--kind",
        "Memcached",
        "--version",
    ];
    common::rkb_in(dir, &[&api[..], &["v1alpha1"]].concat());
    common::rkb_in(dir, &[&api[..], &["v1beta1", "--no-controller"]].concat());
    let webhook = [
        "create",
        "webhook",
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
    ];
    let mut defaulting = webhook.to_vec();
    defaulting.extend(["Memcached", "--defaulting", "--programmatic-validation"]);
    common::rkb_in(dir, &defaulting);
    let mut conversion = webhook.to_vec();
    conversion.extend(["Memcached", "--conversion", "--spoke", "v1beta1"]);
    common::rkb_in(dir, &conversion);
}

fn text(files: &BTreeMap<PathBuf, Vec<u8>>, path: &str) -> String {
    String::from_utf8(files[Path::new(path)].clone()).unwrap()
}

/// The paths of `a` and `b` whose contents differ, or that only one has.
fn differing(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = a.keys().chain(b.keys()).cloned().collect();
    paths.sort();
    paths.dedup();
    paths.retain(|p| a.get(p) != b.get(p));
    paths
}

#[test]
fn a_project_switched_either_way_is_what_init_would_have_made_and_switches_back() {
    let (made_self, made_cm) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    scaffold(made_self.path(), "self");
    scaffold(made_cm.path(), "cert-manager");
    let (self_files, cm_files) = (
        common::files(made_self.path()),
        common::files(made_cm.path()),
    );
    assert!(text(&self_files, "PROJECT").contains("webhookCerts: self\n"));
    assert!(text(&cm_files, "PROJECT").contains("webhookCerts: cert-manager\n"));
    assert!(
        !self_files
            .keys()
            .any(|p| p.starts_with("config/certmanager"))
    );
    assert!(cm_files.contains_key(Path::new("config/certmanager/certificate.yaml")));
    assert!(!cm_files.contains_key(Path::new("api/src/webhook_certs.rs")));
    for (files, has) in [(&self_files, true), (&cm_files, false)] {
        assert_eq!(
            text(files, "src/main.rs").contains("webhook_certificates("),
            has
        );
        assert_eq!(
            text(files, "api/src/lib.rs").contains("webhook_certificate_rules("),
            has
        );
        assert_eq!(
            text(files, "config/default/kustomization.yaml")
                .contains("cert-manager.io/inject-ca-from"),
            !has
        );
        // The metrics certificate follows the choice too.
        assert_eq!(
            text(files, "src/main.rs").contains("metrics_certificates("),
            has
        );
        assert_eq!(
            text(files, "api/src/lib.rs").contains("metrics_certificate_rules("),
            has
        );
        assert_eq!(
            files.contains_key(Path::new("api/src/metrics_certs.rs")),
            has
        );
        assert_eq!(
            text(files, "config/prometheus/monitor.yaml").contains("insecureSkipVerify: false"),
            has
        );
    }

    // Switched, each is byte for byte what the other choice scaffolded.
    let out = common::rkb_in(
        made_self.path(),
        &["edit", "--webhook-certs", "cert-manager"],
    );
    assert!(out.contains("now come from cert-manager"), "{out}");
    assert_eq!(
        differing(&common::files(made_self.path()), &cm_files),
        Vec::<PathBuf>::new()
    );
    common::rkb_in(made_self.path(), &["edit", "--webhook-certs", "self"]);
    assert_eq!(
        differing(&common::files(made_self.path()), &self_files),
        Vec::<PathBuf>::new()
    );
    common::rkb_in(made_cm.path(), &["edit", "--webhook-certs", "self"]);
    assert_eq!(
        differing(&common::files(made_cm.path()), &self_files),
        Vec::<PathBuf>::new()
    );
    let again = common::rkb_in(made_cm.path(), &["edit", "--webhook-certs", "self"]);
    assert!(again.contains("nothing to change"), "{again}");
}

/// A project without webhooks switches its metrics certificate and records the choice,
/// becoming what `init` makes with it; `create webhook` then follows it.
#[test]
fn a_project_without_webhooks_records_the_choice_for_later_webhooks() {
    let (dir, made) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    common::init_demo(dir.path(), &["--webhook-certs", "cert-manager"]);
    common::init_demo(made.path(), &["--webhook-certs", "self"]);
    let before = common::files(dir.path());
    let out = common::rkb_in(dir.path(), &["edit", "--webhook-certs", "self"]);
    assert!(out.contains("api/src/metrics_certs.rs"), "{out}");
    let after = common::files(dir.path());
    assert_eq!(
        differing(&before, &after),
        [
            "PROJECT",
            "api/src/lib.rs",
            "api/src/metrics_certs.rs",
            "config/prometheus/monitor.yaml",
            "config/rbac/role.yaml",
            "src/main.rs"
        ]
        .map(PathBuf::from)
    );
    assert_eq!(
        differing(&after, &common::files(made.path())),
        Vec::<PathBuf>::new()
    );
    common::rkb_in(
        dir.path(),
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
        ],
    );
    common::rkb_in(
        dir.path(),
        &[
            "create",
            "webhook",
            "--group",
            "cache",
            "--version",
            "v1",
            "--kind",
            "Memcached",
            "--defaulting",
        ],
    );
    assert!(dir.path().join("api/src/webhook_certs.rs").is_file());
    assert!(!dir.path().join("config/certmanager").exists());
}

/// A `self` project from before the metrics certificate (no `api/src/metrics_certs.rs`, a
/// ServiceMonitor that skips verification): `edit --webhook-certs self` adds it, giving
/// what `init` makes now.
#[test]
fn edit_webhook_certs_self_adds_the_metrics_certificate_to_an_older_self_project() {
    let (old, made, cm) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    common::init_demo(old.path(), &["--webhook-certs", "self"]);
    common::init_demo(made.path(), &["--webhook-certs", "self"]);
    common::init_demo(cm.path(), &["--webhook-certs", "cert-manager"]);
    // As rkb wrote a `self` project before: none of the metrics certificate's parts.
    std::fs::remove_file(old.path().join("api/src/metrics_certs.rs")).unwrap();
    for file in ["api/src/lib.rs", "src/main.rs"] {
        let text = std::fs::read_to_string(old.path().join(file)).unwrap();
        let kept: String = text
            .split_inclusive('\n')
            .filter(|line| !line.contains("metrics_certs"))
            .collect();
        assert_ne!(kept, text, "{file}");
        std::fs::write(old.path().join(file), kept).unwrap();
    }
    let monitor = "config/prometheus/monitor.yaml";
    std::fs::copy(cm.path().join(monitor), old.path().join(monitor)).unwrap();

    let out = common::rkb_in(old.path(), &["edit", "--webhook-certs", "self"]);
    assert!(out.contains("metrics server's certificate too"), "{out}");
    assert_eq!(
        differing(&common::files(old.path()), &common::files(made.path())),
        Vec::<PathBuf>::new()
    );
    let again = common::rkb_in(old.path(), &["edit", "--webhook-certs", "self"]);
    assert!(again.contains("nothing to change"), "{again}");
}
