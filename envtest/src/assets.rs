//! Where the kube-apiserver, etcd and (on request) kube-controller-manager binaries come
//! from.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::Error;

/// The Kubernetes release `rkb setup-envtest` builds by default (one of those under
/// `assets/releases/`), and the API level of the `k8s-openapi` feature new projects select.
pub const KUBERNETES_VERSION: &str = "v1.37.2";

/// The control plane's binaries.
#[derive(Debug, Clone)]
pub struct Assets {
    pub kube_apiserver: PathBuf,
    pub etcd: PathBuf,
    /// Used only when a test asks for it, so it may be absent: see
    /// [`controller_manager`](Self::controller_manager).
    pub kube_controller_manager: PathBuf,
}

impl Assets {
    /// Finds the binaries, in controller-runtime's order: `TEST_ASSET_KUBE_APISERVER` and
    /// `TEST_ASSET_ETCD`; then `KUBEBUILDER_ASSETS`; then the cache `rkb setup-envtest`
    /// builds into; then `/usr/local/kubebuilder/bin`. Never builds anything itself.
    pub fn locate() -> Result<Self, Error> {
        Self::locate_with(|name| std::env::var_os(name))
    }

    fn locate_with(var: impl Fn(&str) -> Option<OsString>) -> Result<Self, Error> {
        let mut looked = Vec::new();
        if let (Some(kube_apiserver), Some(etcd)) =
            (var("TEST_ASSET_KUBE_APISERVER"), var("TEST_ASSET_ETCD"))
        {
            let kube_apiserver = PathBuf::from(kube_apiserver);
            let kube_controller_manager = var("TEST_ASSET_KUBE_CONTROLLER_MANAGER")
                .map(PathBuf::from)
                .unwrap_or_else(|| kube_apiserver.with_file_name("kube-controller-manager"));
            let assets = Self {
                kube_apiserver,
                etcd: etcd.into(),
                kube_controller_manager,
            };
            return assets.checked("TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD");
        }
        // KUBEBUILDER_ASSETS is an explicit choice: use exactly it, or fail.
        if let Some(dir) = var("KUBEBUILDER_ASSETS") {
            return Self::in_dir(Path::new(&dir)).checked("KUBEBUILDER_ASSETS");
        }
        let cache = cache_dir(&var);
        match newest_cached_build(&cache) {
            Some(dir) => return Ok(Self::in_dir(&dir)),
            None => looked.push(format!(
                "{} (no k8s-{KUBERNETES_VERSION}-* build)",
                cache.display()
            )),
        }
        let system = Path::new("/usr/local/kubebuilder/bin");
        let assets = Self::in_dir(system);
        if assets.missing().is_empty() {
            return Ok(assets);
        }
        looked.push(system.display().to_string());
        Err(Error::Assets(not_found_message(&looked)))
    }

    /// The binaries in one directory, as `KUBEBUILDER_ASSETS` lays them out.
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            kube_apiserver: dir.join("kube-apiserver"),
            etcd: dir.join("etcd"),
            kube_controller_manager: dir.join("kube-controller-manager"),
        }
    }

    /// kube-controller-manager, or what to run to get it: it is built only on request.
    pub fn controller_manager(&self) -> Result<&Path, Error> {
        if is_executable(&self.kube_controller_manager) {
            return Ok(&self.kube_controller_manager);
        }
        Err(Error::Assets(format!(
            "this test asks for kube-controller-manager, and {} is missing or not executable.\n\
             Build it next to kube-apiserver (once; cached) with:\n  \
             export KUBEBUILDER_ASSETS=\"$(rkb setup-envtest --with controller-manager)\"\n\
             or name one with TEST_ASSET_KUBE_CONTROLLER_MANAGER (Kubernetes {KUBERNETES_VERSION}).",
            self.kube_controller_manager.display()
        )))
    }

    fn missing(&self) -> Vec<&Path> {
        [&self.kube_apiserver, &self.etcd]
            .into_iter()
            .filter(|path| !is_executable(path))
            .map(PathBuf::as_path)
            .collect()
    }

    fn checked(self, source: &str) -> Result<Self, Error> {
        let missing = self.missing();
        if missing.is_empty() {
            return Ok(self);
        }
        let missing: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
        Err(Error::Assets(format!(
            "envtest binaries named by {source} are missing or not executable: {}.\n{}",
            missing.join(", "),
            how_to_get_them()
        )))
    }
}

/// `RKB_ENVTEST_CACHE`, else `$XDG_CACHE_HOME/rkb/envtest`, else `~/.cache/rkb/envtest`:
/// the same rule as `rkb setup-envtest`.
fn cache_dir(var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    if let Some(dir) = var("RKB_ENVTEST_CACHE") {
        return dir.into();
    }
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("rkb").join("envtest")
}

/// The most recent complete build of [`KUBERNETES_VERSION`] in the cache.
fn newest_cached_build(cache: &Path) -> Option<PathBuf> {
    let prefix = format!("k8s-{KUBERNETES_VERSION}-");
    std::fs::read_dir(cache)
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .map(|entry| entry.path())
        .filter(|dir| Assets::in_dir(dir).missing().is_empty())
        .max_by_key(|dir| dir.metadata().and_then(|m| m.modified()).ok())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn not_found_message(looked: &[String]) -> String {
    format!(
        "envtest needs kube-apiserver and etcd, and found neither TEST_ASSET_KUBE_APISERVER/TEST_ASSET_ETCD \
         nor KUBEBUILDER_ASSETS set; it also looked in: {}.\n{}",
        looked.join(", "),
        how_to_get_them()
    )
}

fn how_to_get_them() -> String {
    format!(
        "Get them with one of:\n  \
         make setup-envtest                      (in a project rkb generated)\n  \
         export KUBEBUILDER_ASSETS=\"$(rkb setup-envtest)\"   (builds Kubernetes {KUBERNETES_VERSION} from Go modules once, needs Go >= 1.26; `cargo install rkb` for the command)\n  \
         export KUBEBUILDER_ASSETS=\"$(setup-envtest use -p path {})\"   (controller-runtime's tool, where it can download)\n\
         or run against a cluster with USE_EXISTING_CLUSTER=true.",
        KUBERNETES_VERSION.trim_start_matches('v'),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.into())
    }

    #[test]
    fn kubebuilder_assets_is_used_exactly_and_a_wrong_one_says_how_to_fix_it() {
        let error =
            Assets::locate_with(env(&[("KUBEBUILDER_ASSETS", "/nonexistent/bin")])).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("named by KUBEBUILDER_ASSETS"), "{message}");
        assert!(
            message.contains("/nonexistent/bin/kube-apiserver"),
            "{message}"
        );
        assert!(message.contains("make setup-envtest"), "{message}");
        assert!(message.contains("rkb setup-envtest"), "{message}");
    }

    #[test]
    fn nothing_found_names_every_place_looked_and_how_to_get_the_binaries() {
        let empty = tempfile::tempdir().unwrap();
        let vars = [("RKB_ENVTEST_CACHE", empty.path().to_str().unwrap())];
        let Err(error) = Assets::locate_with(env(&vars)) else {
            return; // this machine has /usr/local/kubebuilder/bin
        };
        let message = error.to_string();
        assert!(
            message.contains(&format!("no k8s-{KUBERNETES_VERSION}-* build")),
            "{message}"
        );
        assert!(message.contains("KUBEBUILDER_ASSETS"), "{message}");
        assert!(message.contains("USE_EXISTING_CLUSTER=true"), "{message}");
    }

    #[test]
    fn the_newest_complete_cached_build_of_the_pinned_version_wins() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path();
        let make = |name: &str, complete: bool| {
            let dir = cache.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let bins: &[&str] = if complete {
                &["kube-apiserver", "etcd"]
            } else {
                &["etcd"]
            };
            for bin in bins {
                std::fs::write(dir.join(bin), "").unwrap();
                std::fs::set_permissions(dir.join(bin), std::fs::Permissions::from_mode(0o755))
                    .unwrap();
            }
            dir
        };
        make("k8s-v0.0.1-linux-amd64-aaaa", true);
        let good = make(&format!("k8s-{KUBERNETES_VERSION}-linux-amd64-bbbb"), true);
        make(&format!("k8s-{KUBERNETES_VERSION}-linux-amd64-cccc"), false);
        let vars = [("RKB_ENVTEST_CACHE", cache.to_str().unwrap())];
        let assets = Assets::locate_with(env(&vars)).unwrap();
        assert_eq!(assets.kube_apiserver, good.join("kube-apiserver"));
    }

    #[test]
    fn a_missing_controller_manager_says_how_to_build_it() {
        let tmp = tempfile::tempdir().unwrap();
        let message = Assets::in_dir(tmp.path())
            .controller_manager()
            .unwrap_err()
            .to_string();
        assert!(message.contains("kube-controller-manager"), "{message}");
        assert!(
            message.contains("rkb setup-envtest --with controller-manager"),
            "{message}"
        );
        let vars = [
            ("TEST_ASSET_KUBE_APISERVER", "/bin/sh"),
            ("TEST_ASSET_ETCD", "/bin/sh"),
            ("TEST_ASSET_KUBE_CONTROLLER_MANAGER", "/bin/true"),
        ];
        let assets = Assets::locate_with(env(&vars)).unwrap();
        assert_eq!(assets.controller_manager().unwrap(), Path::new("/bin/true"));
    }
}
