//! reference/makefile.md, from the Makefile template of `rkb init` (templates/init/Makefile.tera)
//! and the targets `rkb edit --plugins helm` adds: each target with its `##` help, the
//! variables a user sets, and kubebuilder's targets where they differ ([`KUBEBUILDER`]).

use super::markdown::{cell, code, table};

/// kubebuilder's equivalent of each target, and why where they differ.
const KUBEBUILDER: &[(&str, &str)] = &[
    ("all", "same"),
    ("help", "same"),
    (
        "manifests",
        "`manifests` and `generate` (Rust needs no generated deepcopy code)",
    ),
    (
        "release-crds",
        "none: rkb's gate against breaking changes to released CRDs",
    ),
    ("fmt", "same"),
    ("lint", "`lint` (golangci-lint) and `vet`"),
    ("lint-fix", "same (`golangci-lint run --fix` there)"),
    (
        "setup-envtest",
        "`setup-envtest` (downloads release binaries; rkb builds them from Go modules)",
    ),
    ("test", "same"),
    ("setup-test-e2e", "same"),
    ("cleanup-test-e2e", "same"),
    (
        "test-e2e",
        "`test-e2e`, which runs `setup-test-e2e` before and `cleanup-test-e2e` after; here they \
         are run by hand, and test-e2e uses the current cluster",
    ),
    ("build", "same"),
    ("run", "same"),
    ("image", "none (what ko does for Go)"),
    ("docker-build", "same"),
    ("docker-push", "same"),
    (
        "docker-buildx",
        "same (kubebuilder's builds from a `Dockerfile.cross`)",
    ),
    ("build-installer", "same"),
    ("install", "same"),
    ("uninstall", "same"),
    ("deploy", "same"),
    ("undeploy", "same"),
    (
        "rkb",
        "`controller-gen`, `setup-envtest`, `kustomize`: tools kubebuilder's Makefile installs \
         into `bin/` on first use, as this one installs rkb",
    ),
    (
        "helm",
        "none: kubebuilder regenerates the chart with `kubebuilder edit --plugins=helm/v2-alpha`; \
         its `helm-deploy`, `helm-uninstall` and `helm-status` are `helm` commands here",
    ),
];

/// Targets that need no `##` help, and what to say of them instead.
const WITHOUT_HELP: &[(&str, &str)] =
    &[("all", "The default goal: `make` alone runs `make build`.")];

struct Target {
    section: String,
    name: String,
    help: String,
}

#[test]
fn makefile_reference_page() {
    let template =
        std::fs::read_to_string(crate::repo().join("templates/init/Makefile.tera")).unwrap();
    let init = targets(&template);
    let with_helm = targets(&makefile_with_helm());
    let added: Vec<&Target> = with_helm
        .iter()
        .filter(|t| !init.iter().any(|i| i.name == t.name))
        .collect();

    let names: Vec<&str> = init
        .iter()
        .chain(added.iter().copied())
        .map(|t| t.name.as_str())
        .collect();
    let missing: Vec<&&str> = names
        .iter()
        .filter(|n| !KUBEBUILDER.iter().any(|(k, _)| k == *n))
        .collect();
    let stale: Vec<&str> = KUBEBUILDER
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !names.contains(k))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "KUBEBUILDER in cli/tests/book/makefile.rs has no row for the targets {missing:?}, and \
         rows for targets the Makefile no longer has: {stale:?}"
    );

    let mut page = crate::generated_from(
        "templates/init/Makefile.tera and the Makefile of `rkb edit --plugins helm`",
        "makefile.rs",
    );
    page.push_str(
        "# Makefile targets\n\n\
         The Makefile `rkb init` writes, target by target, as `make help` lists them; the \
         kubebuilder column names the target a kubebuilder project has for the same job.\n",
    );
    let mut sections: Vec<&str> = Vec::new();
    for target in &init {
        if !sections.contains(&target.section.as_str()) {
            sections.push(&target.section);
        }
    }
    for section in sections {
        let rows = rows(init.iter().filter(|t| t.section == section));
        page.push_str(&format!("\n## {section}\n\n"));
        page.push_str(&table(&["Target", "What it does", "kubebuilder"], &rows));
    }
    page.push_str(
        "\n## Added by `rkb edit --plugins helm`\n\n\
         The plugin also makes `make manifests` bring the chart in dist/chart/ in step with \
         config/.\n\n",
    );
    page.push_str(&table(
        &["Target", "What it does", "kubebuilder"],
        &rows(added.into_iter()),
    ));

    let variables = variables(&template);
    page.push_str(
        "\n## Variables\n\nSet them on the command line (`make deploy IMG=example.com/op:v1`) \
         or in the environment.\n\n",
    );
    page.push_str(&table(&["Variable", "Default", "Meaning"], &variables));
    crate::generated_page("reference/makefile.md", &page);
}

fn rows<'a>(targets: impl Iterator<Item = &'a Target>) -> Vec<Vec<String>> {
    targets
        .map(|t| {
            let kubebuilder = KUBEBUILDER.iter().find(|(k, _)| *k == t.name).unwrap().1;
            vec![
                code(&format!("make {}", t.name)),
                cell(&t.help),
                cell(kubebuilder),
            ]
        })
        .collect()
}

/// The Makefile of a golden project after `rkb edit --plugins helm --no-chart` (the chart
/// itself is left out: it needs kubectl, and the targets do not depend on it).
fn makefile_with_helm() -> String {
    let golden = crate::repo().join("testdata/project-memcached");
    let dir = tempfile::tempdir().unwrap();
    for file in ["PROJECT", "Makefile"] {
        std::fs::copy(golden.join(file), dir.path().join(file)).unwrap();
    }
    crate::common::rkb_in(dir.path(), &["edit", "--plugins", "helm", "--no-chart"]);
    std::fs::read_to_string(dir.path().join("Makefile")).unwrap()
}

/// The rules of a Makefile, each with its `##@` section and its `##` help; panics on a
/// rule without help that [`WITHOUT_HELP`] does not excuse.
fn targets(makefile: &str) -> Vec<Target> {
    let mut section = String::from("General");
    let mut out = Vec::new();
    for line in makefile.lines() {
        if let Some(name) = line.strip_prefix("##@ ") {
            section = name.trim().to_owned();
            continue;
        }
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        let is_rule = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !rest.starts_with('=');
        if !is_rule {
            continue;
        }
        let help = match rest.split_once("##") {
            Some((_, help)) => help.trim().replace("{{ project_name }}", "<project>"),
            None => WITHOUT_HELP
                .iter()
                .find(|(t, _)| *t == name)
                .unwrap_or_else(|| panic!("the Makefile target `{name}` has no `## help` text"))
                .1
                .to_owned(),
        };
        out.push(Target {
            section: section.clone(),
            name: name.to_owned(),
            help,
        });
    }
    out
}

/// The variables a user may set (`NAME ?= default`), with the comment above each. A comment
/// above several variables is theirs where it names them (`E2E_IMG`, `KIND`, `KIND_CLUSTER`).
fn variables(makefile: &str) -> Vec<Vec<String>> {
    let mut comment: Vec<&str> = Vec::new();
    let mut own = false;
    let mut out = Vec::new();
    for line in makefile.lines() {
        if let Some(text) = line.strip_prefix('#').filter(|t| !t.starts_with('#')) {
            if !own {
                comment.clear();
            }
            comment.push(text.trim());
            own = true;
            continue;
        }
        let Some((name, default)) = line.split_once(" ?=") else {
            comment.clear();
            own = false;
            continue;
        };
        let release = rkb::commands::setup_envtest::DEFAULT_RELEASE.trim_start_matches('v');
        let default = default
            .trim()
            .replace("{{ project_name }}", "<project>")
            .replace("{{ envtest_k8s_version }}", release);
        let shared = comment.join(" ");
        let named = shared
            .to_lowercase()
            .contains(&name.to_lowercase().replace('_', " "));
        let meaning = if own || named {
            shared.clone()
        } else if default == name.to_lowercase() {
            format!("The `{default}` the targets run.")
        } else {
            String::new()
        };
        out.push(vec![
            code(name),
            if default.is_empty() {
                String::new()
            } else {
                cell(&code(&default))
            },
            cell(&meaning),
        ]);
        own = false;
    }
    out
}
