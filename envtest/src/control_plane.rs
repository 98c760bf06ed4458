//! Starting etcd and kube-apiserver as child processes, the way controller-runtime's
//! envtest does (pkg/internal/testing/controlplane), with a Rust process supervisor; and,
//! on request, kube-controller-manager, which controller-runtime's envtest never runs.

use std::fs::{self, File};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::Error;
use crate::assets::Assets;
use crate::certs::Certificates;

/// Attempts before giving up: a free port found by binding can be taken by another
/// process before etcd or kube-apiserver binds it.
const ATTEMPTS: u32 = 3;
const DIR_PREFIX: &str = "rkb-envtest-";

/// A running etcd and kube-apiserver, and the directory holding their data, certificates
/// and logs. It lives as long as the test binary.
#[derive(Debug)]
pub struct ControlPlane {
    /// etcd's client URL (plain HTTP on loopback).
    pub etcd_url: String,
    dir: PathBuf,
    assets: Assets,
    kube_apiserver: Process,
    etcd: Process,
}

/// The controllers envtest runs: what operators' tests depend on (owner references,
/// namespace deletion, Deployments that get ReplicaSets and Pods, ServiceAccounts and
/// their tokens, EndpointSlices of Services). Node, scheduling and cloud controllers stay
/// off: no Pod ever runs without a kubelet.
pub const CONTROLLERS: &[&str] = &[
    "garbage-collector-controller",
    "namespace-controller",
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "job-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "endpointslice-controller",
    "root-ca-certificate-publisher-controller",
];

/// A running kube-controller-manager; it dies with the test binary like the rest.
#[derive(Debug)]
pub struct ControllerManager {
    process: Process,
}

impl ControllerManager {
    pub fn process_id(&self) -> u32 {
        self.process.0.id()
    }
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver; `api_server_flags` are added to kube-apiserver's
    /// (e.g. `--feature-gates=ShardedListAndWatch=true`).
    pub async fn start(
        assets: &Assets,
        timeout: Duration,
        api_server_flags: &[String],
    ) -> Result<Self, Error> {
        remove_stale_dirs();
        let mut last = None;
        for _ in 0..ATTEMPTS {
            match Self::start_once(assets, timeout, api_server_flags).await {
                Ok(plane) => return Ok(plane),
                Err(e) => last = Some(e),
            }
        }
        let last = last.map(|e| e.to_string()).unwrap_or_default();
        Err(Error::ControlPlane(format!(
            "{ATTEMPTS} attempts failed; the last one: {last}"
        )))
    }

    async fn start_once(
        assets: &Assets,
        timeout: Duration,
        api_server_flags: &[String],
    ) -> Result<Self, Error> {
        let deadline = Instant::now() + timeout;
        let dir = make_dir()?;
        let certs = Certificates::generate()?;
        write_files(&dir, &certs)?;
        let [etcd_port, peer_port, api_port] = free_ports()?;
        let with_logs = |e: Error| with_logs(&dir, e);

        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let mut etcd = Command::new(&assets.etcd);
        etcd.args([
            "--name=envtest".to_string(),
            format!("--data-dir={}", dir.join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=envtest={peer_url}"),
            "--unsafe-no-fsync=true".into(),
            "--log-level=warn".into(),
        ]);
        let mut etcd = Process::spawn(etcd, &dir.join("etcd.log"))?;
        wait_for_etcd(etcd_port, deadline, &mut etcd)
            .await
            .map_err(with_logs)?;

        let file = |name: &str| dir.join(name).display().to_string();
        let mut api = Command::new(&assets.kube_apiserver);
        api.args([
            format!("--etcd-servers={etcd_url}"),
            format!("--cert-dir={}", file("apiserver")),
            format!("--tls-cert-file={}", file("serving.crt")),
            format!("--tls-private-key-file={}", file("serving.key")),
            format!("--client-ca-file={}", file("client-ca.crt")),
            format!("--secure-port={api_port}"),
            "--bind-address=127.0.0.1".into(),
            // Without a default route the server cannot pick an address by itself.
            "--advertise-address=127.0.0.1".into(),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            "--allow-privileged=true".into(),
            "--authorization-mode=RBAC".into(),
            // No controller-manager creates the `default` ServiceAccounts this plugin needs.
            "--disable-admission-plugins=ServiceAccount".into(),
            format!("--service-account-issuer=https://127.0.0.1:{api_port}"),
            format!("--service-account-key-file={}", file("service-account.pub")),
            format!(
                "--service-account-signing-key-file={}",
                file("service-account.key")
            ),
            "--enable-priority-and-fairness=false".into(),
            "--endpoint-reconciler-type=none".into(),
            "--profiling=false".into(),
        ]);
        api.args(api_server_flags);
        let mut kube_apiserver =
            Process::spawn(api, &dir.join("kube-apiserver.log")).map_err(with_logs)?;
        write_kubeconfig(&dir, api_port)?;
        wait_for_api_server(&dir.join("kubeconfig"), deadline, &mut kube_apiserver)
            .await
            .map_err(with_logs)?;
        Ok(Self {
            etcd_url,
            dir,
            assets: assets.clone(),
            kube_apiserver,
            etcd,
        })
    }

    /// Starts kube-controller-manager against this API server as the admin user, and
    /// waits until its controllers act: the ServiceAccount controller has made the
    /// `default` ServiceAccount of the `default` namespace.
    pub async fn start_controller_manager(
        &self,
        timeout: Duration,
    ) -> Result<ControllerManager, Error> {
        let deadline = Instant::now() + timeout;
        let binary = self.assets.controller_manager()?;
        let file = |name: &str| self.dir.join(name).display().to_string();
        let mut command = Command::new(binary);
        command.args([
            format!("--kubeconfig={}", file("kubeconfig")),
            format!("--controllers={}", CONTROLLERS.join(",")),
            "--leader-elect=false".into(),
            // Its own HTTPS endpoint (metrics, healthz) is not needed by tests.
            "--secure-port=0".into(),
            format!(
                "--service-account-private-key-file={}",
                file("service-account.key")
            ),
            format!("--root-ca-file={}", file("serving-ca.crt")),
            "--profiling=false".into(),
        ]);
        let log = self.dir.join("kube-controller-manager.log");
        let mut process = Process::spawn(command, &log)?;
        let with_log = |e: Error| {
            Error::ControlPlane(format!(
                "{e}\n--- kube-controller-manager.log (last lines) ---\n{}",
                tail(&log, 40)
            ))
        };
        wait_for_controllers(&self.kubeconfig_path(), deadline, &mut process)
            .await
            .map_err(with_log)?;
        Ok(ControllerManager { process })
    }

    pub fn kubeconfig_path(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    pub fn process_ids(&self) -> (u32, u32) {
        (self.kube_apiserver.0.id(), self.etcd.0.id())
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.kube_apiserver.stop();
        self.etcd.stop();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Adds the last lines of both processes' logs to a start-up error. The directory
/// stays for a closer look until a later run removes it.
fn with_logs(dir: &Path, error: Error) -> Error {
    let logs = ["etcd.log", "kube-apiserver.log"]
        .iter()
        .map(|name| format!("--- {name} (last lines) ---\n{}", tail(&dir.join(name), 40)))
        .collect::<Vec<_>>()
        .join("\n");
    Error::ControlPlane(format!("{error}\n{logs}\n(all files in {})", dir.display()))
}

/// A client of the kubeconfig the processes are given (the admin user).
async fn admin_client(kubeconfig: &Path) -> Result<kube::Client, Error> {
    let config = crate::load_kubeconfig(kubeconfig).await?;
    kube::Client::try_from(config).map_err(|e| Error::request("make the admin client", e))
}

async fn wait_for_api_server(
    kubeconfig: &Path,
    deadline: Instant,
    process: &mut Process,
) -> Result<(), Error> {
    let client = admin_client(kubeconfig).await?;
    let mut last: String;
    loop {
        process.check_running("kube-apiserver")?;
        let request = http::Request::get("/readyz")
            .body(Vec::new())
            .expect("a valid request");
        match client.request_text(request).await {
            Ok(body) if body.trim() == "ok" => return Ok(()),
            Ok(body) => last = body,
            Err(e) => last = e.to_string(),
        }
        if Instant::now() >= deadline {
            return Err(Error::ControlPlane(format!(
                "kube-apiserver was not ready in time: {last}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_for_controllers(
    kubeconfig: &Path,
    deadline: Instant,
    process: &mut Process,
) -> Result<(), Error> {
    use k8s_openapi::api::core::v1::ServiceAccount;
    let client = admin_client(kubeconfig).await?;
    let accounts = kube::Api::<ServiceAccount>::namespaced(client, "default");
    loop {
        process.check_running("kube-controller-manager")?;
        if let Ok(Some(_)) = accounts.get_opt("default").await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::ControlPlane(
                "kube-controller-manager did not create the default ServiceAccount in time".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A child process that is killed when dropped (a failed start leaves nothing behind).
#[derive(Debug)]
struct Process(Child);

impl Process {
    /// Starts `command` with its output in `log`. The process is spawned from a thread
    /// that lives as long as the test binary and asks the kernel to kill it when that
    /// thread dies, which is when the test binary exits, panics or is killed: statics are
    /// never dropped, so no destructor could do it.
    fn spawn(mut command: Command, log: &Path) -> Result<Self, Error> {
        let program = command.get_program().to_string_lossy().into_owned();
        let out = File::create(log)
            .map_err(|e| Error::ControlPlane(format!("cannot create {}: {e}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(|e| Error::ControlPlane(format!("cannot open {}: {e}", log.display())))?;
        command.stdin(Stdio::null()).stdout(out).stderr(err);
        kill_with_parent(&mut command);
        let (sender, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("envtest-process".into())
            .spawn(move || {
                let _ = sender.send(command.spawn());
                // PR_SET_PDEATHSIG fires when the spawning thread exits: keep it.
                loop {
                    std::thread::park();
                }
            })
            .map_err(|e| Error::ControlPlane(format!("cannot start a thread: {e}")))?;
        let child = receiver
            .recv()
            .map_err(|_| Error::ControlPlane(format!("the thread starting {program} died")))?
            .map_err(|e| Error::ControlPlane(format!("cannot start {program}: {e}")))?;
        Ok(Self(child))
    }

    fn check_running(&mut self, name: &str) -> Result<(), Error> {
        match self.0.try_wait() {
            Ok(Some(status)) => Err(Error::ControlPlane(format!("{name} exited ({status})"))),
            _ => Ok(()),
        }
    }

    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn kill_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec, and only calls
    // prctl(2) and getppid(2), both async-signal-safe; it allocates nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Elsewhere there is no such kernel feature: processes of a test binary that is killed
/// outlive it (a later run removes their directories, not the processes).
#[cfg(not(target_os = "linux"))]
fn kill_with_parent(_command: &mut Command) {}

async fn wait_for_etcd(port: u16, deadline: Instant, etcd: &mut Process) -> Result<(), Error> {
    let mut last: String;
    loop {
        etcd.check_running("etcd")?;
        match etcd_health(port).await {
            Ok(body) if body.contains("\"health\":\"true\"") => return Ok(()),
            Ok(body) => last = body,
            Err(e) => last = e.to_string(),
        }
        if Instant::now() >= deadline {
            return Err(Error::ControlPlane(format!(
                "etcd was not healthy in time: {last}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `GET /health` over plain HTTP: etcd answers on loopback without TLS.
async fn etcd_health(port: u16) -> std::io::Result<String> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream
        .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await?;
    let mut response = String::new();
    tokio::time::timeout(Duration::from_secs(2), stream.read_to_string(&mut response))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer in 2 s"))??;
    Ok(response)
}

fn free_ports() -> Result<[u16; 3], Error> {
    // Hold all three listeners at once so the kernel hands out three different ports.
    let listeners = (0..3)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::ControlPlane(format!("no free port on 127.0.0.1: {e}")))?;
    let port = |i: usize| {
        listeners[i]
            .local_addr()
            .map(|a| a.port())
            .unwrap_or_default()
    };
    Ok([port(0), port(1), port(2)])
}

/// A fresh directory named after this process, on tmpfs when there is one (etcd is
/// faster there), so a later run can recognise and remove what a killed run left.
fn make_dir() -> Result<PathBuf, Error> {
    let dir = base_dir().join(format!(
        "{DIR_PREFIX}{}-{}",
        std::process::id(),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    fs::create_dir_all(dir.join("apiserver"))
        .map_err(|e| Error::ControlPlane(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}

fn base_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if std::env::var_os("RKB_ENVTEST_DIR").is_none() && shm.is_dir() && tempfile_probe(shm) {
        return shm.to_path_buf();
    }
    std::env::var_os("RKB_ENVTEST_DIR").map_or_else(std::env::temp_dir, PathBuf::from)
}

fn tempfile_probe(dir: &Path) -> bool {
    let probe = dir.join(format!("{DIR_PREFIX}probe-{}", std::process::id()));
    let ok = fs::create_dir(&probe).is_ok();
    let _ = fs::remove_dir(&probe);
    ok
}

/// Removes directories of earlier test binaries that no longer run (killed before
/// they could clean up).
fn remove_stale_dirs() {
    let Ok(entries) = fs::read_dir(base_dir()) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(DIR_PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn write_files(dir: &Path, certs: &Certificates) -> Result<(), Error> {
    let files = [
        ("serving-ca.crt", &certs.serving_ca),
        ("serving.crt", &certs.serving_cert),
        ("serving.key", &certs.serving_key),
        ("client-ca.crt", &certs.client_ca),
        ("admin.crt", &certs.admin_cert),
        ("admin.key", &certs.admin_key),
        ("service-account.key", &certs.service_account_key),
        ("service-account.pub", &certs.service_account_public_key),
    ];
    for (name, contents) in files {
        write(&dir.join(name), contents)?;
    }
    Ok(())
}

fn write_kubeconfig(dir: &Path, port: u16) -> Result<(), Error> {
    let file = |name: &str| dir.join(name).display().to_string();
    let kubeconfig = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "envtest", "cluster": {
            "server": format!("https://127.0.0.1:{port}"),
            "certificate-authority": file("serving-ca.crt"),
        }}],
        "users": [{"name": "envtest-admin", "user": {
            "client-certificate": file("admin.crt"),
            "client-key": file("admin.key"),
        }}],
        "contexts": [{"name": "envtest", "context": {"cluster": "envtest", "user": "envtest-admin", "namespace": "default"}}],
        "current-context": "envtest",
    });
    write(&dir.join("kubeconfig"), &kubeconfig.to_string())
}

fn write(path: &Path, contents: &str) -> Result<(), Error> {
    fs::write(path, contents)
        .map_err(|e| Error::ControlPlane(format!("cannot write {}: {e}", path.display())))
}

fn tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| format!("(cannot read: {e})"));
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
