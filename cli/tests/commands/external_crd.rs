//! `rkb create api --external-crd`: what it reports, and that `delete api` and `alpha
//! generate` handle what it wrote. (The round trip of the schema is the test in each types
//! file of testdata/project-external; refusals are in bad_input.rs.)

use crate::common;

use std::path::{Path, PathBuf};

fn data(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/external-crds")
        .join(file)
        .to_str()
        .unwrap()
        .to_owned()
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    common::rkb(&[
        "init",
        "--dir",
        dir.path().to_str().unwrap(),
        "--domain",
        "example.com",
        "--project-name",
        "demo",
        "--rkb-path",
        repo.to_str().unwrap(),
    ])
    .unwrap();
    dir
}

#[test]
fn the_command_names_what_the_types_leave_out_by_json_path() {
    let project = project();
    let dir = project.path().to_str().unwrap();
    let out = common::rkb(&[
        "create",
        "api",
        "--dir",
        dir,
        "--external-crd",
        &data("shapes/shapes.example.org_shapes.yaml"),
    ])
    .unwrap();
    for line in [
        "warning: the types of Shape shapes.example.org/v1beta1 leave out what #[rkb(...)] cannot express (1 place;",
        "  .spec.either: `oneOf`: no Rust type or key expresses it",
    ] {
        assert!(out.contains(line), "{line:?} not in:\n{out}");
    }
    // What it could express is there: a CEL rule with every field, on the spec.
    let types = std::fs::read_to_string(
        project
            .path()
            .join("api/src/external/shapes/v1beta1/shape.rs"),
    )
    .unwrap();
    assert!(
        types.contains("message_expression = \"'size is negative'\", reason = FieldValueInvalid, field_path = \".size\""),
        "{types}"
    );
    let project_file = std::fs::read_to_string(project.path().join("PROJECT")).unwrap();
    assert!(
        project_file
            .contains("  domain: example.org\n  external: true\n  group: shapes\n  kind: Shape\n"),
        "{project_file}"
    );
    assert!(
        !project.path().join("config/crd/bases").exists() || {
            std::fs::read_dir(project.path().join("config/crd/bases"))
                .unwrap()
                .next()
                .is_none()
        }
    );
}

#[test]
fn create_then_delete_gives_the_tree_back_byte_for_byte() {
    let project = project();
    let dir = project.path().to_str().unwrap();
    common::rkb(&[
        "create",
        "api",
        "--dir",
        dir,
        "--group",
        "cache",
        "--version",
        "v1",
        "--kind",
        "Memcached",
    ])
    .unwrap();
    let before = common::files(project.path());
    for file in [
        "cert-manager/cert-manager.io_certificates.yaml",
        "gateway-api/gateway.networking.k8s.io_httproutes.yaml",
    ] {
        common::rkb(&["create", "api", "--dir", dir, "--external-crd", &data(file)]).unwrap();
    }
    let out = common::rkb(&[
        "delete",
        "api",
        "--dir",
        dir,
        "--group",
        "cert-manager",
        "--version",
        "v1",
        "--kind",
        "Certificate",
    ])
    .unwrap();
    assert!(
        out.lines().any(|l| l.trim_start().starts_with("remove ")
            && l.ends_with("/config/external-crds/cert-manager.io_certificates.yaml")),
        "{out}"
    );
    // Webhooks on an external kind, as on a built-in one; `delete webhook` takes them back.
    let webhook = |command: &str| {
        common::rkb(&[
            command,
            "webhook",
            "--dir",
            dir,
            "--group",
            "gateway",
            "--version",
            "v1",
            "--kind",
            "HTTPRoute",
            "--defaulting",
            "--programmatic-validation",
        ])
        .unwrap()
    };
    webhook("create");
    let admission =
        std::fs::read_to_string(project.path().join("src/webhook/v1/http_route.rs")).unwrap();
    for part in [
        "use crate::api::external::gateway::v1::HTTPRoute;",
        "impl webhook::Defaulter<HTTPRoute> for HTTPRouteWebhook {",
        "path = \"/validate-gateway-networking-k8s-io-v1-httproute\",",
    ] {
        assert!(admission.contains(part), "{part:?} not in:\n{admission}");
    }
    webhook("delete");
    common::rkb(&[
        "delete",
        "api",
        "--dir",
        dir,
        "--group",
        "gateway",
        "--version",
        "v1",
        "--kind",
        "HTTPRoute",
    ])
    .unwrap();
    let after = common::files(project.path());
    let differ: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    assert!(differ.is_empty(), "create then delete changed {differ:?}");
}

/// The webhook configurations `make manifests` wrote for the golden project's external
/// Tunnel name its group, version and resource (the project's `manifests_are_up_to_date`
/// test holds the file to what the types derive).
#[test]
fn webhook_configurations_name_the_external_group_version_and_resource() {
    let manifests = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/project-external/config/webhook/manifests.yaml"),
    )
    .unwrap();
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        assert!(
            manifests.contains(&format!("kind: {kind}\n")),
            "{manifests}"
        );
    }
    let rules = "  rules:\n  - apiGroups:\n    - relay.example.net\n    apiVersions:\n    - v1\n    \
                 operations:\n    - CREATE\n    - UPDATE\n    resources:\n    - tunnels\n";
    assert_eq!(manifests.matches(rules).count(), 2, "{manifests}");
    for path in [
        "path: /mutate-relay-example-net-v1-tunnel\n",
        "path: /validate-relay-example-net-v1-tunnel\n",
    ] {
        assert!(manifests.contains(path), "{path:?} not in:\n{manifests}");
    }
}

#[test]
fn alpha_generate_replays_external_apis_from_the_kept_crds() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/project-external");
    let tmp = tempfile::tempdir().unwrap();
    let output = tmp.path().join("out");
    common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        input.to_str().unwrap(),
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap();
    let (expected, generated) = (common::files(&input), common::files(&output));
    for (path, content) in &expected {
        // make manifests' output, and the lock file of the workspace build.
        let manifests = path
            .to_str()
            .is_some_and(rkb::model::written_by_make_manifests);
        if manifests || path == Path::new("Cargo.lock") {
            continue;
        }
        let mut written = generated.get(path).cloned();
        // The golden is a member of rkb's workspace; the output, alone, is a workspace of
        // its own.
        if path == Path::new("Cargo.toml") {
            let text = String::from_utf8(written.unwrap()).unwrap();
            let (alone, workspace) = text.split_once("\n# The operator, its API crate").unwrap();
            assert!(workspace.contains("[workspace]"), "{workspace}");
            written = Some(alone.as_bytes().to_vec());
        }
        assert!(
            written.as_ref() == Some(content),
            "alpha generate wrote {} differently",
            path.display()
        );
    }
}

/// A kind named like a type generated code uses (`Schema`), and list items that are objects
/// without properties: an empty struct keeps their description; a map or kept unknown fields
/// cannot, which is reported (and listed in the round-trip test of testdata/project-external).
#[test]
fn list_items_without_properties_are_reported_where_the_types_differ() {
    let project = project();
    let out = common::rkb(&[
        "create",
        "api",
        "--dir",
        project.path().to_str().unwrap(),
        "--external-crd",
        &data("shapes/shapes.example.org_schemas.yaml"),
    ])
    .unwrap();
    for line in [
        "warning: the types of Schema shapes.example.org/v1 leave out what #[rkb(...)] cannot express (4 places;",
        "  .spec.extensions[]: `x-kubernetes-preserve-unknown-fields` on list items or map values without properties",
        "  .spec.extensions[]: `additionalProperties`: list items or map values that keep unknown fields are a map of any values here",
        "  .spec.extensions[]: `description` of list items that are no struct",
        "  .spec.labelSets[]: `description` of list items that are no struct",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(line)),
            "{line:?} not in:\n{out}"
        );
    }
    assert!(!out.contains(".spec.references"), "{out}");
    let types =
        std::fs::read_to_string(project.path().join("api/src/external/shapes/v1/schema.rs"))
            .unwrap();
    assert!(
        types.contains(
            "/// A reference, whose fields the API server prunes.\n#[rkb_runtime::schema]"
        ),
        "{types}"
    );
    assert!(!types.contains("use schemars::{"), "{types}");
}

/// Two versions of one external kind: the types of each, one controller (for the version
/// asked with one), one kept CRD; `alpha generate` replays both and `delete api` takes each
/// back, the kept CRD with the last.
#[test]
fn a_second_version_of_an_external_kind_joins_the_first() {
    let project = project();
    let dir = project.path().to_str().unwrap();
    let before = common::files(project.path());
    let tunnels = data("kinds/relay.example.net_tunnels.yaml");
    common::rkb(&[
        "create",
        "api",
        "--dir",
        dir,
        "--external-crd",
        &tunnels,
        "--version",
        "v1beta1",
        "--controller=false",
    ])
    .unwrap();
    common::rkb(&["create", "api", "--dir", dir, "--external-crd", &tunnels]).unwrap();
    for file in [
        "api/src/external/relay/v1/tunnel.rs",
        "api/src/external/relay/v1beta1/tunnel.rs",
        "src/controller/tunnel.rs",
    ] {
        assert!(project.path().join(file).exists(), "{file}");
    }
    let project_file = std::fs::read_to_string(project.path().join("PROJECT")).unwrap();
    for entry in [
        "- controller: true\n  domain: example.net\n  external: true\n  group: relay\n  kind: Tunnel\n  \
         namespaced: true\n  path: crate::api::external::relay::v1::Tunnel\n",
        "- domain: example.net\n  external: true\n  group: relay\n  kind: Tunnel\n  namespaced: true\n  \
         path: crate::api::external::relay::v1beta1::Tunnel\n",
    ] {
        assert!(
            project_file.contains(entry),
            "{entry:?} not in:\n{project_file}"
        );
    }
    let controller =
        std::fs::read_to_string(project.path().join("src/controller/tunnel.rs")).unwrap();
    assert!(
        controller.contains("crate::api::external::relay::v1::Tunnel"),
        "{controller}"
    );

    let replayed = tempfile::tempdir().unwrap();
    let output = replayed.path().join("out");
    common::rkb(&[
        "alpha",
        "generate",
        "--input-dir",
        dir,
        "--output-dir",
        output.to_str().unwrap(),
        "--no-manifests",
    ])
    .unwrap();
    let (input, generated) = (common::files(project.path()), common::files(&output));
    assert_eq!(
        input.keys().collect::<Vec<_>>(),
        generated.keys().collect::<Vec<_>>()
    );
    for (path, content) in &input {
        assert!(generated.get(path) == Some(content), "{}", path.display());
    }

    let delete = |version: &str| {
        common::rkb(&[
            "delete",
            "api",
            "--dir",
            dir,
            "--group",
            "relay",
            "--version",
            version,
            "--kind",
            "Tunnel",
        ])
        .unwrap()
    };
    delete("v1beta1");
    assert!(
        project
            .path()
            .join("config/external-crds/relay.example.net_tunnels.yaml")
            .exists()
    );
    assert!(
        !project
            .path()
            .join("api/src/external/relay/v1beta1")
            .exists()
    );
    delete("v1");
    let after = common::files(project.path());
    let differ: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    assert!(differ.is_empty(), "create then delete changed {differ:?}");
}

/// A kind Kubernetes accepts in lowercase (`kind: postgresql`): the type gets a Rust name
/// (`Postgresql`, which PROJECT records and the flags take), the objects keep the kind.
#[test]
fn a_lowercase_kind_gets_a_rust_type_name_and_keeps_its_kind_on_the_wire() {
    let project = project();
    let dir = project.path().to_str().unwrap();
    let before = common::files(project.path());
    let out = common::rkb(&[
        "create",
        "api",
        "--dir",
        dir,
        "--external-crd",
        &data("kinds/db.example.net_postgresqls.yaml"),
    ])
    .unwrap();
    assert!(
        out.contains("The types of postgresql db.example.net/v1 express its whole schema."),
        "{out}"
    );
    let types =
        std::fs::read_to_string(project.path().join("api/src/external/db/v1/postgresql.rs"))
            .unwrap();
    for part in [
        "    kind = \"postgresql\",\n",
        "    root = \"Postgresql\",\n",
        "    status = \"PostgresqlStatus\",\n",
        "pub struct PostgresqlSpec {",
        "rkb_runtime::crd::<Postgresql>()",
    ] {
        assert!(types.contains(part), "{part:?} not in:\n{types}");
    }
    let controller =
        std::fs::read_to_string(project.path().join("src/controller/postgresql.rs")).unwrap();
    assert!(
        controller.contains("\"kind\": \"postgresql\",")
            && controller.contains("use crate::api::external::db::v1::Postgresql;"),
        "{controller}"
    );
    let project_file = std::fs::read_to_string(project.path().join("PROJECT")).unwrap();
    assert!(
        project_file.contains("  kind: Postgresql\n"),
        "{project_file}"
    );
    // The flags take the kind as the CRD spells it, too.
    let again = common::rkb(&[
        "create",
        "api",
        "--dir",
        dir,
        "--external-crd",
        &data("kinds/db.example.net_postgresqls.yaml"),
        "--kind",
        "postgresql",
        "--force",
    ]);
    assert!(again.is_ok(), "{again:?}");
    common::rkb(&[
        "delete",
        "api",
        "--dir",
        dir,
        "--group",
        "db",
        "--version",
        "v1",
        "--kind",
        "Postgresql",
    ])
    .unwrap();
    let after = common::files(project.path());
    let differ: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    assert!(differ.is_empty(), "create then delete changed {differ:?}");
}

/// An object whose spec is optional, and one with fields beside it: kube's `no_spec`
/// flattens a struct of them onto the object, so nothing of either is left out. (The
/// golden project's controller tests create both through a real API server, the first
/// without a spec.)
#[test]
fn an_optional_spec_and_top_level_fields_are_kept() {
    let project = project();
    let dir = project.path().to_str().unwrap();
    let create = |file: &str| {
        common::rkb(&["create", "api", "--dir", dir, "--external-crd", &data(file)]).unwrap()
    };
    let out = create("kinds/backup.example.net_snapshots.yaml");
    assert!(out.contains("express its whole schema"), "{out}");
    let snapshot = std::fs::read_to_string(
        project
            .path()
            .join("api/src/external/backup/v1alpha1/snapshot.rs"),
    )
    .unwrap();
    for part in [
        "    no_spec,\n",
        "pub struct SnapshotFields {\n    /// What to snapshot.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub spec: Option<SnapshotSpec>,\n}",
        "#[rkb(printcolumn(name = \"Source\", type = string, json_path = \".spec.source\"))]",
        "pub struct SnapshotSpec {",
    ] {
        assert!(snapshot.contains(part), "{part:?} not in:\n{snapshot}");
    }
    let controller =
        std::fs::read_to_string(project.path().join("src/controller/snapshot.rs")).unwrap();
    assert!(!controller.contains("\"spec\":"), "{controller}");

    let out = create("kinds/policy.example.net_accesspolicies.yaml");
    assert!(out.contains("express its whole schema"), "{out}");
    let policy = std::fs::read_to_string(
        project
            .path()
            .join("api/src/external/policy/v1/access_policy.rs"),
    )
    .unwrap();
    for part in [
        "    no_spec,\n",
        "pub data: Option<BTreeMap<String, String>>,",
        "#[rkb(min_items = 1)]\n    pub rules: Vec<AccessPolicyRules>,",
        "status = \"AccessPolicyStatus\"",
    ] {
        assert!(policy.contains(part), "{part:?} not in:\n{policy}");
    }
    let controller =
        std::fs::read_to_string(project.path().join("src/controller/access_policy.rs")).unwrap();
    assert!(
        controller.contains("\"rules\": [{\"verbs\":[]}],"),
        "{controller}"
    );
}
