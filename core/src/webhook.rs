//! Admission webhook settings: what controller-gen's `+kubebuilder:webhook` marker says
//! (path, failure policy, side effects, operations, match policy, timeout), and the rules
//! the API server applies to them (admissionregistration.k8s.io/v1 validation).
//!
//! The derive macro checks `#[rkb_runtime::webhook(...)]` with these rules at compile
//! time; the manager serves [`Settings::path`]; rkb-manifests renders the
//! Mutating/ValidatingWebhookConfiguration from the same values.

use std::fmt;

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
    const fn prefix(self) -> &'static str {
        match self {
            Self::Mutating => "mutate",
            Self::Validating => "validate",
        }
    }
}

impl Settings {
    /// The path the webhook is served at: [`Settings::path`] or kubebuilder's default,
    /// e.g. `/mutate-cache-example-com-v1alpha1-memcached`.
    pub fn path_for(&self, kind: Kind, group: &str, version: &str, resource_kind: &str) -> String {
        self.path.clone().unwrap_or_else(|| {
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

impl Settings {
    /// Every rule above; what the manifests renderer asks before writing YAML.
    pub fn check(&self) -> Result<(), SettingError> {
        if let Some(path) = &self.path {
            check_path(path)?;
        }
        if let Some(name) = &self.name {
            check_name(name)?;
        }
        if let Some(timeout) = self.timeout_seconds {
            check_timeout(timeout.into())?;
        }
        check_operations(&self.operations)
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
        assert_eq!(settings.check(), Ok(()));
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
}
