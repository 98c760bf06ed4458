//! The slices this replica serves, and the reconciles in flight in each: the one place a
//! reconcile asks whether it may start, so that a slice being released takes no new work.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use futures::Stream;
use tokio::sync::watch;

use super::Slices;
use crate::sync::lock;

/// Shared by the manager's controllers and the membership loop; cheap to clone.
#[derive(Clone, Debug)]
pub struct Gate {
    slices: Slices,
    state: Arc<Mutex<State>>,
    /// Bumped whenever slices start being served, and when a watch restricted to the
    /// slices has listed them anew: controllers then reconcile everything they hold, and
    /// the objects of the new slices pass the gate.
    acquired: Arc<watch::Sender<u64>>,
    /// The slices served, for the watches that list only theirs.
    served: Arc<watch::Sender<BTreeSet<u32>>>,
    /// Whether the API server filters lists by `shardSelector`: [`UNKNOWN`] until a list
    /// with one was answered.
    server_side: Arc<AtomicU8>,
}

const UNKNOWN: u8 = 0;
const SERVER_SIDE: u8 = 1;
const CLIENT_SIDE: u8 = 2;

#[derive(Debug, Default)]
struct State {
    serving: BTreeSet<u32>,
    in_flight: BTreeMap<u32, usize>,
}

/// A reconcile in flight in one slice; the slice counts it until this is dropped.
#[derive(Debug)]
#[must_use = "the reconcile counts as in flight only while this lives"]
pub struct InFlight {
    state: Arc<Mutex<State>>,
    slice: u32,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        if let Some(count) = state.in_flight.get_mut(&self.slice) {
            *count -= 1;
            if *count == 0 {
                state.in_flight.remove(&self.slice);
            }
        }
    }
}

impl Gate {
    /// A gate serving no slice yet.
    pub fn new(slices: Slices) -> Self {
        Self {
            slices,
            state: Arc::default(),
            acquired: Arc::new(watch::channel(0).0),
            served: Arc::new(watch::channel(BTreeSet::new()).0),
            server_side: Arc::new(AtomicU8::new(UNKNOWN)),
        }
    }

    pub fn slices(&self) -> Slices {
        self.slices
    }

    /// [`try_start`](Self::try_start) for the object `meta` describes, by its
    /// [`shard_key`](super::shard_key): its UID, as the API server's `shardSelector` sees it.
    pub fn admit(
        &self,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ) -> Option<InFlight> {
        super::shard_key(meta).and_then(|key| self.try_start(key))
    }

    /// Starts a reconcile of the object with this shard key if its slice is served here;
    /// `None` otherwise (another replica's slice, or one being handed off).
    pub fn try_start(&self, key: &str) -> Option<InFlight> {
        let slice = self.slices.of_key(key);
        let mut state = lock(&self.state);
        if !state.serving.contains(&slice) {
            return None;
        }
        *state.in_flight.entry(slice).or_default() += 1;
        Some(InFlight {
            state: self.state.clone(),
            slice,
        })
    }

    /// The slices served now.
    pub fn serving(&self) -> BTreeSet<u32> {
        lock(&self.state).serving.clone()
    }

    /// Reconciles in flight in `slice`, including those started before it stopped.
    pub fn in_flight(&self, slice: u32) -> usize {
        lock(&self.state)
            .in_flight
            .get(&slice)
            .copied()
            .unwrap_or(0)
    }

    /// Starts serving `slices` (claimed in the ownership table), and has the controllers
    /// reconcile their objects.
    pub(crate) fn serve(&self, slices: impl IntoIterator<Item = u32>) {
        let mut state = lock(&self.state);
        let before = state.serving.len();
        state.serving.extend(slices);
        if state.serving.len() != before {
            self.served.send_replace(state.serving.clone());
            drop(state);
            self.reconcile_all();
        }
    }

    /// Starts no more reconciles in `slice`; those in flight go on ([`Self::in_flight`]).
    pub(crate) fn stop(&self, slice: u32) {
        let mut state = lock(&self.state);
        if state.serving.remove(&slice) {
            self.served.send_replace(state.serving.clone());
        }
    }

    /// Serves nothing any more (the replica lost its Lease or shuts down).
    pub(crate) fn stop_all(&self) {
        let mut state = lock(&self.state);
        if !state.serving.is_empty() {
            state.serving.clear();
            self.served.send_replace(BTreeSet::new());
        }
    }

    /// Has the controllers reconcile every object they hold (those of other slices stop
    /// at the gate).
    pub(crate) fn reconcile_all(&self) {
        self.acquired.send_modify(|generation| *generation += 1);
    }

    /// The slices served, updated as they change.
    pub(crate) fn served(&self) -> watch::Receiver<BTreeSet<u32>> {
        self.served.subscribe()
    }

    /// Whether the API server restricts this replica's watches to its slices
    /// (`shardSelector`, KEP-5866): `None` until it answered a list of a sharded watch,
    /// `Some(true)` while it filtered every one, `Some(false)` once it ignored one (a kind it
    /// does not filter: custom resources, as of Kubernetes 1.37). A watch it does not filter
    /// holds every object of its kind, and the gate alone keeps the replica to its slices.
    pub fn server_side(&self) -> Option<bool> {
        match self.server_side.load(Ordering::SeqCst) {
            SERVER_SIDE => Some(true),
            CLIENT_SIDE => Some(false),
            _ => None,
        }
    }

    /// Records what a list with `shardSelector` showed.
    pub(crate) fn record_server_side(&self, filtered: bool) {
        if filtered {
            let _ = self.server_side.compare_exchange(
                UNKNOWN,
                SERVER_SIDE,
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        } else {
            self.server_side.store(CLIENT_SIDE, Ordering::SeqCst);
        }
    }

    /// Yields once every time slices start being served here.
    pub fn acquisitions(&self) -> impl Stream<Item = ()> + Send + 'static + use<> {
        let mut receiver = self.acquired.subscribe();
        receiver.mark_unchanged();
        futures::stream::unfold(receiver, |mut receiver| async move {
            receiver.changed().await.ok()?;
            Some(((), receiver))
        })
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    /// A key in `slice` of `slices`.
    pub(crate) fn key_in(slices: Slices, slice: u32) -> String {
        (0..)
            .map(|n| format!("uid-{n}"))
            .find(|key| slices.of_key(key) == slice)
            .unwrap()
    }

    #[test]
    fn only_served_slices_start_reconciles_and_stopping_waits_for_none() {
        let slices = Slices::new(4).unwrap();
        let gate = Gate::new(slices);
        let (a, b) = (key_in(slices, 1), key_in(slices, 2));
        assert!(gate.try_start(&a).is_none(), "nothing served yet");
        gate.serve([1]);
        let first = gate.try_start(&a).unwrap();
        let second = gate.try_start(&a).unwrap();
        assert!(gate.try_start(&b).is_none());
        assert_eq!(gate.in_flight(1), 2);

        gate.stop(1);
        assert!(
            gate.try_start(&a).is_none(),
            "a stopped slice takes no new work"
        );
        assert_eq!(gate.in_flight(1), 2, "what runs goes on");
        drop(first);
        drop(second);
        assert_eq!(gate.in_flight(1), 0);
    }

    #[test]
    fn the_server_side_is_whether_every_sharded_list_was_filtered() {
        let gate = Gate::new(Slices::new(4).unwrap());
        assert_eq!(gate.server_side(), None);
        gate.record_server_side(true);
        assert_eq!(gate.server_side(), Some(true));
        gate.record_server_side(false);
        gate.record_server_side(true);
        assert_eq!(gate.server_side(), Some(false), "one kind not filtered");
    }

    #[test]
    fn watches_hear_of_every_change_of_the_served_slices() {
        let gate = Gate::new(Slices::new(4).unwrap());
        let mut served = gate.served();
        gate.serve([0, 1]);
        assert!(served.has_changed().unwrap());
        assert_eq!(*served.borrow_and_update(), BTreeSet::from([0, 1]));
        gate.serve([1]);
        assert!(!served.has_changed().unwrap(), "nothing new");
        gate.stop(0);
        assert_eq!(*served.borrow_and_update(), BTreeSet::from([1]));
        gate.stop_all();
        assert!(served.borrow_and_update().is_empty());
    }

    #[tokio::test]
    async fn controllers_hear_of_new_slices_only() {
        let gate = Gate::new(Slices::new(4).unwrap());
        let mut acquisitions = Box::pin(gate.acquisitions());
        gate.serve([0, 1]);
        assert_eq!(acquisitions.next().await, Some(()));
        gate.serve([1]);
        gate.stop(0);
        let nothing_new =
            tokio::time::timeout(std::time::Duration::from_millis(50), acquisitions.next());
        assert!(nothing_new.await.is_err());
    }
}
