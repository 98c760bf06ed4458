//! `config/rbac/role.yaml`, and `config/namespaced-rbac/` for Roles in namespaces other
//! than the manager's.

use std::path::PathBuf;

use crate::rbac;

use super::{Error, Manifests, NAMESPACED_RBAC_FILES, ROLE_FILE, yaml_document};

impl Manifests {
    /// `config/rbac/role.yaml`: the ClusterRole, and the Role in the manager's namespace
    /// ([`rbac::MANAGER_NAMESPACE`]) with its RoleBinding, which `config/default` moves
    /// there; and, when rules name other namespaces, their Roles and RoleBindings in
    /// [`NAMESPACED_RBAC_DIR`], out of reach of that namespace transformer. A
    /// [namespaced](Manifests::namespaced) operator has no ClusterRole: its cluster-wide
    /// rules are the Role's in the manager's namespace.
    pub(super) fn render_roles(&self) -> Result<Vec<(PathBuf, String)>, Error> {
        if let Some(unread) = &self.unread {
            return Err(Error::Sources(unread.clone()));
        }
        if !rkb_core::names::is_dns1123_subdomain(&self.role_name) {
            return Err(Error::InvalidRoleName(self.role_name.clone()));
        }
        let mut rules = self.rules.clone();
        if self.namespaced {
            for rule in rules.iter_mut().filter(|r| r.namespace.is_none()) {
                rule.namespace = Some(rbac::MANAGER_NAMESPACE.to_owned());
            }
        }
        for rule in &rules {
            rule.validate().map_err(|reason| Error::InvalidRule {
                rule: Box::new(rule.clone()),
                reason,
            })?;
        }
        let (cluster_role, roles) = rbac::roles(&rules, &self.role_name);
        let mut own = if self.namespaced {
            String::new()
        } else {
            yaml_document("ClusterRole", &cluster_role)?
        };
        let mut elsewhere = String::new();
        for role in &roles {
            let in_own = role.metadata.namespace.as_deref() == Some(rbac::MANAGER_NAMESPACE);
            let out = if in_own { &mut own } else { &mut elsewhere };
            out.push_str(&yaml_document("Role", role)?);
            out.push_str(&yaml_document("RoleBinding", &rbac::role_binding(role))?);
        }
        let mut files = vec![(PathBuf::from(ROLE_FILE), own)];
        if !elsewhere.is_empty() {
            let [kustomization, role_file] = NAMESPACED_RBAC_FILES.map(PathBuf::from);
            files.push((
                kustomization,
                namespaced_rbac_kustomization(&self.role_name),
            ));
            files.push((role_file, elsewhere));
        }
        Ok(files)
    }
}

/// `config/namespaced-rbac/kustomization.yaml`: `config/default` plus the Roles in other
/// namespaces, their names and the manager's service account taken from what
/// `config/default` made of them (its namePrefix and namespace), by kustomize replacements.
fn namespaced_rbac_kustomization(role: &str) -> String {
    let binding = rbac::binding_name(role);
    let account = rbac::MANAGER_SERVICE_ACCOUNT;
    format!(
        "# Written by `make manifests`, like role.yaml beside it: the manager with its Roles in
# namespaces other than its own, which config/default's namespace transformer would move into
# the manager's namespace. `make deploy` applies this directory while it exists.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ../default
- role.yaml
# Service account, Role and RoleBinding names as config/default renders them (the
# bindings' own names last: targets are selected by the names they have so far).
replacements:
- source: {{kind: ServiceAccount, name: {account}, fieldPath: metadata.name}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [subjects.0.name]
- source: {{kind: ServiceAccount, name: {account}, fieldPath: metadata.namespace}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [subjects.0.namespace]
- source: {{kind: ClusterRole, name: {role}, fieldPath: metadata.name}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [roleRef.name]
  - select: {{kind: Role, name: {role}}}
    fieldPaths: [metadata.name]
- source: {{kind: ClusterRoleBinding, name: {binding}, fieldPath: metadata.name}}
  targets:
  - select: {{kind: RoleBinding, name: {binding}}}
    fieldPaths: [metadata.name]
"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::Rule;

    fn rule(resource: &str, namespace: Option<&str>) -> Rule {
        Rule {
            api_groups: vec!["cache.example.com".into()],
            resources: vec![resource.into()],
            resource_names: vec![],
            verbs: vec!["list".into(), "watch".into()],
            non_resource_urls: vec![],
            namespace: namespace.map(str::to_owned),
        }
    }

    fn kinds(yaml: &str) -> Vec<String> {
        yaml.lines()
            .filter_map(|line| line.strip_prefix("kind: "))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_namespaced_operator_gets_a_role_in_its_namespace_instead_of_a_cluster_role() {
        let rules = vec![vec![
            rule("memcacheds", None),
            rule("caches", Some("other")),
        ]];
        let files = |manifests: Manifests| manifests.render_roles().unwrap();

        let cluster_wide = files(Manifests::new(vec![], rules.clone()));
        assert_eq!(kinds(&cluster_wide[0].1), ["ClusterRole"]);

        let namespaced = files(Manifests::new(vec![], rules).namespaced());
        let (path, own) = &namespaced[0];
        assert_eq!(path, &PathBuf::from(super::super::ROLE_FILE));
        assert_eq!(kinds(own), ["Role", "RoleBinding"], "{own}");
        assert!(
            own.contains("namespace: system") && own.contains("- memcacheds"),
            "{own}"
        );
        assert!(
            !own.contains("caches"),
            "the other namespace's rule stays apart: {own}"
        );
        assert!(
            namespaced[2].1.contains("namespace: other"),
            "{namespaced:?}"
        );
    }

    #[test]
    fn a_namespaced_operator_cannot_be_granted_non_resource_urls() {
        let urls = Rule {
            non_resource_urls: vec!["/healthz".into()],
            verbs: vec!["get".into()],
            ..rule("x", None)
        };
        let urls = Rule {
            api_groups: vec![],
            resources: vec![],
            ..urls
        };
        let manifests = Manifests::new(vec![], vec![vec![urls.clone()]]);
        assert!(manifests.render_roles().is_ok());
        let error = Manifests::new(vec![], vec![vec![urls]])
            .namespaced()
            .render_roles()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("non-resource URLs cannot be granted in a namespace"),
            "{error}"
        );
    }
}
