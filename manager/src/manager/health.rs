//! `/healthz` and `/readyz`.
//!
//! Liveness only says the process serves requests: restarting a manager whose controllers
//! are slow to sync would not help. Readiness waits for every started controller's cache
//! (its reflector store) to finish the initial list, like controller-runtime's cache sync,
//! and fails while the last list or watch of any collection through the controller's
//! client failed: the watches of `.owns(...)` and `.watches(...)` have no store to ask,
//! and one that RBAC forbids would otherwise retry 403s forever behind a Ready pod.
//! A standby replica waiting for the lease has no controllers yet and is ready: otherwise a
//! rolling update of a one-replica Deployment would wait forever for the new pod, which
//! cannot lead while the old one holds the lease.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use http::{Method, StatusCode};

use super::reads::Reads;
use crate::serve::server::{Response, text};
use crate::sync::lock;

/// The readiness checks of a manager: one per started controller.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    checks: Arc<Mutex<BTreeMap<String, Status>>>,
}

/// One check's state: passed, and the reads that must not be failing.
#[derive(Clone, Debug, Default)]
struct Status {
    passed: bool,
    reads: Option<Reads>,
}

impl Status {
    fn ok(&self) -> bool {
        self.passed && self.reads.as_ref().is_none_or(Reads::healthy)
    }
}

/// One readiness check, failing until [`Check::pass`] is called.
#[derive(Clone, Debug)]
pub struct Check {
    name: String,
    readiness: Readiness,
}

impl Readiness {
    /// Adds a failing check.
    pub fn add(&self, name: impl Into<String>) -> Check {
        self.add_status(name.into(), Status::default())
    }

    /// Adds a check that fails until passed, and whenever a list or watch in `reads` fails.
    pub(crate) fn add_following(&self, name: impl Into<String>, reads: Reads) -> Check {
        let status = Status {
            passed: false,
            reads: Some(reads),
        };
        self.add_status(name.into(), status)
    }

    fn add_status(&self, name: String, status: Status) -> Check {
        lock(&self.checks).insert(name.clone(), status);
        Check {
            name,
            readiness: self.clone(),
        }
    }

    /// Whether every check passes.
    pub fn is_ready(&self) -> bool {
        lock(&self.checks).values().all(Status::ok)
    }

    /// Each check as Kubernetes' own `/readyz?verbose` prints it, then the verdict.
    fn report(&self) -> (bool, String) {
        let checks = lock(&self.checks);
        let mut body = String::new();
        for (name, status) in checks.iter() {
            let ok = &status.ok();
            let _ = writeln!(
                body,
                "[{}]{name} {}",
                if *ok { '+' } else { '-' },
                if *ok { "ok" } else { "not synced" }
            );
        }
        let ready = checks.values().all(Status::ok);
        body.push_str(if ready {
            "readyz check passed\n"
        } else {
            "readyz check failed\n"
        });
        (ready, body)
    }
}

impl Check {
    /// Marks the check as passing.
    pub fn pass(&self) {
        self.set(true);
    }

    /// Marks the check as failing again.
    pub fn fail(&self) {
        self.set(false);
    }

    fn set(&self, passed: bool) {
        if let Some(status) = lock(&self.readiness.checks).get_mut(&self.name) {
            status.passed = passed;
        }
    }
}

/// Answers a probe request.
pub(crate) fn respond(method: &Method, path: &str, readiness: &Readiness) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    }
    match path {
        "/healthz" | "/livez" => text(StatusCode::OK, "ok\n"),
        "/readyz" => {
            let (ready, body) = readiness.report();
            let status = if ready {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            text(status, body)
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: try /healthz or /readyz\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_waits_for_every_check() {
        let readiness = Readiness::default();
        let status = |path| respond(&Method::GET, path, &readiness).status();
        assert_eq!(
            status("/readyz"),
            StatusCode::OK,
            "no controllers (standby): ready"
        );
        let memcached = readiness.add("controller/memcached");
        let pods = readiness.add("controller/pod");
        assert_eq!(status("/readyz"), StatusCode::SERVICE_UNAVAILABLE);
        memcached.pass();
        assert_eq!(status("/readyz"), StatusCode::SERVICE_UNAVAILABLE);
        pods.pass();
        assert_eq!(status("/readyz"), StatusCode::OK);
        assert_eq!(status("/healthz"), StatusCode::OK);
        assert_eq!(status("/metrics"), StatusCode::NOT_FOUND);
    }

    #[test]
    fn the_report_names_the_failing_check() {
        let readiness = Readiness::default();
        readiness.add("controller/memcached");
        readiness.add("controller/pod").pass();
        let (ready, body) = readiness.report();
        assert!(!ready);
        assert_eq!(
            body,
            "[-]controller/memcached not synced\n[+]controller/pod ok\nreadyz check failed\n"
        );
    }
}
