//! `rkb edit --multigroup`: moves a project to kubebuilder's multigroup layout.
//!
//! Each controller moves from `src/controller/<kind>.rs` to
//! `src/controller/<group>/<kind>.rs` and every path to it in the project's Rust code
//! follows; PROJECT records the layout, so later `create api` runs scaffold there and one
//! kind may get a controller in each of several groups. Controller names (metrics labels,
//! `--controller-concurrency` keys) and role names stay as they are: the operator keeps
//! behaving exactly as before.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Context as _, bail};
use serde::Serialize;

use crate::cli::{EditArgs, EditPlugin};
use crate::model::{self, Layout, ProjectNames};
use crate::names;
use crate::project::{self, Project};
use crate::scaffold::plan::{self, Entry, Marker, Text::Template};
use crate::scaffold::rust_text::{Source, is_ident_byte};
use crate::scaffold::{Changes, Templates};

/// What the templates of a moved controller's group module see.
#[derive(Debug, Serialize)]
pub(super) struct Context<'a> {
    #[serde(flatten)]
    pub names: &'a ProjectNames,
    pub api: model::Resource,
    /// The controller's layout after the move.
    pub layout: Layout,
    #[serde(skip)]
    pub project: &'a Project,
}

impl plan::Model for Context<'_> {
    fn project(&self) -> &Project {
        self.project
    }
}

/// What moving one controller generates: its group's module, declared in the controllers'
/// module, declaring the controller.
pub(super) const PLAN: &[Entry<()>] = &[
    Entry::insert_sorted(
        model::CONTROLLERS,
        Marker::Modules,
        Template("api/insert/api_mod.rs.tera"),
    ),
    Entry::shared(
        "{{ layout.group_mod_file }}",
        "api/controller_group_mod.rs.tera",
    ),
    Entry::insert_sorted(
        "{{ layout.group_mod_file }}",
        Marker::Modules,
        Template(super::create_api::CONTROLLER_MOD),
    ),
];

/// `rkb edit --plugins grafana`: dashboards of the metrics every manager exports, under
/// controller-runtime's names, as kubebuilder's grafana plugin writes them, and one of the
/// operator's own metrics, which `grafana/custom-metrics/config.yaml` lists.
pub(super) const GRAFANA: &[Entry<GrafanaRun>] = &[
    Entry::file(
        "grafana/controller-runtime-metrics.json",
        "grafana/controller-runtime-metrics.json.tera",
    )
    .when(|run| run.first),
    Entry::file(
        "grafana/controller-resources-metrics.json",
        "grafana/controller-resources-metrics.json.tera",
    )
    .when(|run| run.first),
    // The user's list of custom metrics: written once (a project that took the plugin
    // before rkb had them gets it at the next run), then theirs.
    Entry::shared(crate::grafana::CONFIG, crate::grafana::CONFIG_TEMPLATE),
    // Follows the list at every run.
    Entry::file(
        crate::grafana::DASHBOARD,
        crate::grafana::DASHBOARD_TEMPLATE,
    )
    .if_exists(plan::IfExists::Overwrite)
    .when(|run| run.custom),
    Entry::project(),
];

/// `rkb edit --plugins autoupdate`: the weekly workflow that runs `rkb alpha update` on a
/// branch of its own, like kubebuilder's autoupdate plugin. Once written, it is the user's.
pub(super) const AUTOUPDATE: &[Entry<()>] = &[
    Entry::shared(AUTOUPDATE_WORKFLOW, "autoupdate/auto-update.yml.tera"),
    Entry::project(),
];

/// Where the autoupdate plugin writes its workflow.
const AUTOUPDATE_WORKFLOW: &str = ".github/workflows/auto-update.yml";

/// What a run of the grafana plugin writes.
pub(super) struct GrafanaRun {
    /// The plugin is new to the project.
    first: bool,
    /// The list of custom metrics names some.
    custom: bool,
}

/// What the plugins' templates see: the project's names (and the custom metrics' panels).
#[derive(Debug, Serialize)]
pub(super) struct PluginContext<'a> {
    #[serde(flatten)]
    pub names: &'a ProjectNames,
    pub panels: Vec<crate::grafana::Panel>,
    #[serde(skip)]
    pub project: &'a Project,
}

impl plan::Model for PluginContext<'_> {
    fn project(&self) -> &Project {
        self.project
    }
}

pub fn edit(args: &EditArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if !args.plugins.is_empty() {
        return plugins(args, out);
    }
    if let Some(to) = args.webhook_certs {
        return super::webhook_certs::switch(args, to, out);
    }
    if let Some(to) = args.namespaced {
        return super::namespaced::switch(args, to, out);
    }
    if args.multigroup != Some(true) {
        bail!(
            "edit needs a change to make: --multigroup (the multigroup layout), --plugins \
             grafana,helm, --webhook-certs self|cert-manager or --namespaced[=false].\n  e.g.:  rkb edit --multigroup"
        );
    }
    let mut changes = Changes::open(&args.dir)?;
    let mut project = super::load_project(&args.dir, out)?;
    if project.multigroup {
        writeln!(
            out,
            "{} uses the multigroup layout already; nothing to change.",
            args.dir.join(project::FILE_NAME).display()
        )?;
        return Ok(());
    }
    project.multigroup = true;

    let templates = Templates::load()?;
    let names = ProjectNames::read(&project, &changes)?;
    // Each kind's default controller and its named ones (`create api --controller-name`),
    // from where they are to where they go.
    let moving: Vec<(model::Resource, Layout, Layout)> = project
        .resources
        .iter()
        .flat_map(|r| {
            let api = model::Resource::recorded(r);
            let (from, to) = (Layout::single_group(&api), Layout::multigroup(&api));
            let named = r.controllers.iter().map(|c| {
                let (from, to) = (
                    from.clone().named(&api, &c.name),
                    to.clone().named(&api, &c.name),
                );
                (api.clone(), from, to)
            });
            let named: Vec<_> = named.collect();
            let default = r.controller.then(|| (api.clone(), from, to));
            default.into_iter().chain(named)
        })
        .collect();
    let moves = Moves {
        modules: moving
            .iter()
            .map(|(api, from, _)| (from.controller_leaf.clone(), api.group_module.clone()))
            .collect(),
        crate_name: names.crate_name.clone(),
    };
    // Every path to a moving controller follows it, in every file (the controllers
    // included) before any moves, so a controller naming another one is rewritten too.
    let files = crate::scaffold::rust_files(&args.dir)?;
    for file in &files {
        let Some(text) = changes.read(file)? else {
            continue;
        };
        let rewritten = moves.rewrite(&text, Place::of(file, &moves));
        if rewritten != text {
            changes.create(file, rewritten, true)?;
        }
    }
    for (api, from, to) in moving {
        let context = Context {
            names: &names,
            layout: to,
            api,
            project: &project,
        };
        move_controller(&mut changes, &context, &from, &files)?;
        plan::apply(PLAN, &(), &templates, &context, false, &mut changes)?;
    }
    changes.create(project::FILE_NAME, project.to_yaml(), true)?;
    super::commit(changes, out)?;
    writeln!(
        out,
        "\n{} now uses the multigroup layout: new controllers go to src/controller/<group>/<kind>.rs, \
         and one kind may have a controller in each group.\n\
         Controllers and roles keep their names, so metrics labels, --controller-concurrency keys and \
         deployed roles stay as they were.",
        project.project_name
    )?;
    Ok(())
}

/// Plans the move of one controller module with its child modules (`files` lists the
/// project's Rust files), and its registration in `src/controller/mod.rs` under its group's
/// module.
fn move_controller(
    changes: &mut Changes,
    to: &Context,
    from: &Layout,
    files: &[String],
) -> anyhow::Result<()> {
    const CONTROLLERS: &str = model::CONTROLLERS;
    let api = &to.api;
    // Only a named controller has a field manager of its own.
    let inception = if from.field_manager.is_some() {
        names::check_controller_name_not_group(&from.controller_name, &api.group)
    } else {
        names::check_kind_not_group(&api.kind, &api.group)
    };
    if let Err(invalid) = inception {
        bail!(
            "the {} controller cannot move to the multigroup layout: {}.\n  \
             Keep the single-group layout, or give the kind another name by hand first",
            api.kind,
            invalid.problem
        );
    }
    if !changes.exists(&from.controller_file)? {
        bail!(
            "PROJECT lists a controller for {}/{} {}, but {} is missing; rkb moves only the \
             files it scaffolded.\n  Restore the file, or move the project to the multigroup \
             layout by hand (see `rkb edit --help`)",
            api.group,
            api.version,
            api.kind,
            from.controller_file
        );
    }
    changes.rename(&from.controller_file, &to.layout.controller_file)?;
    // Its child modules (an `--image` controller's tests.rs) go with it.
    let children = |layout: &Layout| format!("{}/", layout.controller_file.trim_end_matches(".rs"));
    let (old_dir, new_dir) = (children(from), children(&to.layout));
    for file in files {
        if let Some(rest) = file.strip_prefix(&old_dir) {
            changes.rename(file, &format!("{new_dir}{rest}"))?;
        }
    }

    let registry = changes
        .read(CONTROLLERS)?
        .with_context(|| format!("{CONTROLLERS} is missing; restore it from a fresh `rkb init`"))?;
    let declaration = format!("pub mod {};", from.controller_leaf);
    if !registry.lines().any(|l| l.trim() == declaration) {
        bail!(
            "{CONTROLLERS} has no `{declaration}` line, so rkb cannot tell how the {} controller \
             is declared; restore the line or move the module by hand",
            api.kind
        );
    }
    let registry: String = registry
        .lines()
        .filter(|l| l.trim() != declaration)
        .map(|l| format!("{l}\n"))
        .collect();
    // `Runnable::new("memcached", memcached::run)`, which the paths' rewrite made
    // `cache::memcached::run`.
    if !registry.contains(&format!("{}::run", to.layout.controller_module)) {
        bail!(
            "{CONTROLLERS} does not register the {} controller as rkb scaffolded it \
             (`Runnable::new(\"{}\", {}::run)`); restore that line or move the module by hand",
            api.kind,
            from.controller_name,
            from.controller_module
        );
    }
    changes.create(CONTROLLERS, registry, true)
}

/// The controller modules that move, and how the project's code names them.
struct Moves {
    /// Each controller module below `crate::controller` with the group module it moves
    /// into: `memcached` to `cache`.
    modules: BTreeMap<String, String>,
    /// The library's name in `tests/` and `src/main.rs`.
    crate_name: String,
}

/// Where a Rust file sits, which decides what its relative paths mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `src/controller/mod.rs`: its own paths (`memcached::run`) name the controllers.
    Registry,
    /// A module right below `crate::controller` (`src/controller/x.rs` or `x/mod.rs`),
    /// where `super::` is `crate::controller`; `moving` if it is a controller that moves
    /// one level down, so that every `super::` out of it needs one more.
    Child { moving: bool },
    /// Anywhere else: only paths through `controller::` name the controllers.
    Elsewhere,
}

impl Place {
    fn of(file: &str, moves: &Moves) -> Self {
        let Some(rest) = file.strip_prefix("src/controller/") else {
            return Place::Elsewhere;
        };
        if rest == "mod.rs" {
            return Place::Registry;
        }
        match rest.strip_suffix(".rs") {
            Some(module) if !module.contains('/') => Place::Child {
                moving: moves.modules.contains_key(module),
            },
            _ if rest.ends_with("/mod.rs") && rest.matches('/').count() == 1 => {
                Place::Child { moving: false }
            }
            _ => Place::Elsewhere,
        }
    }
}

/// Where a rewrite is in a file: the brace depth and the inline `mod x { .. }` bodies
/// around it.
#[derive(Default)]
struct Scopes {
    depth: usize,
    /// The brace depths of the bodies of inline modules around us.
    mods: Vec<usize>,
    /// A `mod` was seen; the next `{` opens its body.
    mod_pending: bool,
}

impl Scopes {
    fn see(&mut self, c: u8) {
        match c {
            b'{' => {
                self.depth += 1;
                if std::mem::take(&mut self.mod_pending) {
                    self.mods.push(self.depth);
                }
            }
            b'}' => {
                if self.mods.last() == Some(&self.depth) {
                    self.mods.pop();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b';' => self.mod_pending = false,
            _ => {}
        }
    }
}

/// Text to insert at a byte offset of a file.
type Inserts = Vec<(usize, String)>;

impl Moves {
    /// `text` with every path to a moving controller following it: absolute ones
    /// (`crate::controller::memcached`, `demo::controller::{memcached, site}`), relative
    /// ones from `src/controller/` (`super::memcached`, `memcached::run`), and a moving
    /// controller's own `super::` paths, one level deeper. Comments and literals are left
    /// as they are; rewrites only insert (`cache::`, `super::`), so nothing else changes.
    fn rewrite(&self, text: &str, place: Place) -> String {
        let src = Source::new(text);
        let mut inserts = Inserts::new();
        let mut scopes = Scopes::default();
        let mut i = 0;
        while i < src.text.len() {
            let Some(c) = src.code_at(i) else {
                i += 1;
                continue;
            };
            scopes.see(c);
            // Identifiers are taken whole, from their first character.
            i = if src.starts_ident(i) {
                self.path_at(&src, i, place, &mut scopes, &mut inserts)
            } else {
                i + 1
            };
        }
        let mut out = text.to_owned();
        inserts.sort();
        inserts.dedup();
        for (at, insert) in inserts.into_iter().rev() {
            out.insert_str(at, &insert);
        }
        out
    }

    /// Reads the identifier at `i` and what follows it, adding the inserts a path there
    /// needs; returns where to read on.
    fn path_at(
        &self,
        src: &Source,
        i: usize,
        place: Place,
        scopes: &mut Scopes,
        inserts: &mut Inserts,
    ) -> usize {
        let word = src.ident_at(i);
        let end = i + word.len();
        let qualifier = src.before_sep(i);
        let top_of_registry = place == Place::Registry && scopes.mods.is_empty();
        match (word, src.after_sep(end)) {
            ("mod", _) => scopes.mod_pending = true,
            ("controller", Some(next))
                if qualifier.is_none_or(|q| {
                    ["crate", "self", "super", self.crate_name.as_str()].contains(&q)
                }) =>
            {
                self.below_controllers(src, next, inserts);
            }
            ("super", Some(next)) if qualifier.is_none() => {
                return self.super_chain(src, i, next, place, scopes.mods.len(), inserts);
            }
            ("self", Some(next)) if top_of_registry && qualifier.is_none() => {
                self.below_controllers(src, next, inserts);
            }
            (_, Some(_)) if top_of_registry && qualifier.is_none() => {
                self.below_controllers(src, i, inserts);
            }
            _ => {}
        }
        end
    }

    /// A `super::` path that starts at `at` (its first link ends before `next`), inside
    /// `inline_mods` inline modules: `super::super::x`, the chain's length against the
    /// inline modules around it says which module it reaches. Returns where it ends.
    fn super_chain(
        &self,
        src: &Source,
        at: usize,
        mut next: usize,
        place: Place,
        inline_mods: usize,
        inserts: &mut Inserts,
    ) -> usize {
        let mut links = 1;
        while src.ident_at(next) == "super" {
            match src.after_sep(next + "super".len()) {
                Some(after) => {
                    links += 1;
                    next = after;
                }
                None => break,
            }
        }
        let above_file = links - inline_mods.min(links);
        if place == (Place::Child { moving: true }) && above_file >= 1 {
            inserts.push((at, "super::".into()));
        }
        let at_controllers = match place {
            Place::Registry => above_file == 0,
            Place::Child { .. } => above_file == 1,
            Place::Elsewhere => false,
        };
        if at_controllers && src.ident_at(next) != "super" {
            self.below_controllers(src, next, inserts);
        }
        next
    }

    /// A path below `crate::controller` starts at `i`: a moving module, or a group of
    /// paths `{memcached, site::X}`.
    fn below_controllers(&self, src: &Source, i: usize, inserts: &mut Inserts) {
        if src.code_at(i) != Some(b'{') {
            if let Some(group) = self.moving(src, i) {
                inserts.push((i, format!("{group}::")));
            }
            return;
        }
        let mut depth = 0;
        let mut item = true;
        for j in i..src.text.len() {
            let Some(c) = src.code_at(j) else { continue };
            match c {
                b'{' => {
                    depth += 1;
                    item = depth == 1;
                }
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' if depth == 1 => item = true,
                c if item && is_ident_byte(c) => {
                    item = false;
                    if let Some(group) = self.moving(src, j) {
                        inserts.push((j, format!("{group}::")));
                    }
                }
                c if !(c as char).is_whitespace() => item = false,
                _ => {}
            }
        }
    }

    /// The group a moving controller module (the whole identifier at `at`) moves into.
    fn moving(&self, src: &Source, at: usize) -> Option<&str> {
        let word = src.ident_at(at);
        self.modules
            .get(word)
            .filter(|_| src.whole_word(word, at))
            .map(String::as_str)
    }
}

/// Adds the plugins asked for that the project does not have yet; `helm` again brings the
/// chart in step with config/.
fn plugins(args: &EditArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut asked = args.plugins.clone();
    asked.dedup();
    for plugin in asked {
        match plugin {
            EditPlugin::Grafana => grafana(args, out)?,
            EditPlugin::Helm => helm(args, out)?,
            EditPlugin::Autoupdate => autoupdate(args, out)?,
            EditPlugin::HelmV1Alpha => {
                return Err(
                    crate::cli::kubebuilder::refused_plugin(plugin).expect("rkb scaffolds none")
                );
            }
        }
    }
    Ok(())
}

fn grafana(args: &EditArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let changes = Changes::open(&args.dir)?;
    let mut project = super::load_project(&args.dir, out)?;
    let config = changes.read(crate::grafana::CONFIG)?;
    // A list copied by `alpha generate` counts at the plugin's first run too.
    let panels = crate::grafana::panels(config.as_deref().unwrap_or_default())?;
    let run = GrafanaRun {
        first: project.plugins.grafana.is_none(),
        custom: !panels.is_empty(),
    };
    if !run.first && !run.custom && config.is_some() {
        writeln!(
            out,
            "{} has the grafana plugin already, and {} lists no metrics; nothing to change.",
            args.dir.join(project::FILE_NAME).display(),
            crate::grafana::CONFIG
        )?;
        return Ok(());
    }
    project.plugins.grafana = Some(Default::default());
    let names = ProjectNames::read(&project, &changes)?;
    let templates = Templates::load()?;
    let count = panels.len();
    let context = PluginContext {
        names: &names,
        panels,
        project: &project,
    };
    super::scaffold(GRAFANA, &run, &templates, &context, false, changes, out)?;
    if run.custom {
        writeln!(
            out,
            "\n{} has a panel for each of the {count} metrics of {}.",
            crate::grafana::DASHBOARD,
            crate::grafana::CONFIG
        )?;
    } else {
        writeln!(
            out,
            "\nList the metrics your operator exports itself in {} and run this again for a \
             dashboard of them.",
            crate::grafana::CONFIG
        )?;
    }
    writeln!(
        out,
        "Next: import the dashboards in grafana/ into Grafana (Dashboards > New > Import), with \
         a Prometheus data source that scrapes the manager (config/prometheus)."
    )?;
    Ok(())
}

/// `rkb edit --plugins autoupdate`: the workflow (kept when there is one) and PROJECT's
/// record of the plugin.
fn autoupdate(args: &EditArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let changes = Changes::open(&args.dir)?;
    let mut project = super::load_project(&args.dir, out)?;
    if project.plugins.autoupdate.is_some() && changes.exists(AUTOUPDATE_WORKFLOW)? {
        writeln!(
            out,
            "{} has the autoupdate plugin already, and {AUTOUPDATE_WORKFLOW} is there; nothing \
             to change.",
            args.dir.join(project::FILE_NAME).display()
        )?;
        return Ok(());
    }
    project.plugins.autoupdate = Some(Default::default());
    let names = ProjectNames::read(&project, &changes)?;
    let templates = Templates::load()?;
    let context = PluginContext {
        names: &names,
        panels: Vec::new(),
        project: &project,
    };
    super::scaffold(AUTOUPDATE, &(), &templates, &context, false, changes, out)?;
    writeln!(
        out,
        "\n{AUTOUPDATE_WORKFLOW} runs `rkb alpha update` every Tuesday (and when you run it from \
         the Actions tab): when crates.io has a newer rkb than PROJECT's cliVersion, it pushes \
         the update to a branch rkb-update-from-<from>-to-<to> and opens an issue with the link \
         to a pull request.\nNext: commit and push it; protect the default branch so that \
         an update is merged only after review."
    )?;
    Ok(())
}

/// `rkb edit --plugins helm`: the chart of config/ in dist/chart/ (see [`crate::helm`]),
/// PROJECT's record of the plugin and `make helm`; run again (by `make helm` and `make
/// manifests`), the chart follows config/.
fn helm(args: &EditArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut changes = Changes::open(&args.dir)?;
    let mut project = super::load_project(&args.dir, out)?;
    let recorded = project.plugins.helm.is_some();
    let mut warning = None;
    if !recorded {
        project.plugins.helm = Some(Default::default());
        changes.create(project::FILE_NAME, project.to_yaml(), true)?;
    }
    match changes.read("Makefile")? {
        Some(text) => match crate::helm::makefile(&text) {
            Ok(Some(with_helm)) => changes.create("Makefile", with_helm, true)?,
            Ok(None) => {}
            Err(e) => {
                warning = Some(format!(
                    "{e}: add `make helm` by hand, a rule that runs `rkb edit --plugins helm` \
                     after `make manifests`"
                ))
            }
        },
        None => warning = Some("there is no Makefile, so no `make helm`".into()),
    }
    let written = if args.no_chart {
        None
    } else {
        Some(crate::helm::write(
            &mut changes,
            &project.project_name,
            recorded,
        )?)
    };
    super::commit(changes, out)?;
    if let Some(warning) = warning {
        writeln!(out, "warning: {warning}")?;
    }
    match written {
        None => writeln!(
            out,
            "\nThe helm plugin is on: `make manifests` (or `make helm`) writes the chart to {}/.",
            crate::helm::CHART_DIR
        )?,
        Some(written) => {
            writeln!(
                out,
                "\n{}/ holds {} templates of what config/default deploys.",
                crate::helm::CHART_DIR,
                written.objects
            )?;
            for (key, why) in &written.left_out {
                writeln!(
                    out,
                    "  Not in the chart: {} {} ({why}).",
                    key.kind, key.name
                )?;
            }
            if !recorded {
                writeln!(
                    out,
                    "Next: `helm lint {chart}`, then `helm install {name} {chart} --namespace {ns} \
                     --create-namespace`.\n`make helm` (and `make manifests`) keep the chart in \
                     step with config/: your values in values.yaml and templates of your own stay.",
                    chart = crate::helm::CHART_DIR,
                    name = project.project_name,
                    ns = written.namespace
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Moves, Place};

    fn moves() -> Moves {
        Moves {
            modules: [("memcached", "cache"), ("site", "web")]
                .map(|(m, g)| (m.to_owned(), g.to_owned()))
                .into(),
            crate_name: "demo".into(),
        }
    }

    #[test]
    fn absolute_and_grouped_paths_follow_the_controllers() {
        let text = "use crate::controller::memcached::Reconciler;\n\
                    use demo::controller::{memcached, site::{self, SiteReconciler}, util};\n\
                    use crate::{api, controller::{memcached as m, site}};\n\
                    x::controller::memcached_v2::y; kube::runtime::controller::site::z;\n\
                    // crate::controller::memcached in a comment\n\
                    let s = \"crate::controller::memcached\";\n\
                    controller::memcached::run}";
        assert_eq!(
            moves().rewrite(text, Place::Elsewhere),
            "use crate::controller::cache::memcached::Reconciler;\n\
             use demo::controller::{cache::memcached, web::site::{self, SiteReconciler}, util};\n\
             use crate::{api, controller::{cache::memcached as m, web::site}};\n\
             x::controller::memcached_v2::y; kube::runtime::controller::site::z;\n\
             // crate::controller::memcached in a comment\n\
             let s = \"crate::controller::memcached\";\n\
             controller::cache::memcached::run}"
        );
    }

    #[test]
    fn relative_paths_follow_from_where_the_file_is() {
        // A controller that moves: out of its module, `super::` needs one more link.
        let controller = "use super::{helpers, memcached::MemcachedReconciler};\n\
                          use super::super::api;\n\
                          fn f() { super::memcached::run(); }\n\
                          #[cfg(test)]\nmod tests{\n    use super::*;\n    use super::super::site;\n}\n";
        assert_eq!(
            moves().rewrite(controller, Place::Child { moving: true }),
            "use super::super::{helpers, cache::memcached::MemcachedReconciler};\n\
             use super::super::super::api;\n\
             fn f() { super::super::cache::memcached::run(); }\n\
             #[cfg(test)]\nmod tests{\n    use super::*;\n    use super::super::super::web::site;\n}\n"
        );
        // A module beside the controllers that stays.
        assert_eq!(
            moves().rewrite(
                "use super::site::X; pub(super) fn f() {}",
                Place::Child { moving: false }
            ),
            "use super::web::site::X; pub(super) fn f() {}"
        );
        // The registry names its children directly.
        assert_eq!(
            moves().rewrite(
                "pub mod memcached;\nuse self::site::X;\n\
                 Runnable::new(\"memcached\", memcached::run),\n\
                 mod tests { use super::memcached; fn f() { memcached::run(); } }",
                Place::Registry
            ),
            "pub mod memcached;\nuse self::web::site::X;\n\
             Runnable::new(\"memcached\", cache::memcached::run),\n\
             mod tests { use super::cache::memcached; fn f() { memcached::run(); } }"
        );
    }
}
