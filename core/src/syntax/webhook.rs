//! `#[rkb_runtime::webhook(...)]` on an `impl Defaulter<K> for T` or `impl Validator<K>
//! for T` block: controller-gen's `+kubebuilder:webhook` marker. The settings are checked
//! here, with spans, by the rules of [`crate::webhook`]; the attribute macro makes them the
//! impl's `settings()`, and `make manifests` reads them from the sources.

use proc_macro2::{Span, TokenStream};
use syn::ItemImpl;

use super::ctxt::Ctxt;
use super::keys::Keys;
use super::meta::{self, Entry, Value};
use super::suggest;
use crate::attributes::webhook::{self as table, ALIASES, REPEATABLE};
use crate::webhook::{self as rules, Kind, MatchCondition, Operation, ReviewVersion};

/// Where the attribute may be written.
const PLACEMENT: &str = "#[rkb_runtime::webhook] goes on an `impl Defaulter<Kind> for ...` or \
                         `impl Validator<Kind> for ...` block";

/// The webhook attribute's `args` on `input`, which must be an `impl Defaulter<K> for T`
/// or `impl Validator<K> for T` block: the impl, the kind of webhook its trait makes and
/// the settings, or every mistake with its span.
pub fn parse(
    args: TokenStream,
    input: TokenStream,
) -> syn::Result<(ItemImpl, Kind, rules::Settings)> {
    let item: ItemImpl = syn::parse2(input).map_err(|e| syn::Error::new(e.span(), PLACEMENT))?;
    let mut cx = Ctxt::default();
    let kind = trait_kind(&item);
    if kind.is_none() {
        cx.error_at(item.impl_token.span, PLACEMENT);
    }
    if let Some(existing) = item
        .items
        .iter()
        .find(|i| matches!(i, syn::ImplItem::Fn(f) if f.sig.ident == "settings"))
    {
        cx.error_spanned(
            existing,
            "this impl defines settings() itself; the #[rkb_runtime::webhook] attribute \
             writes it: remove one of the two",
        );
    }
    let entries = meta::parse_entries(args)?;
    let settings = parse_settings(&mut cx, &entries, kind);
    cx.check()?;
    let kind = kind.expect("a misplaced attribute is reported above");
    Ok((item, kind, settings))
}

/// The kind of webhook the impl's trait makes: `Defaulter` a mutating one, `Validator` a
/// validating one (by the last segment of the trait's path, however it is imported).
pub fn trait_kind(item: &ItemImpl) -> Option<Kind> {
    let (_, path, _) = item.trait_.as_ref()?;
    let name = path.segments.last()?.ident.to_string();
    Kind::ALL.into_iter().find(|kind| kind.trait_name() == name)
}

fn string(cx: &mut Ctxt, entry: &Entry) -> Option<(String, Span)> {
    match &entry.value {
        Value::Assign(tokens) => match meta::as_str(tokens) {
            Some(lit) => Some((lit.value(), lit.span())),
            None => {
                cx.error_at(
                    entry.value_span(),
                    format!(
                        "`{}` takes a string, e.g. {}",
                        entry.name(),
                        example(&entry.name())
                    ),
                );
                None
            }
        },
        _ => {
            cx.error_at(
                entry.span(),
                format!(
                    "`{}` takes a value: {}",
                    entry.name(),
                    example(&entry.name())
                ),
            );
            None
        }
    }
}

/// How to write the key, from rkb-core's table, as messages quote it.
fn example(key: &str) -> String {
    table::find(key).map_or_else(String::new, table::Key::usage)
}

/// `value` folded (case, `_`, `-`) and matched against `choices`.
fn choice<T: Copy>(cx: &mut Ctxt, entry: &Entry, choices: &[(&str, T)]) -> Option<T> {
    let (value, span) = string(cx, entry)?;
    let folded = suggest::fold(&value);
    let found = choices.iter().find(|(spelling, _)| *spelling == folded);
    if found.is_none() {
        let key = entry.name();
        cx.error_at(
            span,
            format!("`{key}` cannot be {value:?}: use {}", example(&key)),
        );
    }
    found.map(|(_, variant)| *variant)
}

/// A string value that passes `check`.
fn checked_string<E: std::fmt::Display>(
    cx: &mut Ctxt,
    entry: &Entry,
    check: fn(&str) -> Result<(), E>,
) -> Option<String> {
    let (value, span) = string(cx, entry)?;
    match check(&value) {
        Ok(()) => Some(value),
        Err(error) => {
            cx.error_at(span, error);
            None
        }
    }
}

fn timeout(cx: &mut Ctxt, entry: &Entry) -> Option<u8> {
    let Value::Assign(tokens) = &entry.value else {
        cx.error_at(
            entry.span(),
            "`timeout_seconds` takes a value: timeout_seconds = 10",
        );
        return None;
    };
    match meta::as_number(tokens) {
        Some(n) if n.is_integer && n.value >= 0.0 => match rules::check_timeout(n.value as u64) {
            Ok(seconds) => Some(seconds),
            Err(error) => {
                cx.error_at(meta::span_of(tokens), error);
                None
            }
        },
        _ => {
            cx.error_at(
                entry.value_span(),
                "`timeout_seconds` takes a whole number of seconds from 1 to 30",
            );
            None
        }
    }
}

fn operations(cx: &mut Ctxt, entry: &Entry) -> Option<Vec<Operation>> {
    let Value::Nested(_, items) = &entry.value else {
        cx.error_at(
            entry.span(),
            "`operations` takes a list: operations(create, update, delete)",
        );
        return None;
    };
    if items.is_empty() {
        cx.error_at(entry.span(), rules::SettingError::NoOperations);
    }
    let mut parsed = Vec::new();
    for item in items {
        let op_name = item.name();
        match (Operation::parse(&op_name), &item.value) {
            (Some(op), Value::Flag) => {
                if parsed.contains(&op) {
                    cx.error_at(item.key.span(), rules::SettingError::DuplicateOperation(op));
                }
                parsed.push(op);
            }
            _ => cx.error_at(
                item.span(),
                format!("unknown operation `{op_name}`: use create, update, delete or connect"),
            ),
        }
    }
    Some(parsed)
}

fn review_versions(cx: &mut Ctxt, entry: &Entry) -> Option<Vec<ReviewVersion>> {
    let Value::Nested(_, items) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!(
                "`admission_review_versions` takes a list: {}",
                example("admission_review_versions")
            ),
        );
        return None;
    };
    let mut parsed = Vec::new();
    for item in items {
        match (ReviewVersion::parse(&item.name()), &item.value) {
            (Some(version), Value::Flag) => {
                if parsed.contains(&version) {
                    cx.error_at(
                        item.key.span(),
                        rules::SettingError::DuplicateReviewVersion(version),
                    );
                }
                parsed.push(version);
            }
            _ => cx.error_at(
                item.span(),
                format!(
                    "unknown admission review version `{}`: use v1 or v1beta1",
                    item.name()
                ),
            ),
        }
    }
    if !parsed.contains(&ReviewVersion::V1) && parsed.len() == items.len() {
        cx.error_at(entry.span(), rules::SettingError::ReviewVersionsWithoutV1);
    }
    Some(parsed)
}

/// `match_condition(name = "...", expression = "...")`: one condition, each part
/// checked at its literal.
fn match_condition(cx: &mut Ctxt, entry: &Entry) -> Option<MatchCondition> {
    let usage = example("match_condition");
    let Value::Nested(_, items) = &entry.value else {
        cx.error_at(
            entry.span(),
            format!("`match_condition` takes a name and an expression: {usage}"),
        );
        return None;
    };
    let mut keys = Keys::new("`match_condition(...)`", &["name", "expression"], &[]);
    let (mut name, mut expression) = (None, None);
    for item in items {
        match keys.accept(cx, &item.name(), item.key.span()) {
            Some("name") => name = checked_string(cx, item, rules::check_match_condition_name),
            Some("expression") => expression = string(cx, item),
            _ => {}
        }
    }
    for missing in ["name", "expression"]
        .into_iter()
        .filter(|key| !keys.named(key))
    {
        cx.error_at(
            entry.span(),
            format!("`match_condition` needs `{missing}`: {usage}"),
        );
    }
    let (name, (expression, span)) = (name?, expression?);
    if let Err(error) = rules::check_match_condition_expression(&name, &expression) {
        cx.error_at(span, error);
        return None;
    }
    Some(MatchCondition { name, expression })
}

/// `reinvocation_policy`, refused on a validator (`kind` is the trait's).
fn reinvocation(
    cx: &mut Ctxt,
    entry: &Entry,
    kind: Option<Kind>,
) -> Option<rules::ReinvocationPolicy> {
    use rules::ReinvocationPolicy;
    if kind == Some(Kind::Validating) {
        cx.error_at(
            entry.key.span(),
            rules::SettingError::ReinvocationOnValidating,
        );
    }
    let choices = [
        ("never", ReinvocationPolicy::Never),
        ("ifneeded", ReinvocationPolicy::IfNeeded),
    ];
    choice(cx, entry, &choices)
}

/// Adds `condition` unless one of `conditions` has its name.
fn add_condition(
    cx: &mut Ctxt,
    entry: &Entry,
    condition: MatchCondition,
    conditions: &mut Vec<MatchCondition>,
) {
    if conditions.iter().any(|c| c.name == condition.name) {
        cx.error_at(
            entry.span(),
            rules::SettingError::DuplicateMatchCondition(condition.name),
        );
    } else {
        conditions.push(condition);
    }
}

/// The attribute's entries as rkb-core's typed settings, every problem reported with
/// its span; unset keys keep kubebuilder's defaults. `kind` is the trait's (`None` when
/// the attribute is misplaced, which is reported).
pub fn parse_settings(
    cx: &mut Ctxt,
    entries: &syn::punctuated::Punctuated<Entry, syn::Token![,]>,
    kind: Option<Kind>,
) -> rules::Settings {
    use rules::{FailurePolicy, MatchPolicy, SideEffects};
    let mut settings = rules::Settings::default();
    let names: Vec<&'static str> = table::KEYS.iter().map(|k| k.name).collect();
    let mut keys =
        Keys::new("#[rkb_runtime::webhook(...)]", &names, ALIASES).repeatable(REPEATABLE);
    for entry in entries {
        let Some(key) = keys.accept(cx, &entry.name(), entry.key.span()) else {
            continue;
        };
        match key {
            "path" => settings.path = checked_string(cx, entry, rules::check_path),
            "name" => settings.name = checked_string(cx, entry, rules::check_name),
            "failure_policy" => {
                let choices = [
                    ("fail", FailurePolicy::Fail),
                    ("ignore", FailurePolicy::Ignore),
                ];
                if let Some(v) = choice(cx, entry, &choices) {
                    settings.failure_policy = v;
                }
            }
            "side_effects" => {
                let choices = [
                    ("none", SideEffects::None),
                    ("noneondryrun", SideEffects::NoneOnDryRun),
                ];
                if let Some(v) = choice(cx, entry, &choices) {
                    settings.side_effects = v;
                }
            }
            "match_policy" => {
                let choices = [
                    ("exact", MatchPolicy::Exact),
                    ("equivalent", MatchPolicy::Equivalent),
                ];
                if let Some(v) = choice(cx, entry, &choices) {
                    settings.match_policy = v;
                }
            }
            "timeout_seconds" => settings.timeout_seconds = timeout(cx, entry),
            "operations" => {
                if let Some(ops) = operations(cx, entry) {
                    settings.operations = ops;
                }
            }
            "reinvocation_policy" => {
                settings.reinvocation_policy = reinvocation(cx, entry, kind);
            }
            "admission_review_versions" => {
                if let Some(versions) = review_versions(cx, entry) {
                    settings.admission_review_versions = versions;
                }
            }
            "url" => settings.url = checked_string(cx, entry, rules::check_url),
            "namespace_selector" => {
                settings.namespace_selector = checked_string(cx, entry, |s| {
                    rules::check_selector("namespace_selector", s)
                });
            }
            "object_selector" => {
                settings.object_selector =
                    checked_string(cx, entry, |s| rules::check_selector("object_selector", s));
            }
            "match_condition" => {
                if let Some(condition) = match_condition(cx, entry) {
                    add_condition(cx, entry, condition, &mut settings.match_conditions);
                }
            }
            // `keys` accepts only the table's keys; the test below has every one parsed.
            _ => {}
        }
    }
    check_together(cx, &keys, &settings);
    settings
}

/// The rules between keys: `url` without `path`, at most so many conditions.
fn check_together(cx: &mut Ctxt, keys: &Keys<'_>, settings: &rules::Settings) {
    let given = |key: &str| {
        keys.given()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, span)| *span)
    };
    if let (Some(url), Some(_)) = (given("url"), given("path")) {
        cx.error_at(url, rules::SettingError::UrlAndPath);
    }
    if settings.match_conditions.len() > rules::MAX_MATCH_CONDITIONS {
        let span = given("match_condition").unwrap_or_else(Span::call_site);
        cx.error_at(
            span,
            rules::SettingError::TooManyMatchConditions(settings.match_conditions.len()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key of rkb-core's table is parsed: its example changes the settings.
    #[test]
    fn every_key_of_the_table_is_parsed() {
        for key in table::KEYS {
            let mut cx = Ctxt::default();
            let entries = meta::parse_entries(key.example.parse().unwrap()).unwrap();
            let settings = parse_settings(&mut cx, &entries, Some(Kind::Mutating));
            assert!(cx.check().is_ok(), "{}", key.example);
            assert_ne!(settings, rules::Settings::default(), "{}", key.example);
        }
    }
}
