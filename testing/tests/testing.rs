//! The test kit end to end: a `kube::Client` of a real API server (envtest), wrapped to
//! audit RBAC and inject faults. Each test works in a namespace of its own.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use rkb_testing::{self as testing, Fault, FaultKind, Faults, RbacAudit};

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The admin client of the shared envtest API server, and a fresh namespace.
async fn api_server() -> (kube::Client, String) {
    let env = testing::envtest::shared().await;
    (env.client(), env.create_namespace().await.unwrap())
}

#[tokio::test]
async fn injected_faults_surface_as_api_errors_and_then_clear() {
    let audit = RbacAudit::default();
    let faults = Faults::default()
        .fail(Fault::conflict().on_verb("create").times(1))
        .fail(Fault::server_error().on_verb("get").times(1))
        .fail(
            Fault::timeout(Duration::from_millis(10))
                .on_verb("list")
                .times(1),
        );
    let (client, namespace) = api_server().await;
    let client = testing::wrap(client, &audit, &faults);
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);

    let conflict = api
        .create(&PostParams::default(), &config_map("a"))
        .await
        .unwrap_err();
    assert!(
        matches!(&conflict, kube::Error::Api(s) if s.code == 409),
        "{conflict:?}"
    );
    api.create(&PostParams::default(), &config_map("a"))
        .await
        .unwrap();

    let server = api.get("a").await.unwrap_err();
    assert!(
        matches!(&server, kube::Error::Api(s) if s.code == 500),
        "{server:?}"
    );
    assert_eq!(
        api.get("a").await.unwrap().metadata.name.as_deref(),
        Some("a")
    );

    let timeout = api.list(&Default::default()).await.unwrap_err();
    assert!(matches!(timeout, kube::Error::Service(_)), "{timeout:?}");
    assert_eq!(api.list(&Default::default()).await.unwrap().items.len(), 1);

    let kinds: Vec<FaultKind> = faults
        .injected()
        .into_iter()
        .map(|(kind, _)| kind)
        .collect();
    assert_eq!(
        kinds,
        [
            FaultKind::Conflict,
            FaultKind::ServerError,
            FaultKind::Timeout(Duration::from_millis(10))
        ]
    );
    let role = "---
kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: manager-role}
rules:
- apiGroups: ['']
  resources: [configmaps]
  verbs: [create, get, list]
";
    audit.check_role_yaml(role).unwrap();
}

#[tokio::test]
async fn audit_fails_on_a_request_the_role_does_not_allow() {
    let audit = RbacAudit::default();
    let (client, namespace) = api_server().await;
    let client = testing::wrap(client, &audit, &Faults::default());
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);
    api.create(&PostParams::default(), &config_map("a"))
        .await
        .unwrap();
    api.delete("a", &Default::default()).await.unwrap();
    let role = "kind: ClusterRole
apiVersion: rbac.authorization.k8s.io/v1
metadata: {name: r}
rules:
- apiGroups: ['']
  resources: [configmaps]
  verbs: [create, watch]
";
    let report = audit.check_role_yaml(role).unwrap_err().to_string();
    assert!(
        report.contains(&format!(
            "missing rule: the reconciler made `delete core/configmaps in namespace {namespace} named a`"
        )),
        "{report}"
    );
    assert!(
        report.contains("excessive rule: the role allows `watch core/configmaps`"),
        "{report}"
    );
    audit.watches("", "configmaps");
    assert!(
        !audit
            .check_role_yaml(role)
            .unwrap_err()
            .to_string()
            .contains("excessive")
    );
}

#[tokio::test]
async fn server_side_apply_that_creates_needs_create_too() {
    use kube::api::{Patch, PatchParams};
    let audit = RbacAudit::default();
    let (client, namespace) = api_server().await;
    let client = testing::wrap(client, &audit, &Faults::default());
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let params = PatchParams::apply("test").force();
    api.patch("a", &params, &Patch::Apply(config_map("a")))
        .await
        .unwrap();
    let verbs: Vec<String> = audit.accesses().into_iter().map(|a| a.verb).collect();
    assert_eq!(
        verbs,
        ["create", "patch"],
        "the API server authorizes create for an apply that creates"
    );

    let existing = RbacAudit::default();
    let (client, namespace) = api_server().await;
    let client = testing::wrap(client, &existing, &Faults::default());
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);
    api.create(&PostParams::default(), &config_map("b"))
        .await
        .unwrap();
    api.patch("b", &params, &Patch::Apply(config_map("b")))
        .await
        .unwrap();
    let verbs: Vec<String> = existing.accesses().into_iter().map(|a| a.verb).collect();
    assert_eq!(
        verbs,
        ["create", "patch"],
        "create comes from the POST; the apply only patches"
    );
    assert_eq!(existing.accesses().len(), 2);
}

/// A create whose response is lost was applied all the same: the client sees a timeout,
/// yet the object exists and a retry meets 409 AlreadyExists; a plain timeout never
/// reaches the API server.
#[tokio::test]
async fn a_lost_response_hides_a_create_that_was_applied() {
    let env = testing::envtest::shared().await;
    let namespace = env.create_namespace().await.unwrap();
    let lost_response = Fault::response_lost(Duration::from_millis(10)).on_verb("create");
    let faults = Faults::default().fail(lost_response);
    let client = testing::wrap(env.client(), &RbacAudit::default(), &faults);
    let api: Api<ConfigMap> = Api::namespaced(client, &namespace);
    let unwrapped: Api<ConfigMap> = Api::namespaced(env.client(), &namespace);

    let lost = api
        .create(&PostParams::default(), &config_map("applied"))
        .await
        .unwrap_err();
    assert!(!matches!(lost, kube::Error::Api(_)), "{lost:?}");
    unwrapped
        .get("applied")
        .await
        .expect("the create was applied");
    let retried = api
        .create(&PostParams::default(), &config_map("applied"))
        .await
        .unwrap_err();
    assert!(
        matches!(&retried, kube::Error::Api(s) if s.code == 409),
        "{retried:?}"
    );

    let timeouts = Faults::default().fail(Fault::timeout(Duration::from_millis(10)));
    let client = testing::wrap(env.client(), &RbacAudit::default(), &timeouts);
    let timed_out = Api::<ConfigMap>::namespaced(client, &namespace)
        .create(&PostParams::default(), &config_map("never-sent"))
        .await
        .unwrap_err();
    assert!(!matches!(timed_out, kube::Error::Api(_)), "{timed_out:?}");
    let missing = unwrapped.get("never-sent").await.unwrap_err();
    assert!(
        matches!(&missing, kube::Error::Api(s) if s.code == 404),
        "{missing:?}"
    );
    let kinds = |faults: &Faults| -> Vec<FaultKind> {
        faults
            .injected()
            .into_iter()
            .map(|(kind, _)| kind)
            .collect()
    };
    assert_eq!(
        kinds(&faults),
        [FaultKind::ResponseLost(Duration::from_millis(10))]
    );
    assert_eq!(
        kinds(&timeouts),
        [FaultKind::Timeout(Duration::from_millis(10))]
    );
}
