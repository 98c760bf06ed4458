//! RBAC audit: every request a wrapped client sends is recorded as the API server's
//! authorizer sees it (verb, API group, resource/subresource, namespace, name) and
//! checked against the project's `config/rbac/role.yaml` or a reconciler's `#[rbac]`
//! rules, so a missing rule *and* a rule nothing uses both fail the test
//! ([`RbacAudit`]). The requests reach it through [`crate::wrap`].

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};

use crate::lock;

/// One request as Kubernetes' authorizer sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    pub verb: String,
    /// `""` for the core group.
    pub group: String,
    /// `deployments`, or `memcacheds/status` for a subresource.
    pub resource: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = rkb_core::rbac::display_group(&self.group);
        write!(f, "{} {}/{}", self.verb, group, self.resource)?;
        if let Some(ns) = &self.namespace {
            write!(f, " in namespace {ns}")?;
        }
        if let Some(name) = &self.name {
            write!(f, " named {name}")?;
        }
        Ok(())
    }
}

impl Access {
    /// Parses a request path and method like the API server's RequestInfo resolver.
    /// Returns `None` for non-resource requests (discovery, /version, ...).
    pub fn from_request(method: &http::Method, uri: &http::Uri) -> Option<Access> {
        let segments: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
        let (group, rest) = match segments.as_slice() {
            ["api", _version, rest @ ..] => (String::new(), rest),
            ["apis", group, _version, rest @ ..] => ((*group).to_owned(), rest),
            _ => return None,
        };
        let mut parts: Vec<&str> = rest.to_vec();
        let mut namespace = None;
        // `namespaces/<ns>/<resource>...` names a namespace; `namespaces/<name>[/status]`
        // is the Namespace object itself.
        if parts.first() == Some(&"namespaces") && parts.len() > 1 {
            namespace = Some(parts[1].to_owned());
            if parts.len() > 2 && !["status", "finalize"].contains(&parts[2]) {
                parts.drain(..2);
            }
        }
        let resource = (*parts.first()?).to_owned();
        let name = parts.get(1).map(|s| (*s).to_owned());
        let resource = match parts.get(2) {
            Some(sub) => format!("{resource}/{sub}"),
            None => resource,
        };
        let watching = uri
            .query()
            .is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"));
        let verb = match (method.as_str(), name.is_some()) {
            ("GET", true) => "get",
            ("GET", false) if watching => "watch",
            ("GET", false) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "delete",
            ("DELETE", false) => "deletecollection",
            _ => return None,
        };
        // A Namespace object's own namespace is not a scope.
        let namespace = if resource.starts_with("namespaces") {
            None
        } else {
            namespace
        };
        Some(Access {
            verb: verb.into(),
            group,
            resource,
            namespace,
            name,
        })
    }
}

/// Records requests; checks them against RBAC rules.
#[derive(Clone, Debug, Default)]
pub struct RbacAudit {
    accesses: Arc<Mutex<BTreeSet<Access>>>,
    /// Every request in the order sent, repeats included: what a reconcile cost.
    log: Arc<Mutex<Vec<Access>>>,
}

/// One rule of the role, flattened: what it grants, and where.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    pub verb: String,
    /// `""` for the core group.
    pub group: String,
    pub resource: String,
    pub names: Vec<String>,
    /// `None` for a ClusterRole.
    pub namespace: Option<String>,
}

/// Why an RBAC audit failed.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("role YAML: {0}")]
    Yaml(#[from] serde_yaml_ng::Error),
    /// A Role grants only in its namespace: without one, where its rules apply is unknown.
    #[error(
        "the Role {name:?} has no metadata.namespace, so the audit cannot tell where it grants \
         (a Role grants only in its own namespace, never cluster-wide): set its namespace, \
         e.g. `namespace: system` as config/rbac does, or make it a ClusterRole"
    )]
    RoleWithoutNamespace { name: String },
    /// Requests no rule allows, and rules no request used; the message lists both.
    #[error("{}", mismatch_report(missing, excessive))]
    Mismatch {
        missing: Vec<Access>,
        excessive: Vec<Grant>,
    },
}

fn mismatch_report(missing: &[Access], excessive: &[Grant]) -> String {
    let mut report = String::from("RBAC audit failed:\n");
    for access in missing {
        report.push_str(&format!(
            "  missing rule: the reconciler made `{access}`, which the role does not allow\n"
        ));
    }
    for grant in excessive {
        let group = rkb_core::rbac::display_group(&grant.group);
        report.push_str(&format!(
            "  excessive rule: the role allows `{} {group}/{}`{}, which no request used\n",
            grant.verb,
            grant.resource,
            grant
                .namespace
                .as_ref()
                .map(|n| format!(" in namespace {n}"))
                .unwrap_or_default()
        ));
    }
    report
        .push_str("Fix the #[rbac(...)] attributes of the reconciler, then run `make manifests`.");
    report
}

impl RbacAudit {
    pub(crate) fn record(&self, access: Access) {
        lock(&self.log).push(access.clone());
        lock(&self.accesses).insert(access);
    }

    /// Records what the API server authorizes besides the request itself (an apply that
    /// creates is also authorized as a `create`), without counting it as a request.
    pub(crate) fn authorized(&self, access: Access) {
        lock(&self.accesses).insert(access);
    }

    /// Every request sent so far, in order and with repeats (unlike [`RbacAudit::accesses`]):
    /// to count what the controller costs the API server.
    pub fn requests(&self) -> Vec<Access> {
        lock(&self.log).clone()
    }

    /// Marks the list and watch calls of a watcher on a kind (cluster-wide), for a test
    /// that does not run the watcher itself.
    ///
    /// Prefer running the Controller through the audited client, as the generated tests
    /// do: its watches are then recorded as made, and an `.owns(...)` added later without
    /// its rule fails the audit instead of retrying 403s forever in production.
    pub fn watches(&self, group: &str, resource: &str) {
        for verb in ["list", "watch"] {
            self.authorized(Access {
                verb: verb.into(),
                group: group.into(),
                resource: resource.into(),
                namespace: None,
                name: None,
            });
        }
    }

    /// Every request seen so far, sorted.
    pub fn accesses(&self) -> Vec<Access> {
        lock(&self.accesses).iter().cloned().collect()
    }

    /// Checks the recorded requests against a `role.yaml` (a ClusterRole and/or Roles).
    pub fn check_role_file(&self, path: impl AsRef<Path>) -> Result<(), AuditError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| AuditError::Read {
            path: path.to_owned(),
            source,
        })?;
        self.check_role_yaml(&text)
    }

    /// Checks the recorded requests against role YAML: fails when a request is not
    /// allowed (a missing rule) or when a rule allows something no request used (an
    /// excessive rule), listing both.
    pub fn check_role_yaml(&self, yaml: &str) -> Result<(), AuditError> {
        use serde::Deserialize as _;
        let mut grants = Vec::new();
        for doc in serde_yaml_ng::Deserializer::from_str(yaml) {
            let value = serde_yaml_ng::Value::deserialize(doc)?;
            let kind = value
                .get("kind")
                .and_then(|k| k.as_str())
                .unwrap_or_default();
            let (rules, namespace) = match kind {
                "ClusterRole" => {
                    let role: ClusterRole = serde_yaml_ng::from_value(value)?;
                    (role.rules.unwrap_or_default(), None)
                }
                "Role" => {
                    let role: Role = serde_yaml_ng::from_value(value)?;
                    let Some(namespace) = role.metadata.namespace.filter(|ns| !ns.is_empty())
                    else {
                        return Err(AuditError::RoleWithoutNamespace {
                            name: role.metadata.name.unwrap_or_default(),
                        });
                    };
                    (role.rules.unwrap_or_default(), Some(namespace))
                }
                _ => continue,
            };
            for rule in &rules {
                grants.extend(flatten(rule, namespace.as_deref()));
            }
        }
        self.check_grants(grants)
    }

    /// Checks the recorded requests against one reconciler's declared rules
    /// (`Reconciler::rbac_rules()`), for projects whose role.yaml also holds the rules of
    /// other controllers: missing and unused rules fail as with [`Self::check_role_yaml`].
    pub fn check_rules(&self, rules: &[rkb_manifests::rbac::Rule]) -> Result<(), AuditError> {
        let grants = rules
            .iter()
            .flat_map(|rule| flatten(&rule.to_policy_rule(), rule.namespace.as_deref()))
            .collect();
        self.check_grants(grants)
    }

    fn check_grants(&self, grants: Vec<Grant>) -> Result<(), AuditError> {
        let accesses = self.accesses();
        let missing: Vec<Access> = accesses
            .iter()
            .filter(|a| !grants.iter().any(|g| allows(g, a)))
            .cloned()
            .collect();
        let excessive: Vec<Grant> = grants
            .into_iter()
            .filter(|g| !accesses.iter().any(|a| allows(g, a)))
            .collect();
        if missing.is_empty() && excessive.is_empty() {
            Ok(())
        } else {
            Err(AuditError::Mismatch { missing, excessive })
        }
    }
}

fn flatten(rule: &PolicyRule, namespace: Option<&str>) -> Vec<Grant> {
    let mut out = Vec::new();
    for group in rule.api_groups.iter().flatten() {
        for resource in rule.resources.iter().flatten() {
            for verb in &rule.verbs {
                out.push(Grant {
                    verb: verb.clone(),
                    group: group.clone(),
                    resource: resource.clone(),
                    names: rule.resource_names.clone().unwrap_or_default(),
                    namespace: namespace.map(str::to_owned),
                });
            }
        }
    }
    out
}

fn allows(grant: &Grant, access: &Access) -> bool {
    let in_scope = match &grant.namespace {
        None => true,
        Some(ns) => access.namespace.as_deref() == Some(ns.as_str()),
    };
    let named = grant.names.is_empty()
        || access
            .name
            .as_ref()
            .is_some_and(|n| grant.names.contains(n));
    in_scope
        && named
        && grant.verb == access.verb
        && grant.group == access.group
        && grant.resource == access.resource
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The access a request with `method` and `uri` asks for.
    pub(crate) fn access(method: &str, uri: &str) -> Option<Access> {
        Access::from_request(&method.parse().unwrap(), &uri.parse().unwrap())
    }

    #[test]
    fn requests_map_to_rbac_attributes() {
        let a = access("GET", "/apis/apps/v1/namespaces/ns/deployments/web").unwrap();
        assert_eq!(
            (a.verb.as_str(), a.group.as_str(), a.resource.as_str()),
            ("get", "apps", "deployments")
        );
        assert_eq!(
            (a.namespace.as_deref(), a.name.as_deref()),
            (Some("ns"), Some("web"))
        );
        assert_eq!(
            access("GET", "/api/v1/pods?labelSelector=a%3Db")
                .unwrap()
                .verb,
            "list"
        );
        assert_eq!(
            access(
                "GET",
                "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=1"
            )
            .unwrap()
            .verb,
            "watch"
        );
        let status = access(
            "PATCH",
            "/apis/cache.example.com/v1alpha1/namespaces/ns/memcacheds/m/status",
        )
        .unwrap();
        assert_eq!(
            (status.verb.as_str(), status.resource.as_str()),
            ("patch", "memcacheds/status")
        );
        assert_eq!(
            access("DELETE", "/api/v1/namespaces/ns/secrets")
                .unwrap()
                .verb,
            "deletecollection"
        );
        let namespace = access("GET", "/api/v1/namespaces/kube-system").unwrap();
        assert_eq!(
            (
                namespace.resource.as_str(),
                namespace.name.as_deref(),
                namespace.namespace
            ),
            ("namespaces", Some("kube-system"), None)
        );
        assert_eq!(
            access("POST", "/api/v1/namespaces/ns/events").unwrap().verb,
            "create"
        );
        assert_eq!(access("GET", "/version"), None);
    }

    const ROLE: &str = "---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager-role
  namespace: system
rules:
- apiGroups: ['']
  resources: [configmaps]
  verbs: [get]
";

    #[test]
    fn audit_reports_missing_and_excessive_rules() {
        let audit = RbacAudit::default();
        audit.record(access("GET", "/apis/apps/v1/namespaces/a/deployments/web").unwrap());
        audit.record(access("PUT", "/apis/apps/v1/namespaces/a/deployments/web").unwrap());
        audit.record(access("GET", "/api/v1/namespaces/other/configmaps/c").unwrap());
        let error = audit.check_role_yaml(ROLE).unwrap_err();
        let AuditError::Mismatch { missing, excessive } = &error else {
            panic!("{error}");
        };
        assert_eq!((missing.len(), excessive.len()), (2, 2));
        let report = error.to_string();
        assert!(report.contains("missing rule: the reconciler made `update apps/deployments in namespace a named web`"), "{report}");
        assert!(
            report.contains(
                "missing rule: the reconciler made `get core/configmaps in namespace other named c`"
            ),
            "{report}"
        );
        assert!(
            report.contains("excessive rule: the role allows `create apps/deployments`"),
            "{report}"
        );
        assert!(
            report.contains(
                "excessive rule: the role allows `get core/configmaps` in namespace system"
            ),
            "{report}"
        );

        let exact = RbacAudit::default();
        exact.record(access("GET", "/apis/apps/v1/namespaces/a/deployments/web").unwrap());
        exact.record(access("POST", "/apis/apps/v1/namespaces/a/deployments").unwrap());
        exact.record(access("GET", "/api/v1/namespaces/system/configmaps/c").unwrap());
        exact.check_role_yaml(ROLE).unwrap();
    }

    #[test]
    fn a_role_without_a_namespace_is_refused_not_taken_as_cluster_wide() {
        // Every request is allowed if the Role grants everywhere: the audit would pass.
        let audit = RbacAudit::default();
        audit.record(access("GET", "/apis/apps/v1/namespaces/a/deployments/web").unwrap());
        audit.record(access("POST", "/apis/apps/v1/namespaces/a/deployments").unwrap());
        audit.record(access("GET", "/api/v1/namespaces/other/configmaps/c").unwrap());
        let unscoped = ROLE.replace("  namespace: system\n", "");
        let message = audit.check_role_yaml(&unscoped).unwrap_err().to_string();
        assert!(
            message.contains("the Role \"manager-role\" has no metadata.namespace"),
            "{message}"
        );
        assert!(message.contains("set its namespace"), "{message}");
    }

    #[test]
    fn audit_checks_a_reconcilers_declared_rules() {
        let rules = [rkb_manifests::rbac::Rule {
            api_groups: vec!["apps".into()],
            resources: vec!["deployments".into()],
            verbs: vec!["get".into(), "list".into()],
            ..Default::default()
        }];
        let audit = RbacAudit::default();
        audit.record(access("GET", "/apis/apps/v1/namespaces/a/deployments/web").unwrap());
        let report = audit.check_rules(&rules).unwrap_err().to_string();
        assert!(
            report.contains("excessive rule: the role allows `list apps/deployments`"),
            "{report}"
        );
        audit.record(access("GET", "/apis/apps/v1/deployments").unwrap());
        audit.check_rules(&rules).unwrap();
        audit.record(access("DELETE", "/apis/apps/v1/namespaces/a/deployments/web").unwrap());
        assert!(
            audit
                .check_rules(&rules)
                .unwrap_err()
                .to_string()
                .contains("missing rule")
        );
    }
}
