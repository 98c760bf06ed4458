//! Unit tests of the chart's stages.

use serde_yaml_ng::Value;

use super::render::Key;
use super::sections::{Section, States, line_roles, switched};
use super::template::{helm_line, merge, owned, with_header};
use super::values::{mapping, merge_values, values_text};
use super::write::makefile;

const KUSTOMIZATION: &str = "\
resources:
- ../rbac
# [WEBHOOK] the webhook
# and its certificate.
- ../webhook
- ../certmanager
# +rkb:scaffold:webhook
# [METRICS] metrics
- metrics_service.yaml
# [PROMETHEUS] To scrape, uncomment.
#- ../prometheus

patches:
# [METRICS-WITH-CERTS] Mounts it.
#- path: cert_metrics_manager_patch.yaml
#  target:
#    kind: Deployment
replacements:
- a
";

#[test]
fn sections_are_read_and_switched_by_their_tags() {
    let roles = line_roles(KUSTOMIZATION);
    let of = |n: usize| (roles[n].section, roles[n].live);
    assert_eq!(of(1), (None, Some(true)));
    assert_eq!(of(4), (Some(Section::Webhook), Some(true)));
    assert_eq!(of(5), (Some(Section::CertManager), Some(true)));
    assert_eq!(of(8), (Some(Section::Metrics), Some(true)));
    assert_eq!(of(10), (Some(Section::Prometheus), Some(false)));
    assert_eq!(of(15), (Some(Section::MetricsCerts), Some(false)));
    assert_eq!(of(18), (None, Some(true)));
    let on: States = [
        (Section::Prometheus, true),
        (Section::MetricsCerts, true),
        (Section::CertManager, false),
    ]
    .into();
    let text = switched(KUSTOMIZATION, &on);
    assert!(text.contains("\n- ../prometheus\n"), "{text}");
    assert!(text.contains("\n#- ../certmanager\n"), "{text}");
    assert!(
        text.contains("\n  target:\n    kind: Deployment\n"),
        "{text}"
    );
    assert!(text.contains("\n- ../webhook\n- metrics") || text.contains("- ../webhook\n"));
    // Switched back, the text is what it was.
    let back: States = [
        (Section::Prometheus, false),
        (Section::MetricsCerts, false),
        (Section::CertManager, true),
    ]
    .into();
    assert_eq!(switched(&text, &back), KUSTOMIZATION);
}

#[test]
fn lines_a_section_brings_are_conditional_and_lines_it_replaces_alternatives() {
    let key = Key {
        kind: "Deployment".into(),
        namespace: "ns".into(),
        name: "m".into(),
    };
    let full = "a\n- --metrics-cert-path=x\nb\nmounts:\n- cert\nc\n";
    let without_certs = "a\nb\nmounts: []\nc\n";
    let template = merge(&key, full, &[(Section::MetricsCerts, Some(without_certs))]).unwrap();
    let helm = template.helm();
    assert_eq!(
        helm,
        "a\n{{- if .Values.metrics.certManager }}\n- --metrics-cert-path=x\n{{- end }}\nb\n\
         {{- if .Values.metrics.certManager }}\nmounts:\n- cert\n{{- end }}\n\
         {{- if not .Values.metrics.certManager }}\nmounts: []\n{{- end }}\nc\n"
    );
    let values = |on: bool| mapping([("metrics", mapping([("certManager", on.into())]))]);
    assert_eq!(template.plain(&values(true)).unwrap(), full);
    assert_eq!(template.plain(&values(false)).unwrap(), without_certs);
}

#[test]
fn the_users_values_stay_and_new_ones_come() {
    let parse = |s: &str| serde_yaml_ng::from_str::<Value>(s).unwrap();
    let previous =
        parse("manager: {replicas: 1, resources: {limits: {cpu: 1}}}\nmetrics: {enable: true}");
    let defaults = parse(
        "manager: {replicas: 2, resources: {limits: {cpu: 2}}}\nmetrics: {enable: true}\nprometheus: {enable: false}",
    );
    let mine = parse(
        "manager: {replicas: 1, resources: {requests: {cpu: 3}}, extra: x}\nmetrics: {enable: false}",
    );
    let merged = merge_values(&defaults, Some(&previous), Some(&mine));
    assert_eq!(
        merged,
        parse(
            "manager: {replicas: 2, resources: {requests: {cpu: 3}}, extra: x}\nmetrics: {enable: false}\nprometheus: {enable: false}"
        )
    );
    // values.yaml as written reads back as the same values.
    assert_eq!(parse(&values_text(&merged, "demo")), merged);
}

#[test]
fn the_namespace_becomes_the_releases_where_it_is_a_whole_name() {
    assert_eq!(
        helm_line(
            "  - x.demo-system.svc demo-system/cert demo-system-2",
            "demo-system"
        ),
        "  - x.{{ .Release.Namespace }}.svc {{ .Release.Namespace }}/cert demo-system-2"
    );
}

#[test]
fn a_template_rkb_wrote_is_told_from_an_edited_one_and_from_the_users() {
    let text = with_header("kind: X\n");
    assert_eq!(owned(&text), Some(true));
    assert_eq!(owned(&text.replace("X", "Y")), Some(false));
    assert_eq!(owned("kind: X\n"), None);
}

#[test]
fn the_makefile_gets_make_helm_once() {
    let text = "KUBECTL ?= kubectl\nRKB ?= rkb\n\n.PHONY: manifests\nmanifests: ## M.\n\t$(CARGO) run --bin m\n\n.PHONY: fmt\n";
    let with = makefile(text).unwrap().unwrap();
    assert_eq!(
        with,
        "KUBECTL ?= kubectl\nRKB ?= rkb\n\n.PHONY: manifests\nmanifests: ## M.\n\t$(CARGO) run --bin m\n\
         \tKUBECTL=$(KUBECTL) $(RKB) edit --plugins helm\n\n.PHONY: helm\n\
         helm: manifests ## Regenerate the Helm chart in dist/chart/ from config/ (as `make manifests` does): your values and your own templates stay.\n\n.PHONY: fmt\n"
    );
    assert_eq!(makefile(&with).unwrap(), None);
    assert!(makefile("all:\n\ttrue\n").is_err());
}
