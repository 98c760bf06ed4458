//! What the probe, metrics and webhook servers share: the HTTP server, its TLS and where
//! it listens. Below both the manager and the webhook server, so neither imports the other
//! for it (as controller-runtime's pkg/webhook never imports pkg/manager).

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub(crate) mod server;
pub(crate) mod tls;

/// controller-runtime's default certificate directory (kubebuilder mounts the
/// cert-manager Secret there).
pub const DEFAULT_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

/// Where a server listens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    /// `:port`, as Go's `net.Listen` reads it: every interface, IPv6 and IPv4 (`[::]`,
    /// dual-stack), or IPv4 only (`0.0.0.0`) where the host has no IPv6.
    AnyInterface(u16),
    /// An address given in full, e.g. `127.0.0.1:8080` or `[::]:8443`: used exactly.
    Exact(SocketAddr),
}

impl From<SocketAddr> for ListenAddr {
    fn from(addr: SocketAddr) -> Self {
        Self::Exact(addr)
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AnyInterface(port) => write!(f, ":{port}"),
            Self::Exact(addr) => addr.fmt(f),
        }
    }
}

/// A server's certificate and key (PEM files): the webhook server's or the metrics server's.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    /// The files `cert` and `key` in `dir`.
    pub fn new(dir: &Path, cert: &str, key: &str) -> Self {
        Self {
            cert: dir.join(cert),
            key: dir.join(key),
        }
    }

    /// `tls.crt` and `tls.key` in `dir`, as a cert-manager Secret mounts them.
    pub fn in_dir(dir: &Path) -> Self {
        Self::new(dir, "tls.crt", "tls.key")
    }
}
