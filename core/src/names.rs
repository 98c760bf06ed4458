//! Object and API group names, as the API server validates them
//! (k8s.io/apimachinery/pkg/util/validation).

use std::fmt;

/// The longest DNS-1123 (or DNS-1035) label.
pub const MAX_LABEL_LEN: usize = 63;
/// The longest DNS-1123 subdomain.
pub const MAX_SUBDOMAIN_LEN: usize = 253;

/// Why a string is not a valid name; its `Display` completes "… is invalid: ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    Empty,
    TooLong {
        len: usize,
        max: usize,
    },
    Uppercase(char),
    InvalidChar(char),
    /// A label starts or ends with `-`.
    DashAtEdge,
    /// A DNS-1035 label must start with a letter.
    NoLeadingLetter,
    /// Two dots in a row, or a leading or trailing dot.
    EmptyLabel,
    /// One label of a subdomain is invalid.
    Label {
        label: String,
        error: Box<NameError>,
    },
    /// A qualified name or label value starts or ends with something else than a letter
    /// or digit.
    EdgeNotAlphanumeric,
    /// The `prefix/` of a qualified name is not a DNS-1123 subdomain.
    Prefix {
        prefix: String,
        error: Box<NameError>,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("it is empty"),
            NameError::TooLong { len, max } => {
                write!(f, "it is {len} characters long, more than {max}")
            }
            NameError::Uppercase(c) => write!(f, "it contains the uppercase letter {c:?}"),
            NameError::InvalidChar(c) => write!(f, "it contains {c:?}"),
            NameError::DashAtEdge => f.write_str("it starts or ends with '-'"),
            NameError::NoLeadingLetter => f.write_str("it must start with a lowercase letter"),
            NameError::EmptyLabel => f.write_str(
                "it has an empty label (two dots in a row, or a leading or trailing dot)",
            ),
            NameError::Label { label, error } => {
                write!(f, "its label {label:?} is invalid: {error}")
            }
            NameError::EdgeNotAlphanumeric => {
                f.write_str("it must start and end with a letter or digit")
            }
            NameError::Prefix { prefix, error } => {
                write!(f, "its prefix {prefix:?} is invalid: {error}")
            }
        }
    }
}

impl std::error::Error for NameError {}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters: namespaces, most object names.
pub fn dns1123_label(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    if s.len() > MAX_LABEL_LEN {
        return Err(NameError::TooLong {
            len: s.len(),
            max: MAX_LABEL_LEN,
        });
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(if c.is_ascii_uppercase() {
            NameError::Uppercase(c)
        } else {
            NameError::InvalidChar(c)
        });
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Err(NameError::DashAtEdge);
    }
    Ok(())
}

/// Dot-separated DNS-1123 labels, at most 253 characters: API groups, role names.
pub fn dns1123_subdomain(s: &str) -> Result<(), NameError> {
    if s.is_empty() {
        return Err(NameError::Empty);
    }
    if s.len() > MAX_SUBDOMAIN_LEN {
        return Err(NameError::TooLong {
            len: s.len(),
            max: MAX_SUBDOMAIN_LEN,
        });
    }
    for label in s.split('.') {
        match dns1123_label(label) {
            Ok(()) => {}
            Err(_) if label.is_empty() => return Err(NameError::EmptyLabel),
            Err(error) => {
                return Err(NameError::Label {
                    label: label.to_owned(),
                    error: Box::new(error),
                });
            }
        }
    }
    Ok(())
}

/// A DNS-1123 label that starts with a letter: versions, resource (plural) names.
pub fn dns1035_label(s: &str) -> Result<(), NameError> {
    dns1123_label(s)?;
    if s.starts_with(|c: char| c.is_ascii_lowercase()) {
        Ok(())
    } else {
        Err(NameError::NoLeadingLetter)
    }
}

/// A label key or a match condition's name: `[prefix/]name`, the prefix a DNS-1123
/// subdomain, the name at most 63 letters, digits, `-`, `_` and `.`, starting and ending
/// with a letter or digit (the API server's `IsQualifiedName`).
pub fn qualified_name(s: &str) -> Result<(), NameError> {
    let name = match s.split_once('/') {
        Some((prefix, name)) => {
            dns1123_subdomain(prefix).map_err(|error| NameError::Prefix {
                prefix: prefix.to_owned(),
                error: Box::new(error),
            })?;
            name
        }
        None => s,
    };
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    label_value(name)
}

/// A label value: empty, or at most 63 letters, digits, `-`, `_` and `.`, starting and
/// ending with a letter or digit (the API server's `IsValidLabelValue`).
pub fn label_value(s: &str) -> Result<(), NameError> {
    if s.len() > MAX_LABEL_LEN {
        return Err(NameError::TooLong {
            len: s.len(),
            max: MAX_LABEL_LEN,
        });
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(NameError::InvalidChar(c));
    }
    let alphanumeric = |c: Option<char>| c.is_none_or(|c| c.is_ascii_alphanumeric());
    if !alphanumeric(s.chars().next()) || !alphanumeric(s.chars().last()) {
        return Err(NameError::EdgeNotAlphanumeric);
    }
    Ok(())
}

pub fn is_dns1123_label(s: &str) -> bool {
    dns1123_label(s).is_ok()
}

pub fn is_dns1123_subdomain(s: &str) -> bool {
    dns1123_subdomain(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert!(is_dns1123_label("system"));
        assert!(is_dns1123_label("my-ns-1"));
        assert!(is_dns1123_label("1a"));
        assert_eq!(dns1123_label(""), Err(NameError::Empty));
        assert_eq!(dns1123_label("-a"), Err(NameError::DashAtEdge));
        assert_eq!(dns1123_label("a-"), Err(NameError::DashAtEdge));
        assert_eq!(dns1123_label("My"), Err(NameError::Uppercase('M')));
        assert_eq!(dns1123_label("a_b"), Err(NameError::InvalidChar('_')));
        assert!(is_dns1123_label(&"a".repeat(63)));
        assert_eq!(
            dns1123_label(&"a".repeat(64)),
            Err(NameError::TooLong { len: 64, max: 63 })
        );
        assert_eq!(dns1035_label("1a"), Err(NameError::NoLeadingLetter));
        assert_eq!(dns1035_label("v1"), Ok(()));
    }

    #[test]
    fn qualified_names_and_label_values() {
        assert_eq!(qualified_name("app.kubernetes.io/name"), Ok(()));
        assert_eq!(qualified_name("Tier_1.x"), Ok(()));
        assert_eq!(qualified_name(""), Err(NameError::Empty));
        assert_eq!(qualified_name("example.com/"), Err(NameError::Empty));
        assert_eq!(qualified_name("-tier"), Err(NameError::EdgeNotAlphanumeric));
        assert_eq!(qualified_name("a b"), Err(NameError::InvalidChar(' ')));
        assert!(matches!(
            qualified_name("Example.com/name"),
            Err(NameError::Prefix { .. })
        ));
        assert_eq!(label_value(""), Ok(()));
        assert_eq!(label_value("v1.2_b"), Ok(()));
        assert_eq!(label_value("x."), Err(NameError::EdgeNotAlphanumeric));
        assert_eq!(
            label_value(&"a".repeat(64)),
            Err(NameError::TooLong { len: 64, max: 63 })
        );
    }

    #[test]
    fn subdomains() {
        assert!(is_dns1123_subdomain("cache.example.com"));
        assert_eq!(dns1123_subdomain("a..b"), Err(NameError::EmptyLabel));
        assert_eq!(dns1123_subdomain(".a"), Err(NameError::EmptyLabel));
        assert_eq!(
            dns1123_subdomain("a.B").unwrap_err().to_string(),
            "its label \"B\" is invalid: it contains the uppercase letter 'B'"
        );
        let long = vec!["a".repeat(63); 4].join(".");
        assert_eq!(long.len(), 255);
        assert_eq!(
            dns1123_subdomain(&long),
            Err(NameError::TooLong { len: 255, max: 253 })
        );
    }
}
