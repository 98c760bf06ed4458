// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! Admission webhooks for Memcached cache/v1alpha1, served by the manager and
//! called by the API server before it stores an object (kubebuilder's `CustomDefaulter` and
//! `CustomValidator`). `#[rkb_runtime::webhook(...)]` on each impl is what `make manifests`
//! writes to config/webhook/manifests.yaml: path, failure policy, operations, ...
//!
//! They do what the CRD's schema and CEL rules cannot, because it depends on the object's
//! name: the defaulter labels each Memcached with its instance name, and the validator
//! refuses names the controller could not give the Service it creates.

use rkb_runtime::webhook;

use crate::api::cache::v1alpha1::Memcached;

/// Serves the admission webhooks of Memcached. Give it fields (a `kube::Client`, ...) if
/// a check needs more than the object.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemcachedWebhook;

// ANCHOR: defaulter
#[rkb_runtime::webhook(
    path = "/mutate-cache-example-com-v1alpha1-memcached",
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl webhook::Defaulter<Memcached> for MemcachedWebhook {
    /// Fills in what a client left out of a Memcached being created or updated; the
    /// manager answers with the JSON patch of the changes. An error refuses the request.
    async fn apply_defaults(
        &self,
        _request: &webhook::Request,
        object: &mut Memcached,
    ) -> Result<(), webhook::Denied> {
        tracing::debug!(name = ?object.metadata.name, "defaulting Memcached");
        // With `generateName` the name is only known after admission: leave it unlabelled.
        if let Some(name) = object.metadata.name.clone() {
            let labels = object.metadata.labels.get_or_insert_default();
            labels
                .entry(NAME_LABEL.into())
                .or_insert_with(|| "memcached".into());
            labels.entry(INSTANCE_LABEL.into()).or_insert(name);
        }
        Ok(())
    }
}
// ANCHOR_END: defaulter

#[rkb_runtime::webhook(
    path = "/validate-cache-example-com-v1alpha1-memcached",
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl webhook::Validator<Memcached> for MemcachedWebhook {
    async fn validate_create(
        &self,
        _request: &webhook::Request,
        object: &Memcached,
    ) -> Result<webhook::Warnings, webhook::Denied> {
        Self::validate(object)
    }

    async fn validate_update(
        &self,
        _request: &webhook::Request,
        _old: &Memcached,
        new: &Memcached,
    ) -> Result<webhook::Warnings, webhook::Denied> {
        Self::validate(new)
    }

    // Deletions are not reviewed: to check them, add `delete` to `operations(...)` above
    // and implement `validate_delete`.
}

impl MemcachedWebhook {
    /// The checks of a Memcached being created or updated that its schema cannot express.
    /// `Err(webhook::Denied::new("..."))` refuses it with that message; warnings let it
    /// through and kubectl prints them.
    // ANCHOR: validate
    fn validate(object: &Memcached) -> Result<webhook::Warnings, webhook::Denied> {
        tracing::debug!(name = ?object.metadata.name, "validating Memcached");
        // The controller names the Service after the Memcached, and a Service name must be a
        // DNS-1035 label, stricter than the subdomain a custom resource may be named.
        if let Some(name) = &object.metadata.name
            && let Some(problem) = service_name_problem(name)
        {
            return Err(webhook::Denied::new(format!(
                "metadata.name {name:?} cannot name the memcached Service: {problem}; use \
                 lowercase letters, digits and '-', starting with a letter, e.g. \"cache-1\""
            )));
        }
        let mut warnings = webhook::Warnings::new();
        if object.spec.size == 1 {
            warnings.push(
                "spec.size is 1: a single memcached pod loses the whole cache when it restarts"
                    .into(),
            );
        }
        Ok(warnings)
    }
    // ANCHOR_END: validate
}

// +rkb:scaffold:webhook-impls

/// The labels the defaulter sets (kubernetes.io's recommended labels).
pub const NAME_LABEL: &str = "app.kubernetes.io/name";
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// Why `name` is no DNS-1035 label, if it is not.
fn service_name_problem(name: &str) -> Option<&'static str> {
    if name.len() > 63 {
        Some("it is longer than 63 characters")
    } else if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        Some("it does not start with a lowercase letter")
    } else if name.ends_with('-') {
        Some("it ends with '-'")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        Some("it holds a character other than a-z, 0-9 and '-'")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cache::v1alpha1::MemcachedSpec;

    /// A review of `operation`, as the API server sends it.
    fn request(operation: webhook::Operation) -> webhook::Request {
        webhook::Request {
            uid: "test".into(),
            operation,
            name: "sample".into(),
            namespace: Some("default".into()),
            user_info: Default::default(),
            dry_run: false,
            sub_resource: None,
        }
    }

    fn memcached(name: &str, size: i32) -> Memcached {
        Memcached::new(
            name,
            MemcachedSpec {
                size,
                container_port: None,
            },
        )
    }

    async fn defaulted(mut object: Memcached) -> Memcached {
        webhook::Defaulter::apply_defaults(
            &MemcachedWebhook,
            &request(webhook::Operation::Create),
            &mut object,
        )
        .await
        .unwrap_or_else(|denied| panic!("defaulting refused the object: {denied}"));
        object
    }

    async fn validated(object: &Memcached) -> Result<webhook::Warnings, webhook::Denied> {
        let created = webhook::Validator::validate_create(
            &MemcachedWebhook,
            &request(webhook::Operation::Create),
            object,
        )
        .await;
        let updated = webhook::Validator::validate_update(
            &MemcachedWebhook,
            &request(webhook::Operation::Update),
            object,
            object,
        )
        .await;
        assert_eq!(created, updated, "create and update check the same");
        created
    }

    #[tokio::test]
    async fn memcacheds_are_labelled_with_their_name_keeping_the_users_labels() {
        let labels = defaulted(memcached("cache", 3))
            .await
            .metadata
            .labels
            .unwrap();
        assert_eq!(labels[NAME_LABEL], "memcached");
        assert_eq!(labels[INSTANCE_LABEL], "cache");

        let mut own = memcached("cache", 3);
        own.metadata.labels = Some([(NAME_LABEL.to_owned(), "sessions".to_owned())].into());
        let labels = defaulted(own).await.metadata.labels.unwrap();
        assert_eq!(labels[NAME_LABEL], "sessions");
        assert_eq!(labels[INSTANCE_LABEL], "cache");

        let mut generated = memcached("cache", 3);
        generated.metadata.name = None;
        generated.metadata.generate_name = Some("cache-".into());
        assert_eq!(defaulted(generated).await.metadata.labels, None);
    }

    /// The API server may call a defaulting webhook again (reinvocation): a second pass
    /// must change nothing.
    #[tokio::test]
    async fn defaulting_is_idempotent() {
        let once = defaulted(memcached("cache", 3)).await;
        assert_eq!(defaulted(once.clone()).await, once);
    }

    #[tokio::test]
    async fn a_valid_memcached_is_admitted() {
        assert_eq!(validated(&memcached("cache-1", 3)).await, Ok(Vec::new()));
        let longest = "c".repeat(63);
        assert_eq!(validated(&memcached(&longest, 3)).await, Ok(Vec::new()));
    }

    #[tokio::test]
    async fn names_no_service_can_have_are_refused() {
        for (name, problem) in [
            ("cache.example", "a character other than a-z, 0-9 and '-'"),
            ("1cache", "does not start with a lowercase letter"),
            ("cache-", "ends with '-'"),
            (&"c".repeat(64), "longer than 63 characters"),
        ] {
            let denied = validated(&memcached(name, 3)).await.unwrap_err();
            assert!(
                denied.message().contains(problem) && denied.message().contains("e.g. \"cache-1\""),
                "{name}: {denied}"
            );
        }
    }

    #[tokio::test]
    async fn a_single_pod_is_admitted_with_a_warning() {
        let warnings = validated(&memcached("cache", 1)).await.unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("spec.size is 1"), "{warnings:?}");
    }
    // +rkb:scaffold:webhook-tests
}
