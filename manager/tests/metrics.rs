//! The metrics controller-runtime users know, scraped over HTTP from a manager whose
//! controller runs against a real API server (envtest): `workqueue_*` with
//! controller-runtime's names and labels, `rest_client_*` for every request of the
//! manager's client, and the standard `process_*` metrics.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kube::{Api, Resource as _};
use rkb_envtest::free_port;
use rkb_manager::cache;
use rkb_manager::manager::{Args, Context, Manager, Runnable};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
#[error("the first reconcile of `fails` fails")]
struct FirstTimeFailure;

/// The value of the sample of `metric` whose labels include `labels`.
fn sample(text: &str, metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|line| {
            line.starts_with(&format!("{metric}{{")) || line.starts_with(&format!("{metric} "))
        })
        .find(|line| {
            labels
                .iter()
                .all(|(k, v)| line.contains(&format!("{k}=\"{v}\"")))
        })
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

async fn scrape(port: u16) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let request = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

/// Scrapes until `done` holds for the text, or fails with the last scrape.
async fn scrape_until(port: u16, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(Ok(text)) =
            tokio::time::timeout(Duration::from_secs(5), tokio::spawn(scrape(port))).await
            && done(&text)
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "the metrics never showed it:\n{}",
            scrape(port).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn a_manager_exports_workqueue_rest_client_and_process_metrics() {
    let env = rkb_envtest::shared().await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let config_maps = Api::<ConfigMap>::namespaced(admin.clone(), &namespace);
    for name in ["a", "b", "fails"] {
        config_maps
            .create(&PostParams::default(), &config_map(name))
            .await
            .unwrap();
    }

    let port = free_port("127.0.0.1");
    let args = Args::parse_from([
        "manager",
        "--health-probe-bind-address=0",
        &format!("--metrics-bind-address=127.0.0.1:{port}"),
        "--metrics-secure=false",
    ]);
    let manager = Manager::new("metrics-test", admin.clone(), args);
    let shutdown = manager.shutdown_token();
    let failed_once = Arc::new(AtomicBool::new(false));
    let controller = Runnable::new("configmap", {
        let (namespace, failed_once) = (namespace.clone(), failed_once.clone());
        move |ctx: Context| async move {
            let client = ctx.client();
            let config = || watcher::Config::default();
            let (controller, _secrets) = cache::owns(
                cache::controller(
                    Api::<ConfigMap>::namespaced(client.clone(), &namespace),
                    config(),
                ),
                Api::<Secret>::namespaced(client, &namespace),
                config(),
            );
            let reconcile = move |object: Arc<ConfigMap>, _: Arc<()>| {
                let fail = object.metadata.name.as_deref() == Some("fails")
                    && !failed_once.swap(true, Ordering::Relaxed);
                async move {
                    if fail {
                        return Err(FirstTimeFailure);
                    }
                    Ok(Action::await_change())
                }
            };
            let error_policy = |_: Arc<ConfigMap>, _: &FirstTimeFailure, _: Arc<()>| {
                Action::requeue(Duration::from_millis(100))
            };
            ctx.run(controller, reconcile, error_policy, Arc::new(()))
                .await
        }
    });
    let running = tokio::spawn(manager.run([controller]));

    let queue = [("name", "configmap"), ("controller", "configmap")];
    let text = scrape_until(port, |text| {
        sample(
            text,
            "controller_runtime_reconcile_total",
            &[("controller", "configmap"), ("result", "success")],
        ) >= Some(3.0)
    })
    .await;
    assert_eq!(
        sample(&text, "workqueue_adds_total", &queue),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "workqueue_retries_total", &queue),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "workqueue_queue_duration_seconds_count", &queue),
        Some(3.0)
    );
    assert_eq!(
        sample(&text, "workqueue_work_duration_seconds_count", &queue),
        Some(4.0),
        "3 reconciles and a retry"
    );
    assert_eq!(sample(&text, "workqueue_depth", &queue), Some(0.0));
    assert_eq!(
        sample(&text, "workqueue_unfinished_work_seconds", &queue),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "workqueue_longest_running_processor_seconds", &queue),
        Some(0.0)
    );
    // The lists and watches of the two caches, as the manager's client sent them.
    let gets = sample(
        &text,
        "rest_client_requests_total",
        &[("code", "200"), ("method", "GET")],
    );
    assert!(gets >= Some(4.0), "{text}");
    assert!(
        sample(
            &text,
            "rest_client_request_duration_seconds_count",
            &[("verb", "GET")]
        ) >= Some(4.0)
    );
    assert!(sample(&text, "process_resident_memory_bytes", &[]) > Some(0.0));
    assert!(sample(&text, "process_cpu_seconds_total", &[]) > Some(0.0));
    assert!(sample(&text, "process_open_fds", &[]) > Some(0.0));

    // A Secret owned by `a` changes: one more add, for its owner.
    let owner = config_maps.get("a").await.unwrap();
    let mut secret = Secret::default();
    secret.metadata.name = Some("of-a".into());
    secret.metadata.owner_references = Some(vec![owner.controller_owner_ref(&()).unwrap()]);
    Api::<Secret>::namespaced(admin, &namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    scrape_until(port, |text| {
        sample(text, "workqueue_adds_total", &queue) == Some(4.0)
    })
    .await;

    shutdown.cancel();
    running.await.unwrap().unwrap();
}
