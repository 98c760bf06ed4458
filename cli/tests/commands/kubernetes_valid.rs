//! Every golden project's and example's deployment is valid Kubernetes: `kubectl kustomize
//! config/default` builds, and every object in it passes `kubernetes-validate --strict`
//! against the Kubernetes version the projects are generated for.
//!
//! Needs kubectl and kubernetes-validate (`.ci/install-tools` installs them); a missing
//! tool fails the test rather than skipping it.

use crate::common;

use std::path::Path;

use serde_json::Value;

#[test]
fn deployments_build_and_pass_the_official_schemas() {
    for project in common::projects() {
        check_schemas(&project, &common::kustomize_default(&project), true);
    }
}

/// The same with every optional section of config/default switched on: the metrics
/// certificate, Prometheus (verifying it) and the network policies.
#[test]
fn deployments_with_every_section_on_build_and_pass_the_official_schemas() {
    for project in common::projects() {
        let on = common::all_sections_on(&project);
        let built = common::kustomize_default(on.path());
        for kind in ["Certificate", "ServiceMonitor", "NetworkPolicy"] {
            assert!(
                built.contains(&format!("\nkind: {kind}\n")),
                "{}: no {kind} with every section on",
                project.display()
            );
        }
        check_schemas(&project, &built, false);
    }
}

/// The same with [SHARDING] switched on: the Component's Role, binding and patch.
#[test]
fn deployments_with_sharding_on_build_and_pass_the_official_schemas() {
    for project in common::projects() {
        let on = common::sharding_on(&project);
        let built = common::kustomize_default(on.path());
        assert!(built.contains("- --sharding\n"), "{}", project.display());
        check_schemas(&project, &built, false);
    }
}

/// `built` (config/default of `project`) passes the official schemas; with `crds`, so do
/// the CRDs, validated on their own too (config/default leaves them out until an API exists).
fn check_schemas(project: &Path, built: &str, crds: bool) {
    let rendered = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(rendered.path(), built).unwrap();
    let mut files = vec![rendered.path().to_path_buf()];
    if crds && let Ok(bases) = std::fs::read_dir(project.join("config/crd/bases")) {
        files.extend(bases.map(|e| e.unwrap().path()));
    }
    for file in files {
        common::kubernetes_validate(&file, project);
    }
    let objects = built.matches("\nkind: ").count() + 1;
    assert!(
        objects >= 6,
        "{}: only {objects} objects rendered",
        project.display()
    );
}

/// The webhook golden switched to cert-manager (`rkb edit --webhook-certs cert-manager`)
/// wires its parts together, which no schema checks: the certificate names the webhook
/// Service as kustomize renamed it, cert-manager injects its CA into both webhook
/// configurations and the converted CRD, every webhook (admission and conversion) calls
/// that Service, and the manager mounts the certificate's Secret.
#[test]
fn with_cert_manager_the_webhook_deployment_wires_service_certificate_and_ca_injection() {
    let golden =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/project-memcached-webhook");
    let switched = common::switched_to_cert_manager(&golden);
    let project = switched.path();
    let built = common::kustomize_default(project);
    check_schemas(project, &built, false);
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

/// The webhook golden as generated (`webhookCerts: self`): config/default has no part of
/// cert-manager, the manager mounts no certificate, and the names api/src/webhook_certs.rs gives
/// the manager (its Secret, the webhook Service, the configurations and the CRD whose
/// `caBundle` it keeps) are those of the deployed objects, which its RBAC names, by name
/// only: exactly the rules of `rkb_runtime::webhook_certificate_rules`, nothing wider.
#[test]
fn with_self_managed_certificates_the_webhook_deployment_names_its_objects_and_needs_no_cert_manager()
 {
    let project =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/project-memcached-webhook");
    let certmanager = std::fs::read_dir(project.join("config/certmanager"));
    assert!(
        certmanager.map_or(true, |mut files| files.next().is_none()),
        "files in config/certmanager"
    );
    let built = common::kustomize_default(&project);
    assert!(!built.contains("cert-manager"), "{built}");
    let objects = parse(&built);

    // The names in certs.rs, in order: the Secret, the Service, then what keeps a caBundle.
    let certs = std::fs::read_to_string(project.join("api/src/webhook_certs.rs")).unwrap();
    let names: Vec<&str> = certs
        .split("(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    let [secret, service, mutating, validating, crd] = names[..] else {
        panic!("unexpected names in certs.rs: {names:?}")
    };
    for (kind, name) in [
        ("Service", service),
        ("MutatingWebhookConfiguration", mutating),
        ("ValidatingWebhookConfiguration", validating),
        ("CustomResourceDefinition", crd),
    ] {
        assert!(
            objects
                .iter()
                .any(|o| o["kind"] == kind && o["metadata"]["name"] == name),
            "certs.rs names the {kind} {name}, which config/default does not deploy"
        );
    }

    let pod =
        &named(&objects, "Deployment", "controller-manager").unwrap()["spec"]["template"]["spec"];
    let none = |list: &Value| list.as_array().is_none_or(Vec::is_empty);
    assert!(none(&pod["volumes"]), "{pod}");
    assert!(none(&pod["containers"][0]["volumeMounts"]), "{pod}");

    let rules = |kind: &str| -> Vec<Value> {
        named(&objects, kind, "manager-role").unwrap()["rules"]
            .as_array()
            .unwrap()
            .clone()
    };
    let namespaced = rules("Role");
    // With the metrics certificate's Secret (api/src/metrics_certs.rs), which comes with init.
    let metrics_secret = metrics_certificate_names(&project).0;
    assert_eq!(
        namespaced,
        serde_json::json!([
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
            {"apiGroups": [""], "resourceNames": [metrics_secret], "resources": ["secrets"],
             "verbs": ["get", "list", "update", "watch"]},
            {"apiGroups": [""], "resourceNames": [secret], "resources": ["secrets"],
             "verbs": ["get", "list", "update", "watch"]},
        ])
        .as_array()
        .unwrap()
        .clone()
    );
    let cluster = rules("ClusterRole");
    for (group, resource, name) in [
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
            mutating,
        ),
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
            validating,
        ),
        ("apiextensions.k8s.io", "customresourcedefinitions", crd),
    ] {
        let rule = serde_json::json!({
            "apiGroups": [group], "resourceNames": [name], "resources": [resource],
            "verbs": ["get", "patch"],
        });
        assert!(cluster.contains(&rule), "no {rule} in {cluster:?}");
        // No other rule of the manager reaches that resource.
        let reaching = cluster
            .iter()
            .filter(|r| {
                r["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x == resource)
            })
            .count();
        assert_eq!(reaching, 1, "{resource}: {cluster:?}");
    }
    for rule in cluster.iter().chain(&namespaced) {
        assert!(!rule.to_string().contains('*'), "a wildcard: {rule}");
    }
}

fn parse(built: &str) -> Vec<Value> {
    built
        .split("\n---\n")
        .map(|doc| serde_yaml_ng::from_str(doc).unwrap())
        .collect()
}

fn named<'a>(objects: &'a [Value], kind: &str, suffix: &str) -> Option<&'a Value> {
    objects.iter().find(|o| {
        o["kind"] == kind
            && o["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with(suffix))
    })
}

/// The Secret and the Service `api/src/metrics_certs.rs` names, if the project has it.
fn metrics_certificate_names(project: &Path) -> (String, String) {
    let certs = std::fs::read_to_string(project.join("api/src/metrics_certs.rs")).unwrap();
    let names: Vec<&str> = certs
        .split("(\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    let [secret, service] = names[..] else {
        panic!("unexpected names in metrics_certs.rs: {names:?}")
    };
    (secret.to_owned(), service.to_owned())
}

/// With `webhookCerts: self` the manager makes the metrics certificate, so switching on
/// [PROMETHEUS] alone gives a ServiceMonitor that verifies it: against `ca.crt` of the
/// Secret api/src/metrics_certs.rs names, which the manager's Role lets it keep (by name), for
/// the DNS name of the metrics Service config/default deploys, which metrics_certs.rs names
/// too. With cert-manager (and no [METRICS-WITH-CERTS]), it skips verification, as
/// kubebuilder's does.
#[test]
fn with_self_managed_certificates_the_service_monitor_verifies_the_managers_metrics_certificate() {
    let mut self_managed = 0;
    for project in common::projects() {
        let at = project.display().to_string();
        let on = common::prometheus_on(&project);
        let objects = parse(&common::kustomize_default(on.path()));
        let monitor = named(
            &objects,
            "ServiceMonitor",
            "controller-manager-metrics-monitor",
        )
        .unwrap_or_else(|| panic!("{at}: no ServiceMonitor"));
        let tls = &monitor["spec"]["endpoints"][0]["tlsConfig"];
        let recorded = std::fs::read_to_string(project.join("PROJECT")).unwrap();
        if !recorded.contains("webhookCerts: self") {
            assert_eq!(tls["insecureSkipVerify"], true, "{at}");
            assert!(!project.join("api/src/metrics_certs.rs").exists(), "{at}");
            continue;
        }
        self_managed += 1;
        let (secret, service_name) = metrics_certificate_names(&project);
        let service = named(&objects, "Service", "controller-manager-metrics-service")
            .unwrap_or_else(|| panic!("{at}: no metrics Service"));
        assert_eq!(service["metadata"]["name"], service_name.as_str(), "{at}");
        let dns = format!(
            "{service_name}.{}.svc",
            service["metadata"]["namespace"].as_str().unwrap()
        );
        assert_eq!(
            *tls,
            serde_json::json!({
                "serverName": dns,
                "insecureSkipVerify": false,
                "ca": {"secret": {"name": secret, "key": "ca.crt"}},
            }),
            "{at}"
        );
        assert_eq!(
            monitor["metadata"]["namespace"], service["metadata"]["namespace"],
            "{at}: the Secret must be in the ServiceMonitor's namespace"
        );
        let role = named(&objects, "Role", "manager-role")
            .unwrap_or_else(|| panic!("{at}: no manager Role"));
        assert_eq!(
            role["metadata"]["namespace"], service["metadata"]["namespace"],
            "{at}"
        );
        let keep = serde_json::json!({
            "apiGroups": [""], "resourceNames": [secret], "resources": ["secrets"],
            "verbs": ["get", "list", "update", "watch"],
        });
        let create = serde_json::json!({
            "apiGroups": [""], "resources": ["secrets"], "verbs": ["create"],
        });
        let rules = role["rules"].as_array().unwrap();
        assert!(
            rules.contains(&keep) && rules.contains(&create),
            "{at}: {rules:?}"
        );
        let pod = &named(&objects, "Deployment", "controller-manager").unwrap()["spec"]["template"]
            ["spec"];
        assert!(
            !pod.to_string().contains("--metrics-cert-path"),
            "{at}: the manager's own certificate, not a mounted one"
        );
    }
    assert!(
        self_managed >= 3,
        "self-managed golden projects: {self_managed}"
    );
}

/// With every section on, each project's metrics TLS is wired end to end, which no schema
/// checks: the metrics certificate names the metrics Service as kustomize renamed it and is
/// issued by an Issuer in the build; the manager mounts its Secret where --metrics-cert-path
/// points; the ServiceMonitor verifies it (the Secret's CA, the Service's DNS name, no
/// insecureSkipVerify). The network policies keep open the metrics port and, with webhooks,
/// the port the webhook Service sends to. With the sections off (as generated), none of it.
#[test]
fn metrics_certificate_monitor_and_network_policies_are_wired_when_switched_on() {
    for project in common::projects() {
        let at = project.display().to_string();
        let default = common::kustomize_default(&project);
        assert!(
            !default.contains("--metrics-cert-path"),
            "{at}: on by default"
        );
        assert!(!default.contains("metrics-certs"), "{at}: on by default");

        let on = common::all_sections_on(&project);
        let objects = parse(&common::kustomize_default(on.path()));
        let service = named(&objects, "Service", "controller-manager-metrics-service")
            .unwrap_or_else(|| panic!("{at}: no metrics Service"));
        let dns = format!(
            "{}.{}.svc",
            service["metadata"]["name"].as_str().unwrap(),
            service["metadata"]["namespace"].as_str().unwrap()
        );
        let certificate = named(&objects, "Certificate", "metrics-certs")
            .unwrap_or_else(|| panic!("{at}: no metrics Certificate"));
        assert_eq!(
            certificate["spec"]["dnsNames"],
            serde_json::json!([dns.clone(), format!("{dns}.cluster.local")]),
            "{at}"
        );
        let issuer = &certificate["spec"]["issuerRef"]["name"];
        assert!(
            objects
                .iter()
                .any(|o| o["kind"] == "Issuer" && &o["metadata"]["name"] == issuer),
            "{at}: no Issuer {issuer}"
        );
        let secret = &certificate["spec"]["secretName"];

        let pod = &named(&objects, "Deployment", "controller-manager")
            .unwrap_or_else(|| panic!("{at}: no Deployment"))["spec"]["template"]["spec"];
        let manager = &pod["containers"][0];
        let args: Vec<&str> = manager["args"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            args.contains(&"--metrics-bind-address=:8443"),
            "{at}: {args:?}"
        );
        let cert_path = args
            .iter()
            .find_map(|a| a.strip_prefix("--metrics-cert-path="))
            .unwrap_or_else(|| panic!("{at}: no --metrics-cert-path in {args:?}"));
        let mount = manager["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["mountPath"] == cert_path)
            .unwrap_or_else(|| panic!("{at}: nothing mounted at {cert_path}"));
        assert_eq!(mount["readOnly"], true, "{at}");
        let volume = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == mount["name"])
            .unwrap_or_else(|| panic!("{at}: no volume {}", mount["name"]));
        assert_eq!(&volume["secret"]["secretName"], secret, "{at}");
        assert_eq!(
            manager["securityContext"]["readOnlyRootFilesystem"], true,
            "{at}"
        );

        let monitor = named(
            &objects,
            "ServiceMonitor",
            "controller-manager-metrics-monitor",
        )
        .unwrap_or_else(|| panic!("{at}: no ServiceMonitor"));
        let tls = &monitor["spec"]["endpoints"][0]["tlsConfig"];
        assert_eq!(tls["insecureSkipVerify"], false, "{at}");
        assert_eq!(tls["serverName"], dns.as_str(), "{at}");
        assert_eq!(&tls["ca"]["secret"]["name"], secret, "{at}");
        assert_eq!(tls["ca"]["secret"]["key"], "ca.crt", "{at}");

        let metrics_policy = named(&objects, "NetworkPolicy", "allow-metrics-traffic")
            .unwrap_or_else(|| panic!("{at}: no metrics NetworkPolicy"));
        assert_eq!(
            metrics_policy["spec"]["ingress"][0]["ports"][0]["port"], 8443,
            "{at}"
        );
        let webhook_policy = named(&objects, "NetworkPolicy", "allow-webhook-traffic");
        match named(&objects, "Service", "webhook-service") {
            Some(webhook_service) => {
                let policy = webhook_policy
                    .unwrap_or_else(|| panic!("{at}: webhooks but no webhook NetworkPolicy"));
                let port = &webhook_service["spec"]["ports"][0]["targetPort"];
                assert_eq!(
                    &policy["spec"]["ingress"][0]["ports"][0]["port"], port,
                    "{at}"
                );
                assert!(
                    manager["ports"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|p| &p["containerPort"] == port),
                    "{at}: the manager does not listen on {port}"
                );
                assert_eq!(
                    policy["spec"]["podSelector"], metrics_policy["spec"]["podSelector"],
                    "{at}"
                );
            }
            None => assert!(
                webhook_policy.is_none(),
                "{at}: a webhook NetworkPolicy without webhooks"
            ),
        }
    }
}
