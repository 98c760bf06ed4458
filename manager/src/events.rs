//! Events recorded off the reconcile path: [`Events::publish`] queues an Event and returns
//! at once; one task per [`Events`] sends them, in order, through kube's
//! [`Recorder`] (which turns a repeat into a series). An Event costs the API server a
//! request of a few milliseconds that a reconcile need not wait for: controller-runtime's
//! recorder queues them too, and, as there, recording is best effort.
//!
//! ```ignore (pieces of a manager: the event, object and client come from the reconcile of a project)
//! let events = Events::new(client, reporter, Events::CAPACITY);
//! events.publish(event, object.object_ref(&()));   // in a reconcile
//! events.flush().await;                            // before the process exits
//! ```
//!
//! An Event that finds the queue full is dropped with a warning (a reconcile is never held
//! up by Events), and Events still queued when the process exits without
//! [`Events::flush`] are lost.
//!
//! kube's `Recorder` keeps every Event it sent for six minutes, to turn a repeat into a
//! series: a burst of distinct Events (one per object created, 2,000 in the race's larger
//! run) kept ~20 MiB. The task therefore starts a fresh `Recorder` after every
//! [`Events::SERIES_CACHE`] Events: a repeat across that switch starts a new Event instead
//! of counting in the old one's series, as after a restart.

use std::sync::{Arc, OnceLock};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, Recorder, Reporter};
use tokio::sync::{mpsc, oneshot};

/// A queue of Events and the task that publishes them. Clones share the queue.
#[derive(Clone)]
pub struct Events {
    client: Client,
    reporter: Reporter,
    capacity: usize,
    series_cache: usize,
    /// Started with the first Event, so that an `Events` can be made outside a runtime.
    sender: Arc<OnceLock<mpsc::Sender<Message>>>,
}

enum Message {
    Publish(Box<(Event, ObjectReference)>),
    /// Answered once every Event queued before it was sent.
    Flush(oneshot::Sender<()>),
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events")
            .field("capacity", &self.capacity)
            .field("started", &self.sender.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Events {
    /// A queue for the Events of one controller: far more than a burst of reconciles
    /// records at once (one Event per created or rescaled object in the race).
    pub const CAPACITY: usize = 1024;

    /// Events sent after which the task starts a fresh `Recorder`, dropping the Events the
    /// last one kept for series (a few KiB each).
    pub const SERIES_CACHE: usize = 256;

    /// Events `reporter` publishes through `client`, at most `capacity` of them waiting.
    pub fn new(client: Client, reporter: Reporter, capacity: usize) -> Self {
        Events {
            client,
            reporter,
            capacity: capacity.max(1),
            series_cache: Self::SERIES_CACHE,
            sender: Arc::default(),
        }
    }

    /// A fresh `Recorder` after every `events` Events sent (at least one).
    #[must_use]
    pub fn with_series_cache(mut self, events: usize) -> Self {
        self.series_cache = events.max(1);
        self
    }

    /// Queues `event` about `regarding`; the first call starts the publishing task (on the
    /// current Tokio runtime). Never waits: with the queue full, the Event is dropped and a
    /// warning logged.
    pub fn publish(&self, event: Event, regarding: ObjectReference) {
        let reason = event.reason.clone();
        let message = Message::Publish(Box::new((event, regarding)));
        if self.sender().try_send(message).is_err() {
            tracing::warn!(reason, "cannot record an Event: the queue is full");
        }
    }

    /// Waits until every Event queued so far has been sent (or failed, which is logged).
    pub async fn flush(&self) {
        let Some(sender) = self.sender.get() else {
            return; // nothing was ever queued
        };
        let (done, sent) = oneshot::channel();
        if sender.send(Message::Flush(done)).await.is_ok() {
            let _ = sent.await;
        }
    }

    fn sender(&self) -> &mpsc::Sender<Message> {
        self.sender.get_or_init(|| {
            let (sender, mut queue) = mpsc::channel(self.capacity);
            let (client, reporter) = (self.client.clone(), self.reporter.clone());
            let series_cache = self.series_cache;
            tokio::spawn(async move {
                let recorder = || Recorder::new(client.clone(), reporter.clone());
                let (mut current, mut sent) = (recorder(), 0);
                while let Some(message) = queue.recv().await {
                    match message {
                        Message::Publish(event) => {
                            if sent == series_cache {
                                (current, sent) = (recorder(), 0);
                            }
                            sent += 1;
                            let (event, regarding) = *event;
                            if let Err(error) = current.publish(&event, &regarding).await {
                                let reason = &event.reason;
                                tracing::warn!(%error, reason, "cannot record an Event");
                            }
                        }
                        Message::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
            sender
        })
    }
}

#[cfg(test)]
mod tests {
    use http::{Request, Response};
    use http_body_util::BodyExt;
    use kube::Client;
    use kube::client::Body;
    use kube::runtime::events::{EventType, Reporter};
    use tower_test::mock::{self, Handle};

    use super::*;

    fn event(reason: &str) -> Event {
        Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: None,
            action: "Test".into(),
            secondary: None,
        }
    }

    fn regarding() -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            name: Some("a".into()),
            namespace: Some("default".into()),
            uid: Some("u1".into()),
            ..ObjectReference::default()
        }
    }

    /// Publishing never waits: a full queue drops the Event. The task sends the rest in
    /// order, and `flush` returns once they are sent.
    #[tokio::test(flavor = "current_thread")]
    async fn events_are_sent_in_order_off_the_caller_and_a_full_queue_drops() {
        let (service, mut handle): (_, Handle<Request<Body>, Response<Body>>) = mock::pair();
        let events = Events::new(Client::new(service, "default"), Reporter::from("test"), 2);
        // On a current-thread runtime the publishing task cannot run before this yields,
        // so the third Event finds the queue full.
        for reason in ["First", "Second", "Third"] {
            events.publish(event(reason), regarding());
        }
        let api_server = tokio::spawn(async move {
            let mut reasons = Vec::new();
            while let Some((request, reply)) = handle.next_request().await {
                let body = request.into_body().collect().await.unwrap().to_bytes();
                let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
                reasons.push(sent["reason"].as_str().unwrap_or_default().to_owned());
                reply.send_response(Response::new(Body::from(body.to_vec())));
            }
            reasons
        });
        events.flush().await;
        drop(events);
        let reasons = tokio::time::timeout(std::time::Duration::from_secs(5), api_server)
            .await
            .expect("the queue's task ends with the last Events handle")
            .unwrap();
        assert_eq!(reasons, ["First", "Second"]);
    }

    /// A repeat continues its series (a PATCH of the Event) until the task has sent
    /// `series_cache` Events; then a fresh `Recorder` creates it anew (a POST), and the
    /// Events the old one kept are gone.
    #[tokio::test(flavor = "current_thread")]
    async fn the_series_cache_is_bounded() {
        let (service, mut handle): (_, Handle<Request<Body>, Response<Body>>) = mock::pair();
        let events = Events::new(Client::new(service, "default"), Reporter::from("test"), 8)
            .with_series_cache(2);
        for _ in 0..3 {
            events.publish(event("Repeated"), regarding());
        }
        let api_server = tokio::spawn(async move {
            let mut verbs = Vec::new();
            while let Some((request, reply)) = handle.next_request().await {
                verbs.push(request.method().to_string());
                let body = request.into_body().collect().await.unwrap().to_bytes();
                reply.send_response(Response::new(Body::from(body.to_vec())));
            }
            verbs
        });
        events.flush().await;
        drop(events);
        let verbs = tokio::time::timeout(std::time::Duration::from_secs(5), api_server)
            .await
            .expect("the queue's task ends with the last Events handle")
            .unwrap();
        assert_eq!(verbs, ["POST", "PATCH", "POST"]);
    }
}
