//! Structural-schema rules for CRD schemas (apiextensions.k8s.io/v1), applied
//! to the JSON of an `openAPIV3Schema`.
//!
//! kube's derive already rewrites most of what schemars emits into a
//! structural schema, but not all of it, and the API server's verdict on what
//! slips through arrives only at `make install`. [`fix`] repairs what has one
//! obvious repair, [`check`] reports the rest with the JSON path of the field,
//! and [`limit_descriptions`] / [`cap_depth`] implement the size policies of
//! [`Manifests`](crate::Manifests).
//!
//! Paths are written the way fields are addressed in objects: `.spec.size`,
//! `.spec.containers[*].name` (array items), `.spec.labels.*` (map values), and
//! `.spec.mode (oneOf[1])` for a branch of a logical junctor.

use std::fmt;

use serde_json::{Map, Value};

/// One reason a schema is not a valid structural CRD schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where, e.g. `.spec.containers[*].ports`; `.` is the object itself.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it in the Rust types, when there is a usual way.
    pub hint: Option<String>,
}

impl Problem {
    fn new(path: &str, message: impl Into<String>) -> Self {
        Problem {
            path: display_path(path),
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n    hint: {hint}")?;
        }
        Ok(())
    }
}

pub(crate) fn display_path(path: &str) -> String {
    if path.is_empty() {
        ".".to_owned()
    } else {
        path.to_owned()
    }
}

mod check;
pub mod k8s;
mod locate;
mod repair;
mod size;

pub use check::check;
pub use locate::{Found, locate, mark};
pub use repair::fix;
pub use size::{cap_depth, depth, limit_descriptions};

/// The logical junctors, whose branches hold value validations only.
const JUNCTORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

fn flag(obj: &Map<String, Value>, key: &str) -> bool {
    obj.get(key) == Some(&Value::Bool(true))
}

fn type_of(obj: &Map<String, Value>) -> Option<&str> {
    obj.get("type").and_then(Value::as_str)
}

fn child(path: &str, name: &str) -> String {
    format!("{path}.{name}")
}

/// Calls `f` on every schema node of `schema` (not on values inside
/// `default`, `enum` or `example`, which may contain keys such as
/// `description` too).
fn for_each_schema(node: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    f(obj);
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for prop in props.values_mut() {
            for_each_schema(prop, f);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = obj.get_mut(key) {
            for_each_schema(sub, f);
        }
    }
    for key in JUNCTORS {
        if let Some(Value::Array(subs)) = obj.get_mut(key) {
            for sub in subs {
                for_each_schema(sub, f);
            }
        }
    }
}

#[cfg(test)]
mod tests;
