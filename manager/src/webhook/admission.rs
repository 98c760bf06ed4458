//! Defaulting and validating admission webhooks, in the spirit of controller-runtime's
//! `CustomDefaulter` and `CustomValidator`.

use std::fmt;
use std::future::Future;

use http::StatusCode;
use kube::Resource;
use kube::core::admission::{AdmissionResponse, Operation};
use kube::core::response::StatusDetails;
use kube::core::{GroupVersionKind, Status};
use rkb_core::webhook::Settings;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

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
    /// What [`field::ErrorList`](super::field::ErrorList) says per field; boxed, as it
    /// is large and most refusals have none.
    details: Option<Box<StatusDetails>>,
}

impl Denied {
    /// Refuses with HTTP 403 Forbidden, as controller-runtime does for a validator's error.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: StatusCode::FORBIDDEN.as_u16(),
            warnings: Warnings::new(),
            details: None,
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

    /// The Status details: the object and a cause per field (see
    /// [`field::ErrorList`](super::field::ErrorList)).
    #[must_use]
    pub fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The Status the API server passes on to the client.
    pub fn status(&self) -> Status {
        let mut status = Status::failure(&self.message, reason(self.code)).with_code(self.code);
        status.details = self.details.as_deref().cloned();
        status
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
    (StatusCode::BAD_REQUEST, to_json(response))
}

fn to_json(response: AdmissionResponse) -> Vec<u8> {
    // Serialising plain data cannot fail; fall back to a fixed body rather than panic.
    serde_json::to_vec(&response.into_review()).unwrap_or_else(|_| {
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec()
    })
}

/// What the webhook reads of an AdmissionReview. The objects stay raw JSON borrowed from
/// the body and are read once, straight into `K`: no dynamic copy of them in between.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Review<'a> {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(borrow)]
    request: Option<RawRequest<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRequest<'a> {
    uid: String,
    kind: GroupVersionKind,
    #[serde(default)]
    sub_resource: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: Option<String>,
    operation: Operation,
    user_info: k8s_openapi::api::authentication::v1::UserInfo,
    #[serde(borrow, default)]
    object: Option<&'a RawValue>,
    #[serde(borrow, default)]
    old_object: Option<&'a RawValue>,
    #[serde(default)]
    dry_run: bool,
}

/// The only AdmissionReview version the manager's webhook configurations ask for.
const REVIEW_API_VERSION: &str = "admission.k8s.io/v1";
const REVIEW_KIND: &str = "AdmissionReview";

/// Parses an AdmissionReview and checks it is about `K`; on failure, the reply to send.
fn parse<K>(body: &[u8]) -> Result<(RawRequest<'_>, Request), Reply>
where
    K: Resource<DynamicType = ()>,
{
    let review: Review<'_> = serde_json::from_slice(body).map_err(malformed)?;
    if review.api_version != REVIEW_API_VERSION || review.kind != REVIEW_KIND {
        // Answering another version in its own terms could tell the API server "allowed"
        // in a shape it reads differently.
        return Err(malformed(format!(
            "apiVersion {:?} and kind {:?}: this webhook answers only {REVIEW_API_VERSION} \
             {REVIEW_KIND}",
            review.api_version, review.kind
        )));
    }
    let request = review
        .request
        .ok_or_else(|| malformed("it has no request"))?;
    let (group, version, kind) = (K::group(&()), K::version(&()), K::kind(&()));
    if request.kind.group != group || request.kind.version != version || request.kind.kind != kind {
        let message = format!(
            "this webhook serves {kind}.{version}.{group}, not {}.{}.{}: check the \
             webhook configuration's rules",
            request.kind.kind, request.kind.version, request.kind.group
        );
        return Err(deny(
            &request.uid,
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

/// The answer to the review `uid`: allowed, unless changed.
fn answer(uid: &str) -> AdmissionResponse {
    // kube builds responses only from its own request type; this one keeps the objects raw.
    let mut response = AdmissionResponse::invalid("");
    response.uid = uid.to_owned();
    response.allowed = true;
    response.result = Status::default();
    response
}

/// A refusal of a well-formed review: HTTP 200, so the API server shows the message.
fn deny(uid: &str, denied: Denied) -> Reply {
    let mut response = answer(uid).deny(&denied.message);
    response.result = denied.status();
    if !denied.warnings.is_empty() {
        response.warnings = Some(denied.warnings);
    }
    (StatusCode::OK, to_json(response))
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

fn allow(uid: &str, warnings: Warnings) -> AdmissionResponse {
    let mut response = answer(uid);
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

/// Reads an object of the review as `K`, or the refusal to send.
fn object<K: DeserializeOwned>(
    request: &RawRequest<'_>,
    object: Option<&RawValue>,
    which: &str,
) -> Result<K, Reply> {
    let bad = |reason: String| {
        deny(
            &request.uid,
            Denied::new(format!("cannot read the {which}: {reason}"))
                .with_code(StatusCode::BAD_REQUEST),
        )
    };
    let object = object.ok_or_else(|| bad("the review has none".to_owned()))?;
    serde_json::from_str(object.get()).map_err(|e| bad(e.to_string()))
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
            to_json(allow(&request.uid, Warnings::new())),
        );
    }
    let mut typed = match object::<K>(&request, request.object, "object") {
        Ok(typed) => typed,
        Err(reply) => return reply,
    };
    if let Err(denied) = defaulter.apply_defaults(&context, &mut typed).await {
        return deny(&request.uid, denied);
    }
    let internal = |what: &str, error: serde_json::Error| {
        deny(
            &request.uid,
            Denied::new(format!("cannot {what}: {error}"))
                .with_code(StatusCode::INTERNAL_SERVER_ERROR),
        )
    };
    let defaulted = match serde_json::to_value(&typed) {
        Ok(value) => value,
        Err(error) => return internal("serialise the defaulted object", error),
    };
    // One object at a time at most: the typed one goes before the original is read again.
    drop(typed);
    let original: Value = match request.object.map(|raw| serde_json::from_str(raw.get())) {
        Some(Ok(original)) => original,
        Some(Err(error)) => return internal("read the object again", error),
        None => Value::Null,
    };
    let defaulted = without_new_nulls(&original, defaulted);
    let patch = json_patch::diff(&original, &defaulted);
    drop((original, defaulted));
    let response = allow(&request.uid, Warnings::new());
    let response = if patch.0.is_empty() {
        response
    } else {
        match response.with_patch(patch) {
            Ok(response) => response,
            Err(error) => {
                return deny(
                    &request.uid,
                    Denied::new(format!("cannot serialise the patch: {error}"))
                        .with_code(StatusCode::INTERNAL_SERVER_ERROR),
                );
            }
        }
    };
    (StatusCode::OK, to_json(response))
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
        Operation::Create => match object::<K>(&request, request.object, "object") {
            Ok(object) => validator.validate_create(&context, &object).await,
            Err(reply) => return reply,
        },
        Operation::Update => {
            let new = object::<K>(&request, request.object, "object");
            let old = object::<K>(&request, request.old_object, "old object");
            match (old, new) {
                (Ok(old), Ok(new)) => validator.validate_update(&context, &old, &new).await,
                (Err(reply), _) | (_, Err(reply)) => return reply,
            }
        }
        Operation::Delete => match object::<K>(&request, request.old_object, "deleted object") {
            Ok(old) => validator.validate_delete(&context, &old).await,
            Err(reply) => return reply,
        },
        Operation::Connect => Ok(Warnings::new()),
    };
    match verdict {
        Ok(warnings) => (StatusCode::OK, to_json(allow(&request.uid, warnings))),
        Err(denied) => deny(&request.uid, denied),
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
