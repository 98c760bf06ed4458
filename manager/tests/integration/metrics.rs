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
    let env = rkb_envtest::shared_by(module_path!()).await;
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
        // Leading, so that leader_election_master_status has a sample.
        "--leader-elect",
        &format!("--leader-election-namespace={namespace}"),
        "--leader-election-retry-period=100ms",
        // Buckets of its own, as controller-runtime 0.25 lets an operator choose.
        "--rest-client-latency-buckets=0.05,0.5,5",
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
    let buckets: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("rest_client_request_duration_seconds_bucket{"))
        .filter(|line| line.contains("verb=\"GET\""))
        .filter_map(|line| line.split("le=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(buckets, ["0.05", "0.5", "5.0", "+Inf"], "{text}");
    assert!(sample(&text, "process_resident_memory_bytes", &[]) > Some(0.0));
    assert!(sample(&text, "process_cpu_seconds_total", &[]) > Some(0.0));
    assert!(sample(&text, "process_open_fds", &[]) > Some(0.0));

    // Every metric the scaffold's Grafana dashboards query is exported: no empty panel.
    let exported: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split(['{', ' ']).next())
        .collect();
    let queried = dashboard_metrics();
    assert!(queried.len() >= 15, "{queried:?}");
    for (panel, metric) in &queried {
        assert!(
            exported.contains(metric.as_str()),
            "{panel}: {metric} is not exported:\n{text}"
        );
    }

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

/// (panel, metric) for every metric the PromQL of the scaffold's dashboards
/// (templates/grafana/) reads, and every metric their variables list labels of.
fn dashboard_metrics() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates/grafana");
    let mut metrics = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        // custom-metrics/: the user's own metrics, checked by rkb when it writes their dashboard.
        if path.is_dir() {
            continue;
        }
        // The templates' only tera: raw blocks and the project's name in the titles.
        let source = std::fs::read_to_string(&path).unwrap();
        let json = source
            .replace("{% raw %}", "")
            .replace("{% endraw %}", "")
            .replace("{{ project_name }}", "demo");
        let dashboard: serde_json::Value = serde_json::from_str(&json).unwrap();
        for panel in dashboard["panels"].as_array().unwrap() {
            let title = format!("{}: {}", path.display(), panel["title"]);
            for target in panel["targets"].as_array().unwrap() {
                // Grafana's own variables, as it would substitute them.
                let expr = target["expr"]
                    .as_str()
                    .unwrap()
                    .replace("$__rate_interval", "5m");
                let ast = promql_parser::parser::parse(&expr)
                    .unwrap_or_else(|e| panic!("{title}: {e}: {expr}"));
                let mut names = Vec::new();
                selected(&ast, &mut names);
                assert!(!names.is_empty(), "{title}: no metric in {expr}");
                metrics.extend(names.into_iter().map(|n| (title.clone(), n)));
            }
        }
        for variable in dashboard["templating"]["list"].as_array().unwrap() {
            if let Some(query) = variable["definition"].as_str() {
                let metric = query
                    .trim_start_matches("label_values(")
                    .split(['{', ','])
                    .next()
                    .unwrap();
                metrics.push((
                    format!("{}: variable {}", path.display(), variable["name"]),
                    metric.to_owned(),
                ));
            }
        }
    }
    metrics
}

/// The names of the series `expr` selects.
fn selected(expr: &promql_parser::parser::Expr, names: &mut Vec<String>) {
    use promql_parser::parser::Expr;
    match expr {
        Expr::VectorSelector(vs) => names.extend(vs.name.clone()),
        Expr::MatrixSelector(ms) => names.extend(ms.vs.name.clone()),
        Expr::Aggregate(e) => {
            selected(&e.expr, names);
            if let Some(param) = &e.param {
                selected(param, names);
            }
        }
        Expr::Unary(e) => selected(&e.expr, names),
        Expr::Binary(e) => {
            selected(&e.lhs, names);
            selected(&e.rhs, names);
        }
        Expr::Paren(e) => selected(&e.expr, names),
        Expr::Subquery(e) => selected(&e.expr, names),
        Expr::Call(call) => call.args.args.iter().for_each(|arg| selected(arg, names)),
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => {}
    }
}
