//! Naming rules: what rkb accepts for domains, groups, versions, kinds, plurals and
//! project names, and the Rust and Kubernetes names derived from them.
//!
//! The checks are kubebuilder's (DNS-1123/1035 as Kubernetes validates them), plus
//! what Rust needs: kinds become type names and modules, project names crate names.

use std::collections::BTreeMap;
use std::fmt;

use heck::ToSnakeCase;
use rkb_core::names;

mod plural;

pub use plural::plural;

/// A rejected input: what was wrong, what is accepted, and an example that works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidInput {
    pub flag: &'static str,
    pub value: String,
    pub problem: String,
    pub accepted: &'static str,
    pub example: String,
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
                            and '-', starting with a letter, at most 63 characters; as a crate name ('-' \
                            read as '_') neither reserved by Rust nor one the project depends on; not a \
                            binary name Cargo forbids (build, deps, examples, incremental)";
const KIND_NOT_TAKEN_RULE: &str = "an UpperCamelCase Rust type name that the generated code does not \
                                   import or define next to the kind";
const KIND_IN_GROUP_RULE: &str = "in the multigroup layout, a kind whose module name (snake_case) is \
                                   not its group's";
const MODULE_RULE: &str = "a name whose Rust module ('-' and '.' read as '_') is a snake_case identifier: \
                           starting with a letter, without '--' (a module `a__b` fails rustc's \
                           non_snake_case lint), and not a Rust keyword";
const RUST_PATH_RULE: &str =
    "a Rust path: identifiers (ASCII letters, digits and '_') joined by '::'";
const CRD_NAME_RULE: &str = "a plural, group and domain whose CRD name <plural>.<group>.<domain> is a DNS \
                             subdomain of at most 253 characters";

/// Binary names Cargo refuses, as they name its build directories; the project's
/// manager binary takes the project's name.
const CARGO_RESERVED_BIN_NAMES: &[&str] = &["build", "deps", "examples", "incremental"];

pub(crate) fn invalid(
    flag: &'static str,
    value: &str,
    problem: impl Into<String>,
    accepted: &'static str,
    example: impl Into<String>,
) -> InvalidInput {
    InvalidInput {
        flag,
        value: value.to_owned(),
        problem: problem.into(),
        accepted,
        example: example.into(),
    }
}

/// Why `s` is not a DNS-1123 label (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63), if it isn't.
fn dns1123_label_problem(s: &str) -> Option<String> {
    names::dns1123_label(s).err().map(|e| e.to_string())
}

/// Why `s` is not a DNS-1123 subdomain (dot-separated labels, at most 253), if it isn't.
fn dns1123_subdomain_problem(s: &str) -> Option<String> {
    names::dns1123_subdomain(s).err().map(|e| e.to_string())
}

/// Why `s` is not a DNS-1035 label (like DNS-1123, but starting with a letter), if it isn't.
fn dns1035_label_problem(s: &str) -> Option<String> {
    names::dns1035_label(s).err().map(|e| e.to_string())
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
    if PRELUDE_NAMES.contains(&kind) {
        return fail(format!(
            "generated code already uses the name {kind} (from Rust's prelude)"
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

/// The copyright owner goes into a `// Copyright <owner>.` line of every generated `.rs`
/// file: a line break would end the comment and leave the rest as code.
pub fn check_owner(owner: &str) -> Check {
    if owner.chars().any(char::is_control) {
        return Err(invalid(
            "--owner",
            owner,
            "it holds a line break or another control character, which would end the \
             `// Copyright` comment of every generated .rs file and leave the rest as code",
            "one line of printable text",
            "--owner \"The Memcached Authors\"",
        ));
    }
    Ok(())
}

/// The longest project name: a DNS-1123 label.
pub const PROJECT_NAME_MAX: usize = 63;

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
    if CARGO_RESERVED_BIN_NAMES.contains(&name) {
        return fail(format!(
            "Cargo forbids `{name}` as the name of the project's manager binary (it is one of \
             Cargo's build directories)"
        ));
    }
    Ok(())
}

/// Refuses a project name whose crate name is one of `dependencies`, the crates the
/// generated project depends on (as its Cargo.toml names them, e.g. `rkb-runtime`):
/// the package and its dependency would both be candidates for one crate name, and the
/// project would not compile (E0464).
pub fn check_project_name_not_a_dependency(name: &str, dependencies: &[String]) -> Check {
    let crate_name = crate_name(name);
    let Some(dependency) = dependencies
        .iter()
        .find(|d| self::crate_name(d) == crate_name)
    else {
        return Ok(());
    };
    let example = [format!("{name}-operator"), "memcached-operator".to_owned()]
        .into_iter()
        .find(|n| {
            check_project_name(n).is_ok()
                && !dependencies
                    .iter()
                    .any(|d| self::crate_name(d) == self::crate_name(n))
        })
        .unwrap_or_else(|| "memcached-operator".to_owned());
    Err(invalid(
        "--project-name",
        name,
        format!(
            "its crate name `{crate_name}` is that of `{dependency}`, a dependency of the generated project: \
             the crate would shadow its own dependency and not compile (error E0464, multiple candidates for \
             crate `{crate_name}`)"
        ),
        PROJECT_RULE,
        format!("--project-name {example}"),
    ))
}

/// The names of Rust's prelude (edition 2024). Generated code, and the code the derives
/// in it expand to, names them unqualified: a kind of one of these names would shadow them.
const PRELUDE_NAMES: &[&str] = &[
    "AsMut",
    "AsRef",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Hash",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Self",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// Refuses a kind whose name the generated code takes already (see `scaffold::rust_text::names_taken_by`).
pub fn check_kind_not_taken(kind: &str, taken: &BTreeMap<String, String>) -> Check {
    match taken.get(kind) {
        Some(why) => Err(invalid(
            "--kind",
            kind,
            format!("generated code already uses the name {kind}: {why}"),
            KIND_NOT_TAKEN_RULE,
            format!("--kind {kind}Resource"),
        )),
        None => Ok(()),
    }
}

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

/// Refuses a group or version (`flag`) whose Rust module name is no plain snake_case
/// identifier: the generated `pub mod` would not compile, or fail clippy's `-D warnings`.
pub fn check_module_name(flag: &'static str, dns_name: &str, example: &str) -> Check {
    let module = module_name(dns_name);
    let problem = if is_keyword(&module) {
        "would be a Rust keyword"
    } else if module.starts_with(|c: char| c.is_ascii_digit()) {
        "would start with a digit, which no Rust identifier may"
    } else if module.contains("__") {
        "would hold `__`, which rustc's non_snake_case lint rejects (clippy -D warnings then fails)"
    } else {
        return Ok(());
    };
    Err(invalid(
        flag,
        dns_name,
        format!("its module name `{module}` {problem}"),
        MODULE_RULE,
        example,
    ))
}

const CONTROLLER_NAME_RULE: &str = "a DNS-1123 label (lowercase letters, digits and '-', at most 63) \
                                    starting with a letter, whose Rust module ('-' read as '_') is a \
                                    snake_case identifier and not a keyword";

/// Refuses a `--controller-name` that is no DNS label (kubebuilder's rule: it is the
/// controller's name in metrics and logs) or whose module, `memcached_backup` for
/// `memcached-backup`, would not compile or would fail clippy.
pub fn check_controller_name(name: &str) -> Check {
    let fail = |problem: String| {
        Err(invalid(
            "--controller-name",
            name,
            problem,
            CONTROLLER_NAME_RULE,
            "--controller-name memcached-backup",
        ))
    };
    if let Some(problem) = dns1123_label_problem(name) {
        return fail(problem);
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return fail("it must start with a letter, as its Rust module does".into());
    }
    let module = module_name(name);
    if is_keyword(&module) {
        return fail(format!(
            "its module name `{module}` would be a Rust keyword"
        ));
    }
    if module.contains("__") {
        return fail(format!(
            "its module name `{module}` would hold `__`, which rustc's non_snake_case lint rejects"
        ));
    }
    Ok(())
}

/// `memcached-backup` -> `MemcachedBackup`: a controller name's part of its type names.
pub fn pascal(dns_name: &str) -> String {
    dns_name
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// Refuses a kind named like its group where the multigroup layout puts its controller
/// at `src/controller/<group>/<kind>.rs`: a module `image::image` fails clippy's
/// `module_inception` lint, so the project no longer passes `clippy -D warnings`.
pub fn check_kind_not_group(kind: &str, group: &str) -> Check {
    module_not_group(
        "--kind",
        kind,
        &snake(kind),
        group,
        format!("--kind {kind}App"),
    )
}

/// The same for a named controller (`--controller-name`), whose module is its name's.
pub fn check_controller_name_not_group(name: &str, group: &str) -> Check {
    let example = format!("--controller-name {name}-controller");
    module_not_group(
        "--controller-name",
        name,
        &module_name(name),
        group,
        example,
    )
}

fn module_not_group(
    flag: &'static str,
    value: &str,
    module: &str,
    group: &str,
    example: String,
) -> Check {
    let group_module = module_name(group);
    if module != group_module {
        return Ok(());
    }
    Err(invalid(
        flag,
        value,
        format!(
            "in the multigroup layout its controller module would be `{group_module}::{module}` \
             (src/controller/{group_module}/{module}.rs), which clippy's module_inception lint \
             rejects (clippy -D warnings then fails)"
        ),
        KIND_IN_GROUP_RULE,
        example,
    ))
}

/// Refuses a type path PROJECT records that is no Rust path (`crate::api::cache::v1::Foo`):
/// it is pasted into generated code.
pub fn check_rust_path(path: &str) -> Check {
    let is_ident = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match path.split("::").find(|segment| !is_ident(segment)) {
        Some(segment) => Err(invalid(
            "path",
            path,
            format!("its segment {segment:?} is no Rust identifier"),
            RUST_PATH_RULE,
            "crate::api::cache::v1alpha1::Memcached",
        )),
        None => Ok(()),
    }
}

/// Refuses a CRD name (`<plural>.<api group>`) that Kubernetes would not accept: the
/// group and plural pass on their own, but together may exceed 253 characters.
pub fn check_crd_name(group: &str, crd_name: &str) -> Check {
    match dns1123_subdomain_problem(crd_name) {
        Some(problem) => Err(invalid(
            "--group",
            group,
            format!("the CRD name {crd_name:?} is invalid: {problem}"),
            CRD_NAME_RULE,
            "--group cache (with a shorter --domain at `rkb init`, or a shorter --plural)",
        )),
        None => Ok(()),
    }
}

/// `memcached-operator` -> `memcached_operator`.
pub fn crate_name(project_name: &str) -> String {
    project_name.replace('-', "_")
}

/// `BlueGreen` -> `blue_green`.
pub fn snake(kind: &str) -> String {
    kind.to_snake_case()
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
        for ok in ["cache", "cert-manager", "batch.tutorial", "x1"] {
            assert_eq!(check_module_name("--group", ok, "--group cache"), Ok(()));
        }
        for (bad, why) in [
            ("a--b", "`a__b` would hold `__`"),
            ("1x", "start with a digit"),
            ("type", "keyword"),
        ] {
            let err = check_module_name("--group", bad, "--group cache").unwrap_err();
            assert!(err.problem.contains(why), "{bad}: {err}");
        }
        assert_eq!(check_kind_not_group("Memcached", "cache"), Ok(()));
        for (kind, group) in [("Cache", "cache"), ("CertManager", "cert-manager")] {
            let err = check_kind_not_group(kind, group).unwrap_err();
            assert!(err.problem.contains("module_inception"), "{err}");
        }
        assert_eq!(check_rust_path("crate::api::cache::v1::Foo"), Ok(()));
        for bad in ["", "crate::api::../x::Foo", "a::b; evil()", "a::::b"] {
            assert!(check_rust_path(bad).is_err(), "{bad}");
        }
        let domain = format!("{}.com", vec!["a".repeat(60); 4].join("."));
        let crd = format!("memcacheds.cache.{domain}");
        assert_eq!(check_group("cache", &domain), Ok(()));
        let err = check_crd_name("cache", &crd).unwrap_err();
        assert!(err.problem.contains("more than 253"), "{err}");
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
        for bad in ["build", "deps", "examples", "incremental"] {
            let err = check_project_name(bad).unwrap_err();
            assert!(err.problem.contains("Cargo forbids"), "{err}");
        }
        assert_eq!(check_project_name("build-operator"), Ok(()));
        let dependencies = ["kube".to_owned(), "rkb-runtime".to_owned()];
        assert_eq!(
            check_project_name_not_a_dependency("kube-operator", &dependencies),
            Ok(())
        );
        for bad in ["kube", "rkb-runtime"] {
            let err = check_project_name_not_a_dependency(bad, &dependencies).unwrap_err();
            assert!(err.problem.contains("E0464"), "{err}");
            assert_eq!(err.example, format!("--project-name {bad}-operator"));
        }
    }

    /// Kinds and the resource names kubebuilder gives them (gobuffalo/flect v1.0.3's
    /// `Pluralize` of the lowercased kind, as `kubebuilder create api` calls it).
    const KUBEBUILDER_PLURALS: &[(&str, &str)] = &[
        ("Memcached", "memcacheds"),
        ("BlueGreen", "bluegreens"),
        ("Foo", "foos"),
        ("Policy", "policies"),
        ("Gateway", "gateways"),
        ("Key", "keys"),
        ("Ingress", "ingresses"),
        ("Status", "statuses"),
        ("Bus", "buses"),
        ("Box2", "box2s"),
        ("Match", "matches"),
        ("Brush", "brushes"),
        ("Quiz", "quizzes"),
        ("Waltz", "waltzes"),
        ("Buzz", "buzzes"),
        ("Index", "indices"),
        ("Matrix", "matrices"),
        ("Analysis", "analyses"),
        ("Wolf", "wolves"),
        ("Leaf", "leaves"),
        ("Knife", "knives"),
        ("Safe", "saves"),
        ("Thief", "thieves"),
        ("Roof", "roofs"),
        ("Hero", "heroes"),
        ("Photo", "photos"),
        ("Radio", "radios"),
        ("Zoo", "zoos"),
        ("Repo", "repoes"),
        ("Person", "people"),
        ("SalesPerson", "salespeople"),
        ("Child", "children"),
        ("Man", "men"),
        ("Human", "humans"),
        ("Woman", "women"),
        ("Mouse", "mice"),
        ("Foot", "feet"),
        ("Tooth", "teeth"),
        ("Goose", "geese"),
        ("Ox", "oxen"),
        ("Box", "boxes"),
        ("Criterion", "criteria"),
        ("Datum", "data"),
        ("Data", "data"),
        ("Endpoints", "endpoints"),
        ("People", "people"),
        ("Children", "children"),
        ("Sheep", "sheep"),
        ("Series", "series"),
        ("Species", "species"),
        ("Fish", "fish"),
        ("Deer", "deer"),
        ("Equipment", "equipment"),
        ("Information", "information"),
        ("News", "news"),
        ("Money", "money"),
        ("Rice", "rice"),
        ("Price", "price"),
        ("Alias", "aliases"),
        ("Axis", "axes"),
        ("Cactus", "cacti"),
        ("Octopus", "octupuses"),
        ("Bureau", "bureaus"),
        ("Movie", "movies"),
        ("Cookie", "cookies"),
        ("Move", "moves"),
        ("Hive", "hives"),
        ("Objective", "objectives"),
        ("Ssh", "sshs"),
        ("Database", "databases"),
        ("Redis", "redis"),
        ("Backup", "backups"),
        ("Proxy", "proxies"),
        ("Cluster", "clusters"),
        ("Media", "media"),
        ("Medium", "media"),
    ];

    #[test]
    fn plurals_match_kubebuilder() {
        assert!(KUBEBUILDER_PLURALS.len() >= 30);
        for (kind, expected) in KUBEBUILDER_PLURALS {
            assert_eq!(plural(kind), *expected, "{kind}");
        }
        // flect would answer `dnsDNSes`, which is no valid resource name.
        assert_eq!(plural("Dns"), "dns");
        assert!(check_plural("memcacheds").is_ok());
        assert!(check_plural("Memcacheds").is_err());
    }

    #[test]
    fn already_plural_kinds_keep_their_plural() {
        for (_, plural_name) in KUBEBUILDER_PLURALS {
            assert_eq!(plural(plural_name), *plural_name, "{plural_name}");
        }
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
