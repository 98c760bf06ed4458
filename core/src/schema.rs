//! The `x-kubernetes-*` OpenAPI extensions that CRD schemas may carry
//! (apiextensions.k8s.io/v1 JSONSchemaProps).

pub const PRESERVE_UNKNOWN_FIELDS: &str = "x-kubernetes-preserve-unknown-fields";
pub const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
pub const EMBEDDED_RESOURCE: &str = "x-kubernetes-embedded-resource";
pub const LIST_TYPE: &str = "x-kubernetes-list-type";
pub const LIST_MAP_KEYS: &str = "x-kubernetes-list-map-keys";
pub const MAP_TYPE: &str = "x-kubernetes-map-type";
pub const VALIDATIONS: &str = "x-kubernetes-validations";
