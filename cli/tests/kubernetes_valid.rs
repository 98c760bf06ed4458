//! Every golden project's and example's deployment is valid Kubernetes: `kubectl kustomize
//! config/default` builds, and every object in it passes `kubernetes-validate --strict`
//! against the Kubernetes version the projects are generated for.
//!
//! Needs kubectl and kubernetes-validate (`.ci/install-tools` installs them); a missing
//! tool fails the test rather than skipping it.

use std::path::{Path, PathBuf};
use std::process::Command;

const KUBERNETES_VERSION: &str = "1.33.0";

fn projects() -> Vec<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut out = Vec::new();
    for parent in ["testdata", "examples"] {
        let Ok(entries) = std::fs::read_dir(repo.join(parent)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.join("PROJECT").is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn tool(program: &str, args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {program} ({e}); install the test tools with `bash .ci/install-tools`"
            )
        })
}

#[test]
fn deployments_build_and_pass_the_official_schemas() {
    let projects = projects();
    assert!(
        projects.len() >= 2,
        "expected the golden projects, found {projects:?}"
    );
    for project in projects {
        let built = tool("kubectl", &["kustomize", "config/default"], &project);
        assert!(
            built.status.success(),
            "{}: kubectl kustomize config/default failed:\n{}",
            project.display(),
            String::from_utf8_lossy(&built.stderr)
        );
        let rendered = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(rendered.path(), &built.stdout).unwrap();
        let mut files = vec![rendered.path().to_path_buf()];
        // CRDs are validated on their own too: config/default leaves them out until an API exists.
        if let Ok(bases) = std::fs::read_dir(project.join("config/crd/bases")) {
            files.extend(bases.map(|e| e.unwrap().path()));
        }
        for file in files {
            let file = file.to_str().unwrap();
            let checked = tool(
                "kubernetes-validate",
                &["--strict", "--quiet", "-k", KUBERNETES_VERSION, file],
                &project,
            );
            assert!(
                checked.status.success(),
                "{}: {file} fails kubernetes-validate --strict:\n{}{}",
                project.display(),
                String::from_utf8_lossy(&checked.stdout),
                String::from_utf8_lossy(&checked.stderr)
            );
        }
        let objects = String::from_utf8_lossy(&built.stdout)
            .matches("\nkind: ")
            .count()
            + 1;
        assert!(
            objects >= 6,
            "{}: only {objects} objects rendered",
            project.display()
        );
    }
}
