//! One watch of a kind for every controller of a manager that owns its objects (the
//! manager's `SharedCache`), on a real API server (envtest): two controllers that own
//! Secrets make two watches of Secrets through `cache::owns` and one through
//! `ctx.cache().owns`, and both still reconcile on every change of an owned Secret; with
//! `ctx.cache().owns_ignoring_own`, each skips only the Secrets it wrote itself.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Api, Resource as _};
use rkb_manager::cache::{self, OwnWrites};
use rkb_manager::manager::{Args, Context, Manager, Runnable};

#[path = "support/count_watches.rs"]
mod count_watches;
use count_watches::CountWatches;

const WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

/// Watches sent, by path.
type Watches = Arc<Mutex<BTreeMap<String, usize>>>;

/// Reconciles of `a` seen by each controller.
type Seen = Arc<Mutex<BTreeMap<&'static str, usize>>>;

fn controller(name: &'static str, namespace: &str, shared: bool, seen: &Seen) -> Runnable {
    let (namespace, seen) = (namespace.to_owned(), seen.clone());
    Runnable::new(name, move |ctx: Context| async move {
        let client = ctx.client();
        let config = || watcher::Config::default();
        let config_maps = cache::controller(
            Api::<ConfigMap>::namespaced(client.clone(), &namespace),
            config(),
        );
        let secrets = Api::<Secret>::namespaced(client, &namespace);
        let (controller, _secrets) = if shared {
            ctx.cache().owns(config_maps, secrets, config())
        } else {
            cache::owns(config_maps, secrets, config())
        };
        let reconcile = move |_: Arc<ConfigMap>, _: Arc<()>| {
            *seen.lock().unwrap().entry(name).or_default() += 1;
            async { Ok::<_, Never>(Action::await_change()) }
        };
        let error_policy = |_: Arc<ConfigMap>, _: &Never, _: Arc<()>| Action::await_change();
        ctx.run(controller, reconcile, error_policy, Arc::new(()))
            .await
    })
}

async fn eventually(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A fresh namespace holding the ConfigMap `a`, and a manager on a client that counts its
/// watches, serving nothing.
struct Setup {
    admin: kube::Client,
    namespace: String,
    a: ConfigMap,
    manager: Manager,
    watches: Watches,
}

async fn namespace_with_a(manager: &str) -> Setup {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let mut a = ConfigMap::default();
    a.metadata.name = Some("a".into());
    let a = Api::<ConfigMap>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &a)
        .await
        .unwrap();
    let watches = Watches::default();
    let counted = CountWatches::client(admin.clone(), &watches);
    let args = Args::parse_from([
        "manager",
        "--health-probe-bind-address=0",
        "--metrics-bind-address=0",
    ]);
    let manager = Manager::new(manager, counted, args);
    Setup {
        admin,
        namespace,
        a,
        manager,
        watches,
    }
}

/// Runs two controllers owning Secrets in a fresh namespace, makes a Secret owned by `a`
/// change, and returns the watches of Secrets the manager sent.
async fn watches_of_secrets(shared: bool) -> usize {
    let Setup {
        admin,
        namespace,
        a,
        manager,
        watches,
    } = namespace_with_a("shared-cache-test").await;
    let shutdown = manager.shutdown_token();
    let seen = Seen::default();
    let running = tokio::spawn(manager.run([
        controller("first", &namespace, shared, &seen),
        controller("second", &namespace, shared, &seen),
    ]));
    let both = |n: usize| {
        let seen = seen.lock().unwrap();
        ["first", "second"]
            .iter()
            .all(|c| seen.get(c).copied().unwrap_or(0) >= n)
    };
    eventually("both controllers reconcile `a`", || both(1)).await;
    let before: BTreeMap<_, _> = seen.lock().unwrap().clone();

    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("of-a".into()),
            owner_references: Some(vec![a.controller_owner_ref(&()).unwrap()]),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    Api::<Secret>::namespaced(admin, &namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    eventually("both reconcile `a` again for its Secret", || {
        let seen = seen.lock().unwrap();
        ["first", "second"]
            .iter()
            .all(|c| seen.get(c) > before.get(c))
    })
    .await;
    shutdown.cancel();
    running.await.unwrap().unwrap();

    let path = format!("/api/v1/namespaces/{namespace}/secrets");
    let watches = watches.lock().unwrap();
    watches.get(&path).copied().unwrap_or(0)
}

#[tokio::test]
async fn controllers_owning_one_kind_share_its_watch() {
    assert_eq!(watches_of_secrets(false).await, 2, "a watch per controller");
    assert_eq!(watches_of_secrets(true).await, 1, "one watch for both");
}

/// A controller of ConfigMaps on the shared watch of Secrets that skips its own writes:
/// with `writes`, its first reconcile of `a` creates the Secret `of-a` owned by `a`.
fn ignoring_own(
    name: &'static str,
    namespace: &str,
    writes: Option<OwnWrites<Secret>>,
    seen: &Seen,
) -> Runnable {
    let (namespace, seen) = (namespace.to_owned(), seen.clone());
    Runnable::new(name, move |ctx: Context| async move {
        let client = ctx.client();
        let config_maps = cache::controller(
            Api::<ConfigMap>::namespaced(client.clone(), &namespace),
            watcher::Config::default(),
        );
        let secrets = Api::<Secret>::namespaced(client, &namespace);
        let own = writes.clone().unwrap_or_default();
        let (controller, _) = ctx.cache().owns_ignoring_own(
            config_maps,
            secrets.clone(),
            watcher::Config::default(),
            &own,
        );
        let reconcile = move |a: Arc<ConfigMap>, _: Arc<()>| {
            *seen.lock().unwrap().entry(name).or_default() += 1;
            let (secrets, writes, seen) = (secrets.clone(), writes.clone(), seen.clone());
            async move {
                let Some(writes) = writes else {
                    return Ok(Action::await_change());
                };
                // After `other`'s first reconcile, which would otherwise absorb the one the
                // Secret starts.
                eventually("`other` reconciles `a`", || {
                    seen.lock().unwrap().contains_key("other")
                })
                .await;
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some("of-a".into()),
                        // Own writes are known by namespace and name, as the watch brings them.
                        namespace: a.metadata.namespace.clone(),
                        owner_references: Some(vec![a.controller_owner_ref(&()).unwrap()]),
                        ..ObjectMeta::default()
                    },
                    ..Secret::default()
                };
                let params = PostParams::default();
                let create = secrets.create(&params, &secret);
                match writes
                    .apply(&secret, async { create.await.map(Some) })
                    .await
                {
                    Ok(_) | Err(kube::Error::Api(_)) => Ok(Action::await_change()),
                    Err(error) => Err(error),
                }
            }
        };
        let error_policy = |_: Arc<ConfigMap>, _: &kube::Error, _: Arc<()>| Action::await_change();
        ctx.run(controller, reconcile, error_policy, Arc::new(()))
            .await
    })
}

#[tokio::test]
async fn on_a_shared_watch_each_controller_skips_only_its_own_writes() {
    let Setup {
        admin,
        namespace,
        manager,
        watches,
        ..
    } = namespace_with_a("shared-cache-own-writes").await;
    let shutdown = manager.shutdown_token();
    let seen = Seen::default();
    let running = tokio::spawn(manager.run([
        ignoring_own("writer", &namespace, Some(OwnWrites::default()), &seen),
        ignoring_own("other", &namespace, None, &seen),
    ]));
    let count = |name| seen.lock().unwrap().get(name).copied().unwrap_or(0);
    // `other` reconciles `a` once for `a` and once more for the Secret `writer` created.
    eventually("`other` reconciles `a` for the Secret", || {
        count("other") >= 2
    })
    .await;
    // Both subscribers got that delivery together; give `writer` time to act on it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(count("writer"), 1, "`writer` is not woken by its own write");
    assert!(
        Api::<Secret>::namespaced(admin, &namespace)
            .get_opt("of-a")
            .await
            .unwrap()
            .is_some()
    );
    shutdown.cancel();
    running.await.unwrap().unwrap();

    let path = format!("/api/v1/namespaces/{namespace}/secrets");
    assert_eq!(
        watches.lock().unwrap().get(&path).copied(),
        Some(1),
        "one watch of Secrets"
    );
}
