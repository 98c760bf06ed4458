//! The declarative scaffolder: what a command generates is a table of [`Entry`]s, one per
//! generated file or insertion, each naming its template, its path, what happens when the
//! file exists, and the switches under which it applies. [`apply`] carries a table out
//! into a [`Changes`] set, so every command gets the same all-or-nothing writer, the same
//! `--force` rules and the same rustfmt pass, and a test can check every table against
//! `templates/` (each template used, each marker present where an entry inserts at it).

use std::collections::BTreeSet;

use anyhow::Context as _;
use serde::Serialize;

use super::{Changes, Templates};
use crate::project::{self, Project};

/// Declares [`Marker`] from one list of variants with their names: the enum, `ALL` and
/// `name()` cannot disagree.
macro_rules! markers {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// A `// +rkb:scaffold:<name>` (or `# +rkb:...`) line of a generated file: where later
        /// commands insert code, right above it, so re-running them edits files predictably.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Marker {
            $($(#[$doc])* $variant,)*
        }

        impl Marker {
            pub const ALL: &[Marker] = &[$(Marker::$variant),*];

            /// The name after `+rkb:scaffold:` in generated files.
            pub fn name(self) -> &'static str {
                match self {
                    $(Marker::$variant => $name,)*
                }
            }
        }
    };
}

markers! {
    /// `api/src/lib.rs`: a module per API group.
    Groups = "groups",
    /// `api/src/<group>/mod.rs`: a module per version.
    Versions = "versions",
    /// `api/src/<group>/<version>/mod.rs`: a module per kind, and their re-exports.
    Kinds = "kinds",
    Exports = "exports",
    /// `api/src/lib.rs`: the CRDs `make manifests` writes; `config/crd/kustomization.yaml`.
    Crds = "crds",
    /// `api/src/lib.rs`: the RBAC of the manager's own metrics and webhook certificates, first, so that its
    /// place does not depend on when the first webhook came (`alpha generate` replays
    /// webhooks after every API).
    WebhookRbac = "webhook-rbac",
    /// `src/lib.rs`, `api/src/lib.rs`, `src/controller/mod.rs`, webhook modules: `pub mod`
    /// lines, sorted.
    Modules = "modules",
    /// `src/controller/mod.rs`: the controllers the manager runs.
    Controllers = "controllers",
    /// `config/samples/kustomization.yaml`.
    Samples = "samples",
    /// `config/default/kustomization.yaml`: the CRD base, switched on by the first API.
    Crd = "crd",
    /// `config/rbac/kustomization.yaml`: the kinds' admin, editor and viewer roles.
    Roles = "roles",
    /// `config/manager/manager.yaml`: the manager's environment (`--image` kinds).
    Env = "env",
    /// `src/main.rs`, `api/src/lib.rs`, `src/webhook/mod.rs`: webhook registrations (and in
    /// `src/main.rs`, the manager's own metrics certificate).
    Webhooks = "webhooks",
    /// A kind's admission webhook file: its `Defaulter`/`Validator` impls and tests.
    WebhookImpls = "webhook-impls",
    WebhookTests = "webhook-tests",
    /// `config/default/kustomization.yaml`: webhook resources, patches and replacements.
    Webhook = "webhook",
    WebhookPatches = "webhook-patches",
    WebhookReplacements = "webhook-replacements",
    /// `api/src/webhook_certs.rs`: the configurations and CRDs whose `caBundle` the manager keeps.
    WebhookCertificates = "webhook-certificates",
    /// `config/webhook/kustomization.yaml`: the rendered webhook configurations.
    WebhookManifests = "webhook-manifests",
    /// `config/network-policy/kustomization.yaml`: the webhook port's policy.
    NetworkPolicies = "network-policies",
    /// A kind's conversion file: its spokes, their `Convertible` impls and their tests.
    Spokes = "spokes",
    SpokeImpls = "spoke-impls",
    SpokeTests = "spoke-tests",
}

/// Where an entry's text comes from.
#[derive(Debug, Clone, Copy)]
pub enum Text {
    /// A file under `templates/`, the usual case (one template per generated file).
    Template(&'static str),
    /// A one-line tera string, for a line too small for a file of its own (`pub mod x;`).
    Inline(&'static str),
    /// PROJECT as the command leaves it ([`Model::project`]), serialised.
    Project,
}

/// A command's typed template context: the names and paths of its model, serialised
/// for the templates, and PROJECT as the command leaves it.
pub trait Model: Serialize {
    fn project(&self) -> &Project;
}

/// What an entry does with its file when the file exists already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// Refuse, unless `--force` regenerates it: a file rkb owns for one API.
    Refuse,
    /// Leave it as it is: a module file several APIs share, a user's README at `init`.
    Keep,
    /// Leave it, unless `--force` regenerates it: a kind's roles, shared by its versions.
    KeepUnlessForced,
    /// Replace it: files rkb regenerates on every run (PROJECT).
    Overwrite,
}

/// What an entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Writes the whole file.
    Write(IfExists),
    /// Edits the file at the marker with the text: inserts it (once, sorted, or replacing
    /// what an earlier run inserted under its first line, e.g. `- name: MEMCACHED_IMAGE`),
    /// or withdraws what was upserted under it.
    AtMarker(Marker, Edit),
    /// Removes the file, if it exists: what a variant of the API no longer asked for had.
    Remove,
}

/// What an edit at a marker does with its text: one edit, the difference a value
/// (controller-runtime's options as values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Inserts the text on the lines before the marker, indented like it. Idempotent: text
    /// already in the file is not inserted again.
    Insert,
    /// Inserts the one-line text into the block of lines right above the marker, keeping
    /// the block in rustfmt's order (its `reorder_modules`/imports rules), so a project
    /// stays `cargo fmt`-clean whatever order APIs are created in.
    Sorted,
    /// Inserts like [`Edit::Insert`]; when the file has the text's first line already,
    /// replaces the lines under it with the text's instead, so a later run changes a value
    /// (`--force` with another image) rather than repeating it.
    Upsert,
    /// Takes back out what an [`Edit::Upsert`] put in with the text as its key: the YAML
    /// list item whose first line is the key (with the lines under it), and the list's own
    /// key line (`env:`) when no item of it is left above the marker. A missing file has
    /// nothing to take out.
    Withdraw,
}

/// One generated file or insertion of a command. `S` is the command's switches: what the
/// user asked for and what the project holds, decided before planning.
#[derive(Debug)]
pub struct Entry<S: 'static> {
    /// The file, relative to the project root, as a tera string over the command's context.
    pub path: &'static str,
    pub text: Text,
    pub action: Action,
    /// Whether this entry applies.
    pub when: fn(&S) -> bool,
    /// The file is Rust whose wrapping depends on names: rustfmt it before commit.
    pub rustfmt: bool,
    /// Extra context for this entry only (which role of a kind's three).
    pub vars: &'static [(&'static str, &'static str)],
}

fn always<S>(_: &S) -> bool {
    true
}

impl<S> Entry<S> {
    /// A new file from `template`; refused if it exists, unless `--force`.
    pub const fn file(path: &'static str, template: &'static str) -> Self {
        Self::new(
            path,
            Text::Template(template),
            Action::Write(IfExists::Refuse),
        )
    }

    /// A file several commands or APIs share: written if missing, else kept as it is.
    pub const fn shared(path: &'static str, template: &'static str) -> Self {
        Self::file(path, template).if_exists(IfExists::Keep)
    }

    /// An insertion of `template` at `marker`.
    pub const fn insert(path: &'static str, marker: Marker, text: Text) -> Self {
        Self::new(path, text, Action::AtMarker(marker, Edit::Insert))
    }

    /// An insertion of a one-line `template` at `marker`, kept in rustfmt's order.
    pub const fn insert_sorted(path: &'static str, marker: Marker, text: Text) -> Self {
        Self::new(path, text, Action::AtMarker(marker, Edit::Sorted))
    }

    /// An insertion at `marker` that a later run updates rather than repeats.
    pub const fn upsert(path: &'static str, marker: Marker, text: Text) -> Self {
        Self::new(path, text, Action::AtMarker(marker, Edit::Upsert))
    }

    /// Takes the YAML list item keyed by `key` back out of the block above `marker`.
    pub const fn withdraw(path: &'static str, marker: Marker, key: Text) -> Self {
        Self::new(path, key, Action::AtMarker(marker, Edit::Withdraw))
    }

    /// Removes `path` if it exists.
    pub const fn remove(path: &'static str) -> Self {
        Self::new(path, Text::Inline(""), Action::Remove)
    }

    /// PROJECT, rewritten with what the command changed.
    pub const fn project() -> Self {
        Self::new(
            project::FILE_NAME,
            Text::Project,
            Action::Write(IfExists::Overwrite),
        )
    }

    const fn new(path: &'static str, text: Text, action: Action) -> Self {
        Entry {
            path,
            text,
            action,
            when: always::<S>,
            rustfmt: false,
            vars: &[],
        }
    }

    pub const fn if_exists(mut self, policy: IfExists) -> Self {
        self.action = Action::Write(policy);
        self
    }

    pub const fn when(mut self, when: fn(&S) -> bool) -> Self {
        self.when = when;
        self
    }

    pub const fn rustfmt(mut self) -> Self {
        self.rustfmt = true;
        self
    }

    pub const fn vars(mut self, vars: &'static [(&'static str, &'static str)]) -> Self {
        self.vars = vars;
        self
    }

    /// The template file this entry renders, if it renders one.
    pub fn template(&self) -> Option<&'static str> {
        match self.text {
            Text::Template(name) => Some(name),
            Text::Inline(_) | Text::Project => None,
        }
    }
}

/// What [`apply`] left to the command to report.
#[derive(Debug, Default)]
pub struct Applied {
    /// Files that existed and were kept as they were (`IfExists::Keep`).
    pub kept: Vec<String>,
    /// Set when rustfmt is missing, so the Rust written is not formatted.
    pub warning: Option<String>,
}

/// Plans every entry of `plan` that applies under `switches` into `changes`, then formats
/// the Rust files entries asked to be formatted. Nothing is written until the command
/// commits `changes`.
pub fn apply<S>(
    plan: &[Entry<S>],
    switches: &S,
    templates: &Templates,
    model: &impl Model,
    force: bool,
    changes: &mut Changes,
) -> anyhow::Result<Applied> {
    let context = &super::context_of(model)?;
    let mut applied = Applied::default();
    let mut to_format: Vec<String> = Vec::new();
    for entry in plan.iter().filter(|e| (e.when)(switches)) {
        let mut local;
        let context = if entry.vars.is_empty() {
            context
        } else {
            local = context.clone();
            for (key, value) in entry.vars {
                local.insert(*key, value);
            }
            &local
        };
        let path = templates.render_str(entry.path, context)?;
        let text = || match entry.text {
            Text::Template(name) => templates.render(name, context),
            Text::Inline(line) => templates.render_str(line, context),
            Text::Project => Ok(model.project().to_yaml()),
        };
        match entry.action {
            Action::Write(policy) => match policy {
                _ if !changes.exists(&path)? => changes.create(&path, text()?, false)?,
                IfExists::Keep => applied.kept.push(path.clone()),
                IfExists::KeepUnlessForced if !force => {}
                // Refused by `create`, whose message says what --force would do.
                IfExists::Refuse if !force => changes.create(&path, text()?, false)?,
                _ => changes.create(&path, text()?, true)?,
            },
            Action::AtMarker(marker, edit) => {
                changes.edit_at_marker(&path, marker, edit, &text()?)?
            }
            Action::Remove => changes.remove(&path)?,
        }
        if entry.rustfmt && !to_format.contains(&path) {
            to_format.push(path);
        }
    }
    let mut sources = Vec::with_capacity(to_format.len());
    let mut originals = Vec::with_capacity(to_format.len());
    for path in &to_format {
        sources.push(changes.read(path)?.context("a file planned above")?);
        originals.push(changes.original(path)?);
    }
    let (formatted, warning) = super::rustfmt(&to_format, sources, &originals)?;
    for (path, source) in to_format.iter().zip(formatted) {
        changes.create(path, source, true)?;
    }
    applied.warning = warning;
    Ok(applied)
}

/// An entry of a table as it applied to one model: the file, the text it wrote or
/// inserted there, and how.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub path: String,
    pub text: String,
    pub action: Action,
    pub rustfmt: bool,
}

/// Renders every entry of `plan` that applies under `switches` over `model`, except
/// PROJECT: what [`apply`] would write, before rustfmt.
pub fn render<S>(
    plan: &[Entry<S>],
    switches: &S,
    templates: &Templates,
    model: &impl Model,
) -> anyhow::Result<Vec<Rendered>> {
    let context = &super::context_of(model)?;
    let mut rendered = Vec::new();
    for entry in plan.iter().filter(|e| (e.when)(switches)) {
        let mut context = context.clone();
        for (key, value) in entry.vars {
            context.insert(*key, value);
        }
        let text = match entry.text {
            Text::Template(name) => templates.render(name, &context)?,
            Text::Inline(line) => templates.render_str(line, &context)?,
            Text::Project => continue,
        };
        rendered.push(Rendered {
            path: templates.render_str(entry.path, &context)?,
            text,
            action: entry.action,
            rustfmt: entry.rustfmt,
        });
    }
    Ok(rendered)
}

/// Plans what `rendered` says into `changes`: each file created (one that exists is an
/// error), each insertion made at its marker; then formats the Rust files that asked for
/// it, as [`apply`] does. Returns rustfmt's warning, if any.
pub fn apply_rendered(
    rendered: &[Rendered],
    changes: &mut Changes,
) -> anyhow::Result<Option<String>> {
    let mut to_format: Vec<String> = Vec::new();
    for r in rendered {
        match r.action {
            Action::Write(_) => changes.create(&r.path, r.text.clone(), false)?,
            Action::AtMarker(marker, edit) => {
                changes.edit_at_marker(&r.path, marker, edit, &r.text)?
            }
            Action::Remove => changes.remove(&r.path)?,
        }
        if r.rustfmt && !to_format.contains(&r.path) {
            to_format.push(r.path.clone());
        }
    }
    let mut sources = Vec::with_capacity(to_format.len());
    let mut originals = Vec::with_capacity(to_format.len());
    for path in &to_format {
        sources.push(changes.read(path)?.context("a file planned above")?);
        originals.push(changes.original(path)?);
    }
    let (formatted, warning) = super::rustfmt(&to_format, sources, &originals)?;
    for (path, source) in to_format.iter().zip(formatted) {
        changes.create(path, source, true)?;
    }
    Ok(warning)
}

/// What other APIs (and `init`) still need: files they write, and insertions, by file and
/// text as [`unapply`] compares them.
#[derive(Debug, Default)]
pub struct Kept {
    files: BTreeSet<String>,
    insertions: BTreeSet<(String, String)>,
}

impl Kept {
    pub fn file(&mut self, path: &str) {
        self.files.insert(path.to_owned());
    }

    /// An insertion `init`'s template already has, so that no delete removes it.
    pub fn insertion(&mut self, path: &str, text: &str) {
        self.insertions
            .insert((path.to_owned(), insertion_key(text)));
    }

    pub fn extend(&mut self, rendered: &[Rendered]) {
        for r in rendered {
            match r.action {
                Action::Write(_) => self.file(&r.path),
                _ => {
                    self.insertions
                        .insert((r.path.clone(), insertion_key(&r.text)));
                }
            }
        }
    }

    fn has_insertion(&self, r: &Rendered) -> bool {
        self.insertions
            .contains(&(r.path.clone(), insertion_key(&r.text)))
    }
}

/// Two insertions are the same when they differ only in whitespace.
fn insertion_key(text: &str) -> String {
    text.split_whitespace().collect()
}

/// What [`unapply`] could not undo by itself: the command refuses unless `--force`.
#[derive(Debug, Default)]
pub struct Unapplied {
    /// Files rkb would remove that differ from what it scaffolds for the API now.
    pub changed: Vec<String>,
    /// Insertions not found in their file: `(file, text)`.
    pub missing: Vec<(String, String)>,
    /// Shared files that stay because they hold more than rkb wrote there.
    pub kept: Vec<String>,
    /// Set when rustfmt is missing.
    pub warning: Option<String>,
}

/// Plans the undoing of `gone`, the entries a command applied for one API, into
/// `changes`: its insertions are removed, then the files it wrote, unless `kept` still
/// needs them. A file rkb owns is removed only while it holds exactly what rkb scaffolds
/// (or with `force`); a shared one only when nothing but rkb's text is left in it. Files
/// the entries had formatted are formatted again, as the command did.
pub fn unapply(
    gone: &[Rendered],
    kept: &Kept,
    force: bool,
    changes: &mut Changes,
) -> anyhow::Result<Unapplied> {
    let mut unapplied = Unapplied::default();
    for r in gone {
        let marker = match r.action {
            // Taking out and removing are what a forced re-run does, never what it left.
            Action::AtMarker(_, Edit::Withdraw) | Action::Write(_) | Action::Remove => continue,
            Action::AtMarker(m, _) => m,
        };
        if kept.has_insertion(r) {
            continue;
        }
        if !changes.remove_inserted(&r.path, marker, &r.text)? {
            unapplied.missing.push((r.path.clone(), r.text.clone()));
        }
    }
    // The files whose insertions were removed, formatted as the command formatted them.
    let edited: BTreeSet<String> = changes
        .pending()
        .map(|(path, _)| path.to_string_lossy().into_owned())
        .collect();
    let mut to_format: Vec<String> = Vec::new();
    for r in gone
        .iter()
        .filter(|r| r.rustfmt && edited.contains(&r.path))
    {
        if !to_format.contains(&r.path) && changes.exists(&r.path)? {
            to_format.push(r.path.clone());
        }
    }
    // The files it wrote that nothing else needs, as it wrote them.
    let mut written: Vec<&Rendered> = Vec::new();
    for r in gone {
        let is_file = matches!(r.action, Action::Write(_));
        if is_file && !kept.files.contains(&r.path) && written.iter().all(|w| w.path != r.path) {
            written.push(r);
        }
    }
    let mut paths = to_format.clone();
    let mut sources = Vec::new();
    let mut originals = Vec::new();
    for path in &to_format {
        sources.push(changes.read(path)?.context("a file checked above")?);
        originals.push(changes.original(path)?);
    }
    // rkb's own text, as new: if it does not parse, that is rkb's bug, not the user's.
    for r in written.iter().filter(|r| r.rustfmt) {
        paths.push(r.path.clone());
        sources.push(r.text.clone());
        originals.push(None);
    }
    let (formatted, warning) = super::rustfmt(&paths, sources, &originals)?;
    unapplied.warning = warning;
    let mut formatted = formatted.into_iter();
    for path in &to_format {
        let source = formatted.next().context("one formatted text per file")?;
        changes.create(path, source, true)?;
    }
    for r in written {
        let expected = if r.rustfmt {
            formatted.next().context("one formatted text per file")?
        } else {
            r.text.clone()
        };
        let Some(current) = changes.read(&r.path)? else {
            continue; // moved away by the user
        };
        let unchanged = current == expected;
        match r.action {
            Action::Write(IfExists::Keep) if !unchanged => unapplied.kept.push(r.path.clone()),
            Action::Write(IfExists::Keep) => changes.remove(&r.path)?,
            _ if unchanged => changes.remove(&r.path)?,
            _ => {
                unapplied.changed.push(r.path.clone());
                if force {
                    changes.remove(&r.path)?;
                }
            }
        }
    }
    Ok(unapplied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Text::Inline;

    #[derive(Debug)]
    struct On(bool);

    #[derive(Serialize)]
    struct Context {
        text: &'static str,
        #[serde(skip)]
        project: Project,
    }

    impl Model for Context {
        fn project(&self) -> &Project {
            &self.project
        }
    }

    /// A file whose text is the context's `text`.
    const fn written(path: &'static str) -> Entry<On> {
        Entry::new(path, Inline("{{ text }}"), Action::Write(IfExists::Refuse))
    }

    const PLAN: &[Entry<On>] = &[
        written("owned.txt"),
        written("shared.txt").if_exists(IfExists::Keep),
        written("roles.txt").if_exists(IfExists::KeepUnlessForced),
        written("index.txt").if_exists(IfExists::Overwrite),
        Entry::insert("list.yaml", Marker::Samples, Inline("- {{ who }}.yaml"))
            .vars(&[("who", "a")]),
        Entry::insert("list.yaml", Marker::Samples, Inline("- b.yaml")).when(|on| on.0),
    ];

    /// Runs [`PLAN`] over a directory holding `files`, returning the outcome and the
    /// directory's files afterwards.
    fn run(
        files: &[(&str, &str)],
        on: bool,
        force: bool,
    ) -> (anyhow::Result<Applied>, Vec<(String, String)>) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let context = Context {
            text: "new",
            project: Project::new("example.com", "demo"),
        };
        let templates = Templates::load().unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        let applied = apply(PLAN, &On(on), &templates, &context, force, &mut changes)
            .and_then(|applied| changes.commit().map(|_| applied));
        let mut after: Vec<(String, String)> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                let name = e.file_name().into_string().unwrap();
                (name, std::fs::read_to_string(e.path()).unwrap())
            })
            .collect();
        after.sort();
        (applied, after)
    }

    const LIST: (&str, &str) = ("list.yaml", "# +rkb:scaffold:samples\n");

    fn file(name: &str, text: &str) -> (String, String) {
        (name.to_owned(), text.to_owned())
    }

    #[test]
    fn a_fresh_directory_gets_every_entry_that_applies() {
        let (applied, after) = run(&[LIST], false, false);
        assert!(applied.unwrap().kept.is_empty());
        assert_eq!(
            after,
            [
                file("index.txt", "new"),
                file("list.yaml", "- a.yaml\n# +rkb:scaffold:samples\n"),
                file("owned.txt", "new"),
                file("roles.txt", "new"),
                file("shared.txt", "new"),
            ]
        );
        let (_, after) = run(&[LIST], true, false);
        assert_eq!(
            after[1],
            file("list.yaml", "- a.yaml\n- b.yaml\n# +rkb:scaffold:samples\n")
        );
    }

    #[test]
    fn existing_files_follow_their_policy() {
        let old = [
            ("shared.txt", "mine"),
            ("roles.txt", "mine"),
            ("index.txt", "old"),
            LIST,
        ];
        let (applied, after) = run(&old, false, false);
        assert_eq!(applied.unwrap().kept, ["shared.txt"]);
        assert_eq!(after[0], file("index.txt", "new"));
        assert_eq!(after[3], file("roles.txt", "mine"));
        assert_eq!(after[4], file("shared.txt", "mine"));

        // --force regenerates what rkb owns, never a shared file.
        let (_, after) = run(
            &[old[0], old[1], ("owned.txt", "edited"), LIST],
            false,
            true,
        );
        assert_eq!(after[2], file("owned.txt", "new"));
        assert_eq!(after[3], file("roles.txt", "new"));
        assert_eq!(after[4], file("shared.txt", "mine"));
    }

    #[test]
    fn an_owned_file_is_refused_without_force_and_nothing_is_written() {
        let (applied, after) = run(&[("owned.txt", "edited"), LIST], false, false);
        let error = format!("{:#}", applied.unwrap_err());
        assert!(error.contains("owned.txt already exists"), "{error}");
        assert_eq!(
            after,
            [file("list.yaml", LIST.1), file("owned.txt", "edited")]
        );
    }

    #[test]
    fn marker_names_are_unique() {
        let mut names: Vec<&str> = Marker::ALL.iter().map(|m| m.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Marker::ALL.len());
    }
}
