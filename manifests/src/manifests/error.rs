//! [`Error`]: why manifests could not be rendered, written or checked.

use std::io;
use std::path::{Path, PathBuf};

use crate::compat::{Allowance, AllowanceError, Breaking};
#[cfg(doc)]
use crate::crd::Crd;
use crate::crd::CrdError;
use crate::rbac::{self, Rule};
use crate::webhook::WebhookError;

use super::Drift;
#[cfg(doc)]
use super::Manifests;

/// Why manifests could not be rendered, written or checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Rust types whose CRDs are invalid (see [`crate::crd()`]).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Schema(Vec<CrdError>),
    /// A CRD has no `metadata.name`, group, plural or versions.
    #[error("invalid CRD {crd}: {reason}")]
    InvalidCrd {
        /// The CRD's name, or a placeholder when it has none.
        crd: String,
        /// What is wrong.
        reason: String,
    },
    /// The versions of a CRD name no storage version.
    #[error(
        "CRD {crd} has no storage version among its versions ({}): mark exactly one with \
         #[kube(storage = true)] (the default) on its Rust type",
        .versions.join(", ")
    )]
    NoStorageVersion {
        /// The CRD's `metadata.name`.
        crd: String,
        /// Every version of the CRD.
        versions: Vec<String>,
    },
    /// More than one version of a CRD is marked as the storage version.
    #[error(
        "CRD {crd} has more than one storage version ({}): keep storage on exactly one and \
         add #[kube(storage = false)] to the Rust types of the others",
        .storage.join(", ")
    )]
    MultipleStorageVersions {
        /// The CRD's `metadata.name`.
        crd: String,
        /// The versions marked `storage: true`.
        storage: Vec<String>,
    },
    /// Two of the CRDs given for one name carry the same version.
    #[error(
        "CRD {crd} gets version {version} from both {first} and {second}: {}",
        if .first == .second {
            "pass each version's type once"
        } else {
            "a CRD name is <plural>.<group>, so give one of the types another plural, \
             e.g. #[kube(plural = \"...\")], or another version"
        }
    )]
    DuplicateVersion {
        /// The CRD's `metadata.name`.
        crd: String,
        /// The repeated version.
        version: String,
        /// Where the first came from (see [`Crd::source`]).
        first: String,
        /// Where the second came from.
        second: String,
    },
    /// Two kinds claim one CRD name (their group and plural agree).
    #[error(
        "CRD {crd} is claimed by two kinds: {first} (kind {first_kind}) and {second} \
         (kind {second_kind}); a CRD name is <plural>.<group>, so give one of them another \
         plural, e.g. #[kube(plural = \"...\")] (`rkb create api --plural`)"
    )]
    KindClash {
        /// The CRD's `metadata.name`.
        crd: String,
        /// Where the first came from (see [`Crd::source`]).
        first: String,
        /// Its kind.
        first_kind: String,
        /// Where the second came from.
        second: String,
        /// Its kind.
        second_kind: String,
    },
    /// Two CRDs of one group share a name that the API server requires to be unique
    /// in the group (plural, singular, short name, kind or list kind).
    #[error(
        "CRDs {} ({}) and {} ({}) both use {name:?} as a {what} in group {group}: the API \
         server accepts only the first; plural, singular and short names, and kinds and \
         list kinds, must be unique within a group",
        .claims[0].source, .claims[0].crd, .claims[1].source, .claims[1].crd
    )]
    GroupNameClash {
        /// The API group.
        group: String,
        /// The name both use.
        name: String,
        /// `resource name` (plural, singular or short name) or `kind`.
        what: &'static str,
        /// The two CRDs, in the order given.
        claims: Box<[Claim; 2]>,
    },
    /// kube refused to merge the versions of a CRD (e.g. their scopes differ).
    #[error("cannot merge the versions of CRD {crd} (from {}): {source}", .sources.join(", "))]
    Merge {
        /// The CRD's `metadata.name`.
        crd: String,
        /// Where each version came from (see [`Crd::source`]).
        sources: Vec<String>,
        /// kube's reason.
        source: kube_core::crd::MergeError,
    },
    /// Two differently named CRDs would be written to the same file.
    #[error("CRDs {first} and {second} would both be written to {}", .path.display())]
    FileClash {
        /// One CRD.
        first: String,
        /// The other CRD.
        second: String,
        /// Their common file.
        path: PathBuf,
    },
    /// The sources of [`Manifests::rules_from`] do not parse, or an attribute in them is
    /// wrong: every mistake, at `file:line:column`.
    #[error("cannot read the RBAC rules from the sources:\n{0}")]
    Sources(crate::sources::Error),
    /// A hand-written rule that the API server would reject.
    #[error("invalid RBAC rule {rule:?}: {reason}")]
    InvalidRule {
        /// The rule as given.
        rule: Box<Rule>,
        /// What is wrong with it.
        #[source]
        reason: rbac::RuleError,
    },
    /// The webhooks cannot be rendered.
    #[error(transparent)]
    Webhook(#[from] WebhookError),
    /// The role name is not a valid object name.
    #[error("invalid role name {0:?}: it must be a DNS-1123 subdomain, e.g. \"manager-role\"")]
    InvalidRoleName(String),
    /// An object could not be rendered as YAML.
    #[error("cannot render {what} as YAML: {source}")]
    Yaml {
        /// The object.
        what: String,
        /// The serializer's reason.
        source: serde_yaml_ng::Error,
    },
    /// A file could not be read, written or removed.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// `read`, `write`, `remove`, ...
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS's reason.
        source: io::Error,
    },
    /// `check` found files that differ from what would be rendered.
    #[error("manifests are out of date: {}; run `make manifests`", .files.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    OutOfDate {
        /// Each file that differs, and how.
        files: Vec<Drift>,
    },
    /// CRDs that break the released ones, in ways the project has not allowed.
    #[error("{0}")]
    Breaking(Breaking),
    /// A released CRD that cannot be read as one.
    #[error(
        "cannot read the released CRD {}: {reason}; it must be a CRD as `make release-crds` \
         wrote it (restore it from version control, or run `make release-crds` on the \
         release's commit)",
        .path.display()
    )]
    Released {
        /// The file, relative to the project root.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A line of the allowances file that is no allowance.
    #[error("{}:{line}: {source}", .path.display())]
    AllowFile {
        /// The file, relative to the project root.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        source: AllowanceError,
    },
    /// An allowance given on the command line that accepts no change found.
    #[error(
        "--allow-breaking {allowance} matches no breaking change{}",
        if .findings.is_empty() {
            " (none was found; there are no released CRDs, or they match)".to_owned()
        } else {
            format!("; the changes found are: {}", .findings.join(", "))
        }
    )]
    UnusedAllowance {
        /// The allowance.
        allowance: Allowance,
        /// What each change found would be allowed by.
        findings: Vec<String>,
    },
    /// Bad command-line arguments for [`Manifests::main`]: clap's message, with usage.
    #[error("{}", .0.to_string().trim_end().trim_start_matches("error: "))]
    Usage(Box<clap::Error>),
}

/// One side of a [`Error::GroupNameClash`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The CRD's `metadata.name`.
    pub crd: String,
    /// Where it came from (see [`Crd::source`]).
    pub source: String,
}

/// The [`Error::Io`] of `action` on `path`.
pub(super) fn io_err(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
    let path = path.to_owned();
    move |source| Error::Io {
        action,
        path,
        source,
    }
}

/// The text of `path`, or `None` when there is no such file.
pub(super) fn read_if_exists(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read(path) {
        // Non-UTF-8 content can never equal a rendered file.
        Ok(bytes) => Ok(Some(String::from_utf8(bytes).unwrap_or_default())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(io_err("read", path)(err)),
    }
}
