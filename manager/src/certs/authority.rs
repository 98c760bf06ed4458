//! What the certificate Secret holds, judged, and the next state of it: the CA (its key and
//! the bundle of CAs the API server trusts) and the serving certificate. No I/O: the
//! leader reads the Secret, asks [`next`] what it should hold, and writes that.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use k8s_openapi::ByteString;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PublicKeyData,
};
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

/// The keys of the Secret: a `kubernetes.io/tls` Secret's two, and the CA's.
pub(crate) const TLS_CERT: &str = "tls.crt";
pub(crate) const TLS_KEY: &str = "tls.key";
/// Every CA the API server must trust, the current one (whose key is `ca.key`) first.
pub(crate) const CA_BUNDLE: &str = "ca.crt";
pub(crate) const CA_KEY: &str = "ca.key";

/// Certificates start an hour in the past: the clocks of nodes and API servers differ.
const CLOCK_SKEW: Duration = Duration::from_secs(3600);

/// The Secret's four values, as PEM text (empty when absent or not UTF-8). Its `Debug`
/// shows only which are set: a Secret's contents are never logged.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Material {
    pub ca_bundle: String,
    pub ca_key: String,
    pub tls_cert: String,
    pub tls_key: String,
}

impl fmt::Debug for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = |s: &String| if s.is_empty() { "absent" } else { "set" };
        f.debug_struct("Material")
            .field(CA_BUNDLE, &set(&self.ca_bundle))
            .field(CA_KEY, &set(&self.ca_key))
            .field(TLS_CERT, &set(&self.tls_cert))
            .field(TLS_KEY, &set(&self.tls_key))
            .finish()
    }
}

impl Material {
    pub(crate) fn from_data(data: Option<&BTreeMap<String, ByteString>>) -> Self {
        let text = |key: &str| {
            data.and_then(|d| d.get(key))
                .and_then(|v| String::from_utf8(v.0.clone()).ok())
                .unwrap_or_default()
        };
        Self {
            ca_bundle: text(CA_BUNDLE),
            ca_key: text(CA_KEY),
            tls_cert: text(TLS_CERT),
            tls_key: text(TLS_KEY),
        }
    }

    pub(crate) fn to_data(&self) -> BTreeMap<String, ByteString> {
        [
            (CA_BUNDLE, &self.ca_bundle),
            (CA_KEY, &self.ca_key),
            (TLS_CERT, &self.tls_cert),
            (TLS_KEY, &self.tls_key),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), ByteString(v.clone().into_bytes())))
        .collect()
    }
}

/// What the certificates must be: names, lifetimes.
#[derive(Clone, Debug)]
pub(crate) struct Policy {
    /// The serving certificate's subject alternative names (DNS names or IP addresses).
    pub hosts: Vec<String>,
    /// Names the CA and the serving certificate (their common names: `<owner> CA`,
    /// `<owner> server`), e.g. `memcached-operator webhook`.
    pub owner: String,
    pub ca_validity: Duration,
    pub serving_validity: Duration,
}

/// What [`next`] changed, for the logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// No usable CA was stored (first start, or a broken Secret): a new one.
    NewCa,
    /// The CA had a third of its life left: a new one, trusted beside the old one.
    RotatedCa,
    /// CAs past their expiry left the bundle.
    DroppedExpiredCas,
    /// No usable serving certificate was stored: a new one.
    NewServing,
    /// The serving certificate was due (a third of its life left, other names, or signed
    /// by the previous CA once the bundle with the new one had settled): a new one.
    RenewedServing,
}

/// A parsed certificate: what the rotation reads of it.
struct Parsed {
    der: CertificateDer<'static>,
    not_after: SystemTime,
    is_ca: bool,
    /// The subject public key info, DER.
    public_key: Vec<u8>,
    hosts: Vec<String>,
}

impl Parsed {
    fn new(der: CertificateDer<'static>) -> Option<Self> {
        let (_, cert) = X509Certificate::from_der(&der).ok()?;
        let not_after = SystemTime::UNIX_EPOCH
            + Duration::from_secs(u64::try_from(cert.validity().not_after.timestamp()).ok()?);
        let is_ca = cert
            .basic_constraints()
            .ok()
            .flatten()
            .is_some_and(|c| c.value.ca);
        let hosts = cert
            .subject_alternative_name()
            .ok()
            .flatten()
            .map(|san| {
                san.value
                    .general_names
                    .iter()
                    .filter_map(|name| match name {
                        GeneralName::DNSName(dns) => Some((*dns).to_owned()),
                        GeneralName::IPAddress(ip) => ip_text(ip),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let public_key = cert.public_key().raw.to_vec();
        Some(Self {
            der,
            not_after,
            is_ca,
            public_key,
            hosts,
        })
    }

    fn remaining(&self, now: SystemTime) -> Duration {
        self.not_after.duration_since(now).unwrap_or_default()
    }

    /// Whether `issuer`'s key signed this certificate.
    fn signed_by(&self, issuer: &Parsed) -> bool {
        let (Ok((_, cert)), Ok((_, ca))) = (
            X509Certificate::from_der(&self.der),
            X509Certificate::from_der(&issuer.der),
        ) else {
            return false;
        };
        cert.verify_signature(Some(ca.public_key())).is_ok()
    }

    fn pem(&self) -> String {
        pem_of("CERTIFICATE", &self.der)
    }
}

fn ip_text(bytes: &[u8]) -> Option<String> {
    match bytes.len() {
        4 => Some(std::net::Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?).to_string()),
        16 => Some(std::net::Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?).to_string()),
        _ => None,
    }
}

/// PEM text of one DER object, in lines of 64 characters as RFC 7468 asks.
fn pem_of(tag: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = format!("-----BEGIN {tag}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {tag}-----\n"));
    pem
}

/// The certificates of a PEM text that parse; the rest is skipped.
fn certificates(pem: &str) -> Vec<Parsed> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .filter_map(Result::ok)
        .filter_map(Parsed::new)
        .collect()
}

/// The current CA: its certificate and key.
struct Authority {
    cert: Parsed,
    key: KeyPair,
}

impl Authority {
    /// The stored CA, if its key and certificate are there, match and are still valid.
    fn stored(material: &Material, now: SystemTime) -> Option<(Self, Vec<Parsed>)> {
        let key = KeyPair::from_pem(&material.ca_key).ok()?;
        let mut bundle: Vec<Parsed> = certificates(&material.ca_bundle)
            .into_iter()
            .filter(|c| c.is_ca)
            .collect();
        let position = bundle.iter().position(|c| {
            c.public_key == key.subject_public_key_info() && c.remaining(now) > Duration::ZERO
        })?;
        let cert = bundle.remove(position);
        Some((Self { cert, key }, bundle))
    }

    fn generate(policy: &Policy, now: SystemTime) -> anyhow::Result<Self> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, format!("{} CA", policy.owner));
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        validity(&mut params, now, now + policy.ca_validity);
        let key = KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        let cert = Parsed::new(cert.der().clone())
            .context("rcgen made a CA certificate x509-parser cannot read")?;
        Ok(Self { cert, key })
    }

    /// A serving certificate for the policy's names and its key, valid no longer than the CA.
    fn issue(&self, policy: &Policy, now: SystemTime) -> anyhow::Result<(String, String)> {
        let issuer = Issuer::from_ca_cert_der(&self.cert.der, &self.key)?;
        let mut params = CertificateParams::new(policy.hosts.clone())?;
        params
            .distinguished_name
            .push(DnType::CommonName, format!("{} server", policy.owner));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.use_authority_key_identifier_extension = true;
        validity(
            &mut params,
            now,
            (now + policy.serving_validity).min(self.cert.not_after),
        );
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &issuer)?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

fn validity(params: &mut CertificateParams, now: SystemTime, not_after: SystemTime) {
    let since_epoch = |t: SystemTime| t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let epoch = rcgen::date_time_ymd(1970, 1, 1);
    params.not_before = epoch + since_epoch(now).saturating_sub(CLOCK_SKEW);
    params.not_after = epoch + since_epoch(not_after);
}

/// Whether `material` holds a CA that [`next`] would keep.
pub(crate) fn has_usable_ca(material: &Material, now: SystemTime) -> bool {
    Authority::stored(material, now).is_some()
}

/// What the Secret should hold next, and why.
#[derive(Debug)]
pub(crate) struct Next {
    pub material: Material,
    pub changes: Vec<Change>,
    /// The serving certificate is signed by an older CA than the current one, and stays
    /// until the bundle has settled.
    pub waiting_for_trust: bool,
}

/// What the Secret should hold next, from what it holds (`stored`).
///
/// `settled`: every caBundle has carried `stored`'s bundle long enough for the API servers
/// to trust it. Only then is a serving certificate signed by a CA that is new to them.
pub(crate) fn next(
    stored: &Material,
    policy: &Policy,
    now: SystemTime,
    settled: bool,
) -> anyhow::Result<Next> {
    let mut changes = Vec::new();
    let (authority, mut others) = match Authority::stored(stored, now) {
        Some((authority, others)) if authority.cert.remaining(now) >= policy.ca_validity / 3 => {
            (authority, others)
        }
        Some((old, mut others)) => {
            changes.push(Change::RotatedCa);
            others.insert(0, old.cert);
            (Authority::generate(policy, now)?, others)
        }
        None => {
            changes.push(Change::NewCa);
            let others = certificates(&stored.ca_bundle)
                .into_iter()
                .filter(|c| c.is_ca)
                .collect();
            (Authority::generate(policy, now)?, others)
        }
    };
    let before = others.len();
    others.retain(|c| c.remaining(now) > Duration::ZERO && c.der != authority.cert.der);
    if others.len() < before {
        changes.push(Change::DroppedExpiredCas);
    }

    // `settled` speaks of the stored bundle: a CA made now is new to every API server.
    let new_ca = changes
        .iter()
        .any(|c| matches!(c, Change::NewCa | Change::RotatedCa));
    let settled = settled && !new_ca;
    let serving = serving_state(stored, &authority, &others, policy, now, settled);
    let waiting_for_trust = matches!(serving, Serving::KeepUntilTrusted);
    let (tls_cert, tls_key) = match serving {
        Serving::Keep | Serving::KeepUntilTrusted => {
            (stored.tls_cert.clone(), stored.tls_key.clone())
        }
        Serving::Issue(change) => {
            changes.push(change);
            authority.issue(policy, now)?
        }
    };
    let ca_bundle = std::iter::once(&authority.cert)
        .chain(&others)
        .map(Parsed::pem)
        .collect();
    let ca_key = if new_ca {
        authority.key.serialize_pem()
    } else {
        stored.ca_key.clone()
    };
    Ok(Next {
        material: Material {
            ca_bundle,
            ca_key,
            tls_cert,
            tls_key,
        },
        changes,
        waiting_for_trust,
    })
}

enum Serving {
    Keep,
    KeepUntilTrusted,
    Issue(Change),
}

fn serving_state(
    stored: &Material,
    authority: &Authority,
    others: &[Parsed],
    policy: &Policy,
    now: SystemTime,
    settled: bool,
) -> Serving {
    let cert = certificates(&stored.tls_cert).into_iter().next();
    let key = KeyPair::from_pem(&stored.tls_key).ok();
    let usable = cert.as_ref().zip(key.as_ref()).filter(|(cert, key)| {
        cert.public_key == key.subject_public_key_info()
            && cert.remaining(now) > Duration::ZERO
            && std::iter::once(&authority.cert)
                .chain(others)
                .any(|ca| cert.signed_by(ca))
    });
    let Some((cert, _)) = usable else {
        return Serving::Issue(Change::NewServing);
    };
    let mut wanted = policy.hosts.clone();
    let mut has = cert.hosts.clone();
    wanted.sort();
    has.sort();
    let due = cert.remaining(now) < policy.serving_validity / 3 || wanted != has;
    let by_current = cert.signed_by(&authority.cert);
    // A certificate of the new CA waits until every API server trusts that CA.
    match (by_current, due, settled) {
        (true, true, _) | (false, _, true) => Serving::Issue(Change::RenewedServing),
        (true, false, _) => Serving::Keep,
        (false, _, false) => Serving::KeepUntilTrusted,
    }
}

#[cfg(test)]
mod tests;
