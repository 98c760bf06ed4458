//! `config/webhook/manifests.yaml` (the Mutating and ValidatingWebhookConfiguration, as
//! controller-gen writes them from `+kubebuilder:webhook` markers) and the conversion
//! stanza of CRDs whose versions a webhook converts.

use std::collections::BTreeSet;

use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations,
    ServiceReference, ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use rkb_core::webhook::selector::{self, Operator};
use rkb_core::webhook::{Kind, Settings};

use crate::sources::WebhookImpl;

/// The Service kubebuilder's `config/webhook/service.yaml` declares; kustomize prefixes
/// its name and sets its namespace in `config/default`.
pub const SERVICE_NAME: &str = "webhook-service";
/// The Service is the manager's, in its namespace placeholder.
pub const SERVICE_NAMESPACE: &str = crate::rbac::MANAGER_NAMESPACE;
pub use rkb_core::webhook::CONVERSION_PATH;
/// Where `make manifests` writes the webhook configurations.
pub const WEBHOOK_FILE: &str = "config/webhook/manifests.yaml";

/// One webhook of an operator, for [`Manifests::webhooks`](crate::Manifests::webhooks).
// A handful per operator, made once by `make manifests`: boxing the settings would only
// make them harder to match on.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Webhook {
    /// A defaulting (mutating) or validating webhook for one version of a resource.
    Admission {
        kind: Kind,
        group: String,
        version: String,
        /// The resource (plural), e.g. `memcacheds`.
        plural: String,
        /// The kind, e.g. `Memcached` (for the default path and name).
        resource_kind: String,
        settings: Settings,
    },
    /// Conversion between the versions of the CRD `name` (`<plural>.<group>`).
    Conversion { crd: String },
    /// An admission webhook whose settings are those of an impl in the operator's sources,
    /// found when the manifests are rendered ([`defaulting`], [`validating`]).
    Declared(Box<Declared>),
}

/// An admission webhook of a resource, named by the path of its impl in the operator, whose
/// `#[rkb_runtime::webhook(...)]` attribute [`Manifests::rules_from`](crate::Manifests::rules_from)
/// reads: what an API crate's generator lists, since it cannot name the operator's types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    kind: Kind,
    group: String,
    version: String,
    plural: String,
    resource_kind: String,
    /// The resource's Rust type, e.g. `my_api::cache::v1alpha1::Memcached`.
    resource_type: String,
    /// The impl's self type from the operator's crate root, e.g.
    /// `webhook::v1alpha1::memcached::MemcachedWebhook`.
    implementation: String,
    /// Where it is listed: `file:line` of the generator.
    listed_at: String,
}

/// The defaulting webhook of `K` that the operator's `impl Defaulter<K>` for
/// `implementation` (its self type's path from the operator's crate root) serves, with the
/// settings of that impl's attribute, e.g.
/// `defaulting::<cache::v1alpha1::Memcached>("webhook::v1alpha1::memcached::MemcachedWebhook")`.
#[track_caller]
pub fn defaulting<K: Resource<DynamicType = ()>>(implementation: &str) -> Webhook {
    Webhook::declared::<K>(Kind::Mutating, implementation)
}

/// The validating webhook of `K` that the operator's `impl Validator<K>` for
/// `implementation` serves; see [`defaulting`].
#[track_caller]
pub fn validating<K: Resource<DynamicType = ()>>(implementation: &str) -> Webhook {
    Webhook::declared::<K>(Kind::Validating, implementation)
}

/// The conversion webhook of `K`'s CRD (any of its versions).
pub fn conversion<K: Resource<DynamicType = ()>>() -> Webhook {
    Webhook::conversion::<K>()
}

/// The trait the constructors below read group, version and plural from (kube's).
pub use kube_core::Resource;

impl Webhook {
    /// A defaulting (`Kind::Mutating`) or validating webhook for `K` with `settings`.
    pub fn admission<K: Resource<DynamicType = ()>>(kind: Kind, settings: Settings) -> Self {
        Self::Admission {
            kind,
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            resource_kind: K::kind(&()).into_owned(),
            settings,
        }
    }

    #[track_caller]
    fn declared<K: Resource<DynamicType = ()>>(kind: Kind, implementation: &str) -> Self {
        let at = std::panic::Location::caller();
        Self::Declared(Box::new(Declared {
            kind,
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            resource_kind: K::kind(&()).into_owned(),
            resource_type: std::any::type_name::<K>().to_owned(),
            implementation: implementation.to_owned(),
            listed_at: format!("{}:{}", at.file(), at.line()),
        }))
    }

    /// A [`Webhook::Declared`] as an admission webhook with the settings of the impl it
    /// names among `impls` (read from `read`, for the error); other webhooks as they are.
    pub(crate) fn resolve(self, impls: &[WebhookImpl], read: &str) -> Result<Self, WebhookError> {
        let Self::Declared(declared) = self else {
            return Ok(self);
        };
        let found = declared.find(impls, read)?;
        let Declared {
            kind,
            group,
            version,
            plural,
            resource_kind,
            ..
        } = *declared;
        Ok(Self::Admission {
            kind,
            group,
            version,
            plural,
            resource_kind,
            settings: found.settings.clone(),
        })
    }

    /// Conversion of the CRD of `K` (any of its versions).
    pub fn conversion<K: Resource<DynamicType = ()>>() -> Self {
        Self::Conversion {
            crd: crate::crd::name::<K>(),
        }
    }
}

/// The last segment of a type's path, without generic arguments: `Memcached` for
/// `crate::api::cache::v1alpha1::Memcached`.
fn last_segment(path: &str) -> &str {
    let path = path.split('<').next().unwrap_or(path).trim();
    path.rsplit("::").next().unwrap_or(path).trim()
}

impl Declared {
    /// Where the generator lists it, `file:line`.
    pub fn listed_at(&self) -> &str {
        &self.listed_at
    }

    /// The resource's Rust type.
    pub fn resource_type(&self) -> &str {
        &self.resource_type
    }

    /// The impl this declaration names, or why there is none.
    fn find<'a>(
        &self,
        impls: &'a [WebhookImpl],
        read: &str,
    ) -> Result<&'a WebhookImpl, WebhookError> {
        let (module, self_type) = match self.implementation.rsplit_once("::") {
            Some((module, self_type)) => (module, self_type),
            None => ("", self.implementation.as_str()),
        };
        let wanted = self.kind.trait_name();
        let resource = last_segment(&self.resource_type);
        let named: Vec<&WebhookImpl> = impls
            .iter()
            .filter(|i| i.module == module && last_segment(&i.self_type) == self_type)
            .collect();
        let of_kind: Vec<&WebhookImpl> = named
            .iter()
            .copied()
            .filter(|i| i.kind == self.kind)
            .collect();
        let of_resource: Vec<&WebhookImpl> = of_kind
            .iter()
            .copied()
            .filter(|i| last_segment(&i.resource) == resource)
            .collect();
        let reason = match (named.as_slice(), of_kind.as_slice(), of_resource.as_slice()) {
            (_, _, [found]) => return Ok(found),
            (_, _, [_, ..]) => format!(
                "{} impls of {wanted} for {self_type} in module {module} are for a type named \
                 {resource}; keep one per module and type",
                of_resource.len()
            ),
            ([], _, _) => format!("there is no webhook impl for {self_type} in module {module}"),
            (_, [], _) => format!(
                "{self_type} in module {module} has no `impl {wanted}<{resource}>` carrying \
                 #[rkb_runtime::webhook(...)]: list it with {} instead, or add the impl",
                match self.kind {
                    Kind::Mutating => "`webhooks::validating`",
                    Kind::Validating => "`webhooks::defaulting`",
                }
            ),
            (_, _, []) => format!(
                "the {wanted} impls of {self_type} in module {module} are not for a type named \
                 {resource} ({})",
                self.resource_type
            ),
        };
        let listed: Vec<String> = impls
            .iter()
            .map(|i| {
                format!(
                    "\n  impl {}<{}> for {} in {} (module {})",
                    i.kind.trait_name(),
                    i.resource,
                    i.self_type,
                    i.file.display(),
                    if i.module.is_empty() {
                        "crate root"
                    } else {
                        &i.module
                    }
                )
            })
            .collect();
        let listed = if listed.is_empty() {
            " none".to_owned()
        } else {
            listed.concat()
        };
        Err(WebhookError::NoImpl(format!(
            "{}: the {} webhook of {}/{} {} names the impl `{}`, looked for as `impl {wanted}<{resource}> \
             for {self_type}` with #[rkb_runtime::webhook(...)] in module {} of the sources read ({read}), \
             but {reason}. Write the path of the impl's self type from the operator's crate root \
             (e.g. \"webhook::v1alpha1::memcached::MemcachedWebhook\"). Webhook impls found:{listed}",
            self.listed_at,
            match self.kind {
                Kind::Mutating => "defaulting",
                Kind::Validating => "validating",
            },
            self.group,
            self.version,
            self.resource_kind,
            self.implementation,
            if module.is_empty() {
                "(the crate root)"
            } else {
                module
            },
        )))
    }
}

/// Why the webhooks cannot be rendered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    #[error("webhook {webhook}: {reason}")]
    Invalid { webhook: String, reason: String },
    #[error(
        "two webhooks have the {what} {value:?}: give one another {what} in its \
         #[rkb_runtime::webhook(...)] attribute"
    )]
    Duplicate { what: &'static str, value: String },
    /// A declared webhook names no impl of the sources read, or one of another kind or resource.
    #[error("{0}")]
    NoImpl(String),
    /// Webhooks are declared by impl, but no sources were read.
    #[error(
        "{listed_at}: the webhook of {resource} is declared by its impl, but no sources were read: \
         add `.rules_from(<the operator's src/>)` to the Manifests"
    )]
    NoSources { listed_at: String, resource: String },
    #[error("a conversion webhook is declared for the CRD {0}, which is not in the list of CRDs")]
    NoSuchCrd(String),
    #[error(
        "the CRD {0} has a conversion webhook but a single version: add the other versions' \
         crd::<K>() to the list, or drop the conversion webhook"
    )]
    SingleVersion(String),
}

/// The manager's Service at `path`, or the settings' `url`.
fn client_config(settings: &Settings, path: String) -> WebhookClientConfig {
    if let Some(url) = &settings.url {
        return WebhookClientConfig {
            url: Some(url.clone()),
            ..WebhookClientConfig::default()
        };
    }
    WebhookClientConfig {
        service: Some(ServiceReference {
            name: SERVICE_NAME.to_owned(),
            namespace: SERVICE_NAMESPACE.to_owned(),
            path: Some(path),
            port: None,
        }),
        ..WebhookClientConfig::default()
    }
}

/// The two configurations (either may be `None`: nothing of that kind), sorted by name
/// like controller-gen, after checking every setting.
#[allow(clippy::type_complexity)]
pub fn configurations(
    webhooks: &[Webhook],
) -> Result<
    (
        Option<MutatingWebhookConfiguration>,
        Option<ValidatingWebhookConfiguration>,
    ),
    WebhookError,
> {
    let mut mutating = Vec::new();
    let mut validating = Vec::new();
    let mut names = BTreeSet::new();
    let mut paths = BTreeSet::new();
    for webhook in webhooks {
        let Webhook::Admission {
            kind,
            group,
            version,
            plural,
            resource_kind,
            settings,
        } = webhook
        else {
            continue;
        };
        let (name, path) = webhook_names(settings, *kind, group, version, resource_kind)?;
        unique(&mut names, "name", &name)?;
        unique(&mut paths, "path", &path)?;
        let rules = rules(settings, group, version, plural);
        // The two kinds of webhook share every field but their type.
        let admission_review_versions = settings
            .admission_review_versions
            .iter()
            .map(|version| version.as_str().to_owned())
            .collect();
        let client_config = client_config(settings, path);
        let failure_policy = Some(settings.failure_policy.as_str().to_owned());
        let match_policy = Some(settings.match_policy.as_str().to_owned());
        let side_effects = settings.side_effects.as_str().to_owned();
        let timeout_seconds = settings.timeout_seconds.map(i32::from);
        let namespace_selector = settings.namespace_selector.as_deref().map(label_selector);
        let object_selector = settings.object_selector.as_deref().map(label_selector);
        let match_conditions = (!settings.match_conditions.is_empty()).then(|| {
            let condition = |c: &rkb_core::webhook::MatchCondition| MatchCondition {
                name: c.name.clone(),
                expression: c.expression.clone(),
            };
            settings.match_conditions.iter().map(condition).collect()
        });
        match kind {
            Kind::Mutating => mutating.push(MutatingWebhook {
                admission_review_versions,
                client_config,
                failure_policy,
                match_conditions,
                match_policy,
                name,
                namespace_selector,
                object_selector,
                reinvocation_policy: settings
                    .reinvocation_policy
                    .map(|policy| policy.as_str().to_owned()),
                rules,
                side_effects,
                timeout_seconds,
            }),
            Kind::Validating => validating.push(ValidatingWebhook {
                admission_review_versions,
                client_config,
                failure_policy,
                match_conditions,
                match_policy,
                name,
                namespace_selector,
                object_selector,
                rules,
                side_effects,
                timeout_seconds,
            }),
        }
    }
    mutating.sort_by(|a, b| a.name.cmp(&b.name));
    validating.sort_by(|a, b| a.name.cmp(&b.name));
    let meta = |name: &str| ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    };
    let mutating = (!mutating.is_empty()).then(|| MutatingWebhookConfiguration {
        metadata: meta("mutating-webhook-configuration"),
        webhooks: Some(mutating),
    });
    let validating = (!validating.is_empty()).then(|| ValidatingWebhookConfiguration {
        metadata: meta("validating-webhook-configuration"),
        webhooks: Some(validating),
    });
    Ok((mutating, validating))
}

/// A webhook's name and path, from its settings or derived from its kind.
fn webhook_names(
    settings: &Settings,
    kind: Kind,
    group: &str,
    version: &str,
    resource_kind: &str,
) -> Result<(String, String), WebhookError> {
    let name = settings.name_for(kind, version, resource_kind);
    let path = settings.path_for(kind, group, version, resource_kind);
    settings.check(kind).map_err(|e| WebhookError::Invalid {
        webhook: name.clone(),
        reason: e.to_string(),
    })?;
    Ok((name, path))
}

/// A selector the settings' check accepted, as a `LabelSelector`: `key=value` in
/// `matchLabels` (as kubectl puts them), the rest in `matchExpressions`.
fn label_selector(text: &str) -> LabelSelector {
    let mut out = LabelSelector::default();
    for requirement in selector::parse(text).unwrap_or_default() {
        let labels = out.match_labels.get_or_insert_default();
        match (requirement.operator, requirement.values.as_slice()) {
            (Operator::Equals, [value]) if !labels.contains_key(&requirement.key) => {
                labels.insert(requirement.key, value.clone());
            }
            (operator, values) => {
                let expressions = out.match_expressions.get_or_insert_default();
                expressions.push(LabelSelectorRequirement {
                    key: requirement.key,
                    operator: operator.expression_operator().unwrap_or("In").to_owned(),
                    values: (!values.is_empty()).then(|| values.to_vec()),
                });
            }
        }
    }
    out.match_labels = out.match_labels.filter(|labels| !labels.is_empty());
    out
}

/// Refuses a second webhook with the same `what` (name or path).
fn unique(
    seen: &mut BTreeSet<String>,
    what: &'static str,
    value: &str,
) -> Result<(), WebhookError> {
    if seen.insert(value.to_owned()) {
        return Ok(());
    }
    Err(WebhookError::Duplicate {
        what,
        value: value.to_owned(),
    })
}

/// What the API server sends a webhook: the operations of `settings` on `plural`.
fn rules(
    settings: &Settings,
    group: &str,
    version: &str,
    plural: &str,
) -> Option<Vec<RuleWithOperations>> {
    Some(vec![RuleWithOperations {
        api_groups: Some(vec![group.to_owned()]),
        api_versions: Some(vec![version.to_owned()]),
        operations: Some(
            settings
                .operations
                .iter()
                .map(|op| op.as_str().to_owned())
                .collect(),
        ),
        resources: Some(vec![plural.to_owned()]),
        scope: None,
    }])
}

/// The CRDs that a conversion webhook converts.
pub(crate) fn converted_crds(webhooks: &[Webhook]) -> BTreeSet<&str> {
    webhooks
        .iter()
        .filter_map(|webhook| match webhook {
            Webhook::Conversion { crd } => Some(crd.as_str()),
            Webhook::Admission { .. } | Webhook::Declared(_) => None,
        })
        .collect()
}

/// Adds `conversion: strategy: Webhook` pointing at the webhook Service's `/convert`
/// to the CRD `name`, given as JSON.
pub(crate) fn add_conversion(name: &str, crd: &mut serde_json::Value) -> Result<(), WebhookError> {
    let versions = crd
        .pointer("/spec/versions")
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len);
    if versions < 2 {
        return Err(WebhookError::SingleVersion(name.to_owned()));
    }
    crd["spec"]["conversion"] = serde_json::json!({
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": SERVICE_NAME,
                    "namespace": SERVICE_NAMESPACE,
                    "path": CONVERSION_PATH,
                },
            },
            "conversionReviewVersions": ["v1"],
        },
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use rkb_core::webhook::{FailurePolicy, Operation};

    use super::*;

    fn admission(kind: Kind, settings: Settings) -> Webhook {
        Webhook::Admission {
            kind,
            group: "cache.example.com".into(),
            version: "v1alpha1".into(),
            plural: "memcacheds".into(),
            resource_kind: "Memcached".into(),
            settings,
        }
    }

    #[test]
    fn configurations_follow_the_settings() {
        let validating = Settings {
            failure_policy: FailurePolicy::Ignore,
            operations: vec![Operation::Create, Operation::Update, Operation::Delete],
            timeout_seconds: Some(5),
            ..Settings::default()
        };
        let (mutating, validating) = configurations(&[
            admission(Kind::Mutating, Settings::default()),
            admission(Kind::Validating, validating),
        ])
        .unwrap();
        let mutating = &mutating.unwrap().webhooks.unwrap()[0];
        assert_eq!(mutating.name, "mmemcached-v1alpha1.kb.io");
        assert_eq!(
            mutating
                .client_config
                .service
                .as_ref()
                .unwrap()
                .path
                .as_deref(),
            Some("/mutate-cache-example-com-v1alpha1-memcached")
        );
        assert_eq!(mutating.failure_policy.as_deref(), Some("Fail"));
        let validating = &validating.unwrap().webhooks.unwrap()[0];
        assert_eq!(validating.failure_policy.as_deref(), Some("Ignore"));
        assert_eq!(validating.timeout_seconds, Some(5));
        assert_eq!(
            validating.rules.as_ref().unwrap()[0].operations,
            Some(vec!["CREATE".into(), "UPDATE".into(), "DELETE".into()])
        );
    }

    #[test]
    fn selectors_conditions_url_and_reinvocation_are_rendered() {
        use rkb_core::webhook::{MatchCondition, ReinvocationPolicy, ReviewVersion};
        let conditions = vec![MatchCondition {
            name: "not-kube-system".into(),
            expression: "request.namespace != 'kube-system'".into(),
        }];
        let mutating = Settings {
            reinvocation_policy: Some(ReinvocationPolicy::IfNeeded),
            admission_review_versions: vec![ReviewVersion::V1, ReviewVersion::V1beta1],
            namespace_selector: Some("environment in (prod, staging), tier=web, !legacy".into()),
            object_selector: Some("app!=helm".into()),
            match_conditions: conditions,
            ..Settings::default()
        };
        let validating = Settings {
            url: Some("https://hooks.example.com:9443/validate-memcached".into()),
            ..Settings::default()
        };
        let (mutating, validating) = configurations(&[
            admission(Kind::Mutating, mutating),
            admission(Kind::Validating, validating),
        ])
        .unwrap();
        let mutating = serde_json::to_value(&mutating.unwrap().webhooks.unwrap()[0]).unwrap();
        assert_eq!(mutating["reinvocationPolicy"], "IfNeeded");
        assert_eq!(
            mutating["admissionReviewVersions"],
            serde_json::json!(["v1", "v1beta1"])
        );
        assert_eq!(
            mutating["namespaceSelector"],
            serde_json::json!({
                "matchLabels": {"tier": "web"},
                "matchExpressions": [
                    {"key": "environment", "operator": "In", "values": ["prod", "staging"]},
                    {"key": "legacy", "operator": "DoesNotExist"},
                ],
            })
        );
        assert_eq!(
            mutating["objectSelector"],
            serde_json::json!({"matchExpressions": [
                {"key": "app", "operator": "NotIn", "values": ["helm"]},
            ]})
        );
        assert_eq!(
            mutating["matchConditions"],
            serde_json::json!([{
                "name": "not-kube-system",
                "expression": "request.namespace != 'kube-system'",
            }])
        );
        let validating = &validating.unwrap().webhooks.unwrap()[0];
        assert_eq!(
            serde_json::to_value(&validating.client_config).unwrap(),
            serde_json::json!({"url": "https://hooks.example.com:9443/validate-memcached"})
        );
        assert_eq!(validating.namespace_selector, None);
        assert_eq!(validating.match_conditions, None);
    }

    #[test]
    fn clashes_and_bad_settings_are_errors() {
        let same_path = Settings {
            path: Some("/hooks".into()),
            ..Settings::default()
        };
        let error = configurations(&[
            admission(Kind::Mutating, same_path.clone()),
            admission(Kind::Validating, same_path),
        ])
        .unwrap_err();
        assert!(
            matches!(error, WebhookError::Duplicate { what: "path", .. }),
            "{error}"
        );

        let bad = Settings {
            timeout_seconds: Some(31),
            ..Settings::default()
        };
        let error = configurations(&[admission(Kind::Validating, bad)]).unwrap_err();
        assert!(error.to_string().contains("1 to 30"), "{error}");

        let reinvoked = Settings {
            reinvocation_policy: Some(rkb_core::webhook::ReinvocationPolicy::IfNeeded),
            ..Settings::default()
        };
        let error = configurations(&[admission(Kind::Validating, reinvoked)]).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("webhook vmemcached-v1alpha1.kb.io: `reinvocation_policy`"),
            "{error}"
        );

        // An empty expression; its CEL syntax is the derive's check (rkb-core's `cel`, which
        // rkb-manifests does not ask for), tested in derive/tests/ui/webhook_settings.rs.
        let blank = Settings {
            match_conditions: vec![rkb_core::webhook::MatchCondition {
                name: "blank".into(),
                expression: "  ".into(),
            }],
            ..Settings::default()
        };
        let error = configurations(&[admission(Kind::Mutating, blank)]).unwrap_err();
        assert!(
            error.to_string().contains(
                "the expression of match_condition \"blank\" is not valid CEL: it is empty"
            ),
            "{error}"
        );
    }
}
