//! Defaulting and validating admission webhooks, in the spirit of controller-runtime's
//! `CustomDefaulter` and `CustomValidator`.

use std::fmt;
use std::future::Future;

use http::StatusCode;
use kube::Resource;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::{DynamicObject, Status};
use rkb_core::webhook::Settings;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Warnings returned to the client (`kubectl` prints them), even when a request is allowed.
pub type Warnings = Vec<String>;

/// What a webhook knows about the request besides the objects.
#[derive(Clone, Debug)]
pub struct Request {
    /// The AdmissionReview's uid.
    pub uid: String,
    pub operation: Operation,
    /// The object's name (empty on create with `generateName`).
    pub name: String,
    pub namespace: Option<String>,
    /// Who made the request.
    pub user_info: k8s_openapi::api::authentication::v1::UserInfo,
    /// A dry run: the webhook must have no side effects.
    pub dry_run: bool,
    /// The subresource, e.g. `status`.
    pub sub_resource: Option<String>,
}

/// A refused request: the message is what `kubectl` shows the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denied {
    message: String,
    code: u16,
    warnings: Warnings,
}

impl Denied {
    /// Refuses with HTTP 403 Forbidden, as controller-runtime does for a validator's error.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: StatusCode::FORBIDDEN.as_u16(),
            warnings: Warnings::new(),
        }
    }

    /// Another HTTP status code, e.g. 422 for an invalid field.
    #[must_use]
    pub fn with_code(mut self, code: StatusCode) -> Self {
        self.code = code.as_u16();
        self
    }

    /// Warnings to return along with the refusal.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Denied {}

impl From<String> for Denied {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for Denied {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// Sets the defaults of a `K` the API server is about to create or update; the manager
/// answers with the JSON patch from the object received to the object defaulted.
///
/// ```
/// use rkb_manager::webhook::{Defaulter, Denied, Request};
/// # use k8s_openapi::api::core::v1::ConfigMap;
///
/// struct LabelDefaulter;
///
/// impl Defaulter<ConfigMap> for LabelDefaulter {
///     async fn apply_defaults(&self, _: &Request, map: &mut ConfigMap) -> Result<(), Denied> {
///         map.metadata.labels.get_or_insert_default().entry("tier".into()).or_insert("web".into());
///         Ok(())
///     }
/// }
/// ```
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Fills in what `object` leaves out. An error refuses the request.
    fn apply_defaults(
        &self,
        request: &Request,
        object: &mut K,
    ) -> impl Future<Output = Result<(), Denied>> + Send;

    /// Path, failure policy, operations, ...: what `#[rkb_runtime::webhook(...)]` on the
    /// `impl` says, or kubebuilder's defaults.
    fn settings() -> Settings
    where
        Self: Sized,
    {
        Settings::default()
    }
}

/// Checks a `K` being created, updated (with the object it replaces) or deleted, beyond
/// what the CRD's schema and CEL rules can say. `Ok` may carry warnings.
pub trait Validator<K>: Send + Sync + 'static {
    fn validate_create(
        &self,
        request: &Request,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Denied>> + Send;

    fn validate_update(
        &self,
        request: &Request,
        old: &K,
        new: &K,
    ) -> impl Future<Output = Result<Warnings, Denied>> + Send;

    /// Called only if the settings list the delete operation; allows by default.
    fn validate_delete(
        &self,
        request: &Request,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Denied>> + Send {
        let _ = (request, object);
        async { Ok(Warnings::new()) }
    }

    /// As [`Defaulter::settings`].
    fn settings() -> Settings
    where
        Self: Sized,
    {
        Settings::default()
    }
}

/// The reply to one HTTP request: status and JSON body.
pub(crate) type Reply = (StatusCode, Vec<u8>);

/// A request that is not an AdmissionReview at all: HTTP 400, with an AdmissionReview
/// that says why (there is no uid to answer to).
pub(crate) fn malformed(reason: impl fmt::Display) -> Reply {
    let response = AdmissionResponse::invalid(format!("malformed AdmissionReview: {reason}"));
    let mut response = response;
    response.result.code = StatusCode::BAD_REQUEST.as_u16();
    (StatusCode::BAD_REQUEST, to_json(&response.into_review()))
}

fn to_json(review: &AdmissionReview<DynamicObject>) -> Vec<u8> {
    // Serialising plain data cannot fail; fall back to a fixed body rather than panic.
    serde_json::to_vec(review).unwrap_or_else(|_| {
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec()
    })
}

/// Parses an AdmissionReview and checks it is about `K`; on failure, the reply to send.
fn parse<K>(body: &[u8]) -> Result<(AdmissionRequest<DynamicObject>, Request), Reply>
where
    K: Resource<DynamicType = ()>,
{
    let review: AdmissionReview<DynamicObject> = serde_json::from_slice(body).map_err(malformed)?;
    let request: AdmissionRequest<DynamicObject> = review
        .try_into()
        .map_err(|_| malformed("it has no request"))?;
    let (group, version, kind) = (K::group(&()), K::version(&()), K::kind(&()));
    if request.kind.group != group || request.kind.version != version || request.kind.kind != kind {
        let message = format!(
            "this webhook serves {kind}.{version}.{group}, not {}.{}.{}: check the \
             webhook configuration's rules",
            request.kind.kind, request.kind.version, request.kind.group
        );
        return Err(deny(
            &request,
            Denied::new(message).with_code(StatusCode::BAD_REQUEST),
        ));
    }
    let context = Request {
        uid: request.uid.clone(),
        operation: request.operation.clone(),
        name: request.name.clone(),
        namespace: request.namespace.clone(),
        user_info: request.user_info.clone(),
        dry_run: request.dry_run,
        sub_resource: request.sub_resource.clone(),
    };
    Ok((request, context))
}

/// A refusal of a well-formed review: HTTP 200, so the API server shows the message.
fn deny(request: &AdmissionRequest<DynamicObject>, denied: Denied) -> Reply {
    let mut response = AdmissionResponse::from(request).deny(&denied.message);
    response.result = Status::failure(&denied.message, reason(denied.code)).with_code(denied.code);
    if !denied.warnings.is_empty() {
        response.warnings = Some(denied.warnings);
    }
    (StatusCode::OK, to_json(&response.into_review()))
}

fn reason(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        403 => "Forbidden",
        409 => "Conflict",
        422 => "Invalid",
        _ => "",
    }
}

fn allow(request: &AdmissionRequest<DynamicObject>, warnings: Warnings) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request);
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

/// Reads an object of the review as `K`.
fn object<K: DeserializeOwned>(
    request: &AdmissionRequest<DynamicObject>,
    object: Option<&DynamicObject>,
    which: &str,
) -> Result<(Value, K), Reply> {
    let bad = |reason: String| {
        deny(
            request,
            Denied::new(format!("cannot read the {which}: {reason}"))
                .with_code(StatusCode::BAD_REQUEST),
        )
    };
    let object = object.ok_or_else(|| bad("the review has none".to_owned()))?;
    let value = serde_json::to_value(object).map_err(|e| bad(e.to_string()))?;
    let typed = K::deserialize(&value).map_err(|e| bad(e.to_string()))?;
    Ok((value, typed))
}

/// Answers a mutating review with `defaulter`.
pub(crate) async fn mutate<K, D>(defaulter: &D, body: &[u8]) -> Reply
where
    K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync,
    D: Defaulter<K>,
{
    let (request, context) = match parse::<K>(body) {
        Ok(parsed) => parsed,
        Err(reply) => return reply,
    };
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return (
            StatusCode::OK,
            to_json(&allow(&request, Warnings::new()).into_review()),
        );
    }
    let (original, mut typed) = match object::<K>(&request, request.object.as_ref(), "object") {
        Ok(read) => read,
        Err(reply) => return reply,
    };
    if let Err(denied) = defaulter.apply_defaults(&context, &mut typed).await {
        return deny(&request, denied);
    }
    let defaulted = match serde_json::to_value(&typed) {
        Ok(value) => without_new_nulls(&original, value),
        Err(error) => {
            return deny(
                &request,
                Denied::new(format!("cannot serialise the defaulted object: {error}"))
                    .with_code(StatusCode::INTERNAL_SERVER_ERROR),
            );
        }
    };
    let patch = json_patch::diff(&original, &defaulted);
    let response = allow(&request, Warnings::new());
    let response = if patch.0.is_empty() {
        response
    } else {
        match response.with_patch(patch) {
            Ok(response) => response,
            Err(error) => {
                return deny(
                    &request,
                    Denied::new(format!("cannot serialise the patch: {error}"))
                        .with_code(StatusCode::INTERNAL_SERVER_ERROR),
                );
            }
        }
    };
    (StatusCode::OK, to_json(&response.into_review()))
}

/// Answers a validating review with `validator`.
pub(crate) async fn validate<K, V>(validator: &V, body: &[u8]) -> Reply
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync,
    V: Validator<K>,
{
    let (request, context) = match parse::<K>(body) {
        Ok(parsed) => parsed,
        Err(reply) => return reply,
    };
    let verdict = match request.operation {
        Operation::Create => match object::<K>(&request, request.object.as_ref(), "object") {
            Ok((_, object)) => validator.validate_create(&context, &object).await,
            Err(reply) => return reply,
        },
        Operation::Update => {
            let new = object::<K>(&request, request.object.as_ref(), "object");
            let old = object::<K>(&request, request.old_object.as_ref(), "old object");
            match (old, new) {
                (Ok((_, old)), Ok((_, new))) => {
                    validator.validate_update(&context, &old, &new).await
                }
                (Err(reply), _) | (_, Err(reply)) => return reply,
            }
        }
        Operation::Delete => {
            match object::<K>(&request, request.old_object.as_ref(), "deleted object") {
                Ok((_, old)) => validator.validate_delete(&context, &old).await,
                Err(reply) => return reply,
            }
        }
        Operation::Connect => Ok(Warnings::new()),
    };
    match verdict {
        Ok(warnings) => (
            StatusCode::OK,
            to_json(&allow(&request, warnings).into_review()),
        ),
        Err(denied) => deny(&request, denied),
    }
}

/// Drops the `null`s serialisation adds for unset `Option`s the client did not send,
/// so that the patch holds only what the defaulter set.
fn without_new_nulls(original: &Value, defaulted: Value) -> Value {
    let Value::Object(after) = defaulted else {
        return defaulted;
    };
    // Everything under a key the client did not send is new, as under a missing object.
    let none = serde_json::Map::new();
    let before = original.as_object().unwrap_or(&none);
    Value::Object(
        after
            .into_iter()
            .filter(|(key, value)| !value.is_null() || before.contains_key(key))
            .map(|(key, value)| {
                let value = without_new_nulls(before.get(&key).unwrap_or(&Value::Null), value);
                (key, value)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_nulls_the_client_did_not_send_are_dropped() {
        let original = json!({"spec": {"a": null, "b": 1}});
        let defaulted = json!({"spec": {"a": null, "b": 1, "c": null, "d": {"e": null, "f": 2}}});
        assert_eq!(
            without_new_nulls(&original, defaulted),
            json!({"spec": {"a": null, "b": 1, "d": {"f": 2}}})
        );
    }
}
