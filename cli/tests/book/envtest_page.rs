//! reference/envtest.md: `rkb setup-envtest` from its clap definition, and the environment
//! variables rkb-envtest and `rkb setup-envtest` read, checked against their source: a
//! variable the code reads without a row in [`VARIABLES`], or a row for one it no longer
//! names, fails the test.

use clap::CommandFactory;

use super::markdown::{cell, code, table};

/// Every variable envtest/src and `rkb setup-envtest` read, and what it does.
const VARIABLES: &[(&str, &str)] = &[
    (
        "KUBEBUILDER_ASSETS",
        "The directory of kube-apiserver and etcd (and kube-controller-manager, when a test asks \
         for it), as controller-runtime's envtest takes it. Tests use exactly it or fail; \
         `rkb setup-envtest` checks it and prints it, building nothing.",
    ),
    (
        "TEST_ASSET_KUBE_APISERVER",
        "With `TEST_ASSET_ETCD`: the two binaries by path. They win over `KUBEBUILDER_ASSETS`.",
    ),
    ("TEST_ASSET_ETCD", "See `TEST_ASSET_KUBE_APISERVER`."),
    (
        "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
        "With the two above: kube-controller-manager by path (else the one beside kube-apiserver).",
    ),
    (
        "RKB_ENVTEST_CACHE",
        "The cache `rkb setup-envtest` builds into and tests look in when no variable above is \
         set.",
    ),
    (
        "XDG_CACHE_HOME",
        "Without `RKB_ENVTEST_CACHE`, the cache is `$XDG_CACHE_HOME/rkb/envtest`.",
    ),
    (
        "HOME",
        "Without either, the cache is `~/.cache/rkb/envtest`. With `USE_EXISTING_CLUSTER` and \
         no `KUBECONFIG`, the kubeconfig is `~/.kube/config`.",
    ),
    (
        "GO",
        "The Go toolchain `rkb setup-envtest` builds with (default: `go` on PATH; Go 1.24 or later).",
    ),
    (
        "RKB_ENVTEST_DIR",
        "Where each control plane keeps its etcd data, certificates and kubeconfig (default: \
         /dev/shm where it is usable, else the temporary directory).",
    ),
    (
        "RKB_ENVTEST_START_TIMEOUT",
        "Seconds to wait for a control plane to start (`90` or `90s`; default 60).",
    ),
    (
        "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT",
        "envtest's name for `RKB_ENVTEST_START_TIMEOUT`, which wins over it.",
    ),
    (
        "USE_EXISTING_CLUSTER",
        "`true` or `1`: tests use the cluster of the current kubeconfig instead of starting a \
         control plane (as controller-runtime's envtest).",
    ),
    (
        "KUBECONFIG",
        "With `USE_EXISTING_CLUSTER`: the kubeconfig of that cluster.",
    ),
    (
        "KUBECTL",
        "The kubectl that `Environment::kubectl` runs in tests (default: `kubectl` on PATH).",
    ),
];

#[test]
fn envtest_reference_page() {
    let repo = crate::repo();
    let envtest = crate::rust_sources(&repo.join("envtest/src")).concat();
    let setup = crate::rust_sources(&repo.join("cli/src/commands/setup_envtest.rs")).concat();
    let mut read = crate::env_vars_read(&repo.join("envtest/src"));
    read.extend(crate::env_vars_read(
        &repo.join("cli/src/commands/setup_envtest.rs"),
    ));
    let undocumented: Vec<&String> = read
        .iter()
        .filter(|name| !VARIABLES.iter().any(|(n, _)| n == name))
        .collect();
    assert!(
        undocumented.is_empty(),
        "rkb-envtest or `rkb setup-envtest` reads {undocumented:?}: add a row to VARIABLES in \
         cli/tests/book/envtest_page.rs"
    );
    let mut rows = Vec::new();
    for (name, meaning) in VARIABLES {
        let literal = format!("\"{name}\"");
        let readers: Vec<&str> = [
            (envtest.contains(&literal), "tests (rkb-envtest)"),
            (setup.contains(&literal), "`rkb setup-envtest`"),
        ]
        .into_iter()
        .filter_map(|(reads, who)| reads.then_some(who))
        .collect();
        assert!(
            !readers.is_empty(),
            "VARIABLES in cli/tests/book/envtest_page.rs has a row for {name}, which neither \
             envtest/src nor cli/src/commands/setup_envtest.rs names any more"
        );
        rows.push(vec![code(name), readers.join(", "), cell(meaning)]);
    }

    let mut root = rkb::cli::Cli::command();
    root.build();
    let setup_envtest = root
        .get_subcommands()
        .find(|c| c.get_name() == "setup-envtest")
        .expect("rkb has a setup-envtest command");

    let mut page = crate::generated_from(
        "rkb-envtest's sources (envtest/src), `rkb setup-envtest`'s clap definition \
         (cli/src/cli.rs) and its source (cli/src/commands/setup_envtest.rs)",
        "envtest_page.rs",
    );
    page.push_str(&format!(
        "# envtest variables\n\n\
         A generated project's controller tests run against a real kube-apiserver and etcd, \
         started by the rkb-envtest crate for the test process, as controller-runtime's envtest \
         does for Go; no cluster is needed. `make test` gets the binaries from \
         `rkb setup-envtest`, which builds them once for Kubernetes {} and caches them.\n\n\
         Tests look for the binaries in this order: `TEST_ASSET_KUBE_APISERVER` and \
         `TEST_ASSET_ETCD`; `KUBEBUILDER_ASSETS`; the cache `rkb setup-envtest` builds into; \
         `/usr/local/kubebuilder/bin`. They never build anything themselves.\n\n\
         ## Environment variables\n\n",
        rkb_envtest::KUBERNETES_VERSION
    ));
    page.push_str(&table(&["Variable", "Read by", "Effect"], &rows));
    page.push_str(&super::cli_pages::section(setup_envtest));
    crate::generated_page("reference/envtest.md", &page);
}
