//! Namespace-scoped operators: `rkb edit --namespaced` (at the end), and where
//! `#[rbac(namespace = "...")]` rules deploy: the golden memcached project's `config/`,
//! with roles rendered by `make manifests` for rules in two other namespaces and in the
//! manager's own (`system`), builds with kustomize, passes the official schemas and, applied
//! to a real API server, grants the manager exactly those rules in exactly those namespaces.
//!
//! Before: every Role went to `config/rbac/role.yaml`, without a RoleBinding, and
//! `config/default`'s namespace transformer moved them all into the manager's namespace
//! (two of them made `kubectl kustomize config/default` fail with an ID conflict).

use crate::common;

use std::path::Path;

use k8s_openapi::api::authorization::v1::ResourceAttributes;
use kube::ResourceExt;
use kube::api::DynamicObject;
use rkb_envtest::Environment;
use rkb_manifests::Manifests;
use rkb_manifests::manifests::NAMESPACED_RBAC_DIR;
use rkb_manifests::rbac::Rule;

/// The manager's ServiceAccount as config/default names it: (namespace, name).
const MANAGER: (&str, &str) = (
    "memcached-operator-system",
    "memcached-operator-controller-manager",
);

fn rule(resource: &str, verb: &str, namespace: &str) -> Rule {
    Rule {
        api_groups: vec![String::new()],
        resources: vec![resource.into()],
        verbs: vec![verb.into()],
        namespace: Some(namespace.into()),
        ..Rule::default()
    }
}

/// The golden memcached project's `config/`, with the roles `make manifests` renders for
/// rules in `team-a`, `team-b` and the manager's own namespace.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/project-memcached");
    let copied = common::tool(
        "cp",
        &["-r", golden.join("config").to_str().unwrap(), "."],
        dir.path(),
    );
    assert!(copied.status.success());
    let rules = vec![
        rule("configmaps", "get", "team-a"),
        rule("secrets", "list", "team-b"),
        rule("configmaps", "watch", "system"),
    ];
    // Only the role files: the rendered CRDs (none here) are not the point.
    for (rel, content) in Manifests::new(vec![], vec![rules]).render().unwrap() {
        if rel.starts_with("config/rbac") || rel.starts_with(NAMESPACED_RBAC_DIR) {
            std::fs::create_dir_all(dir.path().join(&rel).parent().unwrap()).unwrap();
            std::fs::write(dir.path().join(&rel), content).unwrap();
        }
    }
    dir
}

fn objects(yaml: &str) -> Vec<DynamicObject> {
    rkb_envtest::parse_yaml(yaml).unwrap()
}

fn of_kind<'a>(objects: &'a [DynamicObject], kind: &str) -> Vec<&'a DynamicObject> {
    objects
        .iter()
        .filter(|o| o.types.as_ref().is_some_and(|t| t.kind == kind))
        .collect()
}

/// (namespace, name) of each object, sorted.
fn placed(objects: &[&DynamicObject]) -> Vec<(String, String)> {
    let mut placed: Vec<_> = objects
        .iter()
        .map(|o| (o.namespace().unwrap_or_default(), o.name_any()))
        .collect();
    placed.sort();
    placed
}

#[test]
fn roles_in_other_namespaces_stay_there_with_their_bindings() {
    let project = project();
    let role = |ns: &str| (ns.to_owned(), "memcached-operator-manager-role".to_owned());
    let binding = |ns: &str| {
        (
            ns.to_owned(),
            "memcached-operator-manager-rolebinding".to_owned(),
        )
    };
    let leader = |ns: &str, name: &str| (ns.to_owned(), format!("memcached-operator-{name}"));

    // config/default: the manager, with the Role in its own namespace only.
    let default = objects(&common::kustomize_default(project.path()));
    let own = "memcached-operator-system";
    assert_eq!(
        placed(&of_kind(&default, "Role")),
        [leader(own, "leader-election-role"), role(own)]
    );

    // The overlay `make deploy` applies: the same, plus the Roles in team-a and team-b.
    let deployed_yaml = common::kustomize(project.path(), NAMESPACED_RBAC_DIR);
    let deployed = objects(&deployed_yaml);
    assert_eq!(deployed.len(), default.len() + 4);
    assert_eq!(
        placed(&of_kind(&deployed, "Role")),
        [
            leader(own, "leader-election-role"),
            role(own),
            role("team-a"),
            role("team-b")
        ]
    );
    let bindings = of_kind(&deployed, "RoleBinding");
    assert_eq!(
        placed(&bindings),
        [
            leader(own, "leader-election-rolebinding"),
            binding(own),
            binding("team-a"),
            binding("team-b")
        ]
    );
    for binding in &bindings {
        let data = &binding.data;
        assert_eq!(data["roleRef"]["kind"], "Role", "{}", binding.name_any());
        assert_eq!(
            data["subjects"][0]["name"],
            "memcached-operator-controller-manager"
        );
        assert_eq!(data["subjects"][0]["namespace"], own);
    }
    assert_eq!(
        bindings
            .iter()
            .filter(|b| b.data["roleRef"]["name"] == "memcached-operator-manager-role")
            .count(),
        3
    );

    // Every object passes the official schemas.
    let rendered = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(rendered.path(), &deployed_yaml).unwrap();
    common::kubernetes_validate(rendered.path(), project.path());
}

/// Whether the manager may `verb` `resource` (`<plural>.<group>`, or a core plural) in
/// `namespace`, as the API server decides.
async fn allowed(env: &Environment, verb: &str, resource: &str, namespace: &str) -> bool {
    let (group, resource) = resource
        .split_once('.')
        .map_or(("", resource), |(r, g)| (g, r));
    let attributes = ResourceAttributes {
        group: Some(group.into()),
        resource: Some(resource.into()),
        verb: Some(verb.into()),
        namespace: Some(namespace.into()),
        ..Default::default()
    };
    env.service_account_may(MANAGER.0, MANAGER.1, attributes)
        .await
        .unwrap()
}

/// Applied to a real API server, the overlay grants the manager each namespaced rule in
/// its namespace and nowhere else.
#[tokio::test]
async fn the_api_server_grants_namespaced_rules_where_they_are_declared() {
    let project = project();
    let env = rkb_envtest::shared_by(module_path!()).await;
    let deployed = objects(&common::kustomize(project.path(), NAMESPACED_RBAC_DIR));
    let rbac = ["Namespace", "ServiceAccount", "Role", "RoleBinding"];
    let (mut namespaces, rbac): (Vec<_>, Vec<_>) = deployed
        .into_iter()
        .filter(|o| {
            o.types
                .as_ref()
                .is_some_and(|t| rbac.contains(&t.kind.as_str()))
        })
        .partition(|o| o.types.as_ref().is_some_and(|t| t.kind == "Namespace"));
    for name in ["team-a", "team-b"] {
        let namespace = format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n");
        namespaces.extend(objects(&namespace));
    }
    env.apply().objects(namespaces).await.unwrap();
    env.apply().objects(rbac).await.unwrap();

    let expected = [
        ("get", "configmaps", "team-a", true),
        ("get", "configmaps", "team-b", false),
        ("list", "secrets", "team-b", true),
        ("list", "secrets", "team-a", false),
        ("watch", "configmaps", "memcached-operator-system", true),
        ("watch", "configmaps", "team-a", false),
        (
            "get",
            "leases.coordination.k8s.io",
            "memcached-operator-system",
            true,
        ),
        ("get", "configmaps", "default", false),
    ];
    // The authorizer's cache may lag the RoleBindings a little.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let mut decided = Vec::new();
        for (verb, resource, namespace, _) in expected {
            decided.push((
                verb,
                resource,
                namespace,
                allowed(env, verb, resource, namespace).await,
            ));
        }
        if decided == expected {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{decided:?}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// `init` and then `create api` (a controller, an `--image` one) and `create webhook`.
fn scaffold_for_edit(dir: &Path, init: &[&str]) {
    common::init_demo(dir, init);
    let api = ["create", "api", "--group", "cache", "--version", "v1alpha1"];
    common::rkb_in(dir, &[&api[..], &["--kind", "Memcached"]].concat());
    common::rkb_in(
        dir,
        &[&api[..], &["--kind", "Store", "--image", "nginx:1.27"]].concat(),
    );
    let webhook = [
        "create",
        "webhook",
        "--group",
        "cache",
        "--version",
        "v1alpha1",
    ];
    common::rkb_in(
        dir,
        &[&webhook[..], &["--kind", "Memcached", "--defaulting"]].concat(),
    );
}

/// The manager container's environment, by name (the order of `env:` does not count).
fn manager_env(dir: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("config/manager/manager.yaml")).unwrap();
    let deployment = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| <serde_json::Value as serde::Deserialize>::deserialize(d).unwrap())
        .find(|d| d["kind"] == "Deployment")
        .unwrap();
    deployment["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_owned(), e.clone()))
        .collect()
}

/// kubebuilder's `edit --namespaced`: a cluster-wide project switched is what `init
/// --namespaced` and the same commands make (its manager's environment in another order),
/// controller tests included; switched back, it is byte for byte what it was.
#[test]
fn edit_namespaced_switches_a_project_both_ways() {
    let cert_manager = ["--webhook-certs", "cert-manager"];
    let (switched, made) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    scaffold_for_edit(switched.path(), &cert_manager);
    scaffold_for_edit(
        made.path(),
        &[&cert_manager[..], &["--namespaced"]].concat(),
    );
    let before = common::files(switched.path());

    let report = common::rkb_in(switched.path(), &["edit", "--namespaced"]);
    assert!(report.contains("Next: `make manifests`"), "{report}");
    let (now, wanted) = (common::files(switched.path()), common::files(made.path()));
    let manager = Path::new("config/manager/manager.yaml");
    let differing: Vec<_> = now
        .keys()
        .chain(wanted.keys())
        .filter(|p| now.get(*p) != wanted.get(*p) && p.as_path() != manager)
        .collect();
    assert!(differing.is_empty(), "{differing:?}");
    assert_eq!(manager_env(switched.path()), manager_env(made.path()));
    for test in [
        "src/controller/memcached.rs",
        "src/controller/store/tests.rs",
    ] {
        let text = String::from_utf8(now[Path::new(test)].clone()).unwrap();
        assert!(text.contains("operator_client_in_namespace"), "{test}");
    }

    common::rkb_in(switched.path(), &["edit", "--namespaced=false"]);
    assert_eq!(common::files(switched.path()), before);
}

/// What `edit --namespaced` refuses, each time changing nothing: webhooks whose certificates
/// the manager makes itself (it could not, namespace-scoped), and a part it rewrites that
/// is not as rkb wrote it. A project without webhooks takes cert-manager for later ones.
#[test]
fn edit_namespaced_refuses_what_it_cannot_switch() {
    let dir = tempfile::tempdir().unwrap();
    scaffold_for_edit(dir.path(), &["--webhook-certs", "self"]);
    let before = common::files(dir.path());
    let refusal = common::rkb(&[
        "edit",
        "--namespaced",
        "--dir",
        dir.path().to_str().unwrap(),
    ])
    .unwrap_err();
    assert!(
        refusal.contains("rkb edit --webhook-certs cert-manager"),
        "{refusal}"
    );
    assert_eq!(common::files(dir.path()), before);

    common::rkb_in(dir.path(), &["edit", "--webhook-certs", "cert-manager"]);
    let lib = dir.path().join("api/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(
        &lib,
        text.replace(".webhooks(webhooks)", ".webhooks(webhooks).clone()"),
    )
    .unwrap();
    let before = common::files(dir.path());
    let refusal = common::rkb(&[
        "edit",
        "--namespaced",
        "--dir",
        dir.path().to_str().unwrap(),
    ])
    .unwrap_err();
    assert!(
        refusal.starts_with("api/src/lib.rs does not hold"),
        "{refusal}"
    );
    assert!(refusal.contains(".namespaced()"), "{refusal}");
    assert_eq!(common::files(dir.path()), before);

    let bare = tempfile::tempdir().unwrap();
    common::init_demo(bare.path(), &[]);
    let report = common::rkb_in(bare.path(), &["edit", "--namespaced"]);
    assert!(
        report.contains("webhookCerts is now cert-manager"),
        "{report}"
    );
    let project = std::fs::read_to_string(bare.path().join("PROJECT")).unwrap();
    assert!(project.contains("namespaced: true"), "{project}");
    assert!(project.contains("webhookCerts: cert-manager"), "{project}");
}
