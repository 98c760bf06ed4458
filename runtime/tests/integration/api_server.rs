//! rkb's CRDs on the real API server (envtest): what it stores for an explicit `null`
//! (create, update, server-side apply), with and without `#[rkb(nullable)]`; and the
//! Kubernetes semantics of embedded k8s-openapi types (a CronJob's PodSpec refuses a
//! malformed quantity and duplicate container names, and defaults a port's protocol,
//! as a Deployment's does); and the CEL rules of `exactly_one_of` and `immutable`.

use crate::cronjob;

use kube::CustomResource;
use kube::api::{
    Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams, ResourceExt as _,
};
use rkb_runtime::crd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A CronJob-like spec: optional fields, some asking to keep an explicit null.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "nulls.rkb.dev",
    version = "v1",
    kind = "Schedule",
    namespaced,
    derive = "Default"
)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleSpec {
    /// Like CronJob's `concurrencyPolicy`: an optional enum without default.
    pub concurrency_policy: Option<Policy>,
    /// An optional enum with a default.
    #[rkb(default = Policy::Allow)]
    pub defaulted_policy: Option<Policy>,
    pub suffix: Option<String>,
    /// Null is a value of its own here.
    #[rkb(nullable)]
    pub nullable_suffix: Option<String>,
}

/// How runs may overlap.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub enum Policy {
    Allow,
    Forbid,
    Replace,
}

/// Every field set to null, as a typed client sends an unset `Option`.
fn all_null() -> Value {
    json!({
        "concurrencyPolicy": null,
        "defaultedPolicy": null,
        "suffix": null,
        "nullableSuffix": null,
    })
}

/// What the API server stores for [`all_null`]: nulls of fields that are not nullable
/// are pruned (and defaulted), those of nullable fields kept.
fn stored() -> Value {
    json!({
        "defaultedPolicy": "Allow",
        "nullableSuffix": null,
    })
}

async fn schedules() -> Api<DynamicObject> {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let crd = crd::<Schedule>().unwrap().into_definition();
    env.apply().crds([crd]).await.unwrap();
    let ns = env.create_namespace().await.unwrap();
    Api::namespaced_with(env.client(), &ns, &ApiResource::erase::<Schedule>(&()))
}

fn object(name: &str, spec: Value) -> DynamicObject {
    let mut object = DynamicObject::new(name, &ApiResource::erase::<Schedule>(&()));
    object.data = json!({ "spec": spec });
    object
}

#[test]
fn only_fields_that_ask_are_nullable() {
    let crd = crd::<Schedule>().unwrap();
    let json = serde_json::to_value(&*crd).unwrap();
    let spec = &json["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let props = &spec["properties"];
    assert_eq!(
        props["concurrencyPolicy"],
        json!({"type": "string", "enum": ["Allow", "Forbid", "Replace"], "description": "Like CronJob's `concurrencyPolicy`: an optional enum without default."})
    );
    assert_eq!(props["suffix"], json!({"type": "string"}));
    assert_eq!(props["nullableSuffix"]["nullable"], json!(true));
    assert!(
        !json.to_string().contains("x-rkb-"),
        "the marker never reaches the CRD"
    );
}

#[tokio::test]
async fn an_explicit_null_is_pruned_unless_the_field_is_nullable_on_create() {
    let api = schedules().await;
    let created = api
        .create(&PostParams::default(), &object("nulls", all_null()))
        .await
        .unwrap();
    assert_eq!(created.data["spec"], stored());
    assert_eq!(api.get("nulls").await.unwrap().data["spec"], stored());

    // A typed client sends every unset Option as null: accepted, and read back unset.
    let typed = Api::<Schedule>::namespaced(api.clone().into_client(), &namespace(&created));
    let created = typed
        .create(
            &PostParams::default(),
            &Schedule::new("typed", ScheduleSpec::default()),
        )
        .await
        .unwrap();
    assert!(created.spec.concurrency_policy.is_none());
    assert!(matches!(created.spec.defaulted_policy, Some(Policy::Allow)));
}

#[tokio::test]
async fn an_explicit_null_is_pruned_unless_the_field_is_nullable_on_update() {
    let api = schedules().await;
    let created = api
        .create(
            &PostParams::default(),
            &object(
                "update",
                json!({"concurrencyPolicy": "Forbid", "suffix": "a", "nullableSuffix": "b"}),
            ),
        )
        .await
        .unwrap();
    let mut changed = object("update", all_null());
    changed.metadata.resource_version = created.resource_version();
    let replaced = api
        .replace("update", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(replaced.data["spec"], stored());

    // A merge patch's null removes the field, as ever.
    let patched = api
        .patch(
            "update",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"concurrencyPolicy": "Replace", "nullableSuffix": "c"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"]["concurrencyPolicy"], "Replace");
    let patched = api
        .patch(
            "update",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"concurrencyPolicy": null, "nullableSuffix": null}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"].get("concurrencyPolicy"), None);
}

/// Server-side apply does not prune: an explicit null of a field that is neither
/// nullable nor defaulted is a type error (as for controller-gen's CRDs), so an applied
/// configuration leaves unset fields out (`#[serde(skip_serializing_if =
/// "Option::is_none")]`, as rkb's scaffold writes). A nullable field's null is stored.
#[tokio::test]
async fn server_side_apply_stores_the_null_of_a_nullable_field_and_refuses_others() {
    let api = schedules().await;
    let params = PatchParams::apply("rkb-test");
    let message = match api
        .patch(
            "apply",
            &params,
            &Patch::Apply(&object("apply", all_null())),
        )
        .await
    {
        Err(kube::Error::Api(status)) => status.message,
        other => panic!("expected a refusal, got {other:?}"),
    };
    for field in ["suffix", "concurrencyPolicy"] {
        assert!(
            message.contains(&format!("spec.{field} in body must be of type string")),
            "{message}"
        );
    }
    // A null with a default is defaulted, as on create.
    assert!(!message.contains("defaultedPolicy"), "{message}");
    assert!(!message.contains("nullableSuffix"), "{message}");

    let applied = object("apply", json!({"nullableSuffix": null}));
    let result = api
        .patch("apply", &params, &Patch::Apply(&applied))
        .await
        .unwrap();
    assert_eq!(result.data["spec"], stored());
    // Applied again, unchanged: nothing moves.
    let again = api
        .patch("apply", &params, &Patch::Apply(&applied))
        .await
        .unwrap();
    assert_eq!(again.resource_version(), result.resource_version());
}

fn namespace(object: &DynamicObject) -> String {
    object.namespace().expect("a namespaced object")
}

// ---------------------------------------------------------------------------
// Embedded Kubernetes types: the CronJob of kubebuilder's tutorial
// ---------------------------------------------------------------------------

async fn cronjobs() -> Api<DynamicObject> {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let crd = crd::<cronjob::CronJob>().unwrap().into_definition();
    env.apply().crds([crd]).await.unwrap();
    let ns = env.create_namespace().await.unwrap();
    Api::namespaced_with(
        env.client(),
        &ns,
        &ApiResource::erase::<cronjob::CronJob>(&()),
    )
}

/// A CronJob whose pods run `containers`.
fn cronjob(name: &str, containers: Value) -> DynamicObject {
    let mut object = DynamicObject::new(name, &ApiResource::erase::<cronjob::CronJob>(&()));
    object.data = json!({"spec": {
        "schedule": "*/1 * * * *",
        "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure",
            "containers": containers,
        }}}},
    }});
    object
}

fn refusal(error: kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message,
        other => panic!("expected the API server to refuse, got {other:?}"),
    }
}

fn pod_spec(object: &DynamicObject) -> &Value {
    &object.data["spec"]["jobTemplate"]["spec"]["template"]["spec"]
}

#[tokio::test]
async fn a_malformed_quantity_in_an_embedded_pod_spec_is_refused() {
    let api = cronjobs().await;
    let containers = |cpu: &str| {
        json!([{"name": "hello", "image": "busybox:1.36",
                "resources": {"limits": {"cpu": cpu, "memory": "64Mi"}, "requests": {"cpu": 1}}}])
    };
    let message = refusal(
        api.create(&PostParams::default(), &cronjob("lots", containers("lots")))
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("resources.limits.cpu") && message.contains("should match"),
        "{message}"
    );
    // Well-formed quantities, strings or numbers, are kept as written.
    let created = api
        .create(&PostParams::default(), &cronjob("fine", containers("500m")))
        .await
        .unwrap();
    let resources = &pod_spec(&created)["containers"][0]["resources"];
    assert_eq!(resources["limits"]["cpu"], "500m");
    assert_eq!(resources["requests"]["cpu"], 1);
}

#[tokio::test]
async fn duplicate_container_names_in_an_embedded_pod_spec_are_refused() {
    let api = cronjobs().await;
    let containers = json!([
        {"name": "hello", "image": "busybox:1.36"},
        {"name": "hello", "image": "busybox:1.37"},
    ]);
    let message = refusal(
        api.create(&PostParams::default(), &cronjob("twins", containers))
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("containers[1]") && message.contains("Duplicate value"),
        "{message}"
    );
}

#[tokio::test]
async fn a_port_without_protocol_gets_tcp_and_ports_merge_by_key() {
    let api = cronjobs().await;
    let containers = json!([{"name": "web", "image": "nginx:1.27",
                             "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]}]);
    let created = api
        .create(&PostParams::default(), &cronjob("web", containers))
        .await
        .unwrap();
    assert_eq!(
        pod_spec(&created)["containers"][0]["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}])
    );
    // Two field managers own one port each: server-side apply merges the list by
    // (containerPort, protocol), as it does for a Deployment, instead of replacing it.
    let params = |manager: &str| PatchParams::apply(manager);
    let apply = |port: i32| {
        json!({"apiVersion": "batch.tutorial.kubebuilder.io/v1", "kind": "CronJob",
        "metadata": {"name": "merged"},
        "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": port}]}]
        }}}}}})
    };
    api.patch("merged", &params("a"), &Patch::Apply(apply(80)))
        .await
        .unwrap();
    let merged = api
        .patch("merged", &params("b"), &Patch::Apply(apply(8080)))
        .await
        .unwrap();
    let ports: Vec<&Value> = pod_spec(&merged)["containers"][0]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["containerPort"])
        .collect();
    assert_eq!(ports, [&json!(80), &json!(8080)]);
}

#[tokio::test]
async fn conditions_are_validated_as_metav1_conditions() {
    let api = cronjobs().await;
    let created = api
        .create(
            &PostParams::default(),
            &cronjob("status", json!([{"name": "a", "image": "busybox:1.36"}])),
        )
        .await
        .unwrap();
    let condition = |status: &str, reason: &str| {
        json!({"status": {"conditions": [{"type": "Ready", "status": status, "reason": reason,
               "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    };
    let message = refusal(
        api.patch_status(
            "status",
            &PatchParams::default(),
            &Patch::Merge(condition("Maybe", "not a reason!")),
        )
        .await
        .unwrap_err(),
    );
    assert!(
        message.contains("status.conditions[0].status: Unsupported value: \"Maybe\"")
            && message.contains("status.conditions[0].reason: Invalid value"),
        "{message}"
    );
    let patched = api
        .patch_status(
            "status",
            &PatchParams::default(),
            &Patch::Merge(condition("True", "Scheduled")),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["status"]["conditions"][0]["status"], "True");
    assert_ne!(patched.resource_version(), created.resource_version());
}

#[test]
fn the_semantics_table_is_of_the_kubernetes_release_envtest_runs() {
    assert_eq!(
        rkb_runtime::schema::k8s::kubernetes_version(),
        rkb_envtest::KUBERNETES_VERSION,
        "run manifests/hack/k8s-semantics.py after changing KUBERNETES_VERSION"
    );
}

// ---------------------------------------------------------------------------
// controller-gen's union and immutability markers, as CEL the API server runs
// ---------------------------------------------------------------------------

/// A trigger: a cron line or an interval, never both; its zone is fixed once set.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "markers.rkb.dev",
    version = "v1",
    kind = "Trigger",
    namespaced
)]
#[rkb(exactly_one_of = ["cron", "everyMinutes"])]
#[serde(rename_all = "camelCase")]
pub struct TriggerSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every_minutes: Option<u32>,
    #[rkb(immutable)]
    pub zone: String,
}

#[tokio::test]
async fn union_and_immutability_markers_are_enforced_by_the_api_server() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    env.apply()
        .crds([crd::<Trigger>().unwrap().into_definition()])
        .await
        .unwrap();
    let ns = env.create_namespace().await.unwrap();
    let api = Api::<Trigger>::namespaced(env.client(), &ns);
    let spec = |cron: Option<&str>, every: Option<u32>, zone: &str| TriggerSpec {
        cron: cron.map(str::to_owned),
        every_minutes: every,
        zone: zone.to_owned(),
    };
    for (name, both_or_neither) in [
        ("both", spec(Some("@daily"), Some(5), "eu")),
        ("neither", spec(None, None, "eu")),
    ] {
        let message = refusal(
            api.create(&PostParams::default(), &Trigger::new(name, both_or_neither))
                .await
                .unwrap_err(),
        );
        assert!(
            message.contains("exactly one of cron, everyMinutes must be set"),
            "{message}"
        );
    }
    let mut trigger = api
        .create(
            &PostParams::default(),
            &Trigger::new("one", spec(Some("@daily"), None, "eu")),
        )
        .await
        .unwrap();
    trigger.spec.zone = "us".into();
    let message = refusal(
        api.replace("one", &PostParams::default(), &trigger)
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("spec.zone") && message.contains("value is immutable"),
        "{message}"
    );
}

// ---------------------------------------------------------------------------
// Lists of optional items: the API server keeps a null item and checks it
// ---------------------------------------------------------------------------

/// Lists whose items may be `None`, which serde writes as `null`.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(group = "nulls.rkb.dev", version = "v1", kind = "Gaps", namespaced)]
#[serde(rename_all = "camelCase")]
pub struct GapsSpec {
    pub nested: Vec<Option<Vec<String>>>,
    pub names: Vec<Option<String>>,
}

/// A list item is no field the API server could drop: without `nullable` on the items
/// it refused `spec.nested[1] in body must be of type array: "null"`.
#[tokio::test]
async fn null_items_of_a_list_of_options_are_accepted_and_kept() {
    let env = rkb_envtest::shared_by(module_path!()).await;
    let crd = crd::<Gaps>().unwrap().into_definition();
    env.apply().crds([crd]).await.unwrap();
    let ns = env.create_namespace().await.unwrap();
    let api = Api::<Gaps>::namespaced(env.client(), &ns);
    let spec = GapsSpec {
        nested: vec![Some(vec!["a".into()]), None],
        names: vec![None, Some("b".into())],
    };
    let created = api
        .create(&PostParams::default(), &Gaps::new("gaps", spec.clone()))
        .await
        .unwrap();
    assert_eq!(created.spec, spec);
    assert_eq!(api.get("gaps").await.unwrap().spec, spec);
}

/// An enum's values cannot hold the null an optional item is: refused by `crd()`,
/// naming the field and the fix, before any API server sees it.
#[test]
fn a_list_of_optional_enum_values_is_refused_with_the_fix() {
    #[rkb_runtime::api]
    #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[kube(group = "nulls.rkb.dev", version = "v1", kind = "Steps", namespaced)]
    pub struct StepsSpec {
        pub policies: Vec<Option<Policy>>,
    }
    let message = crd::<Steps>().unwrap_err().to_string();
    for expected in [".spec.policies[*]", "Vec<T>` instead of `Vec<Option<T>>`"] {
        assert!(
            message.contains(expected),
            "{expected:?} not in:\n{message}"
        );
    }
}
