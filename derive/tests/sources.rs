//! `make manifests` reads `#[rbac]` and webhook attributes from a project's sources
//! (`rkb_runtime::sources`) with the parser these macros use: here both run on the same
//! files, and must agree.
//!
//! - The corpus in `tests/sources/` is compiled (with the real macros) and read: the rules
//!   of every reconciler and the settings of every webhook impl are equal.
//! - Every UI test of `#[derive(Rbac)]` and the webhook attribute is read: the reader
//!   reports the errors of its `.stderr` (the compiler's, as the macros emit them), with
//!   the same messages at the same lines and columns.

use std::path::Path;

use rkb_runtime::Rbac;
use rkb_runtime::sources::{self, Diagnostic, Kind};
use rkb_runtime::webhook::{Defaulter, Validator};

use k8s_openapi::api::core::v1::ConfigMap;

#[path = "sources/reconcilers.rs"]
mod reconcilers;
#[path = "sources/webhooks.rs"]
mod webhooks;

fn corpus() -> sources::Sources {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sources");
    sources::read(&dir).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn the_reader_finds_the_rules_the_derive_generates() {
    let found = corpus();
    let paths: Vec<&str> = found.reconcilers.iter().map(|r| r.path.as_str()).collect();
    // `OnlyInTests` is compiled here, under cfg(test), but is no part of an operator.
    assert_eq!(
        paths,
        [
            "reconcilers::Plain",
            "reconcilers::Qualified",
            "reconcilers::AnEnum",
            "reconcilers::Generic",
            "reconcilers::inner::Nested",
        ]
    );
    let derived = [
        reconcilers::Plain::rbac_rules(),
        reconcilers::Qualified::rbac_rules(),
        reconcilers::AnEnum::rbac_rules(),
        reconcilers::Generic::<()>::rbac_rules(),
        reconcilers::inner::Nested::rbac_rules(),
    ];
    for (reconciler, derived) in found.reconcilers.iter().zip(derived) {
        assert_eq!(reconciler.rules, derived, "{}", reconciler.path);
    }
    assert!(!reconcilers::OnlyInTests::rbac_rules().is_empty());
    assert!(
        found
            .reconcilers
            .iter()
            .all(|r| r.file.ends_with("reconcilers.rs"))
    );
}

#[test]
fn the_reader_finds_the_settings_the_webhook_attribute_writes() {
    let found = corpus();
    let summary: Vec<(Kind, &str, &str, &str)> = found
        .webhooks
        .iter()
        .map(|w| {
            (
                w.kind,
                w.resource.as_str(),
                w.self_type.as_str(),
                w.module.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (Kind::Validating, "ConfigMap", "Checks", "webhooks"),
            (
                Kind::Mutating,
                "k8s_openapi::api::core::v1::ConfigMap",
                "Checks",
                "webhooks"
            ),
            (Kind::Mutating, "ConfigMap", "Defaults", "webhooks"),
        ]
    );
    let written = [
        <webhooks::Checks as Validator<ConfigMap>>::settings(),
        <webhooks::Checks as Defaulter<ConfigMap>>::settings(),
        <webhooks::Defaults as Defaulter<ConfigMap>>::settings(),
    ];
    for (webhook, written) in found.webhooks.iter().zip(written) {
        assert_eq!(webhook.settings, written, "{webhook:?}");
    }
    // The corpus sets every key somewhere: each one is compared.
    assert_ne!(found.webhooks[0].settings, Default::default());
}

/// The errors of a UI test's `.stderr`: (line, column, message).
fn expected_errors(stderr: &str) -> Vec<(usize, usize, String)> {
    let lines: Vec<&str> = stderr.lines().collect();
    let mut errors = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(message) = line.strip_prefix("error: ") else {
            continue;
        };
        let location = lines[i + 1].trim_start().strip_prefix("--> ").unwrap();
        let mut parts = location.rsplitn(3, ':');
        let column = parts.next().unwrap().parse().unwrap();
        let line = parts.next().unwrap().parse().unwrap();
        errors.push((line, column, message.to_owned()));
    }
    errors
}

#[test]
fn the_reader_reports_the_errors_the_macros_report() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut compared = 0;
    for entry in std::fs::read_dir(&ui).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        // `#[rkb]` attributes are the CRD's, not read from sources.
        let attributes = source.contains("derive(Rbac)") || source.contains("::webhook");
        if !attributes
            || source.contains("rkb_runtime::api")
            || source.contains("rkb_runtime::schema")
        {
            continue;
        }
        let stderr = std::fs::read_to_string(path.with_extension("stderr")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lib.rs"), &source).unwrap();
        let error = sources::read(dir.path()).expect_err(&path.display().to_string());
        let found: Vec<(usize, usize, String)> = error
            .diagnostics
            .iter()
            .map(
                |Diagnostic {
                     line,
                     column,
                     message,
                     ..
                 }| (*line, *column, message.clone()),
            )
            .collect();
        assert_eq!(found, expected_errors(&stderr), "{}", path.display());
        compared += 1;
    }
    // Every UI test of these attributes but the API ones (see tests/ui).
    assert!(compared >= 15, "only {compared} UI tests compared");
}
