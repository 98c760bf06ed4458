//! The keys of `#[rbac(...)]`: one PolicyRule each, controller-gen's
//! `+kubebuilder:rbac` marker with Rust spellings.

use crate::rbac::Field;

/// One key of `#[rbac(...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub name: &'static str,
    /// The field of the rule it sets.
    pub field: Field,
    /// The key of controller-gen's `+kubebuilder:rbac` marker that does the same.
    pub marker: &'static str,
    pub example: &'static str,
    pub doc: &'static str,
}

/// Every key of `#[rbac(...)]`.
pub const KEYS: &[Key] = &[
    Key {
        name: "groups",
        field: Field::Groups,
        marker: "+kubebuilder:rbac:groups=apps",
        example: r#"groups = ["apps"]"#,
        doc: "API groups; `\"core\"` (or `\"\"`) is the core group.",
    },
    Key {
        name: "resources",
        field: Field::Resources,
        marker: "+kubebuilder:rbac:resources=deployments",
        example: r#"resources = ["deployments"]"#,
        doc: "Resources of those groups, plural and lowercase, optionally with a \
              subresource (`deployments/status`).",
    },
    Key {
        name: "resource_names",
        field: Field::ResourceNames,
        marker: "+kubebuilder:rbac:resourceNames=my-config",
        example: r#"resource_names = ["my-config"]"#,
        doc: "Restricts the rule to the objects of these names.",
    },
    Key {
        name: "verbs",
        field: Field::Verbs,
        marker: "+kubebuilder:rbac:verbs=get;list;watch",
        example: "verbs = [get, list, watch]",
        doc: "What the reconciler may do; a verb close to a known one is taken for a typo, \
              and wildcards are refused.",
    },
    Key {
        name: "namespace",
        field: Field::Namespace,
        marker: "+kubebuilder:rbac:namespace=system",
        example: r#"namespace = "system""#,
        doc: "Makes the rule a Role with a RoleBinding in this namespace (`\"system\"` is the \
              manager's own) instead of part of the ClusterRole.",
    },
    Key {
        name: "urls",
        field: Field::Urls,
        marker: "+kubebuilder:rbac:urls=/metrics",
        example: r#"urls = ["/metrics"]"#,
        doc: "Non-resource URLs, in a rule of their own (cluster-scoped only).",
    },
];

/// Spellings people bring from RBAC YAML or controller-gen markers, and the key each
/// means: suggested for an unknown key.
pub const ALIASES: &[(&str, &str)] = &[
    ("apiGroups", "groups"),
    ("api_groups", "groups"),
    ("nonResourceURLs", "urls"),
    ("non_resource_urls", "urls"),
];

/// The key that sets `field`.
pub fn key(field: Field) -> &'static Key {
    KEYS.iter()
        .find(|key| key.field == field)
        .expect("every field of a rule has a key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_one_key_and_every_alias_names_a_key() {
        for field in [
            Field::Groups,
            Field::Resources,
            Field::ResourceNames,
            Field::Verbs,
            Field::Urls,
            Field::Namespace,
        ] {
            assert_eq!(KEYS.iter().filter(|k| k.field == field).count(), 1);
            assert!(key(field).example.starts_with(key(field).name));
        }
        for (_, key) in ALIASES {
            assert!(KEYS.iter().any(|k| k.name == *key), "{key}");
        }
    }
}
