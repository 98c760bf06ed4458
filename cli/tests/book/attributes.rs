//! The attribute reference pages, rendered from rkb-core's key tables
//! (`rkb_core::attributes`), which the derive macros parse with.

use rkb_core::attributes::{rbac, rkb, webhook};
use rkb_core::schema::FORMATS;

use crate::generated_page;

/// controller-gen markers that need no `#[rkb(...)]` key, and what does their job.
const WITHOUT_KEY: &[(&str, &str)] = &[
    (
        "`+kubebuilder:validation:Required`, `Optional`, `+required`, `+optional`",
        "The Rust type: `Option<T>` or `#[serde(default)]` is optional, anything else required.",
    ),
    (
        "`+kubebuilder:validation:Type`",
        "The Rust type; `int_or_string` for a string that may be a number.",
    ),
    (
        "`+kubebuilder:validation:UniqueItems`",
        "Forbidden by Kubernetes (its validation cost is quadratic): `list_type = set`.",
    ),
    (
        "`+kubebuilder:subresource:status`",
        "kube's `#[kube(status = \"...\")]`.",
    ),
    (
        "`+kubebuilder:resource:path`, `singular`, `scope`",
        "kube's `#[kube(plural = ..., singular = ..., namespaced)]`.",
    ),
    (
        "`+kubebuilder:metadata:annotations`, `labels`",
        "kube's `#[kube(annotation(\"k\", \"v\"), label(\"k\", \"v\"))]`.",
    ),
    (
        "`+groupName`, `+versionName`",
        "kube's `#[kube(group = ..., version = ...)]`.",
    ),
    (
        "`+kubebuilder:skipversion`, `+kubebuilder:skip`",
        "Not needed: a kind is in the CRDs when it is listed in `crds()` (api/src/lib.rs).",
    ),
    (
        "`crd:maxDescLen`",
        "`.max_desc_len(n)` in `manifests()`, or `--max-desc-len`.",
    ),
];

/// A table cell: no line breaks, and `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn places(key: &rkb::Key) -> String {
    let p = key.places;
    let names: Vec<&str> = [
        (p.field, "field"),
        (p.ty, "type"),
        (p.items, "items"),
        (p.spec, "spec"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    names.join(", ")
}

fn writes(key: &rkb::Key) -> String {
    let code = |names: &[&str]| -> String {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        names.join(", ")
    };
    match key.writes {
        rkb::Writes::Keyword(keyword) => format!("`{keyword}`"),
        rkb::Writes::SameAs(other) => format!(
            "`{}` (as `{other}`)",
            key.keyword().expect("the key it names writes a keyword")
        ),
        rkb::Writes::Implies(keywords) => code(keywords),
        rkb::Writes::Crd(fields) => format!("CRD: {}", code(fields)),
    }
}

fn attributes_page() -> String {
    let mut out = String::from(
        "# `#[rkb]` schema attributes\n\n\
         <!-- Generated from rkb-core's key table (core/src/attributes/rkb.rs) by\n     \
         cli/tests/book/attributes.rs: edit the table, then run\n     \
         `RKB_BLESS=1 cargo test -p rkb --test book`. -->\n\n\
         `#[rkb(...)]` does what controller-gen's CRD markers do, with Rust spellings. Write it\n\
         on the spec struct under `#[rkb_runtime::api]`, on the types a spec or status contains\n\
         under `#[rkb_runtime::schema]`, and on their fields. The derive checks each key at\n\
         compile time and points at the key when it is unknown, misplaced or has a bad value,\n\
         with a suggestion (controller-gen's spelling of a key is understood as a hint).\n\n\
         ```rust,noplayground\n\
         {{#include ../../../derive/tests/reference.rs:spec}}\n\
         ```\n\n\
         Where a key applies: **field**, a struct field or a field of an enum variant; **type**, a\n\
         struct or enum under `#[rkb_runtime::schema]`, or the spec struct; **items**, inside\n\
         `items(...)` for the elements of a list; **spec**, the spec struct only (the CRD's own\n\
         keys). `create api --external-crd` writes these keys back from another project's CRD.\n\n\
         | key | JSON keyword | where | controller-gen marker | example | what it does |\n\
         |---|---|---|---|---|---|\n",
    );
    for key in rkb::KEYS {
        let repeat = if key.repeatable { " Repeatable." } else { "" };
        out.push_str(&format!(
            "| `{}` | {} | {} | `{}` | `#[rkb({})]` | {}{repeat} |\n",
            key.name,
            cell(&writes(key)),
            places(key),
            cell(key.marker),
            cell(key.example),
            cell(key.doc),
        ));
    }
    out.push_str(&format!(
        "\n`format` takes the formats Kubernetes validates: {}.\n",
        FORMATS
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(
        "\n## Markers without a key\n\n\
         | controller-gen marker | in rkb |\n|---|---|\n",
    );
    for (marker, instead) in WITHOUT_KEY {
        out.push_str(&format!("| {} | {} |\n", cell(marker), cell(instead)));
    }
    out
}

fn rbac_and_webhooks_page() -> String {
    let mut out = String::from(
        "# `#[rbac]` and webhook attributes\n\n\
         <!-- Generated from rkb-core's key tables (core/src/attributes/rbac.rs, webhook.rs) by\n     \
         cli/tests/book/attributes.rs: edit the tables, then run\n     \
         `RKB_BLESS=1 cargo test -p rkb --test book`. -->\n\n\
         ## `#[rbac(...)]`\n\n\
         `#[derive(rkb_runtime::Rbac)]` on a reconciler takes one `#[rbac(...)]` per rule, as\n\
         controller-gen takes one `+kubebuilder:rbac` marker per rule; `make manifests` gathers\n\
         them into `config/rbac/role.yaml`. Each rule is checked at compile time against the\n\
         API server's rules for a PolicyRule, and wildcards are refused (least privilege).\n\n\
         ```rust,noplayground\n\
         {{#include ../../../derive/tests/reference.rs:rbac}}\n\
         ```\n\n\
         | key | controller-gen marker | example | what it does |\n|---|---|---|---|\n",
    );
    for key in rbac::KEYS {
        out.push_str(&format!(
            "| `{}` | `{}` | `{}` | {} |\n",
            key.name,
            cell(key.marker),
            cell(key.example),
            cell(key.doc)
        ));
    }
    out.push_str(
        "\n## `#[rkb_runtime::webhook(...)]`\n\n\
         On an `impl Defaulter<K> for T` or `impl Validator<K> for T` block, it is controller-gen's\n\
         `+kubebuilder:webhook` marker. Every key is optional (kubebuilder's defaults) and written\n\
         once, but `match_condition`, written once per condition; the kind and the trait give what\n\
         the marker's `groups`, `resources`, `versions` and `mutating` say. The manager serves the\n\
         impl's settings and `make manifests` renders them into `config/webhook/manifests.yaml`;\n\
         what the API server would refuse is refused at compile time, at the key.\n\n\
         ```rust,noplayground\n\
         {{#include ../../../derive/tests/reference.rs:webhook}}\n\
         ```\n\n\
         | key | controller-gen marker | values | example | what it does |\n|---|---|---|---|---|\n",
    );
    for key in webhook::KEYS {
        let values: Vec<String> = key.choices.iter().map(|c| format!("`{c:?}`")).collect();
        out.push_str(&format!(
            "| `{}` | `{}` | {} | `{}` | {} |\n",
            key.name,
            cell(key.marker),
            cell(&values.join(", ")),
            cell(key.example),
            cell(key.doc)
        ));
    }
    out
}

#[test]
fn the_rkb_attribute_reference_is_the_key_table() {
    let page = attributes_page();
    for key in rkb::KEYS {
        assert!(
            page.contains(&format!("| `{}` |", key.name)),
            "{}",
            key.name
        );
    }
    generated_page("reference/attributes.md", &page);
}

#[test]
fn the_rbac_and_webhook_reference_is_their_key_tables() {
    let page = rbac_and_webhooks_page();
    for name in rbac::KEYS
        .iter()
        .map(|k| k.name)
        .chain(webhook::KEYS.iter().map(|k| k.name))
    {
        assert!(page.contains(&format!("| `{name}` |")), "{name}");
    }
    generated_page("reference/rbac-and-webhooks.md", &page);
}
