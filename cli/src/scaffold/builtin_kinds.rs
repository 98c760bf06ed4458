//! Built-in Kubernetes kinds known to k8s-openapi 0.28 (feature `v1_33`), for `create api --no-resource`.
//! Generated from the k8s-openapi sources; regenerate when the k8s-openapi version changes.

/// A built-in kind that a controller can watch without defining a CRD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinKind {
    /// API group as the user types it: `core` for the legacy group.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    /// Rust path of the type, e.g. `k8s_openapi::api::core::v1::Pod`.
    pub rust_path: &'static str,
}

/// Sorted by (group, version, kind).
#[rustfmt::skip]
pub const BUILTIN_KINDS: &[BuiltinKind] = &[
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1", kind: "MutatingWebhookConfiguration", plural: "mutatingwebhookconfigurations", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration" },
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingAdmissionPolicy", plural: "validatingadmissionpolicies", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy" },
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingAdmissionPolicyBinding", plural: "validatingadmissionpolicybindings", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding" },
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingWebhookConfiguration", plural: "validatingwebhookconfigurations", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration" },
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1alpha1", kind: "MutatingAdmissionPolicy", plural: "mutatingadmissionpolicies", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicy" },
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1alpha1", kind: "MutatingAdmissionPolicyBinding", plural: "mutatingadmissionpolicybindings", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding" },
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1beta1", kind: "ValidatingAdmissionPolicy", plural: "validatingadmissionpolicies", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicy" },
    BuiltinKind { group: "admissionregistration.k8s.io", version: "v1beta1", kind: "ValidatingAdmissionPolicyBinding", plural: "validatingadmissionpolicybindings", namespaced: false, rust_path: "k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding" },
    BuiltinKind { group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition", plural: "customresourcedefinitions", namespaced: false, rust_path: "k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition" },
    BuiltinKind { group: "apiregistration.k8s.io", version: "v1", kind: "APIService", plural: "apiservices", namespaced: false, rust_path: "k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService" },
    BuiltinKind { group: "apps", version: "v1", kind: "ControllerRevision", plural: "controllerrevisions", namespaced: true, rust_path: "k8s_openapi::api::apps::v1::ControllerRevision" },
    BuiltinKind { group: "apps", version: "v1", kind: "DaemonSet", plural: "daemonsets", namespaced: true, rust_path: "k8s_openapi::api::apps::v1::DaemonSet" },
    BuiltinKind { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", namespaced: true, rust_path: "k8s_openapi::api::apps::v1::Deployment" },
    BuiltinKind { group: "apps", version: "v1", kind: "ReplicaSet", plural: "replicasets", namespaced: true, rust_path: "k8s_openapi::api::apps::v1::ReplicaSet" },
    BuiltinKind { group: "apps", version: "v1", kind: "StatefulSet", plural: "statefulsets", namespaced: true, rust_path: "k8s_openapi::api::apps::v1::StatefulSet" },
    BuiltinKind { group: "autoscaling", version: "v1", kind: "HorizontalPodAutoscaler", plural: "horizontalpodautoscalers", namespaced: true, rust_path: "k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler" },
    BuiltinKind { group: "autoscaling", version: "v2", kind: "HorizontalPodAutoscaler", plural: "horizontalpodautoscalers", namespaced: true, rust_path: "k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler" },
    BuiltinKind { group: "batch", version: "v1", kind: "CronJob", plural: "cronjobs", namespaced: true, rust_path: "k8s_openapi::api::batch::v1::CronJob" },
    BuiltinKind { group: "batch", version: "v1", kind: "Job", plural: "jobs", namespaced: true, rust_path: "k8s_openapi::api::batch::v1::Job" },
    BuiltinKind { group: "certificates.k8s.io", version: "v1", kind: "CertificateSigningRequest", plural: "certificatesigningrequests", namespaced: false, rust_path: "k8s_openapi::api::certificates::v1::CertificateSigningRequest" },
    BuiltinKind { group: "certificates.k8s.io", version: "v1alpha1", kind: "ClusterTrustBundle", plural: "clustertrustbundles", namespaced: false, rust_path: "k8s_openapi::api::certificates::v1alpha1::ClusterTrustBundle" },
    BuiltinKind { group: "certificates.k8s.io", version: "v1beta1", kind: "ClusterTrustBundle", plural: "clustertrustbundles", namespaced: false, rust_path: "k8s_openapi::api::certificates::v1beta1::ClusterTrustBundle" },
    BuiltinKind { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases", namespaced: true, rust_path: "k8s_openapi::api::coordination::v1::Lease" },
    BuiltinKind { group: "coordination.k8s.io", version: "v1alpha2", kind: "LeaseCandidate", plural: "leasecandidates", namespaced: true, rust_path: "k8s_openapi::api::coordination::v1alpha2::LeaseCandidate" },
    BuiltinKind { group: "coordination.k8s.io", version: "v1beta1", kind: "LeaseCandidate", plural: "leasecandidates", namespaced: true, rust_path: "k8s_openapi::api::coordination::v1beta1::LeaseCandidate" },
    BuiltinKind { group: "core", version: "v1", kind: "ComponentStatus", plural: "componentstatuses", namespaced: false, rust_path: "k8s_openapi::api::core::v1::ComponentStatus" },
    BuiltinKind { group: "core", version: "v1", kind: "ConfigMap", plural: "configmaps", namespaced: true, rust_path: "k8s_openapi::api::core::v1::ConfigMap" },
    BuiltinKind { group: "core", version: "v1", kind: "Endpoints", plural: "endpoints", namespaced: true, rust_path: "k8s_openapi::api::core::v1::Endpoints" },
    BuiltinKind { group: "core", version: "v1", kind: "Event", plural: "events", namespaced: true, rust_path: "k8s_openapi::api::core::v1::Event" },
    BuiltinKind { group: "core", version: "v1", kind: "LimitRange", plural: "limitranges", namespaced: true, rust_path: "k8s_openapi::api::core::v1::LimitRange" },
    BuiltinKind { group: "core", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false, rust_path: "k8s_openapi::api::core::v1::Namespace" },
    BuiltinKind { group: "core", version: "v1", kind: "Node", plural: "nodes", namespaced: false, rust_path: "k8s_openapi::api::core::v1::Node" },
    BuiltinKind { group: "core", version: "v1", kind: "PersistentVolume", plural: "persistentvolumes", namespaced: false, rust_path: "k8s_openapi::api::core::v1::PersistentVolume" },
    BuiltinKind { group: "core", version: "v1", kind: "PersistentVolumeClaim", plural: "persistentvolumeclaims", namespaced: true, rust_path: "k8s_openapi::api::core::v1::PersistentVolumeClaim" },
    BuiltinKind { group: "core", version: "v1", kind: "Pod", plural: "pods", namespaced: true, rust_path: "k8s_openapi::api::core::v1::Pod" },
    BuiltinKind { group: "core", version: "v1", kind: "PodTemplate", plural: "podtemplates", namespaced: true, rust_path: "k8s_openapi::api::core::v1::PodTemplate" },
    BuiltinKind { group: "core", version: "v1", kind: "ReplicationController", plural: "replicationcontrollers", namespaced: true, rust_path: "k8s_openapi::api::core::v1::ReplicationController" },
    BuiltinKind { group: "core", version: "v1", kind: "ResourceQuota", plural: "resourcequotas", namespaced: true, rust_path: "k8s_openapi::api::core::v1::ResourceQuota" },
    BuiltinKind { group: "core", version: "v1", kind: "Secret", plural: "secrets", namespaced: true, rust_path: "k8s_openapi::api::core::v1::Secret" },
    BuiltinKind { group: "core", version: "v1", kind: "Service", plural: "services", namespaced: true, rust_path: "k8s_openapi::api::core::v1::Service" },
    BuiltinKind { group: "core", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true, rust_path: "k8s_openapi::api::core::v1::ServiceAccount" },
    BuiltinKind { group: "discovery.k8s.io", version: "v1", kind: "EndpointSlice", plural: "endpointslices", namespaced: true, rust_path: "k8s_openapi::api::discovery::v1::EndpointSlice" },
    BuiltinKind { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", namespaced: true, rust_path: "k8s_openapi::api::events::v1::Event" },
    BuiltinKind { group: "flowcontrol.apiserver.k8s.io", version: "v1", kind: "FlowSchema", plural: "flowschemas", namespaced: false, rust_path: "k8s_openapi::api::flowcontrol::v1::FlowSchema" },
    BuiltinKind { group: "flowcontrol.apiserver.k8s.io", version: "v1", kind: "PriorityLevelConfiguration", plural: "prioritylevelconfigurations", namespaced: false, rust_path: "k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration" },
    BuiltinKind { group: "internal.apiserver.k8s.io", version: "v1alpha1", kind: "StorageVersion", plural: "storageversions", namespaced: false, rust_path: "k8s_openapi::api::apiserverinternal::v1alpha1::StorageVersion" },
    BuiltinKind { group: "networking.k8s.io", version: "v1", kind: "IPAddress", plural: "ipaddresses", namespaced: false, rust_path: "k8s_openapi::api::networking::v1::IPAddress" },
    BuiltinKind { group: "networking.k8s.io", version: "v1", kind: "Ingress", plural: "ingresses", namespaced: true, rust_path: "k8s_openapi::api::networking::v1::Ingress" },
    BuiltinKind { group: "networking.k8s.io", version: "v1", kind: "IngressClass", plural: "ingressclasses", namespaced: false, rust_path: "k8s_openapi::api::networking::v1::IngressClass" },
    BuiltinKind { group: "networking.k8s.io", version: "v1", kind: "NetworkPolicy", plural: "networkpolicies", namespaced: true, rust_path: "k8s_openapi::api::networking::v1::NetworkPolicy" },
    BuiltinKind { group: "networking.k8s.io", version: "v1", kind: "ServiceCIDR", plural: "servicecidrs", namespaced: false, rust_path: "k8s_openapi::api::networking::v1::ServiceCIDR" },
    BuiltinKind { group: "networking.k8s.io", version: "v1beta1", kind: "IPAddress", plural: "ipaddresses", namespaced: false, rust_path: "k8s_openapi::api::networking::v1beta1::IPAddress" },
    BuiltinKind { group: "networking.k8s.io", version: "v1beta1", kind: "ServiceCIDR", plural: "servicecidrs", namespaced: false, rust_path: "k8s_openapi::api::networking::v1beta1::ServiceCIDR" },
    BuiltinKind { group: "node.k8s.io", version: "v1", kind: "RuntimeClass", plural: "runtimeclasses", namespaced: false, rust_path: "k8s_openapi::api::node::v1::RuntimeClass" },
    BuiltinKind { group: "policy", version: "v1", kind: "PodDisruptionBudget", plural: "poddisruptionbudgets", namespaced: true, rust_path: "k8s_openapi::api::policy::v1::PodDisruptionBudget" },
    BuiltinKind { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRole", plural: "clusterroles", namespaced: false, rust_path: "k8s_openapi::api::rbac::v1::ClusterRole" },
    BuiltinKind { group: "rbac.authorization.k8s.io", version: "v1", kind: "ClusterRoleBinding", plural: "clusterrolebindings", namespaced: false, rust_path: "k8s_openapi::api::rbac::v1::ClusterRoleBinding" },
    BuiltinKind { group: "rbac.authorization.k8s.io", version: "v1", kind: "Role", plural: "roles", namespaced: true, rust_path: "k8s_openapi::api::rbac::v1::Role" },
    BuiltinKind { group: "rbac.authorization.k8s.io", version: "v1", kind: "RoleBinding", plural: "rolebindings", namespaced: true, rust_path: "k8s_openapi::api::rbac::v1::RoleBinding" },
    BuiltinKind { group: "resource.k8s.io", version: "v1alpha3", kind: "DeviceClass", plural: "deviceclasses", namespaced: false, rust_path: "k8s_openapi::api::resource::v1alpha3::DeviceClass" },
    BuiltinKind { group: "resource.k8s.io", version: "v1alpha3", kind: "DeviceTaintRule", plural: "devicetaintrules", namespaced: false, rust_path: "k8s_openapi::api::resource::v1alpha3::DeviceTaintRule" },
    BuiltinKind { group: "resource.k8s.io", version: "v1alpha3", kind: "ResourceClaim", plural: "resourceclaims", namespaced: true, rust_path: "k8s_openapi::api::resource::v1alpha3::ResourceClaim" },
    BuiltinKind { group: "resource.k8s.io", version: "v1alpha3", kind: "ResourceClaimTemplate", plural: "resourceclaimtemplates", namespaced: true, rust_path: "k8s_openapi::api::resource::v1alpha3::ResourceClaimTemplate" },
    BuiltinKind { group: "resource.k8s.io", version: "v1alpha3", kind: "ResourceSlice", plural: "resourceslices", namespaced: false, rust_path: "k8s_openapi::api::resource::v1alpha3::ResourceSlice" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta1", kind: "DeviceClass", plural: "deviceclasses", namespaced: false, rust_path: "k8s_openapi::api::resource::v1beta1::DeviceClass" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta1", kind: "ResourceClaim", plural: "resourceclaims", namespaced: true, rust_path: "k8s_openapi::api::resource::v1beta1::ResourceClaim" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta1", kind: "ResourceClaimTemplate", plural: "resourceclaimtemplates", namespaced: true, rust_path: "k8s_openapi::api::resource::v1beta1::ResourceClaimTemplate" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta1", kind: "ResourceSlice", plural: "resourceslices", namespaced: false, rust_path: "k8s_openapi::api::resource::v1beta1::ResourceSlice" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta2", kind: "DeviceClass", plural: "deviceclasses", namespaced: false, rust_path: "k8s_openapi::api::resource::v1beta2::DeviceClass" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta2", kind: "ResourceClaim", plural: "resourceclaims", namespaced: true, rust_path: "k8s_openapi::api::resource::v1beta2::ResourceClaim" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta2", kind: "ResourceClaimTemplate", plural: "resourceclaimtemplates", namespaced: true, rust_path: "k8s_openapi::api::resource::v1beta2::ResourceClaimTemplate" },
    BuiltinKind { group: "resource.k8s.io", version: "v1beta2", kind: "ResourceSlice", plural: "resourceslices", namespaced: false, rust_path: "k8s_openapi::api::resource::v1beta2::ResourceSlice" },
    BuiltinKind { group: "scheduling.k8s.io", version: "v1", kind: "PriorityClass", plural: "priorityclasses", namespaced: false, rust_path: "k8s_openapi::api::scheduling::v1::PriorityClass" },
    BuiltinKind { group: "storage.k8s.io", version: "v1", kind: "CSIDriver", plural: "csidrivers", namespaced: false, rust_path: "k8s_openapi::api::storage::v1::CSIDriver" },
    BuiltinKind { group: "storage.k8s.io", version: "v1", kind: "CSINode", plural: "csinodes", namespaced: false, rust_path: "k8s_openapi::api::storage::v1::CSINode" },
    BuiltinKind { group: "storage.k8s.io", version: "v1", kind: "CSIStorageCapacity", plural: "csistoragecapacities", namespaced: true, rust_path: "k8s_openapi::api::storage::v1::CSIStorageCapacity" },
    BuiltinKind { group: "storage.k8s.io", version: "v1", kind: "StorageClass", plural: "storageclasses", namespaced: false, rust_path: "k8s_openapi::api::storage::v1::StorageClass" },
    BuiltinKind { group: "storage.k8s.io", version: "v1", kind: "VolumeAttachment", plural: "volumeattachments", namespaced: false, rust_path: "k8s_openapi::api::storage::v1::VolumeAttachment" },
    BuiltinKind { group: "storage.k8s.io", version: "v1alpha1", kind: "VolumeAttributesClass", plural: "volumeattributesclasses", namespaced: false, rust_path: "k8s_openapi::api::storage::v1alpha1::VolumeAttributesClass" },
    BuiltinKind { group: "storage.k8s.io", version: "v1beta1", kind: "VolumeAttributesClass", plural: "volumeattributesclasses", namespaced: false, rust_path: "k8s_openapi::api::storage::v1beta1::VolumeAttributesClass" },
    BuiltinKind { group: "storagemigration.k8s.io", version: "v1alpha1", kind: "StorageVersionMigration", plural: "storageversionmigrations", namespaced: false, rust_path: "k8s_openapi::api::storagemigration::v1alpha1::StorageVersionMigration" },
];

/// Create-only kinds (reviews and `Binding`): they implement `Resource` but cannot be
/// listed or watched, so `find` does not return them. Sorted by (group, version, kind).
#[rustfmt::skip]
pub const CREATE_ONLY_KINDS: &[BuiltinKind] = &[
    BuiltinKind { group: "authentication.k8s.io", version: "v1", kind: "SelfSubjectReview", plural: "selfsubjectreviews", namespaced: false, rust_path: "k8s_openapi::api::authentication::v1::SelfSubjectReview" },
    BuiltinKind { group: "authentication.k8s.io", version: "v1", kind: "TokenReview", plural: "tokenreviews", namespaced: false, rust_path: "k8s_openapi::api::authentication::v1::TokenReview" },
    BuiltinKind { group: "authorization.k8s.io", version: "v1", kind: "LocalSubjectAccessReview", plural: "localsubjectaccessreviews", namespaced: true, rust_path: "k8s_openapi::api::authorization::v1::LocalSubjectAccessReview" },
    BuiltinKind { group: "authorization.k8s.io", version: "v1", kind: "SelfSubjectAccessReview", plural: "selfsubjectaccessreviews", namespaced: false, rust_path: "k8s_openapi::api::authorization::v1::SelfSubjectAccessReview" },
    BuiltinKind { group: "authorization.k8s.io", version: "v1", kind: "SelfSubjectRulesReview", plural: "selfsubjectrulesreviews", namespaced: false, rust_path: "k8s_openapi::api::authorization::v1::SelfSubjectRulesReview" },
    BuiltinKind { group: "authorization.k8s.io", version: "v1", kind: "SubjectAccessReview", plural: "subjectaccessreviews", namespaced: false, rust_path: "k8s_openapi::api::authorization::v1::SubjectAccessReview" },
    BuiltinKind { group: "core", version: "v1", kind: "Binding", plural: "bindings", namespaced: true, rust_path: "k8s_openapi::api::core::v1::Binding" },
];

/// Looks up a built-in kind; `group` is `core` or `""` for the legacy group.
pub fn find(group: &str, version: &str, kind: &str) -> Option<&'static BuiltinKind> {
    let group = if group.is_empty() { "core" } else { group };
    BUILTIN_KINDS
        .iter()
        .find(|k| k.group == group && k.version == version && k.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_common_kinds() {
        let pod = find("core", "v1", "Pod").expect("Pod");
        assert_eq!(pod.plural, "pods");
        assert!(pod.namespaced);
        assert_eq!(pod.rust_path, "k8s_openapi::api::core::v1::Pod");
        assert_eq!(find("", "v1", "Pod"), Some(pod));

        let deploy = find("apps", "v1", "Deployment").expect("Deployment");
        assert_eq!(deploy.plural, "deployments");
        assert!(deploy.namespaced);
        assert_eq!(deploy.rust_path, "k8s_openapi::api::apps::v1::Deployment");

        let ns = find("core", "v1", "Namespace").expect("Namespace");
        assert!(!ns.namespaced);

        assert!(find("core", "v1", "Nope").is_none());
        assert!(find("apps", "v1beta1", "Deployment").is_none());
    }

    #[test]
    fn create_only_kinds_are_not_watchable() {
        assert!(find("authentication.k8s.io", "v1", "TokenReview").is_none());
        assert!(
            CREATE_ONLY_KINDS
                .iter()
                .any(|k| k.group == "authentication.k8s.io" && k.kind == "TokenReview")
        );
    }

    #[test]
    fn tables_are_sorted_without_duplicates() {
        for table in [BUILTIN_KINDS, CREATE_ONLY_KINDS] {
            for pair in table.windows(2) {
                let a = (pair[0].group, pair[0].version, pair[0].kind);
                let b = (pair[1].group, pair[1].version, pair[1].kind);
                assert!(a < b, "not strictly sorted: {a:?} >= {b:?}");
            }
        }
        for k in CREATE_ONLY_KINDS {
            assert!(
                find(k.group, k.version, k.kind).is_none(),
                "{k:?} in both tables"
            );
        }
    }

    #[test]
    fn entries_are_consistent() {
        for k in BUILTIN_KINDS.iter().chain(CREATE_ONLY_KINDS) {
            assert!(!k.group.is_empty(), "{k:?}");
            assert!(k.rust_path.starts_with("k8s_openapi::"), "{k:?}");
            let suffix = format!("::{}::{}", k.version, k.kind);
            assert!(k.rust_path.ends_with(&suffix), "{k:?}");
            assert_eq!(k.plural, k.plural.to_lowercase(), "{k:?}");
        }
    }
}
