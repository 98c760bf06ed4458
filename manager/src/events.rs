//! Events recorded off the reconcile path: [`Events::publish`] queues an Event and returns
//! at once; one task per [`Events`] sends them, in order, through kube's
//! [`Recorder`] (which turns a repeat into a series). An Event costs the API server a
//! request of a few milliseconds that a reconcile need not wait for: controller-runtime's
//! recorder queues them too, and, as there, recording is best effort.
//!
//! ```ignore
//! let events = Events::new(Recorder::new(client, reporter), Events::CAPACITY);
//! events.publish(event, object.object_ref(&()));   // in a reconcile
//! events.flush().await;                            // before the process exits
//! ```
//!
//! An Event that finds the queue full is dropped with a warning (a reconcile is never held
//! up by Events), and Events still queued when the process exits without
//! [`Events::flush`] are lost.

use std::sync::{Arc, OnceLock};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, Recorder};
use tokio::sync::{mpsc, oneshot};

/// A queue of Events and the task that publishes them. Clones share the queue.
#[derive(Clone)]
pub struct Events {
    recorder: Recorder,
    capacity: usize,
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

    /// Events published through `recorder`, at most `capacity` of them waiting.
    pub fn new(recorder: Recorder, capacity: usize) -> Self {
        Events {
            recorder,
            capacity: capacity.max(1),
            sender: Arc::default(),
        }
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
            let recorder = self.recorder.clone();
            tokio::spawn(async move {
                while let Some(message) = queue.recv().await {
                    match message {
                        Message::Publish(event) => {
                            let (event, regarding) = *event;
                            if let Err(error) = recorder.publish(&event, &regarding).await {
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
        let events = Events::new(
            Recorder::new(Client::new(service, "default"), Reporter::from("test")),
            2,
        );
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
}
