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

/// The HTTP versions a TLS server offers its clients (by ALPN). HTTP/1.1 always; HTTP/2 only
/// when asked for (`--enable-http2`, rkb-runtime's `http2` feature), as in controller-runtime,
/// which turned it off by default after the HTTP/2 rapid-reset and stream-cancellation CVEs.
/// Plain-text servers (the probes, metrics with `--metrics-secure=false`) speak HTTP/1.1, and
/// so does every server of a build without the feature.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpVersions {
    #[default]
    Http1,
    Http1AndHttp2,
}

impl HttpVersions {
    /// `--enable-http2`'s value, refused when this build cannot serve HTTP/2.
    pub fn from_flag(enable_http2: bool) -> anyhow::Result<Self> {
        match enable_http2 {
            false => Ok(Self::Http1),
            true if cfg!(feature = "http2") => Ok(Self::Http1AndHttp2),
            true => anyhow::bail!(
                "--enable-http2: this operator was built without HTTP/2.\n  \
                 Turn on rkb-runtime's `http2` feature in its Cargo.toml, e.g.:  \
                 rkb-runtime = {{ version = \"0.2\", features = [\"http2\"] }}"
            ),
        }
    }

    /// The protocols offered in the TLS handshake, preferred first; HTTP/2 only where this
    /// build can serve it.
    fn alpn(self) -> Vec<Vec<u8>> {
        match self {
            Self::Http1AndHttp2 if cfg!(feature = "http2") => {
                vec![b"h2".to_vec(), b"http/1.1".to_vec()]
            }
            _ => vec![b"http/1.1".to_vec()],
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
