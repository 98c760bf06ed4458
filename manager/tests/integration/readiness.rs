//! Readiness on a real API server (envtest): a controller is ready only once every one of
//! its watches works, not only the watch of the kind it reconciles.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::Api;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use rkb_envtest::Environment;
use rkb_manager::manager::{Args, Context, Manager, Runnable};

const ACCOUNT: &str = "operator";
const WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

fn role(namespace: &str, resources: &[&str]) -> Role {
    Role {
        metadata: ObjectMeta {
            name: Some(ACCOUNT.into()),
            namespace: Some(namespace.into()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
            verbs: vec!["list".into(), "watch".into()],
            ..Default::default()
        }]),
    }
}

/// Applies the operator's Role and waits until the authorizer allows listing `resource`.
async fn grant(env: &Environment, namespace: &str, resources: &[&str], resource: &str) {
    let params = PatchParams::apply("readiness-test").force();
    Api::<Role>::namespaced(env.client(), namespace)
        .patch(ACCOUNT, &params, &Patch::Apply(role(namespace, resources)))
        .await
        .unwrap();
    let may_list = ResourceAttributes {
        namespace: Some(namespace.into()),
        resource: Some(resource.into()),
        verb: Some("list".into()),
        ..Default::default()
    };
    let deadline = Instant::now() + WAIT;
    while !env
        .service_account_may(namespace, ACCOUNT, may_list.clone())
        .await
        .unwrap()
    {
        assert!(Instant::now() < deadline, "RBAC never took effect");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A ConfigMap controller that also watches the Secrets it would own: its operator may
/// list and watch ConfigMaps but, at first, not Secrets (an `.owns(...)` whose RBAC rule
/// was forgotten). It reconciles, yet is not ready until the Secret watch is allowed.
#[tokio::test]
async fn a_controller_is_not_ready_while_one_of_its_watches_is_forbidden() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let operator = env
        .service_account_client(&namespace, ACCOUNT)
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), &namespace)
        .create(
            &PostParams::default(),
            &RoleBinding {
                metadata: ObjectMeta {
                    name: Some(ACCOUNT.into()),
                    ..Default::default()
                },
                role_ref: RoleRef {
                    api_group: Some("rbac.authorization.k8s.io".into()),
                    kind: "Role".into(),
                    name: ACCOUNT.into(),
                },
                subjects: Some(vec![Subject {
                    kind: "ServiceAccount".into(),
                    name: ACCOUNT.into(),
                    namespace: Some(namespace.clone()),
                    ..Default::default()
                }]),
            },
        )
        .await
        .unwrap();
    grant(env, &namespace, &["configmaps"], "configmaps").await;
    let mut sample = ConfigMap::default();
    sample.metadata.name = Some("sample".into());
    Api::<ConfigMap>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &sample)
        .await
        .unwrap();

    let args = Args::parse_from([
        "manager",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
    ]);
    let manager = Manager::new("readiness-test", operator, args);
    let readiness = manager.readiness().clone();
    let shutdown = manager.shutdown_token();
    let reconciled = Arc::new(AtomicBool::new(false));
    let controller = Runnable::new("configmap", {
        let (namespace, reconciled) = (namespace.clone(), reconciled.clone());
        move |ctx: Context| async move {
            let client = ctx.client();
            let controller = Controller::new(
                Api::<ConfigMap>::namespaced(client.clone(), &namespace),
                watcher::Config::default(),
            )
            .owns(
                Api::<Secret>::namespaced(client, &namespace),
                watcher::Config::default(),
            );
            let reconcile = move |_: Arc<ConfigMap>, _: Arc<()>| {
                reconciled.store(true, Ordering::Relaxed);
                async { Ok::<_, Never>(Action::await_change()) }
            };
            let error_policy = |_: Arc<ConfigMap>, _: &Never, _: Arc<()>| Action::await_change();
            ctx.run(controller, reconcile, error_policy, Arc::new(()))
                .await
        }
    });
    let running = tokio::spawn(manager.run([controller]));

    // The ConfigMap watch works: the sample is reconciled...
    let deadline = Instant::now() + WAIT;
    while !reconciled.load(Ordering::Relaxed) {
        assert!(Instant::now() < deadline, "the sample was never reconciled");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // ...but the Secret watch is refused (403), so the controller stays unready.
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_secs(3) {
        assert!(
            !readiness.is_ready(),
            "ready although the controller cannot watch Secrets"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Once RBAC allows it, the watcher's retry succeeds and the controller is ready.
    grant(env, &namespace, &["configmaps", "secrets"], "secrets").await;
    let deadline = Instant::now() + WAIT;
    while !readiness.is_ready() {
        assert!(
            Instant::now() < deadline,
            "not ready once the Secret watch was allowed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    shutdown.cancel();
    tokio::time::timeout(WAIT, running)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
