//! Admission webhook settings: what controller-gen's `+kubebuilder:webhook` marker says
//! (path or url, failure policy, side effects, operations, match policy, timeout,
//! reinvocation policy, review versions, selectors, match conditions), and the rules the
//! API server applies to them (admissionregistration.k8s.io/v1 validation).
//!
//! The derive macro checks `#[rkb_runtime::webhook(...)]` with these rules at compile
//! time; the manager serves [`Settings::path`]; rkb-manifests renders the
//! Mutating/ValidatingWebhookConfiguration from the same values.

use std::fmt;

pub mod selector;

/// `failurePolicy`: what the API server does when the webhook cannot be called.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Refuse the request (kubebuilder's default).
    #[default]
    Fail,
    /// Let the request through unchecked.
    Ignore,
}

/// `sideEffects`: admissionregistration/v1 allows only these two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SideEffects {
    #[default]
    None,
    NoneOnDryRun,
}

/// `matchPolicy`: whether requests to other versions of the resource are sent too
/// (converted to the webhook's version).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MatchPolicy {
    Exact,
    /// The API server's default.
    #[default]
    Equivalent,
}

/// One of the `operations` a webhook is called for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

/// `reinvocationPolicy` of a mutating webhook: whether it is called again when a later
/// mutating webhook changed the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReinvocationPolicy {
    /// The API server's default.
    Never,
    IfNeeded,
}

impl ReinvocationPolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Never => "Never",
            Self::IfNeeded => "IfNeeded",
        }
    }
}

/// One of the `admissionReviewVersions` the webhook accepts, most preferred first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewVersion {
    V1,
    V1beta1,
}

impl ReviewVersion {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V1beta1 => "v1beta1",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "v1" => Self::V1,
            "v1beta1" => Self::V1beta1,
            _ => return None,
        })
    }
}

/// One of `matchConditions`: the webhook is called only for requests for which every
/// condition's CEL expression is true.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchCondition {
    /// A qualified name (`[prefix/]name`), unique among the webhook's conditions.
    pub name: String,
    /// A CEL expression over `object`, `oldObject`, `request` and `authorizer`.
    pub expression: String,
}

/// The most `matchConditions` a webhook may have.
pub const MAX_MATCH_CONDITIONS: usize = 64;

impl FailurePolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "Fail",
            Self::Ignore => "Ignore",
        }
    }
}

impl SideEffects {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "None",
            Self::NoneOnDryRun => "NoneOnDryRun",
        }
    }
}

impl MatchPolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "Exact",
            Self::Equivalent => "Equivalent",
        }
    }
}

impl Operation {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
            Self::Connect => "CONNECT",
        }
    }

    /// The lowercase spelling used in attributes and in kubebuilder's `verbs=` marker key.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "create" => Self::Create,
            "update" => Self::Update,
            "delete" => Self::Delete,
            "connect" => Self::Connect,
            _ => return None,
        })
    }
}

/// Where the manager serves conversion reviews, for every kind (kubebuilder's path), and
/// where the CRDs' conversion stanza sends them.
pub const CONVERSION_PATH: &str = "/convert";

/// The longest `timeoutSeconds` the API server accepts.
pub const MAX_TIMEOUT_SECONDS: u8 = 30;

/// The settings of one admission webhook; [`Default`] is kubebuilder's default marker
/// (`failurePolicy=fail`, `sideEffects=None`, `verbs=create;update`) with the path and
/// name derived from the kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The URL path; by default `/mutate-<group>-<version>-<kind>` (or `/validate-…`),
    /// as kubebuilder names it.
    pub path: Option<String>,
    /// The webhook's name in its configuration; by default `m<kind>-<version>.kb.io`
    /// (or `v…`), as kubebuilder names it.
    pub name: Option<String>,
    pub failure_policy: FailurePolicy,
    pub side_effects: SideEffects,
    pub operations: Vec<Operation>,
    pub match_policy: MatchPolicy,
    /// `timeoutSeconds`, 1 to 30; the API server's default is 10.
    pub timeout_seconds: Option<u8>,
    /// Mutating webhooks only; the API server's default is `Never`.
    pub reinvocation_policy: Option<ReinvocationPolicy>,
    /// `admissionReviewVersions`; rkb's webhook server answers `v1`, which must be listed.
    pub admission_review_versions: Vec<ReviewVersion>,
    /// `clientConfig.url` instead of the manager's Service: a webhook served out of the
    /// cluster (`https://host[:port]/path`); the manager serves it at the URL's path.
    pub url: Option<String>,
    /// `namespaceSelector` as kubectl's `--selector` ([`selector::parse`]).
    pub namespace_selector: Option<String>,
    /// `objectSelector` as kubectl's `--selector`.
    pub object_selector: Option<String>,
    pub match_conditions: Vec<MatchCondition>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            path: None,
            name: None,
            failure_policy: FailurePolicy::Fail,
            side_effects: SideEffects::None,
            operations: vec![Operation::Create, Operation::Update],
            match_policy: MatchPolicy::Equivalent,
            timeout_seconds: None,
            reinvocation_policy: None,
            admission_review_versions: vec![ReviewVersion::V1],
            url: None,
            namespace_selector: None,
            object_selector: None,
            match_conditions: Vec::new(),
        }
    }
}

/// Whether a webhook mutates (defaulting) or only validates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Mutating,
    Validating,
}

impl Kind {
    /// Both kinds.
    pub const ALL: [Kind; 2] = [Kind::Mutating, Kind::Validating];

    /// The rkb trait an impl of this kind implements: `Defaulter` or `Validator`.
    pub const fn trait_name(self) -> &'static str {
        match self {
            Self::Mutating => "Defaulter",
            Self::Validating => "Validator",
        }
    }

    const fn prefix(self) -> &'static str {
        match self {
            Self::Mutating => "mutate",
            Self::Validating => "validate",
        }
    }
}

impl Settings {
    /// The path the webhook is served at: the path of [`Settings::url`], [`Settings::path`]
    /// or kubebuilder's default, e.g. `/mutate-cache-example-com-v1alpha1-memcached`.
    pub fn path_for(&self, kind: Kind, group: &str, version: &str, resource_kind: &str) -> String {
        let url_path = self.url.as_deref().and_then(|url| url_parts(url).ok());
        let given = url_path.map(|parts| parts.path.to_owned());
        given.or_else(|| self.path.clone()).unwrap_or_else(|| {
            let group = if group.is_empty() { "core" } else { group };
            format!(
                "/{}-{}-{version}-{}",
                kind.prefix(),
                group.replace('.', "-"),
                resource_kind.to_lowercase()
            )
        })
    }

    /// The webhook's name: [`Settings::name`] or kubebuilder's default, e.g.
    /// `mmemcached-v1alpha1.kb.io`.
    pub fn name_for(&self, kind: Kind, version: &str, resource_kind: &str) -> String {
        self.name.clone().unwrap_or_else(|| {
            format!(
                "{}{}-{version}.kb.io",
                &kind.prefix()[..1],
                resource_kind.to_lowercase()
            )
        })
    }
}

/// Why a webhook setting is invalid; `Display` is a complete sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingError {
    /// A path must start with `/` and be a plain URL path.
    Path(String),
    /// A name must be a DNS subdomain with at least three labels.
    Name {
        name: String,
        reason: String,
    },
    Timeout(u64),
    NoOperations,
    DuplicateOperation(Operation),
    /// `url` and `path` both given.
    UrlAndPath,
    Url {
        url: String,
        reason: String,
    },
    ReinvocationOnValidating,
    ReviewVersionsWithoutV1,
    DuplicateReviewVersion(ReviewVersion),
    Selector {
        /// The attribute key: `namespace_selector` or `object_selector`.
        key: &'static str,
        selector: String,
        reason: String,
    },
    MatchConditionName {
        name: String,
        reason: String,
    },
    DuplicateMatchCondition(String),
    TooManyMatchConditions(usize),
    MatchConditionExpression {
        name: String,
        reason: String,
    },
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Path(path) => write!(
                f,
                "webhook path {path:?} must start with '/' and contain only letters, digits, \
                 '-', '_', '.' and '/', e.g. \"/validate-cache-example-com-v1alpha1-memcached\""
            ),
            Self::Name { name, reason } => write!(
                f,
                "webhook name {name:?} is invalid: {reason}; the API server wants a fully \
                 qualified DNS subdomain, e.g. \"vmemcached-v1alpha1.kb.io\""
            ),
            Self::Timeout(seconds) => write!(
                f,
                "timeout_seconds = {seconds} is out of range: the API server accepts 1 to \
                 {MAX_TIMEOUT_SECONDS}"
            ),
            Self::NoOperations => f.write_str(
                "a webhook needs at least one operation: create, update, delete or connect",
            ),
            Self::DuplicateOperation(op) => {
                write!(
                    f,
                    "operation {} is listed twice",
                    op.as_str().to_lowercase()
                )
            }
            Self::UrlAndPath => f.write_str(
                "`url` and `path` cannot both be set: with `url` the manager serves the webhook \
                 at the URL's path; drop `path`",
            ),
            Self::Url { url, reason } => write!(
                f,
                "url = {url:?} is invalid: {reason}; the API server wants \
                 https://host[:port]/path, e.g. \
                 \"https://webhooks.example.com:9443/validate-cache-example-com-v1alpha1-memcached\""
            ),
            Self::ReinvocationOnValidating => f.write_str(
                "`reinvocation_policy` is for defaulting (mutating) webhooks only: a validating \
                 webhook is never called again; move it to the `impl Defaulter`, or drop it",
            ),
            Self::ReviewVersionsWithoutV1 => f.write_str(
                "`admission_review_versions` must list v1: rkb's webhook server answers \
                 admission.k8s.io/v1 reviews only, e.g. admission_review_versions(v1, v1beta1)",
            ),
            Self::DuplicateReviewVersion(version) => write!(
                f,
                "admission review version {} is listed twice",
                version.as_str()
            ),
            Self::Selector {
                key,
                selector,
                reason,
            } => write!(
                f,
                "{key} = {selector:?} is invalid: {reason}; write it as kubectl's --selector, \
                 e.g. \"environment in (prod, staging), !legacy\""
            ),
            Self::MatchConditionName { name, reason } => write!(
                f,
                "match_condition name {name:?} is invalid: {reason}; the API server wants a \
                 qualified name, e.g. \"exclude-kube-system\""
            ),
            Self::DuplicateMatchCondition(name) => write!(
                f,
                "two match_condition entries are named {name:?}: give each its own name"
            ),
            Self::TooManyMatchConditions(count) => write!(
                f,
                "{count} match_condition entries: the API server accepts at most \
                 {MAX_MATCH_CONDITIONS}"
            ),
            Self::MatchConditionExpression { name, reason } => write!(
                f,
                "the expression of match_condition {name:?} is not valid CEL: {reason}; e.g. \
                 expression = \"request.namespace != 'kube-system'\""
            ),
        }
    }
}

impl std::error::Error for SettingError {}

/// Checks a webhook path (served by rkb and put into `clientConfig.service.path`).
pub fn check_path(path: &str) -> Result<(), SettingError> {
    let ok = path.starts_with('/')
        && path.len() > 1
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok {
        Ok(())
    } else {
        Err(SettingError::Path(path.to_owned()))
    }
}

/// Checks a webhook name: a DNS-1123 subdomain with at least three labels.
pub fn check_name(name: &str) -> Result<(), SettingError> {
    crate::names::dns1123_subdomain(name).map_err(|error| SettingError::Name {
        name: name.to_owned(),
        reason: error.to_string(),
    })?;
    if name.split('.').count() < 3 {
        return Err(SettingError::Name {
            name: name.to_owned(),
            reason: "it has fewer than three dot-separated labels".to_owned(),
        });
    }
    Ok(())
}

/// Checks `timeoutSeconds`.
pub fn check_timeout(seconds: u64) -> Result<u8, SettingError> {
    match u8::try_from(seconds) {
        Ok(s) if (1..=MAX_TIMEOUT_SECONDS).contains(&s) => Ok(s),
        _ => Err(SettingError::Timeout(seconds)),
    }
}

/// Checks a list of operations: not empty, no repeats.
pub fn check_operations(operations: &[Operation]) -> Result<(), SettingError> {
    if operations.is_empty() {
        return Err(SettingError::NoOperations);
    }
    for (i, op) in operations.iter().enumerate() {
        if operations[..i].contains(op) {
            return Err(SettingError::DuplicateOperation(*op));
        }
    }
    Ok(())
}

/// The parts of a webhook `url` that rkb reads.
struct UrlParts<'a> {
    path: &'a str,
}

/// `url` taken apart, or why the API server would refuse it (completing "… is invalid: ").
fn url_parts(url: &str) -> Result<UrlParts<'_>, String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or("it must start with https://: the API server calls webhooks over TLS only")?;
    if rest.contains('?') {
        return Err("it has a query ('?'), which the API server refuses".into());
    }
    if rest.contains('#') {
        return Err("it has a fragment ('#'), which the API server refuses".into());
    }
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.contains('@') {
        return Err("it has user information ('user@'), which the API server refuses".into());
    }
    if authority.is_empty() || authority.starts_with(':') {
        return Err("it has no host".into());
    }
    if path.is_empty() {
        return Err(
            "it has no path, and the manager serves each webhook at a path of its own".into(),
        );
    }
    check_path(path).map_err(|_| {
        format!(
            "its path {path:?} must contain only letters, digits, '-', '_', '.' and '/' \
             (the manager serves the webhook there)"
        )
    })?;
    Ok(UrlParts { path })
}

/// Checks a webhook `url` (`clientConfig.url`, for a webhook served out of the cluster).
pub fn check_url(url: &str) -> Result<(), SettingError> {
    url_parts(url)
        .map(|_| ())
        .map_err(|reason| SettingError::Url {
            url: url.to_owned(),
            reason,
        })
}

/// Checks a selector given to the attribute key `key` (`namespace_selector` or
/// `object_selector`).
pub fn check_selector(key: &'static str, selector: &str) -> Result<(), SettingError> {
    selector::parse(selector)
        .map(|_| ())
        .map_err(|reason| SettingError::Selector {
            key,
            selector: selector.to_owned(),
            reason,
        })
}

/// Checks `admissionReviewVersions`: `v1` listed (what the manager answers), no repeats.
pub fn check_review_versions(versions: &[ReviewVersion]) -> Result<(), SettingError> {
    for (i, version) in versions.iter().enumerate() {
        if versions[..i].contains(version) {
            return Err(SettingError::DuplicateReviewVersion(*version));
        }
    }
    if versions.contains(&ReviewVersion::V1) {
        Ok(())
    } else {
        Err(SettingError::ReviewVersionsWithoutV1)
    }
}

/// Checks a match condition's name.
pub fn check_match_condition_name(name: &str) -> Result<(), SettingError> {
    crate::names::qualified_name(name).map_err(|error| SettingError::MatchConditionName {
        name: name.to_owned(),
        reason: error.to_string(),
    })
}

/// Checks a match condition's expression: not empty and, with the `cel` feature, CEL the
/// API server can parse. Whether it is well typed (a bool, over fields that exist) the API
/// server checks when the configuration is applied.
///
/// Only rkb-derive switches `cel` on: the webhook attribute's expressions are parsed when
/// the operator compiles. `make manifests` reads the same attributes without compiling the
/// operator, and its reader does not link the CEL parser (its build would compile it a
/// second time), so an expression that has not compiled yet reaches `config/` unparsed; the
/// operator's next build (`make test`, `make build`, `make run`) refuses it at the
/// attribute, and the API server when the configuration is applied.
pub fn check_match_condition_expression(name: &str, expression: &str) -> Result<(), SettingError> {
    let refused = |reason: String| SettingError::MatchConditionExpression {
        name: name.to_owned(),
        reason,
    };
    if expression.trim().is_empty() {
        return Err(refused("it is empty".into()));
    }
    #[cfg(feature = "cel")]
    cel_syntax(expression).map_err(refused)?;
    Ok(())
}

/// Parses `expression` as the API server's CEL environment does (optional syntax on).
#[cfg(feature = "cel")]
fn cel_syntax(expression: &str) -> Result<(), String> {
    let parsed = cel::parser::Parser::new()
        .enable_optional_syntax(true)
        .parse(expression);
    parsed.map(|_| ()).map_err(|errors| {
        errors.errors.first().map_or_else(
            || errors.to_string(),
            |error| format!("at {}:{}, {}", error.pos.0, error.pos.1, error.msg),
        )
    })
}

/// Checks a webhook's `matchConditions`: each name and expression, unique names, at most
/// [`MAX_MATCH_CONDITIONS`].
pub fn check_match_conditions(conditions: &[MatchCondition]) -> Result<(), SettingError> {
    if conditions.len() > MAX_MATCH_CONDITIONS {
        return Err(SettingError::TooManyMatchConditions(conditions.len()));
    }
    for (i, condition) in conditions.iter().enumerate() {
        check_match_condition_name(&condition.name)?;
        if conditions[..i].iter().any(|c| c.name == condition.name) {
            return Err(SettingError::DuplicateMatchCondition(
                condition.name.clone(),
            ));
        }
        check_match_condition_expression(&condition.name, &condition.expression)?;
    }
    Ok(())
}

impl Settings {
    /// Every rule above for a webhook of `kind`; what the manifests renderer asks before
    /// writing YAML.
    pub fn check(&self, kind: Kind) -> Result<(), SettingError> {
        if let Some(path) = &self.path {
            check_path(path)?;
        }
        if let Some(url) = &self.url {
            if self.path.is_some() {
                return Err(SettingError::UrlAndPath);
            }
            check_url(url)?;
        }
        if let Some(name) = &self.name {
            check_name(name)?;
        }
        if let Some(timeout) = self.timeout_seconds {
            check_timeout(timeout.into())?;
        }
        check_operations(&self.operations)?;
        if kind == Kind::Validating && self.reinvocation_policy.is_some() {
            return Err(SettingError::ReinvocationOnValidating);
        }
        check_review_versions(&self.admission_review_versions)?;
        for (key, selector) in [
            ("namespace_selector", &self.namespace_selector),
            ("object_selector", &self.object_selector),
        ] {
            if let Some(selector) = selector {
                check_selector(key, selector)?;
            }
        }
        check_match_conditions(&self.match_conditions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kubebuilders() {
        let settings = Settings::default();
        assert_eq!(
            settings.path_for(Kind::Mutating, "cache.example.com", "v1alpha1", "Memcached"),
            "/mutate-cache-example-com-v1alpha1-memcached"
        );
        assert_eq!(
            settings.path_for(Kind::Validating, "", "v1", "Pod"),
            "/validate-core-v1-pod"
        );
        assert_eq!(
            settings.name_for(Kind::Validating, "v1alpha1", "Memcached"),
            "vmemcached-v1alpha1.kb.io"
        );
        assert_eq!(settings.check(Kind::Validating), Ok(()));
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(check_path("validate").is_err());
        assert!(check_path("/").is_err());
        assert!(check_path("/a b").is_err());
        assert!(check_path("/validate-v1").is_ok());
        assert!(check_name("webhook.example").is_err());
        assert!(check_name("Web.hook.io").is_err());
        assert!(check_name("vmemcached-v1.kb.io").is_ok());
        assert_eq!(check_timeout(0), Err(SettingError::Timeout(0)));
        assert_eq!(check_timeout(31), Err(SettingError::Timeout(31)));
        assert_eq!(check_timeout(30), Ok(30));
        assert_eq!(check_operations(&[]), Err(SettingError::NoOperations));
        assert_eq!(
            check_operations(&[Operation::Create, Operation::Create]),
            Err(SettingError::DuplicateOperation(Operation::Create))
        );
    }

    #[test]
    fn a_url_is_served_at_its_path() {
        let settings = Settings {
            url: Some("https://webhooks.example.com:9443/validate-pods".into()),
            ..Settings::default()
        };
        assert_eq!(settings.check(Kind::Validating), Ok(()));
        assert_eq!(
            settings.path_for(Kind::Validating, "", "v1", "Pod"),
            "/validate-pods"
        );
        let both = Settings {
            path: Some("/validate-pods".into()),
            ..settings
        };
        assert_eq!(both.check(Kind::Validating), Err(SettingError::UrlAndPath));
    }

    #[test]
    fn urls_the_api_server_refuses_are_refused() {
        for (url, reason) in [
            ("http://example.com/v", "must start with https://"),
            ("https://example.com/v?x=1", "query"),
            ("https://example.com/v#x", "fragment"),
            ("https://me@example.com/v", "user information"),
            ("https:///v", "no host"),
            ("https://:9443/v", "no host"),
            ("https://example.com", "no path"),
            ("https://example.com/a b", "must contain only"),
        ] {
            let error = check_url(url).unwrap_err().to_string();
            assert!(error.contains(reason), "{url}: {error}");
            assert!(error.contains("https://host[:port]/path"), "{error}");
        }
    }

    #[test]
    fn settings_only_a_mutating_webhook_or_the_manager_can_have() {
        let reinvoked = Settings {
            reinvocation_policy: Some(ReinvocationPolicy::IfNeeded),
            ..Settings::default()
        };
        assert_eq!(reinvoked.check(Kind::Mutating), Ok(()));
        assert_eq!(
            reinvoked.check(Kind::Validating),
            Err(SettingError::ReinvocationOnValidating)
        );
        use ReviewVersion::{V1, V1beta1};
        assert_eq!(check_review_versions(&[V1beta1, V1]), Ok(()));
        assert_eq!(
            check_review_versions(&[V1beta1]),
            Err(SettingError::ReviewVersionsWithoutV1)
        );
        assert_eq!(
            check_review_versions(&[V1, V1]),
            Err(SettingError::DuplicateReviewVersion(V1))
        );
        assert_eq!(ReviewVersion::parse("v1beta1"), Some(V1beta1));
        assert_eq!(ReviewVersion::parse("v2"), None);
    }

    #[test]
    fn selectors_are_checked_and_blamed_on_their_key() {
        assert_eq!(check_selector("object_selector", "app in (web)"), Ok(()));
        let error = check_selector("namespace_selector", "tier in web")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("namespace_selector = \"tier in web\" is invalid:"),
            "{error}"
        );
    }

    fn condition(name: &str, expression: &str) -> MatchCondition {
        MatchCondition {
            name: name.into(),
            expression: expression.into(),
        }
    }

    #[test]
    fn match_conditions_are_checked() {
        let good = condition("exclude-kube-system", "request.namespace != 'kube-system'");
        let optional = condition("has-tier", "object.metadata.?labels.tier.hasValue()");
        assert_eq!(check_match_conditions(&[good.clone(), optional]), Ok(()));
        assert_eq!(
            check_match_conditions(&[good.clone(), good.clone()]),
            Err(SettingError::DuplicateMatchCondition(good.name.clone()))
        );
        assert!(matches!(
            check_match_conditions(&[condition("Not valid!", "true")]),
            Err(SettingError::MatchConditionName { .. })
        ));
        assert!(matches!(
            check_match_conditions(&[condition("blank", " ")]),
            Err(SettingError::MatchConditionExpression { .. })
        ));
        let many: Vec<_> = (0..=MAX_MATCH_CONDITIONS)
            .map(|i| condition(&format!("c{i}"), "true"))
            .collect();
        assert_eq!(
            check_match_conditions(&many),
            Err(SettingError::TooManyMatchConditions(65))
        );
    }

    #[cfg(feature = "cel")]
    #[test]
    fn match_condition_expressions_must_be_cel() {
        for expression in [
            "request.namespace != ",
            "object.(",
            "a ? b",
            "'unterminated",
        ] {
            let error = check_match_condition_expression("c", expression)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("is not valid CEL: at 1:"),
                "{expression}: {error}"
            );
        }
    }
}
