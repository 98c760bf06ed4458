//! Tests of the Secret controller against kube-fake-client's in-memory API.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::{reflector, watcher};
use kube::{Api, Client, ResourceExt};
use kube_fake_client::ClientBuilder;
use rkb_runtime::testing::{self, Fault, FaultKind, Faults, RbacAudit};

use super::*;

const PASSWORD: &str = "s3cr3t-hunter2-value";

fn namespace(name: &str) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, ByteString> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), ByteString(v.as_bytes().to_vec())))
        .collect()
}

fn secret(namespace: &str, name: &str, type_: &str, pairs: &[(&str, &str)]) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some([("team".to_owned(), "db".to_owned())].into()),
            ..Default::default()
        },
        type_: Some(type_.into()),
        data: Some(data(pairs)),
        ..Default::default()
    }
}

fn source(name: &str, pairs: &[(&str, &str)]) -> Secret {
    secret(SOURCE_NAMESPACE, name, SECRET_TYPE, pairs)
}

/// A copy as secret-sync writes it (to seed stale copies).
fn managed_copy(namespace: &str, name: &str, pairs: &[(&str, &str)]) -> Secret {
    copy_of(&source(name, pairs), namespace)
}

const NAMESPACES: [&str; 6] = [
    "default",
    "team-a",
    "team-b",
    "kube-system",
    "kube-public",
    SOURCE_NAMESPACE,
];

/// The in-memory API with `objects`, and the same client audited for RBAC and subject to
/// `faults`. (kube-fake-client 0.3 cannot serve Namespaces: `/api/v1/namespaces` is an
/// "Invalid path" to it; the reconciler reads them from a cache anyway, see [`namespaces`].)
async fn cluster(objects: Vec<Secret>, audit: &RbacAudit, faults: &Faults) -> (Client, Client) {
    let mut builder = ClientBuilder::new();
    for object in objects {
        builder = builder.with_object(object);
    }
    let fake = builder.build().await.expect("the in-memory API starts");
    let wrapped = testing::wrap(fake.clone(), audit, faults);
    (fake, wrapped)
}

/// The namespace cache, filled as its watcher would: the initial list of [`NAMESPACES`].
fn namespaces() -> reflector::store::Writer<Namespace> {
    let mut writer = reflector::store::Writer::default();
    writer.apply_watcher_event(&watcher::Event::Init);
    for ns in NAMESPACES {
        writer.apply_watcher_event(&watcher::Event::InitApply(namespace(ns)));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);
    writer
}

fn reconciler_with(
    client: Client,
    namespaces: &reflector::store::Writer<Namespace>,
) -> Arc<SecretReconciler> {
    Arc::new(SecretReconciler::new(
        client,
        Lister::new(namespaces.as_reader()),
        DEFAULT_BLOCKLIST.map(str::to_owned),
    ))
}

fn reconciler(client: Client) -> Arc<SecretReconciler> {
    reconciler_with(client, &namespaces())
}

/// What the Controller does: reconciles the latest version of the source until a reconcile
/// that found the finalizer in place (so it synced or cleaned up) succeeds. Returns the
/// number of failed attempts.
async fn converge(fake: &Client, ctx: &Arc<SecretReconciler>, name: &str) -> usize {
    let sources = Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE);
    let mut failures = 0;
    for _ in 0..50 {
        let Some(object) = sources.get_opt(name).await.unwrap() else {
            return failures;
        };
        let had_finalizer = object.finalizers().iter().any(|f| f == FINALIZER);
        match reconcile(Arc::new(object), ctx.clone()).await {
            Ok(_) if had_finalizer => return failures,
            Ok(_) => {}
            Err(error) => {
                eprintln!("reconcile failed: {error:?}");
                failures += 1
            }
        }
    }
    panic!("{name} did not converge within 50 reconciles");
}

/// Simulates `kubectl delete` of a source with the finalizer: the API server sets the
/// deletionTimestamp and the Controller reconciles that version until it succeeds. (The
/// in-memory API deletes at once, ignoring finalizers, so the version is made here.)
async fn delete_source(fake: &Client, ctx: &Arc<SecretReconciler>, name: &str) -> usize {
    let sources = Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE);
    let mut failures = 0;
    for _ in 0..50 {
        let mut deleting = sources.get(name).await.unwrap();
        if deleting.finalizers().is_empty() {
            sources.delete(name, &Default::default()).await.unwrap();
            return failures;
        }
        deleting.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
        if reconcile(Arc::new(deleting), ctx.clone()).await.is_err() {
            failures += 1;
        }
    }
    panic!("{name} was not cleaned up within 50 reconciles");
}

/// `namespace -> data` of every Secret named `name` outside the source namespace.
async fn secrets_named(fake: &Client, name: &str) -> BTreeMap<String, Secret> {
    Api::<Secret>::all(fake.clone())
        .list(&Default::default())
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.name_any() == name && s.namespace().as_deref() != Some(SOURCE_NAMESPACE))
        .map(|s| (s.namespace().unwrap(), s))
        .collect()
}

fn value(secret: &Secret, key: &str) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()[key].0.clone()).unwrap()
}

#[tokio::test]
async fn sources_are_copied_into_every_namespace_but_the_blocklist_and_the_source() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let (fake, client) = cluster(
        vec![source("db", &[("password", PASSWORD)])],
        &audit,
        &faults,
    )
    .await;
    let ctx = reconciler(client);
    assert_eq!(converge(&fake, &ctx, "db").await, 0);

    let copies = secrets_named(&fake, "db").await;
    assert_eq!(
        copies.keys().collect::<Vec<_>>(),
        ["default", "team-a", "team-b"]
    );
    for copy in copies.values() {
        assert_eq!(value(copy, "password"), PASSWORD);
        assert_eq!(copy.type_.as_deref(), Some(SECRET_TYPE));
        let labels = copy.labels();
        assert_eq!(labels["team"], "db", "the source's labels are copied");
        assert_eq!(labels[MANAGED_BY.0], MANAGED_BY.1);
        assert_eq!(labels[SOURCE_NAMESPACE_LABEL], SOURCE_NAMESPACE);
        assert_eq!(labels[SOURCE_NAME_LABEL], "db");
        assert!(copy.owner_references().is_empty());
        assert!(
            copy.finalizers().is_empty(),
            "only the source has the finalizer"
        );
    }
    let source = Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE)
        .get("db")
        .await
        .unwrap();
    assert_eq!(source.finalizers(), [FINALIZER]);
    assert_ne!(
        copies["default"].uid(),
        source.uid(),
        "copies are new objects, not the source's uid or resourceVersion"
    );

    // A second reconcile with nothing changed writes nothing.
    let before = copies["team-a"].resource_version();
    assert_eq!(converge(&fake, &ctx, "db").await, 0);
    assert_eq!(
        secrets_named(&fake, "db").await["team-a"].resource_version(),
        before
    );
}

#[test]
fn copies_carry_no_server_owned_metadata() {
    let mut source = source("db", &[("password", PASSWORD)]);
    source.metadata.resource_version = Some("42".into());
    source.metadata.uid = Some("a-uid".into());
    source.metadata.creation_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::now()));
    source.metadata.finalizers = Some(vec![FINALIZER.into()]);
    source.metadata.owner_references = Some(vec![Default::default()]);
    source.metadata.managed_fields = Some(vec![Default::default()]);
    let copy = copy_of(&source, "team-a");
    assert_eq!(copy.metadata.namespace.as_deref(), Some("team-a"));
    assert_eq!(copy.metadata.resource_version, None);
    assert_eq!(copy.metadata.uid, None);
    assert_eq!(copy.metadata.creation_timestamp, None);
    assert_eq!(copy.metadata.finalizers, None);
    assert_eq!(copy.metadata.owner_references, None);
    assert_eq!(copy.metadata.managed_fields, None);
    assert_eq!(copy.data, source.data);
}

#[tokio::test]
async fn updates_of_the_source_reach_every_copy() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let (fake, client) = cluster(vec![source("db", &[("password", "old")])], &audit, &faults).await;
    let ctx = reconciler(client);
    converge(&fake, &ctx, "db").await;

    let sources = Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE);
    let patch = serde_json::json!({
        "metadata": { "labels": { "tier": "gold" } },
        "data": { "password": ByteString(b"new".to_vec()), "user": ByteString(b"admin".to_vec()) },
    });
    sources
        .patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    converge(&fake, &ctx, "db").await;

    let copies = secrets_named(&fake, "db").await;
    assert_eq!(copies.len(), 3);
    for copy in copies.values() {
        assert_eq!(value(copy, "password"), "new");
        assert_eq!(value(copy, "user"), "admin");
        assert_eq!(copy.labels()["tier"], "gold");
    }
}

#[tokio::test]
async fn deleting_the_source_deletes_its_copies_only() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let (fake, client) = cluster(
        vec![
            source("db", &[("password", PASSWORD)]),
            source("cache", &[("token", "t")]),
        ],
        &audit,
        &faults,
    )
    .await;
    let ctx = reconciler(client);
    converge(&fake, &ctx, "db").await;
    converge(&fake, &ctx, "cache").await;

    assert_eq!(delete_source(&fake, &ctx, "db").await, 0);
    assert!(secrets_named(&fake, "db").await.is_empty());
    let sources = Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE);
    assert!(sources.get_opt("db").await.unwrap().is_none());
    assert_eq!(
        secrets_named(&fake, "cache").await.len(),
        3,
        "other sources keep their copies"
    );
}

#[tokio::test]
async fn a_namespace_created_later_gets_the_copies() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let (fake, client) = cluster(
        vec![source("db", &[("password", PASSWORD)])],
        &audit,
        &faults,
    )
    .await;
    let mut cache = namespaces();
    let ctx = reconciler_with(client, &cache);
    converge(&fake, &ctx, "db").await;

    // The namespace watcher sees a new namespace.
    cache.apply_watcher_event(&watcher::Event::Apply(namespace("team-new")));
    // The Controller maps the Namespace event to every source; here: one reconcile.
    converge(&fake, &ctx, "db").await;
    assert_eq!(
        value(&secrets_named(&fake, "db").await["team-new"], "password"),
        PASSWORD
    );
}

#[tokio::test]
async fn secrets_of_other_types_are_ignored() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let opaque = secret(SOURCE_NAMESPACE, "plain", "Opaque", &[("k", "v")]);
    let (fake, client) = cluster(vec![opaque.clone()], &audit, &faults).await;
    let ctx = reconciler(client);
    let stored = Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE)
        .get("plain")
        .await
        .unwrap();
    assert_eq!(
        reconcile(Arc::new(stored), ctx.clone()).await.unwrap(),
        Action::await_change()
    );
    assert!(secrets_named(&fake, "plain").await.is_empty());
    assert!(
        Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE)
            .get("plain")
            .await
            .unwrap()
            .finalizers()
            .is_empty()
    );
    assert!(audit.accesses().is_empty(), "not a single request");
    // The secretsync type outside the source namespace is no source either.
    let elsewhere = secret("team-a", "db", SECRET_TYPE, &[("k", "v")]);
    assert!(!is_source(&elsewhere));
    reconcile(Arc::new(elsewhere), ctx).await.unwrap();
    assert!(audit.accesses().is_empty());
}

#[tokio::test]
async fn a_same_named_secret_not_managed_by_secret_sync_is_left_alone() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let foreign = secret("team-a", "db", "Opaque", &[("password", "theirs")]);
    let (fake, client) = cluster(
        vec![source("db", &[("password", PASSWORD)]), foreign],
        &audit,
        &faults,
    )
    .await;
    let ctx = reconciler(client);
    converge(&fake, &ctx, "db").await;

    let copies = secrets_named(&fake, "db").await;
    let theirs = &copies["team-a"];
    assert_eq!(value(theirs, "password"), "theirs");
    assert_eq!(theirs.type_.as_deref(), Some("Opaque"));
    assert!(theirs.labels().get(MANAGED_BY.0).is_none());
    assert_eq!(value(&copies["team-b"], "password"), PASSWORD);

    // ... and reported as a Warning Event on the source.
    let events =
        Api::<k8s_openapi::api::events::v1::Event>::namespaced(fake.clone(), SOURCE_NAMESPACE)
            .list(&Default::default())
            .await
            .unwrap();
    assert!(
        events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("TargetExists")
                && e.type_.as_deref() == Some("Warning")),
        "{events:?}"
    );

    // Deleting the source does not delete it either.
    delete_source(&fake, &ctx, "db").await;
    let left = secrets_named(&fake, "db").await;
    assert_eq!(left.keys().collect::<Vec<_>>(), ["team-a"]);
}

#[tokio::test]
async fn copies_in_blocklisted_namespaces_are_removed() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let stale = managed_copy("kube-system", "db", &[("password", "old")]);
    let (fake, client) = cluster(
        vec![source("db", &[("password", PASSWORD)]), stale],
        &audit,
        &faults,
    )
    .await;
    let ctx = reconciler(client);
    converge(&fake, &ctx, "db").await;
    assert!(!secrets_named(&fake, "db").await.contains_key("kube-system"));
}

/// Conflicts on patch, server errors on list/get/create/delete and timeouts: reconciling
/// until success ends in exactly the right Secrets, none duplicated or lost.
#[tokio::test]
async fn the_controller_converges_under_injected_faults() {
    let audit = RbacAudit::default();
    let faults = Faults::default()
        .fail(
            Fault::conflict()
                .on_verb("patch")
                .on_resource("secrets")
                .times(3),
        )
        .fail(
            Fault::server_error()
                .on_verb("list")
                .on_resource("secrets")
                .times(2),
        )
        .fail(
            Fault::server_error()
                .on_verb("get")
                .on_resource("secrets")
                .times(2),
        )
        .fail(
            Fault::server_error()
                .on_verb("delete")
                .on_resource("secrets")
                .times(2),
        )
        .fail(
            Fault::server_error()
                .on_verb("create")
                .on_resource("events")
                .times(1),
        )
        .fail(
            Fault::timeout(Duration::from_millis(20))
                .on_verb("list")
                .times(1),
        )
        .fail(
            Fault::timeout(Duration::from_millis(20))
                .on_verb("patch")
                .times(1),
        );
    // The source as a previous run left it (with the finalizer), so that the conflicts hit
    // the copies' server-side applies rather than the finalizer's patch.
    let mut db = source("db", &[("password", PASSWORD)]);
    db.metadata.finalizers = Some(vec![FINALIZER.into()]);
    let (fake, client) = cluster(
        vec![
            db,
            // Stale copy in a blocklisted namespace (to be deleted), and a foreign Secret.
            managed_copy("kube-public", "db", &[("password", "old")]),
            secret("team-b", "db", "Opaque", &[("password", "theirs")]),
        ],
        &audit,
        &faults,
    )
    .await;
    let ctx = reconciler(client);

    let mut failures = converge(&fake, &ctx, "db").await;
    let copies = secrets_named(&fake, "db").await;
    assert_eq!(
        copies.keys().collect::<Vec<_>>(),
        ["default", "team-a", "team-b"]
    );
    assert_eq!(value(&copies["default"], "password"), PASSWORD);
    assert_eq!(value(&copies["team-a"], "password"), PASSWORD);
    assert_eq!(value(&copies["team-b"], "password"), "theirs");

    failures += delete_source(&fake, &ctx, "db").await;
    let left = secrets_named(&fake, "db").await;
    assert_eq!(left.keys().collect::<Vec<_>>(), ["team-b"]);
    let sources = Api::<Secret>::namespaced(fake.clone(), SOURCE_NAMESPACE);
    assert!(
        sources
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );

    let injected = faults.injected();
    let count = |kind: fn(&FaultKind) -> bool| injected.iter().filter(|(k, _)| kind(k)).count();
    eprintln!(
        "faults injected: {} ({} conflicts, {} server errors, {} timeouts); failed reconciles: {failures}",
        injected.len(),
        count(|k| *k == FaultKind::Conflict),
        count(|k| *k == FaultKind::ServerError),
        count(|k| matches!(k, FaultKind::Timeout(_))),
    );
    assert_eq!(injected.len(), 12, "every planned fault hit: {injected:?}");
    assert!(failures >= 10, "the faults failed reconciles: {failures}");
}

/// Every request the controller makes, in every scenario, is allowed by config/rbac/role.yaml,
/// and every rule there is used.
#[tokio::test]
async fn rbac_role_is_exactly_what_the_controller_uses() {
    let (audit, faults) = (RbacAudit::default(), Faults::default());
    let (fake, client) = cluster(
        vec![
            source("db", &[("password", PASSWORD)]),
            managed_copy("kube-system", "db", &[("password", "old")]),
            secret("team-a", "db", "Opaque", &[("password", "theirs")]),
        ],
        &audit,
        &faults,
    )
    .await;
    let ctx = reconciler(client.clone());
    converge(&fake, &ctx, "db").await;
    // Again, so that the Event about the foreign Secret is a repeat (a patch).
    converge(&fake, &ctx, "db").await;
    delete_source(&fake, &ctx, "db").await;

    // The Controller's watchers: the source watcher's exact config, run on the audited
    // client (the in-memory API lists, then fails the watch), and the Namespace watcher.
    let (sources, config) = source_watcher(client);
    let mut stream = watcher(sources, config).boxed();
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(event) = stream.next().await {
            if event.is_err() {
                break;
            }
        }
    })
    .await;
    audit.watches("", "namespaces");

    audit
        .check_role_file(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/config/rbac/role.yaml"
        ))
        .unwrap();
    let secrets_in_source_ns: Vec<String> = audit
        .accesses()
        .into_iter()
        .filter(|a| {
            a.resource == "secrets" && (a.verb == "watch" || a.verb == "list") && a.name.is_none()
        })
        .map(|a| format!("{} {:?}", a.verb, a.namespace))
        .collect();
    assert!(
        secrets_in_source_ns.contains(&format!("watch {:?}", Some(SOURCE_NAMESPACE))),
        "only the source namespace is watched: {secrets_in_source_ns:?}"
    );
}

/// A writer into a shared buffer, for a test subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every log line of this test binary at TRACE, from every thread. A process-wide subscriber,
/// because a thread-local one (`set_default`) can miss events whose callsite interest another
/// test's thread cached first; as a bonus the secret check below covers all tests' logs.
fn all_logs() -> &'static Captured {
    static LOGS: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer({
                let logs = logs.clone();
                move || logs.clone()
            })
            .finish();
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other test installs a subscriber");
        logs
    })
}

#[tokio::test]
async fn no_secret_data_is_ever_logged() {
    let logs = all_logs();

    let faults = Faults::default().fail(
        Fault::server_error()
            .on_verb("patch")
            .on_resource("secrets")
            .times(1),
    );
    let audit = RbacAudit::default();
    let (fake, client) = cluster(
        vec![
            source("db", &[("password", PASSWORD)]),
            secret("team-a", "db", "Opaque", &[("password", PASSWORD)]),
        ],
        &audit,
        &faults,
    )
    .await;
    let ctx = reconciler(client);
    converge(&fake, &ctx, "db").await;
    // The error path logs too.
    let object = Arc::new(source("db", &[("password", PASSWORD)]));
    let error = Error::Kube(kube::Error::Api(
        kube::core::Status::failure("boom", "InternalError")
            .with_code(500)
            .boxed(),
    ));
    error_policy(object, &error, ctx.clone());
    tracing::info!(reconciler = ?ctx, "debug of the reconciler");
    delete_source(&fake, &ctx, "db").await;

    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains("secretsync/db"),
        "the logs name the source:\n{text}"
    );
    assert!(
        text.contains("team-b/db"),
        "the logs name the copies:\n{text}"
    );
    let encoded = {
        use k8s_openapi::serde_json;
        serde_json::to_string(&ByteString(PASSWORD.as_bytes().to_vec())).unwrap()
    };
    let bytes = format!("{:?}", PASSWORD.as_bytes());
    let bytes_inner = &bytes[1..bytes.len() - 1];
    for leak in [PASSWORD, encoded.trim_matches('"'), bytes_inner] {
        assert!(
            !text.contains(leak),
            "secret data in the logs ({leak}):\n{text}"
        );
    }
}
