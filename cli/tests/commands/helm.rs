//! `rkb edit --plugins helm`: the chart in dist/chart/ of every golden project and example
//! passes `helm lint` and `helm template` with its sections on and off, deploys with default
//! values exactly what `kubectl kustomize config/default` deploys (but for the documented
//! differences), passes the official schemas and a server-side dry run on envtest; `make
//! helm` keeps the user's values and templates; bad input is refused, leaving every file.
//!
//! helm is built by `.ci/go-tools --helm` (`.ci/install-tools` runs it) into
//! ~/.cache/rkb/tools/bin. Where it is missing, the tests that run it fail when `CI` is
//! set, and are skipped with the reason printed otherwise.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rkb_manifests::Manifests;
use rkb_manifests::manifests::NAMESPACED_RBAC_DIR;
use rkb_manifests::rbac::Rule;
use serde::Deserialize;
use serde_yaml_ng::Value;

/// helm from PATH, else from where `.ci/go-tools --helm` puts it; `None` (skipping the
/// test, which CI refuses) where there is none.
fn helm(test: &str) -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("helm"));
    let cache = std::env::var_os("RKB_TOOLS_BIN")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|c| Path::new(&c).join("rkb/tools/bin")))
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/rkb/tools/bin")))
        .map(|dir| dir.join("helm"));
    let found = on_path.chain(cache).find(|path| path.is_file());
    if found.is_none() {
        let reason = "helm is not installed (on PATH or in ~/.cache/rkb/tools/bin); build it \
                      with `bash .ci/go-tools --helm`";
        assert!(std::env::var_os("CI").is_none(), "CI is set and {reason}");
        eprintln!("SKIPPED {test}: {reason}");
    }
    found
}

/// A copy of what the chart is made of (PROJECT, Makefile, config/) of `project`.
fn copy_of(project: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in ["PROJECT", "Makefile"] {
        std::fs::copy(project.join(file), dir.path().join(file)).unwrap();
    }
    common::copy_dir(&project.join("config"), &dir.path().join("config"));
    dir
}

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(name)
}

/// The objects of a YAML stream, by (kind, namespace, name).
fn objects(yaml: &str) -> BTreeMap<(String, String, String), Value> {
    let mut out = BTreeMap::new();
    for doc in serde_yaml_ng::Deserializer::from_str(yaml) {
        let value = Value::deserialize(doc).unwrap();
        if value.is_null() {
            continue;
        }
        let field = |v: &Value, path: &[&str]| {
            path.iter()
                .try_fold(v, |v, k| v.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let key = (
            field(&value, &["kind"]),
            field(&value, &["metadata", "namespace"]),
            field(&value, &["metadata", "name"]),
        );
        assert!(out.insert(key.clone(), value).is_none(), "{key:?} twice");
    }
    out
}

/// `helm template` of the project's chart into `namespace`, with `set` values.
fn template(helm: &Path, project: &Path, namespace: &str, set: &[&str]) -> String {
    let mut args = vec![
        "template",
        "release",
        "dist/chart",
        "--namespace",
        namespace,
    ];
    for s in set {
        args.extend(["--set", s]);
    }
    let output = Command::new(helm)
        .args(&args)
        .current_dir(project)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}: helm {args:?}:\n{}",
        project.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn lint(helm: &Path, project: &Path, set: &[&str]) {
    let mut args = vec!["lint", "--strict", "dist/chart"];
    for s in set {
        args.extend(["--set", s]);
    }
    let output = Command::new(helm)
        .args(&args)
        .current_dir(project)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}: helm {args:?}:\n{}{}",
        project.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every section on, and every one off.
const ALL_ON: &[&str] = &[
    "metrics.enable=true",
    "metrics.certManager=true",
    "prometheus.enable=true",
    "networkPolicy.enable=true",
];
const ALL_OFF: &[&str] = &[
    "metrics.enable=false",
    "metrics.certManager=false",
    "prometheus.enable=false",
    "networkPolicy.enable=false",
    "webhook.enable=false",
    "certManager.enable=false",
    "crd.enable=false",
    "rbacHelpers.enable=false",
    "leaderElection.enable=false",
    "sharding.enable=false",
];

/// The manager's namespace in config/default.
fn namespace_of(project: &Path) -> String {
    let text = std::fs::read_to_string(project.join("config/default/kustomization.yaml")).unwrap();
    let value: Value = serde_yaml_ng::from_str(&text).unwrap();
    value["namespace"].as_str().unwrap().to_owned()
}

/// What the chart does differently from config/default, and documents (README, Helm):
/// its objects are managed by Helm, and its CRDs are kept on uninstall (`crd.keep`).
/// Returns the object as config/default has it, and how many of each difference it had.
fn undo_documented_differences(
    mut object: Value,
    counts: &mut BTreeMap<&'static str, usize>,
) -> Value {
    fn managed_by(value: &mut Value, count: &mut usize) {
        match value {
            Value::Mapping(map) => {
                for (key, value) in map.iter_mut() {
                    if key.as_str() == Some("app.kubernetes.io/managed-by")
                        && value.as_str() == Some("Helm")
                    {
                        *value = "kustomize".into();
                        *count += 1;
                    } else {
                        managed_by(value, count);
                    }
                }
            }
            Value::Sequence(items) => items.iter_mut().for_each(|v| managed_by(v, count)),
            _ => {}
        }
    }
    let mut labels = 0;
    managed_by(&mut object, &mut labels);
    if labels > 0 {
        *counts.entry("managed-by: Helm label").or_default() += 1;
    }
    let metadata = object["metadata"].as_mapping_mut().unwrap();
    if let Some(Value::Mapping(annotations)) = metadata.get_mut("annotations")
        && annotations.remove("helm.sh/resource-policy").is_some()
    {
        *counts
            .entry("helm.sh/resource-policy: keep annotation (CRD)")
            .or_default() += 1;
        if annotations.is_empty() {
            metadata.remove("annotations");
        }
    }
    object
}

/// Compares the chart's objects with kustomize's: the same objects (but the Namespace),
/// equal field by field once the documented differences are undone. Returns the figures.
fn compare(what: &str, chart: &str, kustomized: &str) -> String {
    let chart = objects(chart);
    let mut kustomized = objects(kustomized);
    let namespaces: Vec<_> = kustomized
        .keys()
        .filter(|k| k.0 == "Namespace")
        .cloned()
        .collect();
    for key in &namespaces {
        kustomized.remove(key);
    }
    let chart_keys: Vec<_> = chart.keys().collect();
    let kustomize_keys: Vec<_> = kustomized.keys().collect();
    assert_eq!(chart_keys, kustomize_keys, "{what}: not the same objects");
    let mut counts = BTreeMap::new();
    let mut identical = 0;
    for (key, object) in chart {
        let mut before = BTreeMap::new();
        let undone = undo_documented_differences(object.clone(), &mut before);
        let expected = &kustomized[&key];
        assert_eq!(
            &undone,
            expected,
            "{what}: {key:?} differs from config/default:\nchart: {}\nkustomize: {}",
            serde_yaml_ng::to_string(&object).unwrap(),
            serde_yaml_ng::to_string(expected).unwrap()
        );
        if before.is_empty() {
            identical += 1;
        }
        for (difference, n) in before {
            *counts.entry(difference).or_insert(0) += n;
        }
    }
    let differing: Vec<String> = counts
        .iter()
        .map(|(d, n)| format!("{n} with the {d}"))
        .collect();
    format!(
        "{what}: {} objects in config/default ({} Namespace left out), {} in the chart: {identical} \
         equal, {}",
        kustomize_keys.len() + namespaces.len(),
        namespaces.len(),
        kustomize_keys.len(),
        differing.join(", ")
    )
}

fn add_chart(project: &Path) -> String {
    common::rkb_in(project, &["edit", "--plugins", "helm"])
}

/// The golden webhook project with Roles in two other namespaces than the manager's (as
/// `make manifests` renders `#[rbac(namespace = ...)]` rules): config/namespaced-rbac.
fn with_namespaced_roles() -> tempfile::TempDir {
    let dir = copy_of(&golden("project-memcached-webhook"));
    let rule = |resource: &str, namespace: &str| Rule {
        api_groups: vec![String::new()],
        resources: vec![resource.into()],
        verbs: vec!["get".into()],
        namespace: Some(namespace.into()),
        ..Rule::default()
    };
    let mut rules = vec![rule("configmaps", "team-a"), rule("secrets", "team-b")];
    rules.push(Rule {
        api_groups: vec!["cache.example.com".into()],
        resources: vec!["memcacheds".into()],
        verbs: vec!["get".into(), "list".into(), "watch".into()],
        ..Rule::default()
    });
    for (rel, content) in Manifests::new(vec![], vec![rules]).render().unwrap() {
        if rel.starts_with("config/rbac") || rel.starts_with(NAMESPACED_RBAC_DIR) {
            std::fs::create_dir_all(dir.path().join(&rel).parent().unwrap()).unwrap();
            std::fs::write(dir.path().join(&rel), content).unwrap();
        }
    }
    dir
}

#[test]
fn with_default_values_the_chart_deploys_what_config_default_deploys() {
    let Some(helm) = helm("with_default_values_the_chart_deploys_what_config_default_deploys")
    else {
        return;
    };
    let mut figures = Vec::new();
    let mut projects: Vec<(String, tempfile::TempDir)> = common::projects()
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                copy_of(&p),
            )
        })
        .collect();
    projects.push((
        "project-memcached-webhook with namespaced Roles".into(),
        with_namespaced_roles(),
    ));
    projects.push((
        "project-memcached-webhook with cert-manager".into(),
        common::switched_to_cert_manager(&golden("project-memcached-webhook")),
    ));
    for (name, project) in &projects {
        let dir = project.path();
        add_chart(dir);
        lint(&helm, dir, &[]);
        let namespace = namespace_of(dir);
        let chart = template(&helm, dir, &namespace, &[]);
        let config = if dir.join(NAMESPACED_RBAC_DIR).is_dir() {
            NAMESPACED_RBAC_DIR
        } else {
            "config/default"
        };
        figures.push(compare(name, &chart, &common::kustomize(dir, config)));
        if name == "project-memcached-webhook" {
            // The manager's own certificates: nothing of cert-manager, and the Secret's rules.
            assert!(
                !chart.contains("cert-manager.io"),
                "{name}: an object or annotation of cert-manager in the chart"
            );
            assert!(
                chart.contains("- memcached-webhook-webhook-server-cert\n"),
                "{name}: no rule naming the webhook certificates' Secret"
            );
        }
        if name.ends_with("with namespaced Roles") {
            for namespace in ["team-a", "team-b"] {
                assert!(
                    chart.contains(&format!("namespace: {namespace}\n")),
                    "{name}: no Role in {namespace}"
                );
            }
        }
    }
    println!("{}", figures.join("\n"));
}

#[test]
fn with_every_section_on_the_chart_deploys_what_config_default_does_with_them_on() {
    let Some(helm) =
        helm("with_every_section_on_the_chart_deploys_what_config_default_does_with_them_on")
    else {
        return;
    };
    let mut figures = Vec::new();
    for (name, project) in [
        ("project-memcached", copy_of(&golden("project-memcached"))),
        (
            "project-memcached-webhook",
            copy_of(&golden("project-memcached-webhook")),
        ),
        (
            "project-memcached-webhook with cert-manager",
            common::switched_to_cert_manager(&golden("project-memcached-webhook")),
        ),
    ] {
        let dir = project.path();
        add_chart(dir);
        lint(&helm, dir, ALL_ON);
        lint(&helm, dir, ALL_OFF);
        let namespace = namespace_of(dir);
        let chart = template(&helm, dir, &namespace, ALL_ON);
        let on = common::all_sections_on(dir);
        figures.push(compare(
            &format!("{name}, every section on"),
            &chart,
            &common::kustomize_default(on.path()),
        ));
        // Every section off still renders valid objects, and fewer of them.
        let off = objects(&template(&helm, dir, &namespace, ALL_OFF));
        let kinds: Vec<&str> = off.keys().map(|k| k.0.as_str()).collect();
        for absent in [
            "CustomResourceDefinition",
            "ServiceMonitor",
            "NetworkPolicy",
            "Certificate",
        ] {
            assert!(
                !kinds.contains(&absent),
                "{name}: {absent} with every section off"
            );
        }
        assert!(kinds.contains(&"Deployment"), "{name}: {kinds:?}");
        for (set, what) in [
            (&[][..], "default"),
            (ALL_ON, "every section on"),
            (ALL_OFF, "every section off"),
        ] {
            let rendered = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(rendered.path(), template(&helm, dir, &namespace, set)).unwrap();
            eprintln!("{name}, {what}: kubernetes-validate --strict");
            common::kubernetes_validate(rendered.path(), dir);
        }
    }
    println!("{}", figures.join("\n"));
}

/// `sharding.enable=true` deploys what config/default does with [SHARDING] on (`--sharding`
/// instead of `--leader-elect`, three replicas, the shard Role); `sharding.replicas` sets
/// the sharded replicas and `manager.replicas` the others.
#[test]
fn with_sharding_on_the_chart_deploys_what_config_default_does_with_it_on() {
    let Some(helm) = helm("with_sharding_on_the_chart_deploys_what_config_default_does_with_it_on")
    else {
        return;
    };
    let project = copy_of(&golden("project-memcached-webhook"));
    let dir = project.path();
    add_chart(dir);
    const SHARDED: &[&str] = &["sharding.enable=true"];
    lint(&helm, dir, SHARDED);
    let namespace = namespace_of(dir);
    let chart = template(&helm, dir, &namespace, SHARDED);
    let on = common::sharding_on(dir);
    println!(
        "{}",
        compare(
            "project-memcached-webhook, sharding on",
            &chart,
            &common::kustomize_default(on.path())
        )
    );
    let replicas = |set: &[&str]| {
        let objects = objects(&template(&helm, dir, &namespace, set));
        let (_, manager) = objects
            .iter()
            .find(|(key, _)| key.0 == "Deployment")
            .expect("the manager's Deployment");
        let args = manager["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_sequence()
            .expect("the manager's args");
        let mode = ["--sharding", "--leader-elect"]
            .into_iter()
            .filter(|flag| args.contains(&Value::from(*flag)))
            .collect::<Vec<_>>();
        (manager["spec"]["replicas"].as_u64(), mode)
    };
    assert_eq!(
        replicas(&[
            "sharding.enable=true",
            "sharding.replicas=5",
            "manager.replicas=2"
        ]),
        (Some(5), vec!["--sharding"])
    );
    assert_eq!(
        replicas(&["sharding.replicas=5", "manager.replicas=2"]),
        (Some(2), vec!["--leader-elect"])
    );
}

/// The chart's objects, with default values and with every section on, pass a server-side
/// dry run: the API server validates and admits each (stand-in CRDs serve cert-manager's
/// and the Prometheus Operator's kinds, as in real_api_server.rs).
#[tokio::test]
async fn the_charts_objects_pass_a_server_side_dry_run() {
    let Some(helm) = helm("the_charts_objects_pass_a_server_side_dry_run") else {
        return;
    };
    let env = rkb_envtest::shared_by(module_path!()).await;
    let stand_ins: Vec<_> = [
        ("cert-manager.io", "Certificate", "certificates"),
        ("cert-manager.io", "Issuer", "issuers"),
        ("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
    ]
    .into_iter()
    .map(|(group, kind, plural)| {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "names": {"kind": kind, "plural": plural},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": true
                    }}
                }]
            }
        }))
        .unwrap()
    })
    .collect();
    env.apply().crds(stand_ins).await.unwrap();
    let mut checked = 0;
    for name in ["project-memcached", "project-memcached-webhook"] {
        let project = copy_of(&golden(name));
        let dir = project.path();
        add_chart(dir);
        for set in [&[][..], ALL_ON] {
            let namespace = env.create_namespace().await.unwrap();
            let objects = rkb_envtest::parse_yaml(&template(&helm, dir, &namespace, set)).unwrap();
            let count = objects.len();
            let applied = env
                .apply()
                .dry_run()
                .objects(objects)
                .await
                .unwrap_or_else(|e| panic!("{name} {set:?}: {e}"));
            assert_eq!(applied.len(), count);
            checked += count;
        }
    }
    println!("{checked} objects of the charts passed a server-side dry run");
}

/// `make helm` (and `make manifests`) bring the chart in step with config/: a value the
/// user changed or added stays, a value they removed comes back, a default they never
/// changed follows config/, and a template of their own is never touched. A second run
/// changes nothing.
#[test]
fn make_helm_keeps_the_users_values_and_templates() {
    let project = copy_of(&golden("project-memcached-webhook"));
    let dir = project.path();
    add_chart(dir);
    let values_file = dir.join("dist/chart/values.yaml");
    let values = std::fs::read_to_string(&values_file).unwrap();
    let mine = values
        .replace(
            "  replicas: 1\n",
            "  replicas: 3\n  podLabels:\n    team: a\n",
        )
        .replace("networkPolicy:\n  enable: false\n", "");
    assert_ne!(mine, values);
    std::fs::write(&values_file, &mine).unwrap();
    let own = dir.join("dist/chart/templates/extras/mine.yaml");
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    std::fs::write(
        &own,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n",
    )
    .unwrap();
    // config/ changes: Prometheus is switched on in config/default.
    let kustomization = dir.join("config/default/kustomization.yaml");
    let text = std::fs::read_to_string(&kustomization).unwrap();
    std::fs::write(
        &kustomization,
        text.replace("#- ../prometheus\n", "- ../prometheus\n"),
    )
    .unwrap();

    let make = |dir: &Path| {
        let output = Command::new("make")
            .args([
                "helm",
                &format!("RKB={}", env!("CARGO_BIN_EXE_rkb")),
                "CARGO=true",
            ])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "make helm:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    };
    make(dir);
    let values: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(&values_file).unwrap()).unwrap();
    assert_eq!(values["manager"]["replicas"], Value::from(3));
    assert_eq!(values["manager"]["podLabels"]["team"], Value::from("a"));
    assert_eq!(values["networkPolicy"]["enable"], Value::from(false));
    assert_eq!(values["prometheus"]["enable"], Value::from(true));
    assert_eq!(
        std::fs::read_to_string(&own).unwrap(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n"
    );
    let before = common::files(dir);
    make(dir);
    assert_eq!(
        common::files(dir),
        before,
        "a second `make helm` changed files"
    );
}

/// What rkb refuses, writing nothing: a template of its own edited by hand, a template of
/// the user's where rkb makes one, a chart in dist/chart/ that is not rkb's, a section of
/// config/default switched partly on, and no kubectl.
#[test]
fn bad_input_is_refused_and_leaves_every_file() {
    let refuse = |dir: &Path, expect: &str| {
        let before = common::files(dir);
        let refusal = common::rkb(&["edit", "--plugins", "helm", "--dir", dir.to_str().unwrap()])
            .unwrap_err();
        assert!(refusal.contains(expect), "{refusal}");
        assert_eq!(common::files(dir), before, "{refusal}");
        refusal
    };

    // Someone else's chart.
    let project = copy_of(&golden("project-memcached"));
    let dir = project.path();
    std::fs::create_dir_all(dir.join("dist/chart")).unwrap();
    std::fs::write(
        dir.join("dist/chart/Chart.yaml"),
        "apiVersion: v2\nname: other\n",
    )
    .unwrap();
    refuse(dir, "not a chart rkb made");
    std::fs::remove_dir_all(dir.join("dist")).unwrap();

    // A template rkb wrote, edited by hand; then one of the user's under rkb's name.
    add_chart(dir);
    let manager = dir.join("dist/chart/templates/manager/controller-manager.yaml");
    let text = std::fs::read_to_string(&manager).unwrap();
    std::fs::write(
        &manager,
        text.replace(
            "terminationGracePeriodSeconds: 40",
            "terminationGracePeriodSeconds: 60",
        ),
    )
    .unwrap();
    let refusal = refuse(dir, "changed by hand");
    assert!(
        refusal.contains("templates/manager/controller-manager.yaml"),
        "{refusal}"
    );
    let body: String = text.lines().skip(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&manager, body).unwrap();
    refuse(dir, "not rkb's (no rkb header)");
    std::fs::write(&manager, &text).unwrap();

    // A section switched partly on.
    let kustomization = dir.join("config/default/kustomization.yaml");
    let original = std::fs::read_to_string(&kustomization).unwrap();
    std::fs::write(
        &kustomization,
        original.replace("#- ../certmanager-metrics\n", "- ../certmanager-metrics\n"),
    )
    .unwrap();
    refuse(
        dir,
        "[METRICS-WITH-CERTS]/[PROMETHEUS-WITH-CERTS] section is partly switched on",
    );
    std::fs::write(&kustomization, &original).unwrap();

    // No kubectl (the binary, so that KUBECTL is set for it alone).
    let before = common::files(dir);
    let output = Command::new(env!("CARGO_BIN_EXE_rkb"))
        .args(["edit", "--plugins", "helm", "--dir", dir.to_str().unwrap()])
        .env("KUBECTL", "/nonexistent/kubectl")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("install kubectl"), "{stderr}");
    assert_eq!(common::files(dir), before);

    // And the chart is still as rkb made it: the next run changes nothing.
    let again = common::rkb_in(dir, &["edit", "--plugins", "helm"]);
    let wrote = |verb: &str| again.lines().any(|l| l.trim_start().starts_with(verb));
    assert!(
        !wrote("update ") && !wrote("create ") && !wrote("remove "),
        "{again}"
    );
    assert_eq!(common::files(dir), before);
}

/// PROJECT records the plugin, `make helm` is in the Makefile, and `alpha generate`
/// replays the plugin: with --no-manifests it records it and leaves the chart to `make
/// manifests` (the CRDs it is made of do not exist yet).
#[test]
fn the_plugin_is_recorded_and_replayed() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    common::init_demo(&dir, &[]);
    let report = common::rkb(&[
        "edit",
        "--plugins",
        "helm",
        "--no-chart",
        "--dir",
        dir.to_str().unwrap(),
    ])
    .unwrap();
    assert!(report.contains("make manifests"), "{report}");
    assert!(!dir.join("dist/chart").exists());
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("helm.rkb.io/v1-alpha: {}"), "{project}");
    let makefile = std::fs::read_to_string(dir.join("Makefile")).unwrap();
    assert!(makefile.contains("\nhelm: manifests ##"), "{makefile}");
    assert!(
        makefile.contains("\tKUBECTL=$(KUBECTL) $(RKB) edit --plugins helm\n"),
        "{makefile}"
    );

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
    for file in ["PROJECT", "Makefile"] {
        assert_eq!(
            std::fs::read_to_string(output.join(file)).unwrap(),
            std::fs::read_to_string(dir.join(file)).unwrap(),
            "{file}"
        );
    }
}
