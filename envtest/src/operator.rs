//! Acting as the operator: its ServiceAccount with its own RBAC applied, so that the API
//! server's authorizer judges every request the way it will in a cluster.

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Subject};
use kube::api::{DynamicObject, PostParams};
use kube::{Api, Client, ResourceExt};

use crate::apply::kind_of;
use crate::{Environment, Error};

/// The kinds of a kustomize build that make up who the operator is and what it may do.
const RBAC_KINDS: [&str; 6] = [
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
];

/// How long the authorizer may take to see new bindings (its informers lag by moments).
const PROPAGATION_TIMEOUT: Duration = Duration::from_secs(15);

impl Environment {
    /// Applies the RBAC of a kustomize tree, normally the project's `config/default`
    /// (its Namespaces, ServiceAccounts, Roles, ClusterRoles and their bindings, nothing
    /// else), and returns a client acting as its one ServiceAccount once the API server's
    /// authorizer has seen every binding of it. A request the generated roles do not
    /// allow then fails with the API server's own 403.
    pub async fn operator_client(&self, kustomization: &Path) -> Result<Client, Error> {
        Ok(self.operator_client_in_namespace(kustomization).await?.0)
    }

    /// [`Environment::operator_client`], and the namespace of its ServiceAccount: the
    /// operator's own, the one a namespace-scoped operator (`rkb init --namespaced`) watches
    /// and has its Role in.
    pub async fn operator_client_in_namespace(
        &self,
        kustomization: &Path,
    ) -> Result<(Client, String), Error> {
        let objects: Vec<DynamicObject> = crate::parse_yaml(&crate::kustomize(kustomization)?)?
            .into_iter()
            .filter(|o| RBAC_KINDS.contains(&kind_of(o)))
            .collect();
        let accounts: Vec<&DynamicObject> = objects
            .iter()
            .filter(|o| kind_of(o) == "ServiceAccount")
            .collect();
        let [account] = accounts.as_slice() else {
            return Err(Error::Objects(format!(
                "{} holds {} ServiceAccounts; operator_client needs exactly one",
                kustomization.display(),
                accounts.len()
            )));
        };
        let (namespace, name) = (
            account.namespace().unwrap_or_else(|| "default".into()),
            account.name_any(),
        );
        self.apply().objects(objects.clone()).await?;
        for (rule, binding_namespace) in granted_rules(&objects, &namespace, &name) {
            self.wait_until_allowed(&namespace, &name, &rule, binding_namespace.as_deref())
                .await?;
        }
        let client = self.service_account_client(&namespace, &name).await?;
        Ok((client, namespace))
    }

    /// Whether the authorizer lets the ServiceAccount `account_namespace/account` do what
    /// `attributes` describe, judged as the account itself (with its groups): one
    /// SubjectAccessReview, no waiting for bindings to propagate.
    pub async fn service_account_may(
        &self,
        account_namespace: &str,
        account: &str,
        attributes: ResourceAttributes,
    ) -> Result<bool, Error> {
        let mut spec = service_account_review(account_namespace, account);
        spec.resource_attributes = Some(attributes);
        self.review(spec).await
    }

    async fn review(&self, spec: SubjectAccessReviewSpec) -> Result<bool, Error> {
        let review = SubjectAccessReview {
            spec,
            ..Default::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| Error::request("create a SubjectAccessReview", e))?;
        Ok(answer.status.is_some_and(|s| s.allowed))
    }

    /// Polls SubjectAccessReviews until the ServiceAccount may do the first thing `rule`
    /// allows (in `namespace` for a RoleBinding's rules).
    async fn wait_until_allowed(
        &self,
        account_namespace: &str,
        account: &str,
        rule: &PolicyRule,
        namespace: Option<&str>,
    ) -> Result<(), Error> {
        let verb = rule.verbs.first().cloned().unwrap_or_default();
        let mut spec = service_account_review(account_namespace, account);
        if let Some(path) = rule
            .non_resource_urls
            .as_ref()
            .and_then(|urls| urls.first())
        {
            spec.non_resource_attributes = Some(NonResourceAttributes {
                path: Some(path.clone()),
                verb: Some(verb),
            });
        } else {
            let first = |list: &Option<Vec<String>>| list.as_ref().and_then(|l| l.first()).cloned();
            let resource = first(&rule.resources).unwrap_or_default();
            let (resource, subresource) = match resource.split_once('/') {
                Some((resource, subresource)) => {
                    (resource.to_string(), Some(subresource.to_string()))
                }
                None => (resource, None),
            };
            spec.resource_attributes = Some(ResourceAttributes {
                group: first(&rule.api_groups),
                resource: Some(resource),
                subresource,
                name: first(&rule.resource_names),
                namespace: namespace.map(str::to_string),
                verb: Some(verb),
                ..Default::default()
            });
        }
        let deadline = Instant::now() + PROPAGATION_TIMEOUT;
        loop {
            if self.review(spec.clone()).await? {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::Response(format!(
                    "the authorizer did not allow {account_namespace}/{account} {rule:?} within {} s of applying its bindings",
                    PROPAGATION_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A review of what a ServiceAccount may do, as the API server identifies it.
fn service_account_review(account_namespace: &str, account: &str) -> SubjectAccessReviewSpec {
    SubjectAccessReviewSpec {
        user: Some(format!(
            "system:serviceaccount:{account_namespace}:{account}"
        )),
        groups: Some(vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{account_namespace}"),
            "system:authenticated".into(),
        ]),
        ..Default::default()
    }
}

/// One checkable rule of each role bound to the ServiceAccount, with the namespace a
/// RoleBinding limits it to.
fn granted_rules(
    objects: &[DynamicObject],
    namespace: &str,
    name: &str,
) -> Vec<(PolicyRule, Option<String>)> {
    let mut rules = Vec::new();
    for binding in objects
        .iter()
        .filter(|o| matches!(kind_of(o), "ClusterRoleBinding" | "RoleBinding"))
    {
        let subjects: Vec<Subject> =
            serde_json::from_value(binding.data["subjects"].clone()).unwrap_or_default();
        if !subjects.iter().any(|s| {
            s.kind == "ServiceAccount"
                && s.name == name
                && s.namespace.as_deref() == Some(namespace)
        }) {
            continue;
        }
        let role_kind = binding.data["roleRef"]["kind"].as_str().unwrap_or_default();
        let role_name = binding.data["roleRef"]["name"].as_str().unwrap_or_default();
        let binding_namespace = binding.namespace();
        let role = objects.iter().find(|o| {
            kind_of(o) == role_kind
                && o.name_any() == role_name
                && (role_kind == "ClusterRole" || o.namespace() == binding_namespace)
        });
        let role_rules: Vec<PolicyRule> = role
            .map(|r| serde_json::from_value(r.data["rules"].clone()).unwrap_or_default())
            .unwrap_or_default();
        // Wildcards and empty rules cannot be turned into one concrete request.
        if let Some(rule) = role_rules.into_iter().find(|r| {
            !r.verbs.is_empty()
                && !r.verbs.contains(&"*".to_string())
                && (r.non_resource_urls.as_ref().is_some_and(|u| !u.is_empty())
                    || r.resources
                        .as_ref()
                        .is_some_and(|res| !res.is_empty() && !res.contains(&"*".to_string())))
        }) {
            let limited_to = (kind_of(binding) == "RoleBinding")
                .then(|| binding_namespace.clone().unwrap_or_default());
            rules.push((rule, limited_to));
        }
    }
    rules
}
