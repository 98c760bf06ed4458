//! A project generated outside the rkb repository, from rkb's crates as a registry would
//! serve them (the `.crate` files `cargo package` makes, unpacked elsewhere), builds and
//! passes its own tests right after `init`, after each `create api`, after `edit
//! --multigroup` and with webhooks, and stays rustfmt- and clippy-clean. Its manager,
//! packed by `rkb build-image` into an image with no base, runs under podman, non-root
//! with a read-only root file system, against a real API server and reconciles a sample.
//!
//! This compiles a whole operator from scratch (minutes), so it is `#[ignore]`d in
//! quick runs; `.ci/run` runs it with `--ignored`. It builds the project statically
//! linked from the start (`+crt-static`), so the image is made from the binary the tests
//! already built instead of a second build.
//!
//! Before its own steps, it runs README.md's quick start (the README's first `console`
//! block) as a reader would, in an empty directory with this rkb on PATH: what the README
//! shows is what CI runs.

use crate::common;
#[path = "../book/transcripts/runner.rs"]
mod runner;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use rkb::oci::host_target;

fn run(dir: &Path, program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .envs(runner::fresh_project_build_env())
        // The Makefile's `$(RKB) setup-envtest`: this rkb, not one on PATH.
        .env("RKB", env!("CARGO_BIN_EXE_rkb"))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        status.success(),
        "`{program} {}` failed in {}",
        args.join(" "),
        dir.display()
    );
}

/// `cargo package` of rkb's library crates, unpacked into `into`: what crates.io would
/// serve. Returns the directory to pass as --rkb-path.
fn packaged_crates(into: &Path) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let packages = into.join("target");
    let mut args = vec!["package", "--no-verify", "--allow-dirty", "--locked"];
    for (name, _) in rkb::rkb_crates::CRATES {
        args.extend(["-p", name]);
    }
    let status = Command::new(env!("CARGO"))
        .args(&args)
        .arg("--target-dir")
        .arg(&packages)
        .current_dir(repo)
        .status()
        .unwrap();
    assert!(status.success(), "cargo package failed");
    let crates = into.join("crates");
    for (name, _) in rkb::rkb_crates::CRATES {
        let file = packages.join(format!("package/{name}-{}.crate", rkb::rkb_crates::VERSION));
        let gz = flate2::read::GzDecoder::new(std::fs::File::open(&file).unwrap());
        tar::Archive::new(gz).unpack(&crates).unwrap();
    }
    crates
}

/// Nothing of the project names the checkout, and cargo takes every rkb crate from the
/// unpacked packages.
fn assert_independent_of_the_checkout(dir: &Path, crates: &Path) {
    let repo =
        std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()).unwrap();
    let repo = repo.to_str().unwrap();
    // bin/ holds the tools make installs or links (rkb among them), ignored by git as in
    // kubebuilder's projects: not the project's files.
    for (path, bytes) in common::files(dir)
        .into_iter()
        .filter(|(path, _)| !path.starts_with("bin"))
    {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(repo),
            "{} names rkb's checkout {repo}",
            path.display()
        );
    }
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata failed");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let crates = std::fs::canonicalize(crates).unwrap();
    let rkb_packages: Vec<&str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"].as_str().unwrap().starts_with("rkb-"))
        .map(|p| p["manifest_path"].as_str().unwrap())
        .collect();
    assert_eq!(
        rkb_packages.len(),
        rkb::rkb_crates::CRATES.len(),
        "{rkb_packages:?}"
    );
    for manifest in rkb_packages {
        assert!(
            Path::new(manifest).starts_with(&crates),
            "{manifest} is not one of the packaged crates in {}",
            crates.display()
        );
    }
}

#[test]
#[ignore = "builds an operator from scratch; run by .ci/run"]
fn generated_project_builds_and_passes_its_tests_after_each_step() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("fresh-operator");
    let d = dir.to_str().unwrap();
    let crates = packaged_crates(scratch.path());
    readme_quick_start_runs(&crates);
    common::rkb(&[
        "init",
        "--domain",
        "example.org",
        "--dir",
        d,
        "--owner",
        "The Fresh Authors",
        "--rkb-path",
        crates.to_str().unwrap(),
    ])
    .unwrap();
    assert_independent_of_the_checkout(&dir, &crates);
    run(&dir, "cargo", &["test", "--quiet"]);

    for api in [
        &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
        ][..],
        &[
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Foo",
            "--cluster-scoped",
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
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--no-resource",
        ],
        // The deploy-image controller with only --image (no port, no command), next to
        // other controllers: its RBAC test checks its own rules, not the whole role.yaml.
        &[
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Redis",
            "--image",
            "redis:7.2",
        ],
    ] {
        let mut args = vec!["create", "api", "--dir", d];
        args.extend(api);
        common::rkb(&args).unwrap_or_else(|e| panic!("{api:?}: {e}"));
        run(&dir, "make", &["--quiet", "test"]);
    }
    image_runs_and_reconciles_a_sample(&dir);
    // The multigroup layout: existing controllers move, and Memcached gets a second
    // controller in another group.
    common::rkb(&["edit", "--multigroup", "--dir", d]).unwrap();
    common::rkb(&[
        "create",
        "api",
        "--dir",
        d,
        "--group",
        "web",
        "--version",
        "v1",
        "--kind",
        "Memcached",
    ])
    .unwrap();
    // A second controller for cache's Memcached (`--controller-name`), and a test that runs
    // it beside the default one on one object.
    common::rkb(&[
        "create",
        "api",
        "--dir",
        d,
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
        "Memcached",
        "--no-resource",
        "--controller-name",
        "memcached-backup",
    ])
    .unwrap();
    std::fs::write(
        dir.join("tests/two_controllers.rs"),
        include_str!("../data/fresh-project/two_controllers.rs"),
    )
    .unwrap();
    // Webhooks in the multigroup layout: for a built-in kind the project has no API or
    // controller for, a cluster-scoped kind, and defaulting plus conversion between
    // Memcached's two versions.
    for webhook in [
        &[
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "ConfigMap",
            "--defaulting",
            "--programmatic-validation",
        ][..],
        &[
            "--group",
            "infra",
            "--version",
            "v1",
            "--kind",
            "Foo",
            "--programmatic-validation",
        ],
        &[
            "--group",
            "cache",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--defaulting",
            "--conversion",
            "--spoke",
            "v1beta1",
        ],
    ] {
        let mut args = vec!["create", "webhook", "--dir", d];
        args.extend(webhook);
        common::rkb(&args).unwrap_or_else(|e| panic!("{webhook:?}: {e}"));
    }
    run(&dir, "make", &["--quiet", "test"]);
    run(
        &dir,
        "kubectl",
        &["kustomize", "config/default", "-o", "/dev/null"],
    );
    run(&dir, "cargo", &["fmt", "--check"]);
    run(
        &dir,
        "cargo",
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
    let crds = std::fs::read_dir(dir.join("config/crd/bases"))
        .unwrap()
        .count();
    assert_eq!(
        crds, 4,
        "cache's Memcached (two versions, merged), infra's Foo and Redis, and web's Memcached"
    );
    builds_on_another_kubernetes_level(&dir);
}

/// The project's two Cargo.toml files (the operator's and the API crate's) are where a
/// Kubernetes version is chosen: rkb's crates pick none, so the same project builds on
/// another level k8s-openapi offers (two version features would be a compile error).
fn builds_on_another_kubernetes_level(dir: &Path) {
    let feature = format!("\"{}\"", rkb::K8S_API_FEATURE);
    let manifests = [dir.join("Cargo.toml"), dir.join("api/Cargo.toml")];
    let originals: Vec<String> = manifests
        .iter()
        .map(|manifest| std::fs::read_to_string(manifest).unwrap())
        .collect();
    for (manifest, cargo_toml) in manifests.iter().zip(&originals) {
        assert!(
            cargo_toml.contains(&feature),
            "{feature} not in {}:\n{cargo_toml}",
            manifest.display()
        );
        std::fs::write(manifest, cargo_toml.replace(&feature, "\"v1_35\"")).unwrap();
    }
    run(dir, "cargo", &["check", "--quiet", "--all-targets"]);
    for (manifest, cargo_toml) in manifests.iter().zip(&originals) {
        std::fs::write(manifest, cargo_toml).unwrap();
    }
}

/// README.md's quick start, its first `console` block, runs and prints what the README
/// shows, with projects taking rkb's crates from the packages in `crates`.
fn readme_quick_start_runs(crates: &Path) {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let blocks = runner::console_blocks(&std::fs::read_to_string(readme).unwrap());
    let Some(quick_start) = blocks.first() else {
        panic!(
            "README.md has no ```console block; its first one is the quick start this test runs: \
             `$ command` lines each followed by its output (`[..]` for any text within a line, \
             a line `...` for any lines), run in order in an empty directory with this rkb on \
             PATH, e.g.\n\
             ```console\n\
             $ rkb init --domain example.com --dir memcached-operator\n\
             ...\n\
             $ cd memcached-operator\n\
             $ make test\n\
             ...\n\
             ```"
        );
    };
    let mut session = runner::Session::new(crates);
    session.envs(runner::fresh_project_build_env());
    session
        .run_block("README.md", quick_start)
        .unwrap_or_else(|e| panic!("README.md's quick start (its first ```console block): {e}"));
    if session.cwd().join("PROJECT").is_file() {
        assert_independent_of_the_checkout(session.cwd(), crates);
    }
}

/// The manager's image, made by `rkb build-image` from the manager binary (built here with
/// the tests' settings: `make test` links only test binaries), runs
/// under podman as the scaffold's pods run it (non-root 65532, read-only root file system,
/// no capabilities, no privilege escalation) against a real API server, and the
/// deploy-image controller creates the Deployment of a Redis sample.
fn image_runs_and_reconciles_a_sample(dir: &Path) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let env = runtime.block_on(rkb_envtest::shared_by(module_path!()));
    // The admin credentials inlined into a file the container's user can read.
    let kubeconfig = dir.join("target-kubeconfig.json");
    std::fs::write(&kubeconfig, inlined_kubeconfig(env.kubeconfig_path())).unwrap();
    let kubectl = |args: &[&str]| {
        let output = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr),
        )
    };
    let (ok, text) = kubectl(&["apply", "--server-side", "-k", "config/crd"]);
    assert!(ok, "{text}");

    run(
        dir,
        "cargo",
        &["build", "--quiet", "--bin", "fresh-operator"],
    );
    let binary = runner::fresh_project_target_dir()
        .join(host_target())
        .join("debug/fresh-operator");
    let tag = "example.org/fresh-operator:v0.0.1";
    let d = dir.to_str().unwrap();
    let built = common::rkb(&[
        "build-image",
        "--dir",
        d,
        "--binary",
        binary.to_str().unwrap(),
        "--tag",
        tag,
        "--output",
        "dist/image.tar",
    ])
    .unwrap();
    assert!(built.contains("user 65532:65532"), "{built}");
    let podman = |args: &[&str]| {
        let output = Command::new("podman")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run podman (`apt-get install podman runc`): {e}"));
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned()
                + &String::from_utf8_lossy(&output.stderr),
        )
    };
    let (ok, text) = podman(&["load", "-i", "dist/image.tar"]);
    assert!(ok && text.contains(tag), "{text}");

    let probes = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let name = format!("fresh-operator-{}", std::process::id());
    // runc by default: crun refuses the hybrid cgroup layout of some CI machines.
    let oci_runtime = std::env::var("RKB_TEST_OCI_RUNTIME").unwrap_or_else(|_| "runc".into());
    let mount = format!("{}:/etc/kubeconfig.json:ro", kubeconfig.display());
    let probe_flag = format!("--health-probe-bind-address={probes}");
    let (ok, text) = podman(&[
        "--runtime",
        &oci_runtime,
        "run",
        "--detach",
        "--name",
        &name,
        "--network",
        "host",
        "--read-only",
        "--user",
        "65532:65532",
        "--cap-drop",
        "all",
        "--security-opt",
        "no-new-privileges",
        // Limits no higher than the caller's: an unprivileged sandbox may not raise them.
        "--ulimit",
        "nofile=1024:1024",
        "--ulimit",
        "nproc=1024:1024",
        "--volume",
        &mount,
        "--env",
        "KUBECONFIG=/etc/kubeconfig.json",
        "--env",
        "REDIS_IMAGE=redis:7.2",
        tag,
        &probe_flag,
    ]);
    assert!(ok, "the manager's container did not start: {text}");
    let (_, inspected) = podman(&[
        "inspect",
        "--format",
        "{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}",
        &name,
    ]);
    let (ok, text) = kubectl(&[
        "apply",
        "-n",
        "default",
        "-f",
        "config/samples/infra_v1_redis.yaml",
    ]);
    assert!(ok, "{text}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let reconciled = loop {
        let (_, owners) = kubectl(&[
            "get",
            "deployments",
            "-n",
            "default",
            "-o",
            "jsonpath={.items[*].metadata.ownerReferences[*].kind}",
        ]);
        if owners.split_whitespace().any(|kind| kind == "Redis") {
            break true;
        }
        if std::time::Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    let (_, logs) = podman(&["logs", &name]);
    podman(&["rm", "--force", &name]);
    podman(&["rmi", "--force", tag]);
    std::fs::remove_file(&kubeconfig).unwrap();
    assert_eq!(inspected.trim(), "65532:65532 true", "{inspected}");
    assert!(
        reconciled,
        "no Deployment owned by the Redis sample within 90 s; the manager's log:\n{logs}"
    );
}

/// `kubeconfig` with its certificate and key files inlined as `-data` fields.
fn inlined_kubeconfig(kubeconfig: &Path) -> String {
    use base64::Engine as _;
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(kubeconfig).unwrap()).unwrap();
    let inline = |object: &mut serde_json::Value, field: &str| {
        if let Some(path) = object[field].as_str().map(str::to_owned) {
            let bytes = std::fs::read(path).unwrap();
            object[format!("{field}-data")] = base64::engine::general_purpose::STANDARD
                .encode(bytes)
                .into();
            object.as_object_mut().unwrap().remove(field);
        }
    };
    for cluster in config["clusters"].as_array_mut().unwrap() {
        inline(&mut cluster["cluster"], "certificate-authority");
    }
    for user in config["users"].as_array_mut().unwrap() {
        inline(&mut user["user"], "client-certificate");
        inline(&mut user["user"], "client-key");
    }
    config.to_string()
}

/// Every kind name rkb accepts compiles. A kind can clash only with what the generated
/// code names, so the candidates are every UpperCamelCase word of the Rust templates;
/// each one `create api` accepts is scaffolded plainly and with `--image` (a group each),
/// the plain ones with a second version and every type of webhook, and the project must
/// pass clippy with `-D warnings`.
#[test]
#[ignore = "checks an operator with every accepted name; run by .ci/run"]
fn every_kind_name_rkb_accepts_compiles() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("names-operator");
    let d = dir.to_str().unwrap();
    // Multigroup, so that one kind may be in both groups.
    common::rkb(&[
        "init",
        "--domain",
        "example.org",
        "--dir",
        d,
        "--multigroup",
    ])
    .unwrap();
    let api = |kind: &str, group: &str, version: &str, extra: &[&str]| {
        let mut args = vec!["create", "api", "--dir", d, "--group", group];
        args.extend(["--version", version, "--kind", kind]);
        args.extend(extra);
        common::rkb(&args).is_ok()
    };
    let (mut plain, mut image) = (Vec::new(), Vec::new());
    for kind in template_words() {
        if api(&kind, "plain", "v1", &[]) {
            plain.push(kind.clone());
        }
        if api(&kind, "image", "v1", &["--image", "memcached:1.6"]) {
            image.push(kind);
        }
    }
    for kind in &plain {
        assert!(api(kind, "plain", "v2", &["--no-controller"]), "{kind} v2");
        let webhook = [
            "create",
            "webhook",
            "--dir",
            d,
            "--group",
            "plain",
            "--version",
            "v1",
            "--kind",
            kind,
            "--defaulting",
            "--programmatic-validation",
            "--conversion",
            "--spoke",
            "v2",
        ];
        common::rkb(&webhook).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
    assert!(
        plain.len() > 40 && image.len() > 20,
        "few candidates accepted: {plain:?} {image:?}"
    );
    run(
        &dir,
        "cargo",
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
}

/// The UpperCamelCase words of the Rust templates' code: outside tera's `{{ }}` and
/// comments.
fn template_words() -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    for name in rkb::scaffold::Templates::names() {
        if !name.ends_with(".rs.tera") {
            continue;
        }
        let mut source = rkb::scaffold::Templates::source(name).unwrap();
        let mut code = String::new();
        while let Some((before, rest)) = source.split_once("{{") {
            code.push_str(before);
            code.push(' ');
            source = rest.split_once("}}").map_or("", |(_, after)| after);
        }
        code.push_str(source);
        let code: String = code
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        words.extend(
            code.split(|c: char| !is_word(c))
                .filter(|w| w.len() > 1 && w.starts_with(|c: char| c.is_ascii_uppercase()))
                .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric()))
                .map(str::to_owned),
        );
    }
    words
}
