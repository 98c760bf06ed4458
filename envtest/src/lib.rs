//! A real Kubernetes control plane for operator tests, launched from Rust.
//!
//! What controller-runtime's envtest gives Go operators: `kube-apiserver` and `etcd`
//! processes on loopback, with a real authorizer (RBAC), admission, CEL, watches and the
//! status subresource, started once per test binary and shared by its tests.
//!
//! ```no_run
//! # async fn example() {
//! let env = rkb_envtest::shared().await;
//! let client = env.client();
//! let namespace = env.create_namespace().await.unwrap();
//! # let _ = (client, namespace);
//! # }
//! ```
//!
//! - The binaries come from `TEST_ASSET_KUBE_APISERVER`/`TEST_ASSET_ETCD`, then
//!   `KUBEBUILDER_ASSETS` (what controller-runtime's `setup-envtest` prints), then the cache
//!   that `rkb setup-envtest` (`make setup-envtest`) builds from Go modules.
//! - `USE_EXISTING_CLUSTER=true` runs the same tests against the cluster of the current
//!   kubeconfig instead.
//! - kube-controller-manager runs only when a test asks for it
//!   ([`shared_with_controller_manager`], [`Environment::start_controller_manager`]; the
//!   binary comes from `rkb setup-envtest --with controller-manager`): then owner
//!   references are garbage-collected, namespaces finish deleting and Deployments get
//!   ReplicaSets and Pods (see [`CONTROLLERS`]). Without it, as in controller-runtime's
//!   envtest, none of that happens. There is never a kubelet: no Pod ever runs. Each test
//!   works in a namespace of its own.
//! - [`WebhookCerts`] lets the API server call webhooks the test serves itself, over
//!   loopback TLS (controller-runtime's `WebhookInstallOptions`).
//! - The processes die with the test binary, however it ends (Linux `PR_SET_PDEATHSIG`).
//! - [`kubernetes_validate`] checks manifests offline against the same release's schemas.
//! - [`Environment::etcd_prefix`] reads etcd itself, for tests of what is stored (the
//!   version a custom resource is encoded at), which the API server never shows.
//!
//! The [Testing guide][testing] and the [envtest variables][variables] are in the rkb Book;
//! why the binaries are built from Go modules is [a design note][design].
//!
//! [testing]: https://github.com/rkb-rs/rkb/blob/main/docs/src/guides/testing.md
//! [variables]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/envtest.md
//! [design]: https://github.com/rkb-rs/rkb/blob/main/docs/src/design/envtest-from-go-modules.md

mod apply;
mod assets;
mod certs;
mod control_plane;
mod error;
mod etcd;
mod operator;
mod validate;
mod webhook;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use tokio::sync::OnceCell;

pub use apply::{Apply, kustomize, parse_yaml};
pub use assets::{Assets, KUBERNETES_VERSION};
pub use control_plane::CONTROLLERS;
pub use error::Error;
pub use etcd::Stored;
pub use validate::kubernetes_validate;
pub use webhook::WebhookCerts;

use control_plane::{ControlPlane, ControllerManager};

/// A Kubernetes API server for tests: started by this crate, or an existing cluster.
#[derive(Debug)]
pub struct Environment {
    config: Config,
    /// A kubeconfig file for tools such as kubectl.
    kubeconfig: PathBuf,
    /// Kept for the life of the test binary; its processes die with it.
    control_plane: Option<ControlPlane>,
    /// Started on the first request, then shared like the control plane.
    controller_manager: OnceCell<Result<ControllerManager, String>>,
}

static SHARED: OnceCell<Result<Environment, String>> = OnceCell::const_new();
static SHARED_WITH_CONTROLLER_MANAGER: OnceCell<Result<Environment, String>> =
    OnceCell::const_new();

/// A TCP port free on `host` right now, for a test server to bind (the kernel picks it;
/// another process could take it before the test binds it, which loopback tests accept).
pub fn free_port(host: &str) -> u16 {
    std::net::TcpListener::bind((host, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap_or_else(|e| panic!("no free port on {host}: {e}"))
}

/// The control plane shared by every test of this test binary, started on first use.
///
/// Panics with a message that says what failed and how to fix it (missing binaries,
/// a process that did not come up, with both processes' logs).
pub async fn shared() -> &'static Environment {
    match try_shared().await {
        Ok(env) => env,
        Err(message) => panic!("{message}"),
    }
}

/// A control plane with kube-controller-manager running, shared by the tests of this test
/// binary that call this. It is not [`shared`]'s: tests that fake what the controllers
/// would do (a Deployment's status, say) keep a plane where nothing overwrites it.
///
/// Panics with what failed and how to fix it, e.g. how to build the binary.
pub async fn shared_with_controller_manager() -> &'static Environment {
    let started = SHARED_WITH_CONTROLLER_MANAGER
        .get_or_init(|| async {
            let env = Environment::start().await.map_err(|e| e.to_string())?;
            env.start_controller_manager()
                .await
                .map_err(|e| e.to_string())?;
            Ok(env)
        })
        .await;
    match started {
        Ok(env) => env,
        Err(message) => panic!("{message}"),
    }
}

/// [`shared`], returning the start-up error instead of panicking. A failed start is
/// remembered, so the other tests of the binary fail at once with the same message.
pub async fn try_shared() -> Result<&'static Environment, &'static str> {
    SHARED
        .get_or_init(|| async { Environment::start().await.map_err(|e| e.to_string()) })
        .await
        .as_ref()
        .map_err(String::as_str)
}

/// A control plane shared by the tests that pass the same `key`, started on first use and
/// kept for the test binary's life. `shared_by(module_path!())` gives each module of a test
/// binary a plane of its own: for a binary that gathers tests which were binaries of their
/// own (linked once instead of once each), and whose modules install cluster-wide objects
/// (CRDs, webhook configurations) that another module's tests must not meet.
///
/// Panics as [`shared`] does; a failed start is remembered for the key.
///
/// ```no_run
/// # async fn example() {
/// let env = rkb_envtest::shared_by(module_path!()).await;
/// let namespace = env.create_namespace().await.unwrap();
/// # }
/// ```
pub async fn shared_by(key: &'static str) -> &'static Environment {
    type Plane = OnceCell<Result<Environment, String>>;
    static PLANES: std::sync::Mutex<BTreeMap<&str, &'static Plane>> =
        std::sync::Mutex::new(BTreeMap::new());
    let plane: &'static Plane = PLANES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(key)
        .or_insert_with(|| Box::leak(Box::default()));
    let started = plane
        .get_or_init(|| async { Environment::start().await.map_err(|e| e.to_string()) })
        .await;
    match started {
        Ok(env) => env,
        Err(message) => panic!("{message}"),
    }
}

impl Environment {
    /// Starts a new control plane, or connects to the current cluster when
    /// `USE_EXISTING_CLUSTER=true`. Most tests want [`shared`] instead.
    pub async fn start() -> Result<Self, Error> {
        Self::start_with_api_server_flags(std::iter::empty::<String>()).await
    }

    /// Starts a new control plane whose kube-apiserver also gets `flags`, e.g.
    /// `--feature-gates=ShardedListAndWatch=true` for an alpha feature. With
    /// `USE_EXISTING_CLUSTER=true` the flags cannot apply and the current cluster is used:
    /// a test should check that the feature is served.
    pub async fn start_with_api_server_flags(
        flags: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<Self, Error> {
        use_ring_unless_chosen();
        if use_existing_cluster() {
            return Self::existing().await;
        }
        let flags: Vec<String> = flags.into_iter().map(Into::into).collect();
        let assets = Assets::locate()?;
        let control_plane = ControlPlane::start(&assets, start_timeout(), &flags).await?;
        let kubeconfig = control_plane.kubeconfig_path();
        let config = load_kubeconfig(&kubeconfig).await?;
        let env = Self {
            config,
            kubeconfig,
            control_plane: Some(control_plane),
            controller_manager: OnceCell::new(),
        };
        Ok(env)
    }

    async fn existing() -> Result<Self, Error> {
        let config = Config::infer()
            .await
            .map_err(|e| Error::ExistingCluster(e.to_string()))?;
        let kubeconfig = std::env::var_os("KUBECONFIG")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".kube/config")))
            .unwrap_or_default();
        Ok(Self {
            config,
            kubeconfig,
            control_plane: None,
            controller_manager: OnceCell::new(),
        })
    }

    /// A client with full rights (`system:masters`), for setting up and checking tests.
    /// Make one per test: a client belongs to the async runtime it is created on.
    pub fn client(&self) -> Client {
        Client::try_from(self.config.clone()).expect("the envtest client configuration is valid")
    }

    /// The configuration [`client`](Self::client) is made from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A kubeconfig file for this API server (for kubectl and other tools).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// Whether this is a control plane started by the test binary (not an existing cluster).
    pub fn is_local(&self) -> bool {
        self.control_plane.is_some()
    }

    /// Starts kube-controller-manager with [`CONTROLLERS`] against this control plane
    /// and waits until its controllers act; at once when it already runs. An existing
    /// cluster (`USE_EXISTING_CLUSTER`) has its own, so nothing is started there.
    pub async fn start_controller_manager(&self) -> Result<(), Error> {
        let Some(plane) = &self.control_plane else {
            return Ok(());
        };
        self.controller_manager
            .get_or_init(|| async {
                plane
                    .start_controller_manager(start_timeout())
                    .await
                    .map_err(|e| e.to_string())
            })
            .await
            .as_ref()
            .map(|_| ())
            .map_err(|message| Error::ControllerManager(message.clone()))
    }

    /// The process ID of kube-controller-manager once started, for measuring it.
    pub fn controller_manager_process_id(&self) -> Option<u32> {
        self.controller_manager
            .get()
            .and_then(|started| started.as_ref().ok())
            .map(ControllerManager::process_id)
    }

    /// The process IDs of kube-apiserver and etcd, for measuring them.
    pub fn process_ids(&self) -> Option<(u32, u32)> {
        self.control_plane.as_ref().map(ControlPlane::process_ids)
    }

    /// Creates a namespace with a fresh name (`rkb-test-<random>`), so that tests sharing
    /// the control plane cannot see each other's objects. It is not deleted afterwards:
    /// without a controller-manager, namespaces never finish deleting anyway.
    pub async fn create_namespace(&self) -> Result<String, Error> {
        let name = format!(
            "rkb-test-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..10]
        );
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        Api::<Namespace>::all(self.client())
            .create(&PostParams::default(), &namespace)
            .await
            .map_err(|e| Error::request(format!("create namespace {name}"), e))?;
        Ok(name)
    }

    /// A client that authenticates as the ServiceAccount `namespace/name` with a bound
    /// token from the TokenRequest API, so every request it makes is authorized by the
    /// API server's RBAC as the operator's would be in a cluster. Creates the
    /// ServiceAccount when it does not exist.
    pub async fn service_account_client(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Client, Error> {
        let token = self.service_account_token(namespace, name).await?;
        let mut config = self.config.clone();
        config.auth_info = kube::config::AuthInfo {
            token: Some(token.into()),
            ..Default::default()
        };
        Client::try_from(config).map_err(|e| Error::request("make a ServiceAccount client", e))
    }

    /// A bound token (one hour) for the ServiceAccount `namespace/name`, creating the
    /// ServiceAccount when it does not exist.
    pub async fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<String, Error> {
        let accounts = Api::<ServiceAccount>::namespaced(self.client(), namespace);
        let account = ServiceAccount {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        match accounts.create(&PostParams::default(), &account).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(e) => {
                return Err(Error::request(
                    format!("create ServiceAccount {namespace}/{name}"),
                    e,
                ));
            }
        }
        // As JSON, not the typed struct: whether `spec` and `status.token` are optional
        // differs between the Kubernetes versions k8s-openapi offers, and a library must
        // compile with whichever one the application picks.
        let request: TokenRequest =
            serde_json::from_value(serde_json::json!({"spec": {"expirationSeconds": 3600}}))
                .map_err(|e| Error::Response(format!("a TokenRequest: {e}")))?;
        let response = accounts
            .create_token_request(name, &PostParams::default(), &request)
            .await
            .map_err(|e| Error::request(format!("request a token for {namespace}/{name}"), e))?;
        serde_json::to_value(&response)
            .ok()
            .and_then(|json| json["status"]["token"].as_str().map(str::to_owned))
            .ok_or_else(|| {
                Error::Response(format!(
                    "the TokenRequest for {namespace}/{name} has no status"
                ))
            })
    }

    /// Server-side applies objects; see [`Apply`] for CRDs, YAML and kustomize builds.
    pub fn apply(&self) -> Apply<'_> {
        Apply::new(self)
    }

    /// A kubectl command that talks to this API server (`KUBECTL` names the binary).
    pub fn kubectl(&self) -> std::process::Command {
        let mut command = std::process::Command::new(kubectl_binary());
        command.arg("--kubeconfig").arg(&self.kubeconfig);
        command
    }
}

/// kube's TLS asks rustls for the process's crypto provider, which rustls picks by itself
/// only when exactly one is compiled in; a test build whose features unify with a crate
/// that brings aws-lc-rs has two. Use ring, as kube's `ring` feature does, unless the
/// program chose already.
fn use_ring_unless_chosen() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn kubectl_binary() -> std::ffi::OsString {
    std::env::var_os("KUBECTL").unwrap_or_else(|| "kubectl".into())
}

fn use_existing_cluster() -> bool {
    std::env::var("USE_EXISTING_CLUSTER").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// `RKB_ENVTEST_START_TIMEOUT` or envtest's `KUBEBUILDER_CONTROLPLANE_START_TIMEOUT`
/// (seconds, with or without an `s`); 60 s by default, as a loaded CI runner can need.
fn start_timeout() -> Duration {
    [
        "RKB_ENVTEST_START_TIMEOUT",
        "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT",
    ]
    .iter()
    .filter_map(|name| std::env::var(name).ok())
    .find_map(|value| value.trim_end_matches('s').parse::<u64>().ok())
    .map_or(Duration::from_secs(60), Duration::from_secs)
}

async fn load_kubeconfig(path: &Path) -> Result<Config, Error> {
    let kubeconfig = Kubeconfig::read_from(path)
        .map_err(|e| Error::ControlPlane(format!("read {}: {e}", path.display())))?;
    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| Error::ControlPlane(format!("load {}: {e}", path.display())))
}
