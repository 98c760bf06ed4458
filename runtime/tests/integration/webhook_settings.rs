//! The webhook settings beyond kubebuilder's defaults (`reinvocation_policy`,
//! `admission_review_versions`, `url`, `namespace_selector`, `object_selector`,
//! `match_condition`) rendered by `make manifests`'s code, accepted by a real API server
//! (envtest) as written, and obeyed by it: a request the selectors or conditions leave out
//! never reaches the webhook. The API server also refuses what rkb refuses at compile time.
//! A test binary of its own: the configurations it installs apply to every ConfigMap and
//! Secret on its API server.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use rkb_envtest::{Environment, WebhookCerts};
use rkb_runtime::webhook::{
    Defaulter, Denied, Kind, Request, Settings, TlsFiles, Validator, Warnings, Webhooks,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The label the object selectors ask for.
const CHECKED: &str = "settings.rkb.dev/checked";
const DENIED: &str = "the settings test refuses objects with a key named deny";

/// Marks ConfigMaps defaulted and refuses those with a `deny` key, for the ConfigMaps the
/// selectors and conditions let through.
struct ConfigMapHooks;

// ANCHOR: settings
#[rkb_runtime::webhook(
    reinvocation_policy = "if_needed",
    object_selector = "settings.rkb.dev/checked",
    match_condition(name = "creates-only", expression = "request.operation == 'CREATE'")
)]
impl Defaulter<ConfigMap> for ConfigMapHooks {
    async fn apply_defaults(&self, _: &Request, map: &mut ConfigMap) -> Result<(), Denied> {
        let data = map.data.get_or_insert_default();
        data.insert("defaulted".into(), "true".into());
        Ok(())
    }
}

#[rkb_runtime::webhook(
    admission_review_versions(v1, v1beta1),
    namespace_selector = "kubernetes.io/metadata.name notin (default, kube-system)",
    object_selector = "settings.rkb.dev/checked in (yes, true)",
    match_condition(name = "not-exempt", expression = "object.metadata.name != 'exempt'"),
    match_condition(
        name = "has-data",
        expression = "has(object.data) && size(object.data) > 0"
    )
)]
impl Validator<ConfigMap> for ConfigMapHooks {
    async fn validate_create(&self, _: &Request, map: &ConfigMap) -> Result<Warnings, Denied> {
        refuse_deny(map.data.as_ref())
    }

    async fn validate_update(
        &self,
        _: &Request,
        _: &ConfigMap,
        map: &ConfigMap,
    ) -> Result<Warnings, Denied> {
        refuse_deny(map.data.as_ref())
    }
}
// ANCHOR_END: settings

/// A webhook out of the cluster: the configuration names its URL, and the manager
/// serves it at the URL's path.
struct SecretHook;

#[rkb_runtime::webhook(
    url = "https://webhooks.example.com:9443/validate-secrets",
    operations(create)
)]
impl Validator<Secret> for SecretHook {
    async fn validate_create(&self, _: &Request, secret: &Secret) -> Result<Warnings, Denied> {
        // The API server has merged `stringData` into `data` before admission.
        let keys = secret.data.as_ref().map(|data| {
            data.keys()
                .map(|k| (k.clone(), String::new()))
                .collect::<BTreeMap<_, _>>()
        });
        refuse_deny(keys.as_ref())
    }

    async fn validate_update(
        &self,
        _: &Request,
        _: &Secret,
        _: &Secret,
    ) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

fn refuse_deny(data: Option<&BTreeMap<String, String>>) -> Result<Warnings, Denied> {
    if data.is_some_and(|data| data.contains_key("deny")) {
        return Err(Denied::new(DENIED));
    }
    Ok(Warnings::new())
}

fn served() -> &'static (SocketAddr, WebhookCerts) {
    static SERVED: OnceLock<(SocketAddr, WebhookCerts)> = OnceLock::new();
    SERVED.get_or_init(|| {
        let certs = WebhookCerts::generate().unwrap();
        let files = TlsFiles::in_dir(certs.dir());
        let (bound, addr) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let server = Webhooks::new()
                    .defaulter::<ConfigMap, _>(ConfigMapHooks)
                    .validator::<ConfigMap, _>(ConfigMapHooks)
                    .validator::<Secret, _>(SecretHook)
                    .bind(SocketAddr::from(([127, 0, 0, 1], 0)), &files)
                    .await
                    .unwrap();
                bound.send(server.local_addr().unwrap()).unwrap();
                server.serve(CancellationToken::new()).await;
            });
        });
        (addr.recv().unwrap(), certs)
    })
}

/// `config/webhook/manifests.yaml` as `make manifests` writes it, one JSON object a
/// configuration.
fn rendered() -> Vec<Value> {
    let manifests = rkb_runtime::Manifests::new(vec![], vec![]).webhooks(vec![
        rkb_runtime::defaulting_webhook::<ConfigMap, ConfigMapHooks>(),
        rkb_runtime::validating_webhook::<ConfigMap, ConfigMapHooks>(),
        rkb_runtime::validating_webhook::<Secret, SecretHook>(),
    ]);
    let files = manifests.render().unwrap_or_else(|e| panic!("{e}"));
    files[std::path::Path::new("config/webhook/manifests.yaml")]
        .split("\n---\n")
        .map(|doc| serde_yaml_ng::from_str(doc.trim_start_matches("---\n")).unwrap())
        .collect()
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

/// Creates `object` (a webhook configuration as JSON) as a dry run, under a name of its
/// own (the other tests install the same configurations): the API server validates it in
/// full and stores nothing.
async fn validate_on_server(client: &Client, object: &Value) -> kube::Result<()> {
    let mut object = object.clone();
    object["metadata"]["name"] = "dry-run".into();
    match object["kind"].as_str() {
        Some("MutatingWebhookConfiguration") => {
            let typed: MutatingWebhookConfiguration = serde_json::from_value(object).unwrap();
            Api::all(client.clone())
                .create(&dry_run(), &typed)
                .await
                .map(drop)
        }
        Some("ValidatingWebhookConfiguration") => {
            let typed: ValidatingWebhookConfiguration = serde_json::from_value(object).unwrap();
            Api::all(client.clone())
                .create(&dry_run(), &typed)
                .await
                .map(drop)
        }
        other => panic!("not a webhook configuration: {other:?}"),
    }
}

fn config_map(name: &str, checked: Option<&str>, deny: bool) -> ConfigMap {
    let labels = checked.map(|value| BTreeMap::from([(CHECKED.to_owned(), value.to_owned())]));
    let key = if deny { "deny" } else { "allow" };
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels,
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(key.to_owned(), "x".to_owned())])),
        ..ConfigMap::default()
    }
}

/// The API server with the configurations installed (pointed at the test's server), and a
/// namespace of the test's.
async fn api_server() -> (&'static Environment, String) {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let (addr, certs) = served();
    let configurations = rendered()
        .into_iter()
        .map(|mut object| {
            certs.point_at(*addr, &mut object);
            serde_json::from_value(object).unwrap()
        })
        .collect();
    env.apply().objects(configurations).await.unwrap();
    let namespace = env.create_namespace().await.unwrap();
    let maps: Api<ConfigMap> = Api::namespaced(env.client(), &namespace);
    // The API server picks configurations up asynchronously: dry-run until refused.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match maps
            .create(&dry_run(), &config_map("probe", Some("yes"), true))
            .await
        {
            Err(kube::Error::Api(status)) if status.message.contains(DENIED) => break,
            other if Instant::now() > deadline => {
                panic!("the webhooks are never called: {other:?}")
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    (env, namespace)
}

fn refused_by_webhook(result: kube::Result<ConfigMap>) -> bool {
    matches!(result, Err(kube::Error::Api(status)) if status.code == 403 && status.message.contains(DENIED))
}

#[tokio::test]
async fn the_rendered_settings_are_accepted_by_the_api_server_as_written() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let objects = rendered();
    let mutating = objects
        .iter()
        .find(|o| o["kind"] == "MutatingWebhookConfiguration")
        .unwrap();
    let hook = &mutating["webhooks"][0];
    assert_eq!(hook["reinvocationPolicy"], "IfNeeded");
    assert_eq!(
        hook["objectSelector"],
        json!({"matchExpressions": [{"key": CHECKED, "operator": "Exists"}]})
    );
    let validating = objects
        .iter()
        .find(|o| o["kind"] == "ValidatingWebhookConfiguration")
        .unwrap();
    let secret_hook = validating["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["rules"][0]["resources"] == json!(["secrets"]))
        .unwrap();
    assert_eq!(
        secret_hook["clientConfig"],
        json!({"url": "https://webhooks.example.com:9443/validate-secrets"})
    );
    for object in &objects {
        validate_on_server(&env.client(), object)
            .await
            .unwrap_or_else(|e| panic!("the API server refuses {object}: {e}"));
    }
}

#[tokio::test]
async fn requests_the_selectors_and_conditions_leave_out_never_reach_the_webhook() {
    let (env, namespace) = api_server().await;
    let maps: Api<ConfigMap> = Api::namespaced(env.client(), &namespace);
    let create = |map: ConfigMap| {
        let maps = maps.clone();
        async move { maps.create(&PostParams::default(), &map).await }
    };
    // Selected and matched: refused by the validator, or defaulted by the defaulter.
    assert!(refused_by_webhook(
        create(config_map("denied", Some("yes"), true)).await
    ));
    let defaulted = create(config_map("kept", Some("yes"), false))
        .await
        .unwrap();
    assert_eq!(
        defaulted.data.unwrap().get("defaulted").map(String::as_str),
        Some("true")
    );
    // Not selected by the object selectors: neither webhook is called.
    let unlabelled = create(config_map("unlabelled", None, true)).await.unwrap();
    assert!(!unlabelled.data.unwrap().contains_key("defaulted"));
    // The validator's selector takes yes or true only; the defaulter's any value.
    let other_value = create(config_map("other-value", Some("no"), true))
        .await
        .unwrap();
    assert_eq!(
        other_value
            .data
            .unwrap()
            .get("defaulted")
            .map(String::as_str),
        Some("true")
    );
    // A match condition is false: the validator is not called.
    create(config_map("exempt", Some("yes"), true))
        .await
        .unwrap();
    // The namespace selector leaves `default` out.
    let in_default: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    in_default
        .create(&dry_run(), &config_map("in-default", Some("yes"), true))
        .await
        .unwrap();
    // The defaulter's condition is for creates only: an update is not defaulted again.
    let mut updated = maps.get("unlabelled").await.unwrap();
    updated.metadata.labels = Some(BTreeMap::from([(CHECKED.to_owned(), "yes".to_owned())]));
    updated.data = Some(BTreeMap::from([("allow".to_owned(), "y".to_owned())]));
    let updated = maps
        .replace("unlabelled", &PostParams::default(), &updated)
        .await
        .unwrap();
    assert!(!updated.data.unwrap().contains_key("defaulted"));
}

#[tokio::test]
async fn a_webhook_with_a_url_is_served_at_the_urls_path() {
    let (env, namespace) = api_server().await;
    let secrets: Api<Secret> = Api::namespaced(env.client(), &namespace);
    let secret = |key: &str| Secret {
        metadata: ObjectMeta {
            name: Some(format!("with-{key}")),
            ..ObjectMeta::default()
        },
        string_data: Some(BTreeMap::from([(key.to_owned(), "x".to_owned())])),
        ..Secret::default()
    };
    secrets
        .create(&PostParams::default(), &secret("allow"))
        .await
        .unwrap();
    match secrets
        .create(&PostParams::default(), &secret("deny"))
        .await
    {
        Err(kube::Error::Api(status)) => assert!(status.message.contains(DENIED), "{status:?}"),
        other => panic!("expected the URL webhook's refusal, got {other:?}"),
    }
}

/// What rkb refuses at compile time (and `make manifests` when settings are written by
/// hand, but for the CEL of match conditions, which only the derive parses), the API server
/// refuses too: each case changes one field of a rendered configuration and of the
/// settings behind it.
#[tokio::test]
async fn what_rkb_refuses_the_api_server_refuses() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let validating = rendered()
        .into_iter()
        .find(|o| o["kind"] == "ValidatingWebhookConfiguration")
        .unwrap();
    let condition = |expression: &str| {
        vec![rkb_runtime::webhook::MatchCondition {
            name: "c".into(),
            expression: expression.into(),
        }]
    };
    let cases: Vec<(&str, Value, Settings)> = vec![
        (
            "/matchConditions",
            json!([{"name": "c", "expression": "object.metadata.name == "}]),
            Settings {
                match_conditions: condition("object.metadata.name == "),
                ..Settings::default()
            },
        ),
        (
            "/matchConditions",
            json!([{"name": "Not valid!", "expression": "true"}]),
            Settings {
                match_conditions: vec![rkb_runtime::webhook::MatchCondition {
                    name: "Not valid!".into(),
                    expression: "true".into(),
                }],
                ..Settings::default()
            },
        ),
        (
            "/clientConfig",
            json!({"url": "http://webhooks.example.com/validate"}),
            Settings {
                url: Some("http://webhooks.example.com/validate".into()),
                ..Settings::default()
            },
        ),
        (
            "/clientConfig",
            json!({"url": "https://webhooks.example.com/validate?x=1"}),
            Settings {
                url: Some("https://webhooks.example.com/validate?x=1".into()),
                ..Settings::default()
            },
        ),
        (
            "/objectSelector",
            json!({"matchExpressions": [{"key": "-tier", "operator": "Exists"}]}),
            Settings {
                object_selector: Some("-tier".into()),
                ..Settings::default()
            },
        ),
        (
            "/admissionReviewVersions",
            json!(["v2"]),
            Settings::default(), // no ReviewVersion can be v2: the type refuses it
        ),
    ];
    for (field, value, settings) in cases {
        let mut object = validating.clone();
        object["webhooks"][0][&field[1..]] = value.clone();
        let refused = validate_on_server(&env.client(), &object).await;
        assert!(
            matches!(&refused, Err(kube::Error::Api(status)) if status.code == 422),
            "the API server accepts {field} = {value}: {refused:?}"
        );
        if settings != Settings::default() {
            assert!(
                settings.check(Kind::Validating).is_err(),
                "rkb accepts what the API server refuses: {settings:?}"
            );
        }
    }
}
