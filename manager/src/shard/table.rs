//! Who should hold each slice (the assignment), who does (the ownership table), and the
//! hand-off rule between the two.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use tokio::time::Instant;

use super::{Slices, fnv1a64};

/// Which live member should hold each slice (indexed by slice): rendezvous hashing with a
/// quota. Every member gets `slices / members` slices or one more, the slices it weighs
/// highest that no heavier (slice, member) pair took first. Plain rendezvous (each slice to
/// its heaviest member) moves the fewest slices, but leaves the load to chance: with 32
/// slices and five members, one member in a hundred groups gets none. The quota moves a few
/// more slices when members come and go (about a fifth more than the newcomer's share) and
/// keeps every member's share within one slice of the others'. Every replica that sees the
/// same members computes the same assignment.
pub fn assign(slices: Slices, members: &BTreeSet<String>) -> Vec<Option<&str>> {
    let mut assignment = vec![None; slices.count() as usize];
    if members.is_empty() {
        return assignment;
    }
    let mut pairs: Vec<_> = members
        .iter()
        .flat_map(|member| {
            slices
                .all()
                .map(move |slice| (weight(member, slice), slice))
        })
        .collect();
    pairs.sort_unstable_by(|a, b| b.cmp(a));
    let quota = slices.count() as usize / members.len();
    let mut held: HashMap<&str, usize> = HashMap::new();
    // First everyone's quota, then the remainder's slices one each to the members heaviest
    // for them.
    for limit in [quota, quota + 1] {
        for ((_, member), slice) in &pairs {
            let count = held.entry(*member).or_default();
            if assignment[*slice as usize].is_none() && *count < limit {
                assignment[*slice as usize] = Some(*member);
                *count += 1;
            }
        }
    }
    assignment
}

fn weight(member: &str, slice: u32) -> (u64, &str) {
    // FNV alone spreads near-identical inputs poorly; a finalizer (splitmix64's) mixes
    // every bit. The name breaks (improbable) ties the same way everywhere.
    let mut x = fnv1a64(format!("{member}/{slice}").as_bytes());
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31), member)
}

/// The ownership table: which member holds each slice (none: released). Written only with
/// the version it was read at, so two replicas never both claim a slice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    /// The slice count the table was made for; replicas with another count claim nothing.
    pub slices: u32,
    pub holders: BTreeMap<u32, String>,
}

impl Table {
    pub fn new(slices: Slices) -> Self {
        Self {
            slices: slices.count(),
            holders: BTreeMap::new(),
        }
    }

    pub fn holder(&self, slice: u32) -> Option<&str> {
        self.holders.get(&slice).map(String::as_str)
    }

    /// The slices `member` holds.
    pub fn held_by(&self, member: &str) -> BTreeSet<u32> {
        self.holders
            .iter()
            .filter(|(_, holder)| *holder == member)
            .map(|(slice, _)| *slice)
            .collect()
    }

    /// This table after `member` claims `claim` and releases `release`.
    pub fn with(&self, member: &str, claim: &BTreeSet<u32>, release: &BTreeSet<u32>) -> Self {
        let mut next = self.clone();
        for slice in release {
            if next.holder(*slice) == Some(member) {
                next.holders.remove(slice);
            }
        }
        for slice in claim {
            next.holders.insert(*slice, member.to_owned());
        }
        next
    }
}

/// What one replica does with the table on one round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Assigned here and free: released, or held by a member seen expired.
    pub claim: BTreeSet<u32>,
    /// Held here and assigned elsewhere: stop starting reconciles, drain, then clear.
    pub release: BTreeSet<u32>,
}

/// The hand-off rule, for replica `me` given the table it read, the members it sees live
/// (itself included) and the holders it has seen expired.
pub fn plan(
    me: &str,
    slices: Slices,
    table: &Table,
    live: &BTreeSet<String>,
    expired: &BTreeSet<String>,
) -> Plan {
    let mut plan = Plan::default();
    if table.slices != slices.count() {
        return plan;
    }
    for (slice, assignee) in slices.all().zip(assign(slices, live)) {
        let mine = assignee == Some(me);
        match table.holder(slice) {
            None if mine => {
                plan.claim.insert(slice);
            }
            Some(holder) if mine && holder != me && expired.contains(holder) => {
                plan.claim.insert(slice);
            }
            Some(holder) if !mine && holder == me => {
                plan.release.insert(slice);
            }
            _ => {}
        }
    }
    plan
}

/// Members as this replica sees them: when each one's Lease last changed, by this replica's
/// own clock (never the writer's).
#[derive(Debug, Default)]
pub struct Liveness {
    /// Member → (its Lease's resourceVersion, or none while absent; when that was first seen).
    seen: HashMap<String, (Option<String>, Instant)>,
}

impl Liveness {
    /// Records the Leases listed now (member, resourceVersion) and, as absent, the holders
    /// of the table that have none; forgets everyone else.
    pub fn observe<'a>(
        &mut self,
        listed: impl IntoIterator<Item = (String, String)>,
        holders: impl IntoIterator<Item = &'a str>,
        now: Instant,
    ) {
        let mut current: HashMap<String, Option<String>> = listed
            .into_iter()
            .map(|(member, version)| (member, Some(version)))
            .collect();
        for holder in holders {
            current.entry(holder.to_owned()).or_insert(None);
        }
        self.seen.retain(|member, _| current.contains_key(member));
        for (member, version) in current {
            match self.seen.get_mut(&member) {
                Some((seen, _)) if *seen == version => {}
                Some(entry) => *entry = (version, now),
                None => {
                    self.seen.insert(member, (version, now));
                }
            }
        }
    }

    /// Members whose Lease exists and changed within `lease_duration`.
    pub fn live(&self, now: Instant, lease_duration: Duration) -> BTreeSet<String> {
        self.seen
            .iter()
            .filter(|(_, (version, at))| {
                version.is_some() && now.duration_since(*at) <= lease_duration
            })
            .map(|(member, _)| member.clone())
            .collect()
    }

    /// Members whose Lease (or its absence) has not changed for longer than
    /// `lease_duration`: their slices may be taken over.
    pub fn expired(&self, now: Instant, lease_duration: Duration) -> BTreeSet<String> {
        self.seen
            .iter()
            .filter(|(_, (_, at))| now.duration_since(*at) > lease_duration)
            .map(|(member, _)| member.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests;
