//! Golden projects: `testdata/project-*` must be exactly what rkb generates today.
//!
//! On drift this fails with a unified diff per file. To accept a change on purpose,
//! run `testdata/regenerate.sh`, which re-scaffolds them (RKB_BLESS=1) and re-runs
//! `make manifests` in each.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

struct Golden {
    name: &'static str,
    /// rkb invocations after `init`, in order; `--dir` is added by the test.
    init: &'static [&'static str],
    create: &'static [&'static [&'static str]],
    /// `rkb create webhook` invocations, after the APIs.
    webhooks: &'static [&'static [&'static str]],
}

/// Kubebuilder's tutorial projects, as the source documents build them.
const GOLDENS: &[Golden] = &[
    Golden {
        name: "project-memcached",
        init: &[
            "--domain",
            "example.com",
            "--project-name",
            "memcached-operator",
        ],
        create: &[&[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ]],
        webhooks: &[],
    },
    // kubebuilder's deploy-image plugin, with the flags of its Memcached example.
    Golden {
        name: "project-memcached-image",
        init: &[
            "--domain",
            "example.com",
            "--project-name",
            "memcached-image",
        ],
        create: &[&[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--image",
            "memcached:1.6.26-alpine3.19",
            "--image-container-command",
            "memcached,--memory-limit=64,-o,modern,-v",
            "--image-container-port",
            "11211",
            "--run-as-user",
            "1001",
        ]],
        webhooks: &[],
    },
    // A namespace-scoped operator (`init --namespaced`): a Role in the manager's namespace
    // instead of a ClusterRole, WATCH_NAMESPACE, with a deploy-image and a built-in kind.
    Golden {
        name: "project-memcached-namespaced",
        init: &[
            "--domain",
            "example.com",
            "--project-name",
            "memcached-namespaced",
            "--namespaced",
        ],
        create: &[
            &[
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
                "--image",
                "memcached:1.6.26-alpine3.19",
                "--image-container-port",
                "11211",
            ],
            &[
                "--group",
                "core",
                "--version",
                "v1",
                "--kind",
                "Pod",
                "--no-resource",
            ],
        ],
        webhooks: &[],
    },
    Golden {
        name: "project-bluegreen",
        init: &["--domain", "demo.kakao.com", "--project-name", "bluegreen"],
        create: &[&["--group", "app", "--version", "v1", "--kind", "BlueGreen"]],
        webhooks: &[],
    },
    // The memcached operator with every kind of webhook: defaulting and validation for
    // v1alpha1, added one after the other (so the second goes through the markers of the
    // file the first created), and a conversion webhook with v1alpha1 as the hub.
    Golden {
        name: "project-memcached-webhook",
        init: &[
            "--domain",
            "example.com",
            "--project-name",
            "memcached-webhook",
        ],
        create: &[
            &[
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
            ],
            &[
                "--group",
                "cache",
                "--version",
                "v1beta1",
                "--kind",
                "Memcached",
                "--no-controller",
            ],
        ],
        webhooks: &[
            &[
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
                "--defaulting",
            ],
            &[
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
                "--programmatic-validation",
            ],
            &[
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
                "--conversion",
                "--spoke",
                "v1beta1",
            ],
        ],
    },
    // Kinds other projects define, from their CRDs (kept in cli/tests/data/external-crds/
    // with their licenses): shapes of schema, each round-tripped by the test in its types
    // file.
    Golden {
        name: "project-external",
        init: &[
            "--domain",
            "example.com",
            "--project-name",
            "external-operator",
        ],
        create: &[
            &[
                "--external-crd",
                "tests/data/external-crds/cert-manager/cert-manager.io_certificates.yaml",
            ],
            &[
                "--external-crd",
                "tests/data/external-crds/prometheus-operator/monitoring.coreos.com_servicemonitors.yaml",
            ],
            &[
                "--external-crd",
                "tests/data/external-crds/gateway-api/gateway.networking.k8s.io_httproutes.yaml",
                "--version",
                "v1",
            ],
            &[
                "--external-crd",
                "tests/data/external-crds/shapes/shapes.example.org_shapes.yaml",
            ],
            &[
                "--external-crd",
                "tests/data/external-crds/shapes/shapes.example.org_schemas.yaml",
            ],
            // Two versions of one kind: the second's types without a controller.
            &[
                "--external-crd",
                "tests/data/external-crds/kinds/relay.example.net_tunnels.yaml",
            ],
            &[
                "--external-crd",
                "tests/data/external-crds/kinds/relay.example.net_tunnels.yaml",
                "--version",
                "v1beta1",
                "--no-controller",
            ],
            // A lowercase kind: the type is `Postgresql`, the kind on the wire `postgresql`.
            &[
                "--external-crd",
                "tests/data/external-crds/kinds/db.example.net_postgresqls.yaml",
            ],
            // An optional spec, and fields at the top level: kube's `no_spec`.
            &[
                "--external-crd",
                "tests/data/external-crds/kinds/backup.example.net_snapshots.yaml",
            ],
            &[
                "--external-crd",
                "tests/data/external-crds/kinds/policy.example.net_accesspolicies.yaml",
            ],
        ],
        // Admission webhooks on an external kind, as on a built-in one.
        webhooks: &[&[
            "--group",
            "relay",
            "--version",
            "v1",
            "--kind",
            "Tunnel",
            "--defaulting",
            "--programmatic-validation",
        ]],
    },
];

/// Files `make manifests` owns: compared by each project's own `manifests_are_up_to_date`
/// test instead, since only compiling the project can produce them.
fn owned_by_make_manifests(path: &Path) -> bool {
    path.to_str()
        .is_some_and(rkb::model::written_by_make_manifests)
}

/// Build artifacts that live beside the golden sources.
fn ignored(path: &Path) -> bool {
    path == Path::new("Cargo.lock") || path.starts_with("dist")
}

/// Scaffolds `golden` into `into`, which sits two levels below a stand-in for rkb's
/// checkout, so `--rkb-path ../..` resolves as it does in testdata/.
fn generate(golden: &Golden, into: &Path) {
    let dir = into.to_str().unwrap();
    let mut init = vec!["init", "--dir", dir, "--rkb-path", "../.."];
    init.extend(golden.init);
    common::rkb(&init).unwrap_or_else(|e| panic!("{}: rkb init failed: {e}", golden.name));
    for create in golden.create {
        let mut args = vec!["create", "api", "--dir", dir];
        args.extend(*create);
        common::rkb(&args)
            .unwrap_or_else(|e| panic!("{}: rkb create api failed: {e}", golden.name));
    }
    for webhook in golden.webhooks {
        let mut args = vec!["create", "webhook", "--dir", dir];
        args.extend(*webhook);
        common::rkb(&args)
            .unwrap_or_else(|e| panic!("{}: rkb create webhook failed: {e}", golden.name));
    }
}

#[test]
fn golden_projects_match_the_generator() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let bless = std::env::var_os("RKB_BLESS").is_some();
    let mut report = String::new();
    for golden in GOLDENS {
        // Generate two levels below a stand-in for the repository, as in testdata/.
        let tmp = tempfile::tempdir().unwrap();
        let fake_repo = tmp.path().join("repo");
        let out = fake_repo.join("testdata").join(golden.name);
        common::stand_in_for_checkout(&fake_repo);
        generate(golden, &out);

        let expected_dir = testdata.join(golden.name);
        let generated = common::files(&out);
        let expected = common::files(&expected_dir);
        if bless {
            for path in expected.keys() {
                if !generated.contains_key(path) && !owned_by_make_manifests(path) && !ignored(path)
                {
                    fs::remove_file(expected_dir.join(path)).unwrap();
                }
            }
            for (path, content) in &generated {
                if owned_by_make_manifests(path) && expected.contains_key(path) {
                    continue;
                }
                let target = expected_dir.join(path);
                fs::create_dir_all(target.parent().unwrap()).unwrap();
                fs::write(target, content).unwrap();
            }
            continue;
        }
        let mut paths: Vec<&PathBuf> = generated.keys().chain(expected.keys()).collect();
        paths.sort();
        paths.dedup();
        for path in paths {
            if ignored(path) {
                continue;
            }
            let shown = Path::new(golden.name).join(path);
            match (generated.get(path), expected.get(path)) {
                (Some(_), None) => report.push_str(&format!(
                    "rkb now generates {}, which testdata lacks\n",
                    shown.display()
                )),
                (None, Some(_)) if owned_by_make_manifests(path) => {}
                (None, Some(_)) => report.push_str(&format!(
                    "testdata has {}, which rkb no longer generates\n",
                    shown.display()
                )),
                (Some(_), Some(_)) if owned_by_make_manifests(path) => {}
                (Some(new), Some(old)) if new != old => {
                    report.push_str(&common::unified_diff(&shown, old, new));
                }
                _ => {}
            }
        }
    }
    assert!(
        report.is_empty(),
        "the generator's output drifted from testdata/ (run testdata/regenerate.sh if intended):\n{report}"
    );
}

/// `cargo tree`'s packages and their features for `packages` built together: as `cargo
/// build` (`make manifests`, `make run`) builds them, or as `cargo test` does (with the
/// dev-dependencies). `target_only` leaves out build scripts, proc macros and what they
/// use: cargo resolves those apart, so a crate both sides use shows up once per side, and
/// only this view shows a difference on the target side that the host side hides.
fn packages_with_features(
    packages: &[&str],
    with_dev_dependencies: bool,
    target_only: bool,
) -> BTreeSet<String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut edges = String::from("normal");
    if !target_only {
        edges.push_str(",build");
    }
    if with_dev_dependencies {
        edges.push_str(",dev");
    }
    if target_only {
        edges.push_str(",no-proc-macro");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command.args(["tree", "--locked", "-e", &edges]);
    for package in packages {
        command.args(["-p", package]);
    }
    let output = command
        .args(["--prefix", "none", "--format", "{p} [{f}]"])
        .current_dir(repo)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree -p {packages:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| line.trim_end_matches(" (*)").to_owned())
        .collect()
}

/// The crates `built` builds with features that `tests` does not ask for, but those of
/// `exempt` (packages whose features differ on purpose), one line each.
fn asked_differently(
    what: &str,
    built: &BTreeSet<String>,
    tests: &BTreeSet<String>,
    exempt: &[&str],
) -> String {
    let mut report = String::new();
    for line in built {
        let crate_name = line.split(' ').next().unwrap();
        if exempt.contains(&crate_name) || tests.contains(line) {
            continue;
        }
        let in_tests: Vec<_> = tests
            .iter()
            .filter(|other| other.split(' ').next() == Some(crate_name))
            .collect();
        report.push_str(&format!("{what} builds {line}, make test {in_tests:?}\n"));
    }
    report
}

/// A generated project's builds must ask for the same features of every crate they share:
/// cargo builds a crate again (and everything above it) for each set of features. `make
/// manifests` builds the API crate alone, `make run` the operator, `make test` both with
/// their dev-dependencies; a difference (tokio's under the test kit, kube-core's
/// `admission` that the manager asks) would make the first `make test` after them compile
/// those crates a second time. Exempt: the project's own crates and the facades, whose
/// features are the builds' purpose (rkb-runtime's, and kube's in the API crate). When this fails for the API crate,
/// the hack crate rkb writes (templates/init/hack/workspace-hack/) is stale.
#[test]
fn make_manifests_and_make_test_share_their_crates() {
    let mut report = String::new();
    for project in common::projects() {
        if !project.parent().unwrap().ends_with("testdata") {
            continue; // the examples add their own dependencies
        }
        let package_name = |manifest: &Path| {
            let package: toml::Table = toml::from_str(&fs::read_to_string(manifest).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
            package["package"]["name"].as_str().unwrap().to_owned()
        };
        let operator = package_name(&project.join("Cargo.toml"));
        let api = package_name(&project.join(rkb::model::API_CARGO));
        let hack = package_name(&project.join(rkb::model::HACK_CARGO));
        let own = [
            operator.as_str(),
            api.as_str(),
            hack.as_str(),
            "rkb-runtime",
        ];
        let tests = packages_with_features(&[&operator, &api], true, false);
        report.push_str(&asked_differently(
            &format!("{operator}: make manifests"),
            &packages_with_features(&[&api], false, false),
            &tests,
            &[&own[..], &["kube"]].concat(),
        ));
        report.push_str(&asked_differently(
            &format!("{operator}: make manifests (target side)"),
            &packages_with_features(&[&api], false, true),
            &packages_with_features(&[&operator, &api], true, true),
            &[&own[..], &["kube"]].concat(),
        ));
        report.push_str(&asked_differently(
            &format!("{operator}: make run"),
            &packages_with_features(&[&operator], false, false),
            &tests,
            &own,
        ));
    }
    assert!(
        report.is_empty(),
        "crates built with other features for the tests (for the API crate's build, ask \
         them in the hack crate, templates/init/hack/workspace-hack/Cargo.toml.tera; for \
         the operator's, turn them on in the rkb crate that depends on them, as \
         rkb-manager does for tokio):\n{report}"
    );
}

/// `make manifests` builds a crate that both a proc macro and the API crate use once, when
/// both sides ask it the same features (and the project's profile gives dependencies the
/// same debug information on both sides): the hack crate asks the target side's features
/// on the host side and the other way round (proc-macro2's `span-locations`, which the
/// sources reader asks; serde's `alloc`; syn's `visit`). Exempt: rkb-core, whose `cel`
/// only the derive asks, so that the reader's side does not build the CEL parser.
#[test]
fn make_manifests_builds_each_shared_crate_once() {
    let mut report = String::new();
    for project in common::projects() {
        if !project.parent().unwrap().ends_with("testdata") {
            continue;
        }
        let api: toml::Table =
            toml::from_str(&fs::read_to_string(project.join(rkb::model::API_CARGO)).unwrap())
                .unwrap();
        let api = api["package"]["name"].as_str().unwrap();
        let mut features_of = std::collections::BTreeMap::<&str, Vec<&str>>::new();
        let built = packages_with_features(&[api], false, false);
        for line in &built {
            let (package, features) = line.split_once(" [").unwrap_or((line, ""));
            features_of.entry(package).or_default().push(features);
        }
        for (package, features) in features_of {
            if features.len() > 1 && !package.starts_with("rkb-core ") {
                report.push_str(&format!(
                    "{api}: make manifests builds {package} with [{}\n",
                    features.join(" and with [")
                ));
            }
        }
    }
    assert!(
        report.is_empty(),
        "crates built twice by make manifests, once for the proc macros and once for the \
         API crate (ask the missing features on the other side in \
         templates/init/hack/workspace-hack/Cargo.toml.tera):\n{report}"
    );
}
