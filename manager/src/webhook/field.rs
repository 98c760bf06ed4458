//! Field errors for validating webhooks, in the terms of apimachinery's `field.ErrorList`:
//! each error names the field (`spec.containers[0].image`), says what is wrong with it
//! (invalid, required, forbidden, duplicate, not supported, too long), and the list
//! becomes one refusal that the API server shows the way it shows its own validation:
//! reason `Invalid` (HTTP 422), a message listing every error, and one cause per field in
//! the Status details.
//!
//! ```
//! use rkb_manager::webhook::Denied;
//! use rkb_manager::webhook::field::{ErrorList, Path};
//!
//! fn validate(replicas: i32, image: &str) -> Result<(), Denied> {
//!     let spec = Path::new("spec");
//!     let mut errors = ErrorList::new();
//!     if replicas < 0 {
//!         errors.push(spec.child("replicas").invalid(replicas, "must not be negative"));
//!     }
//!     if image.is_empty() {
//!         errors.push(spec.child("image").required("the container image to run"));
//!     }
//!     errors.into_result("Memcached.cache.example.com", "demo")
//! }
//! let denied = validate(-1, "").unwrap_err();
//! assert_eq!(
//!     denied.message(),
//!     "Memcached.cache.example.com \"demo\" is invalid: [spec.replicas: Invalid value: -1: \
//!      must not be negative, spec.image: Required value: the container image to run]"
//! );
//! ```

use std::fmt;

use http::StatusCode;
use kube::core::response::{StatusCause, StatusDetails};
use serde::Serialize;
use serde_json::Value;

use super::Denied;

/// The path of a field from the object's root, as the API server writes it:
/// `spec.containers[0].env[FOO]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// A top-level field, e.g. `spec`.
    pub fn new(name: &str) -> Self {
        Path(name.to_owned())
    }

    /// A field of this one.
    #[must_use]
    pub fn child(&self, name: &str) -> Self {
        Path(format!("{}.{name}", self.0))
    }

    /// An element of this list.
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        Path(format!("{}[{index}]", self.0))
    }

    /// A value of this map, or an element of a list-map by its key.
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        Path(format!("{}[{key}]", self.0))
    }

    /// An invalid value, and why.
    pub fn invalid(&self, value: impl Serialize, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Invalid, self, Some(json(value)), detail)
    }

    /// A value that must be given, and what it is.
    pub fn required(&self, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Required, self, None, detail)
    }

    /// A field that must not be set (here, or in this case), and why.
    pub fn forbidden(&self, detail: impl Into<String>) -> FieldError {
        FieldError::new(ErrorType::Forbidden, self, None, detail)
    }

    /// A value given twice where values must be unique.
    pub fn duplicate(&self, value: impl Serialize) -> FieldError {
        FieldError::new(ErrorType::Duplicate, self, Some(json(value)), "")
    }

    /// A value outside a fixed set; `supported` lists the set.
    pub fn not_supported<S: AsRef<str>>(
        &self,
        value: impl Serialize,
        supported: &[S],
    ) -> FieldError {
        let quoted: Vec<String> = supported
            .iter()
            .map(|s| Value::from(s.as_ref()).to_string())
            .collect();
        let detail = format!("supported values: {}", quoted.join(", "));
        FieldError::new(ErrorType::NotSupported, self, Some(json(value)), detail)
    }

    /// A value longer than `max` (bytes of a string, or items of a list).
    pub fn too_long(&self, max: usize) -> FieldError {
        FieldError::new(
            ErrorType::TooLong,
            self,
            None,
            format!("may not be more than {max} bytes"),
        )
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn json(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// What is wrong with a field; each is one of the API server's `FieldValue*` reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    Invalid,
    Required,
    Forbidden,
    Duplicate,
    NotSupported,
    TooLong,
}

impl ErrorType {
    /// The cause's reason in a Status, e.g. `FieldValueInvalid`.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::TooLong => "FieldValueTooLong",
        }
    }

    /// How messages name it, e.g. `Invalid value`.
    fn text(self) -> &'static str {
        match self {
            ErrorType::Invalid => "Invalid value",
            ErrorType::Required => "Required value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::TooLong => "Too long",
        }
    }
}

/// One field's error.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub kind: ErrorType,
    pub field: String,
    /// The value at fault, when showing it helps.
    pub value: Option<Value>,
    pub detail: String,
}

impl FieldError {
    fn new(kind: ErrorType, path: &Path, value: Option<Value>, detail: impl Into<String>) -> Self {
        FieldError {
            kind,
            field: path.0.clone(),
            value,
            detail: detail.into(),
        }
    }

    /// The error without its field: `Invalid value: -1: must not be negative`.
    pub fn body(&self) -> String {
        let mut out = self.kind.text().to_owned();
        if let Some(value) = &self.value {
            out.push_str(": ");
            out.push_str(&value.to_string());
        }
        if !self.detail.is_empty() {
            out.push_str(": ");
            out.push_str(&self.detail);
        }
        out
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Every field error of one object, gathered so that the user sees them all at once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorList(Vec<FieldError>);

impl ErrorList {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, error: FieldError) {
        self.0.push(error);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn errors(&self) -> &[FieldError] {
        &self.0
    }

    /// `Ok` when there is no error; otherwise the refusal of the object `name` of
    /// `kind` (`Kind.group`, e.g. `Memcached.cache.example.com`): reason `Invalid`,
    /// HTTP 422, one cause per error.
    pub fn into_result(self, kind: &str, name: &str) -> Result<(), Denied> {
        if self.0.is_empty() {
            return Ok(());
        }
        let listed: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        let listed = match listed.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let (kind_name, group) = kind.split_once('.').unwrap_or((kind, ""));
        let details = StatusDetails {
            name: name.to_owned(),
            group: group.to_owned(),
            kind: kind_name.to_owned(),
            causes: self
                .0
                .iter()
                .map(|e| StatusCause {
                    reason: e.kind.reason().to_owned(),
                    message: e.body(),
                    field: e.field.clone(),
                })
                .collect(),
            uid: String::new(),
            retry_after_seconds: 0,
        };
        Err(
            Denied::new(format!("{kind} \"{name}\" is invalid: {listed}"))
                .with_code(StatusCode::UNPROCESSABLE_ENTITY)
                .with_details(details),
        )
    }
}

impl Extend<FieldError> for ErrorList {
    fn extend<I: IntoIterator<Item = FieldError>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl FromIterator<FieldError> for ErrorList {
    fn from_iter<I: IntoIterator<Item = FieldError>>(iter: I) -> Self {
        ErrorList(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_messages_read_as_the_api_servers() {
        let containers = Path::new("spec").child("containers");
        let errors: ErrorList = [
            containers.index(1).child("name").duplicate("web"),
            containers
                .index(0)
                .child("imagePullPolicy")
                .not_supported("Sometimes", &["Always", "IfNotPresent", "Never"]),
            Path::new("spec").child("labels").key("tier").too_long(63),
            Path::new("spec")
                .child("hostNetwork")
                .forbidden("not in this namespace"),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            errors.errors()[0].to_string(),
            "spec.containers[1].name: Duplicate value: \"web\""
        );
        assert_eq!(
            errors.errors()[1].to_string(),
            "spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported \
             values: \"Always\", \"IfNotPresent\", \"Never\""
        );
        assert_eq!(
            errors.errors()[2].to_string(),
            "spec.labels[tier]: Too long: may not be more than 63 bytes"
        );
        let denied = errors
            .into_result("Web.apps.example.com", "front")
            .unwrap_err();
        let status = denied.status();
        assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
        let details = status.details.unwrap();
        assert_eq!(
            (
                details.kind.as_str(),
                details.group.as_str(),
                details.name.as_str()
            ),
            ("Web", "apps.example.com", "front")
        );
        let causes: Vec<(&str, &str)> = details
            .causes
            .iter()
            .map(|c| (c.reason.as_str(), c.field.as_str()))
            .collect();
        assert_eq!(
            causes,
            [
                ("FieldValueDuplicate", "spec.containers[1].name"),
                (
                    "FieldValueNotSupported",
                    "spec.containers[0].imagePullPolicy"
                ),
                ("FieldValueTooLong", "spec.labels[tier]"),
                ("FieldValueForbidden", "spec.hostNetwork"),
            ]
        );
        assert_eq!(
            details.causes[3].message,
            "Forbidden: not in this namespace"
        );
    }

    #[test]
    fn no_error_is_no_refusal() {
        assert_eq!(ErrorList::new().into_result("A.b", "c"), Ok(()));
    }
}
