//! The RBAC rule model: verbs, API groups, resources, and which combinations make a
//! PolicyRule the API server accepts (k8s.io/kubernetes/pkg/apis/rbac/validation).

use std::fmt;

use crate::names::{self, NameError};

/// How a rule names the core API group (pods, configmaps, ...) in controller-gen markers;
/// Kubernetes itself writes it as `""`.
pub const CORE_GROUP_ALIAS: &str = "core";

/// The API group as Kubernetes writes it: [`CORE_GROUP_ALIAS`] becomes `""`.
pub fn api_group(group: &str) -> &str {
    if group == CORE_GROUP_ALIAS { "" } else { group }
}

/// The API group as people read it: `""` is shown as [`CORE_GROUP_ALIAS`].
pub fn display_group(group: &str) -> &str {
    if group.is_empty() {
        CORE_GROUP_ALIAS
    } else {
        group
    }
}

/// The verbs Kubernetes' own authorizers check: the API verbs plus the special ones
/// (`impersonate`, `bind`, `escalate`, `use`).
pub const KNOWN_VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "impersonate",
    "bind",
    "escalate",
    "use",
];

/// The wildcard that grants every verb, group or resource.
pub const WILDCARD: &str = "*";

/// A verb of a rule. The API server accepts any verb: besides the known ones, APIs
/// check their own (`approve` and `sign` on `signers` for CertificateSigningRequests,
/// `attest` for ...), so a custom verb is valid as long as it is lowercase letters, the
/// way every authorizer spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb<'a> {
    Known(&'static str),
    Wildcard,
    Custom(&'a str),
}

/// Why a verb cannot be granted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerbError {
    /// Not a known verb and not lowercase letters.
    Invalid(String),
}

impl fmt::Display for VerbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerbError::Invalid(verb) => write!(
                f,
                "invalid verb `{verb}`: verbs are lowercase letters, one of: {}, or a custom \
                 verb of an API such as `approve`",
                KNOWN_VERBS.join(", ")
            ),
        }
    }
}

impl std::error::Error for VerbError {}

impl<'a> Verb<'a> {
    pub fn parse(verb: &'a str) -> Result<Self, VerbError> {
        if verb == WILDCARD {
            return Ok(Verb::Wildcard);
        }
        if let Some(known) = KNOWN_VERBS.iter().find(|v| **v == verb) {
            return Ok(Verb::Known(known));
        }
        if !verb.is_empty() && verb.chars().all(|c| c.is_ascii_lowercase()) {
            Ok(Verb::Custom(verb))
        } else {
            Err(VerbError::Invalid(verb.to_owned()))
        }
    }
}

/// `resource` or `resource/subresource`: lowercase letters, digits, `-` and `.`.
pub fn is_resource(s: &str) -> bool {
    let mut parts = s.split('/');
    let valid = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
    };
    // `resource` or `resource/subresource`, nothing deeper.
    parts.next().is_some_and(valid) && parts.next().is_none_or(valid) && parts.next().is_none()
}

/// One field of a rule, as errors name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Groups,
    Resources,
    ResourceNames,
    Verbs,
    Urls,
    Namespace,
}

/// Which fields a rule sets: enough to judge its shape.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub groups: bool,
    pub resources: bool,
    pub resource_names: bool,
    pub verbs: bool,
    pub urls: bool,
    pub namespace: bool,
}

/// Why the API server would reject a rule of some shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeError {
    NoVerbs,
    /// A resource field (groups, resources or resource names) beside non-resource URLs.
    UrlsWith(Field),
    /// Non-resource URLs are cluster-wide: only a ClusterRole can grant them.
    NamespacedUrls,
    ResourcesWithoutGroups,
    GroupsWithoutResources,
    NamesWithoutResources,
    /// No resources and no URLs.
    GrantsNothing,
}

impl ShapeError {
    /// The field the error is about; `None` when it concerns the rule as a whole.
    pub fn field(self) -> Option<Field> {
        match self {
            ShapeError::NoVerbs | ShapeError::GrantsNothing => None,
            ShapeError::UrlsWith(field) => Some(field),
            ShapeError::NamespacedUrls => Some(Field::Namespace),
            ShapeError::ResourcesWithoutGroups => Some(Field::Resources),
            ShapeError::GroupsWithoutResources => Some(Field::Groups),
            ShapeError::NamesWithoutResources => Some(Field::ResourceNames),
        }
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShapeError::NoVerbs => "a rule needs at least one verb",
            ShapeError::UrlsWith(_) => "a rule cannot grant both resources and non-resource URLs",
            ShapeError::NamespacedUrls => "non-resource URLs cannot be granted in a namespace",
            ShapeError::ResourcesWithoutGroups => "a resource rule needs at least one API group",
            ShapeError::GroupsWithoutResources | ShapeError::NamesWithoutResources => {
                "a resource rule needs at least one resource"
            }
            ShapeError::GrantsNothing => {
                "a rule needs resources (with API groups) or non-resource URLs"
            }
        })
    }
}

impl std::error::Error for ShapeError {}

impl Shape {
    /// Every way the shape breaks the API server's PolicyRule validation, most
    /// fundamental first (empty when the rule is fine).
    pub fn errors(&self) -> Vec<ShapeError> {
        let mut errors = Vec::new();
        if !self.verbs {
            errors.push(ShapeError::NoVerbs);
        }
        if self.urls {
            for (set, field) in [
                (self.groups, Field::Groups),
                (self.resources, Field::Resources),
                (self.resource_names, Field::ResourceNames),
            ] {
                if set {
                    errors.push(ShapeError::UrlsWith(field));
                }
            }
            if self.namespace {
                errors.push(ShapeError::NamespacedUrls);
            }
        } else if self.resources && !self.groups {
            errors.push(ShapeError::ResourcesWithoutGroups);
        } else if self.groups && !self.resources {
            errors.push(ShapeError::GroupsWithoutResources);
        } else if !self.groups {
            errors.push(if self.resource_names {
                ShapeError::NamesWithoutResources
            } else {
                ShapeError::GrantsNothing
            });
        }
        errors
    }
}

/// Why a rule is invalid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleError {
    Shape(ShapeError),
    Verb(VerbError),
    Namespace { namespace: String, error: NameError },
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleError::Shape(error) => error.fmt(f),
            RuleError::Verb(error) => error.fmt(f),
            RuleError::Namespace { namespace, .. } => {
                write!(f, "namespace {namespace:?} is not a DNS-1123 label")
            }
        }
    }
}

impl std::error::Error for RuleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RuleError::Shape(error) => Some(error),
            RuleError::Verb(error) => Some(error),
            RuleError::Namespace { error, .. } => Some(error),
        }
    }
}

/// Checks a rule as the API server would: its shape, its verbs and its namespace.
pub fn validate_rule<S: AsRef<str>>(
    shape: Shape,
    verbs: &[S],
    namespace: Option<&str>,
) -> Result<(), RuleError> {
    if let Some(error) = shape.errors().into_iter().next() {
        return Err(RuleError::Shape(error));
    }
    for verb in verbs {
        Verb::parse(verb.as_ref()).map_err(RuleError::Verb)?;
    }
    if let Some(namespace) = namespace {
        names::dns1123_label(namespace).map_err(|error| RuleError::Namespace {
            namespace: namespace.to_owned(),
            error,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs() {
        assert_eq!(Verb::parse("get"), Ok(Verb::Known("get")));
        assert_eq!(Verb::parse("*"), Ok(Verb::Wildcard));
        assert_eq!(Verb::parse("approve"), Ok(Verb::Custom("approve")));
        assert!(Verb::parse("Patch").is_err());
        assert!(Verb::parse("").is_err());
        assert!(Verb::parse("get list").is_err());
    }

    #[test]
    fn groups_and_resources() {
        assert_eq!(api_group("core"), "");
        assert_eq!(api_group(""), "");
        assert_eq!(api_group("apps"), "apps");
        assert_eq!(display_group(""), "core");
        assert_eq!(display_group("apps"), "apps");
        assert!(is_resource("pods"));
        assert!(is_resource("deployments/status"));
        assert!(!is_resource("Pods"));
        assert!(!is_resource("a/b/c"));
        assert!(!is_resource("pods/"));
    }

    #[test]
    fn shapes() {
        let resource = Shape {
            groups: true,
            resources: true,
            verbs: true,
            ..Shape::default()
        };
        assert_eq!(resource.errors(), []);
        let url = Shape {
            urls: true,
            verbs: true,
            ..Shape::default()
        };
        assert_eq!(url.errors(), []);
        assert_eq!(
            Shape {
                verbs: false,
                ..resource
            }
            .errors(),
            [ShapeError::NoVerbs]
        );
        assert_eq!(
            Shape {
                groups: true,
                namespace: true,
                ..url
            }
            .errors(),
            [
                ShapeError::UrlsWith(Field::Groups),
                ShapeError::NamespacedUrls
            ]
        );
        assert_eq!(
            Shape {
                groups: false,
                ..resource
            }
            .errors(),
            [ShapeError::ResourcesWithoutGroups]
        );
        assert_eq!(
            Shape {
                resources: false,
                ..resource
            }
            .errors(),
            [ShapeError::GroupsWithoutResources]
        );
        let names_only = Shape {
            resource_names: true,
            verbs: true,
            ..Shape::default()
        };
        assert_eq!(names_only.errors(), [ShapeError::NamesWithoutResources]);
        assert_eq!(
            Shape {
                verbs: true,
                ..Shape::default()
            }
            .errors(),
            [ShapeError::GrantsNothing]
        );
    }

    #[test]
    fn rules() {
        let shape = Shape {
            groups: true,
            resources: true,
            verbs: true,
            namespace: true,
            ..Shape::default()
        };
        assert_eq!(validate_rule(shape, &["approve"], Some("system")), Ok(()));
        assert!(matches!(
            validate_rule(shape, &["Get"], None),
            Err(RuleError::Verb(_))
        ));
        assert_eq!(
            validate_rule(shape, &["get"], Some("Bad"))
                .unwrap_err()
                .to_string(),
            "namespace \"Bad\" is not a DNS-1123 label"
        );
    }
}
