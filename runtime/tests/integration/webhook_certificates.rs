//! Webhook certificates the manager makes, injects and rotates itself (`rkb_runtime::certs`),
//! on a real API server (envtest): the API server calls the webhook and trusts it only
//! through the CA the manager wrote into the configuration's `caBundle`.
//!
//! envtest has no Service routing, so the configurations call `https://127.0.0.1:<port>`
//! (`url:`), and the certificate names 127.0.0.1 instead of `<service>.<namespace>.svc`.
//! Run with `--nocapture` to see the figures (times, reviews sent and failed).

use crate::running;
use running::Running;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    RuleWithOperations, ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use rkb_runtime::certs::WebhookCertificates;
use rkb_runtime::manager::{Args, Manager};
use rkb_runtime::webhook::{Denied, Request, Validator, Warnings, Webhooks};
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_util::sync::CancellationToken;

const SECRET: &str = "webhook-certs";
const WAIT: Duration = Duration::from_secs(60);
const DENIED: &str = "the test webhook refuses ConfigMaps with a key named deny";

/// Refuses ConfigMaps with a `deny` key: a refusal with this message shows the API server
/// did call the webhook.
struct RefuseDeny;

impl Validator<ConfigMap> for RefuseDeny {
    async fn validate_create(&self, _: &Request, map: &ConfigMap) -> Result<Warnings, Denied> {
        if map.data.as_ref().is_some_and(|d| d.contains_key("deny")) {
            return Err(Denied::new(DENIED));
        }
        Ok(Vec::new())
    }

    async fn validate_update(
        &self,
        _: &Request,
        _: &ConfigMap,
        _: &ConfigMap,
    ) -> Result<Warnings, Denied> {
        Ok(Vec::new())
    }
}

/// A ValidatingWebhookConfiguration for the ConfigMaps of `namespace` only, with one
/// webhook per port (each a manager), and no `caBundle`: the manager must write it.
async fn install_configuration(admin: &Client, namespace: &str, ports: &[u16]) -> String {
    let name = format!("{namespace}-certs");
    let webhooks = ports
        .iter()
        .enumerate()
        .map(|(i, port)| ValidatingWebhook {
            name: format!("configmaps-{i}.certs.rkb.test"),
            client_config: WebhookClientConfig {
                url: Some(format!(
                    "https://127.0.0.1:{port}/validate-core-v1-configmap"
                )),
                ..Default::default()
            },
            rules: Some(vec![RuleWithOperations {
                api_groups: Some(vec![String::new()]),
                api_versions: Some(vec!["v1".into()]),
                operations: Some(vec!["CREATE".into()]),
                resources: Some(vec!["configmaps".into()]),
                ..Default::default()
            }]),
            namespace_selector: Some(LabelSelector {
                match_labels: Some(BTreeMap::from([(
                    "kubernetes.io/metadata.name".into(),
                    namespace.into(),
                )])),
                ..Default::default()
            }),
            failure_policy: Some("Fail".into()),
            side_effects: "None".into(),
            admission_review_versions: vec!["v1".into()],
            timeout_seconds: Some(5),
            ..Default::default()
        })
        .collect();
    let configuration = ValidatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..Default::default()
        },
        webhooks: Some(webhooks),
    };
    Api::<ValidatingWebhookConfiguration>::all(admin.clone())
        .create(&PostParams::default(), &configuration)
        .await
        .unwrap();
    name
}

/// The certificates of the tests: short-lived enough to rotate within a test when asked.
fn certificates(namespace: &str, configuration: &str) -> WebhookCertificates {
    // ANCHOR: certificates
    WebhookCertificates::new(SECRET)
        .namespace(namespace)
        .hosts(["127.0.0.1"])
        .validating_webhook_configuration(configuration)
        // ANCHOR_END: certificates
        .check_interval(Duration::from_millis(200))
        .propagation_delay(Duration::from_secs(1))
}

impl Running {
    fn webhook_manager(
        client: Client,
        port: u16,
        namespace: &str,
        certs: WebhookCertificates,
    ) -> Self {
        Self::webhook_manager_as(client, port, namespace, certs, "--leader-elect")
    }

    /// With `mode` `--leader-elect` or `--sharding`, on the same Lease timing.
    fn webhook_manager_as(
        client: Client,
        port: u16,
        namespace: &str,
        certs: WebhookCertificates,
        mode: &str,
    ) -> Self {
        let probe_port = rkb_envtest::free_port("127.0.0.1");
        let args = Args::parse_from([
            "manager".to_owned(),
            format!("--webhook-bind-address=127.0.0.1:{port}"),
            format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
            "--metrics-bind-address=0".to_owned(),
            mode.to_owned(),
            format!("--leader-election-namespace={namespace}"),
            "--leader-election-id=certs-test".to_owned(),
            "--leader-election-lease-duration=4s".to_owned(),
            "--leader-election-renew-deadline=3s".to_owned(),
            "--leader-election-retry-period=1s".to_owned(),
        ]);
        let started = Instant::now();
        let manager = Manager::new("certs-test", client, args)
            .webhooks(Webhooks::new().validator::<ConfigMap, _>(RefuseDeny))
            .webhook_certificates(certs);
        Running::spawn(manager, probe_port, started)
    }
}

/// Creates a ConfigMap in `namespace` as a dry run (the webhook is called all the same).
async fn review(client: &Client, namespace: &str, deny: bool) -> kube::Result<()> {
    let key = if deny { "deny" } else { "allow" };
    let map = ConfigMap {
        metadata: ObjectMeta {
            generate_name: Some("reviewed-".into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(key.to_owned(), "x".to_owned())])),
        ..Default::default()
    };
    let params = PostParams {
        dry_run: true,
        ..Default::default()
    };
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&params, &map)
        .await
        .map(drop)
}

/// Waits until a review is admitted; returns how long that took from `since`.
async fn first_admitted(client: &Client, namespace: &str, since: Instant) -> Duration {
    let deadline = Instant::now() + WAIT;
    loop {
        match review(client, namespace, false).await {
            Ok(()) => return since.elapsed(),
            Err(error) => assert!(
                Instant::now() < deadline,
                "no review admitted within {WAIT:?}: {error}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn wait_for<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: not within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The Secret's values as text.
/// Waits until the Secret holds a serving certificate other than `before`, and the
/// manager on `port` serves it.
async fn serves_a_certificate_renewed_since(
    admin: &Client,
    namespace: &str,
    port: u16,
    before: &str,
) {
    wait_for("a renewed certificate served", async || {
        let now = secret(admin, namespace).await?;
        let served = served_certificate(port, &now["ca.crt"]).await?;
        (now["tls.crt"] != before && served == pem_certificates(&now["tls.crt"])[0]).then_some(())
    })
    .await;
}

async fn secret(admin: &Client, namespace: &str) -> Option<BTreeMap<String, String>> {
    let secret = Api::<Secret>::namespaced(admin.clone(), namespace)
        .get_opt(SECRET)
        .await
        .unwrap()?;
    Some(
        secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
            .collect(),
    )
}

/// The `caBundle` of every webhook of the configuration.
async fn ca_bundles(admin: &Client, configuration: &str) -> Vec<String> {
    let configuration = Api::<ValidatingWebhookConfiguration>::all(admin.clone())
        .get(configuration)
        .await
        .unwrap();
    configuration
        .webhooks
        .unwrap_or_default()
        .into_iter()
        .map(|w| {
            w.client_config
                .ca_bundle
                .map(|b| String::from_utf8_lossy(&b.0).into_owned())
                .unwrap_or_default()
        })
        .collect()
}

/// Writes `pem` into the first webhook's `caBundle`, as cert-manager's CA injector (or
/// someone else) would.
async fn set_ca_bundle(admin: &Client, configuration: &str, pem: &str) {
    let patch = serde_json::json!({"webhooks": [{
        "name": "configmaps-0.certs.rkb.test",
        "clientConfig": {"caBundle": ByteString(pem.as_bytes().to_vec())}
    }]});
    Api::<ValidatingWebhookConfiguration>::all(admin.clone())
        .patch(
            configuration,
            &PatchParams::default(),
            &Patch::Strategic(&patch),
        )
        .await
        .unwrap();
}

fn pem_certificates(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(Result::unwrap)
        .collect()
}

/// The certificate the server on `port` presents, verified against `ca_bundle` for 127.0.0.1.
async fn served_certificate(port: u16, ca_bundle: &str) -> Option<CertificateDer<'static>> {
    let mut roots = RootCertStore::empty();
    for cert in pem_certificates(ca_bundle) {
        roots.add(cert).ok()?;
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let name = ServerName::try_from("127.0.0.1").ok()?;
    let tls = TlsConnector::from(Arc::new(config))
        .connect(name, stream)
        .await
        .ok()?;
    let (_, session) = tls.get_ref();
    session
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|cert| cert.clone().into_owned())
}

#[tokio::test]
async fn the_api_server_trusts_the_webhook_through_the_ca_the_manager_wrote() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let port = rkb_envtest::free_port("127.0.0.1");
    let configuration = install_configuration(&admin, &namespace, &[port]).await;
    assert_eq!(ca_bundles(&admin, &configuration).await, [""]);

    let manager = Running::webhook_manager(
        admin.clone(),
        port,
        &namespace,
        certificates(&namespace, &configuration),
    );
    let took = first_admitted(&admin, &namespace, manager.started).await;
    eprintln!(
        "figure: manager start to first admitted review (self-managed certificates): {took:?}"
    );

    let error = review(&admin, &namespace, true).await.unwrap_err();
    assert!(error.to_string().contains(DENIED), "{error}");
    let stored = secret(&admin, &namespace).await.unwrap();
    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        ["ca.crt", "ca.key", "tls.crt", "tls.key"]
    );
    assert_eq!(
        ca_bundles(&admin, &configuration).await,
        [stored["ca.crt"].clone()]
    );
    let served = served_certificate(port, &stored["ca.crt"]).await.unwrap();
    assert_eq!(served, pem_certificates(&stored["tls.crt"])[0]);
    let secret = Api::<Secret>::namespaced(admin.clone(), &namespace)
        .get(SECRET)
        .await
        .unwrap();
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    let report = manager.readyz().await;
    assert!(
        report.contains("HTTP/1.1 200")
            && report.contains("[+]webhook-certificates ok")
            && report.contains("[+]webhook-certificate ok"),
        "{report}"
    );
    manager.stop().await;
}

/// cert-manager's way replayed by hand, for comparison: certificates in files, the CA
/// written into the configuration by the test, as cert-manager's CA injector would.
#[tokio::test]
async fn for_comparison_certificates_from_files_with_the_ca_injected_by_the_test() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let port = rkb_envtest::free_port("127.0.0.1");
    let configuration = install_configuration(&admin, &namespace, &[port]).await;
    let files = rkb_envtest::WebhookCerts::generate().unwrap();
    set_ca_bundle(&admin, &configuration, files.ca_pem()).await;

    let args = Args::parse_from([
        "manager".to_owned(),
        format!("--webhook-bind-address=127.0.0.1:{port}"),
        format!("--webhook-cert-path={}", files.dir().display()),
        "--health-probe-bind-address=0".to_owned(),
        "--metrics-bind-address=0".to_owned(),
    ]);
    let started = Instant::now();
    let manager = Manager::new("certs-test", admin.clone(), args)
        .webhooks(Webhooks::new().validator::<ConfigMap, _>(RefuseDeny));
    let shutdown = manager.shutdown_token();
    let task = tokio::spawn(manager.run(vec![]));
    let took = first_admitted(&admin, &namespace, started).await;
    eprintln!(
        "figure: manager start to first admitted review (certificates from files, CA injected by the test): {took:?}"
    );
    shutdown.cancel();
    task.await.unwrap().unwrap();
}

/// What the Secret and the configuration held at one moment.
struct Snapshot {
    at: Duration,
    when: std::time::SystemTime,
    /// Read first: the API server trusted it when the Secret was read.
    ca_bundle: String,
    secret: BTreeMap<String, String>,
}

/// Polls the configuration's `caBundle`, then the Secret, recording each change.
fn record(
    admin: Client,
    namespace: String,
    configuration: String,
    stop: CancellationToken,
) -> JoinHandle<Vec<Snapshot>> {
    tokio::spawn(async move {
        let started = Instant::now();
        let mut seen: Vec<Snapshot> = Vec::new();
        while !stop.is_cancelled() {
            let ca_bundle = ca_bundles(&admin, &configuration).await.remove(0);
            if let Some(secret) = secret(&admin, &namespace).await
                && seen
                    .last()
                    .is_none_or(|last| last.secret != secret || last.ca_bundle != ca_bundle)
            {
                seen.push(Snapshot {
                    at: started.elapsed(),
                    when: std::time::SystemTime::now(),
                    ca_bundle,
                    secret,
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        seen
    })
}

/// Whether a client trusting `ca_bundle` accepts `cert` for 127.0.0.1 at `when`.
fn trusted(ca_bundle: &str, cert: &str, when: std::time::SystemTime) -> bool {
    use tokio_rustls::rustls::client::WebPkiServerVerifier;
    use tokio_rustls::rustls::client::danger::ServerCertVerifier as _;
    use tokio_rustls::rustls::pki_types::UnixTime;

    let mut roots = RootCertStore::empty();
    for ca in pem_certificates(ca_bundle) {
        if roots.add(ca).is_err() {
            return false;
        }
    }
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .unwrap();
    let since_epoch = when.duration_since(std::time::UNIX_EPOCH).unwrap();
    verifier
        .verify_server_cert(
            &pem_certificates(cert)[0],
            &[],
            &ServerName::try_from("127.0.0.1").unwrap(),
            &[],
            UnixTime::since_unix_epoch(since_epoch),
        )
        .is_ok()
}

#[tokio::test]
async fn a_rotation_of_the_ca_and_the_serving_certificate_under_steady_reviews_loses_none() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let port = rkb_envtest::free_port("127.0.0.1");
    let configuration = install_configuration(&admin, &namespace, &[port]).await;
    // The CA rotates when 10 s are left of its 30, the serving certificate every 8 s.
    let certs = certificates(&namespace, &configuration)
        .validity(Duration::from_secs(30), Duration::from_secs(12));
    let manager = Running::webhook_manager(admin.clone(), port, &namespace, certs);
    first_admitted(&admin, &namespace, manager.started).await;
    let first = secret(&admin, &namespace).await.unwrap();
    let first_ca = pem_certificates(&first["ca.crt"]).remove(0);

    let stop = CancellationToken::new();
    let recorder = record(
        admin.clone(),
        namespace.clone(),
        configuration.clone(),
        stop.clone(),
    );
    let (sent, failed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
    let reviewers: Vec<_> = (0..4)
        .map(|_| {
            let (admin, namespace, stop) = (admin.clone(), namespace.clone(), stop.clone());
            let (sent, failed, failures) = (sent.clone(), failed.clone(), failures.clone());
            tokio::spawn(async move {
                while !stop.is_cancelled() {
                    sent.fetch_add(1, Ordering::Relaxed);
                    if let Err(error) = review(&admin, &namespace, false).await {
                        failed.fetch_add(1, Ordering::Relaxed);
                        failures.lock().unwrap().push(error.to_string());
                    }
                }
            })
        })
        .collect();

    // Until the first CA has left the bundle: a new CA, then its certificate, then the
    // old CA's expiry.
    let started = Instant::now();
    wait_for("the first CA leaves the bundle", async || {
        let now = secret(&admin, &namespace).await?;
        let cas = pem_certificates(&now["ca.crt"]);
        (!cas.contains(&first_ca)).then_some(())
    })
    .await;
    stop.cancel();
    for reviewer in reviewers {
        reviewer.await.unwrap();
    }
    let history = recorder.await.unwrap();
    let (sent, failed) = (sent.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));

    // Each serving certificate appeared only after the API server trusted its CA: the
    // caBundle read before it already did.
    for pair in history.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        if after.secret["tls.crt"] != before.secret["tls.crt"] {
            assert!(
                trusted(&before.ca_bundle, &after.secret["tls.crt"], after.when),
                "a serving certificate whose CA was not yet in the caBundle, at {:?}",
                after.at
            );
        }
    }
    let bundle_sizes: Vec<usize> = history
        .iter()
        .map(|s| pem_certificates(&s.secret["ca.crt"]).len())
        .collect();
    let overlap_from = history
        .iter()
        .find(|s| pem_certificates(&s.secret["ca.crt"]).len() == 2)
        .map(|s| s.at)
        .expect("the bundle held two CAs");
    let switched = history
        .iter()
        .find(|s| {
            s.secret["ca.key"] != first["ca.key"]
                && trusted(&s.secret["ca.crt"], &s.secret["tls.crt"], s.when)
                && !trusted(&first["ca.crt"], &s.secret["tls.crt"], s.when)
        })
        .map(|s| s.at);
    let servings: std::collections::BTreeSet<&String> =
        history.iter().map(|s| &s.secret["tls.crt"]).collect();
    eprintln!(
        "figure: rotation under load: {sent} reviews sent, {failed} failed, in {:?}; \
         the bundle held both CAs from {overlap_from:?} to {:?}, the new CA's certificate \
         served from {switched:?}; {} serving certificates in turn; bundle sizes {bundle_sizes:?}",
        started.elapsed(),
        history.last().unwrap().at,
        servings.len(),
    );
    assert_eq!(failed, 0, "{:?}", failures.lock().unwrap());
    assert!(sent > 100, "a steady stream: {sent}");
    assert!(
        servings.len() >= 3,
        "serving certificates renewed: {}",
        servings.len()
    );
    assert_eq!(
        ca_bundles(&admin, &configuration).await,
        [secret(&admin, &namespace).await.unwrap()["ca.crt"].clone()]
    );
    manager.stop().await;
}

#[tokio::test]
async fn a_leader_and_a_follower_both_serve_the_current_certificate() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let ports = [
        rkb_envtest::free_port("127.0.0.1"),
        rkb_envtest::free_port("127.0.0.1"),
    ];
    // Every review goes to both managers: one webhook each.
    let configuration = install_configuration(&admin, &namespace, &ports).await;
    let certs = certificates(&namespace, &configuration)
        .validity(Duration::from_secs(3600), Duration::from_secs(9));
    let managers =
        ports.map(|port| Running::webhook_manager(admin.clone(), port, &namespace, certs.clone()));
    first_admitted(&admin, &namespace, managers[0].started).await;

    let reports = [managers[0].readyz().await, managers[1].readyz().await];
    let leaders = reports
        .iter()
        .filter(|r| r.contains("webhook-certificates"))
        .count();
    assert_eq!(
        leaders, 1,
        "only the leader keeps the certificates: {reports:?}"
    );
    assert!(
        reports.iter().all(|r| r.contains("HTTP/1.1 200")),
        "{reports:?}"
    );

    // The serving certificate is renewed every 3 s: both serve each new one.
    let first = secret(&admin, &namespace).await.unwrap()["tls.crt"].clone();
    for port in ports {
        serves_a_certificate_renewed_since(&admin, &namespace, port, &first).await;
    }
    review(&admin, &namespace, false).await.unwrap();
    for manager in managers {
        manager.stop().await;
    }
}

#[tokio::test]
async fn a_restarted_manager_serves_the_certificates_of_its_secret() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let port = rkb_envtest::free_port("127.0.0.1");
    let configuration = install_configuration(&admin, &namespace, &[port]).await;
    let manager = Running::webhook_manager(
        admin.clone(),
        port,
        &namespace,
        certificates(&namespace, &configuration),
    );
    first_admitted(&admin, &namespace, manager.started).await;
    let before = secret(&admin, &namespace).await.unwrap();
    manager.stop().await;

    let manager = Running::webhook_manager(
        admin.clone(),
        port,
        &namespace,
        certificates(&namespace, &configuration),
    );
    let took = first_admitted(&admin, &namespace, manager.started).await;
    eprintln!("figure: restart to first admitted review, reusing the Secret: {took:?}");
    assert_eq!(
        secret(&admin, &namespace).await.unwrap(),
        before,
        "nothing new"
    );
    let served = served_certificate(port, &before["ca.crt"]).await.unwrap();
    assert_eq!(served, pem_certificates(&before["tls.crt"])[0]);
    manager.stop().await;
}

#[tokio::test]
async fn a_deleted_or_altered_secret_and_an_altered_ca_bundle_are_put_back() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let port = rkb_envtest::free_port("127.0.0.1");
    let configuration = install_configuration(&admin, &namespace, &[port]).await;
    let manager = Running::webhook_manager(
        admin.clone(),
        port,
        &namespace,
        certificates(&namespace, &configuration),
    );
    first_admitted(&admin, &namespace, manager.started).await;
    let secrets = Api::<Secret>::namespaced(admin.clone(), &namespace);
    let kept = secret(&admin, &namespace).await.unwrap();

    // Deleted: put back as it was, so the API server's trust never changes.
    secrets
        .delete(SECRET, &DeleteParams::default())
        .await
        .unwrap();
    let started = Instant::now();
    let back = wait_for("the Secret is back", async || {
        secret(&admin, &namespace).await
    })
    .await;
    eprintln!(
        "figure: a deleted Secret is back after {:?}",
        started.elapsed()
    );
    assert_eq!(back, kept);
    review(&admin, &namespace, false).await.unwrap();

    // Its serving certificate broken: a new one from the same CA.
    let broken = serde_json::json!({"data": {"tls.crt": ByteString(b"broken".to_vec())}});
    secrets
        .patch(SECRET, &PatchParams::default(), &Patch::Merge(&broken))
        .await
        .unwrap();
    let repaired = wait_for("the serving certificate is reissued", async || {
        let now = secret(&admin, &namespace).await?;
        (now["tls.crt"].starts_with("-----BEGIN CERTIFICATE")).then_some(now)
    })
    .await;
    assert_eq!(repaired["ca.crt"], kept["ca.crt"]);
    assert_ne!(repaired["tls.crt"], kept["tls.crt"]);
    wait_for("the reissued certificate is served", async || {
        let served = served_certificate(port, &kept["ca.crt"]).await?;
        (served == pem_certificates(&repaired["tls.crt"])[0]).then_some(())
    })
    .await;

    // Another CA in the caBundle: the manager's is written back.
    let foreign = rkb_envtest::WebhookCerts::generate().unwrap();
    set_ca_bundle(&admin, &configuration, foreign.ca_pem()).await;
    let started = Instant::now();
    wait_for("the caBundle is written back", async || {
        (ca_bundles(&admin, &configuration).await == [kept["ca.crt"].clone()]).then_some(())
    })
    .await;
    eprintln!(
        "figure: an altered caBundle is written back after {:?}",
        started.elapsed()
    );
    first_admitted(&admin, &namespace, Instant::now()).await;
    manager.stop().await;
}

/// Binds `rules` (namespaced ones in `namespace`) to the ServiceAccount `namespace/operator`.
async fn grant(env: &rkb_envtest::Environment, namespace: &str, rules: &[rkb_runtime::rbac::Rule]) {
    let admin = env.client();
    let subject = Subject {
        kind: "ServiceAccount".into(),
        name: "operator".into(),
        namespace: Some(namespace.into()),
        ..Default::default()
    };
    let (namespaced, cluster): (Vec<_>, Vec<_>) =
        rules.iter().partition(|rule| rule.namespace.is_some());
    let policy = |rules: Vec<&rkb_runtime::rbac::Rule>| -> Vec<PolicyRule> {
        rules.iter().map(|r| r.to_policy_rule()).collect()
    };
    let name = format!("{namespace}-operator");
    let meta = |namespace: Option<&str>| ObjectMeta {
        name: Some(name.clone()),
        namespace: namespace.map(str::to_owned),
        ..Default::default()
    };
    let apply = PatchParams::apply("certs-test").force();
    let role = Role {
        metadata: meta(Some(namespace)),
        rules: Some(policy(namespaced)),
    };
    Api::<Role>::namespaced(admin.clone(), namespace)
        .patch(&name, &apply, &Patch::Apply(&role))
        .await
        .unwrap();
    let cluster_role = ClusterRole {
        metadata: meta(None),
        rules: Some(policy(cluster)),
        ..Default::default()
    };
    Api::<ClusterRole>::all(admin.clone())
        .patch(&name, &apply, &Patch::Apply(&cluster_role))
        .await
        .unwrap();
    let role_ref = |kind: &str| RoleRef {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.clone(),
    };
    let binding = RoleBinding {
        metadata: meta(Some(namespace)),
        role_ref: role_ref("Role"),
        subjects: Some(vec![subject.clone()]),
    };
    Api::<RoleBinding>::namespaced(admin.clone(), namespace)
        .patch(&name, &apply, &Patch::Apply(&binding))
        .await
        .unwrap();
    let cluster_binding = ClusterRoleBinding {
        metadata: meta(None),
        role_ref: role_ref("ClusterRole"),
        subjects: Some(vec![subject]),
    };
    Api::<ClusterRoleBinding>::all(admin.clone())
        .patch(&name, &apply, &Patch::Apply(&cluster_binding))
        .await
        .unwrap();
}

/// Waits until the authorizer lets `namespace/operator` do `verb` on the resource.
async fn until_allowed(
    env: &rkb_envtest::Environment,
    namespace: &str,
    attributes: ResourceAttributes,
    allowed: bool,
) {
    wait_for("RBAC takes effect", async || {
        let may = env
            .service_account_may(namespace, "operator", attributes.clone())
            .await
            .unwrap();
        (may == allowed).then_some(())
    })
    .await;
}

/// Log lines written while the test runs on this thread (a current-thread runtime: the
/// manager's tasks run here too).
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        std::io::Write::write(&mut *self.0.lock().unwrap(), bytes)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn with_the_least_rbac_it_works_and_without_patch_it_is_not_ready_and_says_so_once() {
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let logs = logs.clone();
            move || logs.clone()
        })
        .with_ansi(false)
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);

    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let port = rkb_envtest::free_port("127.0.0.1");
    let configuration = install_configuration(&admin, &namespace, &[port]).await;
    let certs = certificates(&namespace, &configuration);

    // The rules a project lists for the certificates, and the leader election Role's.
    let mut rules = rkb_runtime::webhook_certificate_rules(&certs);
    for rule in &rules {
        rule.validate().unwrap();
        eprintln!("figure: rule {:?}", rule);
    }
    rules.push(rkb_runtime::rbac::Rule {
        api_groups: vec!["coordination.k8s.io".into()],
        resources: vec!["leases".into()],
        verbs: vec!["get".into(), "create".into(), "update".into()],
        namespace: Some(namespace.clone()),
        ..Default::default()
    });
    let without_patch: Vec<_> = rules
        .iter()
        .cloned()
        .map(|mut rule| {
            if rule.resources == ["validatingwebhookconfigurations"] {
                rule.verbs.retain(|verb| verb != "patch");
            }
            rule
        })
        .collect();
    let patch = ResourceAttributes {
        group: Some("admissionregistration.k8s.io".into()),
        resource: Some("validatingwebhookconfigurations".into()),
        name: Some(configuration.clone()),
        verb: Some("patch".into()),
        ..Default::default()
    };
    grant(env, &namespace, &without_patch).await;
    let operator = env
        .service_account_client(&namespace, "operator")
        .await
        .unwrap();
    let may_create = ResourceAttributes {
        namespace: Some(namespace.clone()),
        resource: Some("secrets".into()),
        verb: Some("create".into()),
        ..Default::default()
    };
    until_allowed(env, &namespace, may_create, true).await;

    let manager = Running::webhook_manager(operator, port, &namespace, certs);
    let report = wait_for("the leader reports the missing permission", async || {
        let report = manager.readyz().await;
        report.contains("[-]webhook-certificates").then_some(report)
    })
    .await;
    assert!(report.contains("HTTP/1.1 503"), "{report}");
    // Many checks later: still running, still not ready, and said once.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!manager.task.is_finished(), "the manager keeps running");
    assert!(manager.readyz().await.contains("HTTP/1.1 503"));
    let said =
        format!("cannot write the CA bundle into ValidatingWebhookConfiguration {configuration}");
    let text = logs.text();
    assert_eq!(text.matches(&said).count(), 1, "{text}");
    assert!(text.contains("patch is forbidden"), "{text}");
    assert!(!text.contains("BEGIN"), "no certificate or key in the logs");

    // Granted: the caBundle is written, the manager is ready, reviews are admitted.
    grant(env, &namespace, &rules).await;
    until_allowed(env, &namespace, patch, true).await;
    let started = Instant::now();
    wait_for("ready once allowed", async || {
        manager
            .readyz()
            .await
            .contains("HTTP/1.1 200")
            .then_some(())
    })
    .await;
    first_admitted(&admin, &namespace, started).await;
    let stored = secret(&admin, &namespace).await.unwrap();
    assert_eq!(
        ca_bundles(&admin, &configuration).await,
        [stored["ca.crt"].clone()]
    );
    assert!(logs.text().contains("problem with it is solved"));
    manager.stop().await;
}

/// Without `create` on Secrets: the Secret is applied empty with the manifests, and the
/// manager fills it in.
#[tokio::test]
async fn without_create_the_manager_fills_in_a_secret_applied_empty() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let port = rkb_envtest::free_port("127.0.0.1");
    let configuration = install_configuration(&admin, &namespace, &[port]).await;
    let certs = certificates(&namespace, &configuration);
    let empty = Secret {
        metadata: ObjectMeta {
            name: Some(SECRET.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<Secret>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &empty)
        .await
        .unwrap();
    let mut rules: Vec<_> = rkb_runtime::webhook_certificate_rules(&certs)
        .into_iter()
        .filter(|rule| rule.verbs != ["create"])
        .collect();
    rules.push(rkb_runtime::rbac::Rule {
        api_groups: vec!["coordination.k8s.io".into()],
        resources: vec!["leases".into()],
        verbs: vec!["get".into(), "create".into(), "update".into()],
        namespace: Some(namespace.clone()),
        ..Default::default()
    });
    grant(env, &namespace, &rules).await;
    let may_update = ResourceAttributes {
        namespace: Some(namespace.clone()),
        resource: Some("secrets".into()),
        name: Some(SECRET.into()),
        verb: Some("update".into()),
        ..Default::default()
    };
    until_allowed(env, &namespace, may_update, true).await;
    let may_create = ResourceAttributes {
        namespace: Some(namespace.clone()),
        resource: Some("secrets".into()),
        verb: Some("create".into()),
        ..Default::default()
    };
    until_allowed(env, &namespace, may_create, false).await;
    let operator = env
        .service_account_client(&namespace, "operator")
        .await
        .unwrap();

    let manager = Running::webhook_manager(operator, port, &namespace, certs);
    first_admitted(&admin, &namespace, manager.started).await;
    let stored = secret(&admin, &namespace).await.unwrap();
    assert_eq!(
        ca_bundles(&admin, &configuration).await,
        [stored["ca.crt"].clone()]
    );
    manager.stop().await;
}

/// What a project's `main.rs` gives its manager (its names, as `rkb init` makes them).
fn project_certificates() -> WebhookCertificates {
    // ANCHOR: project
    WebhookCertificates::new("memcached-operator-webhook-server-cert")
        .service("memcached-operator-webhook-service")
        .mutating_webhook_configuration("memcached-operator-mutating-webhook-configuration")
        .validating_webhook_configuration("memcached-operator-validating-webhook-configuration")
        .conversion_webhook_crd("memcacheds.cache.example.com")
    // ANCHOR_END: project
}

/// The RBAC of [`project_certificates`], rendered as `make manifests` writes it, is the
/// snapshot `tests/snapshots/webhook-certificate-rules.yaml` (`RKB_BLESS=1` rewrites it).
#[test]
fn a_projects_rules_name_its_objects_and_nothing_wider() {
    let rules = rkb_runtime::webhook_certificate_rules(&project_certificates());
    let files = rkb_runtime::Manifests::new(Vec::new(), vec![rules])
        .render()
        .unwrap();
    let role = &files[std::path::Path::new("config/rbac/role.yaml")];
    let snapshot = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/webhook-certificate-rules.yaml");
    if std::env::var_os("RKB_BLESS").is_some() {
        std::fs::write(&snapshot, role).unwrap();
    }
    assert_eq!(
        *role,
        std::fs::read_to_string(&snapshot).unwrap_or_default(),
        "run `RKB_BLESS=1 cargo test -p rkb-runtime --test integration webhook_certificates::` after an \
         intended change and review the diff"
    );
    for resource in [
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
        "customresourcedefinitions",
    ] {
        let rule = role
            .split("- apiGroups:")
            .find(|r| r.contains(resource))
            .unwrap();
        assert!(
            rule.contains("resourceNames:") && rule.contains("- patch"),
            "{rule}"
        );
        assert!(!rule.contains("- list"), "{rule}");
    }
}

#[tokio::test]
async fn sharded_replicas_elect_one_writer_of_the_certificates_and_all_serve_them() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let admin = env.client();
    let namespace = env.create_namespace().await.unwrap();
    let ports = [
        rkb_envtest::free_port("127.0.0.1"),
        rkb_envtest::free_port("127.0.0.1"),
    ];
    let configuration = install_configuration(&admin, &namespace, &ports).await;
    let certs = certificates(&namespace, &configuration)
        .validity(Duration::from_secs(3600), Duration::from_secs(9));
    let mut replicas: Vec<Running> = ports
        .iter()
        .map(|&port| {
            Running::webhook_manager_as(
                admin.clone(),
                port,
                &namespace,
                certs.clone(),
                "--sharding",
            )
        })
        .collect();
    first_admitted(&admin, &namespace, replicas[0].started).await;
    // Once every replica is ready (its slices claimed, the keeper's check passed), the
    // replicas whose readiness lists the certificates' keeper.
    let keepers = async |replicas: &[Running]| {
        wait_for("every replica ready", async || {
            let mut keeping = Vec::new();
            for (at, replica) in replicas.iter().enumerate() {
                let report = replica.readyz().await;
                if !report.contains("HTTP/1.1 200") {
                    return None;
                }
                if report.contains("webhook-certificates") {
                    keeping.push(at);
                }
            }
            Some(keeping)
        })
        .await
    };
    let keeping = keepers(&replicas).await;
    assert_eq!(keeping.len(), 1, "one writer of the certificates");

    // Both replicas serve each renewed certificate (renewed every 3 s).
    let first = secret(&admin, &namespace).await.unwrap()["tls.crt"].clone();
    for port in ports {
        serves_a_certificate_renewed_since(&admin, &namespace, port, &first).await;
    }

    review(&admin, &namespace, false).await.unwrap();

    // The writer stops (releasing its Lease): the other replica takes the certificates over
    // and renews them.
    replicas.remove(keeping[0]).stop().await;
    wait_for("the other replica keeps the certificates", async || {
        (keepers(&replicas).await == [0]).then_some(())
    })
    .await;
    let port = ports[1 - keeping[0]];
    let before = secret(&admin, &namespace).await.unwrap()["tls.crt"].clone();
    serves_a_certificate_renewed_since(&admin, &namespace, port, &before).await;
    for replica in replicas {
        replica.stop().await;
    }
}
