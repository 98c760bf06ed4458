//! Webhooks served by the test itself, as controller-runtime's `WebhookInstallOptions`:
//! a CA and a serving certificate for loopback, and webhook configurations (and CRD
//! conversion stanzas) rewritten to call `https://127.0.0.1:<port>/<path>` with that CA.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use k8s_openapi::ByteString;
use serde_json::Value;

use crate::Error;
use crate::certs::{certificate_authority, serving_certificate};

/// A serving certificate for `localhost`/`127.0.0.1`/`::1`, signed by a fresh CA, written
/// as `tls.crt` and `tls.key` into a directory of its own (removed on drop).
#[derive(Debug)]
pub struct WebhookCerts {
    dir: PathBuf,
    ca: String,
}

impl WebhookCerts {
    pub fn generate() -> Result<Self, Error> {
        let failed = |e: &dyn std::fmt::Display| {
            Error::ControlPlane(format!("cannot make the webhook certificates: {e}"))
        };
        let ca = certificate_authority("envtest webhook CA").map_err(|e| failed(&e))?;
        let (cert, key) = serving_certificate(
            &["localhost", "127.0.0.1", "::1"],
            "envtest webhook server",
            &ca,
        )
        .map_err(|e| failed(&e))?;

        let dir = std::env::temp_dir().join(format!(
            "rkb-envtest-webhook-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| failed(&e))?;
        let certs = Self { dir, ca: ca.pem() };
        std::fs::write(certs.cert(), cert.pem()).map_err(|e| failed(&e))?;
        std::fs::write(certs.key(), key.serialize_pem()).map_err(|e| failed(&e))?;
        Ok(certs)
    }

    /// The directory holding `tls.crt` and `tls.key` (a `--webhook-cert-path`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn cert(&self) -> PathBuf {
        self.dir.join("tls.crt")
    }

    pub fn key(&self) -> PathBuf {
        self.dir.join("tls.key")
    }

    /// The CA certificate (PEM) clients must trust.
    pub fn ca_pem(&self) -> &str {
        &self.ca
    }

    /// Points every webhook of a Mutating/ValidatingWebhookConfiguration, and the
    /// conversion webhook of a CRD, at `https://<addr><path>` trusting this CA; the path
    /// is the one of its `clientConfig.service` (as `make manifests` writes them), or of
    /// its `clientConfig.url` (a webhook out of the cluster). Other objects are left alone.
    pub fn point_at(&self, addr: SocketAddr, object: &mut Value) {
        let bundle =
            serde_json::to_value(ByteString(self.ca.clone().into_bytes())).unwrap_or(Value::Null);
        let retarget = |config: &mut Value| {
            let url_path = config
                .get("url")
                .and_then(Value::as_str)
                .and_then(|url| url.strip_prefix("https://"))
                .and_then(|rest| rest.find('/').map(|i| rest[i..].to_owned()));
            let path = config
                .pointer("/service/path")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or(url_path)
                .unwrap_or_else(|| "/".to_owned());
            let mut target = serde_json::Map::new();
            target.insert("url".to_owned(), format!("https://{addr}{path}").into());
            target.insert("caBundle".to_owned(), bundle.clone());
            *config = Value::Object(target);
        };
        match object.get("kind").and_then(Value::as_str) {
            Some("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration") => {
                if let Some(webhooks) = object.get_mut("webhooks").and_then(Value::as_array_mut) {
                    for webhook in webhooks {
                        if let Some(config) = webhook.get_mut("clientConfig") {
                            retarget(config);
                        }
                    }
                }
            }
            Some("CustomResourceDefinition") => {
                if let Some(config) = object.pointer_mut("/spec/conversion/webhook/clientConfig") {
                    retarget(config);
                }
            }
            _ => {}
        }
    }
}

impl Drop for WebhookCerts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn configurations_and_crds_are_pointed_at_the_test_server() {
        let certs = WebhookCerts::generate().unwrap();
        assert!(certs.cert().exists() && certs.key().exists());
        let addr: SocketAddr = "127.0.0.1:4443".parse().unwrap();
        let mut webhook = json!({
            "kind": "ValidatingWebhookConfiguration",
            "webhooks": [{"clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/validate-x"}}}]
        });
        certs.point_at(addr, &mut webhook);
        let config = &webhook["webhooks"][0]["clientConfig"];
        assert_eq!(config["url"], "https://127.0.0.1:4443/validate-x");
        assert!(config.get("service").is_none());
        assert!(config["caBundle"].as_str().unwrap().len() > 100);

        let mut crd = json!({
            "kind": "CustomResourceDefinition",
            "spec": {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/convert"}}}}}
        });
        certs.point_at(addr, &mut crd);
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"],
            "https://127.0.0.1:4443/convert"
        );
        let mut out_of_cluster = json!({
            "kind": "MutatingWebhookConfiguration",
            "webhooks": [{"clientConfig": {"url": "https://hooks.example.com:9443/mutate-x"}}]
        });
        certs.point_at(addr, &mut out_of_cluster);
        assert_eq!(
            out_of_cluster["webhooks"][0]["clientConfig"]["url"],
            "https://127.0.0.1:4443/mutate-x"
        );
        let dir = certs.dir().to_owned();
        drop(certs);
        assert!(!dir.exists(), "the files are removed on drop");
    }
}
