//! A project's webhooks on envtest, as kubebuilder's `webhook_suite_test.go` runs them: its
//! webhook server runs in the test process on `127.0.0.1`, and its CRDs and
//! `config/webhook/manifests.yaml` are installed pointed at it (with a CA of the test's),
//! so that a create through the API server is really defaulted, validated and converted.
//!
//! ```no_run
//! # async fn example(webhooks: rkb_manager::webhook::Webhooks, manifests: rkb_manifests::Manifests) {
//! let env = rkb_testing::envtest::shared().await;
//! rkb_testing::webhooks::install(env, webhooks, &manifests).await.unwrap();
//! // ... create objects with `env.client()`: the API server calls the webhooks ...
//! # }
//! ```

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DynamicObject, ObjectMeta, PostParams};
use kube::{Api, Resource};
use rkb_envtest::{Environment, Error, WebhookCerts};
use rkb_manager::webhook::{
    Defaulter, Denied, Operation, Request, Settings, TlsFiles, Validator, Warnings, Webhooks,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// How long the API server may take to call newly installed webhooks.
const READY: Duration = Duration::from_secs(30);
/// The label that sends a dry-run ConfigMap to the probe added to each configuration.
const PROBE_LABEL: &str = "testing.rkb.dev/webhook-probe";
const PROBE_PATH: &str = "/rkb-testing-probe";
const PROBED: &str = "the rkb testing probe refuses every object it is sent";

/// Serves `webhooks` on `127.0.0.1` (on a thread of its own, for the rest of the test
/// binary) and installs `manifests`' CRDs and webhook configurations on `env`, pointed at
/// that server; returns once the API server calls every configuration. Call it once per
/// test binary (e.g. from a `tokio::sync::OnceCell`): the configurations apply to every
/// test on `env`.
pub async fn install(
    env: &Environment,
    webhooks: Webhooks,
    manifests: &rkb_manifests::Manifests,
) -> Result<(), Error> {
    let failed = |what: &str, e: &dyn std::fmt::Display| Error::Objects(format!("{what}: {e}"));
    same_settings(&webhooks, manifests).map_err(Error::Objects)?;
    let certs = Arc::new(WebhookCerts::generate()?);
    let webhooks = webhooks
        .defaulter::<ConfigMap, _>(Probe)
        .validator::<ConfigMap, _>(Probe);
    let addr = serve(webhooks, certs.clone())?;

    let files = manifests
        .render()
        .map_err(|e| failed("cannot render the manifests", &e))?;
    let configurations = files
        .get(std::path::Path::new("config/webhook/manifests.yaml"))
        .map(String::as_str)
        .unwrap_or_default();
    let crds = manifests
        .crds()
        .map_err(|e| failed("cannot render the CRDs", &e))?;
    let mut objects = Vec::new();
    let mut probed = Vec::new();
    for crd in crds {
        objects.push(serde_json::to_value(crd).map_err(|e| failed("a CRD", &e))?);
    }
    for document in configurations.split("\n---\n") {
        let document = document.trim_start_matches("---\n").trim();
        if document.is_empty() {
            continue;
        }
        let mut object: Value = serde_yaml_ng::from_str(document)
            .map_err(|e| failed("config/webhook/manifests.yaml", &e))?;
        if let Some(kind) = object["kind"].as_str().map(str::to_owned) {
            add_probe(&mut object, &kind);
            probed.push(kind);
        }
        objects.push(object);
    }
    let objects = objects
        .into_iter()
        .map(|mut object| {
            certs.point_at(addr, &mut object);
            serde_json::from_value::<DynamicObject>(object).map_err(|e| failed("an object", &e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    env.apply().objects(objects).await?;
    for kind in &probed {
        wait_until_called(env, kind).await?;
    }
    Ok(())
}

/// Refuses an admission webhook of `manifests` (whose settings `make manifests` may have
/// read from the operator's sources) that is not served at its path with the same kind and
/// settings as the compiled impl: the configuration would call a path nobody serves, or
/// with settings the impl does not declare.
fn same_settings(served: &Webhooks, manifests: &rkb_manifests::Manifests) -> Result<(), String> {
    use rkb_manifests::webhook::Webhook;

    let listed = manifests
        .resolved_webhooks()
        .map_err(|e| format!("cannot resolve the webhooks of the manifests: {e}"))?;
    for webhook in listed {
        let Webhook::Admission {
            kind,
            group,
            version,
            resource_kind,
            settings,
            ..
        } = webhook
        else {
            continue;
        };
        if settings.url.is_some() {
            continue;
        }
        let path = settings.path_for(kind, &group, &version, &resource_kind);
        match served.admission_at(&path) {
            Some((served_kind, compiled)) if served_kind == kind && *compiled == settings => {}
            Some((served_kind, compiled)) => {
                return Err(format!(
                    "the {kind:?} webhook of {group}/{version} {resource_kind} at {path}: the \
                     manifests have {settings:?}, the served impl ({served_kind:?}) was compiled \
                     with {compiled:?}; run `make manifests`, or check the impl the generator names"
                ));
            }
            None => {
                return Err(format!(
                    "the {kind:?} webhook of {group}/{version} {resource_kind}: the manifests \
                     call {path}, which no served webhook has (served: {:?})",
                    served.paths()
                ));
            }
        }
    }
    Ok(())
}

/// The object of a config/samples/ file (e.g. `include_str!`'d), in `namespace` when it is
/// namespaced.
///
/// # Panics
///
/// When the YAML holds no object, or one that is not a `K`.
pub fn sample<K: DeserializeOwned>(yaml: &str, namespace: Option<&str>) -> K {
    let objects = rkb_envtest::parse_yaml(yaml).unwrap_or_else(|e| panic!("{e}"));
    let first = objects
        .first()
        .unwrap_or_else(|| panic!("the sample holds no object"));
    let mut object = serde_json::to_value(first).unwrap_or_else(|e| panic!("{e}"));
    if let Some(namespace) = namespace {
        object["metadata"]["namespace"] = namespace.into();
    }
    serde_json::from_value(object).unwrap_or_else(|e| panic!("the sample does not parse: {e}"))
}

/// The review of a create of `object`, as the API server sends it, for calling a
/// `Defaulter` or `Validator` directly.
pub fn create_request(object: &impl Resource) -> Request {
    Request {
        uid: "test".into(),
        operation: Operation::Create,
        name: object.meta().name.clone().unwrap_or_default(),
        namespace: object.meta().namespace.clone(),
        user_info: UserInfo::default(),
        dry_run: false,
        sub_resource: None,
    }
}

/// Creates `object` through `api` as a dry run, and checks that the API server answers as
/// the validator did (`verdict`): it admits the object, or refuses it with the validator's
/// code and message.
///
/// # Panics
///
/// When the answers differ.
pub async fn assert_answers_as_validator<K>(
    api: &Api<K>,
    object: &K,
    verdict: Result<Warnings, Denied>,
) where
    K: Resource + Clone + Debug + Serialize + DeserializeOwned,
{
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    match (verdict, api.create(&dry_run, object).await) {
        (Ok(_), Ok(_)) => {}
        (Err(denied), Err(kube::Error::Api(status))) => {
            assert_eq!(status.code, denied.status().code, "{status:?}");
            // The API server puts `admission webhook "<name>" denied the request: ` first.
            assert!(
                status.message.ends_with(denied.message()),
                "the API server refused with {:?}, not with the validator's {:?}",
                status.message,
                denied.message()
            );
        }
        (verdict, answer) => {
            panic!("the validator answered {verdict:?}, the API server {answer:?}, for {object:?}")
        }
    }
}

/// Serves on a thread with its own runtime: a `#[tokio::test]`'s runtime ends with its test.
/// It keeps the certificate's files, which the server watches.
fn serve(webhooks: Webhooks, certs: Arc<WebhookCerts>) -> Result<SocketAddr, Error> {
    let (bound, addr) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let tls = TlsFiles::in_dir(certs.dir());
        let runtime = match tokio::runtime::Runtime::new() {
            Ok(runtime) => runtime,
            Err(e) => return drop(bound.send(Err(e.to_string()))),
        };
        runtime.block_on(async move {
            let server = match webhooks
                .bind(SocketAddr::from(([127, 0, 0, 1], 0)), &tls)
                .await
            {
                Ok(server) => server,
                Err(e) => return drop(bound.send(Err(format!("{e:#}")))),
            };
            let _ = bound.send(server.local_addr().map_err(|e| e.to_string()));
            server.serve(CancellationToken::new()).await;
        });
    });
    addr.recv()
        .map_err(|e| e.to_string())
        .and_then(|addr| addr)
        .map_err(|e| Error::ControlPlane(format!("cannot start the webhook server: {e}")))
}

/// Adds to a webhook configuration a webhook that refuses ConfigMaps labelled for it: the
/// API server reads a configuration whole, so once it calls the probe it calls the rest.
fn add_probe(configuration: &mut Value, kind: &str) {
    if let Some(webhooks) = configuration["webhooks"].as_array_mut() {
        webhooks.push(json!({
            "name": "probe.testing.rkb.dev",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "clientConfig": {"service": {"name": "probe", "namespace": "default", "path": probe_path(kind)}},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}],
            "objectSelector": {"matchLabels": {PROBE_LABEL: kind}},
        }));
    }
}

fn probe_path(kind: &str) -> String {
    let kind = if kind.starts_with("Mutating") {
        "mutate"
    } else {
        "validate"
    };
    format!("{PROBE_PATH}-{kind}")
}

/// Dry-runs a labelled ConfigMap until the probe of the `kind` configuration refuses it.
async fn wait_until_called(env: &Environment, kind: &str) -> Result<(), Error> {
    let maps: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let probe = ConfigMap {
        metadata: ObjectMeta {
            name: Some("rkb-webhook-probe".into()),
            labels: Some(BTreeMap::from([(PROBE_LABEL.into(), kind.into())])),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let deadline = Instant::now() + READY;
    loop {
        match maps.create(&dry_run, &probe).await {
            Err(kube::Error::Api(status)) if status.message.contains(PROBED) => return Ok(()),
            other if Instant::now() > deadline => {
                return Err(Error::Response(format!(
                    "the API server does not call the webhooks of the {kind} after {READY:?} \
                     (the last dry run answered {other:?})"
                )));
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Refuses every ConfigMap it is sent (only the probe's, by its object selector).
struct Probe;

impl Defaulter<ConfigMap> for Probe {
    async fn apply_defaults(&self, _: &Request, _: &mut ConfigMap) -> Result<(), Denied> {
        Err(Denied::new(PROBED))
    }

    fn settings() -> Settings {
        Settings {
            path: Some(probe_path("Mutating")),
            ..Settings::default()
        }
    }
}

impl Validator<ConfigMap> for Probe {
    async fn validate_create(&self, _: &Request, _: &ConfigMap) -> Result<Warnings, Denied> {
        Err(Denied::new(PROBED))
    }

    async fn validate_update(
        &self,
        _: &Request,
        _: &ConfigMap,
        _: &ConfigMap,
    ) -> Result<Warnings, Denied> {
        Err(Denied::new(PROBED))
    }

    fn settings() -> Settings {
        Settings {
            path: Some(probe_path("Validating")),
            ..Settings::default()
        }
    }
}
