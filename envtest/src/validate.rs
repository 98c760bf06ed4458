//! [`kubernetes_validate`]: manifests checked offline, with the `kubernetes-validate`
//! tool, against the OpenAPI schemas of the Kubernetes release the control plane runs
//! ([`KUBERNETES_VERSION`]), so that rkb's tests, like its envtest, know one version.

use std::path::Path;
use std::process::Command;

use crate::KUBERNETES_VERSION;

/// Runs `kubernetes-validate --strict --quiet -k <KUBERNETES_VERSION>` on `files` in
/// `dir`, for tests.
///
/// # Panics
///
/// When the tool cannot run (the message says how to install it), or when it rejects an
/// object (with its report).
pub fn kubernetes_validate<P: AsRef<Path>>(files: &[P], dir: &Path) {
    let output = Command::new("kubernetes-validate")
        .args(["--strict", "--quiet", "-k", KUBERNETES_VERSION])
        .args(files.iter().map(AsRef::as_ref))
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run kubernetes-validate ({e}); install it with \
                 `pip install kubernetes-validate` (or `bash .ci/install-tools`)"
            )
        });
    let names: Vec<String> = files
        .iter()
        .map(|f| f.as_ref().display().to_string())
        .collect();
    assert!(
        output.status.success(),
        "kubernetes-validate --strict -k {KUBERNETES_VERSION} rejects {} (in {}):\n{}{}",
        names.join(", "),
        dir.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
