//! RBAC rules declared by reconcilers, and their rendering into the manager's
//! `ClusterRole` and `Role`s.
//!
//! Rendering follows controller-gen's `rbac:roleName=...` generator (v0.16 and
//! later): rules are split per resource, then merged back where that changes
//! nothing but the layout, and sorted, so the output does not depend on the
//! order in which reconcilers declare their rules.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
pub use rkb_core::rbac::RuleError;
use rkb_core::rbac::Shape;

/// One RBAC rule: the counterpart of one `#[rbac(...)]` attribute, or one
/// `// +kubebuilder:rbac:...` marker.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rule {
    /// API groups; `""` is the core group (`"core"` is accepted and mapped to `""`).
    pub api_groups: Vec<String>,
    /// Resources, optionally with a subresource (`"deployments/status"`).
    pub resources: Vec<String>,
    /// Restricts the rule to objects with these names.
    pub resource_names: Vec<String>,
    /// Verbs such as `get`, `list`, `watch`.
    pub verbs: Vec<String>,
    /// Non-resource URLs such as `/metrics`; only valid without groups and resources.
    pub non_resource_urls: Vec<String>,
    /// `Some` puts the rule in a namespaced `Role` instead of the `ClusterRole`.
    pub namespace: Option<String>,
}

/// Implemented by `#[derive(Rbac)]`: the permissions a reconciler needs.
pub trait Rbac {
    /// The rules declared by the type's `#[rbac(...)]` attributes, in order.
    fn rbac_rules() -> Vec<Rule>;
}

impl Rule {
    /// The Kubernetes API form of this rule (namespace aside); empty lists are omitted.
    pub fn to_policy_rule(&self) -> PolicyRule {
        let opt = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
        PolicyRule {
            api_groups: opt(&self.api_groups),
            resources: opt(&self.resources),
            resource_names: opt(&self.resource_names),
            verbs: self.verbs.clone(),
            non_resource_urls: opt(&self.non_resource_urls),
        }
    }

    /// Why the API server would reject this rule, if it would.
    pub fn validate(&self) -> Result<(), RuleError> {
        let shape = Shape {
            groups: !self.api_groups.is_empty(),
            resources: !self.resources.is_empty(),
            resource_names: !self.resource_names.is_empty(),
            verbs: !self.verbs.is_empty(),
            urls: !self.non_resource_urls.is_empty(),
            namespace: self.namespace.is_some(),
        };
        rkb_core::rbac::validate_rule(shape, &self.verbs, self.namespace.as_deref())
    }
}

/// A rule while it is being normalised: every field a sorted set.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Work {
    groups: BTreeSet<String>,
    resources: BTreeSet<String>,
    names: BTreeSet<String>,
    urls: BTreeSet<String>,
    verbs: BTreeSet<String>,
}

type Field = fn(&mut Work) -> &mut BTreeSet<String>;

/// Unions `field` across rules that are equal in every other field. Because a
/// rule grants the cross product of its fields, this never changes what is
/// granted, only how many rules say it.
fn merge_on(rules: Vec<Work>, field: Field) -> Vec<Work> {
    let mut merged: BTreeMap<Work, BTreeSet<String>> = BTreeMap::new();
    for mut rule in rules {
        let values = std::mem::take(field(&mut rule));
        merged.entry(rule).or_default().extend(values);
    }
    merged
        .into_iter()
        .map(|(mut rule, values)| {
            *field(&mut rule) = values;
            rule
        })
        .collect()
}

/// Normalises rules the way controller-gen does: `"core"` becomes `""`, rules
/// are split per resource, verbs are unioned for identical
/// groups/resources/names/URLs, then resources, groups and URLs are merged
/// where the rest is identical, and every list is de-duplicated and sorted.
///
/// The result is sorted by namespace (cluster-wide first), then by
/// controller-gen's rule key, so it does not depend on input order.
pub fn normalize(rules: &[Rule]) -> Vec<Rule> {
    let mut by_namespace: BTreeMap<Option<&str>, Vec<Work>> = BTreeMap::new();
    for rule in rules {
        let set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<_>>();
        let base = Work {
            groups: rule
                .api_groups
                .iter()
                .map(|g| rkb_core::rbac::api_group(g).to_owned())
                .collect(),
            resources: BTreeSet::new(),
            names: set(&rule.resource_names),
            urls: set(&rule.non_resource_urls),
            verbs: set(&rule.verbs),
        };
        let split = by_namespace.entry(rule.namespace.as_deref()).or_default();
        if rule.resources.is_empty() {
            split.push(base);
        } else {
            split.extend(rule.resources.iter().map(|r| Work {
                resources: BTreeSet::from([r.clone()]),
                ..base.clone()
            }));
        }
    }

    let verbs: Field = |w| &mut w.verbs;
    let mut out = Vec::new();
    for (namespace, rules) in by_namespace {
        let mut rules = merge_on(rules, verbs);
        // Merging one field can make two rules equal in all but their verbs
        // (controller-gen lets one overwrite the other); union those instead.
        for field in [
            (|w| &mut w.resources) as Field,
            |w| &mut w.groups,
            |w| &mut w.urls,
        ] {
            rules = merge_on(merge_on(rules, field), verbs);
        }
        let mut keyed: Vec<(String, Work)> = rules.into_iter().map(|w| (sort_key(&w), w)).collect();
        keyed.sort();
        out.extend(keyed.into_iter().map(|(_, w)| {
            let verbs = if w.verbs.contains("*") {
                vec!["*".to_owned()]
            } else {
                w.verbs.into_iter().collect()
            };
            Rule {
                api_groups: w.groups.into_iter().collect(),
                resources: w.resources.into_iter().collect(),
                resource_names: w.names.into_iter().collect(),
                verbs,
                non_resource_urls: w.urls.into_iter().collect(),
                namespace: namespace.map(str::to_owned),
            }
        }));
    }
    out
}

/// controller-gen's rule order: its key string, compared bytewise.
fn sort_key(w: &Work) -> String {
    let join = |s: &BTreeSet<String>| s.iter().map(String::as_str).collect::<Vec<_>>().join("&");
    format!(
        "{} + {} + {} + {}",
        join(&w.groups),
        join(&w.resources),
        join(&w.names),
        join(&w.urls)
    )
}

/// The roles for `rules`: a `ClusterRole` named `name` (always, possibly with
/// no rules) and a `Role` named `name` for each namespace that rules mention,
/// sorted by namespace. Rules are normalised first; they are not validated.
pub fn roles(rules: &[Rule], name: &str) -> (ClusterRole, Vec<Role>) {
    let mut cluster = Vec::new();
    let mut namespaced: BTreeMap<String, Vec<PolicyRule>> = BTreeMap::new();
    for rule in normalize(rules) {
        match &rule.namespace {
            None => cluster.push(rule.to_policy_rule()),
            Some(ns) => namespaced
                .entry(ns.clone())
                .or_default()
                .push(rule.to_policy_rule()),
        }
    }
    let cluster_role = ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        // `rules: []` is valid and says "no permissions" more plainly than no key.
        rules: Some(cluster),
        aggregation_rule: None,
    };
    let roles = namespaced
        .into_iter()
        .map(|(namespace, rules)| Role {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            rules: Some(rules),
        })
        .collect();
    (cluster_role, roles)
}

/// The namespace placeholder of a project's `config/`: `config/default` replaces it
/// with the manager's own namespace (kubebuilder's convention), so a Role in it is one
/// in the manager's namespace, whatever that is called once deployed.
pub const MANAGER_NAMESPACE: &str = "system";

/// The manager's service account as `config/rbac/service_account.yaml` names it, before
/// `config/default` adds its name prefix.
pub const MANAGER_SERVICE_ACCOUNT: &str = "controller-manager";

/// The RoleBinding that grants `role` to the manager's service account, named as
/// kubebuilder names the ClusterRoleBinding of `manager-role` (`manager-rolebinding`).
/// Names and namespace are `config/`'s placeholders: kustomize makes them the deployed ones.
pub fn role_binding(role: &Role) -> RoleBinding {
    let name = role.metadata.name.clone().unwrap_or_default();
    RoleBinding {
        metadata: ObjectMeta {
            name: Some(binding_name(&name)),
            namespace: role.metadata.namespace.clone(),
            ..ObjectMeta::default()
        },
        role_ref: role_ref(&name),
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: MANAGER_SERVICE_ACCOUNT.to_owned(),
            namespace: Some(MANAGER_NAMESPACE.to_owned()),
            ..Subject::default()
        }]),
    }
}

/// A reference to the Role `name`. Built from JSON: whether `apiGroup` is optional differs
/// between the Kubernetes versions k8s-openapi offers, and a library compiles with the one
/// the application picks.
fn role_ref(name: &str) -> RoleRef {
    serde_json::from_value(serde_json::json!({
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": name,
    }))
    .expect("a RoleRef of three strings")
}

/// The name of the binding of the role `role`: `manager-role` -> `manager-rolebinding`.
pub fn binding_name(role: &str) -> String {
    format!("{role}binding")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Rule {
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
        Rule {
            api_groups: v(groups),
            resources: v(resources),
            verbs: v(verbs),
            ..Rule::default()
        }
    }

    fn names(mut rule: Rule, names: &[&str]) -> Rule {
        rule.resource_names = names.iter().map(|s| s.to_string()).collect();
        rule
    }

    fn urls(urls: &[&str], verbs: &[&str]) -> Rule {
        let v = |s: &[&str]| s.iter().map(|s| s.to_string()).collect();
        Rule {
            non_resource_urls: v(urls),
            verbs: v(verbs),
            ..Rule::default()
        }
    }

    fn ns(mut rule: Rule, ns: &str) -> Rule {
        rule.namespace = Some(ns.to_owned());
        rule
    }

    #[test]
    fn normalize_table() {
        let cases: Vec<(&str, Vec<Rule>, Vec<Rule>)> = vec![
            ("empty", vec![], vec![]),
            (
                "core is the empty group",
                vec![r(&["core"], &["pods"], &["get"])],
                vec![r(&[""], &["pods"], &["get"])],
            ),
            (
                "duplicates in lists are removed and lists sorted",
                vec![r(&["apps", "apps"], &["b", "a"], &["watch", "get", "get"])],
                vec![r(&["apps"], &["a", "b"], &["get", "watch"])],
            ),
            (
                "identical rules collapse",
                vec![r(&["apps"], &["deployments"], &["get"]); 3],
                vec![r(&["apps"], &["deployments"], &["get"])],
            ),
            (
                "verbs are unioned for the same group and resource",
                vec![
                    r(&["apps"], &["deployments"], &["get", "list"]),
                    r(&["apps"], &["deployments"], &["watch", "get"]),
                ],
                vec![r(&["apps"], &["deployments"], &["get", "list", "watch"])],
            ),
            (
                "resources with the same verbs are merged",
                vec![
                    r(&["apps"], &["deployments"], &["get"]),
                    r(&["apps"], &["statefulsets"], &["get"]),
                ],
                vec![r(&["apps"], &["deployments", "statefulsets"], &["get"])],
            ),
            (
                "rules are split per resource before verbs are unioned",
                vec![
                    r(&["apps"], &["deployments", "statefulsets"], &["get"]),
                    r(&["apps"], &["deployments"], &["delete"]),
                ],
                vec![
                    r(&["apps"], &["deployments"], &["delete", "get"]),
                    r(&["apps"], &["statefulsets"], &["get"]),
                ],
            ),
            (
                "groups with the same resources and verbs are merged",
                vec![
                    r(&["a.example.com"], &["widgets"], &["get"]),
                    r(&["b.example.com"], &["widgets"], &["get"]),
                ],
                vec![r(
                    &["a.example.com", "b.example.com"],
                    &["widgets"],
                    &["get"],
                )],
            ),
            (
                "different verbs keep rules apart",
                vec![
                    r(&["apps"], &["deployments"], &["get"]),
                    r(&["apps"], &["statefulsets"], &["list"]),
                ],
                vec![
                    r(&["apps"], &["deployments"], &["get"]),
                    r(&["apps"], &["statefulsets"], &["list"]),
                ],
            ),
            (
                "resource names keep rules apart",
                vec![
                    names(r(&[""], &["configmaps"], &["get"]), &["b", "a"]),
                    r(&[""], &["configmaps"], &["list"]),
                ],
                vec![
                    r(&[""], &["configmaps"], &["list"]),
                    names(r(&[""], &["configmaps"], &["get"]), &["a", "b"]),
                ],
            ),
            (
                "urls with the same verbs are merged",
                vec![urls(&["/metrics"], &["get"]), urls(&["/healthz"], &["get"])],
                vec![urls(&["/healthz", "/metrics"], &["get"])],
            ),
            (
                "a wildcard verb absorbs the others",
                vec![
                    r(&["apps"], &["deployments"], &["get"]),
                    r(&["apps"], &["deployments"], &["*"]),
                ],
                vec![r(&["apps"], &["deployments"], &["*"])],
            ),
            (
                // A group merge creates a twin of an existing multi-group rule;
                // its verbs are unioned rather than one rule being lost.
                "merges never drop a rule",
                vec![
                    r(&["a", "b"], &["x"], &["list"]),
                    r(&["a"], &["x"], &["get"]),
                    r(&["b"], &["x"], &["get"]),
                ],
                vec![r(&["a", "b"], &["x"], &["get", "list"])],
            ),
            (
                "sorted by controller-gen's key",
                vec![
                    urls(&["/metrics"], &["get"]),
                    r(&["z.example.com"], &["zs"], &["get"]),
                    r(&["apps"], &["deployments"], &["list"]),
                    r(&[""], &["pods"], &["list"]),
                ],
                vec![
                    urls(&["/metrics"], &["get"]),
                    r(&[""], &["pods"], &["list"]),
                    r(&["apps"], &["deployments"], &["list"]),
                    r(&["z.example.com"], &["zs"], &["get"]),
                ],
            ),
            (
                "namespaces are normalised separately, cluster-wide first",
                vec![
                    ns(r(&["apps"], &["deployments"], &["get"]), "b"),
                    ns(r(&["apps"], &["deployments"], &["list"]), "a"),
                    r(&["apps"], &["deployments"], &["watch"]),
                    ns(r(&["apps"], &["statefulsets"], &["get"]), "b"),
                ],
                vec![
                    r(&["apps"], &["deployments"], &["watch"]),
                    ns(r(&["apps"], &["deployments"], &["list"]), "a"),
                    ns(
                        r(&["apps"], &["deployments", "statefulsets"], &["get"]),
                        "b",
                    ),
                ],
            ),
        ];
        for (name, input, expected) in cases {
            assert_eq!(normalize(&input), expected, "case: {name}");
            let mut reversed = input.clone();
            reversed.reverse();
            assert_eq!(normalize(&reversed), expected, "case (reversed): {name}");
        }
    }

    #[test]
    fn roles_split_by_namespace() {
        let rules = vec![
            r(&["apps"], &["deployments"], &["get"]),
            ns(r(&[""], &["configmaps"], &["get"]), "system"),
            ns(r(&[""], &["secrets"], &["get"]), "other"),
        ];
        let (cluster, roles) = roles(&rules, "manager-role");
        assert_eq!(cluster.metadata.name.as_deref(), Some("manager-role"));
        assert_eq!(cluster.rules.as_ref().map(Vec::len), Some(1));
        let placed: Vec<_> = roles
            .iter()
            .map(|r| {
                (
                    r.metadata.namespace.as_deref().unwrap(),
                    r.metadata.name.as_deref().unwrap(),
                    r.rules.as_ref().unwrap()[0].resources.clone().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            placed,
            vec![
                ("other", "manager-role", vec!["secrets".to_owned()]),
                ("system", "manager-role", vec!["configmaps".to_owned()]),
            ]
        );
    }

    #[test]
    fn no_rules_still_make_a_cluster_role() {
        let (cluster, roles) = roles(&[], "manager-role");
        assert_eq!(cluster.rules, Some(vec![]));
        assert!(roles.is_empty());
    }

    #[test]
    fn policy_rule_omits_empty_lists() {
        let rule = urls(&["/metrics"], &["get"]).to_policy_rule();
        assert_eq!(rule.api_groups, None);
        assert_eq!(rule.resources, None);
        assert_eq!(rule.non_resource_urls, Some(vec!["/metrics".to_owned()]));
    }

    #[test]
    fn validate_rejects_what_the_api_server_rejects() {
        assert!(r(&["apps"], &["deployments"], &["get"]).validate().is_ok());
        assert!(urls(&["/metrics"], &["get"]).validate().is_ok());
        assert!(r(&["apps"], &["deployments"], &[]).validate().is_err());
        assert!(r(&[], &["deployments"], &["get"]).validate().is_err());
        assert!(r(&["apps"], &[], &["get"]).validate().is_err());
        assert!(
            ns(urls(&["/metrics"], &["get"]), "system")
                .validate()
                .is_err()
        );
        let mut mixed = urls(&["/metrics"], &["get"]);
        mixed.resources = vec!["pods".into()];
        assert!(mixed.validate().is_err());
        assert!(
            ns(r(&[""], &["pods"], &["get"]), "Bad_NS")
                .validate()
                .is_err()
        );
    }
}
