//! The control plane's certificates: a serving CA, a client CA and a ServiceAccount
//! signing key, made fresh for each start (as controller-runtime's tinyca does).

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

use crate::Error;

/// PEM files for kube-apiserver and for the admin kubeconfig.
#[derive(Debug)]
pub struct Certificates {
    pub serving_ca: String,
    pub serving_cert: String,
    pub serving_key: String,
    pub client_ca: String,
    /// The admin user: a client certificate in `system:masters`.
    pub admin_cert: String,
    pub admin_key: String,
    pub service_account_key: String,
    pub service_account_public_key: String,
}

impl Certificates {
    pub fn generate() -> Result<Self, Error> {
        Self::try_generate()
            .map_err(|e| Error::ControlPlane(format!("cannot make certificates: {e}")))
    }

    fn try_generate() -> Result<Self, rcgen::Error> {
        let serving_ca = certificate_authority("envtest serving CA")?;
        let (serving_cert, serving_key) = serving_certificate(
            &[
                "localhost",
                "127.0.0.1",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
            ],
            "kube-apiserver",
            &serving_ca,
        )?;

        let client_ca = certificate_authority("envtest client CA")?;
        let mut admin = CertificateParams::new(Vec::<String>::new())?;
        admin
            .distinguished_name
            .push(DnType::CommonName, "envtest-admin");
        admin
            .distinguished_name
            .push(DnType::OrganizationName, "system:masters");
        admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let admin_key = KeyPair::generate()?;
        let admin_cert = admin.signed_by(&admin_key, &client_ca)?;

        let service_account = KeyPair::generate()?;
        Ok(Self {
            serving_ca: serving_ca.pem(),
            serving_cert: serving_cert.pem(),
            serving_key: serving_key.serialize_pem(),
            client_ca: client_ca.pem(),
            admin_cert: admin_cert.pem(),
            admin_key: admin_key.serialize_pem(),
            service_account_key: service_account.serialize_pem(),
            service_account_public_key: service_account.public_key_pem(),
        })
    }
}

/// A TLS server certificate for `names` (DNS names or IP addresses) and its new key,
/// signed by `ca`.
pub(crate) fn serving_certificate(
    names: &[&str],
    common_name: &str,
    ca: &CertifiedIssuer<'static, KeyPair>,
) -> Result<(rcgen::Certificate, KeyPair), rcgen::Error> {
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())?;
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, ca)?;
    Ok((cert, key))
}

pub(crate) fn certificate_authority(
    name: &str,
) -> Result<CertifiedIssuer<'static, KeyPair>, rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    CertifiedIssuer::self_signed(params, KeyPair::generate()?)
}
