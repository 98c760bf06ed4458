//! Fault injection: conflicts (409), server errors (500), timeouts, and responses lost
//! after the request was applied, on chosen requests, to prove a reconciler converges
//! anyway ([`Faults`]). The requests reach it through [`crate::wrap`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{Access, lock};

/// What a [`Fault`] does to the request it hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// 409 Conflict, as for a stale resourceVersion.
    Conflict,
    /// 500 Internal Server Error.
    ServerError,
    /// The request never reaches the API server: after the delay the client sees a
    /// timeout error.
    Timeout(Duration),
    /// The request reaches the API server and is applied, but its response is lost: after
    /// the delay the client sees a timeout error. A reconciler that retries a create
    /// then meets its own object (409 AlreadyExists); one that counts on a timeout meaning
    /// "not done" creates twice what has a generated name.
    ResponseLost(Duration),
}

/// A fault on the requests matching its filters, for its first `times` matches.
#[derive(Clone, Debug)]
pub struct Fault {
    kind: FaultKind,
    verb: Option<String>,
    resource: Option<String>,
    times: usize,
}

impl Fault {
    pub fn conflict() -> Self {
        Self::new(FaultKind::Conflict)
    }
    pub fn server_error() -> Self {
        Self::new(FaultKind::ServerError)
    }
    pub fn timeout(after: Duration) -> Self {
        Self::new(FaultKind::Timeout(after))
    }
    /// The request is applied, then its response is lost ([`FaultKind::ResponseLost`]).
    pub fn response_lost(after: Duration) -> Self {
        Self::new(FaultKind::ResponseLost(after))
    }
    fn new(kind: FaultKind) -> Self {
        Fault {
            kind,
            verb: None,
            resource: None,
            times: 1,
        }
    }
    /// Only requests with this verb (`get`, `create`, `update`, `patch`, ...).
    pub fn on_verb(mut self, verb: &str) -> Self {
        self.verb = Some(verb.into());
        self
    }
    /// Only requests on this resource (`deployments`, `memcacheds/status`).
    pub fn on_resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.into());
        self
    }
    /// How many matching requests fail (default 1).
    pub fn times(mut self, times: usize) -> Self {
        self.times = times;
        self
    }
    fn matches(&self, access: &Access) -> bool {
        self.times > 0
            && self.verb.as_deref().is_none_or(|v| v == access.verb)
            && self
                .resource
                .as_deref()
                .is_none_or(|r| r == access.resource)
    }
}

/// A plan of faults, shared by every clone of the wrapped client.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    plan: Arc<Mutex<Vec<Fault>>>,
    injected: Arc<Mutex<Vec<(FaultKind, Access)>>>,
}

impl Faults {
    pub fn fail(self, fault: Fault) -> Self {
        lock(&self.plan).push(fault);
        self
    }

    /// Faults injected so far, with the request each hit.
    pub fn injected(&self) -> Vec<(FaultKind, Access)> {
        lock(&self.injected).clone()
    }

    pub(crate) fn take(&self, access: &Access) -> Option<FaultKind> {
        let mut plan = lock(&self.plan);
        let fault = plan.iter_mut().find(|f| f.matches(access))?;
        fault.times -= 1;
        let kind = fault.kind;
        lock(&self.injected).push((kind, access.clone()));
        Some(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac_audit::tests::access;

    #[test]
    fn faults_hit_matching_requests_the_planned_number_of_times() {
        let faults = Faults::default().fail(
            Fault::conflict()
                .on_verb("update")
                .on_resource("deployments")
                .times(2),
        );
        let update = access("PUT", "/apis/apps/v1/namespaces/a/deployments/web").unwrap();
        let get = access("GET", "/apis/apps/v1/namespaces/a/deployments/web").unwrap();
        assert_eq!(faults.take(&get), None);
        assert_eq!(faults.take(&update), Some(FaultKind::Conflict));
        assert_eq!(faults.take(&update), Some(FaultKind::Conflict));
        assert_eq!(faults.take(&update), None);
        assert_eq!(faults.injected().len(), 2);
    }
}
