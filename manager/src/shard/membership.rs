//! The Leases that carry sharding between replicas:
//!
//! - one per replica, `<group>-shard-<uuid>`, labelled `rkb.dev/shard-group=<group>` and
//!   renewed every retry period with leader election's timing: its changes say the replica
//!   lives;
//! - one ownership table, `<group>-shards`, whose annotations say how many slices there are
//!   and which replica holds each; written only with the resourceVersion just read.
//!
//! Each round a replica renews its Lease, reads the members and the table, and applies
//! [`plan`](super::plan): it claims the slices assigned to it that are free or held by an
//! expired member, stops starting reconciles in those assigned elsewhere and clears them
//! once their reconciles have drained. It serves a slice only while the table it last read
//! or wrote names it. If no renewal succeeds within the renew deadline, it serves nothing
//! and reports the loss (the manager then exits, as on losing the leader Lease).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Context as _;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Gate, Liveness, Slices, Table, plan};
use crate::manager::leader::Timing;

const GROUP_LABEL: &str = "rkb.dev/shard-group";
const SLICES_ANNOTATION: &str = "rkb.dev/shard-slices";
const HOLDERS_ANNOTATION: &str = "rkb.dev/shard-holders";

/// This replica's part in a sharded group; serves the slices its [`Gate`] lets through.
pub(crate) struct Sharding {
    member: Member,
    lost: watch::Receiver<bool>,
    rounds: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Member {
    leases: Api<Lease>,
    group: String,
    /// This replica's Lease name: its name in the table.
    name: String,
    timing: Timing,
    gate: Gate,
}

impl Sharding {
    /// Joins the group `group` in `namespace` and starts its rounds.
    pub(crate) fn start(
        client: Client,
        namespace: &str,
        group: &str,
        timing: Timing,
        slices: Slices,
    ) -> Self {
        let member = Member {
            leases: Api::namespaced(client, namespace),
            group: group.to_owned(),
            name: format!("{group}-shard-{}", uuid::Uuid::new_v4().simple()),
            timing,
            gate: Gate::new(slices),
        };
        tracing::info!(member = %member.name, %namespace, slices = slices.count(), "joining the sharded group");
        let (lost_sender, lost) = watch::channel(false);
        let rounds = tokio::spawn(member.clone().rounds(lost_sender));
        Self {
            member,
            lost,
            rounds,
        }
    }

    pub(crate) fn gate(&self) -> Gate {
        self.member.gate.clone()
    }

    /// Resolves once renewals failed past the renew deadline; the replica serves nothing
    /// from then on. Cancel-safe.
    pub(crate) async fn lost(&mut self) {
        // Err: the rounds are gone without a word (they panicked): assume the worst.
        let _ = self.lost.wait_for(|lost| *lost).await;
        self.member.gate.stop_all();
    }

    /// Leaves the group once the controllers have stopped: clears this replica's slices in
    /// the table, so others claim them within a round, and deletes its Lease. Bounded by
    /// the renew deadline; on failure the slices are taken over once the Lease expires.
    pub(crate) async fn leave(self) {
        self.rounds.abort();
        let member = &self.member;
        member.gate.stop_all();
        match tokio::time::timeout(member.timing.renew_deadline, member.leave()).await {
            Ok(Ok(())) => tracing::info!(member = %member.name, "left the sharded group"),
            Ok(Err(error)) => {
                tracing::warn!(member = %member.name, error = format!("{error:#}"), "cannot release this replica's slices; they move once its Lease expires");
            }
            Err(_) => {
                tracing::warn!(member = %member.name, "releasing this replica's slices timed out; they move once its Lease expires");
            }
        }
    }
}

impl Drop for Sharding {
    fn drop(&mut self) {
        self.rounds.abort();
    }
}

/// What one replica remembers between rounds.
#[derive(Default)]
struct Memory {
    liveness: Liveness,
    /// The slice count of a table this replica disagrees with, once reported.
    reported_mismatch: Option<u32>,
}

impl Member {
    fn table_name(&self) -> String {
        format!("{}-shards", self.group)
    }

    /// A round every retry period until renewals fail past the renew deadline.
    async fn rounds(self, lost: watch::Sender<bool>) {
        let mut memory = Memory::default();
        let mut renewed = Instant::now();
        loop {
            let started = Instant::now();
            let deadline = renewed + self.timing.renew_deadline;
            match tokio::time::timeout_at(deadline, self.renew()).await {
                Ok(Ok(())) => {
                    renewed = started;
                    let deadline = renewed + self.timing.renew_deadline;
                    match tokio::time::timeout_at(deadline, self.round(&mut memory)).await {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => {
                            tracing::warn!(member = %self.name, error = format!("{error:#}"), "sharding round failed; retrying");
                        }
                        Err(_) => tracing::warn!(member = %self.name, "sharding round timed out"),
                    }
                }
                Ok(Err(error)) => {
                    tracing::warn!(member = %self.name, error = format!("{error:#}"), "cannot renew this replica's Lease; retrying until the renew deadline");
                }
                Err(_) => {}
            }
            if Instant::now() >= renewed + self.timing.renew_deadline {
                self.gate.stop_all();
                tracing::error!(member = %self.name, "no renewal of this replica's Lease within the renew deadline: serving no slice");
                lost.send_replace(true);
                return;
            }
            tokio::time::sleep_until(
                (started + self.timing.retry_period).min(renewed + self.timing.renew_deadline),
            )
            .await;
        }
    }

    async fn renew(&self) -> anyhow::Result<()> {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let spec = LeaseSpec {
            holder_identity: Some(self.name.clone()),
            lease_duration_seconds: Some(
                i32::try_from(self.timing.lease_duration.as_secs()).unwrap_or(i32::MAX),
            ),
            renew_time: Some(now),
            ..Default::default()
        };
        match self.leases.get_opt(&self.name).await? {
            Some(mut lease) => {
                lease.spec = Some(spec);
                self.leases
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
                    .with_context(|| format!("cannot renew Lease {}", self.name))?;
            }
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        labels: Some(BTreeMap::from([(
                            GROUP_LABEL.to_owned(),
                            self.group.clone(),
                        )])),
                        ..Default::default()
                    },
                    spec: Some(spec),
                };
                self.leases
                    .create(&PostParams::default(), &lease)
                    .await
                    .with_context(|| format!("cannot create Lease {}", self.name))?;
            }
        }
        Ok(())
    }

    /// Reads the members and the table, and claims and releases what the plan says.
    async fn round(&self, memory: &mut Memory) -> anyhow::Result<()> {
        let slices = self.gate.slices();
        let members = self
            .leases
            .list(&ListParams::default().labels(&format!("{GROUP_LABEL}={}", self.group)))
            .await
            .context("cannot list the sharded group's Leases")?;
        let Some((mut lease, table)) = self.read_table(slices).await? else {
            return Ok(());
        };
        let now = Instant::now();
        memory.liveness.observe(
            members.items.iter().filter_map(|lease| {
                Some((
                    lease.metadata.name.clone()?,
                    lease.metadata.resource_version.clone()?,
                ))
            }),
            table.holders.values().map(String::as_str),
            now,
        );

        // Only what the table just read names serves here.
        let held = table.held_by(&self.name);
        for slice in self.gate.serving() {
            if !held.contains(&slice) {
                self.gate.stop(slice);
            }
        }
        if table.slices != slices.count() {
            if memory.reported_mismatch != Some(table.slices) {
                tracing::error!(member = %self.name, table = %self.table_name(), table_slices = table.slices, slices = slices.count(),
                    "the sharded group's table has another slice count than --sharding-slices: this replica claims nothing; give every replica the same --sharding-slices");
                memory.reported_mismatch = Some(table.slices);
            }
            self.gate.stop_all();
            return Ok(());
        }

        let mut live = memory.liveness.live(now, self.timing.lease_duration);
        live.insert(self.name.clone());
        let expired = memory.liveness.expired(now, self.timing.lease_duration);
        let plan = plan(&self.name, slices, &table, &live, &expired);
        for slice in &plan.release {
            self.gate.stop(*slice);
        }
        self.gate.serve(held.difference(&plan.release).copied());
        let drained: BTreeSet<u32> = plan
            .release
            .iter()
            .copied()
            .filter(|slice| self.gate.in_flight(*slice) == 0)
            .collect();
        let next = table.with(&self.name, &plan.claim, &drained);
        if next == table {
            return Ok(());
        }
        write_table(&mut lease, &next);
        match self
            .leases
            .replace(&self.table_name(), &PostParams::default(), &lease)
            .await
        {
            Ok(_) => {
                self.gate.serve(plan.claim.iter().copied());
                tracing::info!(member = %self.name, claimed = ?plan.claim, released = ?drained, "sharding hand-off");
                Ok(())
            }
            // Another replica wrote first; the next round reads its table.
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(error) => Err(error).context("cannot update the sharded group's table"),
        }
    }

    /// The table and its Lease, created empty if missing (`None`: created by another
    /// replica meanwhile; read it next round).
    async fn read_table(&self, slices: Slices) -> anyhow::Result<Option<(Lease, Table)>> {
        let name = self.table_name();
        if let Some(lease) = self.leases.get_opt(&name).await? {
            let table = read_table(&lease)
                .with_context(|| format!("the annotations of Lease {name} are not a sharding table; delete it (every replica then starts over)"))?;
            return Ok(Some((lease, table)));
        }
        let mut lease = Lease {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..Default::default()
            },
            spec: None,
        };
        write_table(&mut lease, &Table::new(slices));
        match self.leases.create(&PostParams::default(), &lease).await {
            Ok(created) => Ok(Some((created, Table::new(slices)))),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
            Err(error) => Err(error).with_context(|| format!("cannot create Lease {name}")),
        }
    }

    async fn leave(&self) -> anyhow::Result<()> {
        for _ in 0..5 {
            let Some(mut lease) = self.leases.get_opt(&self.table_name()).await? else {
                break;
            };
            let table = read_table(&lease)?;
            let held = table.held_by(&self.name);
            if held.is_empty() {
                break;
            }
            write_table(&mut lease, &table.with(&self.name, &BTreeSet::new(), &held));
            match self
                .leases
                .replace(&self.table_name(), &PostParams::default(), &lease)
                .await
            {
                Ok(_) => break,
                Err(kube::Error::Api(status)) if status.code == 409 => continue,
                Err(error) => return Err(error.into()),
            }
        }
        match self
            .leases
            .delete(&self.name, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }
}

fn read_table(lease: &Lease) -> anyhow::Result<Table> {
    let annotations = lease.metadata.annotations.clone().unwrap_or_default();
    let slices = annotations
        .get(SLICES_ANNOTATION)
        .with_context(|| format!("no annotation {SLICES_ANNOTATION}"))?
        .parse()
        .with_context(|| format!("annotation {SLICES_ANNOTATION} is not a number"))?;
    let holders = match annotations.get(HOLDERS_ANNOTATION) {
        Some(json) => serde_json::from_str(json).with_context(|| {
            format!("annotation {HOLDERS_ANNOTATION} is not a map of slice to member")
        })?,
        None => BTreeMap::new(),
    };
    Ok(Table { slices, holders })
}

fn write_table(lease: &mut Lease, table: &Table) {
    let annotations = lease.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(SLICES_ANNOTATION.to_owned(), table.slices.to_string());
    annotations.insert(
        HOLDERS_ANNOTATION.to_owned(),
        serde_json::to_string(&table.holders).unwrap_or_default(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_round_trips_through_annotations() {
        let mut table = Table::new(Slices::new(8).unwrap());
        table.holders.insert(3, "op-shard-a".into());
        table.holders.insert(7, "op-shard-b".into());
        let mut lease = Lease::default();
        write_table(&mut lease, &table);
        let annotations = lease.metadata.annotations.as_ref().unwrap();
        assert_eq!(annotations[SLICES_ANNOTATION], "8");
        assert_eq!(
            annotations[HOLDERS_ANNOTATION],
            r#"{"3":"op-shard-a","7":"op-shard-b"}"#
        );
        assert_eq!(read_table(&lease).unwrap(), table);
        lease
            .metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(HOLDERS_ANNOTATION.into(), "[1]".into());
        assert!(read_table(&lease).is_err());
    }
}
