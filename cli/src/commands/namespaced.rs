//! A namespace-scoped operator (kubebuilder's `--namespaced`): the manager watches only its
//! own namespace (`WATCH_NAMESPACE` in config/manager) and `make manifests` grants it a Role
//! there instead of a ClusterRole (`Manifests::namespaced()` in `src/lib.rs`), so config/rbac
//! has no ClusterRoleBinding.
//!
//! `rkb init --namespaced` writes it that way; `rkb edit --namespaced[=false]` switches an
//! existing project both ways, to exactly what `init` would have written, and refuses with
//! nothing changed when a part it rewrites is not as rkb wrote it.

use std::io::Write;

use anyhow::bail;
use serde::Serialize;

use crate::cli::EditArgs;
use crate::model::{self, ProjectNames};
use crate::project::{self, Project, WebhookCerts};
use crate::scaffold::plan::{self, Entry, Marker, Text};
use crate::scaffold::{Changes, Templates, normalized};

const ROLE_BINDING: &str = "config/rbac/role_binding.yaml";
const ROLE_BINDING_TEMPLATE: &str = "init/config/rbac/role_binding.yaml.tera";
const WATCH_NAMESPACE: &str = "- name: WATCH_NAMESPACE";

/// Which way a project goes, and what its manager's container has already.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scope {
    pub namespaced: bool,
}

/// What the entries' templates see.
#[derive(Debug, Serialize)]
pub(super) struct Context<'a> {
    #[serde(flatten)]
    pub names: &'a ProjectNames,
    /// config/manager's container has an `env:` list already (`create api --image`).
    pub env_list_exists: bool,
    #[serde(skip)]
    pub project: &'a Project,
}

impl plan::Model for Context<'_> {
    fn project(&self) -> &Project {
        self.project
    }
}

/// The files' parts that differ, as `init` writes them too; `src/lib.rs` and
/// config/rbac/kustomization.yaml are edited by [`switch`] (and rendered so by `init`).
pub(super) const PLAN: &[Entry<Scope>] = &[
    Entry::insert(
        model::MANAGER,
        Marker::Env,
        Text::Template("init/insert/watch_namespace.yaml.tera"),
    )
    .when(|s| s.namespaced),
    Entry::withdraw(model::MANAGER, Marker::Env, Text::Inline(WATCH_NAMESPACE))
        .when(|s| !s.namespaced),
    Entry::remove(ROLE_BINDING).when(|s| s.namespaced),
    Entry::shared(ROLE_BINDING, ROLE_BINDING_TEMPLATE).when(|s| !s.namespaced),
];

/// The end of `manifests()` in `api/src/lib.rs`, each way, as `init` renders it (and
/// rustfmt keeps it).
const CLUSTER_WIDE: &str = "        .webhooks(webhooks)\n}\n";
const NAMESPACE_SCOPED: &str = "        .webhooks(webhooks)\n        .namespaced()\n}\n";
/// config/rbac/kustomization.yaml's resources: the binding follows the role.
const ROLE_LINE: &str = "- role.yaml\n";
const BINDING_LINE: &str = "- role_binding.yaml\n";

pub(super) fn switch(args: &EditArgs, to: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut changes = Changes::open(&args.dir)?;
    let mut project = super::load_project(&args.dir, out)?;
    let project_file = args.dir.join(project::FILE_NAME);
    if project.namespaced == to {
        writeln!(
            out,
            "{} is {} already; nothing to change.",
            project_file.display(),
            describe(to)
        )?;
        return Ok(());
    }
    let before = project.clone();
    let webhooks = project.resources.iter().any(|r| r.webhooks.is_some());
    let mut certs_note = None;
    if to && project.webhook_certs() == WebhookCerts::SelfManaged {
        if webhooks {
            bail!(
                "{}\n  Switch the webhooks to cert-manager first:  rkb edit --webhook-certs \
                 cert-manager{}",
                WebhookCerts::NOT_NAMESPACED,
                dir_flag(args)
            );
        }
        // No webhook yet: later ones follow the only choice a namespaced operator has.
        project.webhook_certs = Some(WebhookCerts::CertManager);
        certs_note = Some(
            "webhookCerts is now cert-manager: a namespace-scoped operator cannot make its own.",
        );
    }
    project.namespaced = to;

    let templates = Templates::load()?;
    // The metrics certificate follows webhookCerts (webhook_certs::METRICS_PLAN).
    let metrics_warnings =
        super::webhook_certs::switch_metrics(&before, &project, &templates, &mut changes)?;
    let names = ProjectNames::read(&project, &changes)?;
    let context = Context {
        names: &names,
        env_list_exists: super::create_api::manager_has_env_list(&changes)?,
        project: &project,
    };
    if to {
        refuse_unless_as_rendered(&changes, &templates, &context)?;
    }
    let (lib_from, lib_to) = swap(to, CLUSTER_WIDE, NAMESPACE_SCOPED);
    replace_once(
        &mut changes,
        model::API_LIB,
        lib_from,
        lib_to,
        "the last line of manifests()",
    )?;
    let with_binding = format!("{ROLE_LINE}{BINDING_LINE}");
    let (rbac_from, rbac_to) = swap(to, &with_binding, ROLE_LINE);
    replace_once(
        &mut changes,
        model::RBAC_KUSTOMIZATION,
        rbac_from,
        rbac_to,
        "the resources role.yaml and role_binding.yaml",
    )?;
    plan::apply(
        PLAN,
        &Scope { namespaced: to },
        &templates,
        &context,
        false,
        &mut changes,
    )?;
    super::replace_placeholder_role(&mut changes, &templates, &names, &before, &project)?;
    let tests = switch_controller_tests(&args.dir, to, &mut changes)?;
    changes.create(project::FILE_NAME, project.to_yaml(), true)?;
    super::commit(changes, out)?;
    for warning in metrics_warnings.into_iter().chain(tests.warning) {
        writeln!(out, "warning: {warning}")?;
    }
    writeln!(
        out,
        "\n{} is now {}.{}\nNext: `make manifests`, which writes config/rbac/role.yaml as {}.",
        project.project_name,
        describe(to),
        certs_note.map(|n| format!(" {n}")).unwrap_or_default(),
        if to {
            "a Role and RoleBinding in the manager's namespace (a Role in each namespace an \
             #[rbac(namespace = ...)] rule names)"
        } else {
            "a ClusterRole"
        }
    )?;
    Ok(())
}

fn describe(namespaced: bool) -> &'static str {
    if namespaced {
        "namespace-scoped (the manager watches its own namespace, with a Role there)"
    } else {
        "cluster-wide (the manager watches every namespace, with a ClusterRole)"
    }
}

fn dir_flag(args: &EditArgs) -> String {
    if args.dir == std::path::Path::new(".") {
        String::new()
    } else {
        format!(" --dir {}", args.dir.display())
    }
}

/// `(from, to)` for switching to namespace-scoped when `to`, else the other way.
fn swap<'a>(to: bool, cluster_wide: &'a str, namespace_scoped: &'a str) -> (&'a str, &'a str) {
    if to {
        (cluster_wide, namespace_scoped)
    } else {
        (namespace_scoped, cluster_wide)
    }
}

/// Replaces the one occurrence of `from` in `file` with `to`, or refuses, naming the file
/// and what rkb looked for, when it is not there as rkb wrote it.
fn replace_once(
    changes: &mut Changes,
    file: &str,
    from: &str,
    to: &str,
    what: &str,
) -> anyhow::Result<()> {
    let Some(text) = changes.read(file)? else {
        bail!("{file} is missing; restore it from a fresh `rkb init` and run this again");
    };
    if text.matches(from).count() != 1 {
        bail!(
            "{file} does not hold {what} as rkb writes them, so rkb cannot switch it; nothing \
             was changed.\n  Expected, once:\n{}\n  Change it by hand to:\n{}\n  or restore that \
             text and run this again",
            indent(from),
            indent(to)
        );
    }
    changes.create(file, text.replacen(from, to, 1), true)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    | {l}\n"))
        .collect::<String>()
        .trim_end()
        .to_owned()
}

/// The ClusterRoleBinding goes: refused when it is not the one rkb wrote (it may bind more).
fn refuse_unless_as_rendered(
    changes: &Changes,
    templates: &Templates,
    context: &Context,
) -> anyhow::Result<()> {
    let Some(text) = changes.read(ROLE_BINDING)? else {
        return Ok(());
    };
    if text != templates.render_model(ROLE_BINDING_TEMPLATE, context)? {
        bail!(
            "{ROLE_BINDING} is not as rkb wrote it, and a namespace-scoped operator has no \
             ClusterRoleBinding; nothing was changed.\n  Move what you added to it elsewhere, \
             delete the file, and run this again"
        );
    }
    Ok(())
}

/// The scaffolded controller tests' operator client, each way: a namespace-scoped operator's
/// test runs it in the namespace config/default grants its Role in. (Statements without
/// their indentation; matched whitespace aside, so after rustfmt's rewrapping.)
const OPERATOR_CLIENTS: [(&str, &str); 2] = [
    // templates/api/controller.rs.tera
    (
        "let (env, namespace) = api_server().await;\n\
         let config = Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"config/default\");\n\
         let operator = env.operator_client(&config).await.unwrap();\n",
        "let (env, _) = api_server().await;\n\
         let config = Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"config/default\");\n\
         // The operator watches its own namespace, where config/default grants its Role.\n\
         let (operator, namespace) = env.operator_client_in_namespace(&config).await.unwrap();\n",
    ),
    // templates/api/deploy-image/controller_test.rs.tera
    (
        "let (env, ns) = api_server().await;\n\
         let client = env.client();\n\
         let project = Path::new(env!(\"CARGO_MANIFEST_DIR\"));\n\
         let operator = env.operator_client(&project.join(\"config/default\")).await.unwrap();\n",
        "let (env, _) = api_server().await;\n\
         let client = env.client();\n\
         let project = Path::new(env!(\"CARGO_MANIFEST_DIR\"));\n\
         // The operator watches its own namespace, where config/default grants its Role.\n\
         let (operator, ns) = env\n\
             .operator_client_in_namespace(&project.join(\"config/default\"))\n\
             .await\n\
             .unwrap();\n",
    ),
];

/// What [`switch_controller_tests`] did.
struct SwitchedTests {
    /// Set when rustfmt is missing, so the rewritten tests are not formatted.
    warning: Option<String>,
}

/// Rewrites the operator client of every scaffolded controller test in `src/` and `tests/`
/// the other way, and formats the files it changed.
fn switch_controller_tests(
    root: &std::path::Path,
    to: bool,
    changes: &mut Changes,
) -> anyhow::Result<SwitchedTests> {
    let mut paths = Vec::new();
    let mut sources = Vec::new();
    let mut originals = Vec::new();
    for file in crate::scaffold::rust_files(root)? {
        let Some(original) = changes.read(&file)? else {
            continue;
        };
        let mut text = original.clone();
        for (cluster_wide, namespace_scoped) in OPERATOR_CLIENTS {
            let (from, to) = swap(to, cluster_wide, namespace_scoped);
            while let Some(replaced) = replace_block(&text, from, to) {
                text = replaced;
            }
        }
        if text != original {
            paths.push(file);
            sources.push(text);
            originals.push(Some(original));
        }
    }
    let (formatted, warning) = crate::scaffold::rustfmt(&paths, sources, &originals)?;
    for (path, text) in paths.iter().zip(formatted) {
        changes.create(path, text, true)?;
    }
    Ok(SwitchedTests { warning })
}

/// `text` with the first run of whole lines that reads `from` (whitespace aside) replaced by
/// `to`, each of its lines indented like the run's first; `None` without such a run.
fn replace_block(text: &str, from: &str, to: &str) -> Option<String> {
    let wanted = normalized(from, false);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for start in 0..lines.len() {
        let mut seen = String::new();
        for end in start..lines.len() {
            seen.push_str(&normalized(lines[end], false));
            if seen == wanted {
                let line = lines[start];
                let indent = &line[..line.len() - line.trim_start().len()];
                let replaced: String = to.lines().map(|l| format!("{indent}{l}\n")).collect();
                return Some(format!(
                    "{}{replaced}{}",
                    lines[..start].concat(),
                    lines[end + 1..].concat()
                ));
            }
            if !wanted.starts_with(&seen) {
                break;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The controller templates hold both ways of [`OPERATOR_CLIENTS`], so a change to
    /// either fails here rather than in `rkb edit --namespaced`.
    #[test]
    fn the_controller_templates_hold_both_operator_clients() {
        let templates = [
            "api/controller.rs.tera",
            "api/deploy-image/controller_test.rs.tera",
        ];
        for (template, (cluster_wide, namespace_scoped)) in templates.iter().zip(OPERATOR_CLIENTS) {
            let source = normalized(Templates::source(template).unwrap(), false);
            for block in [cluster_wide, namespace_scoped] {
                assert!(
                    source.contains(&normalized(block, false)),
                    "{template}:\n{block}"
                );
            }
        }
    }

    #[test]
    fn a_block_is_found_across_rewrapped_lines_and_reindented() {
        let text = "fn t() {\n    let a = f(\n        1\n    );\n    let b = 2;\n}\n";
        assert_eq!(
            replace_block(text, "let a = f(1);\nlet b = 2;\n", "let c = 3;\n").unwrap(),
            "fn t() {\n    let c = 3;\n}\n"
        );
        assert_eq!(replace_block(text, "let b = 3;\n", "x"), None);
    }
}
