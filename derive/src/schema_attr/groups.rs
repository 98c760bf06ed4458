//! `exactly_one_of`, `at_most_one_of`, `at_least_one_of`: controller-gen's
//! `+kubebuilder:validation:{ExactlyOneOf,AtMostOneOf,AtLeastOneOf}`, a CEL rule on the
//! struct that counts which of the named fields are set. The names are the fields' JSON
//! names, checked against the struct's fields (after serde's renames) at compile time.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Attribute, Fields, LitStr, Type};

use crate::ctxt::Ctxt;
use crate::suggest;

/// One `*_one_of = [...]` as written.
pub(crate) struct FieldGroup {
    key: &'static str,
    span: Span,
    names: Vec<LitStr>,
}

impl FieldGroup {
    pub(super) fn new(key: &'static str, span: Span, names: Vec<LitStr>) -> Self {
        FieldGroup { key, span, names }
    }
}

/// A field as the schema names it.
struct JsonField {
    json: String,
    rust: String,
    optional: bool,
}

/// Checks each group against `fields` (`None`: the item is an enum) and returns its
/// CEL rule.
pub(crate) fn field_groups(
    cx: &mut Ctxt,
    groups: &[FieldGroup],
    attrs: &[Attribute],
    fields: Option<&Fields>,
) -> Vec<TokenStream> {
    if groups.is_empty() {
        return Vec::new();
    }
    let Some(Fields::Named(named)) = fields else {
        for group in groups {
            cx.error_at(
                group.span,
                format!("`{}` applies to structs with named fields", group.key),
            );
        }
        return Vec::new();
    };
    let rename_all = serde_value(attrs, "rename_all");
    let fields: Vec<JsonField> = named
        .named
        .iter()
        .filter(|f| !serde_flag(&f.attrs, "skip") && !serde_flag(&f.attrs, "flatten"))
        .filter_map(|f| {
            let rust = f.ident.as_ref()?.to_string();
            let rust = rust.strip_prefix("r#").unwrap_or(&rust).to_owned();
            let json = serde_value(&f.attrs, "rename")
                .unwrap_or_else(|| rename(&rust, rename_all.as_deref()));
            Some(JsonField {
                json,
                rust,
                optional: is_option(&f.ty),
            })
        })
        .collect();
    groups
        .iter()
        .filter_map(|group| rule(cx, group, &fields))
        .collect()
}

fn rule(cx: &mut Ctxt, group: &FieldGroup, fields: &[JsonField]) -> Option<TokenStream> {
    let mut ok = true;
    if group.names.len() < 2 {
        cx.error_at(
            group.span,
            format!("`{}` needs at least two fields", group.key),
        );
        ok = false;
    }
    let jsons: Vec<&str> = fields.iter().map(|f| f.json.as_str()).collect();
    let mut seen: Vec<String> = Vec::new();
    for lit in &group.names {
        let name = lit.value();
        if seen.contains(&name) {
            cx.error_spanned(lit, format!("`{name}` is named twice"));
            ok = false;
            continue;
        }
        seen.push(name.clone());
        match fields.iter().find(|f| f.json == name) {
            Some(field) if !field.optional => {
                cx.error_spanned(
                    lit,
                    format!(
                        "`{name}` is required, so it is always set: make `{}` an Option<T>",
                        field.rust
                    ),
                );
                ok = false;
            }
            Some(_) => {}
            None => {
                let hint = match fields.iter().find(|f| f.rust == name) {
                    Some(f) => format!("use its JSON name `{}`", f.json),
                    None => match suggest::closest(&name, &jsons) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("the fields are: {}", jsons.join(", ")),
                    },
                };
                cx.error_spanned(lit, format!("no field `{name}` in this struct; {hint}"));
                ok = false;
            }
        }
    }
    if !ok {
        return None;
    }
    let set: Vec<String> = seen
        .iter()
        .map(|n| format!("has(self.{})", cel_name(n)))
        .collect();
    let listed = seen.join(", ");
    let (comparison, message) = match group.key {
        "exactly_one_of" => ("== 1", format!("exactly one of {listed} must be set")),
        "at_most_one_of" => ("<= 1", format!("at most one of {listed} may be set")),
        _ => (">= 1", format!("at least one of {listed} must be set")),
    };
    let rule = format!("[{}].filter(x, x).size() {comparison}", set.join(", "));
    Some(quote!({"rule": #rule, "message": #message}))
}

/// A property name as CEL spells it (Kubernetes' escaping of names that are not CEL
/// identifiers).
fn cel_name(name: &str) -> String {
    const RESERVED: &[&str] = &[
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    if RESERVED.contains(&name) {
        return format!("__{name}__");
    }
    name.replace("__", "__underscores__")
        .replace('.', "__dot__")
        .replace('-', "__dash__")
        .replace('/', "__slash__")
}

fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// serde's renaming of a snake_case field name.
fn rename(field: &str, rule: Option<&str>) -> String {
    let pascal = || -> String {
        field
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            })
            .collect()
    };
    match rule {
        Some("lowercase") => field.to_lowercase(),
        Some("UPPERCASE" | "SCREAMING_SNAKE_CASE") => field.to_uppercase(),
        Some("PascalCase") => pascal(),
        Some("camelCase") => {
            let p = pascal();
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_lowercase().chain(c).collect())
                .unwrap_or_default()
        }
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => field.replace('_', "-").to_uppercase(),
        _ => field.to_owned(),
    }
}

/// The string value of `#[serde(key = "...")]`.
fn serde_value(attrs: &[Attribute], key: &str) -> Option<String> {
    let mut found = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key)
                && let Ok(value) = meta.value()
                && let Ok(lit) = value.parse::<LitStr>()
            {
                found = Some(lit.value());
            } else if meta.input.peek(syn::Token![=]) {
                // Other keys' values (`default = "path"`) are skipped whole.
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|_| Ok(()))?;
            }
            Ok(())
        });
    }
    found
}

/// Whether `#[serde(key)]` is given.
fn serde_flag(attrs: &[Attribute], key: &str) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                found = true;
            }
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|_| Ok(()))?;
            }
            Ok(())
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_renamed_as_serde_does() {
        assert_eq!(rename("max_surge", Some("camelCase")), "maxSurge");
        assert_eq!(rename("max_surge", Some("PascalCase")), "MaxSurge");
        assert_eq!(rename("max_surge", Some("kebab-case")), "max-surge");
        assert_eq!(rename("max_surge", None), "max_surge");
    }

    #[test]
    fn names_are_escaped_for_cel() {
        assert_eq!(cel_name("cron"), "cron");
        assert_eq!(cel_name("namespace"), "__namespace__");
        assert_eq!(cel_name("max-surge"), "max__dash__surge");
    }
}
