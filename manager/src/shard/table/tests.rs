use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::shard::{Gate, InFlight};

fn members(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// The name of replica `i` of group `group`, shaped like the manager's
/// (`<group>-shard-<uuid>`) and as scattered.
fn replica(group: u32, i: u32) -> String {
    format!(
        "op-shard-{:016x}",
        fnv1a64(format!("{group}/{i}").as_bytes())
    )
}

fn counts<'a>(assignment: &[Option<&'a str>]) -> BTreeMap<&'a str, usize> {
    let mut counts = BTreeMap::new();
    for member in assignment.iter().flatten() {
        *counts.entry(*member).or_default() += 1;
    }
    counts
}

#[test]
fn every_member_gets_its_share_within_one_slice() {
    // Plain rendezvous leaves a member of five without a slice of 32 in about one group
    // in a hundred; these are 200 groups of replica-like names.
    for slices in [16, 32, 64] {
        let slices = Slices::new(slices).unwrap();
        for group in 0..200 {
            for size in 1..=8 {
                let members: BTreeSet<String> = (0..size).map(|i| replica(group, i)).collect();
                let assignment = assign(slices, &members);
                let share = slices.count() as usize / size as usize;
                let counts = counts(&assignment);
                assert!(assignment.iter().all(Option::is_some));
                assert_eq!(counts.len(), size as usize);
                for (member, count) in counts {
                    assert!(
                        count == share || count == share + 1,
                        "{member} got {count} of {} slices among {size} members",
                        slices.count()
                    );
                }
            }
        }
    }
}

#[test]
fn a_member_coming_or_going_moves_little_more_than_its_share() {
    let slices = Slices::new(32).unwrap();
    let (mut moved, mut share) = (0, 0);
    for group in 0..100 {
        let three: BTreeSet<String> = (0..3).map(|i| replica(group, i)).collect();
        let four: BTreeSet<String> = (0..4).map(|i| replica(group, i)).collect();
        let (before, after) = (assign(slices, &three), assign(slices, &four));
        let newcomer = replica(group, 3);
        let taken = counts(&after)[newcomer.as_str()];
        let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        // Each slice the newcomer takes moves once; others move only to rebalance.
        assert!(changed >= taken);
        assert!(
            changed <= 2 * taken,
            "3 → 4 moved {changed} slices, the newcomer took {taken}"
        );
        // Going back to three restores the assignment: it depends on the members alone.
        assert_eq!(assign(slices, &three), before);
        moved += changed;
        share += taken;
    }
    // On average within a quarter of the least possible.
    assert!(
        moved * 4 <= share * 5,
        "moved {moved} slices for shares of {share}"
    );
    assert_eq!(assign(slices, &BTreeSet::new()), vec![None; 32]);
}

#[test]
fn a_slice_held_by_a_live_member_is_not_claimed_but_one_held_by_an_expired_member_is() {
    let slices = Slices::new(1).unwrap();
    let me = ["me", "other"]
        .into_iter()
        .find(|m| assign(slices, &members(&["me", "other"]))[0] == Some(*m))
        .unwrap();
    let other = if me == "me" { "other" } else { "me" };
    let mut table = Table::new(slices);
    table.holders.insert(0, other.to_owned());
    let live = members(&["me", "other"]);
    let waiting = plan(me, slices, &table, &live, &BTreeSet::new());
    assert_eq!(
        waiting,
        Plan::default(),
        "the holder is live: wait for its release"
    );
    let taking = plan(me, slices, &table, &live, &members(&[other]));
    assert_eq!(taking.claim, BTreeSet::from([0]));

    // The holder sees the slice assigned elsewhere and releases it.
    let releasing = plan(other, slices, &table, &live, &BTreeSet::new());
    assert_eq!(releasing.release, BTreeSet::from([0]));
}

#[test]
fn a_replica_with_another_slice_count_claims_nothing() {
    let table = Table::new(Slices::new(32).unwrap());
    let plan = plan(
        "me",
        Slices::new(16).unwrap(),
        &table,
        &members(&["me"]),
        &BTreeSet::new(),
    );
    assert_eq!(plan, Plan::default());
}

#[test]
fn liveness_is_judged_by_the_observers_clock_from_changes() {
    let lease = Duration::from_secs(4);
    let start = Instant::now();
    let mut liveness = Liveness::default();
    let at = |s: u64| start + Duration::from_secs(s);
    liveness.observe([("a".to_owned(), "1".to_owned())], ["gone"], at(0));
    assert_eq!(liveness.live(at(4), lease), members(&["a"]));
    // "gone" holds a slice but has no Lease: expired only once that absence is old.
    assert!(liveness.expired(at(4), lease).is_empty());
    // "a" keeps renewing; "gone" stays absent.
    liveness.observe([("a".to_owned(), "2".to_owned())], ["gone"], at(3));
    assert_eq!(liveness.live(at(7), lease), members(&["a"]));
    assert_eq!(liveness.expired(at(7), lease), members(&["gone"]));
    assert_eq!(liveness.expired(at(8), lease), members(&["gone", "a"]));
    assert!(liveness.live(at(8), lease).is_empty());
}

// A simulation of replicas sharing one ownership table, on a simulated clock: renewals,
// reads and writes at independent times, request latency, reconciles of random length,
// members joining, leaving gracefully, and cut off from the API server. At every step, no
// slice is served or has reconciles in flight on two replicas.

const LEASE: u64 = 4_000;
const RENEW_DEADLINE: u64 = 3_000;
const RETRY: u64 = 500;
const STEP: u64 = 10;
const SLICES: u32 = 16;

/// xorshift64*: deterministic runs from a seed, without a dependency.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

#[derive(Default)]
struct Server {
    leases: BTreeMap<String, u64>,
    writes: u64,
    table: Table,
    table_version: u64,
}

#[derive(PartialEq)]
enum Phase {
    Running,
    Leaving,
    /// Cut off from the API server: neither renews, reads nor writes.
    Partitioned,
    Gone,
}

struct Pending {
    at: u64,
    read_version: u64,
    next: Table,
    claim: BTreeSet<u32>,
}

struct Replica {
    id: String,
    gate: Gate,
    liveness: Liveness,
    phase: Phase,
    next_round: u64,
    last_renewed: u64,
    pending: Option<Pending>,
    work: Vec<(u64, InFlight)>,
}

struct Simulation {
    random: Random,
    now: u64,
    origin: Instant,
    slices: Slices,
    server: Server,
    replicas: Vec<Replica>,
    /// When each slice was last served by someone.
    last_served: BTreeMap<u32, u64>,
    /// The longest time a slice was served by no one, after the first claims.
    longest_gap: u64,
}

impl Simulation {
    fn new(seed: u64) -> Self {
        let slices = Slices::new(SLICES).unwrap();
        Self {
            random: Random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
            now: 0,
            origin: Instant::now(),
            slices,
            server: Server {
                table: Table::new(slices),
                ..Server::default()
            },
            replicas: Vec::new(),
            last_served: BTreeMap::new(),
            longest_gap: 0,
        }
    }

    fn join(&mut self) {
        let id = format!("replica-{}", self.replicas.len());
        let next_round = self.now + self.random.below(RETRY);
        self.replicas.push(Replica {
            id,
            gate: Gate::new(self.slices),
            liveness: Liveness::default(),
            phase: Phase::Running,
            next_round,
            last_renewed: self.now,
            pending: None,
            work: Vec::new(),
        });
    }

    fn running(&self) -> Vec<usize> {
        (0..self.replicas.len())
            .filter(|i| self.replicas[*i].phase == Phase::Running)
            .collect()
    }

    fn run_until(&mut self, end: u64) {
        while self.now < end {
            self.now += STEP;
            for index in 0..self.replicas.len() {
                self.step(index);
            }
            self.check();
        }
    }

    fn step(&mut self, index: usize) {
        let now = self.now;
        let instant = self.origin + Duration::from_millis(now);
        let replica = &mut self.replicas[index];
        replica.work.retain(|(end, _)| *end > now);
        if replica.phase == Phase::Gone {
            return;
        }
        // The manager exits at the renew deadline: nothing of it runs any more.
        if now > replica.last_renewed + RENEW_DEADLINE {
            replica.gate.stop_all();
            replica.work.clear();
            replica.phase = Phase::Gone;
            return;
        }
        if let Some(pending) = replica.pending.take_if(|p| p.at <= now) {
            if replica.phase != Phase::Partitioned
                && self.server.table_version == pending.read_version
            {
                self.server.table = pending.next;
                self.server.table_version += 1;
                replica.gate.serve(pending.claim);
            }
            if replica.phase == Phase::Leaving && self.server.table.held_by(&replica.id).is_empty()
            {
                self.server.leases.remove(&replica.id);
                replica.phase = Phase::Gone;
                return;
            }
        }
        // Reconciles arrive for every slice; only the gate lets them start.
        for _ in 0..2 {
            let key = format!("uid-{}", self.random.below(10_000));
            if let Some(in_flight) = replica.gate.try_start(&key) {
                let end = now + 1 + self.random.below(1_500);
                replica.work.push((end, in_flight));
            }
        }
        if now < replica.next_round || replica.pending.is_some() {
            return;
        }
        replica.next_round = now + RETRY;
        if replica.phase == Phase::Partitioned {
            return;
        }
        self.server.writes += 1;
        self.server
            .leases
            .insert(replica.id.clone(), self.server.writes);
        replica.last_renewed = now;

        let table = self.server.table.clone();
        replica.liveness.observe(
            self.server
                .leases
                .iter()
                .map(|(id, version)| (id.clone(), version.to_string())),
            table.holders.values().map(String::as_str),
            instant,
        );
        let mut live = replica.liveness.live(instant, Duration::from_millis(LEASE));
        let expired = replica
            .liveness
            .expired(instant, Duration::from_millis(LEASE));
        let plan = if replica.phase == Phase::Leaving {
            replica.gate.stop_all();
            Plan {
                claim: BTreeSet::new(),
                release: table.held_by(&replica.id),
            }
        } else {
            live.insert(replica.id.clone());
            plan(&replica.id, self.slices, &table, &live, &expired)
        };
        for slice in replica.gate.serving() {
            if plan.release.contains(&slice) || table.holder(slice) != Some(replica.id.as_str()) {
                replica.gate.stop(slice);
            }
        }
        // As the manager's round: a slice held and no longer to release serves again (one
        // stopped for a release the assignment then took back).
        if replica.phase != Phase::Leaving {
            let held = table.held_by(&replica.id);
            replica.gate.serve(held.difference(&plan.release).copied());
        }
        let drained: BTreeSet<u32> = plan
            .release
            .iter()
            .copied()
            .filter(|slice| replica.gate.in_flight(*slice) == 0)
            .collect();
        let next = table.with(&replica.id, &plan.claim, &drained);
        if next != table || replica.phase == Phase::Leaving {
            replica.pending = Some(Pending {
                at: now + 1 + self.random.below(300),
                read_version: self.server.table_version,
                next,
                claim: plan.claim,
            });
        }
    }

    /// Never two replicas in one slice; and how long slices go unserved.
    fn check(&mut self) {
        for slice in self.slices.all() {
            let busy: Vec<&str> = self
                .replicas
                .iter()
                .filter(|r| r.gate.serving().contains(&slice) || r.gate.in_flight(slice) > 0)
                .map(|r| r.id.as_str())
                .collect();
            assert!(
                busy.len() <= 1,
                "at {} ms, slice {slice} is busy on {busy:?}",
                self.now
            );
            if busy.is_empty() {
                if let Some(last) = self.last_served.get(&slice) {
                    self.longest_gap = self.longest_gap.max(self.now - last);
                }
            } else {
                self.last_served.insert(slice, self.now);
            }
        }
    }

    fn all_served_by_running_replicas(&self) -> bool {
        let running = self.running();
        self.slices.all().all(|slice| {
            running
                .iter()
                .any(|i| self.replicas[*i].gate.serving().contains(&slice))
        })
    }
}

/// 3 replicas, then 5, then 2 (three leave gracefully), then one of those cut off from the
/// API server while a new one joins: never two in a slice, and every slice served at the end
/// with no gap longer than a lease duration and a few rounds.
#[test]
fn never_two_replicas_in_a_slice_through_scaling_and_a_partition() {
    for seed in 0..12 {
        let mut sim = Simulation::new(seed);
        for _ in 0..3 {
            sim.join();
        }
        sim.run_until(8_000);
        assert!(
            sim.all_served_by_running_replicas(),
            "seed {seed}: 3 replicas"
        );
        for _ in 0..2 {
            sim.join();
        }
        sim.run_until(20_000);
        assert!(
            sim.all_served_by_running_replicas(),
            "seed {seed}: 5 replicas"
        );
        for index in [0, 2, 4] {
            sim.replicas[index].phase = Phase::Leaving;
        }
        sim.run_until(32_000);
        assert_eq!(sim.running().len(), 2);
        assert!(
            sim.all_served_by_running_replicas(),
            "seed {seed}: 2 replicas"
        );
        assert!(
            sim.replicas
                .iter()
                .filter(|r| r.phase == Phase::Gone)
                .all(|r| r.gate.serving().is_empty()),
        );
        sim.replicas[1].phase = Phase::Partitioned;
        sim.join();
        sim.run_until(50_000);
        assert!(
            sim.all_served_by_running_replicas(),
            "seed {seed}: after the partition"
        );
        // A cut-off holder's slices wait a lease duration after its last renewal was
        // seen, plus the rounds and latency of the claim.
        assert!(
            sim.longest_gap <= LEASE + 3 * RETRY + 300,
            "seed {seed}: a slice went unserved for {} ms",
            sim.longest_gap
        );
    }
}
