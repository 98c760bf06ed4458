//! [`Finding`]: one breaking change, where it is, and what was there before and after;
//! [`Allowance`]: a finding the project accepts (`<rule>@<location>`).

use std::fmt;
use std::str::FromStr;

use super::Rule;

/// One breaking change between a released CRD and the one rendered now.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The CRD's `metadata.name`.
    pub crd: String,
    /// The version it is in; `None` for changes to the whole CRD (scope, storage version).
    pub version: Option<String>,
    /// The field, as `.spec.ports[*].name` (`[*]`: a list's items, `.*`: a map's values;
    /// `.` is the object itself); `None` for changes to a version or the whole CRD.
    pub path: Option<String>,
    /// What kind of change it is.
    pub rule: Rule,
    /// What the released CRD says, e.g. `integer`, `maximum 10`, `absent`.
    pub old: String,
    /// What the new CRD says.
    pub new: String,
}

impl Finding {
    /// Where the change is: `<crd>`, `<crd>/<version>` or `<crd>/<version>:<path>`.
    pub fn location(&self) -> String {
        let mut at = self.crd.clone();
        if let Some(version) = &self.version {
            at.push('/');
            at.push_str(version);
        }
        if let Some(path) = &self.path {
            at.push(':');
            at.push_str(path);
        }
        at
    }

    /// The allowance that accepts this finding.
    pub fn allowance(&self) -> Allowance {
        Allowance {
            rule: self.rule,
            location: self.location(),
        }
    }
}

/// A breaking change the project accepts: `<rule>@<location>`, e.g.
/// `field-removed@memcacheds.cache.example.com/v1alpha1:.spec.size`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Allowance {
    /// The rule.
    pub rule: Rule,
    /// The [`Finding::location`] it accepts.
    pub location: String,
}

impl Allowance {
    /// Whether this allowance accepts `finding`.
    pub fn accepts(&self, finding: &Finding) -> bool {
        self.rule == finding.rule && self.location == finding.location()
    }
}

impl fmt::Display for Allowance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.rule, self.location)
    }
}

/// Why a text is no [`Allowance`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllowanceError {
    /// No `@`, or nothing after it.
    #[error(
        "{0:?} is not <rule>@<location>; copy it from the finding's line, e.g. \
         field-removed@memcacheds.cache.example.com/v1alpha1:.spec.size"
    )]
    Shape(String),
    /// The part before `@` names no rule.
    #[error(transparent)]
    Rule(#[from] super::rule::UnknownRule),
}

impl FromStr for Allowance {
    type Err = AllowanceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        match s.split_once('@') {
            Some((rule, location))
                if !location.is_empty() && !location.contains(char::is_whitespace) =>
            {
                Ok(Allowance {
                    rule: rule.parse()?,
                    location: location.to_owned(),
                })
            }
            _ => Err(AllowanceError::Shape(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(version: Option<&str>, path: Option<&str>) -> Finding {
        Finding {
            crd: "memcacheds.cache.example.com".into(),
            version: version.map(Into::into),
            path: path.map(Into::into),
            rule: Rule::FieldRemoved,
            old: "integer".into(),
            new: "absent".into(),
        }
    }

    #[test]
    fn locations() {
        assert_eq!(
            finding(None, None).location(),
            "memcacheds.cache.example.com"
        );
        assert_eq!(
            finding(Some("v1"), None).location(),
            "memcacheds.cache.example.com/v1"
        );
        assert_eq!(
            finding(Some("v1"), Some(".spec.size")).location(),
            "memcacheds.cache.example.com/v1:.spec.size"
        );
    }

    #[test]
    fn allowances_parse_and_match_exactly() {
        let f = finding(Some("v1"), Some(".spec.size"));
        let allowance: Allowance = "field-removed@memcacheds.cache.example.com/v1:.spec.size"
            .parse()
            .unwrap();
        assert!(allowance.accepts(&f));
        assert_eq!(allowance, f.allowance());
        assert_eq!(allowance.to_string().parse::<Allowance>(), Ok(allowance));
        let other: Allowance = "type-changed@memcacheds.cache.example.com/v1:.spec.size"
            .parse()
            .unwrap();
        assert!(!other.accepts(&f));
        let parent: Allowance = "field-removed@memcacheds.cache.example.com/v1:.spec"
            .parse()
            .unwrap();
        assert!(!parent.accepts(&f));
        for bad in ["field-removed", "field-removed@", "x@y z"] {
            assert!(
                matches!(bad.parse::<Allowance>(), Err(AllowanceError::Shape(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            "gone@crd".parse::<Allowance>(),
            Err(AllowanceError::Rule(_))
        ));
    }
}
