//! The launcher itself, against the control plane it starts.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::api::{ListParams, ObjectMeta, PostParams};
use kube::{Api, ResourceExt};

/// A CRD with a CEL rule and a status subresource: what only a real API server enforces.
const WIDGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.rkb.dev
spec:
  group: test.rkb.dev
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
            x-kubernetes-validations:
            - rule: "self.size <= 10"
              message: "size must be at most 10"
          status:
            type: object
            properties:
              ready: {type: boolean}
"#;

#[tokio::test]
async fn the_api_server_reports_the_pinned_kubernetes_version() {
    let env = rkb_envtest::shared().await;
    if !env.is_local() {
        return; // an existing cluster runs whatever version it runs
    }
    let version = env.client().apiserver_version().await.unwrap();
    assert_eq!(version.git_version, rkb_envtest::KUBERNETES_VERSION);
}

#[tokio::test]
async fn the_pinned_version_is_the_one_the_go_module_builds() {
    // The default release, which rkb's own tests run on.
    let go_mod = std::fs::read_to_string(format!(
        "{}/assets/releases/{}/go.mod",
        env!("CARGO_MANIFEST_DIR"),
        rkb_envtest::KUBERNETES_VERSION
    ))
    .expect("assets/releases/<KUBERNETES_VERSION>/go.mod");
    let pinned = format!("k8s.io/kubernetes {}", rkb_envtest::KUBERNETES_VERSION);
    assert!(
        go_mod.lines().any(|l| l.trim() == pinned),
        "assets/releases/*/go.mod must require {pinned}"
    );
    let staging = format!(
        "v0.{}",
        rkb_envtest::KUBERNETES_VERSION.trim_start_matches("v1.")
    );
    let replaces: Vec<&str> = go_mod
        .lines()
        .filter(|l| l.contains("=> k8s.io/"))
        .collect();
    assert_eq!(replaces.len(), 31, "one replace per staging module");
    assert!(
        replaces.iter().all(|l| l.ends_with(&staging)),
        "every staging module at {staging}"
    );
}

#[tokio::test]
async fn every_test_gets_a_namespace_of_its_own() {
    let env = rkb_envtest::shared().await;
    let (a, b) = (
        env.create_namespace().await.unwrap(),
        env.create_namespace().await.unwrap(),
    );
    assert_ne!(a, b);
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client(), &a);
    assert!(
        config_maps
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn crds_are_served_once_applied_and_cel_rules_are_enforced() {
    let env = rkb_envtest::shared().await;
    let namespace = env.create_namespace().await.unwrap();
    let applied = env
        .apply()
        .namespace(&namespace)
        .yaml(&format!(
            "{WIDGET_CRD}\n---\napiVersion: test.rkb.dev/v1\nkind: Widget\nmetadata: {{name: small}}\nspec: {{size: 3}}\n"
        ))
        .await
        .unwrap();
    assert_eq!(applied.len(), 2, "the CRD, then a Widget in the same call");

    let too_big =
        "apiVersion: test.rkb.dev/v1\nkind: Widget\nmetadata: {name: big}\nspec: {size: 11}\n";
    let error = env
        .apply()
        .namespace(&namespace)
        .yaml(too_big)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("size must be at most 10"),
        "{error}"
    );
    let below_minimum =
        "apiVersion: test.rkb.dev/v1\nkind: Widget\nmetadata: {name: zero}\nspec: {size: 0}\n";
    let error = env
        .apply()
        .namespace(&namespace)
        .dry_run()
        .yaml(below_minimum)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("should be greater than or equal to 1"),
        "{error}"
    );
}

#[tokio::test]
async fn a_service_account_gets_exactly_what_its_role_grants() {
    let env = rkb_envtest::shared().await;
    let namespace = env.create_namespace().await.unwrap();
    let client = env
        .service_account_client(&namespace, "reader")
        .await
        .unwrap();
    let as_reader: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);

    let denied = as_reader.list(&ListParams::default()).await.unwrap_err();
    assert!(
        matches!(&denied, kube::Error::Api(s) if s.code == 403 && s.message.contains("system:serviceaccount:")),
        "{denied}"
    );

    let role = Role {
        metadata: ObjectMeta {
            name: Some("read-config-maps".into()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["configmaps".into()]),
            verbs: vec!["list".into()],
            ..Default::default()
        }]),
    };
    let binding = RoleBinding {
        metadata: ObjectMeta {
            name: Some("reader".into()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Role".into(),
            name: "read-config-maps".into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: "reader".into(),
            namespace: Some(namespace.clone()),
            ..Default::default()
        }]),
    };
    let admin = env.client();
    Api::<Role>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(admin, &namespace)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    // The RBAC authorizer's informers see the new binding within moments.
    let deadline = Instant::now() + Duration::from_secs(10);
    while as_reader.list(&ListParams::default()).await.is_err() {
        assert!(Instant::now() < deadline, "the binding never took effect");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let create = as_reader
        .create(&PostParams::default(), &ConfigMap::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&create, kube::Error::Api(s) if s.code == 403),
        "list only: {create}"
    );
}

#[tokio::test]
async fn kubectl_talks_to_the_same_server() {
    let env = rkb_envtest::shared().await;
    let namespace = env.create_namespace().await.unwrap();
    let output = env
        .kubectl()
        .args([
            "create",
            "configmap",
            "from-kubectl",
            "-n",
            &namespace,
            "--from-literal=a=b",
        ])
        .output()
        .expect("kubectl runs (install it, or set KUBECTL)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let made = Api::<ConfigMap>::namespaced(env.client(), &namespace)
        .get("from-kubectl")
        .await
        .unwrap();
    assert_eq!(made.name_any(), "from-kubectl");
}

/// The control plane, kube-controller-manager included, dies with the test binary however
/// it ends: this test runs a copy of this binary that starts one, and ends it three ways.
#[test]
fn the_control_plane_dies_with_the_test_binary() {
    if std::env::var_os("USE_EXISTING_CLUSTER").is_some() {
        return;
    }
    let ends =
        ["exit", "panic", "sigkill"].map(|end| std::thread::spawn(move || (end, child_pids(end))));
    for handle in ends {
        let (end, pids) = handle.join().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        for pid in pids {
            while is_running(pid) {
                assert!(
                    Instant::now() < deadline,
                    "{end}: process {pid} outlived the test binary"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Runs [`start_then_end`] in a child test binary and returns the control plane's PIDs.
fn child_pids(end: &str) -> Vec<u32> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "start_then_end",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RKB_ENVTEST_END", end)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut pids = Vec::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        // The harness prints `test start_then_end ... ` before the test's own output.
        if let Some((_, rest)) = line.split_once("envtest-pids ") {
            pids = rest.split(' ').map(|p| p.parse().unwrap()).collect();
            break;
        }
    }
    assert_eq!(pids.len(), 3, "{end}: the child printed no PIDs");
    assert!(
        pids.iter().all(|&pid| is_running(pid)),
        "{end}: the control plane runs"
    );
    // The child ends once its stdin closes: not before the check above.
    drop(child.stdin.take());
    if end == "sigkill" {
        child.kill().unwrap();
    }
    child.wait().unwrap();
    pids
}

#[tokio::test]
#[ignore = "run by the_control_plane_dies_with_the_test_binary"]
async fn start_then_end() {
    let env = rkb_envtest::shared_with_controller_manager().await;
    let (api, etcd) = env.process_ids().unwrap();
    let manager = env.controller_manager_process_id().unwrap();
    println!("envtest-pids {api} {etcd} {manager}");
    // Until the parent has seen the control plane run (it closes stdin).
    tokio::task::spawn_blocking(|| std::io::stdin().read_line(&mut String::new()))
        .await
        .unwrap()
        .unwrap();
    match std::env::var("RKB_ENVTEST_END").as_deref() {
        Ok("panic") => panic!("ending by panic"),
        Ok("sigkill") => tokio::time::sleep(Duration::from_secs(600)).await,
        _ => {}
    }
}

/// Alive and not a zombie waiting for its parent to reap it.
fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// `operator_client` applies only the RBAC of a kustomization and acts as its
/// ServiceAccount, with exactly the rights its roles grant.
#[tokio::test]
async fn the_operator_client_has_exactly_the_rights_of_its_config() {
    let env = rkb_envtest::shared().await;
    let suffix = &env.create_namespace().await.unwrap()["rkb-test-".len()..];
    let system = format!("operator-{suffix}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        "resources: [rbac.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("rbac.yaml"),
        format!(
            r#"apiVersion: v1
kind: Namespace
metadata: {{name: {system}}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: controller-manager, namespace: {system}}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {{name: {system}-manager}}
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {{name: {system}-manager}}
roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {system}-manager}}
subjects: [{{kind: ServiceAccount, name: controller-manager, namespace: {system}}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: not-rbac, namespace: {system}}}
"#
        ),
    )
    .unwrap();
    let operator = env.operator_client(dir.path()).await.unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(operator, "default");
    config_maps.list(&ListParams::default()).await.unwrap();
    let denied = config_maps
        .create(&PostParams::default(), &ConfigMap::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&denied, kube::Error::Api(s) if s.code == 403),
        "{denied}"
    );
    let only_rbac = Api::<ConfigMap>::namespaced(env.client(), &system)
        .get_opt("not-rbac")
        .await
        .unwrap();
    assert!(
        only_rbac.is_none(),
        "objects other than RBAC are not applied"
    );
}

/// With kube-controller-manager: a dependent is deleted with its owner (the garbage
/// collector, background propagation), a namespace finishes deleting (the namespace
/// controller empties it), and a Deployment gets a ReplicaSet and Pods. The plane of
/// [`rkb_envtest::shared`] runs none of it: there the dependent and the namespace stay.
#[tokio::test]
async fn the_controller_manager_collects_garbage_and_deletes_namespaces() {
    use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kube::api::DeleteParams;

    async fn owner_and_dependent(env: &rkb_envtest::Environment) -> (Api<ConfigMap>, String) {
        let namespace = env.create_namespace().await.unwrap();
        let maps = Api::<ConfigMap>::namespaced(env.client(), &namespace);
        let owner = ConfigMap {
            metadata: ObjectMeta {
                name: Some("owner".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let owner = maps.create(&PostParams::default(), &owner).await.unwrap();
        let dependent = ConfigMap {
            metadata: ObjectMeta {
                name: Some("dependent".into()),
                owner_references: Some(vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    name: "owner".into(),
                    uid: owner.uid().unwrap(),
                    ..Default::default()
                }]),
                ..Default::default()
            },
            ..Default::default()
        };
        maps.create(&PostParams::default(), &dependent)
            .await
            .unwrap();
        maps.delete("owner", &DeleteParams::default())
            .await
            .unwrap();
        (maps, namespace)
    }
    async fn until(what: &str, mut done: impl AsyncFnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done().await {
            assert!(Instant::now() < deadline, "not within 60 s: {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    let env = rkb_envtest::shared_with_controller_manager().await;
    let (maps, namespace) = owner_and_dependent(env).await;
    until("the dependent collected", async || {
        maps.get_opt("dependent").await.unwrap().is_none()
    })
    .await;

    let deployments = Api::<Deployment>::namespaced(env.client(), &namespace);
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let sets = Api::<ReplicaSet>::namespaced(env.client(), &namespace);
    let pods = Api::<Pod>::namespaced(env.client(), &namespace);
    until("a ReplicaSet with two Pods", async || {
        let lp = ListParams::default();
        sets.list(&lp).await.unwrap().items.len() == 1
            && pods.list(&lp).await.unwrap().items.len() == 2
    })
    .await;

    let namespaces = Api::<Namespace>::all(env.client());
    namespaces
        .delete(&namespace, &DeleteParams::default())
        .await
        .unwrap();
    until("the namespace gone", async || {
        namespaces.get_opt(&namespace).await.unwrap().is_none()
    })
    .await;

    // Where no kube-controller-manager runs, both stay.
    let plain = rkb_envtest::shared().await;
    let (maps, namespace) = owner_and_dependent(plain).await;
    Api::<Namespace>::all(plain.client())
        .delete(&namespace, &DeleteParams::default())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(maps.get_opt("dependent").await.unwrap().is_some());
    let left = Api::<Namespace>::all(plain.client()).get(&namespace).await;
    assert!(left.unwrap().metadata.deletion_timestamp.is_some());
}
