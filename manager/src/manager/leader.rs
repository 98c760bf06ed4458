//! Lease-based leader election.
//!
//! Built on `kunobi-ha` rather than `kube-leader-election`, the two crates that support
//! kube 4: kunobi-ha updates the Lease with optimistic concurrency (a PUT carrying the
//! resourceVersion), so two standbys racing for an expired Lease cannot both win, while
//! kube-leader-election's unconditional merge patch lets both believe they lead until the
//! next renewal. kunobi-ha also implements client-go's renew deadline (a leader that cannot
//! renew in time steps down before its Lease expires), releases the Lease on shutdown so a
//! standby takes over at once, and logs through `tracing`.

use std::time::Duration;

use kube::Client;
use kunobi_ha::leader::LeaderElection;

use super::Args;

/// An election for the Lease `namespace/name`, with the timing from the flags.
pub(crate) fn election(client: Client, namespace: &str, name: &str, args: &Args) -> LeaderElection {
    LeaderElection::builder(client, namespace, name)
        .identity(identity())
        .lease_duration(args.leader_election_lease_duration)
        .renew_deadline(args.leader_election_renew_deadline)
        .retry_period(args.leader_election_retry_period)
        // One renewal request may not outlast the renew deadline.
        .renew_request_timeout(
            args.leader_election_renew_deadline
                .min(Duration::from_secs(5)),
        )
        .build()
}

/// `<pod name>_<uuid>`, as client-go does: readable in `kubectl get lease`, and unique even
/// when two processes share a host name (two `make run` on one machine).
fn identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "manager".into());
    format!("{host}_{}", uuid::Uuid::new_v4())
}
