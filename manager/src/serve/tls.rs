//! The metrics and webhook servers' TLS: a certificate from files (reloaded when they change, e.g.
//! after cert-manager renews them) or a self-signed one generated at start.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;

use super::{HttpVersions, TlsFiles};
use crate::sync::{lock, read, write};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::crypto::{CryptoProvider, ring};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::{ServerConfig, version};

/// How often certificate files are checked for changes.
const RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// A TLS acceptor serving the files `cert` and `key` (PEM), reloaded when they change, or,
/// without files, a certificate generated now for `hosts`. The returned future keeps
/// reloading the files and must be polled for as long as the server runs.
pub(crate) fn acceptor(
    files: Option<TlsFiles>,
    hosts: &[&str],
    what: &'static str,
    versions: HttpVersions,
) -> anyhow::Result<(TlsAcceptor, Option<impl Future<Output = ()> + use<>>)> {
    let provider = Arc::new(ring::default_provider());
    let (resolver, reload) = match files {
        Some(TlsFiles { cert, key }) => {
            let watched = Arc::new(WatchedCert::load(cert, key, provider.clone(), what)?);
            let reload = {
                let watched = watched.clone();
                async move {
                    let mut ticks = tokio::time::interval(RELOAD_INTERVAL);
                    loop {
                        ticks.tick().await;
                        watched.reload_if_changed();
                    }
                }
            };
            (watched as Arc<dyn ResolvesServerCert>, Some(reload))
        }
        None => (
            Arc::new(Fixed(Arc::new(self_signed(hosts, &provider)?)))
                as Arc<dyn ResolvesServerCert>,
            None,
        ),
    };
    Ok((acceptor_with(resolver, provider, versions)?, reload))
}

/// A TLS acceptor serving what `resolver` holds at each handshake.
pub(crate) fn acceptor_with(
    resolver: Arc<dyn ResolvesServerCert>,
    provider: Arc<CryptoProvider>,
    versions: HttpVersions,
) -> anyhow::Result<TlsAcceptor> {
    // TLS 1.2 and 1.3 only; rustls offers no weak cipher suites.
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&version::TLS13, &version::TLS12])?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = versions.alpn();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A certificate set from outside (the manager's own, from its Secret), swapped while the
/// server runs; until the first one, handshakes fail.
#[derive(Default)]
pub(crate) struct Swappable {
    current: RwLock<Option<Arc<CertifiedKey>>>,
}

impl fmt::Debug for Swappable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Swappable")
            .field("loaded", &read(&self.current).is_some())
            .finish()
    }
}

impl Swappable {
    /// Serves `cert` and `key` (PEM) from the next handshake on; `Ok(false)` when they are
    /// what is served already. An unusable pair is refused, and the previous one kept.
    pub(crate) fn set_pem(&self, cert: &[u8], key: &[u8]) -> anyhow::Result<bool> {
        let chain = CertificateDer::pem_slice_iter(cert)
            .collect::<Result<Vec<_>, _>>()
            .context("the certificate is not PEM")?;
        if read(&self.current)
            .as_ref()
            .is_some_and(|current| current.cert == chain)
        {
            return Ok(false);
        }
        let private = PrivateKeyDer::from_pem_slice(key).context("the key is not PEM")?;
        let loaded = CertifiedKey::from_der(chain, private, &ring::default_provider())
            .context("the certificate and key do not form a usable pair")?;
        *write(&self.current) = Some(Arc::new(loaded));
        Ok(true)
    }
}

impl ResolvesServerCert for Swappable {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        read(&self.current).clone()
    }
}

/// A self-signed certificate, as controller-runtime generates when given none. Scrapers
/// either skip verification (kubebuilder's ServiceMonitor does) or are given a real one.
fn self_signed(hosts: &[&str], provider: &CryptoProvider) -> anyhow::Result<CertifiedKey> {
    let generated = generate(hosts)
        .context("cannot generate a self-signed certificate for the metrics server")?;
    let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    Ok(CertifiedKey::from_der(
        vec![generated.cert.der().clone()],
        key,
        provider,
    )?)
}

/// Valid from an hour ago (clock skew between nodes) for a year: rcgen's default,
/// 1975 to 4096, would make a leaked key good forever.
fn generate(hosts: &[&str]) -> anyhow::Result<rcgen::CertifiedKey<rcgen::KeyPair>> {
    const HOUR: Duration = Duration::from_secs(3600);
    const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);
    let names: Vec<String> = hosts.iter().map(|h| (*h).to_owned()).collect();
    let mut params = rcgen::CertificateParams::new(names)?;
    let since_epoch = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)?
        .saturating_sub(HOUR);
    params.not_before = rcgen::date_time_ymd(1970, 1, 1) + since_epoch;
    params.not_after = params.not_before + YEAR;
    let signing_key = rcgen::KeyPair::generate()?;
    let cert = params.self_signed(&signing_key)?;
    Ok(rcgen::CertifiedKey { cert, signing_key })
}

fn load(cert: &Path, key: &Path, provider: &CryptoProvider) -> anyhow::Result<CertifiedKey> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("cannot read the certificate {}", cert.display()))?;
    let private = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("cannot read the private key {}", key.display()))?;
    CertifiedKey::from_der(chain, private, provider).with_context(|| {
        format!(
            "{} and {} do not form a usable key pair",
            cert.display(),
            key.display()
        )
    })
}

#[derive(Debug)]
struct Fixed(Arc<CertifiedKey>);

impl ResolvesServerCert for Fixed {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// Certificate files, reloaded when their modification time changes.
struct WatchedCert {
    cert: PathBuf,
    key: PathBuf,
    provider: Arc<CryptoProvider>,
    /// The server, for the logs: "metrics" or "webhook".
    what: &'static str,
    current: RwLock<Arc<CertifiedKey>>,
    modified: Mutex<Option<SystemTime>>,
}

impl fmt::Debug for WatchedCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchedCert")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl WatchedCert {
    fn load(
        cert: PathBuf,
        key: PathBuf,
        provider: Arc<CryptoProvider>,
        what: &'static str,
    ) -> anyhow::Result<Self> {
        let modified = last_modified(&cert, &key);
        let current = load(&cert, &key, &provider)?;
        Ok(Self {
            cert,
            key,
            provider,
            what,
            current: RwLock::new(Arc::new(current)),
            modified: Mutex::new(modified),
        })
    }

    fn reload_if_changed(&self) {
        let modified = last_modified(&self.cert, &self.key);
        let mut seen = lock(&self.modified);
        if modified == *seen {
            return;
        }
        // Keep serving the old pair while a half-written update is in progress.
        match load(&self.cert, &self.key, &self.provider) {
            Ok(loaded) => {
                *write(&self.current) = Arc::new(loaded);
                *seen = modified;
                tracing::info!(cert = %self.cert.display(), server = self.what, "reloaded the certificate");
            }
            Err(error) => tracing::warn!(
                error = format!("{error:#}"),
                server = self.what,
                "keeping the previous certificate"
            ),
        }
    }
}

impl ResolvesServerCert for WatchedCert {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(read(&self.current).clone())
    }
}

/// The later modification time of the two files (Secret volumes swap a symlink, which
/// changes both).
fn last_modified(cert: &Path, key: &Path) -> Option<SystemTime> {
    let time = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    time(cert).max(time(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_certificate_is_generated_without_files() {
        let (_, reload) = acceptor(None, &["localhost"], "metrics", HttpVersions::Http1).unwrap();
        assert!(reload.is_none());
    }

    #[test]
    fn the_self_signed_certificate_is_valid_from_an_hour_ago_for_a_year() {
        use x509_parser::prelude::{FromDer, X509Certificate};

        let generated = generate(&["localhost"]).unwrap();
        let (_, cert) = X509Certificate::from_der(generated.cert.der()).unwrap();
        let validity = cert.validity();
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let hour = 3600;
        let not_before = validity.not_before.timestamp();
        assert!(
            (now - hour - 60..=now - hour).contains(&not_before),
            "valid from an hour ago, not {}",
            validity.not_before
        );
        assert_eq!(
            validity.not_after.timestamp() - not_before,
            365 * 24 * hour,
            "valid for a year, until {}",
            validity.not_after
        );
    }

    #[test]
    fn certificate_files_are_loaded_and_reloaded_when_they_change() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let write = |name: &str| {
            let generated = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
            std::fs::write(&cert, generated.cert.pem()).unwrap();
            std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
            generated.cert.der().to_vec()
        };
        let first = write("first");
        let provider = Arc::new(ring::default_provider());
        let watched = WatchedCert::load(cert.clone(), key.clone(), provider, "metrics").unwrap();
        let served = || watched.current.read().unwrap().cert[0].to_vec();
        assert_eq!(served(), first);

        std::fs::write(&key, "not a key").unwrap();
        watched.reload_if_changed();
        assert_eq!(served(), first, "a broken update keeps the previous pair");

        // Make sure the modification time moves even on coarse-grained file systems.
        std::thread::sleep(Duration::from_millis(20));
        let second = write("second");
        watched.reload_if_changed();
        assert_eq!(served(), second);
    }

    #[test]
    fn missing_files_fail_with_their_path() {
        let error = acceptor(
            Some(TlsFiles::in_dir(Path::new("/nonexistent"))),
            &[],
            "metrics",
            HttpVersions::Http1,
        )
        .err()
        .unwrap();
        assert!(
            format!("{error:#}").contains("/nonexistent/tls.crt"),
            "{error:#}"
        );
    }
}
