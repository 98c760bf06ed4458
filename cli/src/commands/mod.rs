//! One module per subcommand; each plans all its writes into a [`Changes`] set and
//! commits them at the end, so a failing command leaves the directory untouched.

mod alpha_generate;
mod alpha_update;
mod build_image;
mod create_api;
mod create_webhook;
mod delete;
mod derive;
mod edit;
mod init;
mod meant;
mod namespaced;
pub mod setup_envtest;
mod webhook_certs;

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::cli::{AlphaCommand, Cli, Command, CreateCommand, DeleteCommand};
use crate::scaffold::{Changes, Entry, Templates, Written, plan};

pub use alpha_generate::alpha_generate;
pub use alpha_update::alpha_update;
pub use build_image::build_image;
pub use create_api::create_api;
pub use create_webhook::create_webhook;
pub use delete::{delete_api, delete_webhook};
pub use edit::edit;
pub use init::init;
pub use setup_envtest::setup_envtest;

pub fn run(mut cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    for note in crate::cli::kubebuilder::answer(&mut cli)? {
        eprintln!("note: {note}");
    }
    match cli.command {
        Command::Init(args) => init(&args, out),
        Command::Create(CreateCommand::Api(args)) => create_api(&args, out),
        Command::Create(CreateCommand::Webhook(args)) => create_webhook(&args, out),
        Command::Delete(DeleteCommand::Api(args)) => delete_api(&args, out),
        Command::Delete(DeleteCommand::Webhook(args)) => delete_webhook(&args, out),
        Command::Edit(args) => edit(&args, out),
        Command::Alpha(AlphaCommand::Generate(args)) => alpha_generate(&args, out),
        Command::Alpha(AlphaCommand::Update(args)) => alpha_update(&args, out),
        Command::SetupEnvtest(args) => setup_envtest(&args, out),
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
                setup_envtest::default_release().version
            )?;
            Ok(())
        }
    }
}

/// PROJECT, checked as the model checks it and against this rkb's version; a project
/// scaffolded by an older rkb gets a note of what changed since.
fn load_project(dir: &Path, out: &mut dyn Write) -> anyhow::Result<crate::project::Project> {
    let project = crate::model::load(dir)?;
    if let Some(note) = crate::version::upgrade_note(&project.cli_version) {
        writeln!(out, "{note}\n")?;
    }
    Ok(project)
}

/// Carries out a command's `plan` under `switches` over its `model`, commits it, and
/// passes on rustfmt's warning; returns what [`plan::apply`] left to report.
fn scaffold<S>(
    plan: &[Entry<S>],
    switches: &S,
    templates: &Templates,
    model: &impl plan::Model,
    force: bool,
    mut changes: Changes,
    out: &mut dyn Write,
) -> anyhow::Result<plan::Applied> {
    let applied = plan::apply(plan, switches, templates, model, force, &mut changes)?;
    commit(changes, out)?;
    if let Some(warning) = &applied.warning {
        writeln!(out, "warning: {warning}")?;
    }
    Ok(applied)
}

/// Commits the change set and lists what was written, like kubebuilder's scaffold log. A
/// removed file takes the directories along that it leaves empty (`delete`, `edit
/// --webhook-certs`, and the files `alpha update` moves).
fn commit(changes: Changes, out: &mut dyn Write) -> anyhow::Result<()> {
    let root = changes.root().to_path_buf();
    if let Some(recovered) = changes.recovered() {
        writeln!(out, "note: {recovered}")?;
    }
    for (path, written) in changes.commit()? {
        let verb = match written {
            Written::Created => "create",
            Written::Updated => "update",
            Written::Removed => {
                remove_empty_parents(&root, &path);
                "remove"
            }
        };
        writeln!(out, "{verb:>8} {}", display(&root, &path))?;
    }
    Ok(())
}

/// Removes the directories above `rel` that its removal left empty, as `create` made them.
fn remove_empty_parents(root: &Path, rel: &Path) {
    let mut dir = rel.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        // Fails, and stops, at the first directory that still holds something.
        if std::fs::remove_dir(root.join(d)).is_err() {
            break;
        }
        dir = d.parent();
    }
}

fn display(root: &Path, rel: &Path) -> String {
    if root == Path::new(".") {
        rel.display().to_string()
    } else {
        root.join(rel).display().to_string()
    }
}

/// config/rbac/role.yaml as `init` wrote it, before the first `make manifests`: the
/// placeholder follows a switch of `edit --namespaced` or `edit --webhook-certs` from
/// `before` to `after` (a file `make manifests` wrote is left to its next run).
pub(super) fn replace_placeholder_role(
    changes: &mut Changes,
    templates: &Templates,
    names: &crate::model::ProjectNames,
    before: &crate::project::Project,
    after: &crate::project::Project,
) -> anyhow::Result<()> {
    const ROLE: &str = "config/rbac/role.yaml";
    const TEMPLATE: &str = "init/config/rbac/role.yaml.tera";
    // `names`' header (read once from the boilerplate) for either side.
    let render = |project| {
        let names = crate::model::ProjectNames {
            header: names.header.clone(),
            ..crate::model::ProjectNames::new(project, "")
        };
        templates.render_model(TEMPLATE, &names)
    };
    if changes.read(ROLE)? == Some(render(before)?) {
        changes.create(ROLE, render(after)?, true)?;
    }
    Ok(())
}

/// The tables of [`init`], [`create_api`], [`create_webhook`] and [`edit`] checked against
/// `templates/`: a template no entry renders, an entry naming a missing template, an
/// insertion at a marker its file's template lacks, or a variable its command's context
/// has no field for fails here, not in a user's project.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;
    use tera::ast::{Expr, ExprVal, Node};

    use crate::scaffold::Templates;
    use crate::scaffold::plan::{Action, Entry, Marker, Text};

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
            .chain(rows(super::edit::PLAN))
            .chain(rows(super::edit::GRAFANA))
            .chain(rows(super::edit::AUTOUPDATE))
            .chain(rows(super::namespaced::PLAN))
            .chain(rows(super::webhook_certs::METRICS_PLAN))
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
                Action::AtMarker(m, _) => *m,
                Action::Write(_) | Action::Remove => continue,
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
                Action::AtMarker(m, _) => Some(m.name()),
                Action::Write(_) | Action::Remove => None,
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

    /// Every variable a command's entries read (in paths, templates and inline lines) is a
    /// field of its typed context: a misspelt `{{ api.kind_snak }}`, or `{% if
    /// api.namspaced %}` that tera would quietly take as false, fails here.
    #[test]
    fn every_template_variable_is_a_field_of_its_commands_context() {
        let samples = samples::all();
        let mut tera = tera::Tera::default();
        let sources = Templates::names()
            .into_iter()
            .map(|name| (name, Templates::source(name).unwrap()));
        tera.add_raw_templates(sources).unwrap();
        let mut problems = Vec::new();
        check_plan(
            &tera,
            &rows(super::init::PLAN),
            &samples.init,
            &mut problems,
        );
        check_plan(
            &tera,
            &rows(super::create_api::PLAN),
            &samples.create_api,
            &mut problems,
        );
        check_plan(
            &tera,
            &rows(super::create_webhook::PLAN),
            &samples.create_webhook,
            &mut problems,
        );
        check_plan(
            &tera,
            &rows(super::edit::PLAN),
            &samples.edit,
            &mut problems,
        );
        check_plan(
            &tera,
            &rows(super::edit::GRAFANA),
            &samples.plugins,
            &mut problems,
        );
        check_plan(
            &tera,
            &rows(super::edit::AUTOUPDATE),
            &samples.plugins,
            &mut problems,
        );
        // webhook_certs::MetricsContext: init's names, and the choice.
        let mut metrics = samples.init.clone();
        metrics["self_managed_metrics"] = Value::from(true);
        check_plan(
            &tera,
            &rows(super::webhook_certs::METRICS_PLAN),
            &metrics,
            &mut problems,
        );
        problems.sort();
        problems.dedup();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// An entry as the variable check reads it: its path, its text and its own variables.
    type Row = (&'static str, Text, &'static [(&'static str, &'static str)]);

    fn rows<S>(plan: &[Entry<S>]) -> Vec<Row> {
        plan.iter().map(|e| (e.path, e.text, e.vars)).collect()
    }

    /// Checks every row's path, template or inline line against `context`, with the row's
    /// own variables added.
    fn check_plan(tera: &tera::Tera, plan: &[Row], context: &Value, problems: &mut Vec<String>) {
        for (path, text, vars) in plan {
            let mut scope = context.clone();
            for (key, value) in *vars {
                scope[*key] = Value::from(*value);
            }
            let mut sources = vec![(format!("path {path:?}"), *path)];
            match text {
                Text::Template(name) => {
                    walk(tera, &tera.templates[*name].ast, &scope, name, problems)
                }
                Text::Inline(line) => sources.push((format!("line {line:?}"), line)),
                Text::Project => {}
            }
            for (what, source) in sources {
                let mut one = tera::Tera::default();
                one.add_raw_template("one", source).unwrap();
                walk(&one, &one.templates["one"].ast, &scope, &what, problems);
            }
        }
    }

    /// Checks that every variable `nodes` read resolves in `scope`; a loop's variable is
    /// bound to the first element of what it loops over.
    fn walk(
        tera: &tera::Tera,
        nodes: &[Node],
        scope: &Value,
        at: &str,
        problems: &mut Vec<String>,
    ) {
        let check = |expr: &Expr, scope: &Value, problems: &mut Vec<String>| {
            let mut idents = Vec::new();
            idents_of(expr, &mut idents);
            for ident in idents {
                if lookup(scope, &ident).is_none() {
                    problems.push(format!("{at}: `{ident}` is no field of the context"));
                }
            }
        };
        for node in nodes {
            match node {
                Node::VariableBlock(_, expr) => check(expr, scope, problems),
                Node::If(branches, _) => {
                    for (_, condition, body) in &branches.conditions {
                        check(condition, scope, problems);
                        walk(tera, body, scope, at, problems);
                    }
                    if let Some((_, body)) = &branches.otherwise {
                        walk(tera, body, scope, at, problems);
                    }
                }
                Node::Forloop(_, each, _) => {
                    check(&each.container, scope, problems);
                    let mut inner = scope.clone();
                    let first = match &each.container.val {
                        ExprVal::Ident(ident) => lookup(scope, ident)
                            .and_then(|v| v.as_array())
                            .and_then(|items| items.first())
                            .cloned(),
                        _ => None,
                    };
                    let Some(first) = first else {
                        problems.push(format!(
                            "{at}: the sample context loops over no element of {:?}",
                            each.container.val
                        ));
                        continue;
                    };
                    inner[each.value.as_str()] = first;
                    // tera's own loop variables.
                    inner["loop"] =
                        serde_json::json!({"index": 1, "index0": 0, "first": true, "last": true});
                    walk(tera, &each.body, &inner, at, problems);
                }
                Node::Include(_, names, _) => {
                    for name in names {
                        walk(tera, &tera.templates[name].ast, scope, name, problems);
                    }
                }
                Node::Text(_) | Node::Comment(..) | Node::Raw(..) => {}
                other => problems.push(format!("{at}: the check does not know {other:?}")),
            }
        }
    }

    /// The dotted variable paths an expression reads.
    fn idents_of(expr: &Expr, out: &mut Vec<String>) {
        let mut exprs: Vec<&Expr> = expr.filters.iter().flat_map(|f| f.args.values()).collect();
        match &expr.val {
            ExprVal::Ident(ident) => out.push(ident.clone()),
            ExprVal::Math(m) => exprs.extend([&*m.lhs, &*m.rhs]),
            ExprVal::Logic(l) => exprs.extend([&*l.lhs, &*l.rhs]),
            ExprVal::In(i) => exprs.extend([&*i.lhs, &*i.rhs]),
            ExprVal::Test(t) => {
                out.push(t.ident.clone());
                exprs.extend(&t.args);
            }
            ExprVal::FunctionCall(f) => exprs.extend(f.args.values()),
            ExprVal::Array(items) => exprs.extend(items),
            ExprVal::StringConcat(concat) => {
                for value in &concat.values {
                    idents_of(&Expr::new(value.clone()), out);
                }
            }
            _ => {}
        }
        for expr in exprs {
            idents_of(expr, out);
        }
    }

    /// `scope`'s value at the dotted `path`; `None` when a step is no field.
    fn lookup<'v>(scope: &'v Value, path: &str) -> Option<&'v Value> {
        path.split('.')
            .try_fold(scope, |value, key| value.as_object()?.get(key))
    }

    #[test]
    fn the_variable_check_finds_misspelt_and_missing_fields() {
        let tera = {
            let mut tera = tera::Tera::default();
            tera.add_raw_template(
                "t",
                "{{ api.kind }}{% if api.namspaced %}{{ image.port }}{% endif %}\
                 {% for s in list %}{{ s.a }}{{ s.b }}{% endfor %}",
            )
            .unwrap();
            tera
        };
        let scope = serde_json::json!({"api": {"kind": "K"}, "image": null, "list": [{"a": 1}]});
        let mut problems = Vec::new();
        walk(&tera, &tera.templates["t"].ast, &scope, "t", &mut problems);
        assert_eq!(
            problems,
            [
                "t: `api.namspaced` is no field of the context",
                "t: `image.port` is no field of the context",
                "t: `s.b` is no field of the context",
            ]
        );
    }

    /// A context of each command with every optional part present, so that every path a
    /// template may read exists in it.
    mod samples {
        use serde_json::Value;

        use crate::deploy_image::DeployImage;
        use crate::model::{Layout, ProjectNames, Resource};
        use crate::project::{Project, Webhooks};

        pub struct Samples {
            pub init: Value,
            pub create_api: Value,
            pub create_webhook: Value,
            pub edit: Value,
            pub plugins: Value,
        }

        pub fn all() -> Samples {
            let mut project = Project::new("example.com", "demo");
            let hub = Resource::custom(&project, ("cache", "v1", "Memcached"), None, true);
            let spoke = Resource::custom(&project, ("cache", "v1beta1", "Memcached"), None, true);
            for resource in [&hub, &spoke] {
                project.upsert(resource.entry("example.com", true, true));
            }
            let names = ProjectNames::new(&project, "// Copyright");
            let layout = Layout::multigroup(&hub);
            let webhooks = Webhooks {
                conversion: true,
                defaulting: true,
                spoke: vec![spoke.version.clone()],
                validation: true,
                defaulting_path: Some("/mutate-memcached".into()),
                validation_path: Some("/validate-memcached".into()),
                webhook_version: "v1".into(),
            };
            fn json(context: &impl serde::Serialize) -> Value {
                serde_json::to_value(context).unwrap()
            }
            Samples {
                init: json(&super::super::init::Context {
                    names: names.clone(),
                    owner: Some("The Authors".into()),
                    apache2: true,
                    license_header: None,
                    rkb_requirement: "0.2".into(),
                    rkb_source_kind: Some("a checkout of rkb"),
                    rkb_crates: crate::rkb_crates::CRATES
                        .iter()
                        .map(|(name, dir)| {
                            crate::rkb_crates::Patch::new(name, format!("../rkb/{dir}"))
                        })
                        .collect(),
                    kube_version: crate::KUBE_VERSION,
                    k8s_openapi_version: crate::K8S_OPENAPI_VERSION,
                    k8s_api_feature: crate::K8S_API_FEATURE,
                    envtest_k8s_version: super::super::init::envtest_k8s_version(),
                    own_workspace: true,
                    project: project.clone(),
                }),
                create_api: json(&super::super::create_api::Context {
                    names: names.clone(),
                    api: Resource {
                        storage_version: Some("v1".into()),
                        sample_fields: Some("\"spec\": {}".into()),
                        crd_file: Some("config/external-crds/example.org_things.yaml".into()),
                        ..spoke.clone()
                    },
                    layout: layout.clone(),
                    image: Some(DeployImage {
                        image: "memcached:1.6".into(),
                        image_yaml: "memcached:1.6".into(),
                        command: vec!["memcached".into()],
                        container_port: Some(11211),
                        run_as_user: 1001,
                    }),
                    command_literals: vec!["\"memcached\"".into()],
                    image_env: layout.image_env(),
                    env_list_exists: false,
                    hook: Some(super::super::create_webhook::Hook::new(
                        &project, &hub, &layout, &webhooks,
                    )),
                    spoke: Some(super::super::create_webhook::Spoke::of(&spoke)),
                    unwired_spoke: None,
                    dropped_image: None,
                    external: Some(super::super::create_api::External {
                        types: "pub struct Thing;".into(),
                        crd_yaml: "kind: CustomResourceDefinition".into(),
                        module_file: "api/src/external/mod.rs",
                    }),
                    project: project.clone(),
                }),
                create_webhook: json(&super::super::create_webhook::Context {
                    names: names.clone(),
                    hook: super::super::create_webhook::Hook::new(
                        &project, &hub, &layout, &webhooks,
                    ),
                    layout: layout.clone(),
                    cert_manager: true,
                    project: project.clone(),
                }),
                edit: json(&super::super::edit::Context {
                    names: &names,
                    api: hub.clone(),
                    layout,
                    project: &project,
                }),
                plugins: json(&super::super::edit::PluginContext {
                    names: &names,
                    panels: vec![crate::grafana::Panel {
                        title: "demo_retries_total".into(),
                        description: "demo_retries_total, per second, by pod".into(),
                        expr: "sum by (pod) (rate(demo_retries_total[5m]))".into(),
                        legend: "{{pod}}".into(),
                        unit: "short".into(),
                        x: 0,
                        y: 0,
                    }],
                    project: &project,
                }),
            }
        }
    }
}
