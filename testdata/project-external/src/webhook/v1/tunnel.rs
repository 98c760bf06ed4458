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

//! Admission webhooks for Tunnel relay/v1, served by the manager and
//! called by the API server before it stores an object (kubebuilder's `CustomDefaulter` and
//! `CustomValidator`). `#[rkb_runtime::webhook(...)]` on each impl is what `make manifests`
//! writes to config/webhook/manifests.yaml: path, failure policy, operations, ...

use rkb_runtime::webhook;

use crate::api::external::relay::v1::Tunnel;

/// Serves the admission webhooks of Tunnel. Give it fields (a `kube::Client`, ...) if
/// a check needs more than the object.
#[derive(Clone, Copy, Debug, Default)]
pub struct TunnelWebhook;

#[rkb_runtime::webhook(
    path = "/mutate-relay-example-net-v1-tunnel",
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl webhook::Defaulter<Tunnel> for TunnelWebhook {
    /// Fills in what a client left out of a Tunnel being created or updated; the
    /// manager answers with the JSON patch of the changes. An error refuses the request.
    async fn apply_defaults(
        &self,
        _request: &webhook::Request,
        object: &mut Tunnel,
    ) -> Result<(), webhook::Denied> {
        tracing::debug!(name = ?object.metadata.name, "defaulting Tunnel");
        // TODO(user): set the defaults, e.g. `object.spec.size.get_or_insert(1);`. Constant
        // defaults of a custom resource can go on its type instead: #[rkb(default = ...)].
        Ok(())
    }
}

#[rkb_runtime::webhook(
    path = "/validate-relay-example-net-v1-tunnel",
    failure_policy = "fail",
    side_effects = "none",
    operations(create, update)
)]
impl webhook::Validator<Tunnel> for TunnelWebhook {
    async fn validate_create(
        &self,
        _request: &webhook::Request,
        object: &Tunnel,
    ) -> Result<webhook::Warnings, webhook::Denied> {
        Self::validate(object)
    }

    async fn validate_update(
        &self,
        _request: &webhook::Request,
        _old: &Tunnel,
        new: &Tunnel,
    ) -> Result<webhook::Warnings, webhook::Denied> {
        // TODO(user): refuse changes that are not allowed by comparing `_old` with `new`.
        Self::validate(new)
    }

    // Deletions are not reviewed: to check them, add `delete` to `operations(...)` above
    // and implement `validate_delete`.
}

impl TunnelWebhook {
    /// The checks of a Tunnel being created or updated that its schema cannot express.
    /// Each field at fault gets an error that names it (`Path::new("spec").child("size")`
    /// with `.invalid(value, why)`, `.required(why)`, `.forbidden(why)`, `.duplicate(value)`
    /// or `.not_supported(value, &[...])`): the API server refuses with all of them at
    /// once, as its own validation does, and kubectl prints one line per field. Warnings
    /// let the object through and kubectl prints them.
    fn validate(object: &Tunnel) -> Result<webhook::Warnings, webhook::Denied> {
        let name = object.metadata.name.clone().unwrap_or_default();
        tracing::debug!(%name, "validating Tunnel");
        // TODO(user): check the object, pushing one error per field at fault (make
        // `errors` mutable), e.g.
        //     errors.push(webhook::field::Path::new("spec").child("size").invalid(size, "must be at most 10"));
        let errors = webhook::field::ErrorList::new();
        errors.into_result("Tunnel.relay.example.net", &name)?;
        Ok(webhook::Warnings::new())
    }
}

// +rkb:scaffold:webhook-impls

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The API server may call a defaulting webhook again (reinvocation): a second pass
    /// must change nothing.
    #[tokio::test]
    async fn defaulting_is_idempotent() {
        let create = request(webhook::Operation::Create);
        let mut once = Tunnel::default();
        webhook::Defaulter::apply_defaults(&TunnelWebhook, &create, &mut once)
            .await
            .unwrap_or_else(|denied| panic!("defaulting refused the object: {denied}"));
        let mut twice = once.clone();
        webhook::Defaulter::apply_defaults(&TunnelWebhook, &create, &mut twice)
            .await
            .unwrap_or_else(|denied| panic!("defaulting refused the object: {denied}"));
        assert_eq!(once, twice, "a second defaulting pass changed the object");
    }

    /// TODO(user): make this object valid by your rules, and add a test per rule with an
    /// object it must refuse.
    #[tokio::test]
    async fn a_valid_object_is_admitted() {
        let object = Tunnel::default();
        let created = webhook::Validator::validate_create(
            &TunnelWebhook,
            &request(webhook::Operation::Create),
            &object,
        )
        .await;
        assert_eq!(created, Ok(webhook::Warnings::new()));
        let updated = webhook::Validator::validate_update(
            &TunnelWebhook,
            &request(webhook::Operation::Update),
            &object,
            &object,
        )
        .await;
        assert_eq!(updated, Ok(webhook::Warnings::new()));
    }
    // +rkb:scaffold:webhook-tests
}
