//! The typed model of a project and of one resource in it. Every name and path a command
//! derives from PROJECT or its flags is worked out here, once: [`Resource`] owns the names
//! (modules, API group and version, Rust path), [`Layout`] the files (types, controller,
//! roles, webhooks) as the project's layout places them. Serialised, they are what the
//! templates see as `api` and `layout`, next to [`ProjectNames`].

mod layout;
mod paths;
mod resource;

use std::path::Path;

use serde::Serialize;

use crate::names;
use crate::project::{self, Project};
use crate::scaffold::{Changes, source_header};

pub use layout::Layout;
pub use paths::*;
pub use resource::Resource;

/// Reads PROJECT and checks it as the model checks a new resource: every name rkb derives
/// files and modules from, and each custom resource by [`Resource::check`]. An entry
/// edited by hand (a group `../x`, a path that is no Rust path, a CRD name Kubernetes
/// refuses) is refused before anything is planned, instead of becoming a file outside
/// `src/` or a CRD the API server rejects.
pub fn load(dir: &Path) -> anyhow::Result<Project> {
    let project = Project::load(dir)?;
    // Blamed on PROJECT, not on the --group that the API group joins it with.
    if let Err(invalid) = names::check_domain(&project.domain) {
        anyhow::bail!(
            "{} has the domain {:?}, which rkb cannot derive API groups from: {}.\n  accepted: {}\n  \
             Fix the entry (edited by hand?): the domain the project was created with, e.g. domain: example.com",
            project::FILE_NAME,
            project.domain,
            invalid.problem,
            invalid.accepted
        );
    }
    for entry in &project.resources {
        check_recorded(entry)?;
    }
    check_unique(&project)?;
    Ok(project)
}

/// Each group, version and kind has one entry: every command finds the first, so a second
/// one would be scaffolded, or deleted, twice.
fn check_unique(project: &Project) -> anyhow::Result<()> {
    for (i, entry) in project.resources.iter().enumerate() {
        let same = |r: &&project::Resource| {
            r.group == entry.group && r.version == entry.version && r.kind == entry.kind
        };
        if let Some(j) = project.resources[i + 1..].iter().position(|r| same(&r)) {
            anyhow::bail!(
                "{} lists {} twice (resources {} and {}): rkb keeps one entry per group, version \
                 and kind, with its API, controllers and webhooks together.\n  \
                 Merge the two entries into one (edited by hand, or a merge of two branches?) and \
                 run rkb again",
                project::FILE_NAME,
                entry.label(),
                i + 1,
                i + j + 2
            );
        }
    }
    Ok(())
}

/// The rules of a resource's names (a custom resource's by [`Resource::check`], as
/// `create api` checks a new one), and the names every entry derives paths and code from:
/// its Rust path, its domain, its spokes. Blamed on PROJECT's entry and the field, not on
/// a flag the command was not given.
fn check_recorded(entry: &project::Resource) -> anyhow::Result<()> {
    let refuse = |field: &str, value: &str, invalid: &names::InvalidInput| {
        anyhow::anyhow!(
            "{} lists {} with the {field} {value:?}, which rkb cannot derive names and paths from: \
             {}.\n  accepted: {}\n  Fix the entry (edited by hand?) and run rkb again",
            project::FILE_NAME,
            entry.label(),
            invalid.problem,
            invalid.accepted
        )
    };
    if entry.api.is_some()
        && !entry.core
        && let Err(invalid) = Resource::recorded(entry).check(&entry.domain, true)
    {
        let field = invalid.flag.trim_start_matches("--");
        return Err(refuse(field, &invalid.value, &invalid));
    }
    let spokes = entry.webhooks.iter().flat_map(|w| &w.spoke);
    let fields = [
        ("group", &entry.group, names::check_group(&entry.group, "")),
        (
            "group",
            &entry.group,
            names::check_module_name("--group", &entry.group, ""),
        ),
        (
            "version",
            &entry.version,
            names::check_version(&entry.version),
        ),
        (
            "version",
            &entry.version,
            names::check_module_name("--version", &entry.version, ""),
        ),
        ("kind", &entry.kind, names::check_kind(&entry.kind)),
        ("plural", &entry.plural, names::check_plural(&entry.plural)),
        ("path", &entry.path, names::check_rust_path(&entry.path)),
    ]
    .into_iter()
    .chain((!entry.core).then(|| ("domain", &entry.domain, names::check_domain(&entry.domain))))
    .chain(spokes.map(|spoke| ("spoke", spoke, names::check_version(spoke))));
    for (field, value, check) in fields {
        if let Err(invalid) = check {
            return Err(refuse(field, value, &invalid));
        }
    }
    Ok(())
}

/// What every template may use: the project's names and the header of new Rust files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectNames {
    pub project_name: String,
    /// `memcached_operator`.
    pub crate_name: String,
    /// The API crate's package, `memcached-operator-api`, and its crate, `memcached_operator_api`.
    pub api_package: String,
    pub api_crate: String,
    pub domain: String,
    /// The license header that starts every generated Rust file, or nothing.
    pub header: String,
    /// PROJECT's `namespaced`: the manager watches only the namespaces it is given, with
    /// Roles there (`rkb init --namespaced`).
    pub namespaced_operator: bool,
    /// PROJECT's `webhookCerts: self`: the manager keeps the metrics server's certificate
    /// (`api/src/metrics_certs.rs`), so `init`'s role.yaml already grants its Secret.
    pub metrics_certificates: bool,
}

impl ProjectNames {
    /// `boilerplate` is the text of [`BOILERPLATE`].
    pub fn new(project: &Project, boilerplate: &str) -> Self {
        ProjectNames {
            project_name: project.project_name.clone(),
            crate_name: names::crate_name(&project.project_name),
            api_package: format!("{}-api", project.project_name),
            api_crate: format!("{}_api", names::crate_name(&project.project_name)),
            domain: project.domain.clone(),
            header: source_header(boilerplate),
            namespaced_operator: project.namespaced,
            metrics_certificates: project.webhook_certs
                == Some(crate::project::WebhookCerts::SelfManaged),
        }
    }

    /// The names of a project on disk, its header read through `changes`.
    pub fn read(project: &Project, changes: &Changes) -> anyhow::Result<Self> {
        let boilerplate = changes.read(BOILERPLATE)?.unwrap_or_default();
        check_boilerplate(&boilerplate)?;
        Ok(Self::new(project, &boilerplate))
    }
}

/// The header starts every Rust file rkb generates, so it must be comments only, each one
/// closed: a line of code fails rustfmt, and an unclosed `/*` swallows the file's markers.
fn check_boilerplate(boilerplate: &str) -> anyhow::Result<()> {
    let example = "`// Copyright 2026 The Authors.`, or an empty file for no header";
    // Nesting of /* */ comments, which Rust allows.
    let mut depth = 0usize;
    for (number, line) in boilerplate.lines().enumerate() {
        let mut rest = line.trim();
        while !rest.is_empty() {
            if depth == 0 {
                if rest.starts_with("//") {
                    break;
                }
                let Some(comment) = rest.strip_prefix("/*") else {
                    anyhow::bail!(
                        "{BOILERPLATE} is not a Rust comment: line {} ({line:?}) is code, and rkb \
                         puts the file at the top of every Rust file it generates.\n  \
                         Make it a comment, e.g. {example}",
                        number + 1
                    );
                };
                depth = 1;
                rest = comment;
            }
            match (rest.find("/*"), rest.find("*/")) {
                (Some(open), close) if close.is_none_or(|close| open < close) => {
                    depth += 1;
                    rest = &rest[open + 2..];
                }
                (_, Some(close)) => {
                    depth -= 1;
                    rest = rest[close + 2..].trim_start();
                }
                (_, None) => rest = "",
            }
        }
    }
    if depth > 0 {
        anyhow::bail!(
            "{BOILERPLATE} opens a /* comment it does not close, and rkb puts the file at the top \
             of every Rust file it generates, where the comment would hide the code after it.\n  \
             Close the comment, or write the header as // lines, e.g. {example}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_boilerplate;

    #[test]
    fn the_boilerplate_must_be_closed_comments() {
        for good in [
            "",
            "// Copyright 2026 Me.\n//\n// Apache-2.0\n",
            "/*\nCopyright 2026 Me.\n\nLicensed under ...\n*/\n",
            "/* one */ // two\n/* a /* nested */ b */\r\n// crlf\r\n",
        ] {
            assert!(check_boilerplate(good).is_ok(), "{good:?}");
        }
        for (bad, why) in [
            (
                "Copyright 2026 Me\n",
                "line 1 (\"Copyright 2026 Me\") is code",
            ),
            ("// fine\n\"quoted\"\n", "line 2"),
            ("/* done */ fn x() {}\n", "line 1"),
            ("/* Copyright 2026 Me\n", "does not close"),
            ("/* a /* b */\n", "does not close"),
        ] {
            let error = check_boilerplate(bad).unwrap_err().to_string();
            assert!(error.contains(why), "{bad:?}: {error}");
        }
    }
}
