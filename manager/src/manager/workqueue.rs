//! controller-runtime's `workqueue_*` metrics for kube-runtime's controllers.
//!
//! kube-runtime schedules reconciles in a queue of its own that reports nothing, so each
//! metric is measured where it can be seen:
//! - `workqueue_adds_total`, `workqueue_depth` and `workqueue_queue_duration_seconds` at the
//!   trigger streams that [`crate::cache`] builds: the controller polls them inside
//!   `Context::run`, where a task-local names its queue. An object triggered again while it
//!   waits is one add, as in client-go's queue; a requeue (after an error, or an
//!   `Action::requeue`) is not, as kube-runtime schedules it out of sight. Controllers built
//!   from kube's own `Controller::new` and `owns` report none of these three.
//! - `workqueue_work_duration_seconds`, `workqueue_retries_total` (a failed reconcile
//!   requeued), `workqueue_unfinished_work_seconds` and
//!   `workqueue_longest_running_processor_seconds` at the reconciles, for every controller.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::sync::lock;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::Histogram;

tokio::task_local! {
    /// The queue of the controller whose streams are being polled.
    static QUEUE: Queue;
}

/// An object (its `namespace/name`, or `name`) was triggered for a reconcile by a watch
/// event; counted in the queue of the controller polling the stream, if any.
pub(crate) fn triggered(key: String) {
    let _ = QUEUE.try_with(|queue| queue.add(key));
}

/// Runs `future` (a controller) with `queue` as the queue its trigger streams report to.
pub(crate) async fn scope<F: Future>(queue: Queue, future: F) -> F::Output {
    QUEUE.scope(queue, future).await
}

/// controller-runtime's labels of the workqueue metrics: the controller's name, twice.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct QueueLabels {
    pub name: String,
    pub controller: String,
}

impl QueueLabels {
    pub(crate) fn of(controller: &str) -> Self {
        QueueLabels {
            name: controller.into(),
            controller: controller.into(),
        }
    }
}

/// client-go's buckets for the queue and work durations: 1 µs to 10 s, by tens.
pub(crate) fn duration_histogram() -> Histogram {
    Histogram::new([1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0])
}

/// One controller's queue, as far as it can be seen.
#[derive(Clone)]
pub(crate) struct Queue(Arc<Inner>);

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").finish_non_exhaustive()
    }
}

/// The keys of the objects in the controller's cache.
type Present = Box<dyn Fn() -> HashSet<String> + Send + Sync>;

struct Inner {
    /// Objects triggered and not yet reconciled, since when.
    waiting: Mutex<HashMap<String, Instant>>,
    /// Reconciles in flight, since when.
    running: Mutex<HashMap<u64, Instant>>,
    next_reconcile: AtomicU64,
    present: OnceLock<Present>,
    adds: Counter,
    retries: Counter,
    queue_duration: Histogram,
    work_duration: Histogram,
}

impl Queue {
    pub(crate) fn new(
        adds: Counter,
        retries: Counter,
        queue_duration: Histogram,
        work_duration: Histogram,
    ) -> Self {
        Queue(Arc::new(Inner {
            waiting: Mutex::default(),
            running: Mutex::default(),
            next_reconcile: AtomicU64::new(0),
            present: OnceLock::new(),
            adds,
            retries,
            queue_duration,
            work_duration,
        }))
    }

    fn add(&self, key: String) {
        let mut waiting = lock(&self.0.waiting);
        if let std::collections::hash_map::Entry::Vacant(entry) = waiting.entry(key) {
            entry.insert(Instant::now());
            self.0.adds.inc();
        }
    }

    /// A reconcile of `key` starts: it leaves the queue. Finish it with [`Work::finish`].
    pub(crate) fn start(&self, key: &str) -> Work {
        let now = Instant::now();
        let waited = lock(&self.0.waiting).remove(key);
        if let Some(since) = waited {
            self.0
                .queue_duration
                .observe(now.duration_since(since).as_secs_f64());
        }
        let id = self.0.next_reconcile.fetch_add(1, Ordering::Relaxed);
        self.running().insert(id, now);
        Work {
            queue: self.clone(),
            id,
            started: now,
        }
    }

    /// A failed reconcile is requeued with backoff (client-go's `AddRateLimited`).
    pub(crate) fn retried(&self) {
        self.0.retries.inc();
    }

    /// Objects whose key `present` does not list (deleted while waiting, never to be
    /// reconciled) leave the queue at the next scrape.
    pub(crate) fn count_only(&self, present: impl Fn() -> HashSet<String> + Send + Sync + 'static) {
        let _ = self.0.present.set(Box::new(present));
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Instant>> {
        lock(&self.0.running)
    }

    /// The queue's gauges, now.
    fn gauges(&self) -> Gauges {
        let now = Instant::now();
        let mut waiting = lock(&self.0.waiting);
        if let Some(present) = self.0.present.get() {
            let present = present();
            waiting.retain(|key, _| present.contains(key));
        }
        let depth = waiting.len();
        drop(waiting);
        let running: Vec<f64> = self
            .running()
            .values()
            .map(|since| now.duration_since(*since).as_secs_f64())
            .collect();
        let longest = running.iter().copied().fold(0.0, f64::max);
        Gauges {
            depth: depth as f64,
            unfinished_seconds: running.iter().sum(),
            longest_seconds: longest,
        }
    }
}

/// Objects waiting, seconds of reconciles in flight, and the longest of them.
#[derive(Clone, Copy, Debug)]
struct Gauges {
    depth: f64,
    unfinished_seconds: f64,
    longest_seconds: f64,
}

/// A reconcile in flight: counted as running until finished or dropped (cancelled).
#[derive(Debug)]
pub(crate) struct Work {
    queue: Queue,
    id: u64,
    started: Instant,
}

impl Work {
    pub(crate) fn finish(self) {
        self.queue
            .0
            .work_duration
            .observe(self.started.elapsed().as_secs_f64());
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        self.queue.running().remove(&self.id);
    }
}

/// The gauges of every controller's queue, computed at each scrape.
#[derive(Clone, Debug, Default)]
pub(crate) struct QueueGauges(Arc<Mutex<Vec<(QueueLabels, Queue)>>>);

impl QueueGauges {
    pub(crate) fn add(&self, labels: QueueLabels, queue: Queue) {
        lock(&self.0).push((labels, queue));
    }
}

impl Collector for QueueGauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let queues = lock(&self.0).clone();
        let gauges: Vec<_> = queues
            .iter()
            .map(|(labels, q)| (labels, q.gauges()))
            .collect();
        let mut family = |name, help, value: fn(Gauges) -> f64| {
            let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for (labels, sample) in &gauges {
                ConstGauge::new(value(*sample)).encode(metric.encode_family(*labels)?)?;
            }
            Ok::<_, std::fmt::Error>(())
        };
        family("workqueue_depth", "Current depth of workqueue", |g| g.depth)?;
        family(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
            |g| g.unfinished_seconds,
        )?;
        family(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            |g| g.longest_seconds,
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> Queue {
        Queue::new(
            Counter::default(),
            Counter::default(),
            duration_histogram(),
            duration_histogram(),
        )
    }

    #[tokio::test]
    async fn triggers_inside_the_scope_are_queued_once_until_reconciled() {
        let queue = queue();
        triggered("outside/any-scope".into());
        scope(queue.clone(), async {
            triggered("ns/a".into());
            triggered("ns/a".into());
            triggered("ns/b".into());
        })
        .await;
        assert_eq!(
            queue.0.adds.get(),
            2,
            "a second trigger while waiting is no add"
        );
        assert_eq!(queue.gauges().depth, 2.0);
        let work = queue.start("ns/a");
        assert_eq!(queue.gauges().depth, 1.0);
        assert_eq!(queue.running().len(), 1);
        work.finish();
        assert_eq!(queue.running().len(), 0);
        queue.count_only(|| HashSet::from(["ns/a".to_owned()]));
        assert_eq!(
            queue.gauges().depth,
            0.0,
            "a deleted object leaves the queue"
        );
    }
}
