//! One module per subcommand; each plans all its writes into a [`Changes`] set and
//! commits them at the end, so a failing command leaves the directory untouched.

mod build_image;
mod create_api;
mod create_webhook;
mod edit;
mod init;
mod layout;
mod setup_envtest;

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, Command, CreateCommand};
use crate::project::Project;
use crate::scaffold::{Changes, Entry, Templates, Written, plan};

pub use build_image::build_image;
pub use create_api::create_api;
pub use create_webhook::create_webhook;
pub use edit::edit;
pub use init::init;
pub use setup_envtest::setup_envtest;

pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    match cli.command {
        Command::Init(args) => init(&args, out),
        Command::Create(CreateCommand::Api(args)) => create_api(&args, out),
        Command::Create(CreateCommand::Webhook(args)) => create_webhook(&args, out),
        Command::Edit(args) => edit(&args, out),
        Command::SetupEnvtest => setup_envtest(out),
        Command::BuildImage(args) => build_image(&args, out),
        Command::Completion { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "rkb", out);
            Ok(())
        }
        Command::Version => {
            writeln!(
                out,
                "rkb {}\nrkb-runtime {} (what new projects depend on)\nkube {}\nk8s-openapi {} (Kubernetes API {})\nenvtest: Kubernetes {}",
                env!("CARGO_PKG_VERSION"),
                crate::rkb_crates::requirement(),
                crate::KUBE_VERSION,
                crate::K8S_OPENAPI_VERSION,
                crate::K8S_API_FEATURE
                    .trim_start_matches('v')
                    .replace('_', "."),
                setup_envtest::versions().0
            )?;
            Ok(())
        }
    }
}

/// PROJECT, checked against this rkb's version; a project scaffolded by an older rkb gets
/// a note of what changed since.
fn load_project(dir: &Path, out: &mut dyn Write) -> anyhow::Result<Project> {
    let project = Project::load(dir)?;
    if let Some(note) = crate::version::upgrade_note(&project.cli_version) {
        writeln!(out, "{note}\n")?;
    }
    Ok(project)
}

/// What the templates of `create api` and `create webhook` share: PROJECT as it will be
/// written, the project's names and the license header of new Rust files.
fn project_context(project: &Project, changes: &Changes) -> anyhow::Result<tera::Context> {
    let mut context = tera::Context::new();
    context.insert("project_yaml", &project.to_yaml());
    context.insert("project_name", &project.project_name);
    context.insert(
        "crate_name",
        &crate::names::crate_name(&project.project_name),
    );
    context.insert("domain", &project.domain);
    let boilerplate = changes.read("hack/boilerplate.rs.txt")?.unwrap_or_default();
    context.insert("header", &crate::scaffold::source_header(&boilerplate));
    Ok(context)
}

/// Carries out a command's `plan` under `switches`, commits it, and passes on rustfmt's
/// warning; returns what [`plan::apply`] left to report.
fn scaffold<S>(
    plan: &[Entry<S>],
    switches: &S,
    templates: &Templates,
    context: &tera::Context,
    force: bool,
    mut changes: Changes,
    out: &mut dyn Write,
) -> anyhow::Result<plan::Applied> {
    let applied = plan::apply(plan, switches, templates, context, force, &mut changes)?;
    commit(changes, out)?;
    if let Some(warning) = &applied.warning {
        writeln!(out, "warning: {warning}")?;
    }
    Ok(applied)
}

/// Commits the change set and lists what was written, like kubebuilder's scaffold log.
fn commit(changes: Changes, out: &mut dyn Write) -> anyhow::Result<()> {
    let root = changes.root().to_path_buf();
    if let Some(recovered) = changes.recovered() {
        writeln!(out, "note: {recovered}")?;
    }
    for (path, written) in changes.commit()? {
        let verb = match written {
            Written::Created => "create",
            Written::Updated => "update",
            Written::Removed => "remove",
        };
        writeln!(out, "{verb:>8} {}", display(&root, &path))?;
    }
    Ok(())
}

fn display(root: &Path, rel: &Path) -> String {
    if root == Path::new(".") {
        rel.display().to_string()
    } else {
        root.join(rel).display().to_string()
    }
}

/// The tables of [`init`], [`create_api`] and [`create_webhook`] checked against
/// `templates/`: a template no entry renders, an entry naming a missing template, or an
/// insertion at a marker its file's template lacks fails here, not in a user's project.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::scaffold::Templates;
    use crate::scaffold::plan::{Action, Entry, Marker};

    /// Every entry of every command: (path, template, action).
    fn entries() -> Vec<(&'static str, Option<&'static str>, Action)> {
        fn rows<S>(
            plan: &[Entry<S>],
        ) -> impl Iterator<Item = (&'static str, Option<&'static str>, Action)> + '_ {
            plan.iter().map(|e| (e.path, e.template(), e.action))
        }
        rows(super::init::PLAN)
            .chain(rows(super::create_api::PLAN))
            .chain(rows(super::create_webhook::PLAN))
            .collect()
    }

    #[test]
    fn every_template_is_used_and_every_entry_has_its_template() {
        let embedded: BTreeSet<&str> = Templates::names().into_iter().collect();
        let used: BTreeSet<&str> = entries().iter().filter_map(|(_, t, _)| *t).collect();
        let unused: Vec<_> = embedded.difference(&used).collect();
        assert!(
            unused.is_empty(),
            "templates no command renders: {unused:?}"
        );
        let missing: Vec<_> = used.difference(&embedded).collect();
        assert!(
            missing.is_empty(),
            "entries name templates that do not exist: {missing:?}"
        );
    }

    #[test]
    fn every_insertion_lands_on_a_marker_its_file_is_generated_with() {
        let entries = entries();
        for (path, _, action) in &entries {
            let marker = match action {
                Action::Insert(m) | Action::InsertSorted(m) => *m,
                Action::Write(_) => continue,
            };
            let tag = format!("+rkb:scaffold:{}", marker.name());
            let writers: Vec<&str> = entries
                .iter()
                .filter(|(p, _, a)| p == path && matches!(a, Action::Write(_)))
                .filter_map(|(_, t, _)| *t)
                .collect();
            assert!(
                !writers.is_empty(),
                "{path}: an insertion at {tag}, but no entry generates the file"
            );
            for template in writers {
                let source = Templates::source(template).unwrap();
                assert!(
                    source.contains(&tag),
                    "{path}: {template} has no `{tag}` line"
                );
            }
        }
    }

    #[test]
    fn every_marker_in_a_template_is_one_rkb_inserts_at() {
        let inserted: BTreeSet<&str> = entries()
            .iter()
            .filter_map(|(_, _, a)| match a {
                Action::Insert(m) | Action::InsertSorted(m) => Some(m.name()),
                Action::Write(_) => None,
            })
            .collect();
        let known: BTreeSet<&str> = Marker::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(
            inserted, known,
            "markers no entry inserts at, or missing from Marker::ALL"
        );
        for name in Templates::names() {
            let source = Templates::source(name).unwrap();
            // A marker line ends with its tag; prose that mentions `+rkb:scaffold:` is not one.
            for line in source.lines().map(str::trim_end) {
                let Some((_, marker)) = line.rsplit_once("+rkb:scaffold:") else {
                    continue;
                };
                if marker.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !marker.is_empty()
                {
                    assert!(known.contains(marker), "{name}: unknown marker {marker:?}");
                }
            }
        }
    }
}
