//! [`Rule`]: every kind of breaking change the gate knows, with its name (what
//! `--allow-breaking` takes), what it breaks and what to do instead.

use std::fmt;
use std::str::FromStr;

/// A kind of change to a released CRD that breaks objects already stored, or the
/// clients that read and write them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The CRD is no longer rendered at all.
    CrdRemoved,
    /// `spec.scope` changed (Namespaced ↔ Cluster).
    ScopeChanged,
    /// A released version is gone.
    VersionRemoved,
    /// A released version that was served no longer is.
    VersionUnserved,
    /// The storage version moved to another version.
    StorageVersionChanged,
    /// A property (or the items or values of a list or map) is gone from the schema.
    FieldRemoved,
    /// A property's type or format changed.
    TypeChanged,
    /// An enum lost a value, or a property without one got one.
    EnumValueRemoved,
    /// An enum got a value: a warning, not a failure (see [`Rule::breaks`]).
    EnumValueAdded,
    /// A property that was optional (or new) is required, without a default.
    RequiredAdded,
    /// `minimum`/`maximum` added, raised or lowered, or made exclusive.
    BoundsTightened,
    /// `minLength`/`maxLength` added or tightened.
    LengthTightened,
    /// `minItems`/`maxItems` added or tightened, or `uniqueItems` added.
    ItemsTightened,
    /// `minProperties`/`maxProperties` added or tightened.
    PropertiesTightened,
    /// `pattern` added or changed.
    PatternTightened,
    /// A property's default added, removed or changed.
    DefaultChanged,
    /// `x-kubernetes-list-type` or `x-kubernetes-list-map-keys` changed.
    ListTypeChanged,
    /// `x-kubernetes-map-type` changed.
    MapTypeChanged,
    /// An `x-kubernetes-validations` rule added that existing objects are held to.
    CelRuleAdded,
    /// `nullable: true` removed: stored nulls become invalid.
    NullableRemoved,
    /// `x-kubernetes-preserve-unknown-fields` removed: the fields it kept are pruned.
    UnknownFieldsPruned,
}

impl Rule {
    /// Every rule, in the order findings are reported.
    pub const ALL: [Rule; 21] = [
        Rule::CrdRemoved,
        Rule::ScopeChanged,
        Rule::VersionRemoved,
        Rule::VersionUnserved,
        Rule::StorageVersionChanged,
        Rule::FieldRemoved,
        Rule::TypeChanged,
        Rule::EnumValueRemoved,
        Rule::EnumValueAdded,
        Rule::RequiredAdded,
        Rule::BoundsTightened,
        Rule::LengthTightened,
        Rule::ItemsTightened,
        Rule::PropertiesTightened,
        Rule::PatternTightened,
        Rule::DefaultChanged,
        Rule::ListTypeChanged,
        Rule::MapTypeChanged,
        Rule::CelRuleAdded,
        Rule::NullableRemoved,
        Rule::UnknownFieldsPruned,
    ];

    /// The rule's name, as findings print it and `--allow-breaking` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::CrdRemoved => "crd-removed",
            Rule::ScopeChanged => "scope-changed",
            Rule::VersionRemoved => "version-removed",
            Rule::VersionUnserved => "version-unserved",
            Rule::StorageVersionChanged => "storage-version-changed",
            Rule::FieldRemoved => "field-removed",
            Rule::TypeChanged => "type-changed",
            Rule::EnumValueRemoved => "enum-value-removed",
            Rule::EnumValueAdded => "enum-value-added",
            Rule::RequiredAdded => "required-added",
            Rule::BoundsTightened => "bounds-tightened",
            Rule::LengthTightened => "length-tightened",
            Rule::ItemsTightened => "items-tightened",
            Rule::PropertiesTightened => "properties-tightened",
            Rule::PatternTightened => "pattern-tightened",
            Rule::DefaultChanged => "default-changed",
            Rule::ListTypeChanged => "list-type-changed",
            Rule::MapTypeChanged => "map-type-changed",
            Rule::CelRuleAdded => "cel-rule-added",
            Rule::NullableRemoved => "nullable-removed",
            Rule::UnknownFieldsPruned => "unknown-fields-pruned",
        }
    }

    /// Whether the gate fails on it. A rule that does not break (an enum value added)
    /// is reported as a note: objects stored before stay valid, but clients that
    /// switch on the value may meet one they do not know.
    pub fn breaks(self) -> bool {
        self != Rule::EnumValueAdded
    }

    /// What to do instead of the change, for a finding's line.
    pub fn remedy(self) -> &'static str {
        match self {
            Rule::CrdRemoved => {
                "keep rendering the CRD until no object of it is left in any cluster; deleting \
                 a CRD deletes every object of it"
            }
            Rule::ScopeChanged => {
                "the API server refuses to change a CRD's scope; keep it, and put the other \
                 scope in a new kind"
            }
            Rule::VersionRemoved | Rule::VersionUnserved => {
                "keep the version served (#[kube(deprecated)] warns its clients) until no client \
                 uses it and no object is stored at it"
            }
            Rule::StorageVersionChanged => {
                "objects stored at the old version stay so until rewritten: keep both versions \
                 served, rewrite every object at the new one and trim status.storedVersions, \
                 then allow the move"
            }
            Rule::FieldRemoved => {
                "keep the field in this version (say it is deprecated in its doc comment) and \
                 leave it out of a new version, converted by `rkb create webhook --conversion`"
            }
            Rule::TypeChanged => {
                "keep the type in this version and give the field its new type in a new \
                 version, converted by `rkb create webhook --conversion`"
            }
            Rule::EnumValueRemoved => {
                "keep accepting the value in this version (stored objects may hold it); refuse \
                 it for new objects in a validating webhook, or drop it in a new version"
            }
            Rule::EnumValueAdded => {
                "stored objects stay valid, but clients built for the released CRD may not \
                 know the value: say in the field's doc comment how to treat unknown values"
            }
            Rule::RequiredAdded => {
                "give the field a default, e.g. #[rkb(default = ...)], or keep it optional: \
                 stored objects without it fail every update"
            }
            Rule::BoundsTightened
            | Rule::LengthTightened
            | Rule::ItemsTightened
            | Rule::PropertiesTightened
            | Rule::PatternTightened => {
                "keep the old constraint in this version and tighten it in a new one, or refuse \
                 new values in a validating webhook: stored objects outside it fail every \
                 update that touches the field"
            }
            Rule::DefaultChanged => {
                "keep the old default in this version (stored objects without the field read \
                 as it) and change it in a new version"
            }
            Rule::ListTypeChanged | Rule::MapTypeChanged => {
                "keep the list or map type in this version: server-side apply merges the \
                 fields of existing objects by it, so their field managers would conflict"
            }
            Rule::CelRuleAdded => {
                "make it a transition rule that spares stored objects, e.g. \
                 #[rkb(validation(rule = \"!oldSelf.hasValue() || <rule>\", optional_old_self = \
                 true))], or one that compares with oldSelf"
            }
            Rule::NullableRemoved => {
                "keep the field nullable in this version: stored nulls would fail every update"
            }
            Rule::UnknownFieldsPruned => {
                "keep x-kubernetes-preserve-unknown-fields in this version: the fields it kept \
                 would be dropped from stored objects at their next write"
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`Rule`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown rule {name:?}: the rules are {rules}",
    name = .0,
    rules = Rule::ALL.map(Rule::name).join(", ")
)]
pub struct UnknownRule(pub String);

impl FromStr for Rule {
    type Err = UnknownRule;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::ALL
            .into_iter()
            .find(|rule| rule.name() == s)
            .ok_or_else(|| UnknownRule(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        for rule in Rule::ALL {
            assert_eq!(rule.name().parse::<Rule>(), Ok(rule));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Rule::ALL.len());
        let err = "field-gone".parse::<Rule>().unwrap_err().to_string();
        assert!(
            err.starts_with("unknown rule \"field-gone\": the rules are crd-removed, "),
            "{err}"
        );
    }
}
