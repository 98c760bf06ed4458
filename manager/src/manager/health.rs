//! `/healthz` and `/readyz`.
//!
//! Liveness only says the process serves requests: restarting a manager whose controllers
//! are slow to sync would not help. Readiness waits for every started controller's cache
//! (its reflector store) to finish the initial list, like controller-runtime's cache sync.
//! A standby replica waiting for the lease has no controllers yet and is ready: otherwise a
//! rolling update of a one-replica Deployment would wait forever for the new pod, which
//! cannot lead while the old one holds the lease.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use http::{Method, StatusCode};

use super::server::{Response, text};

/// The readiness checks of a manager: one per started controller.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    checks: Arc<Mutex<BTreeMap<String, bool>>>,
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
        let name = name.into();
        self.lock().insert(name.clone(), false);
        Check {
            name,
            readiness: self.clone(),
        }
    }

    /// Whether every check passes.
    pub fn is_ready(&self) -> bool {
        self.lock().values().all(|&ok| ok)
    }

    /// Each check as Kubernetes' own `/readyz?verbose` prints it, then the verdict.
    fn report(&self) -> (bool, String) {
        let checks = self.lock();
        let mut body = String::new();
        for (name, ok) in checks.iter() {
            let _ = writeln!(
                body,
                "[{}]{name} {}",
                if *ok { '+' } else { '-' },
                if *ok { "ok" } else { "not synced" }
            );
        }
        let ready = checks.values().all(|&ok| ok);
        body.push_str(if ready {
            "readyz check passed\n"
        } else {
            "readyz check failed\n"
        });
        (ready, body)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, bool>> {
        self.checks
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Check {
    /// Marks the check as passing.
    pub fn pass(&self) {
        self.readiness.lock().insert(self.name.clone(), true);
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
