//! `rkb edit --plugins grafana`: the dashboards, PROJECT's record of the plugin, a second
//! run that changes nothing, a user's own file that is never overwritten, and `alpha
//! generate` replaying the plugin. (The dashboards' queries are checked against a
//! manager's metrics in manager/tests/integration/metrics.rs.)

use crate::common;

use std::fs;

use serde_json::Value;

const DASHBOARDS: [&str; 2] = [
    "grafana/controller-runtime-metrics.json",
    "grafana/controller-resources-metrics.json",
];

#[test]
fn grafana_dashboards_are_added_once_and_replayed() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &[]);
    common::rkb_in(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ],
    );
    let report = common::rkb_in(&dir, &["edit", "--plugins", "grafana"]);
    assert!(
        report.contains("grafana/controller-runtime-metrics.json"),
        "{report}"
    );
    for path in DASHBOARDS {
        let dashboard: Value =
            serde_json::from_str(&fs::read_to_string(dir.join(path)).unwrap()).unwrap();
        assert!(
            dashboard["title"].as_str().unwrap().starts_with("demo: "),
            "{path}"
        );
        assert!(
            !dashboard["panels"].as_array().unwrap().is_empty(),
            "{path}"
        );
    }
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("grafana.rkb.io/v1-alpha: {}"), "{project}");

    let before = common::files(&dir);
    let again = common::rkb_in(&dir, &["edit", "--plugins", "grafana"]);
    assert!(again.contains("nothing to change"), "{again}");
    assert_eq!(common::files(&dir), before);

    let output = scratch.path().join("generated");
    common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        dir.to_str().unwrap(),
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap();
    for path in DASHBOARDS.iter().chain(&["PROJECT"]) {
        assert_eq!(
            fs::read(output.join(path)).unwrap(),
            before[std::path::Path::new(path)],
            "{path}"
        );
    }
}

/// kubebuilder's custom metrics: the list rkb writes once; metrics listed there get a
/// dashboard at the next run, which follows the list; a bad entry is named and nothing is
/// written; `alpha generate` keeps the list and remakes its dashboard.
#[test]
fn custom_metrics_listed_in_the_config_get_a_dashboard() {
    const CONFIG: &str = "grafana/custom-metrics/config.yaml";
    const DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &[]);
    common::rkb_in(&dir, &["edit", "--plugins", "grafana"]);
    let scaffolded = fs::read_to_string(dir.join(CONFIG)).unwrap();
    assert!(scaffolded.contains("customMetrics:"), "{scaffolded}");
    assert!(!dir.join(DASHBOARD).exists());

    let listed = format!(
        "{scaffolded}  - metric: demo_retries_total\n    type: counter\n  \
         - metric: demo_sync_seconds\n    type: histogram\n    unit: s\n"
    );
    fs::write(dir.join(CONFIG), &listed).unwrap();
    let report = common::rkb_in(&dir, &["edit", "--plugins", "grafana"]);
    assert!(
        report.contains("a panel for each of the 2 metrics"),
        "{report}"
    );
    let dashboard: Value =
        serde_json::from_str(&fs::read_to_string(dir.join(DASHBOARD)).unwrap()).unwrap();
    assert_eq!(dashboard["title"], "demo: custom metrics");
    let targets: Vec<(&str, &str)> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["targets"][0]["expr"].as_str().unwrap(),
                p["fieldConfig"]["defaults"]["unit"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        targets,
        [
            (
                r#"sum by (pod) (rate(demo_retries_total{job=~"$job"}[$__rate_interval]))"#,
                "short"
            ),
            (
                r#"histogram_quantile(0.99, sum by (le) (rate(demo_sync_seconds_bucket{job=~"$job"}[$__rate_interval])))"#,
                "s"
            ),
        ]
    );

    let before = common::files(&dir);
    fs::write(
        dir.join(CONFIG),
        format!("{listed}  - metric: demo_queue\n    type: summary\n"),
    )
    .unwrap();
    let refusal = common::rkb(&[
        "edit",
        "--plugins",
        "grafana",
        "--dir",
        dir.to_str().unwrap(),
    ])
    .unwrap_err();
    assert!(refusal.contains(CONFIG), "{refusal}");
    assert!(refusal.contains("counter, gauge or histogram"), "{refusal}");
    fs::write(dir.join(CONFIG), &listed).unwrap();
    assert_eq!(common::files(&dir), before, "{refusal}");

    let output = scratch.path().join("generated");
    common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        dir.to_str().unwrap(),
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap();
    for path in [CONFIG, DASHBOARD] {
        assert_eq!(
            fs::read(output.join(path)).unwrap(),
            before[std::path::Path::new(path)],
            "{path}"
        );
    }
}

#[test]
fn a_dashboard_of_the_users_own_is_never_overwritten() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    common::init_demo(dir, &[]);
    fs::create_dir_all(dir.join("grafana")).unwrap();
    fs::write(dir.join(DASHBOARDS[0]), "{\"title\": \"mine\"}\n").unwrap();
    let before = common::files(dir);
    let refusal = common::rkb(&[
        "edit",
        "--plugins",
        "grafana",
        "--dir",
        dir.to_str().unwrap(),
    ])
    .unwrap_err();
    assert!(refusal.contains(DASHBOARDS[0]), "{refusal}");
    assert_eq!(common::files(dir), before, "{refusal}");

    let both = common::rkb(&[
        "edit",
        "--multigroup",
        "--plugins",
        "grafana",
        "--dir",
        dir.to_str().unwrap(),
    ])
    .unwrap_err();
    assert!(both.contains("cannot be used with"), "{both}");
    let unknown = common::rkb(&[
        "edit",
        "--plugins",
        "grafna",
        "--dir",
        dir.to_str().unwrap(),
    ])
    .unwrap_err();
    assert!(unknown.contains("possible values: grafana"), "{unknown}");
    assert_eq!(common::files(dir), before);
}

/// kubebuilder's `init --plugins`: the optional plugins come with the new project, by rkb's
/// names or kubebuilder's keys, as `rkb edit --plugins` adds them (the chart waits for the
/// first `make manifests`); go/v4, every project's layout, changes nothing.
#[test]
fn init_adds_the_plugins_it_is_given() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &["--plugins", "go/v4,grafana/v1-alpha,helm"]);
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("grafana.rkb.io/v1-alpha: {}"), "{project}");
    assert!(project.contains("helm.rkb.io/v1-alpha: {}"), "{project}");
    for path in DASHBOARDS {
        assert!(dir.join(path).is_file(), "{path}");
    }
    let makefile = fs::read_to_string(dir.join("Makefile")).unwrap();
    assert!(makefile.contains("\nhelm: manifests "), "{makefile}");
    assert!(
        makefile.contains("\tKUBECTL=$(KUBECTL) $(RKB) edit --plugins helm\n"),
        "{makefile}"
    );
    assert!(
        !dir.join("dist/chart").exists(),
        "the chart waits for make manifests"
    );

    // The same project made in two steps is the same.
    let two_steps = scratch.path().join("two-steps/demo");
    common::init_demo(&two_steps, &[]);
    common::rkb_in(
        &two_steps,
        &["edit", "--plugins", "grafana,helm", "--no-chart"],
    );
    assert_eq!(common::files(&dir), common::files(&two_steps));
}

/// kubebuilder's autoupdate plugin: the weekly workflow, PROJECT's record of it, a second
/// run that changes nothing, the user's edits to the workflow kept, and `alpha generate`
/// replaying it. The workflow's `rkb alpha update` flags are this rkb's; actionlint checks
/// the workflow in workflows.rs.
#[test]
fn autoupdate_writes_the_weekly_update_workflow_and_is_replayed() {
    const WORKFLOW: &str = ".github/workflows/auto-update.yml";
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &[]);
    let report = common::rkb_in(&dir, &["edit", "--plugins", "autoupdate/v1-alpha"]);
    assert!(report.contains(WORKFLOW), "{report}");
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("autoupdate.rkb.io/v1-alpha: {}"),
        "{project}"
    );

    let text = fs::read_to_string(dir.join(WORKFLOW)).unwrap();
    let workflow: Value = serde_yaml_ng::from_str(&text).unwrap();
    assert!(workflow["on"]["schedule"][0]["cron"].is_string(), "{text}");
    assert!(workflow["on"].get("workflow_dispatch").is_some(), "{text}");
    // Least privilege: nothing for the workflow, what the job needs for the job.
    assert_eq!(workflow["permissions"], serde_json::json!({}), "{text}");
    let job = &workflow["jobs"]["auto-update"];
    assert_eq!(
        job["permissions"],
        serde_json::json!({"contents": "write", "issues": "write"}),
        "{text}"
    );
    let runs: Vec<&str> = job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|step| step["run"].as_str())
        .collect();
    assert!(
        runs.iter()
            .any(|run| run.starts_with("make rkb RKB_VERSION=")),
        "{runs:?}"
    );
    let update = runs
        .iter()
        .find(|run| run.starts_with("bin/rkb alpha update"))
        .unwrap_or_else(|| panic!("no bin/rkb alpha update in {runs:?}"));
    let help = common::rkb(&["alpha", "update", "--help"]).unwrap_err();
    for flag in update.split_whitespace().filter(|w| w.starts_with("--")) {
        assert!(
            help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
            "`rkb alpha update` has no {flag}:\n{help}"
        );
    }
    for flag in [
        "--from-branch",
        "--force",
        "--push",
        "--restore-path .github/workflows",
        "--open-gh-issue",
    ] {
        assert!(update.contains(flag), "{update}");
    }

    let before = common::files(&dir);
    let again = common::rkb_in(&dir, &["edit", "--plugins", "autoupdate"]);
    assert!(again.contains("nothing to change"), "{again}");
    assert_eq!(common::files(&dir), before);
    // The user's workflow is theirs: a run of the plugin keeps it.
    let edited = text.replace("0 3 * * 2", "0 6 * * 1");
    fs::write(dir.join(WORKFLOW), &edited).unwrap();
    fs::write(
        dir.join("PROJECT"),
        project.replace("plugins:\n  autoupdate.rkb.io/v1-alpha: {}\n", ""),
    )
    .unwrap();
    common::rkb_in(&dir, &["edit", "--plugins", "autoupdate"]);
    assert_eq!(fs::read_to_string(dir.join(WORKFLOW)).unwrap(), edited);
    assert_eq!(fs::read_to_string(dir.join("PROJECT")).unwrap(), project);
    fs::write(dir.join(WORKFLOW), &text).unwrap();

    let output = scratch.path().join("generated");
    common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        dir.to_str().unwrap(),
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap();
    for path in [WORKFLOW, "PROJECT"] {
        assert_eq!(
            fs::read(output.join(path)).unwrap(),
            before[std::path::Path::new(path)],
            "{path}"
        );
    }

    // `init --plugins autoupdate` makes the same project.
    let at_init = scratch.path().join("at-init/demo");
    common::init_demo(&at_init, &["--plugins", "go/v4,autoupdate/v1-alpha"]);
    assert_eq!(common::files(&at_init), before);
}
