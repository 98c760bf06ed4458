use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Schedule", namespaced)]
#[rkb(exactly_one_of = ["cron", "every_minutes"], at_most_one_of = ["cron"])]
#[rkb(at_least_one_of = ["cron", "name", "cronn"], exactly_one_of = ["cron", "cron"])]
#[serde(rename_all = "camelCase")]
pub struct ScheduleSpec {
    pub name: String,
    pub cron: Option<String>,
    pub every_minutes: Option<u32>,
    #[rkb(exactly_one_of = ["a", "b"], immutable = false, title = "")]
    pub zone: Option<String>,
    #[rkb(external_docs(url = "example.com/docs"), external_docs = "https://example.com")]
    pub docs: Option<String>,
    #[rkb(external_docs(description = "the guide"), items(struct_type = merged))]
    pub targets: Vec<Target>,
    #[rkb(skipversion)]
    pub old: Option<String>,
}

/// A reusable string type: its allowed values go with it.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[rkb(enum_values = ["a", "b"], exactly_one_of = ["x", "y"])]
pub enum Target {
    A,
    B,
}

fn main() {}
