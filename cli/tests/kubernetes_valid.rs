//! Every golden project's and example's deployment is valid Kubernetes: `kubectl kustomize
//! config/default` builds, and every object in it passes `kubernetes-validate --strict`
//! against the Kubernetes version the projects are generated for.
//!
//! Needs kubectl and kubernetes-validate (`.ci/install-tools` installs them); a missing
//! tool fails the test rather than skipping it.

mod common;

const KUBERNETES_VERSION: &str = "1.34.0";

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
            let file = file.to_str().unwrap();
            let args = ["--strict", "--quiet", "-k", KUBERNETES_VERSION, file];
            let checked = common::tool("kubernetes-validate", &args, &project);
            assert!(
                checked.status.success(),
                "{}: {file} fails kubernetes-validate --strict:\n{}{}",
                project.display(),
                String::from_utf8_lossy(&checked.stdout),
                String::from_utf8_lossy(&checked.stderr)
            );
        }
        let objects = built.matches("\nkind: ").count() + 1;
        assert!(
            objects >= 6,
            "{}: only {objects} objects rendered",
            project.display()
        );
    }
}
