//! The `x-kubernetes-*` OpenAPI extensions that CRD schemas may carry
//! (apiextensions.k8s.io/v1 JSONSchemaProps), and the [`Shape`] `#[rkb(...)]` gives a
//! field's schema. Which `#[rkb(...)]` key writes which keyword is the key table,
//! [`crate::attributes::rkb`].

pub const PRESERVE_UNKNOWN_FIELDS: &str = "x-kubernetes-preserve-unknown-fields";
pub const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
pub const EMBEDDED_RESOURCE: &str = "x-kubernetes-embedded-resource";
pub const LIST_TYPE: &str = "x-kubernetes-list-type";
pub const LIST_MAP_KEYS: &str = "x-kubernetes-list-map-keys";
pub const MAP_TYPE: &str = "x-kubernetes-map-type";
pub const VALIDATIONS: &str = "x-kubernetes-validations";

/// The string formats Kubernetes validates (k8s.io/kube-openapi strfmt): what
/// `#[rkb(format = ...)]` accepts, and what `create api --external-crd` can keep.
pub const FORMATS: &[&str] = &[
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "date",
    "date-time",
    "datetime",
    "duration",
    "password",
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
];

/// What `#[rkb(nullable)]` writes while the schema is built, so that the repair can tell
/// a field that asked for `nullable: true` from the `Option<T>` fields schemars marks
/// nullable; it becomes `nullable: true` and never reaches a CRD.
pub const NULLABLE_ASKED: &str = "x-rkb-nullable";

/// How `#[rkb(...)]` replaces a field's schema rather than annotating it. The derive
/// macro chooses it from the field's keys (`int_or_string`, `schemaless`,
/// `embedded_resource`) and names it in the code it emits; `rkb-manifests` applies it
/// when schemars builds the schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shape {
    /// Keep the derived schema and add keywords to it.
    #[default]
    Keep,
    /// `x-kubernetes-int-or-string`, as for k8s-openapi's IntOrString.
    IntOrString,
    /// Any value, kept as is: `x-kubernetes-preserve-unknown-fields`.
    Schemaless,
    /// A whole Kubernetes object (apiVersion, kind, metadata).
    EmbeddedResource,
}

impl Shape {
    /// The variant's name, as generated code spells it (`Shape::IntOrString`).
    pub fn name(self) -> &'static str {
        match self {
            Shape::Keep => "Keep",
            Shape::IntOrString => "IntOrString",
            Shape::Schemaless => "Schemaless",
            Shape::EmbeddedResource => "EmbeddedResource",
        }
    }
}
