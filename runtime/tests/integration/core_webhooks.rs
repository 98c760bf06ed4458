//! Webhooks for a built-in kind the operator neither defines nor controls (what `rkb create
//! webhook --group core --version v1 --kind Pod` scaffolds): the configurations `make
//! manifests` renders for Pods, installed on a real API server (envtest) and pointed at a
//! webhook server on loopback, default and refuse Pods created through the API server.
//! A test binary of its own: every Pod created on its API server goes through them.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, ResourceExt as _};
use rkb_envtest::{Environment, WebhookCerts};
use rkb_runtime::webhook::{Defaulter, Denied, Request, TlsFiles, Validator, Warnings, Webhooks};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

const LABEL: &str = "webhook.rkb.dev/defaulted";

/// Labels every Pod; refuses Pods on the host's network.
struct PodWebhook;

#[rkb_runtime::webhook(
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl Defaulter<Pod> for PodWebhook {
    async fn apply_defaults(&self, _: &Request, pod: &mut Pod) -> Result<(), Denied> {
        pod.labels_mut().insert(LABEL.into(), "true".into());
        Ok(())
    }
}

#[rkb_runtime::webhook(
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl Validator<Pod> for PodWebhook {
    async fn validate_create(&self, _: &Request, pod: &Pod) -> Result<Warnings, Denied> {
        refuse_host_network(pod)
    }

    async fn validate_update(&self, _: &Request, _: &Pod, pod: &Pod) -> Result<Warnings, Denied> {
        refuse_host_network(pod)
    }
}

fn refuse_host_network(pod: &Pod) -> Result<Warnings, Denied> {
    if pod.spec.as_ref().and_then(|s| s.host_network) == Some(true) {
        return Err(Denied::new(
            "pods on the host's network are not allowed here",
        ));
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
                    .defaulter::<Pod, _>(PodWebhook)
                    .validator::<Pod, _>(PodWebhook)
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

fn pod(name: &str, host_network: bool) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some("registry.k8s.io/pause:3.10".into()),
                ..Container::default()
            }],
            host_network: Some(host_network),
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

/// The API server with the rendered configurations installed and called, and a namespace.
async fn api_server() -> (&'static Environment, Api<Pod>) {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let (addr, certs) = served();
    let manifests = rkb_runtime::Manifests::new(vec![], vec![]).webhooks(vec![
        rkb_runtime::defaulting_webhook::<Pod, PodWebhook>(),
        rkb_runtime::validating_webhook::<Pod, PodWebhook>(),
    ]);
    let files = manifests.render().unwrap_or_else(|e| panic!("{e}"));
    let configurations = files[std::path::Path::new("config/webhook/manifests.yaml")]
        .split("\n---\n")
        .map(|doc| {
            let mut object: Value =
                serde_yaml_ng::from_str(doc.trim_start_matches("---\n")).unwrap();
            certs.point_at(*addr, &mut object);
            serde_json::from_value(object).unwrap()
        })
        .collect();
    env.apply().objects(configurations).await.unwrap();
    let pods = Api::namespaced(env.client(), &env.create_namespace().await.unwrap());
    // The API server picks configurations up asynchronously: dry-run until refused.
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match pods.create(&dry_run, &pod("probe", true)).await {
            Err(kube::Error::Api(status)) if status.message.contains("host's network") => break,
            other if Instant::now() > deadline => {
                panic!("the webhooks are never called: {other:?}")
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    (env, pods)
}

#[tokio::test]
async fn pods_created_through_the_api_server_are_defaulted_and_validated() {
    let (_env, pods) = api_server().await;
    pods.create(&PostParams::default(), &pod("web", false))
        .await
        .unwrap();
    let stored = pods.get("web").await.unwrap();
    assert_eq!(stored.labels().get(LABEL).map(String::as_str), Some("true"));

    let refused = pods
        .create(&PostParams::default(), &pod("host", true))
        .await
        .unwrap_err();
    match refused {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 403, "{status:?}");
            assert!(
                status
                    .message
                    .contains("pods on the host's network are not allowed here"),
                "{}",
                status.message
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(pods.get_opt("host").await.unwrap().is_none());
}
