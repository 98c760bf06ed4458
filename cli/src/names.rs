//! Naming rules: what rkb accepts for domains, groups, versions, kinds, plurals and
//! project names, and the Rust and Kubernetes names derived from them.
//!
//! The checks are kubebuilder's (DNS-1123/1035 as Kubernetes validates them), plus
//! what Rust needs: kinds become type names and modules, project names crate names.

use std::fmt;

use heck::ToSnakeCase;

/// A rejected input: what was wrong, what is accepted, and an example that works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput {
    pub flag: &'static str,
    pub value: String,
    pub problem: String,
    pub accepted: &'static str,
    pub example: &'static str,
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {} {:?}: {}\n  accepted: {}\n  example:  {}",
            self.flag, self.value, self.problem, self.accepted, self.example
        )
    }
}

impl std::error::Error for InvalidInput {}

type Check = Result<(), InvalidInput>;

const DOMAIN_RULE: &str = "a lowercase DNS subdomain: labels of a-z, 0-9 and '-', separated by '.', \
                           each starting and ending with a letter or digit";
const GROUP_RULE: &str = "lowercase letters, digits, '-' and '.', starting and ending with a letter or \
                          digit, so that <group>.<domain> is a DNS subdomain";
const VERSION_RULE: &str = "a DNS-1035 label: lowercase letters, digits and '-', starting with a letter, \
                            at most 63 characters; Kubernetes sorts the forms v1, v1alpha1, v2beta3";
const KIND_RULE: &str = "an UpperCamelCase Rust type name: ASCII letters and digits, starting with an \
                         uppercase letter, at most 63 characters";
const PLURAL_RULE: &str = "a DNS-1035 label: lowercase letters, digits and '-', starting with a letter, \
                           at most 63 characters";
const PROJECT_RULE: &str = "a DNS-1123 label that is also a Cargo package name: lowercase letters, digits \
                            and '-', starting with a letter, at most 63 characters";

fn invalid(
    flag: &'static str,
    value: &str,
    problem: impl Into<String>,
    accepted: &'static str,
    example: &'static str,
) -> InvalidInput {
    InvalidInput {
        flag,
        value: value.to_owned(),
        problem: problem.into(),
        accepted,
        example,
    }
}

/// Why `s` is not a DNS-1123 label (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63), if it isn't.
fn dns1123_label_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if s.len() > 63 {
        return Some(format!("it is {} characters long, more than 63", s.len()));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(if c.is_ascii_uppercase() {
            format!("it contains the uppercase letter {c:?}")
        } else {
            format!("it contains {c:?}")
        });
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Some("it starts or ends with '-'".into());
    }
    None
}

/// Why `s` is not a DNS-1123 subdomain (dot-separated labels, at most 253), if it isn't.
fn dns1123_subdomain_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("it is empty".into());
    }
    if s.len() > 253 {
        return Some(format!("it is {} characters long, more than 253", s.len()));
    }
    s.split('.').find_map(|label| {
        dns1123_label_problem(label).map(|p| {
            if label.is_empty() {
                "it has an empty label (two dots in a row, or a leading or trailing dot)".into()
            } else {
                format!("its label {label:?} is invalid: {p}")
            }
        })
    })
}

/// Why `s` is not a DNS-1035 label (like DNS-1123, but starting with a letter), if it isn't.
fn dns1035_label_problem(s: &str) -> Option<String> {
    dns1123_label_problem(s).or_else(|| {
        (!s.starts_with(|c: char| c.is_ascii_lowercase()))
            .then(|| "it must start with a lowercase letter".into())
    })
}

pub fn check_domain(domain: &str) -> Check {
    match dns1123_subdomain_problem(domain) {
        Some(problem) => Err(invalid(
            "--domain",
            domain,
            problem,
            DOMAIN_RULE,
            "--domain example.com",
        )),
        None => Ok(()),
    }
}

/// The group is checked together with the domain, as Kubernetes sees the API group.
pub fn check_group(group: &str, domain: &str) -> Check {
    let problem = if group.is_empty() {
        Some("it is empty".to_string())
    } else {
        dns1123_subdomain_problem(group).or_else(|| {
            dns1123_subdomain_problem(&api_group(group, domain)).map(|p| {
                format!(
                    "the API group {:?} is invalid: {p}",
                    api_group(group, domain)
                )
            })
        })
    };
    match problem {
        Some(problem) => Err(invalid(
            "--group",
            group,
            problem,
            GROUP_RULE,
            "--group cache",
        )),
        None => Ok(()),
    }
}

pub fn check_version(version: &str) -> Check {
    match dns1035_label_problem(version) {
        Some(problem) => Err(invalid(
            "--version",
            version,
            problem,
            VERSION_RULE,
            "--version v1alpha1",
        )),
        None => Ok(()),
    }
}

/// True for the version forms Kubernetes orders by maturity: v1, v1alpha1, v2beta3.
pub fn is_kube_version(version: &str) -> bool {
    let Some(rest) = version.strip_prefix('v') else {
        return false;
    };
    let major_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if major_len == 0 || rest.starts_with('0') {
        return false;
    }
    let rest = &rest[major_len..];
    if rest.is_empty() {
        return true;
    }
    let Some(minor) = rest
        .strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"))
    else {
        return false;
    };
    !minor.is_empty() && !minor.starts_with('0') && minor.bytes().all(|b| b.is_ascii_digit())
}

pub fn check_kind(kind: &str) -> Check {
    let fail = |problem: String| {
        Err(invalid(
            "--kind",
            kind,
            problem,
            KIND_RULE,
            "--kind Memcached",
        ))
    };
    if kind.is_empty() {
        return fail("it is empty".into());
    }
    if !kind.starts_with(|c: char| c.is_ascii_uppercase()) {
        return fail("it must start with an uppercase letter".into());
    }
    if let Some(c) = kind.chars().find(|c| !c.is_ascii_alphanumeric()) {
        return fail(format!(
            "it contains {c:?}, which cannot be part of a Rust type name"
        ));
    }
    if kind.len() > 63 {
        return fail(format!(
            "it is {} characters long, more than 63",
            kind.len()
        ));
    }
    if RESERVED_TYPE_NAMES.contains(&kind) {
        return fail(format!(
            "generated code already uses the name {kind} (a Rust prelude type or an import of the scaffold)"
        ));
    }
    if is_keyword(&snake(kind)) {
        return fail(format!(
            "its module name `{}` would be a Rust keyword",
            snake(kind)
        ));
    }
    Ok(())
}

pub fn check_plural(plural: &str) -> Check {
    match dns1035_label_problem(plural) {
        Some(problem) => Err(invalid(
            "--plural",
            plural,
            problem,
            PLURAL_RULE,
            "--plural memcacheds",
        )),
        None => Ok(()),
    }
}

pub fn check_project_name(name: &str) -> Check {
    let fail = |problem: String| {
        Err(invalid(
            "--project-name",
            name,
            problem,
            PROJECT_RULE,
            "--project-name memcached-operator",
        ))
    };
    if let Some(problem) = dns1123_label_problem(name) {
        return fail(problem);
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return fail(
            "it must start with a letter (Cargo package names cannot start with a digit)".into(),
        );
    }
    let crate_name = crate_name(name);
    if is_keyword(&crate_name)
        || ["std", "core", "alloc", "proc_macro", "test"].contains(&crate_name.as_str())
    {
        return fail(format!("`{crate_name}` is reserved by Rust"));
    }
    Ok(())
}

/// Type names the scaffold imports or that shadow Rust's prelude.
const RESERVED_TYPE_NAMES: &[&str] = &[
    "Action",
    "Api",
    "Arc",
    "Box",
    "Client",
    "Clone",
    "Condition",
    "Context",
    "Controller",
    "CustomResource",
    "Debug",
    "Default",
    "Deserialize",
    "Duration",
    "Err",
    "Error",
    "JsonSchema",
    "None",
    "Ok",
    "Option",
    "PartialEq",
    "Rbac",
    "Result",
    "Self",
    "Serialize",
    "Some",
    "String",
    "Vec",
];

fn is_keyword(word: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
        "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
        "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
        "ref", "return", "self", "static", "struct", "super", "trait", "true", "try", "type",
        "typeof", "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
    ];
    KEYWORDS.contains(&word)
}

/// `cache` + `example.com` = `cache.example.com`.
pub fn api_group(group: &str, domain: &str) -> String {
    if domain.is_empty() {
        group.to_owned()
    } else {
        format!("{group}.{domain}")
    }
}

/// The Rust module name for a DNS name: `cert-manager` -> `cert_manager`.
pub fn module_name(dns_name: &str) -> String {
    dns_name.replace(['-', '.'], "_")
}

/// Whether a DNS-derived module name is usable as a plain Rust identifier.
pub fn module_name_problem(module: &str) -> Option<String> {
    is_keyword(module).then(|| format!("its module name `{module}` would be a Rust keyword"))
}

/// `memcached-operator` -> `memcached_operator`.
pub fn crate_name(project_name: &str) -> String {
    project_name.replace('-', "_")
}

/// `BlueGreen` -> `blue_green`.
pub fn snake(kind: &str) -> String {
    kind.to_snake_case()
}

/// The default resource name: the lowercased kind in English plural, as kubebuilder
/// and kube-derive do it (`Memcached` -> `memcacheds`, `Policy` -> `policies`).
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    const IRREGULAR: &[(&str, &str)] = &[
        ("endpoints", "endpoints"),
        ("person", "people"),
        ("child", "children"),
        ("mouse", "mice"),
    ];
    if let Some((suffix, replacement)) = IRREGULAR.iter().find(|(s, _)| lower.ends_with(s)) {
        return format!("{}{replacement}", &lower[..lower.len() - suffix.len()]);
    }
    let consonant_y = lower.len() > 1
        && lower.ends_with('y')
        && !matches!(
            lower.as_bytes()[lower.len() - 2],
            b'a' | b'e' | b'i' | b'o' | b'u'
        );
    if consonant_y {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| lower.ends_with(end))
    {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        for ok in ["Memcached", "BlueGreen", "Foo", "V1Thing", "MEMCACHED"] {
            assert_eq!(check_kind(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("memcached", "uppercase"),
            ("Wid-get", "'-'"),
            ("Wid_get", "'_'"),
            ("1Thing", "uppercase"),
            ("Option", "already uses"),
            ("Type", "keyword"),
            (&"A".repeat(64), "more than 63"),
        ] {
            let err = check_kind(bad).unwrap_err();
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn groups_and_domains() {
        assert_eq!(check_group("cache", "example.com"), Ok(()));
        assert_eq!(check_group("cert-manager", "example.com"), Ok(()));
        assert_eq!(check_group("batch.tutorial", "example.com"), Ok(()));
        for bad in ["Cache", "cache_x", "", "-cache", "cache.", "a..b"] {
            assert!(check_group(bad, "example.com").is_err(), "{bad}");
        }
        assert!(check_group("cache", &"a".repeat(250)).is_err());
        assert_eq!(check_domain("demo.kakao.com"), Ok(()));
        for bad in [
            "Example.com",
            "example_com",
            "",
            "example..com",
            ".example.com",
        ] {
            assert!(check_domain(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn versions() {
        for ok in ["v1", "v1alpha1", "v2beta3", "foo", "v1-x"] {
            assert_eq!(check_version(ok), Ok(()), "{ok}");
        }
        for bad in ["1", "V1", "", "v1_0", "v1-"] {
            assert!(check_version(bad).is_err(), "{bad}");
        }
        for kube in ["v1", "v1alpha1", "v2beta3", "v10"] {
            assert!(is_kube_version(kube), "{kube}");
        }
        for other in [
            "foo", "v0", "v1alpha", "v1gamma1", "v1alpha0", "v1beta01", "v",
        ] {
            assert!(!is_kube_version(other), "{other}");
        }
    }

    #[test]
    fn project_names() {
        assert_eq!(check_project_name("memcached-operator"), Ok(()));
        for bad in ["Memcached", "1op", "op_x", "test", "self", ""] {
            assert!(check_project_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn plurals() {
        for (kind, expected) in [
            ("Memcached", "memcacheds"),
            ("BlueGreen", "bluegreens"),
            ("Foo", "foos"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Box2", "box2s"),
            ("Match", "matches"),
            ("Endpoints", "endpoints"),
            ("SalesPerson", "salespeople"),
        ] {
            assert_eq!(plural(kind), expected, "{kind}");
        }
        assert!(check_plural("memcacheds").is_ok());
        assert!(check_plural("Memcacheds").is_err());
    }

    #[test]
    fn errors_say_what_is_accepted_with_an_example() {
        let message = check_kind("memcached").unwrap_err().to_string();
        assert!(
            message.starts_with(
                "invalid --kind \"memcached\": it must start with an uppercase letter"
            )
        );
        assert!(message.contains("accepted: an UpperCamelCase Rust type name"));
        assert!(message.contains("example:  --kind Memcached"));
    }
}
