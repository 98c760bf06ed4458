//! CRD conversion as hub and spokes, like kubebuilder's `Hub` and `Convertible`: the
//! storage version is the hub, every other served version (a spoke) converts to and from
//! it, so n versions need 2(n-1) conversions rather than n(n-1).
//!
//! Fields one version has and the other lacks would be lost on a round trip through it;
//! [`preserve`] keeps them in an annotation of the converted object and [`restore`] puts
//! them back, so `spoke → hub → spoke` and `hub → spoke → hub` lose nothing.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use http::StatusCode;
use kube::Resource;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kube::core::{ObjectMeta, Status};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::admission::Reply;

/// The version every other version converts through: the CRD's storage version.
pub trait Hub:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

/// A version that converts to and from the hub `H`.
pub trait Convertible<H: Hub>:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + Sized + 'static
{
    fn to_hub(self) -> Result<H, ConversionError>;
    fn from_hub(hub: H) -> Result<Self, ConversionError>;
}

/// Why an object could not be converted; the API server reports the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionError(String);

impl ConversionError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConversionError {}

impl From<String> for ConversionError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ConversionError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// Keeps `fields` (what the target version cannot hold) in the annotation `key` of
/// `meta`; nothing is written when they serialise to `null` or `{}`.
pub fn preserve<T: Serialize>(
    meta: &mut ObjectMeta,
    key: &str,
    fields: &T,
) -> Result<(), ConversionError> {
    let value = serde_json::to_value(fields)
        .map_err(|e| ConversionError(format!("cannot keep fields in {key}: {e}")))?;
    let empty = value.is_null() || value.as_object().is_some_and(|map| map.is_empty());
    if empty {
        return Ok(());
    }
    meta.annotations
        .get_or_insert_default()
        .insert(key.to_owned(), value.to_string());
    Ok(())
}

/// Takes back what [`preserve`] kept under `key` (and removes the annotation); `None`
/// when the object has none, e.g. it was never converted.
pub fn restore<T: DeserializeOwned>(
    meta: &mut ObjectMeta,
    key: &str,
) -> Result<Option<T>, ConversionError> {
    let Some(annotations) = meta.annotations.as_mut() else {
        return Ok(None);
    };
    let Some(kept) = annotations.remove(key) else {
        return Ok(None);
    };
    if annotations.is_empty() {
        meta.annotations = None;
    }
    serde_json::from_str(&kept)
        .map(Some)
        .map_err(|e| ConversionError(format!("the annotation {key} is not what was kept: {e}")))
}

type Convert = fn(Value) -> Result<Value, ConversionError>;

/// The versions of one kind and how they convert; register with
/// [`Webhooks::conversion`](super::Webhooks::conversion).
///
/// ```ignore (v1 and v2 stand for the API versions of a project, with their Hub and Spoke impls)
/// Conversion::<v2::Memcached>::hub().spoke::<v1::Memcached>()
/// ```
pub struct Conversion<H> {
    pub(crate) erased: Erased,
    hub: PhantomData<fn() -> H>,
}

impl<H> fmt::Debug for Conversion<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conversion")
            .field("kind", &self.erased.kind)
            .field("hub", &self.erased.hub)
            .field("spokes", &self.erased.spokes.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A [`Conversion`] without its type parameter, as the server stores it.
#[derive(Clone)]
pub(crate) struct Erased {
    pub(crate) group: String,
    pub(crate) kind: String,
    pub(crate) hub: String,
    to_hub: Convert,
    /// Spoke apiVersion → (to hub, from hub).
    spokes: BTreeMap<String, (Convert, Convert)>,
}

impl<H: Hub> Conversion<H> {
    /// `H` is the hub (storage) version.
    pub fn hub() -> Self {
        Self {
            erased: Erased {
                group: H::group(&()).into_owned(),
                kind: H::kind(&()).into_owned(),
                hub: H::api_version(&()).into_owned(),
                to_hub: typed_round_trip::<H>,
                spokes: BTreeMap::new(),
            },
            hub: PhantomData,
        }
    }

    /// Adds the spoke `S`.
    #[must_use]
    pub fn spoke<S: Convertible<H>>(mut self) -> Self {
        self.erased.spokes.insert(
            S::api_version(&()).into_owned(),
            (spoke_to_hub::<H, S>, hub_to_spoke::<H, S>),
        );
        self
    }

    /// The apiVersions this conversion serves, hub first.
    pub fn versions(&self) -> Vec<String> {
        self.erased.versions().map(str::to_owned).collect()
    }
}

fn typed_round_trip<H: Hub>(value: Value) -> Result<Value, ConversionError> {
    let hub: H = serde_json::from_value(value).map_err(read_error)?;
    serde_json::to_value(hub).map_err(write_error)
}

fn spoke_to_hub<H: Hub, S: Convertible<H>>(value: Value) -> Result<Value, ConversionError> {
    let spoke: S = serde_json::from_value(value).map_err(read_error)?;
    serde_json::to_value(spoke.to_hub()?).map_err(write_error)
}

fn hub_to_spoke<H: Hub, S: Convertible<H>>(value: Value) -> Result<Value, ConversionError> {
    let hub: H = serde_json::from_value(value).map_err(read_error)?;
    serde_json::to_value(S::from_hub(hub)?).map_err(write_error)
}

fn read_error(error: serde_json::Error) -> ConversionError {
    ConversionError(format!("cannot read the object: {error}"))
}

fn write_error(error: serde_json::Error) -> ConversionError {
    ConversionError(format!("cannot write the converted object: {error}"))
}

impl Erased {
    /// Converts one object (of this kind) to `desired`.
    pub(crate) fn convert(&self, object: Value, desired: &str) -> Result<Value, ConversionError> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if from == desired {
            return Ok(object);
        }
        let hub = if from == self.hub {
            object
        } else {
            let (to_hub, _) = self.spokes.get(&from).ok_or_else(|| self.unknown(&from))?;
            to_hub(object)?
        };
        if desired == self.hub {
            // Through the typed hub, so that what is returned is what the hub would store.
            return (self.to_hub)(hub);
        }
        let (_, from_hub) = self
            .spokes
            .get(desired)
            .ok_or_else(|| self.unknown(desired))?;
        from_hub(hub)
    }

    /// The apiVersions converted, hub first.
    fn versions(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.hub.as_str()).chain(self.spokes.keys().map(String::as_str))
    }

    fn unknown(&self, version: &str) -> ConversionError {
        ConversionError(format!(
            "{} has no version {version:?}: this webhook converts between {}",
            self.kind,
            self.versions().collect::<Vec<_>>().join(", ")
        ))
    }
}

/// Answers a ConversionReview; `conversions` are keyed by (group, kind).
pub(crate) fn convert(conversions: &BTreeMap<(String, String), Erased>, body: &[u8]) -> Reply {
    let malformed = |reason: String| {
        let status = Status::failure(
            &format!("malformed ConversionReview: {reason}"),
            "BadRequest",
        )
        .with_code(StatusCode::BAD_REQUEST.as_u16());
        (
            StatusCode::BAD_REQUEST,
            to_json(&ConversionResponse::invalid(status).into_review()),
        )
    };
    let review: ConversionReview = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(error) => return malformed(error.to_string()),
    };
    if review.types.api_version != "apiextensions.k8s.io/v1"
        || review.types.kind != "ConversionReview"
    {
        return malformed(format!(
            "apiVersion {:?} and kind {:?}: this webhook answers only apiextensions.k8s.io/v1 \
             ConversionReview",
            review.types.api_version, review.types.kind
        ));
    }
    let mut request = match ConversionRequest::from_review(review) {
        Ok(request) => request,
        Err(_) => return malformed("it has no request".to_owned()),
    };
    let desired = request.desired_api_version.clone();
    // `for_request` reads only the uid and the types, so the objects can be moved out.
    let objects = std::mem::take(&mut request.objects);
    // The API server wants all objects converted or none: the first failure answers.
    let converted: Result<Vec<Value>, ConversionError> = objects
        .into_iter()
        .map(|object| {
            let group = object
                .get("apiVersion")
                .and_then(Value::as_str)
                .and_then(|v| v.rsplit_once('/'))
                .map_or("", |(group, _)| group);
            let kind = object
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match conversions.get(&(group.to_owned(), kind.to_owned())) {
                Some(conversion) => conversion.convert(object, &desired),
                None => Err(ConversionError(format!(
                    "this webhook does not convert {kind:?} objects of the group {group:?}"
                ))),
            }
        })
        .collect();
    let response = ConversionResponse::for_request(request);
    let response = match converted {
        Ok(converted) => response.success(converted),
        Err(error) => response.failure(Status::failure(&error.0, "").with_code(422)),
    };
    (StatusCode::OK, to_json(&response.into_review()))
}

fn to_json(review: &ConversionReview) -> Vec<u8> {
    serde_json::to_vec(review).unwrap_or_else(|_| {
        br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}"#.to_vec()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preserved_fields_come_back_once() {
        let mut meta = ObjectMeta::default();
        preserve(
            &mut meta,
            "example.com/v2-fields",
            &serde_json::json!({"tls": true}),
        )
        .unwrap();
        let kept: Option<Value> = restore(&mut meta, "example.com/v2-fields").unwrap();
        assert_eq!(kept, Some(serde_json::json!({"tls": true})));
        assert_eq!(meta.annotations, None, "the annotation is removed");
        assert_eq!(
            restore::<Value>(&mut meta, "example.com/v2-fields"),
            Ok(None)
        );
    }

    #[test]
    fn nothing_to_keep_writes_no_annotation() {
        let mut meta = ObjectMeta::default();
        preserve(&mut meta, "k", &serde_json::json!({})).unwrap();
        preserve(&mut meta, "k", &Option::<u8>::None).unwrap();
        assert_eq!(meta.annotations, None);
    }

    fn review(desired: &str, objects: Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "u1", "desiredAPIVersion": desired, "objects": objects}
        }))
        .unwrap()
    }

    fn no_conversions() -> BTreeMap<(String, String), Erased> {
        BTreeMap::new()
    }

    #[test]
    fn objects_nobody_converts_fail_the_whole_review_with_a_message() {
        let body = review(
            "example.com/v2",
            serde_json::json!([{"apiVersion": "example.com/v1", "kind": "Cache"}]),
        );
        let (status, reply) = convert(&no_conversions(), &body);
        assert_eq!(status, StatusCode::OK);
        let reply: Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(reply["response"]["uid"], "u1");
        assert_eq!(reply["response"]["result"]["status"], "Failure");
        assert!(
            reply["response"]["result"]["message"]
                .as_str()
                .unwrap()
                .contains("does not convert \"Cache\" objects of the group \"example.com\""),
            "{reply}"
        );
        assert_eq!(reply["response"]["convertedObjects"], serde_json::json!([]));
    }

    #[test]
    fn a_body_that_is_no_review_is_a_bad_request() {
        let other_version = br#"{"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview", "request": {"uid": "u1", "desiredAPIVersion": "example.com/v2", "objects": []}}"#;
        let other_kind = br#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u1", "desiredAPIVersion": "example.com/v2", "objects": []}}"#;
        for body in [
            &b"not json"[..],
            b"{}",
            b"{\"request\": 1}",
            other_version,
            other_kind,
        ] {
            let (status, reply) = convert(&no_conversions(), body);
            assert_eq!(status, StatusCode::BAD_REQUEST);
            let reply: Value = serde_json::from_slice(&reply).unwrap();
            assert!(
                reply["response"]["result"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("malformed ConversionReview"),
                "{reply}"
            );
        }
    }

    #[test]
    fn a_tampered_annotation_is_an_error() {
        let mut meta = ObjectMeta {
            annotations: Some([("k".to_owned(), "{".to_owned())].into()),
            ..ObjectMeta::default()
        };
        assert!(restore::<Value>(&mut meta, "k").is_err());
    }
}
