//! The end-to-end harness behind generated projects' `tests/e2e.rs` (`make test-e2e`):
//! after the image is built and the operator deployed to the cluster of the current
//! KUBECONFIG, the manager must become Ready, reconcile every sample in config/samples and
//! serve its metrics to a scraper it authorizes. Without a reachable cluster,
//! [`Deployed::connect`] says so and the test passes as skipped.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, ListParams, LogParams, PostParams};
use kube::runtime::wait::{Condition, await_condition};
use kube::{Api, Client};

/// How long the manager may take to become Ready, and the samples to be reconciled:
/// generous, as the image may still be pulled and the leader elected.
pub const TIMEOUT: Duration = Duration::from_secs(180);

/// The image of the pod that scrapes the manager's metrics (curl, as kubebuilder's e2e test).
pub const CURL_IMAGE: &str = "curlimages/curl:8.11.1";
/// A metric every manager exports once a controller has run.
const RECONCILE_METRIC: &str = "controller_runtime_reconcile_total";

/// An operator as `make deploy` installs it: the `<project>-controller-manager`
/// Deployment in the `<project>-system` namespace.
#[derive(Clone)]
pub struct Deployed {
    client: Client,
    project_dir: PathBuf,
    project: String,
    namespace: String,
    deployment: String,
}

impl std::fmt::Debug for Deployed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deployed")
            .field("project_dir", &self.project_dir)
            .field("namespace", &self.namespace)
            .field("deployment", &self.deployment)
            .finish_non_exhaustive()
    }
}

impl Deployed {
    /// The deployed `project` (whose root is `project_dir`, for `kubectl -k`), or `None`
    /// with a note on stderr when no cluster is configured or reachable.
    pub async fn connect(project_dir: impl Into<PathBuf>, project: &str) -> Option<Self> {
        let client = match Client::try_default().await {
            Ok(client) => client,
            Err(error) => {
                eprintln!("e2e: skipped: no Kubernetes client configuration ({error})");
                return None;
            }
        };
        match tokio::time::timeout(Duration::from_secs(10), client.apiserver_version()).await {
            Ok(Ok(_)) => Some(Deployed {
                client,
                project_dir: project_dir.into(),
                project: project.to_owned(),
                namespace: format!("{project}-system"),
                deployment: format!("{project}-controller-manager"),
            }),
            _ => {
                eprintln!("e2e: skipped: the cluster of the current KUBECONFIG is not reachable");
                None
            }
        }
    }

    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// The whole check of a scaffolded operator: the manager becomes Ready, every sample
    /// is reconciled, and the samples are deleted again.
    pub async fn check_ready_and_samples_reconciled(&self) {
        self.wait_ready().await;
        let samples = self.apply_samples();
        self.wait_reconciled(&samples).await;
        self.delete_samples();
    }

    /// Scrapes the manager's metrics as Prometheus would, and returns them: a pod in the
    /// operator's namespace runs curl with the token of a ServiceAccount bound to the
    /// `<project>-metrics-reader` ClusterRole against the metrics Service (HTTPS, port 8443;
    /// the certificate is not checked, as it may be self-signed). Panics unless the manager
    /// authorizes the scrape and the metrics include `controller_runtime_reconcile_total`.
    pub async fn check_metrics_served(&self) -> String {
        // A name of its own for each run, so that what a failed run left is in no one's way.
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs()
            % 100_000;
        let name = format!("{}-metrics-e2e-{run}", self.project);
        let scraper = Scraper::new(self, &name);
        scraper.create().await;
        let scraped = scraper.scrape().await;
        scraper.delete().await;
        assert!(
            scraped.contains(RECONCILE_METRIC),
            "the manager's metrics lack {RECONCILE_METRIC}:\n{scraped}"
        );
        scraped
    }

    /// Waits (up to [`TIMEOUT`]) until the manager's Deployment has a ready replica.
    pub async fn wait_ready(&self) {
        let deployments = Api::<Deployment>::namespaced(self.client(), &self.namespace);
        let (namespace, deployment) = (&self.namespace, &self.deployment);
        tokio::time::timeout(
            TIMEOUT,
            await_condition(deployments, deployment, available()),
        )
        .await
        .unwrap_or_else(|_| panic!("{namespace}/{deployment} not Ready within {TIMEOUT:?}"))
        .expect("the Deployment can be watched");
    }

    /// Applies config/samples and returns the names of the samples (none, with a note,
    /// before the first `rkb create api`).
    pub fn apply_samples(&self) -> Vec<String> {
        if self
            .kubectl(&["kustomize", "config/samples"])
            .trim()
            .is_empty()
        {
            eprintln!("e2e: no samples yet (add an API with `rkb create api`)");
            return Vec::new();
        }
        // `-o name` prints `<kind>.<group>/<name>` for each sample.
        self.kubectl(&["apply", "-k", "config/samples", "-o", "name"])
            .lines()
            .filter_map(|line| line.split_once('/').map(|(_, name)| name.to_owned()))
            .collect()
    }

    /// Waits (up to [`TIMEOUT`]) until the manager logged "reconciled" for every one of
    /// `samples`, as the scaffolded reconciler does; the leader's pod is the one that does.
    pub async fn wait_reconciled(&self, samples: &[String]) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let logs = self.manager_logs().await;
            let pending: Vec<&String> = samples
                .iter()
                .filter(|name| {
                    !logs
                        .lines()
                        .any(|l| l.contains("reconciled") && l.contains(name.as_str()))
                })
                .collect();
            if pending.is_empty() {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "not reconciled within {TIMEOUT:?}: {pending:?}\n{logs}"
            );
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }

    /// The logs of every manager pod, concatenated.
    pub async fn manager_logs(&self) -> String {
        let pods = Api::<Pod>::namespaced(self.client(), &self.namespace);
        let selector = ListParams::default().labels("control-plane=controller-manager");
        let mut logs = String::new();
        for pod in pods.list(&selector).await.expect("pods can be listed") {
            let name = pod.metadata.name.unwrap_or_default();
            logs += &pods
                .logs(&name, &LogParams::default())
                .await
                .unwrap_or_default();
        }
        logs
    }

    pub fn delete_samples(&self) {
        self.kubectl(&["delete", "--ignore-not-found", "-k", "config/samples"]);
    }

    /// Runs `$KUBECTL` (default `kubectl`) in the project root; panics unless it succeeds.
    pub fn kubectl(&self, args: &[&str]) -> String {
        let output = Command::new(std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".into()))
            .args(args)
            .current_dir(&self.project_dir)
            .output()
            .expect("kubectl runs");
        assert!(
            output.status.success(),
            "kubectl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

/// What [`Deployed::check_metrics_served`] creates, under one name: a ServiceAccount, its
/// binding to the metrics-reader ClusterRole, and the curl pod.
struct Scraper<'a> {
    operator: &'a Deployed,
    name: String,
}

impl<'a> Scraper<'a> {
    fn new(operator: &'a Deployed, name: &str) -> Self {
        Scraper {
            operator,
            name: name.to_owned(),
        }
    }

    async fn create(&self) {
        use k8s_openapi::api::core::v1::ServiceAccount;
        use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
        let (client, namespace, name) =
            (self.operator.client(), &self.operator.namespace, &self.name);
        let accounts = Api::<ServiceAccount>::namespaced(client.clone(), namespace);
        let account = serde_json::from_value(serde_json::json!({
            "metadata": { "name": name, "namespace": namespace }
        }))
        .expect("a ServiceAccount");
        accounts
            .create(&PostParams::default(), &account)
            .await
            .expect("the scraper's ServiceAccount can be created");
        let binding = serde_json::from_value(serde_json::json!({
            "metadata": { "name": name },
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": format!("{}-metrics-reader", self.operator.project),
            },
            "subjects": [{ "kind": "ServiceAccount", "name": name, "namespace": namespace }]
        }))
        .expect("a ClusterRoleBinding");
        Api::<ClusterRoleBinding>::all(client)
            .create(&PostParams::default(), &binding)
            .await
            .expect("the scraper's ClusterRoleBinding can be created");
    }

    /// Runs the curl pod to its end and returns what it printed.
    async fn scrape(&self) -> String {
        let (namespace, name) = (&self.operator.namespace, &self.name);
        let token = self
            .operator
            .kubectl(&["create", "token", name, "--namespace", namespace]);
        let url = format!(
            "https://{}-controller-manager-metrics-service.{namespace}.svc:8443/metrics",
            self.operator.project
        );
        // The operator's namespace enforces the restricted Pod Security Standard.
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": { "name": name, "namespace": namespace },
            "spec": {
                "restartPolicy": "Never",
                "serviceAccountName": name,
                "securityContext": {
                    "runAsNonRoot": true,
                    "seccompProfile": { "type": "RuntimeDefault" }
                },
                "containers": [{
                    "name": "curl",
                    "image": CURL_IMAGE,
                    "args": ["--silent", "--show-error", "--fail", "--insecure",
                             "--header", format!("Authorization: Bearer {}", token.trim()), url],
                    "securityContext": {
                        "allowPrivilegeEscalation": false,
                        "capabilities": { "drop": ["ALL"] },
                        "readOnlyRootFilesystem": true,
                        "runAsUser": 1000
                    }
                }]
            }
        }))
        .expect("a Pod");
        let pods = Api::<Pod>::namespaced(self.operator.client(), namespace);
        pods.create(&PostParams::default(), &pod)
            .await
            .expect("the curl pod can be created");
        let finished = |pod: Option<&Pod>| {
            pod.and_then(|p| p.status.as_ref())
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|phase| phase == "Succeeded" || phase == "Failed")
        };
        tokio::time::timeout(TIMEOUT, await_condition(pods.clone(), name, finished))
            .await
            .unwrap_or_else(|_| {
                panic!("the curl pod {namespace}/{name} did not finish within {TIMEOUT:?}")
            })
            .expect("the curl pod can be watched");
        let printed = pods
            .logs(name, &LogParams::default())
            .await
            .expect("the curl pod's logs can be read");
        let phase = pods
            .get(name)
            .await
            .ok()
            .and_then(|p| p.status?.phase)
            .unwrap_or_default();
        assert_eq!(phase, "Succeeded", "scraping {url} failed:\n{printed}");
        printed
    }

    async fn delete(&self) {
        use k8s_openapi::api::core::v1::ServiceAccount;
        use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
        let (client, namespace, name) =
            (self.operator.client(), &self.operator.namespace, &self.name);
        let params = DeleteParams::default();
        // Best effort: what is left after a failure is named after the project and the run.
        let _ = Api::<Pod>::namespaced(client.clone(), namespace)
            .delete(name, &params)
            .await;
        let _ = Api::<ClusterRoleBinding>::all(client.clone())
            .delete(name, &params)
            .await;
        let _ = Api::<ServiceAccount>::namespaced(client, namespace)
            .delete(name, &params)
            .await;
    }
}

fn available() -> impl Condition<Deployment> {
    |deployment: Option<&Deployment>| {
        deployment
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.ready_replicas)
            .is_some_and(|ready| ready >= 1)
    }
}
