//! `config/rbac/role.yaml`, and `config/namespaced-rbac/` for Roles in namespaces other
//! than the manager's.

use std::path::PathBuf;

use crate::rbac;

use super::{Error, Manifests, NAMESPACED_RBAC_FILES, ROLE_FILE, yaml_document};

impl Manifests {
    /// `config/rbac/role.yaml`: the ClusterRole, and the Role in the manager's namespace
    /// ([`rbac::MANAGER_NAMESPACE`]) with its RoleBinding, which `config/default` moves
    /// there; and, when rules name other namespaces, their Roles and RoleBindings in
    /// [`NAMESPACED_RBAC_DIR`], out of reach of that namespace transformer.
    pub(super) fn render_roles(&self) -> Result<Vec<(PathBuf, String)>, Error> {
        if !rkb_core::names::is_dns1123_subdomain(&self.role_name) {
            return Err(Error::InvalidRoleName(self.role_name.clone()));
        }
        for rule in &self.rules {
            rule.validate().map_err(|reason| Error::InvalidRule {
                rule: Box::new(rule.clone()),
                reason,
            })?;
        }
        let (cluster_role, roles) = rbac::roles(&self.rules, &self.role_name);
        let mut own = yaml_document("ClusterRole", &cluster_role)?;
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
