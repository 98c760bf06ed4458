//! Scaffolding machinery: embedded tera templates ([`Templates`]) and the
//! all-or-nothing file writer with marker-based insertion ([`Changes`]).

pub mod builtin_kinds;
mod changes;

pub use changes::{Changes, Written};

use anyhow::Context as _;
use include_dir::{Dir, include_dir};

/// `templates/` of the rkb repository, compiled into the binary so an installed rkb
/// works from any directory.
static TEMPLATE_DIR: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../templates");

/// One template per generated file (kubebuilder's rule), addressed by its path under `templates/`.
#[derive(Debug)]
pub struct Templates {
    tera: tera::Tera,
}

impl Templates {
    pub fn load() -> anyhow::Result<Self> {
        let mut tera = tera::Tera::default();
        // Generated files are code and YAML, never HTML.
        tera.autoescape_on(Vec::new());
        let mut sources = Vec::new();
        collect(&TEMPLATE_DIR, &mut sources);
        tera.add_raw_templates(sources)
            .context("rkb's embedded templates do not parse (a bug in rkb)")?;
        Ok(Templates { tera })
    }

    pub fn render(&self, name: &str, context: &tera::Context) -> anyhow::Result<String> {
        self.tera
            .render(name, context)
            .with_context(|| format!("rendering template {name} failed (a bug in rkb)"))
    }

    /// Renders a one-line template string, such as an output path.
    pub fn render_str(&self, template: &str, context: &tera::Context) -> anyhow::Result<String> {
        tera::Tera::one_off(template, context, false)
            .with_context(|| format!("rendering {template:?} failed (a bug in rkb)"))
    }
}

/// The license header that starts every generated Rust file: `hack/boilerplate.rs.txt`
/// (editable by the user) followed by a blank line, or nothing.
pub fn source_header(boilerplate: &str) -> String {
    let boilerplate = boilerplate.trim_end();
    if boilerplate.is_empty() {
        String::new()
    } else {
        format!("{boilerplate}\n\n")
    }
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(&'static str, &'static str)>) {
    for file in dir.files() {
        let name = file.path().to_str().expect("template paths are UTF-8");
        let body = file
            .contents_utf8()
            .unwrap_or_else(|| panic!("template {name} is not UTF-8"));
        out.push((name, body));
    }
    for sub in dir.dirs() {
        collect(sub, out);
    }
}
