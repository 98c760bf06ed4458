//! Rendering, writing and checking `make manifests` output.

use std::fs;
use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResource;
use rkb_runtime::manifests::{Drift, Error};
use rkb_runtime::rbac::Rule;
use rkb_runtime::{Crd, CrdError, Manifests, Rbac, crd, rbac_rules};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod v1 {
    use super::*;

    /// The stored version.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(
        group = "cache.example.com",
        version = "v1",
        kind = "Memcached",
        namespaced
    )]
    pub struct MemcachedSpec {
        pub size: i32,
    }
}

mod v1alpha1 {
    use super::*;

    /// An older, still served version.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(
        group = "cache.example.com",
        version = "v1alpha1",
        kind = "Memcached",
        namespaced,
        storage = false
    )]
    pub struct MemcachedSpec {
        pub replicas: i32,
    }
}

/// A second, cluster-scoped kind.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Widget")]
pub struct WidgetSpec {
    pub color: String,
}

#[derive(Rbac)]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [get, list, watch, create, update, patch, delete])]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds/status"], verbs = [get, update, patch])]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds/finalizers"], verbs = [update])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, list, watch, create, update, patch, delete])]
#[rbac(groups = ["core"], resources = ["events"], verbs = [create, patch])]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [get, list, watch])]
#[rbac(groups = ["coordination.k8s.io"], resources = ["leases"], verbs = [get, create, update], namespace = "system")]
#[rbac(groups = ["core"], resources = ["configmaps"], resource_names = ["memcached-config"], verbs = [get], namespace = "system")]
#[rbac(urls = ["/metrics"], verbs = [get])]
struct MemcachedReconciler;

#[derive(Rbac)]
#[rbac(groups = ["example.com"], resources = ["widgets"], verbs = [get, list, watch])]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [list, delete])]
#[rbac(groups = ["core"], resources = ["events"], verbs = [create, patch])]
struct WidgetReconciler;

fn crds() -> Vec<Result<Crd, CrdError>> {
    vec![
        crd::<v1::Memcached>(),
        crd::<Widget>(),
        crd::<v1alpha1::Memcached>(),
    ]
}

fn manifests() -> Manifests {
    Manifests::new(
        crds(),
        vec![
            rbac_rules::<MemcachedReconciler>(),
            rbac_rules::<WidgetReconciler>(),
        ],
    )
}

const MEMCACHED_FILE: &str = "config/crd/bases/cache.example.com_memcacheds.yaml";
const WIDGET_FILE: &str = "config/crd/bases/example.com_widgets.yaml";
const ROLE_FILE: &str = "config/rbac/role.yaml";

const ROLE_YAML: &str = r#"---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- nonResourceURLs:
  - /metrics
  verbs:
  - get
- apiGroups:
  - ''
  resources:
  - events
  verbs:
  - create
  - patch
- apiGroups:
  - ''
  resources:
  - pods
  verbs:
  - delete
  - get
  - list
  - watch
- apiGroups:
  - apps
  resources:
  - deployments
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - cache.example.com
  resources:
  - memcacheds
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - cache.example.com
  resources:
  - memcacheds/finalizers
  verbs:
  - update
- apiGroups:
  - cache.example.com
  resources:
  - memcacheds/status
  verbs:
  - get
  - patch
  - update
- apiGroups:
  - example.com
  resources:
  - widgets
  verbs:
  - get
  - list
  - watch
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager-role
  namespace: system
rules:
- apiGroups:
  - ''
  resourceNames:
  - memcached-config
  resources:
  - configmaps
  verbs:
  - get
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - create
  - get
  - update
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: manager-rolebinding
  namespace: system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: manager-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
"#;

fn paths(files: impl IntoIterator<Item = PathBuf>) -> Vec<String> {
    files.into_iter().map(|p| p.display().to_string()).collect()
}

fn read(root: &Path, rel: &str) -> String {
    fs::read_to_string(root.join(rel)).unwrap()
}

fn parse_crd(yaml: &str) -> CustomResourceDefinition {
    let doc = yaml
        .strip_prefix("---\n")
        .expect("documents start with ---");
    serde_yaml_ng::from_str(doc).unwrap()
}

#[test]
fn renders_controller_gen_file_names() {
    let files = manifests().render().unwrap();
    assert_eq!(
        paths(files.keys().cloned()),
        [MEMCACHED_FILE, WIDGET_FILE, ROLE_FILE]
    );
    assert!(files.values().all(|f| f.starts_with("---\napiVersion: ")));
}

#[test]
fn role_yaml_snapshot() {
    let files = manifests().render().unwrap();
    assert_eq!(files[Path::new(ROLE_FILE)], ROLE_YAML);
}

#[test]
fn no_rules_render_an_empty_cluster_role() {
    let files = Manifests::new(vec![], vec![]).render().unwrap();
    assert_eq!(
        files[Path::new(ROLE_FILE)],
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n\
         metadata:\n  name: manager-role\nrules: []\n"
    );
}

#[test]
fn role_name_is_configurable() {
    let files = manifests().role_name("my-role").render().unwrap();
    let role = &files[Path::new(ROLE_FILE)];
    // The ClusterRole, the Role and the RoleBinding's roleRef.
    assert_eq!(role.matches("name: my-role\n").count(), 3);
    assert!(role.contains("name: my-rolebinding\n"), "{role}");
    let err = manifests().role_name("My Role").render().unwrap_err();
    assert!(matches!(err, Error::InvalidRoleName(_)), "{err}");
}

#[test]
fn invalid_hand_written_rules_are_rejected() {
    let rule = Rule {
        non_resource_urls: vec!["/metrics".into()],
        verbs: vec!["get".into()],
        namespace: Some("system".into()),
        ..Rule::default()
    };
    let err = Manifests::new(vec![], vec![vec![rule]])
        .render()
        .unwrap_err();
    assert!(
        err.to_string().contains("cannot be granted in a namespace"),
        "{err}"
    );
}

#[test]
fn versions_of_one_kind_merge_into_one_crd() {
    let files = manifests().render().unwrap();
    let crd = parse_crd(&files[Path::new(MEMCACHED_FILE)]);
    assert_eq!(
        crd.metadata.name.as_deref(),
        Some("memcacheds.cache.example.com")
    );
    let versions: Vec<_> = crd
        .spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.storage, v.served))
        .collect();
    // Sorted by name like controller-gen, whatever the input order.
    assert_eq!(versions, [("v1", true, true), ("v1alpha1", false, true)]);
    let schema = |i: usize| {
        let props = crd.spec.versions[i]
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .and_then(|s| s.properties.as_ref())
            .and_then(|p| p.get("spec"))
            .and_then(|s| s.properties.as_ref())
            .unwrap();
        props.keys().cloned().collect::<Vec<_>>()
    };
    assert_eq!(schema(0), ["size"]);
    assert_eq!(schema(1), ["replicas"]);
}

#[test]
fn output_is_deterministic() {
    let first = manifests().render().unwrap();
    assert_eq!(first, manifests().render().unwrap());

    // Neither the order of CRDs nor that of reconcilers or rules matters.
    let mut crds = crds();
    crds.reverse();
    let mut rules: Vec<Rule> = rbac_rules::<MemcachedReconciler>()
        .into_iter()
        .chain(rbac_rules::<WidgetReconciler>())
        .collect();
    rules.reverse();
    let shuffled = Manifests::new(crds, vec![rules]).render().unwrap();
    assert_eq!(first, shuffled);
}

#[test]
fn multi_version_crd_input_is_accepted() {
    // A CRD that already carries several versions is split and re-merged.
    let merged = manifests().render().unwrap()[Path::new(MEMCACHED_FILE)].clone();
    let again = Manifests::new(vec![Ok(parse_crd(&merged).into())], vec![])
        .render()
        .unwrap();
    assert_eq!(again[Path::new(MEMCACHED_FILE)], merged);
}

#[test]
fn two_storage_versions_are_an_error() {
    let mut old = crd::<v1alpha1::Memcached>().unwrap().into_definition();
    old.spec.versions[0].storage = true;
    let err = Manifests::new(vec![crd::<v1::Memcached>(), Ok(old.into())], vec![])
        .render()
        .unwrap_err();
    assert!(
        matches!(err, Error::MultipleStorageVersions { .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "CRD memcacheds.cache.example.com has more than one storage version (v1, v1alpha1): \
         keep storage on exactly one and add #[kube(storage = false)] to the Rust types of the others"
    );
}

#[test]
fn no_storage_version_is_an_error() {
    let mut new = crd::<v1::Memcached>().unwrap().into_definition();
    new.spec.versions[0].storage = false;
    for crds in [
        vec![Ok(new.clone().into()), crd::<v1alpha1::Memcached>()],
        vec![crd::<v1alpha1::Memcached>()],
    ] {
        let err = Manifests::new(crds, vec![]).render().unwrap_err();
        assert!(matches!(err, Error::NoStorageVersion { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with("CRD memcacheds.cache.example.com has no storage version"),
            "{err}"
        );
    }
}

#[test]
fn duplicate_versions_are_an_error() {
    let err = Manifests::new(vec![crd::<v1::Memcached>(), crd::<v1::Memcached>()], vec![])
        .render()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "CRD memcacheds.cache.example.com gets version v1 from both \
         `integration::manifests::v1::Memcached` and `integration::manifests::v1::Memcached`: \
         pass each version's type once"
    );
}

#[test]
fn mismatched_versions_are_an_error() {
    let mut odd = crd::<v1alpha1::Memcached>().unwrap().into_definition();
    odd.spec.names.kind = "Other".into();
    let err = Manifests::new(vec![crd::<v1::Memcached>(), Ok(odd.into())], vec![])
        .render()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "CRD memcacheds.cache.example.com is claimed by two kinds: `integration::manifests::v1::Memcached` \
         (kind Memcached) and a hand-made CRD (kind Other); a CRD name is <plural>.<group>, so \
         give one of them another plural, e.g. #[kube(plural = \"...\")] (`rkb create api --plural`)"
    );
}

#[test]
fn mismatched_scopes_name_every_source() {
    let mut odd = crd::<v1alpha1::Memcached>().unwrap().into_definition();
    odd.spec.scope = "Cluster".into();
    let err = Manifests::new(vec![crd::<v1::Memcached>(), Ok(odd.into())], vec![])
        .render()
        .unwrap_err();
    assert!(matches!(err, Error::Merge { .. }), "{err}");
    assert!(
        err.to_string().starts_with(
            "cannot merge the versions of CRD memcacheds.cache.example.com \
             (from `integration::manifests::v1::Memcached`, a hand-made CRD): "
        ),
        "{err}"
    );
}

/// Types a hand-edited project could hold: each claims a name another type has.
mod clash {
    use super::*;

    /// Another kind whose plural is Memcached's: the same CRD name.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(
        group = "cache.example.com",
        version = "v1beta1",
        kind = "Memcache",
        plural = "memcacheds",
        namespaced
    )]
    pub struct MemcacheSpec {
        pub size: i32,
    }

    /// Memcached v1 again, declared a second time elsewhere in the crate.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(
        group = "cache.example.com",
        version = "v1",
        kind = "Memcached",
        namespaced
    )]
    pub struct MemcachedSpec {
        pub size: i32,
    }

    /// Memcached's kind under another plural: two CRDs, one kind in one group.
    pub mod server {
        use super::*;

        #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
        #[kube(
            group = "cache.example.com",
            version = "v1",
            kind = "Memcached",
            plural = "memcacheservers",
            namespaced
        )]
        pub struct MemcachedSpec {
            pub size: i32,
        }
    }

    /// A short name that is Memcached's singular.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
    #[kube(
        group = "cache.example.com",
        version = "v1",
        kind = "Pool",
        shortname = "memcached",
        namespaced
    )]
    pub struct PoolSpec {
        pub size: i32,
    }
}

#[test]
fn two_kinds_claiming_one_crd_name_are_named() {
    let err = Manifests::new(
        vec![crd::<v1::Memcached>(), crd::<clash::Memcache>()],
        vec![],
    )
    .render()
    .unwrap_err();
    assert!(matches!(err, Error::KindClash { .. }), "{err}");
    assert!(
        err.to_string().starts_with(
            "CRD memcacheds.cache.example.com is claimed by two kinds: \
             `integration::manifests::v1::Memcached` (kind Memcached) and \
             `integration::manifests::clash::Memcache` (kind Memcache);"
        ),
        "{err}"
    );
}

#[test]
fn two_types_of_one_version_are_named() {
    let err = Manifests::new(
        vec![crd::<v1::Memcached>(), crd::<clash::Memcached>()],
        vec![],
    )
    .render()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "CRD memcacheds.cache.example.com gets version v1 from both \
         `integration::manifests::v1::Memcached` and `integration::manifests::clash::Memcached`: a CRD name is \
         <plural>.<group>, so give one of the types another plural, \
         e.g. #[kube(plural = \"...\")], or another version"
    );
}

#[test]
fn names_shared_within_a_group_are_refused() {
    let kind = Manifests::new(
        vec![crd::<v1::Memcached>(), crd::<clash::server::Memcached>()],
        vec![],
    )
    .render()
    .unwrap_err();
    assert!(
        matches!(kind, Error::GroupNameClash { what: "kind", .. }),
        "{kind}"
    );
    let short = Manifests::new(vec![crd::<v1::Memcached>(), crd::<clash::Pool>()], vec![])
        .render()
        .unwrap_err();
    assert_eq!(
        short.to_string(),
        "CRDs `integration::manifests::v1::Memcached` (memcacheds.cache.example.com) and \
         `integration::manifests::clash::Pool` (pools.cache.example.com) both use \"memcached\" as a \
         resource name in group cache.example.com: the API server accepts only the first; \
         plural, singular and short names, and kinds and list kinds, must be unique within a group"
    );
    // Names are per group: the same kind in another group is fine.
    Manifests::new(vec![crd::<v1::Memcached>(), crd::<Widget>()], vec![])
        .render()
        .unwrap();
}

/// Roles in namespaces other than the manager's go to the config/default overlay with
/// their RoleBindings, and the overlay goes when the last such rule does.
#[test]
fn roles_elsewhere_get_an_overlay_that_leaves_with_them() {
    const OVERLAY: [&str; 2] = [
        "config/namespaced-rbac/kustomization.yaml",
        "config/namespaced-rbac/role.yaml",
    ];
    let in_team_a = Rule {
        api_groups: vec!["".into()],
        resources: vec!["configmaps".into()],
        verbs: vec!["get".into()],
        namespace: Some("team-a".into()),
        ..Rule::default()
    };
    let with_team_a = || {
        let mut rules = rbac_rules::<MemcachedReconciler>();
        rules.push(in_team_a.clone());
        Manifests::new(vec![], vec![rules])
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let report = with_team_a().write(root).unwrap();
    assert_eq!(paths(report.written), [OVERLAY[0], OVERLAY[1], ROLE_FILE]);
    let role = read(root, ROLE_FILE);
    assert!(!role.contains("team-a"), "{role}");
    assert!(role.contains("namespace: system"), "{role}");
    let elsewhere = read(root, OVERLAY[1]);
    assert_eq!(
        elsewhere.matches("namespace: team-a\n").count(),
        2,
        "{elsewhere}"
    );
    assert!(elsewhere.contains("kind: RoleBinding\n"), "{elsewhere}");
    assert!(!elsewhere.contains("namespace: system\n  "), "{elsewhere}");
    let kustomization = read(root, OVERLAY[0]);
    assert!(
        kustomization.contains("- ../default\n- role.yaml\n"),
        "{kustomization}"
    );
    with_team_a().check(root).unwrap();

    // Without the rule, check reports the overlay stale and write removes it, directory too.
    let without = Manifests::new(vec![], vec![rbac_rules::<MemcachedReconciler>()]);
    let err = without.check(root).unwrap_err();
    let Error::OutOfDate { files } = err else {
        panic!("{err}")
    };
    assert_eq!(files, OVERLAY.map(|f| Drift::Stale(f.into())));
    let report = without.write(root).unwrap();
    assert_eq!(paths(report.removed), OVERLAY);
    assert!(!root.join("config/namespaced-rbac").exists());
    without.check(root).unwrap();
}

#[test]
fn write_creates_files_then_only_changed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let report = manifests().write(root).unwrap();
    assert_eq!(
        paths(report.written),
        [MEMCACHED_FILE, WIDGET_FILE, ROLE_FILE]
    );
    assert!(report.unchanged.is_empty() && report.removed.is_empty());
    let rendered = manifests().render().unwrap();
    for (rel, content) in &rendered {
        assert_eq!(&fs::read_to_string(root.join(rel)).unwrap(), content);
    }

    let mtime = |rel: &str| fs::metadata(root.join(rel)).unwrap().modified().unwrap();
    let crd_mtime = mtime(MEMCACHED_FILE);
    let report = manifests().write(root).unwrap();
    assert!(report.written.is_empty());
    assert_eq!(report.unchanged.len(), 3);
    assert_eq!(report.to_string(), "manifests: 3 files up to date");

    // Only the role changes when a rule does.
    let fewer = Manifests::new(crds(), vec![rbac_rules::<MemcachedReconciler>()]);
    let report = fewer.write(root).unwrap();
    assert_eq!(paths(report.written), [ROLE_FILE]);
    assert_eq!(mtime(MEMCACHED_FILE), crd_mtime);
    assert!(!read(root, ROLE_FILE).contains("widgets"));
}

#[test]
fn write_removes_stale_crds_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    manifests().write(root).unwrap();
    let bases = root.join("config/crd/bases");
    fs::write(bases.join("README.md"), "not a CRD\n").unwrap();
    fs::write(root.join("config/rbac/extra.yaml"), "---\n").unwrap();

    // Widget is gone: its file is stale.
    let only_memcached = Manifests::new(
        vec![crd::<v1::Memcached>(), crd::<v1alpha1::Memcached>()],
        vec![],
    );
    let report = only_memcached.write(root).unwrap();
    assert_eq!(paths(report.removed), [WIDGET_FILE]);
    assert!(!root.join(WIDGET_FILE).exists());
    assert!(bases.join("README.md").exists());
    assert!(root.join("config/rbac/extra.yaml").exists());
    only_memcached.check(root).unwrap();
}

#[test]
fn check_passes_when_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    manifests().write(dir.path()).unwrap();
    manifests().check(dir.path()).unwrap();
}

#[test]
fn check_reports_drift_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    manifests().write(root).unwrap();
    fs::write(root.join(ROLE_FILE), "---\n# edited by hand\n").unwrap();
    fs::remove_file(root.join(WIDGET_FILE)).unwrap();
    fs::write(
        root.join("config/crd/bases/old.example.com_olds.yaml"),
        "---\n",
    )
    .unwrap();

    let err = manifests().check(root).unwrap_err();
    let Error::OutOfDate { files } = &err else {
        panic!("unexpected error: {err}");
    };
    assert_eq!(
        files,
        &[
            Drift::Missing(WIDGET_FILE.into()),
            Drift::Changed(ROLE_FILE.into()),
            Drift::Stale("config/crd/bases/old.example.com_olds.yaml".into()),
        ]
    );
    assert_eq!(
        err.to_string(),
        "manifests are out of date: config/crd/bases/example.com_widgets.yaml (missing), \
         config/rbac/role.yaml (changed), config/crd/bases/old.example.com_olds.yaml (stale); \
         run `make manifests`"
    );
    // check never writes.
    assert_eq!(read(root, ROLE_FILE), "---\n# edited by hand\n");
    assert!(!root.join(WIDGET_FILE).exists());
}

#[test]
fn check_on_an_empty_project_reports_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let err = manifests().check(dir.path()).unwrap_err();
    assert!(
        matches!(&err, Error::OutOfDate { files } if files.len() == 3),
        "{err}"
    );
}

#[test]
fn run_writes_and_checks_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let err = manifests()
        .run(args(&["--check", "--dir", &root]))
        .unwrap_err();
    assert!(err.to_string().contains("run `make manifests`"), "{err}");

    let summary = manifests().run(args(&["--dir", &root])).unwrap();
    assert_eq!(
        summary,
        format!("manifests: wrote {MEMCACHED_FILE}, {WIDGET_FILE}, {ROLE_FILE} (0 unchanged)")
    );
    let summary = manifests()
        .run(args(&["--check", &format!("--dir={root}")]))
        .unwrap();
    assert_eq!(summary, "manifests: 3 files up to date");
}
