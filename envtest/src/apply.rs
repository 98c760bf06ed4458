//! Putting objects into the test API server: CRDs (waited for until they are served),
//! YAML documents and kustomize builds, by server-side apply.

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::{self, Scope};
use kube::{Api, Client, ResourceExt};

use crate::{Environment, Error};

/// How long a CRD may take to become Established and appear in discovery.
const CRD_TIMEOUT: Duration = Duration::from_secs(30);

/// Server-side apply of objects, made with [`Environment::apply`]. Namespaces and CRDs
/// go first, and CRDs are waited for until every served version is in discovery, so
/// objects of those kinds can follow in the same call.
#[must_use = "nothing is applied until an async method is awaited"]
pub struct Apply<'a> {
    env: &'a Environment,
    client: Option<Client>,
    namespace: Option<String>,
    field_manager: String,
    dry_run: bool,
}

impl std::fmt::Debug for Apply<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apply")
            .field("as_admin", &self.client.is_none())
            .field("namespace", &self.namespace)
            .field("field_manager", &self.field_manager)
            .field("dry_run", &self.dry_run)
            .finish()
    }
}

impl<'a> Apply<'a> {
    pub(crate) fn new(env: &'a Environment) -> Self {
        Self {
            env,
            client: None,
            namespace: None,
            field_manager: "rkb-envtest".into(),
            dry_run: false,
        }
    }

    /// The namespace for namespaced objects that name none.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Apply as another identity (e.g. a ServiceAccount client) instead of the admin.
    pub fn as_client(mut self, client: Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The field manager to apply with (`rkb-envtest` by default).
    pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
        self.field_manager = manager.into();
        self
    }

    /// Server-side dry run: every object goes through validation and admission, and
    /// nothing is stored.
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// Applies CRDs and waits until each is Established and its served versions are
    /// in discovery.
    pub async fn crds(
        self,
        crds: impl IntoIterator<Item = CustomResourceDefinition>,
    ) -> Result<(), Error> {
        let objects = crds
            .into_iter()
            .map(|crd| {
                serde_json::to_value(&crd)
                    .and_then(serde_json::from_value)
                    .map_err(|e| Error::Objects(format!("CRD {}: {e}", crd.name_any())))
            })
            .collect::<Result<Vec<DynamicObject>, _>>()?;
        self.objects(objects).await.map(drop)
    }

    /// Applies every object of a (multi-document) YAML text.
    pub async fn yaml(self, yaml: &str) -> Result<Vec<DynamicObject>, Error> {
        let objects = parse_yaml(yaml)?;
        self.objects(objects).await
    }

    /// Applies the YAML files given, in order.
    pub async fn files(
        self,
        paths: impl IntoIterator<Item = impl AsRef<Path>>,
    ) -> Result<Vec<DynamicObject>, Error> {
        let mut objects = Vec::new();
        for path in paths {
            let path = path.as_ref();
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::Objects(format!("cannot read {}: {e}", path.display())))?;
            objects.extend(
                parse_yaml(&text)
                    .map_err(|e| Error::Objects(format!("{}: {e}", path.display())))?,
            );
        }
        self.objects(objects).await
    }

    /// Applies what `kubectl kustomize <dir>` builds.
    pub async fn kustomization(self, dir: &Path) -> Result<Vec<DynamicObject>, Error> {
        let yaml = kustomize(dir)?;
        self.yaml(&yaml).await
    }

    /// Applies objects; returns them as the API server stored them (or would have).
    /// Every object is tried, and the error lists each that failed.
    pub async fn objects(
        self,
        mut objects: Vec<DynamicObject>,
    ) -> Result<Vec<DynamicObject>, Error> {
        let client = self.client.clone().unwrap_or_else(|| self.env.client());
        objects.sort_by_key(|object| match kind_of(object) {
            "Namespace" => 0,
            "CustomResourceDefinition" => 1,
            _ => 2,
        });
        let mut params = PatchParams::apply(&self.field_manager).force();
        params.dry_run = self.dry_run;
        let mut applied = Vec::new();
        let mut failures = Vec::new();
        let mut waited_for_crds = false;
        for object in &objects {
            if !waited_for_crds
                && kind_of(object) != "Namespace"
                && kind_of(object) != "CustomResourceDefinition"
            {
                waited_for_crds = true;
                if !self.dry_run {
                    wait_for_crds(&client, &applied).await?;
                }
            }
            match self.apply_one(&client, object, &params).await {
                Ok(stored) => applied.push(stored),
                Err(e) => failures.push(e.to_string()),
            }
        }
        if !waited_for_crds && !self.dry_run {
            wait_for_crds(&client, &applied).await?;
        }
        if failures.is_empty() {
            Ok(applied)
        } else {
            Err(Error::Response(format!(
                "{} of {} objects were refused:\n  {}",
                failures.len(),
                objects.len(),
                failures.join("\n  ")
            )))
        }
    }

    async fn apply_one(
        &self,
        client: &Client,
        object: &DynamicObject,
        params: &PatchParams,
    ) -> Result<DynamicObject, Error> {
        let what = describe(object);
        let types = object
            .types
            .as_ref()
            .ok_or_else(|| Error::Objects(format!("{what} has no apiVersion and kind")))?;
        let gvk = GroupVersionKind::try_from(types)
            .map_err(|e| Error::Objects(format!("{what}: {e}")))?;
        let (resource, capabilities) = discovery::pinned_kind(client, &gvk).await.map_err(|e| {
            Error::request(
                format!(
                    "find {}/{} {} in discovery",
                    gvk.group, gvk.version, gvk.kind
                ),
                e,
            )
        })?;
        let api: Api<DynamicObject> = match capabilities.scope {
            Scope::Cluster => Api::all_with(client.clone(), &resource),
            Scope::Namespaced => {
                let namespace = object
                    .namespace()
                    .or_else(|| self.namespace.clone())
                    .unwrap_or_else(|| "default".into());
                Api::namespaced_with(client.clone(), &namespace, &resource)
            }
        };
        api.patch(&object.name_any(), params, &Patch::Apply(object))
            .await
            .map_err(|e| Error::request(format!("apply {what}"), e))
    }
}

pub(crate) fn kind_of(object: &DynamicObject) -> &str {
    object.types.as_ref().map_or("", |t| t.kind.as_str())
}

fn describe(object: &DynamicObject) -> String {
    match object.namespace() {
        Some(namespace) => format!("{} {namespace}/{}", kind_of(object), object.name_any()),
        None => format!("{} {}", kind_of(object), object.name_any()),
    }
}

/// Waits until every CRD among `applied` is Established and each served version of it
/// answers in discovery (the moment clients can use it).
async fn wait_for_crds(client: &Client, applied: &[DynamicObject]) -> Result<(), Error> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for object in applied
        .iter()
        .filter(|o| kind_of(o) == "CustomResourceDefinition")
    {
        let name = object.name_any();
        let deadline = Instant::now() + CRD_TIMEOUT;
        loop {
            let crd = crds
                .get(&name)
                .await
                .map_err(|e| Error::request(format!("read CRD {name}"), e))?;
            if is_served(client, &crd).await {
                break;
            }
            if Instant::now() >= deadline {
                let conditions = crd
                    .status
                    .and_then(|s| s.conditions)
                    .map(|c| format!("{c:?}"))
                    .unwrap_or_default();
                return Err(Error::Response(format!(
                    "CRD {name} was not established and served within {} s; conditions: {conditions}",
                    CRD_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

async fn is_served(client: &Client, crd: &CustomResourceDefinition) -> bool {
    let established = crd
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        });
    if !established {
        return false;
    }
    for version in crd.spec.versions.iter().filter(|v| v.served) {
        let gvk = GroupVersionKind::gvk(&crd.spec.group, &version.name, &crd.spec.names.kind);
        if discovery::pinned_kind(client, &gvk).await.is_err() {
            return false;
        }
    }
    true
}

/// Every object of a multi-document YAML text (empty documents skipped).
pub fn parse_yaml(yaml: &str) -> Result<Vec<DynamicObject>, Error> {
    use serde::Deserialize as _;
    let mut objects = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(yaml) {
        let value =
            serde_json::Value::deserialize(document).map_err(|e| Error::Objects(e.to_string()))?;
        if value.is_null() {
            continue;
        }
        let object: DynamicObject =
            serde_json::from_value(value).map_err(|e| Error::Objects(e.to_string()))?;
        objects.push(object);
    }
    Ok(objects)
}

/// `kubectl kustomize <dir>` (`KUBECTL` names the binary).
pub fn kustomize(dir: &Path) -> Result<String, Error> {
    let kubectl = crate::kubectl_binary();
    let output = std::process::Command::new(&kubectl)
        .arg("kustomize")
        .arg(dir)
        .output()
        .map_err(|e| {
            Error::Kubectl(format!(
                "cannot run {} to build {}: {e}; install kubectl (or set KUBECTL to its path)",
                kubectl.to_string_lossy(),
                dir.display()
            ))
        })?;
    if !output.status.success() {
        return Err(Error::Kubectl(format!(
            "kubectl kustomize {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    String::from_utf8(output.stdout)
        .map_err(|e| Error::Kubectl(format!("kubectl kustomize printed non-UTF-8: {e}")))
}
