//! A manager restricted to some namespaces (`--watch-namespace`, `WATCH_NAMESPACE`) on a
//! real API server (envtest), running as a ServiceAccount whose only permissions are Roles
//! in those namespaces: the API server's authorizer refuses it a cluster-wide watch, and
//! its controller still reconciles every object of the watched namespaces and none of the
//! others.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::api::{ListParams, ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt as _};
use rkb_manager::cache::{self, Namespaces};
use rkb_manager::manager::{Args, Context, Manager, Runnable};

const WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

/// `namespace/name` of every ConfigMap reconciled.
type Seen = Arc<Mutex<BTreeSet<String>>>;

fn config_map_controller(seen: &Seen) -> Runnable {
    let seen = seen.clone();
    Runnable::new("config-maps", move |ctx: Context| async move {
        let client = ctx.client();
        let controller = cache::controller(
            ctx.namespaces().apis::<ConfigMap>(&client),
            watcher::Config::default(),
        );
        let reconcile = move |object: Arc<ConfigMap>, _: Arc<()>| {
            let key = format!("{}/{}", object.namespace().unwrap(), object.name_any());
            seen.lock().unwrap().insert(key);
            async { Ok::<_, Never>(Action::await_change()) }
        };
        let error_policy = |_: Arc<ConfigMap>, _: &Never, _: Arc<()>| Action::await_change();
        ctx.run(controller, reconcile, error_policy, Arc::new(()))
            .await
    })
}

/// Lets the ServiceAccount `operator/op` list and watch ConfigMaps in `namespace`, and
/// nothing else there.
async fn allow(admin: &Client, namespace: &str, operator: &str) {
    let role = Role {
        metadata: ObjectMeta {
            name: Some("op".into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["configmaps".into()]),
            verbs: vec!["list".into(), "watch".into()],
            ..PolicyRule::default()
        }]),
    };
    Api::<Role>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding = RoleBinding {
        metadata: ObjectMeta {
            name: Some("op".into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Role".into(),
            name: "op".into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: "op".into(),
            namespace: Some(operator.into()),
            ..Subject::default()
        }]),
    };
    Api::<RoleBinding>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

async fn create_config_map(admin: &Client, namespace: &str, name: &str) {
    let object = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(admin.clone(), namespace)
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
}

async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_manager_with_roles_in_its_namespaces_watches_those_and_no_other() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let (team_a, team_b, other) = (
        env.create_namespace().await.unwrap(),
        env.create_namespace().await.unwrap(),
        env.create_namespace().await.unwrap(),
    );
    let operator = env.service_account_client(&team_a, "op").await.unwrap();
    allow(&admin, &team_a, &team_a).await;
    allow(&admin, &team_b, &team_a).await;
    create_config_map(&admin, &team_a, "before").await;
    create_config_map(&admin, &other, "outside").await;

    // The real authorizer: the operator may list in its namespaces (once RBAC has caught
    // up), and never across the cluster nor in another namespace.
    let deadline = Instant::now() + WAIT;
    while Api::<ConfigMap>::namespaced(operator.clone(), &team_b)
        .list(&ListParams::default())
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "the Role in {team_b} never took effect"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for refused in [
        Api::<ConfigMap>::all(operator.clone()),
        Api::<ConfigMap>::namespaced(operator.clone(), &other),
    ] {
        match refused.list(&ListParams::default()).await {
            Err(kube::Error::Api(status)) => assert_eq!(status.code, 403, "{status:?}"),
            unexpected => panic!("{} listed: {unexpected:?}", refused.resource_url()),
        }
    }

    // The controllers' check at start: allowed in its namespaces, refused by name elsewhere.
    let watched = Namespaces::only([team_a.clone(), team_b.clone()]);
    let hint = "is the manager allowed to?";
    watched
        .apis::<ConfigMap>(&operator)
        .check_listable("configmaps", hint)
        .await
        .unwrap();
    let outside = Namespaces::only([team_a.clone(), other.clone()]);
    let refusal = outside
        .apis::<ConfigMap>(&operator)
        .check_listable("configmaps", hint)
        .await
        .unwrap_err();
    let message = format!("{refusal:#}");
    assert!(
        message.starts_with(&format!("cannot list configmaps in {other}: {hint}: "))
            && message.contains("forbidden"),
        "{message}"
    );

    let args = Args::parse_from([
        "manager",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
        &format!("--watch-namespace={team_a},{team_b}"),
    ]);
    let manager = Manager::new("watch-namespace-test", operator, args);
    let shutdown = manager.shutdown_token();
    let seen = Seen::default();
    let running = tokio::spawn(manager.run([config_map_controller(&seen)]));

    eventually("the ConfigMap listed at start is reconciled", || {
        seen.lock().unwrap().contains(&format!("{team_a}/before"))
    })
    .await;
    create_config_map(&admin, &other, "outside-later").await;
    create_config_map(&admin, &team_b, "after").await;
    create_config_map(&admin, &team_a, "after").await;
    eventually("new ConfigMaps in both namespaces are reconciled", || {
        let seen = seen.lock().unwrap();
        seen.contains(&format!("{team_a}/after")) && seen.contains(&format!("{team_b}/after"))
    })
    .await;
    assert!(!running.is_finished(), "the manager stopped: {running:?}");
    shutdown.cancel();
    running.await.unwrap().unwrap();

    let seen = seen.lock().unwrap();
    assert!(
        seen.iter()
            .all(|key| !key.starts_with(&format!("{other}/"))),
        "reconciled outside the watched namespaces: {seen:?}"
    );
    // Every ConfigMap of the watched namespaces, the API server's own included
    // (kube-root-ca.crt, when its controller runs), and nothing else.
    assert!(seen.len() >= 3, "{seen:?}");
}
