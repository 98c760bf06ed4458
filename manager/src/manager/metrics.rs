//! Prometheus metrics under controller-runtime's names, so the dashboards and alerts written
//! for kubebuilder operators work unchanged.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use kube::runtime::controller::Action;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry};

use super::process_metrics::ProcessCollector;
use super::rest_metrics::RestMetrics;
use super::workqueue::{Queue, QueueGauges, QueueLabels, Work, duration_histogram};
use crate::sync::{read, write};

/// The operator's metrics registry: the manager's own metrics plus any the operator adds.
///
/// Cheap to clone; clones share the registry.
#[derive(Clone, Debug)]
pub struct Metrics {
    registry: Arc<RwLock<Registry>>,
    reconcile_total: Family<ResultLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_panics: Family<ControllerLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram, fn() -> Histogram>,
    active_workers: Family<ControllerLabels, Gauge>,
    max_concurrent: Family<ControllerLabels, Gauge>,
    leader: Family<LeaseLabels, Gauge>,
    rest: RestMetrics,
    queue_adds: Family<QueueLabels, Counter>,
    queue_retries: Family<QueueLabels, Counter>,
    queue_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    work_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    queue_gauges: QueueGauges,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabels {
    name: String,
}

/// controller-runtime's buckets for `controller_runtime_reconcile_time_seconds`.
fn reconcile_time_histogram() -> Histogram {
    Histogram::new([
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
        15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
    ])
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry holding the manager's metrics.
    pub fn new() -> Self {
        Self::with_rest_latency_buckets(super::Buckets::client_go().bounds())
    }

    /// [`new`](Self::new), with `rest_client_request_duration_seconds` in these buckets.
    pub(crate) fn with_rest_latency_buckets(buckets: &[f64]) -> Self {
        let metrics = Self {
            registry: Arc::default(),
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_time_histogram),
            active_workers: Family::default(),
            max_concurrent: Family::default(),
            leader: Family::default(),
            rest: RestMetrics::new(buckets),
            queue_adds: Family::default(),
            queue_retries: Family::default(),
            queue_duration: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            queue_gauges: QueueGauges::default(),
        };
        // prometheus-client appends `_total` to counters.
        metrics.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            metrics.reconcile_total.clone(),
        );
        metrics.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            metrics.reconcile_errors.clone(),
        );
        metrics.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            metrics.reconcile_panics.clone(),
        );
        metrics.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            metrics.reconcile_time.clone(),
        );
        metrics.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            metrics.active_workers.clone(),
        );
        metrics.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            metrics.max_concurrent.clone(),
        );
        metrics.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            metrics.leader.clone(),
        );
        metrics.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            metrics.rest.requests.clone(),
        );
        metrics.register(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            metrics.rest.latency.clone(),
        );
        metrics.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            metrics.queue_adds.clone(),
        );
        metrics.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            metrics.queue_retries.clone(),
        );
        metrics.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            metrics.queue_duration.clone(),
        );
        metrics.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            metrics.work_duration.clone(),
        );
        {
            let mut registry = write(&metrics.registry);
            registry.register_collector(Box::new(metrics.queue_gauges.clone()));
            registry.register_collector(Box::new(ProcessCollector));
        }
        metrics
    }

    /// `client`, with every request it sends counted in `rest_client_requests_total` and
    /// timed in `rest_client_request_duration_seconds`.
    pub(crate) fn instrument(&self, client: kube::Client) -> kube::Client {
        self.rest.instrument(client)
    }

    /// Adds an operator-specific metric, e.g. a [`Counter`] of objects it created.
    pub fn register(&self, name: &str, help: &str, metric: impl Metric) {
        write(&self.registry).register(name, help, metric);
    }

    /// Every metric in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let registry = read(&self.registry);
        prometheus_client::encoding::text::encode(&mut out, &registry)
            .expect("writing to a String cannot fail");
        out
    }

    /// Records whether this replica holds the lease `name`.
    pub(crate) fn set_leader(&self, name: &str, leading: bool) {
        self.leader
            .get_or_create(&LeaseLabels { name: name.into() })
            .set(i64::from(leading));
    }

    /// The metric handles of one controller, created at zero so dashboards show it at once.
    pub(crate) fn controller(&self, name: &str, concurrency: u16) -> ControllerMetrics {
        let labels = ControllerLabels {
            controller: name.into(),
        };
        self.max_concurrent
            .get_or_create(&labels)
            .set(i64::from(concurrency));
        let result = |result| {
            self.reconcile_total
                .get_or_create(&ResultLabels {
                    controller: name.into(),
                    result,
                })
                .clone()
        };
        let queue_labels = QueueLabels::of(name);
        let queue = Queue::new(
            self.queue_adds.get_or_create(&queue_labels).clone(),
            self.queue_retries.get_or_create(&queue_labels).clone(),
            self.queue_duration.get_or_create(&queue_labels).clone(),
            self.work_duration.get_or_create(&queue_labels).clone(),
        );
        self.queue_gauges.add(queue_labels, queue.clone());
        ControllerMetrics(Arc::new(ControllerMetricsInner {
            queue,
            success: result("success"),
            error: result("error"),
            requeue: result("requeue"),
            requeue_after: result("requeue_after"),
            errors: self.reconcile_errors.get_or_create(&labels).clone(),
            panics: self.reconcile_panics.get_or_create(&labels).clone(),
            time: self.reconcile_time.get_or_create(&labels).clone(),
            active: self.active_workers.get_or_create(&labels).clone(),
        }))
    }
}

/// One controller's metric handles.
#[derive(Clone, Debug)]
pub(crate) struct ControllerMetrics(Arc<ControllerMetricsInner>);

#[derive(Debug)]
struct ControllerMetricsInner {
    queue: Queue,
    success: Counter,
    error: Counter,
    requeue: Counter,
    requeue_after: Counter,
    errors: Counter,
    panics: Counter,
    time: Histogram,
    active: Gauge,
}

impl ControllerMetrics {
    /// Marks a reconcile of `key` (`namespace/name`) as started; finish it with
    /// [`Reconcile::finish`].
    pub(crate) fn start(&self, key: &str) -> Reconcile {
        self.0.active.inc();
        Reconcile {
            metrics: self.clone(),
            started: Instant::now(),
            work: Some(self.0.queue.start(key)),
        }
    }

    /// The controller's queue, for its trigger streams and retries.
    pub(crate) fn queue(&self) -> &Queue {
        &self.0.queue
    }

    /// Counts a reconcile that panicked (its error is counted by [`Reconcile::finish`]).
    pub(crate) fn panicked(&self) {
        self.0.panics.inc();
    }
}

/// A reconcile in flight: counted in `active_workers` until dropped, even if cancelled.
#[derive(Debug)]
pub(crate) struct Reconcile {
    metrics: ControllerMetrics,
    started: Instant,
    work: Option<Work>,
}

impl Reconcile {
    /// Records the outcome the way controller-runtime labels it.
    pub(crate) fn finish<E>(mut self, result: &Result<Action, E>) {
        if let Some(work) = self.work.take() {
            work.finish();
        }
        let m = &self.metrics.0;
        match result {
            Err(_) => {
                m.error.inc();
                m.errors.inc();
            }
            Ok(action) if *action == Action::await_change() => {
                m.success.inc();
            }
            Ok(action) if *action == Action::requeue(Duration::ZERO) => {
                m.requeue.inc();
            }
            Ok(_) => {
                m.requeue_after.inc();
            }
        }
        m.time.observe(self.started.elapsed().as_secs_f64());
    }
}

impl Drop for Reconcile {
    fn drop(&mut self) {
        self.metrics.0.active.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting with {prefix:?} in\n{text}"))
    }

    #[test]
    fn reconcile_outcomes_use_controller_runtime_names_and_labels() {
        let metrics = Metrics::new();
        let controller = metrics.controller("memcached", 4);
        controller
            .start("ns/a")
            .finish::<()>(&Ok(Action::await_change()));
        controller.start("ns/a").finish(&Err(()));
        controller
            .start("ns/a")
            .finish::<()>(&Ok(Action::requeue(Duration::ZERO)));
        controller
            .start("ns/a")
            .finish::<()>(&Ok(Action::requeue(Duration::from_secs(60))));
        controller
            .start("ns/a")
            .finish::<()>(&Ok(Action::requeue(Duration::from_secs(60))));
        controller.panicked();
        let in_flight = controller.start("ns/a");
        metrics.set_leader("memcached-operator-leader", true);

        let text = metrics.encode();
        for (prefix, value) in [
            (
                r#"controller_runtime_reconcile_total{controller="memcached",result="success"}"#,
                "1",
            ),
            (
                r#"controller_runtime_reconcile_total{controller="memcached",result="error"}"#,
                "1",
            ),
            (
                r#"controller_runtime_reconcile_total{controller="memcached",result="requeue"}"#,
                "1",
            ),
            (
                r#"controller_runtime_reconcile_total{controller="memcached",result="requeue_after"}"#,
                "2",
            ),
            (
                r#"controller_runtime_reconcile_errors_total{controller="memcached"}"#,
                "1",
            ),
            (
                r#"controller_runtime_reconcile_panics_total{controller="memcached"}"#,
                "1",
            ),
            (
                r#"controller_runtime_reconcile_time_seconds_count{controller="memcached"}"#,
                "5",
            ),
            (
                r#"controller_runtime_active_workers{controller="memcached"}"#,
                "1",
            ),
            (
                r#"controller_runtime_max_concurrent_reconciles{controller="memcached"}"#,
                "4",
            ),
            (
                r#"leader_election_master_status{name="memcached-operator-leader"}"#,
                "1",
            ),
        ] {
            assert_eq!(line(&text, prefix), format!("{prefix} {value}"));
        }
        line(
            &text,
            r#"controller_runtime_reconcile_time_seconds_bucket{le="0.005",controller="memcached"}"#,
        );
        assert!(text.contains("# TYPE controller_runtime_reconcile counter"));
        assert!(text.contains("# TYPE controller_runtime_reconcile_time_seconds histogram"));

        drop(in_flight);
        let text = metrics.encode();
        assert_eq!(
            line(
                &text,
                r#"controller_runtime_active_workers{controller="memcached"}"#
            ),
            r#"controller_runtime_active_workers{controller="memcached"} 0"#,
            "a cancelled reconcile no longer counts as active"
        );
    }

    #[test]
    fn operators_can_add_their_own_metrics() {
        let metrics = Metrics::new();
        let created = Counter::<u64>::default();
        metrics.register(
            "memcached_deployments_created",
            "Deployments created",
            created.clone(),
        );
        created.inc();
        assert!(
            metrics
                .encode()
                .contains("memcached_deployments_created_total 1")
        );
    }
}
