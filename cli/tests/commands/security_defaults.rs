//! Security defaults of every generated operator (golden projects and examples), checked
//! on what `make deploy` applies (`kubectl kustomize config/default`) and on the Dockerfile:
//! non-root, read-only root filesystem, no privilege escalation, all capabilities dropped,
//! seccomp, restricted Pod Security, probes and limits, least-privilege RBAC without
//! wildcards, and metrics served over HTTPS behind TokenReview/SubjectAccessReview roles.

use crate::common;

use serde::Deserialize;
use serde_yaml_ng::Value;

fn objects(project: &std::path::Path) -> Vec<Value> {
    let rendered = common::kustomize_default(project);
    serde_yaml_ng::Deserializer::from_str(&rendered)
        .map(|doc| Value::deserialize(doc).unwrap())
        .collect()
}

fn kind(object: &Value) -> &str {
    object["kind"].as_str().unwrap_or_default()
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_sequence()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// As generated, and with every optional section of config/default switched on (the
/// metrics certificate's volume, Prometheus, the network policies): the same lockdown.
#[test]
fn manager_pods_are_locked_down() {
    let variants = common::projects().into_iter().flat_map(|project| {
        let on = common::all_sections_on(&project);
        let switched_on = objects(on.path());
        [
            (project.display().to_string(), objects(&project)),
            (
                format!("{} (every section on)", project.display()),
                switched_on,
            ),
        ]
    });
    for (at, objects) in variants {
        let deployment = objects
            .iter()
            .find(|o| kind(o) == "Deployment")
            .expect("a manager Deployment");
        let pod = &deployment["spec"]["template"]["spec"];
        assert_eq!(
            pod["securityContext"]["runAsNonRoot"],
            Value::Bool(true),
            "{at}: pod runAsNonRoot"
        );
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"].as_str(),
            Some("RuntimeDefault"),
            "{at}"
        );
        for host in ["hostNetwork", "hostPID", "hostIPC"] {
            assert!(
                pod[host].is_null() || pod[host] == Value::Bool(false),
                "{at}: {host}"
            );
        }
        for container in pod["containers"].as_sequence().unwrap() {
            let security = &container["securityContext"];
            assert_eq!(
                security["allowPrivilegeEscalation"],
                Value::Bool(false),
                "{at}"
            );
            assert_eq!(
                security["readOnlyRootFilesystem"],
                Value::Bool(true),
                "{at}"
            );
            assert_eq!(security["runAsNonRoot"], Value::Bool(true), "{at}");
            assert!(
                security["privileged"].is_null() || security["privileged"] == Value::Bool(false),
                "{at}"
            );
            assert_eq!(
                strings(&security["capabilities"]["drop"]),
                ["ALL"],
                "{at}: drop ALL"
            );
            assert!(
                security["capabilities"]["add"].is_null(),
                "{at}: no added capabilities"
            );
            for bound in ["limits", "requests"] {
                for resource in ["cpu", "memory"] {
                    assert!(
                        !container["resources"][bound][resource].is_null(),
                        "{at}: {bound}.{resource}"
                    );
                }
            }
            assert_eq!(
                container["livenessProbe"]["httpGet"]["path"].as_str(),
                Some("/healthz"),
                "{at}"
            );
            assert_eq!(
                container["readinessProbe"]["httpGet"]["path"].as_str(),
                Some("/readyz"),
                "{at}"
            );
            let args = strings(&container["args"]);
            for arg in [
                "--leader-elect",
                "--health-probe-bind-address=:8081",
                "--metrics-bind-address=:8443",
            ] {
                assert!(
                    args.contains(&arg),
                    "{at}: manager args lack {arg}: {args:?}"
                );
            }
        }
        let namespace = objects
            .iter()
            .find(|o| kind(o) == "Namespace")
            .expect("a Namespace");
        assert_eq!(
            namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"].as_str(),
            Some("restricted"),
            "{at}"
        );
    }
}

#[test]
fn rbac_is_least_privilege() {
    for project in common::projects() {
        let at = project.display();
        let objects = objects(&project);
        for role in objects
            .iter()
            .filter(|o| matches!(kind(o), "Role" | "ClusterRole"))
        {
            for rule in role["rules"].as_sequence().into_iter().flatten() {
                for field in [
                    "apiGroups",
                    "resources",
                    "verbs",
                    "nonResourceURLs",
                    "resourceNames",
                ] {
                    assert!(
                        !strings(&rule[field]).iter().any(|v| v.contains('*')),
                        "{at}: {} {} grants a wildcard in {field}",
                        kind(role),
                        name(role)
                    );
                }
            }
        }
        let find = |suffix: &str| {
            objects
                .iter()
                .find(|o| name(o).ends_with(suffix) && matches!(kind(o), "Role" | "ClusterRole"))
                .unwrap_or_else(|| panic!("{at}: no role *{suffix}"))
        };
        let leader = find("leader-election-role");
        assert_eq!(
            kind(leader),
            "Role",
            "{at}: leader election must be namespaced"
        );
        // Exactly what rkb_runtime's leader election requests (manager/leader.rs).
        let rules = leader["rules"].as_sequence().unwrap();
        assert_eq!(rules.len(), 1, "{at}: {rules:?}");
        assert_eq!(
            strings(&rules[0]["apiGroups"]),
            ["coordination.k8s.io"],
            "{at}"
        );
        assert_eq!(strings(&rules[0]["resources"]), ["leases"], "{at}");
        assert_eq!(
            strings(&rules[0]["verbs"]),
            ["get", "create", "update"],
            "{at}"
        );

        let auth = find("metrics-auth-role");
        for rule in auth["rules"].as_sequence().unwrap() {
            assert!(
                strings(&rule["resources"]).iter().all(|r| [
                    "tokenreviews",
                    "subjectaccessreviews"
                ]
                .contains(r))
            );
            assert_eq!(strings(&rule["verbs"]), ["create"], "{at}");
        }
        let reader = find("metrics-reader");
        let rules = reader["rules"].as_sequence().unwrap();
        assert_eq!(rules.len(), 1, "{at}");
        assert_eq!(strings(&rules[0]["nonResourceURLs"]), ["/metrics"], "{at}");
        assert_eq!(strings(&rules[0]["verbs"]), ["get"], "{at}");
    }
}

/// [SHARDING] switched on: every replica runs with --sharding instead of --leader-elect,
/// three of them, and a Role grants the shard Leases exactly the requests rkb_runtime's
/// sharding makes (shard/membership.rs), in the manager's namespace only. As generated,
/// none of it.
#[test]
fn sharding_switches_every_replica_on_with_a_role_for_leases_only() {
    for project in common::projects() {
        let at = project.display();
        assert!(
            !objects(&project)
                .iter()
                .any(|o| name(o).ends_with("shard-role")),
            "{at}: sharding is off as generated"
        );
        let on = common::sharding_on(&project);
        let objects = objects(on.path());
        let deployment = objects
            .iter()
            .find(|o| kind(o) == "Deployment")
            .expect("a manager Deployment");
        assert_eq!(deployment["spec"]["replicas"], Value::from(3), "{at}");
        let args = strings(&deployment["spec"]["template"]["spec"]["containers"][0]["args"]);
        assert!(args.contains(&"--sharding"), "{at}: {args:?}");
        assert!(!args.contains(&"--leader-elect"), "{at}: {args:?}");

        let role = objects
            .iter()
            .find(|o| name(o).ends_with("-shard-role"))
            .unwrap_or_else(|| panic!("{at}: no shard Role"));
        assert_eq!(kind(role), "Role", "{at}: the Leases are namespaced");
        let rules = role["rules"].as_sequence().unwrap();
        assert_eq!(rules.len(), 1, "{at}: {rules:?}");
        assert_eq!(strings(&rules[0]["apiGroups"]), ["coordination.k8s.io"]);
        assert_eq!(strings(&rules[0]["resources"]), ["leases"], "{at}");
        assert_eq!(
            strings(&rules[0]["verbs"]),
            ["create", "delete", "get", "list", "update"],
            "{at}"
        );
        let binding = objects
            .iter()
            .find(|o| kind(o) == "RoleBinding" && name(o).ends_with("-shard-rolebinding"))
            .unwrap_or_else(|| panic!("{at}: no shard RoleBinding"));
        assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"], "{at}");
        assert_eq!(
            binding["subjects"][0]["name"].as_str().unwrap_or_default(),
            deployment["spec"]["template"]["spec"]["serviceAccountName"]
                .as_str()
                .unwrap_or_default(),
            "{at}: bound to the manager's service account"
        );
    }
}

#[test]
fn metrics_are_served_over_https_and_no_optional_crd_kinds_are_deployed() {
    for project in common::projects() {
        let at = project.display();
        let objects = objects(&project);
        let service = objects
            .iter()
            .find(|o| kind(o) == "Service" && name(o).ends_with("metrics-service"))
            .unwrap_or_else(|| panic!("{at}: no metrics Service"));
        let port = &service["spec"]["ports"][0];
        assert_eq!(
            (port["port"].as_u64(), port["name"].as_str()),
            (Some(8443), Some("https")),
            "{at}"
        );
        assert!(
            !objects.iter().any(|o| kind(o) == "ServiceMonitor"),
            "{at}: ServiceMonitor needs prometheus-operator"
        );
    }
}

#[test]
fn images_run_as_an_unprivileged_user_without_a_shell() {
    for project in common::projects() {
        let dockerfile = std::fs::read_to_string(project.join("Dockerfile")).unwrap();
        let final_stage = dockerfile.rsplit("\nFROM ").next().unwrap();
        assert!(
            final_stage.starts_with("gcr.io/distroless/"),
            "{}: final stage {final_stage:?}",
            project.display()
        );
        let user = final_stage
            .lines()
            .find_map(|l| l.strip_prefix("USER "))
            .expect("a USER line");
        let uid: u32 = user
            .split(':')
            .next()
            .unwrap()
            .parse()
            .expect("a numeric user, so runAsNonRoot can verify it");
        assert_ne!(uid, 0, "{}", project.display());
    }
}
