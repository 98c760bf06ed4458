//! The CA bundle in the `caBundle` of one named object: every webhook of a webhook
//! configuration, or a CRD's conversion webhook. One `get`, and a JSON patch only when a
//! `caBundle` differs, guarded by the `resourceVersion` read (a list of webhooks that
//! changed in between is never patched by index).

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::Target;

/// What [`inject`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Injected {
    /// Every `caBundle` held the bundle already.
    Current,
    /// Some did not; they do now.
    Patched,
    /// The object does not exist (not applied yet, or removed on purpose).
    Absent,
    /// A CRD without `conversion: strategy: Webhook`: there is no `caBundle` to keep.
    NoConversionWebhook,
}

/// Why [`inject`] failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InjectError {
    /// RBAC denies the `get` or the `patch`.
    #[error("{verb} is forbidden: {message}")]
    Forbidden { verb: &'static str, message: String },
    #[error("{verb} failed: {source}")]
    Failed {
        verb: &'static str,
        source: kube::Error,
    },
}

impl InjectError {
    fn of(verb: &'static str, error: kube::Error) -> Self {
        match error {
            kube::Error::Api(status) if status.code == 403 => Self::Forbidden {
                verb,
                message: status.message,
            },
            source => Self::Failed { verb, source },
        }
    }
}

/// Makes every `caBundle` of `target` hold `bundle` (base64 of the PEM bundle, as the API
/// serializes it).
pub(crate) async fn inject(
    client: &Client,
    target: &Target,
    bundle: &str,
) -> Result<Injected, InjectError> {
    match target {
        Target::Mutating(name) => {
            inject_into::<MutatingWebhookConfiguration>(Api::all(client.clone()), name, bundle)
                .await
        }
        Target::Validating(name) => {
            inject_into::<ValidatingWebhookConfiguration>(Api::all(client.clone()), name, bundle)
                .await
        }
        Target::Crd(name) => {
            inject_into::<CustomResourceDefinition>(Api::all(client.clone()), name, bundle).await
        }
    }
}

async fn inject_into<K>(api: Api<K>, name: &str, bundle: &str) -> Result<Injected, InjectError>
where
    K: kube::Resource + Clone + std::fmt::Debug + Serialize + DeserializeOwned,
{
    let object = match api.get_opt(name).await {
        Ok(Some(object)) => object,
        Ok(None) => return Ok(Injected::Absent),
        Err(error) => return Err(InjectError::of("get", error)),
    };
    let object = serde_json::to_value(&object).unwrap_or(Value::Null);
    let Some(pointers) = ca_bundle_pointers(&object) else {
        return Ok(Injected::NoConversionWebhook);
    };
    let mut patch: Vec<Value> = pointers
        .iter()
        .filter(|pointer| object.pointer(pointer).and_then(Value::as_str) != Some(bundle))
        .map(|pointer| json!({"op": "add", "path": pointer, "value": bundle}))
        .collect();
    if patch.is_empty() {
        return Ok(Injected::Current);
    }
    let version = object.pointer("/metadata/resourceVersion").cloned();
    patch.insert(
        0,
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": version}),
    );
    let patch: json_patch::Patch =
        serde_json::from_value(Value::Array(patch)).map_err(|error| InjectError::Failed {
            verb: "patch",
            source: kube::Error::SerdeError(error),
        })?;
    api.patch(name, &PatchParams::default(), &Patch::Json::<()>(patch))
        .await
        .map_err(|error| InjectError::of("patch", error))?;
    Ok(Injected::Patched)
}

/// The JSON pointers of the `caBundle`s of a webhook configuration's webhooks or a CRD's
/// conversion webhook; `None` for a CRD that converts without a webhook.
fn ca_bundle_pointers(object: &Value) -> Option<Vec<String>> {
    if object.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
        let strategy = object.pointer("/spec/conversion/strategy");
        return (strategy.and_then(Value::as_str) == Some("Webhook"))
            .then(|| vec!["/spec/conversion/webhook/clientConfig/caBundle".to_owned()]);
    }
    let webhooks = object
        .get("webhooks")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    Some(
        (0..webhooks)
            .map(|i| format!("/webhooks/{i}/clientConfig/caBundle"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_webhook_and_only_a_webhook_conversion_has_a_ca_bundle() {
        let config = json!({
            "kind": "ValidatingWebhookConfiguration",
            "webhooks": [{"clientConfig": {}}, {"clientConfig": {"caBundle": "eA=="}}]
        });
        assert_eq!(
            ca_bundle_pointers(&config).unwrap(),
            [
                "/webhooks/0/clientConfig/caBundle",
                "/webhooks/1/clientConfig/caBundle"
            ]
        );
        let crd = |strategy| json!({"kind": "CustomResourceDefinition", "spec": {"conversion": {"strategy": strategy}}});
        assert_eq!(
            ca_bundle_pointers(&crd("Webhook")).unwrap(),
            ["/spec/conversion/webhook/clientConfig/caBundle"]
        );
        assert_eq!(ca_bundle_pointers(&crd("None")), None);
    }
}
