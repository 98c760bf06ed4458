//! Storage version migration: after a CRD's storage version moves (say from `v1alpha1` to
//! `v1beta1`), the objects already in etcd stay encoded at the old version until something
//! writes them, and `status.storedVersions` keeps the old version listed, so the version can
//! never be removed from the CRD. [`Migration`] rewrites every stored object of a CRD at the
//! current storage version, then trims `status.storedVersions` to that version alone: what
//! kube-storage-version-migrator does in a cluster, and what operators otherwise write by hand.
//!
//! How, for each CRD:
//!
//! 1. Read the CRD: its storage version, `status.storedVersions`, a served version to talk to.
//! 2. Wait until discovery publishes the `storageVersionHash` of that storage version, the
//!    sign that the API server answering now encodes at it (a CRD change takes effect
//!    asynchronously); refuse to go on after a timeout.
//! 3. List the objects page by page (`limit` and continue tokens, every namespace) and send
//!    each an empty merge patch (`{}`). The API server applies it to the object as stored,
//!    encodes the result at the storage version and writes it only if the bytes differ: an
//!    object at an older version is rewritten (its `resourceVersion` changes), one already at
//!    the storage version is left as is (nothing is written, no watch event).
//! 4. Only if every listed object was rewritten or found current (or deleted meanwhile, a
//!    404), trim `status.storedVersions` to the storage version, with the CRD's
//!    `resourceVersion` as a precondition: a CRD changed since it was read (a new storage
//!    version, say) is read again and checked again rather than trimmed blindly.
//!
//! Every request waits for a shared pace (`requests_per_second`, burst 1). Conflicts (409),
//! throttling (429), server errors (5xx) and transport errors are retried with exponential
//! backoff; as the patch is empty, a retry applies it to the object as it is then (no read
//! first, hence no `get` permission). A 404 means the object was deleted after the list:
//! nothing left to migrate. A 401/403 stops the CRD at once (a missing RBAC rule fails every
//! object alike); any other refusal (a webhook denying the update, say) is recorded, the
//! other objects are still migrated, and `status.storedVersions` is left untouched.
//!
//! **Resumable by being idempotent**: a migration that stops (killed, a failure) is simply
//! run again from the start. What the first run rewrote is at the storage version already, so
//! the second run's patches write nothing for it (one request each, no etcd write), and the
//! trim happens only once a run has seen every object. No checkpoint is kept: a continue
//! token expires within minutes (etcd compaction), and a position saved elsewhere would need
//! a place to write and a rule to trust. A continue token that expires during a run (410
//! Gone) is replaced by the one the 410 carries (the list goes on from the next key, over the
//! current state: objects created meanwhile were written at the storage version anyway), or,
//! without one, the list starts again.
//!
//! What it cannot see: an API server of an HA control plane that still runs with the old
//! storage version (it would write objects at the old version after the migration passed
//! them). Discovery answers from one API server; run the migration after every API server
//! has the new CRD (for a CRD installed with `kubectl apply`, seconds).
//!
//! RBAC: `get` on `customresourcedefinitions` and `patch` on
//! `customresourcedefinitions/status` (both limited to the migrated CRDs' names), `list` and
//! `patch` on each migrated resource (every namespace). `rkb_runtime::storage_migration_rules`
//! gives exactly these for `make manifests`.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use tokio::time::Instant;

/// The requests per second a migration makes by default (`--migrate-storage-qps`).
pub const DEFAULT_REQUESTS_PER_SECOND: f64 = 20.0;
/// Objects per list page by default.
pub const DEFAULT_PAGE_SIZE: u32 = 500;
/// The field manager the migration's patches name (they change no field).
pub const FIELD_MANAGER: &str = "rkb-storage-migration";

/// The name of `K`'s CRD, `<plural>.<group>` (any version of the kind gives the same).
pub fn crd_name<K: Resource<DynamicType = ()>>() -> String {
    format!("{}.{}", K::plural(&()), K::group(&()))
}

/// The `storageVersionHash` discovery publishes for a resource stored as
/// `group/version, Kind=kind`: the first 8 bytes of the SHA-256 of `group/version/kind`,
/// base64 (k8s.io/apiserver's `discovery.StorageVersionHash`).
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    use base64::Engine as _;
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("{group}/{version}/{kind}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(&digest.as_ref()[..8])
}

/// Rewrites the stored objects of CRDs at their storage version; see the [module docs](self).
#[derive(Clone)]
pub struct Migration {
    client: Client,
    requests_per_second: f64,
    page_size: u32,
    attempts: u32,
    first_retry_delay: Duration,
    discovery_timeout: Duration,
}

impl fmt::Debug for Migration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Migration")
            .field("requests_per_second", &self.requests_per_second)
            .field("page_size", &self.page_size)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl Migration {
    /// A migration through `client`, at [`DEFAULT_REQUESTS_PER_SECOND`], pages of
    /// [`DEFAULT_PAGE_SIZE`], 6 attempts per request and 30 s for a new storage version to
    /// show in discovery.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            requests_per_second: DEFAULT_REQUESTS_PER_SECOND,
            page_size: DEFAULT_PAGE_SIZE,
            attempts: 6,
            first_retry_delay: Duration::from_millis(200),
            discovery_timeout: Duration::from_secs(30),
        }
    }

    /// At most this many requests per second (every request: reads, lists, patches); a
    /// value that is not positive and finite means no limit.
    #[must_use]
    pub fn requests_per_second(mut self, requests_per_second: f64) -> Self {
        self.requests_per_second = requests_per_second;
        self
    }

    /// Objects per list page (at least 1).
    #[must_use]
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// Attempts per request before giving up on a retriable error (at least 1), and the
    /// delay before the first retry (doubled each time, at most 5 s).
    #[must_use]
    pub fn retries(mut self, attempts: u32, first_delay: Duration) -> Self {
        self.attempts = attempts.max(1);
        self.first_retry_delay = first_delay;
        self
    }

    /// How long to wait for discovery to publish the CRD's current storage version.
    #[must_use]
    pub fn discovery_timeout(mut self, timeout: Duration) -> Self {
        self.discovery_timeout = timeout;
        self
    }

    /// Migrates each CRD in turn (all of them, whatever fails), in one pace.
    pub async fn run(
        &self,
        crds: impl IntoIterator<Item = impl AsRef<str>>,
    ) -> Vec<(String, Result<Report, Error>)> {
        let mut pace = Pace::new(self.requests_per_second);
        let mut results = Vec::new();
        for crd in crds {
            let crd = crd.as_ref().to_owned();
            let result = self.migrate_paced(&crd, &mut pace).await;
            results.push((crd, result));
        }
        results
    }

    /// Migrates the CRD named `crd` (`<plural>.<group>`, see [`crd_name`]).
    pub async fn migrate(&self, crd: &str) -> Result<Report, Error> {
        self.migrate_paced(crd, &mut Pace::new(self.requests_per_second))
            .await
    }

    async fn migrate_paced(&self, name: &str, pace: &mut Pace) -> Result<Report, Error> {
        let started = Instant::now();
        let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let mut report = Report {
            crd: name.to_owned(),
            ..Report::default()
        };
        let crd = self
            .call(pace, &mut report, Retry::Conflicts, || crds.get(name))
            .await
            .map_err(|source| Error::ReadCrd {
                crd: name.to_owned(),
                source,
            })?;
        let versions = Versions::of(&crd)?;
        report.storage_version.clone_from(&versions.storage);
        report.stored_versions_before = stored_versions(&crd);
        tracing::info!(
            crd = name,
            storage_version = %versions.storage,
            stored_versions = ?report.stored_versions_before,
            "migrating stored objects to the storage version"
        );
        self.wait_until_in_effect(&versions, pace, &mut report)
            .await?;

        let failures = self.rewrite_all(&versions, pace, &mut report).await?;
        if !failures.is_empty() {
            return Err(Error::Incomplete {
                crd: name.to_owned(),
                failed: failures.len(),
                listed: report.listed,
                kept: report.stored_versions_before.clone(),
                first: failures.into_iter().take(5).collect(),
            });
        }
        self.trim(&crds, &versions, pace, &mut report).await?;
        report.elapsed = started.elapsed();
        tracing::info!(
            crd = name,
            listed = report.listed,
            rewritten = report.rewritten,
            unchanged = report.unchanged,
            deleted = report.deleted,
            retries = report.retries,
            requests = report.requests,
            stored_versions = ?[&versions.storage],
            elapsed = ?report.elapsed,
            "storage version migration done"
        );
        Ok(report)
    }

    /// Step 2: discovery publishes the hash of the storage version the API server encodes at.
    async fn wait_until_in_effect(
        &self,
        versions: &Versions,
        pace: &mut Pace,
        report: &mut Report,
    ) -> Result<(), Error> {
        let expected = storage_version_hash(&versions.group, &versions.storage, &versions.kind);
        let group_version = format!("{}/{}", versions.group, versions.served);
        let deadline = Instant::now() + self.discovery_timeout;
        loop {
            let found = self
                .call(pace, report, Retry::Conflicts, || {
                    self.client.list_api_group_resources(&group_version)
                })
                .await
                .ok()
                .and_then(|list| {
                    list.resources
                        .into_iter()
                        .find(|r| r.name == versions.plural)
                })
                .map(|resource| resource.storage_version_hash);
            match found {
                Some(Some(hash)) if hash == expected => return Ok(()),
                Some(None) => {
                    tracing::warn!(crd = %versions.crd, "discovery publishes no storageVersionHash: cannot check that the API server encodes at the storage version yet");
                    return Ok(());
                }
                found if Instant::now() >= deadline => {
                    return Err(Error::NotInEffect {
                        crd: versions.crd.clone(),
                        storage_version: versions.storage.clone(),
                        expected,
                        found: found.flatten(),
                        waited: self.discovery_timeout,
                    });
                }
                _ => tokio::time::sleep(Duration::from_millis(250)).await,
            }
        }
    }

    /// Step 3: every object, page by page; the objects that could not be rewritten.
    async fn rewrite_all(
        &self,
        versions: &Versions,
        pace: &mut Pace,
        report: &mut Report,
    ) -> Result<Vec<String>, Error> {
        let resource = versions.resource();
        let all: Api<DynamicObject> = Api::all_with(self.client.clone(), &resource);
        let mut failures = Vec::new();
        let mut token: Option<String> = None;
        let mut restarts_without_token = 0;
        loop {
            let params = ListParams {
                limit: Some(self.page_size),
                continue_token: token.clone(),
                ..ListParams::default()
            };
            let page = match self
                .call(pace, report, Retry::Conflicts, || all.list(&params))
                .await
            {
                Ok(page) => page,
                Err(kube::Error::Api(status)) if status.code == 410 => {
                    report.list_restarts += 1;
                    token = status
                        .metadata
                        .as_ref()
                        .and_then(|meta| meta.continue_.clone())
                        .filter(|t| !t.is_empty());
                    if token.is_none() {
                        restarts_without_token += 1;
                        if restarts_without_token >= self.attempts {
                            return Err(Error::List {
                                crd: versions.crd.clone(),
                                source: kube::Error::Api(status),
                            });
                        }
                    }
                    tracing::warn!(crd = %versions.crd, from_next_key = token.is_some(), "the list's continue token expired (410): listing on");
                    continue;
                }
                Err(source) => {
                    return Err(Error::List {
                        crd: versions.crd.clone(),
                        source,
                    });
                }
            };
            for object in page.items {
                self.rewrite(&resource, object, pace, report, &mut failures)
                    .await?;
            }
            tracing::info!(
                crd = %versions.crd,
                listed = report.listed,
                rewritten = report.rewritten,
                unchanged = report.unchanged,
                deleted = report.deleted,
                failed = failures.len(),
                remaining = page.metadata.remaining_item_count,
                "migrating"
            );
            token = page.metadata.continue_.filter(|t| !t.is_empty());
            if token.is_none() {
                return Ok(failures);
            }
        }
    }

    /// The empty merge patch of one object.
    async fn rewrite(
        &self,
        resource: &ApiResource,
        object: DynamicObject,
        pace: &mut Pace,
        report: &mut Report,
        failures: &mut Vec<String>,
    ) -> Result<(), Error> {
        report.listed += 1;
        let name = object.name_any();
        let namespace = object.namespace();
        let api: Api<DynamicObject> = match &namespace {
            Some(namespace) => Api::namespaced_with(self.client.clone(), namespace, resource),
            None => Api::all_with(self.client.clone(), resource),
        };
        let key = namespace.map_or_else(|| name.clone(), |ns| format!("{ns}/{name}"));
        let listed_version = object.resource_version();
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        let empty = Patch::Merge(serde_json::json!({}));
        match self
            .call(pace, report, Retry::Conflicts, || {
                api.patch(&name, &params, &empty)
            })
            .await
        {
            Ok(written) if written.resource_version() == listed_version => report.unchanged += 1,
            Ok(_) => report.rewritten += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => {
                tracing::debug!(object = %key, "deleted since it was listed");
                report.deleted += 1;
            }
            Err(kube::Error::Api(status)) if matches!(status.code, 401 | 403) => {
                return Err(Error::Forbidden {
                    crd: resource_crd(resource),
                    message: status.message,
                });
            }
            Err(error) => {
                tracing::warn!(object = %key, error = %error, "cannot rewrite at the storage version");
                failures.push(format!("{key}: {error}"));
            }
        }
        Ok(())
    }

    /// Step 4: `status.storedVersions` = the storage version, if the CRD is still as read.
    async fn trim(
        &self,
        crds: &Api<CustomResourceDefinition>,
        versions: &Versions,
        pace: &mut Pace,
        report: &mut Report,
    ) -> Result<(), Error> {
        let read_error = |source| Error::ReadCrd {
            crd: versions.crd.clone(),
            source,
        };
        for _ in 0..self.attempts {
            let crd = self
                .call(pace, report, Retry::Conflicts, || crds.get(&versions.crd))
                .await
                .map_err(read_error)?;
            let now = Versions::of(&crd)?;
            if now.storage != versions.storage {
                return Err(Error::StorageVersionChanged {
                    crd: versions.crd.clone(),
                    before: versions.storage.clone(),
                    after: now.storage,
                });
            }
            if stored_versions(&crd) == [versions.storage.as_str()] {
                return Ok(());
            }
            let patch = serde_json::json!({
                "metadata": { "resourceVersion": crd.resource_version() },
                "status": { "storedVersions": [versions.storage] },
            });
            let patch = Patch::Merge(patch);
            let params = PatchParams {
                field_manager: Some(FIELD_MANAGER.to_owned()),
                ..PatchParams::default()
            };
            // A conflict is not retried as is: the precondition would fail again.
            match self
                .call(pace, report, Retry::NotConflicts, || {
                    crds.patch_status(&versions.crd, &params, &patch)
                })
                .await
            {
                Ok(_) => {
                    report.trimmed = true;
                    tracing::info!(crd = %versions.crd, removed = ?stored_versions(&crd).into_iter().filter(|v| *v != versions.storage).collect::<Vec<_>>(), "trimmed status.storedVersions");
                    return Ok(());
                }
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    report.retries += 1;
                    tracing::debug!(crd = %versions.crd, "the CRD changed since it was read: reading it again");
                }
                Err(source) => {
                    return Err(Error::Trim {
                        crd: versions.crd.clone(),
                        source,
                    });
                }
            }
        }
        Err(Error::CrdKeptChanging {
            crd: versions.crd.clone(),
            attempts: self.attempts,
        })
    }

    /// One request at the pace, retried with backoff while its error is transient.
    async fn call<T, F, Fut>(
        &self,
        pace: &mut Pace,
        report: &mut Report,
        retry: Retry,
        mut request: F,
    ) -> Result<T, kube::Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, kube::Error>>,
    {
        let mut delay = self.first_retry_delay;
        let mut attempt = 1;
        loop {
            pace.wait().await;
            report.requests += 1;
            match request().await {
                Err(error) if attempt < self.attempts && retry.transient(&error) => {
                    report.retries += 1;
                    tracing::debug!(error = %error, attempt, "retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(5));
                    attempt += 1;
                }
                result => return result,
            }
        }
    }
}

/// Which errors a request retries.
#[derive(Clone, Copy)]
enum Retry {
    /// 409, 429, 5xx and transport errors.
    Conflicts,
    /// 429, 5xx and transport errors.
    NotConflicts,
}

impl Retry {
    fn transient(self, error: &kube::Error) -> bool {
        match error {
            kube::Error::Api(status) => match status.code {
                409 => matches!(self, Self::Conflicts),
                429 | 500 | 502 | 503 | 504 => true,
                _ => false,
            },
            kube::Error::HyperError(_) | kube::Error::Service(_) => true,
            _ => false,
        }
    }
}

/// The requests' pace: one every `1 / requests_per_second`, no burst.
struct Pace {
    interval: Option<Duration>,
    next: Option<Instant>,
}

impl Pace {
    fn new(requests_per_second: f64) -> Self {
        let interval = (requests_per_second.is_finite() && requests_per_second > 0.0)
            .then(|| Duration::from_secs_f64(1.0 / requests_per_second));
        Self {
            interval,
            next: None,
        }
    }

    async fn wait(&mut self) {
        let Some(interval) = self.interval else {
            return;
        };
        let now = Instant::now();
        let at = self.next.filter(|next| *next > now).unwrap_or(now);
        tokio::time::sleep_until(at).await;
        self.next = Some(at + interval);
    }
}

/// What the migration of one CRD did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// `<plural>.<group>`.
    pub crd: String,
    /// The version every object is now stored at.
    pub storage_version: String,
    /// `status.storedVersions` when the migration began.
    pub stored_versions_before: Vec<String>,
    /// Objects listed (and patched); counted again when a list starts over.
    pub listed: usize,
    /// Objects the API server wrote anew: their `resourceVersion` changed (stored at another
    /// version, or changed by someone else since the list).
    pub rewritten: usize,
    /// Objects already at the storage version: the API server wrote nothing.
    pub unchanged: usize,
    /// Objects deleted between the list and their patch (404).
    pub deleted: usize,
    /// Requests made, discovery and retries included.
    pub requests: usize,
    /// Requests retried (409, 429, 5xx, transport errors, a changed CRD at the trim).
    pub retries: usize,
    /// Lists that went on after their continue token expired (410).
    pub list_restarts: usize,
    /// Whether `status.storedVersions` was trimmed (false when it already was the storage
    /// version alone).
    pub trimmed: bool,
    /// From reading the CRD to the trim.
    pub elapsed: Duration,
}

/// Why a CRD was not (fully) migrated; `status.storedVersions` is then left as it was.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read CustomResourceDefinition {crd}: {source}")]
    ReadCrd {
        crd: String,
        #[source]
        source: kube::Error,
    },
    #[error("CustomResourceDefinition {crd} has no storage version, or no served version")]
    NoStorageVersion { crd: String },
    #[error(
        "the API server does not encode {crd} at its storage version {storage_version} yet: \
         after {waited:?}, discovery's storageVersionHash is {found:?}, not {expected:?}; \
         wait until the CRD change is in effect and run the migration again"
    )]
    NotInEffect {
        crd: String,
        storage_version: String,
        expected: String,
        found: Option<String>,
        waited: Duration,
    },
    #[error("cannot list the objects of {crd}: {source}")]
    List {
        crd: String,
        #[source]
        source: kube::Error,
    },
    #[error(
        "forbidden to migrate {crd}: {message}; the migration needs `list` and `patch` on the \
         resource, `get` on customresourcedefinitions and `patch` on \
         customresourcedefinitions/status"
    )]
    Forbidden { crd: String, message: String },
    #[error(
        "{failed} of {listed} objects of {crd} could not be rewritten at the storage version, \
         so status.storedVersions stays {kept:?}; run the migration again once they can be \
         (first: {})",
        first.join("; ")
    )]
    Incomplete {
        crd: String,
        failed: usize,
        listed: usize,
        kept: Vec<String>,
        first: Vec<String>,
    },
    #[error(
        "the storage version of {crd} moved from {before} to {after} during the migration; \
         run it again"
    )]
    StorageVersionChanged {
        crd: String,
        before: String,
        after: String,
    },
    #[error(
        "cannot trim status.storedVersions of {crd}: the CRD changed under each of {attempts} \
         attempts; run the migration again"
    )]
    CrdKeptChanging { crd: String, attempts: u32 },
    #[error("cannot trim status.storedVersions of {crd}: {source}")]
    Trim {
        crd: String,
        #[source]
        source: kube::Error,
    },
}

/// What the migration needs to know of a CRD.
#[derive(Clone, Debug)]
struct Versions {
    crd: String,
    group: String,
    kind: String,
    plural: String,
    storage: String,
    /// The version requests use: the storage version if served, else the first served.
    served: String,
}

impl Versions {
    fn of(crd: &CustomResourceDefinition) -> Result<Self, Error> {
        let name = crd.name_any();
        let missing = || Error::NoStorageVersion { crd: name.clone() };
        let spec = &crd.spec;
        let storage = spec
            .versions
            .iter()
            .find(|v| v.storage)
            .ok_or_else(missing)?;
        let served = if storage.served {
            storage
        } else {
            spec.versions
                .iter()
                .find(|v| v.served)
                .ok_or_else(missing)?
        };
        Ok(Self {
            crd: name.clone(),
            group: spec.group.clone(),
            kind: spec.names.kind.clone(),
            plural: spec.names.plural.clone(),
            storage: storage.name.clone(),
            served: served.name.clone(),
        })
    }

    fn resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.served.clone(),
            api_version: format!("{}/{}", self.group, self.served),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

fn resource_crd(resource: &ApiResource) -> String {
    format!("{}.{}", resource.plural, resource.group)
}

fn stored_versions(crd: &CustomResourceDefinition) -> Vec<String> {
    crd.status
        .as_ref()
        .and_then(|status| status.stored_versions.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
