//! Everything rkb generates meets a real kube-apiserver (rkb-envtest): the CRDs, samples
//! and `config/default` of the golden projects and all five examples.
//!
//! Several projects define the same CRD names (the golden Memcached and the example's),
//! so the tests take turns: one project's CRDs are on the server at a time.

use crate::common;

use std::path::{Path, PathBuf};

use kube::ResourceExt;
use rkb_envtest::Environment;
use tokio::sync::Mutex;

static ONE_PROJECT_AT_A_TIME: Mutex<()> = Mutex::const_new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn crd_files(project: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(project.join("config/crd/bases"))
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.retain(|f| f.extension().is_some_and(|e| e == "yaml"));
    files.sort();
    files
}

/// The project's CRDs, with any conversion webhook switched off (strategy `None`): nothing
/// serves it here, and the API server calls it even for objects of the storage version
/// (to convert their managed fields). runtime/tests/integration/webhooks.rs proves conversion against
/// a served webhook.
fn crds_without_conversion_webhooks(project: &Path) -> Vec<kube::api::DynamicObject> {
    let mut crds = Vec::new();
    for file in crd_files(project) {
        let text = std::fs::read_to_string(&file).unwrap();
        crds.extend(rkb_envtest::parse_yaml(&text).unwrap());
    }
    for crd in &mut crds {
        if crd.data["spec"]["conversion"]["strategy"] == "Webhook" {
            crd.data["spec"]["conversion"] = serde_json::json!({"strategy": "None"});
        }
    }
    crds
}

/// Whether `config/samples` lists any object (projects with only built-in kinds have none).
fn has_samples(project: &Path) -> bool {
    std::fs::read_to_string(project.join("config/samples/kustomization.yaml"))
        .unwrap()
        .lines()
        .any(|line| line.trim_start().starts_with("- "))
}

fn name(project: &Path) -> String {
    project.strip_prefix(repo()).unwrap().display().to_string()
}

/// Every CRD is created and becomes Established and served; every `config/samples`
/// object is then accepted (schema, defaults and CEL rules of the real server).
#[tokio::test]
async fn every_crd_is_established_and_every_sample_accepted() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let mut failures = Vec::new();
    let mut counts = (0, 0);
    for project in common::projects() {
        let _turn = ONE_PROJECT_AT_A_TIME.lock().await;
        let crds = crds_without_conversion_webhooks(&project);
        if let Err(e) = env.apply().objects(crds.clone()).await {
            failures.push(format!("{}: CRDs: {e}", name(&project)));
            continue;
        }
        counts.0 += crds.len();
        if !has_samples(&project) {
            continue; // only built-in kinds: kustomize refuses a kustomization with no resources
        }
        let namespace = env.create_namespace().await.unwrap();
        match env
            .apply()
            .namespace(&namespace)
            .kustomization(&project.join("config/samples"))
            .await
        {
            Ok(samples) => counts.1 += samples.len(),
            Err(e) => failures.push(format!("{}: samples: {e}", name(&project))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!(
        "{} CRDs established, {} samples accepted",
        counts.0, counts.1
    );
    // Two golden projects and three examples with CRDs, one sample each.
    assert!(counts.0 >= 5 && counts.1 >= 5, "{counts:?}");
}

/// `kubectl kustomize config/default` of every project passes a server-side dry run:
/// validation and admission of every object by the API server, nothing stored (but the
/// namespace, without which nothing namespaced can be checked).
#[tokio::test]
async fn every_config_default_passes_a_server_side_dry_run() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let mut failures = Vec::new();
    for project in common::projects() {
        let _turn = ONE_PROJECT_AT_A_TIME.lock().await;
        let objects = rkb_envtest::parse_yaml(&common::kustomize_default(&project)).unwrap();
        let namespaces: Vec<_> = objects
            .iter()
            .filter(|o| o.types.as_ref().is_some_and(|t| t.kind == "Namespace"))
            .cloned()
            .collect();
        assert!(!namespaces.is_empty(), "{}: no Namespace", name(&project));
        env.apply().objects(namespaces).await.unwrap();
        // cert-manager's Certificate and Issuer need its CRDs, which envtest does not
        // have; kubernetes_valid.rs checks how config/default wires them.
        let objects: Vec<_> = objects
            .into_iter()
            .filter(|o| {
                o.types
                    .as_ref()
                    .is_none_or(|t| !t.api_version.starts_with("cert-manager.io/"))
            })
            .collect();
        let count = objects.len();
        match env.apply().dry_run().objects(objects).await {
            Ok(checked) => assert_eq!(checked.len(), count),
            Err(e) => failures.push(format!("{}: {e}", name(&project))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same with every optional section of config/default switched on (the metrics
/// certificate, Prometheus verifying it, the network policies): the Deployment with the
/// certificate's volume and the NetworkPolicies go through the server's validation. The
/// server has no cert-manager or Prometheus Operator, so stand-in CRDs serve their kinds
/// (Certificate, Issuer, ServiceMonitor: namespaced, any spec): their group, version, kind,
/// scope and metadata are checked here, their fields by kubernetes_valid.rs.
#[tokio::test]
async fn every_config_default_with_every_section_on_passes_a_server_side_dry_run() {
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
    let mut failures = Vec::new();
    for project in common::projects() {
        let _turn = ONE_PROJECT_AT_A_TIME.lock().await;
        let on = common::all_sections_on(&project);
        let objects = rkb_envtest::parse_yaml(&common::kustomize_default(on.path())).unwrap();
        let (namespaces, objects): (Vec<_>, Vec<_>) = objects
            .into_iter()
            .partition(|o| o.types.as_ref().is_some_and(|t| t.kind == "Namespace"));
        env.apply().objects(namespaces).await.unwrap();
        let kinds: Vec<String> = objects
            .iter()
            .filter_map(|o| o.types.as_ref().map(|t| t.kind.clone()))
            .collect();
        for kind in ["Certificate", "Issuer", "ServiceMonitor", "NetworkPolicy"] {
            assert!(
                kinds.iter().any(|k| k == kind),
                "{}: no {kind} in {kinds:?}",
                name(&project)
            );
        }
        let count = objects.len();
        match env.apply().dry_run().objects(objects).await {
            Ok(checked) => assert_eq!(checked.len(), count),
            Err(e) => failures.push(format!("{}: {e}", name(&project))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The memcached example's CEL rule compiles (the CRD would be refused otherwise) and
/// the API server refuses an object that breaks it, with the rule's message.
#[tokio::test]
async fn the_memcached_example_cel_rule_refuses_a_privileged_port() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let project = repo().join("examples/memcached-operator");
    let _turn = ONE_PROJECT_AT_A_TIME.lock().await;
    env.apply().files(crd_files(&project)).await.unwrap();
    let namespace = env.create_namespace().await.unwrap();
    let memcached = |port: u16| {
        format!(
            "apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata: {{name: port-{port}}}\n\
             spec: {{size: 1, containerPort: {port}}}\n"
        )
    };
    let refused = env
        .apply()
        .namespace(&namespace)
        .yaml(&memcached(80))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("containerPort must be 1024 or higher"),
        "{refused}"
    );
    let accepted = env
        .apply()
        .namespace(&namespace)
        .yaml(&memcached(11311))
        .await
        .unwrap();
    assert_eq!(accepted[0].data["spec"]["containerPort"], 11311);
}

/// The step that failed in the BlueGreen source document: a plain client-side
/// `kubectl apply` of a CRD with two embedded PodSpecs. It stores the whole CRD in an
/// annotation, which the API server limits to 256 KiB; rkb's size policy measures that,
/// so the CRD fits with every level of its schema kept, and a wrong type deep inside a
/// PodSpec is still refused.
#[tokio::test]
async fn the_bluegreen_crd_installs_with_client_side_kubectl_apply() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let project = repo().join("examples/bluegreen");
    let _turn = ONE_PROJECT_AT_A_TIME.lock().await;
    let [crd] = crd_files(&project).try_into().unwrap();
    let applied = env
        .kubectl()
        .arg("apply")
        .arg("-f")
        .arg(&crd)
        .output()
        .expect("kubectl runs (bash .ci/install-tools installs it)");
    assert!(
        applied.status.success(),
        "kubectl apply failed: {}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let stored = kube::Api::<
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    >::all(env.client())
    .get("bluegreens.app.demo.kakao.com")
    .await
    .unwrap();
    let annotation = stored
        .annotations()
        .get("kubectl.kubernetes.io/last-applied-configuration")
        .expect("client-side apply keeps its annotation");
    println!("last-applied-configuration: {} bytes", annotation.len());
    assert!(annotation.len() > 64 * 1024, "the whole CRD, as JSON");

    // The limit is on that JSON: the same CRD padded to just over 256 KiB of it is refused.
    let mut oversize: serde_json::Value = serde_json::to_value(
        rkb_envtest::parse_yaml(&std::fs::read_to_string(&crd).unwrap()).unwrap()[0].clone(),
    )
    .unwrap();
    oversize["metadata"]["name"] = "bluegreens.oversize.demo.kakao.com".into();
    oversize["spec"]["group"] = "oversize.demo.kakao.com".into();
    let padding = 256 * 1024 + 1 - serde_json::to_string(&oversize).unwrap().len();
    oversize["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] =
        "x".repeat(padding).into();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_string(&oversize).unwrap()).unwrap();
    let refused = env
        .kubectl()
        .arg("apply")
        .arg("-f")
        .arg(file.path())
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "a CRD of 256 KiB + 1 byte of JSON is refused"
    );
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("metadata.annotations: Too long"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    wait_until_served(env, "app.demo.kakao.com/v1", "BlueGreen").await;
    let namespace = env.create_namespace().await.unwrap();
    let deep_type_error = "apiVersion: app.demo.kakao.com/v1\nkind: BlueGreen\nmetadata: {name: typo}\n\
        spec:\n  routeTo: Blue\n  blueSpec:\n    containers:\n    - name: app\n      image: nginx\n\
        \x20     securityContext: {capabilities: {add: [1]}, runAsUser: \"root\"}\n";
    let refused = env
        .apply()
        .namespace(&namespace)
        .yaml(deep_type_error)
        .await
        .unwrap_err()
        .to_string();
    // Containers are a list keyed by name (Kubernetes' own list-map semantics, which the
    // CRD carries), so the error names the container, not its index.
    assert!(
        refused.contains(r#"spec.blueSpec.containers[name="app"].securityContext.runAsUser"#),
        "{refused}"
    );
}

async fn wait_until_served(env: &Environment, api_version: &str, kind: &str) {
    let (group, version) = api_version.split_once('/').unwrap();
    let gvk = kube::api::GroupVersionKind::gvk(group, version, kind);
    for _ in 0..300 {
        if kube::discovery::pinned_kind(&env.client(), &gvk)
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{api_version} {kind} was never served");
}
