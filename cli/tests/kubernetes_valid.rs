//! Every golden project's and example's deployment is valid Kubernetes: `kubectl kustomize
//! config/default` builds, and every object in it passes `kubernetes-validate --strict`
//! against the Kubernetes version the projects are generated for.
//!
//! Needs kubectl and kubernetes-validate (`.ci/install-tools` installs them); a missing
//! tool fails the test rather than skipping it.

mod common;

use std::path::Path;

use serde_json::Value;

#[test]
fn deployments_build_and_pass_the_official_schemas() {
    for project in common::projects() {
        let built = common::kustomize_default(&project);
        let rendered = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(rendered.path(), &built).unwrap();
        let mut files = vec![rendered.path().to_path_buf()];
        // CRDs are validated on their own too: config/default leaves them out until an API exists.
        if let Ok(bases) = std::fs::read_dir(project.join("config/crd/bases")) {
            files.extend(bases.map(|e| e.unwrap().path()));
        }
        for file in files {
            common::kubernetes_validate(&file, &project);
        }
        let objects = built.matches("\nkind: ").count() + 1;
        assert!(
            objects >= 6,
            "{}: only {objects} objects rendered",
            project.display()
        );
    }
}

/// The webhook golden's deployment wires its parts together, which no schema checks: the
/// certificate names the webhook Service as kustomize renamed it, cert-manager injects its
/// CA into both webhook configurations and the converted CRD, every webhook (admission and
/// conversion) calls that Service, and the manager mounts the certificate's Secret.
#[test]
fn webhook_deployment_wires_service_certificate_and_ca_injection() {
    let project =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/project-memcached-webhook");
    let built = common::kustomize_default(&project);
    let objects: Vec<Value> = built
        .split("\n---\n")
        .map(|doc| serde_yaml_ng::from_str(doc).unwrap())
        .collect();
    let find = |kind: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in config/default"))
    };
    let (namespace, prefix) = ("memcached-webhook-system", "memcached-webhook-");
    let webhook_service = format!("{prefix}webhook-service");
    assert!(
        objects
            .iter()
            .any(|o| o["kind"] == "Service" && o["metadata"]["name"] == webhook_service.as_str()),
        "no Service {webhook_service} in config/default"
    );

    let certificate = find("Certificate");
    assert_eq!(
        certificate["spec"]["dnsNames"],
        serde_json::json!([
            format!("{webhook_service}.{namespace}.svc"),
            format!("{webhook_service}.{namespace}.svc.cluster.local"),
        ])
    );
    assert_eq!(
        certificate["spec"]["issuerRef"]["name"],
        find("Issuer")["metadata"]["name"]
    );
    let injected = format!("{namespace}/{prefix}serving-cert");
    let crd = objects
        .iter()
        .find(|o| {
            o["kind"] == "CustomResourceDefinition"
                && o["spec"]["conversion"]["strategy"] == "Webhook"
        })
        .expect("a CRD with a conversion webhook");
    let conversion_service = &crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"];
    assert_eq!(conversion_service["name"], webhook_service.as_str());
    assert_eq!(conversion_service["namespace"], namespace);
    for object in [
        find("MutatingWebhookConfiguration"),
        find("ValidatingWebhookConfiguration"),
        crd,
    ] {
        assert_eq!(
            object["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            injected.as_str(),
            "{}",
            object["kind"]
        );
    }
    for configuration in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        for webhook in find(configuration)["webhooks"].as_array().unwrap() {
            assert_eq!(
                webhook["clientConfig"]["service"]["name"],
                webhook_service.as_str()
            );
            assert_eq!(webhook["clientConfig"]["service"]["namespace"], namespace);
        }
    }

    let pod = &find("Deployment")["spec"]["template"]["spec"];
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        certificate["spec"]["secretName"]
    );
    let manager = &pod["containers"][0];
    assert!(
        manager["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["mountPath"] == "/tmp/k8s-webhook-server/serving-certs"),
        "{manager}"
    );
    assert!(
        manager["ports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["containerPort"] == 9443),
        "{manager}"
    );
}
