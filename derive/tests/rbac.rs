//! What `#[derive(Rbac)]` generates, checked through the runtime trait.

use std::marker::PhantomData;

use rkb_runtime::Rbac;
use rkb_runtime::rbac::Rule;

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

#[derive(Rbac)]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds"], verbs = [get, list, watch, create, update, patch, delete])]
#[rbac(groups = ["cache.example.com"], resources = ["memcacheds/status"], verbs = [get, update, patch])]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [list])]
#[rbac(groups = ["apps"], resources = ["deployments"], resource_names = ["x"], verbs = [get], namespace = "system")]
#[rbac(urls = ["/metrics"], verbs = [get])]
struct MemcachedReconciler;

#[test]
fn rules_keep_declaration_order_and_values() {
    let rule = |groups: &[&str], resources: &[&str], verbs: &[&str]| Rule {
        api_groups: strings(groups),
        resources: strings(resources),
        verbs: strings(verbs),
        ..Rule::default()
    };
    assert_eq!(
        MemcachedReconciler::rbac_rules(),
        vec![
            rule(
                &["cache.example.com"],
                &["memcacheds"],
                &[
                    "get", "list", "watch", "create", "update", "patch", "delete"
                ]
            ),
            rule(
                &["cache.example.com"],
                &["memcacheds/status"],
                &["get", "update", "patch"]
            ),
            // "core" is the core group's readable name; RBAC spells it "".
            rule(&[""], &["pods"], &["list"]),
            Rule {
                resource_names: strings(&["x"]),
                namespace: Some("system".into()),
                ..rule(&["apps"], &["deployments"], &["get"])
            },
            Rule {
                non_resource_urls: strings(&["/metrics"]),
                verbs: strings(&["get"]),
                ..Rule::default()
            },
        ]
    );
    assert_eq!(
        rkb_runtime::rbac_rules::<MemcachedReconciler>(),
        MemcachedReconciler::rbac_rules()
    );
}

/// Every verb, as identifiers (the keyword `use` raw or plain) and as strings.
#[derive(Rbac)]
#[rbac(groups = [""], resources = ["serviceaccounts"], verbs = [impersonate])]
#[rbac(groups = ["rbac.authorization.k8s.io"], resources = ["roles"], verbs = [bind, escalate])]
#[rbac(groups = ["policy"], resources = ["podsecuritypolicies"], verbs = [use, r#use, "use"])]
#[rbac(groups = ["apps", "batch"], resources = ["deployments", "jobs"], verbs = ["deletecollection", delete])]
struct AllVerbs;

#[test]
fn verbs_as_identifiers_keywords_and_strings() {
    let rules = AllVerbs::rbac_rules();
    let verbs: Vec<Vec<String>> = rules.iter().map(|r| r.verbs.clone()).collect();
    assert_eq!(
        verbs,
        [
            strings(&["impersonate"]),
            strings(&["bind", "escalate"]),
            strings(&["use", "use", "use"]),
            strings(&["deletecollection", "delete"]),
        ]
    );
    assert_eq!(rules[0].api_groups, [""]);
    assert_eq!(rules[3].api_groups, ["apps", "batch"]);
    assert_eq!(rules[3].resources, ["deployments", "jobs"]);
}

/// APIs check verbs of their own: a CSR approver needs `approve` on `signers`.
#[derive(Rbac)]
#[rbac(groups = ["certificates.k8s.io"], resources = ["signers"], resource_names = ["example.com/my-signer"], verbs = [approve, "sign"])]
struct CsrApprover;

#[test]
fn custom_verbs() {
    let rules = CsrApprover::rbac_rules();
    assert_eq!(rules[0].verbs, ["approve", "sign"]);
    assert_eq!(rules[0].validate(), Ok(()));
}

// The derive works on every kind of type, generics included.

#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["configmaps"], verbs = [get])]
struct Tuple(#[allow(dead_code)] u8, #[allow(dead_code)] String);

#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["secrets"], verbs = [get])]
struct Generic<'a, T: Clone, const N: usize>
where
    T: Default,
{
    _marker: PhantomData<&'a [T; N]>,
}

#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["services"], verbs = [get])]
enum Enum {
    #[allow(dead_code)]
    A,
    #[allow(dead_code)]
    B(u8),
}

#[test]
fn tuple_generic_and_enum_types() {
    assert_eq!(Tuple::rbac_rules()[0].resources, ["configmaps"]);
    assert_eq!(
        Generic::<'static, u8, 3>::rbac_rules()[0].resources,
        ["secrets"]
    );
    assert_eq!(Enum::rbac_rules()[0].resources, ["services"]);
}

/// Derived rules render into the manager's roles.
#[test]
fn rules_render_into_roles() {
    let (cluster, roles) = rkb_runtime::rbac::roles(&MemcachedReconciler::rbac_rules(), "r");
    assert_eq!(cluster.rules.map(|r| r.len()), Some(4));
    assert_eq!(roles.len(), 1);
    assert_eq!(roles[0].metadata.namespace.as_deref(), Some("system"));
}
