use std::fmt;

/// What went wrong starting or using the test control plane. `Debug` prints the same
/// text as `Display`, so `unwrap()` in a test shows a readable message.
#[derive(thiserror::Error)]
pub enum Error {
    /// The kube-apiserver or etcd binary was not found.
    #[error("{0}")]
    Assets(String),
    /// A process did not start or did not become ready.
    #[error("the envtest control plane did not start: {0}")]
    ControlPlane(String),
    /// kube-controller-manager, asked for by a test, is missing or did not start (the
    /// message of the first attempt, which the test binary's later requests repeat).
    #[error("{0}")]
    ControllerManager(String),
    /// `USE_EXISTING_CLUSTER=true`, but no cluster configuration was found.
    #[error("USE_EXISTING_CLUSTER=true, but no cluster is configured: {0}")]
    ExistingCluster(String),
    /// A request to the API server failed.
    #[error("cannot {action}: {source}")]
    Request {
        action: String,
        #[source]
        source: Box<kube::Error>,
    },
    /// The API server answered something unexpected, or an object did not get ready in time.
    #[error("{0}")]
    Response(String),
    /// Objects given to apply could not be read.
    #[error("invalid objects to apply: {0}")]
    Objects(String),
    /// kubectl (kustomize) failed or is missing.
    #[error("{0}")]
    Kubectl(String),
}

impl Error {
    pub(crate) fn request(action: impl Into<String>, source: kube::Error) -> Self {
        Self::Request {
            action: action.into(),
            source: Box::new(source),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
