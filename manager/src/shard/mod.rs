//! Sharded controllers (`--sharding`): every replica reconciles, each the objects of the
//! slices of the hash space it holds, with hand-offs that never leave a slice with two
//! holders. The design is in the rkb Book's design note "Sharded operators".
//!
//! - [`fnv1a64`] and [`Slices`]: the API server's hash (KEP-5866's `shardRange`) and the
//!   equal slices of its 64-bit space.
//! - [`assign`]: which live member should hold each slice (rendezvous hashing, with equal
//!   shares).
//! - [`Table`] and [`plan`]: who holds each slice, and what a replica claims and releases.
//! - [`Gate`]: the slices this replica serves, and the reconciles in flight in each.
//! - `membership`: the Leases that carry all this between replicas.
//! - `watch`: watches restricted to the served slices by the API server's `shardSelector`.

mod gate;
mod hash;
pub(crate) mod membership;
mod table;
pub(crate) mod watch;

pub use gate::{Gate, InFlight};
pub use hash::{Slices, fnv1a64, shard_key};
pub use table::{Liveness, Plan, Table, assign, plan};
