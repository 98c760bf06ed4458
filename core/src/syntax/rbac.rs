//! Parsing and checking of `#[rbac(...)]` attributes.
//!
//! Parsing is deliberately lenient (any value shape is accepted by the
//! grammar) so that checking can report every mistake with its own span
//! instead of stopping at the first unexpected token.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Attribute, Ident, LitStr, Token, bracketed, token};

use crate::names;
use crate::rbac::{self, KNOWN_VERBS, Shape, ShapeError, Verb};

use super::ctxt::Ctxt;
use super::keys::Keys;
use super::suggest;

/// One checked `#[rbac(...)]` attribute; mirrors `rkb_runtime::rbac::Rule`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    pub groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    pub verbs: Vec<String>,
    pub urls: Vec<String>,
    pub namespace: Option<String>,
}

/// The keys of `#[rbac(...)]` are the fields of a rule, as rkb-core names them.
use crate::rbac::Field as Key;

use crate::attributes::rbac::{self as table, ALIASES, KEYS};

fn key_name(key: Key) -> &'static str {
    table::key(key).name
}

struct Entry {
    key: Ident,
    value: Value,
}

enum Value {
    List {
        bracket: token::Bracket,
        items: Punctuated<Item, Token![,]>,
    },
    Str(LitStr),
    /// Anything else, kept only to point an error at it.
    Other(TokenStream),
}

enum Item {
    Str(LitStr),
    Ident(Ident),
    Star(Token![*]),
    Other(TokenTree),
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `parse_any` so that a keyword used as key reaches the "unknown key" check.
        let key = Ident::parse_any(input)?;
        input.parse::<Token![=]>()?;
        Ok(Entry {
            key,
            value: input.parse()?,
        })
    }
}

impl Parse for Value {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let items = content.parse_terminated(Item::parse, Token![,])?;
            Ok(Value::List { bracket, items })
        } else if input.peek(LitStr) {
            input.parse().map(Value::Str)
        } else {
            let mut rest = TokenStream::new();
            while !input.is_empty() && !input.peek(Token![,]) {
                rest.extend([input.parse::<TokenTree>()?]);
            }
            if rest.is_empty() {
                return Err(input.error("expected a value after `=`"));
            }
            Ok(Value::Other(rest))
        }
    }
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            input.parse().map(Item::Str)
        } else if input.peek(Token![*]) {
            input.parse().map(Item::Star)
        } else if input.peek(Ident::peek_any) {
            // `parse_any` accepts the keyword verb `use` as well as `r#use`.
            Ident::parse_any(input).map(Item::Ident)
        } else {
            input.parse().map(Item::Other)
        }
    }
}

/// The rules of the item `ident` that derives `Rbac`, from its attributes `attrs`: every
/// `#[rbac(...)]` checked, and at least one required; every mistake, with its span.
pub fn derive_rules(ident: &Ident, attrs: &[Attribute]) -> syn::Result<Vec<Rule>> {
    let mut cx = Ctxt::default();
    let rules = rules(&mut cx, attrs);
    if !attrs.iter().any(|a| a.path().is_ident("rbac")) {
        cx.error_at(
            ident.span(),
            format!(
                "#[derive(Rbac)] on `{ident}` declares no permissions; add one #[rbac(...)] \
                 attribute per rule, e.g. #[rbac(groups = [\"apps\"], resources = \
                 [\"deployments\"], verbs = [get, list, watch])]"
            ),
        );
    }
    cx.check()?;
    Ok(rules)
}

/// Checks every `#[rbac(...)]` attribute of the derive input; errors go to `cx`.
pub fn rules(cx: &mut Ctxt, attrs: &[Attribute]) -> Vec<Rule> {
    let mut rules = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("rbac")) {
        let list = match attr.meta.require_list() {
            Ok(list) => list,
            Err(_) => {
                cx.error_spanned(
                    attr,
                    "expected a rule in parentheses, e.g. \
                     #[rbac(groups = [\"apps\"], resources = [\"deployments\"], verbs = [get])]",
                );
                continue;
            }
        };
        match list.parse_args_with(Punctuated::<Entry, Token![,]>::parse_terminated) {
            Ok(entries) => {
                if let Some(rule) = check_rule(cx, attr, entries) {
                    rules.push(rule);
                }
            }
            Err(err) => cx.push(err),
        }
    }
    rules
}

/// The valid values of one attribute.
#[derive(Default)]
struct Seen {
    groups: Option<Vec<String>>,
    resources: Option<Vec<String>>,
    resource_names: Option<Vec<String>>,
    verbs: Option<Vec<String>>,
    namespace: Option<String>,
    urls: Option<Vec<String>>,
}

fn check_rule(
    cx: &mut Ctxt,
    attr: &Attribute,
    entries: Punctuated<Entry, Token![,]>,
) -> Option<Rule> {
    if entries.is_empty() {
        cx.error_spanned(
            attr,
            "empty #[rbac()]: write a rule, e.g. \
             #[rbac(groups = [\"apps\"], resources = [\"deployments\"], verbs = [get])]",
        );
        return None;
    }
    let mut seen = Seen::default();
    // Every known key written, valid value or not, with its span.
    let mut keys: Vec<(Key, Ident)> = Vec::new();
    let mut ok = true;
    let mut unknown = false;
    let names: Vec<&'static str> = KEYS.iter().map(|k| k.name).collect();
    let mut accepted = Keys::new("#[rbac(...)]", &names, ALIASES).advice(|key| match key {
        "namespace" => "write it once".to_owned(),
        list => format!("put all values in one `{list} = [...]`"),
    });
    for Entry { key: ident, value } in entries {
        let name = ident.unraw().to_string();
        let key = KEYS.iter().find(|k| k.name == name).map(|k| k.field);
        if accepted.accept(cx, &name, ident.span()).is_none() {
            ok = false;
            unknown |= key.is_none();
            continue;
        }
        let key = key.expect("accepted keys are known");
        keys.push((key, ident));
        let checked = match key {
            Key::Namespace => namespace(cx, &value).map(|ns| seen.namespace = Some(ns)),
            Key::Verbs => list(cx, key, &value).map(|v| seen.verbs = Some(v)),
            Key::Groups => list(cx, key, &value).map(|v| seen.groups = Some(v)),
            Key::Resources => list(cx, key, &value).map(|v| seen.resources = Some(v)),
            Key::ResourceNames => list(cx, key, &value).map(|v| seen.resource_names = Some(v)),
            Key::Urls => list(cx, key, &value).map(|v| seen.urls = Some(v)),
        };
        ok &= checked.is_some();
    }
    // Shape checks look at which keys were written, even if their values had
    // errors, so that one build reports everything; after a misspelt key they
    // would only echo that mistake ("`resources` need `groups`").
    if !unknown {
        ok &= check_shape(cx, attr, &keys);
    }
    if !ok {
        return None;
    }
    Some(Rule {
        groups: seen.groups.unwrap_or_default(),
        resources: seen.resources.unwrap_or_default(),
        resource_names: seen.resource_names.unwrap_or_default(),
        verbs: seen.verbs.unwrap_or_default(),
        urls: seen.urls.unwrap_or_default(),
        namespace: seen.namespace,
    })
}

/// rkb-core's PolicyRule shape rules (the API server's), each error pointed at the key
/// it is about, so a bad rule fails at compile time rather than when the role is applied.
fn check_shape(cx: &mut Ctxt, attr: &Attribute, keys: &[(Key, Ident)]) -> bool {
    let get = |key: Key| keys.iter().find(|(k, _)| *k == key).map(|(_, i)| i);
    let shape = Shape {
        groups: get(Key::Groups).is_some(),
        resources: get(Key::Resources).is_some(),
        resource_names: get(Key::ResourceNames).is_some(),
        verbs: get(Key::Verbs).is_some(),
        urls: get(Key::Urls).is_some(),
        namespace: get(Key::Namespace).is_some(),
    };
    let errors = shape.errors();
    for error in &errors {
        let message = shape_message(*error);
        match error.field().and_then(get) {
            Some(ident) => cx.error_at(ident.span(), message),
            None => cx.error_spanned(attr, message),
        }
    }
    errors.is_empty()
}

fn shape_message(error: ShapeError) -> String {
    match error {
        ShapeError::NoVerbs => {
            "missing `verbs`: say what the reconciler may do, e.g. `verbs = [get, list, watch]`"
                .to_owned()
        }
        ShapeError::UrlsWith(key) => format!(
            "`{}` cannot be combined with `urls`: non-resource URLs belong to no \
             API resource; declare them in a separate #[rbac(urls = [...], verbs = [...])]",
            key_name(key)
        ),
        ShapeError::NamespacedUrls => "`namespace` cannot be combined with `urls`: non-resource \
             URLs are cluster-scoped and can only be granted by the ClusterRole"
            .to_owned(),
        ShapeError::ResourcesWithoutGroups => "`resources` need `groups`: add \
             `groups = [\"core\"]` for core resources such as pods, or the resource's API \
             group, e.g. `groups = [\"apps\"]` for deployments"
            .to_owned(),
        ShapeError::GroupsWithoutResources => "`groups` need `resources`: name the resources of \
             these groups that the reconciler uses, e.g. `resources = [\"deployments\"]`"
            .to_owned(),
        ShapeError::NamesWithoutResources => "`resource_names` need `groups` and `resources`: \
             say which kind of object the names refer to"
            .to_owned(),
        ShapeError::GrantsNothing => "the rule grants nothing: add `groups = [...], resources = \
             [...]` for API resources, or `urls = [...]` for non-resource URLs"
            .to_owned(),
    }
}

/// Checks a list-valued key and returns its values ("core" already mapped to "").
fn list(cx: &mut Ctxt, key: Key, value: &Value) -> Option<Vec<String>> {
    let name = key_name(key);
    let (bracket, items) = match value {
        Value::List { bracket, items } => (bracket, items),
        Value::Str(lit) => {
            cx.error_spanned(
                lit,
                format!(
                    "`{name}` takes a list: write `{name} = [{}]`",
                    lit.to_token_stream()
                ),
            );
            return None;
        }
        Value::Other(tokens) => {
            cx.error_spanned(
                tokens,
                format!("`{name}` takes a list, e.g. {}", example(key)),
            );
            return None;
        }
    };
    if items.is_empty() {
        cx.error_at(
            bracket.span.join(),
            format!(
                "`{name}` is empty; list at least one value, e.g. {}",
                example(key)
            ),
        );
        return None;
    }
    let mut values = Vec::new();
    let mut ok = true;
    for item in items {
        match check_item(key, item) {
            Ok(v) => values.push(v),
            Err(err) => {
                cx.push(err);
                ok = false;
            }
        }
    }
    ok.then_some(values)
}

fn check_item(key: Key, item: &Item) -> syn::Result<String> {
    let name = key_name(key);
    let (value, span) = match item {
        Item::Star(star) => return Err(wildcard(key, "*", star.span)),
        Item::Ident(ident) if key == Key::Verbs => (ident.unraw().to_string(), ident.span()),
        Item::Ident(ident) => {
            return Err(syn::Error::new(
                ident.span(),
                format!(
                    "`{name}` takes string literals: write `\"{}\"`",
                    ident.unraw()
                ),
            ));
        }
        Item::Str(lit) => (lit.value(), lit.span()),
        Item::Other(tt) => {
            return Err(syn::Error::new_spanned(
                tt,
                format!("expected a value in `{name}`, e.g. {}", example(key)),
            ));
        }
    };
    let err = |msg: String| Err(syn::Error::new(span, msg));
    match key {
        Key::Groups if value == "*" => Err(wildcard(key, &value, span)),
        Key::Groups if rbac::api_group(&value).is_empty() => Ok(String::new()),
        Key::Groups if !names::is_dns1123_subdomain(&value) => err(format!(
            "invalid API group `{value}`: groups are lowercase DNS names such as \"apps\" or \
             \"cache.example.com\"; use \"core\" for the core group"
        )),
        Key::Resources if value.contains('*') => Err(wildcard(key, &value, span)),
        Key::Resources if !rbac::is_resource(&value) => err(format!(
            "invalid resource `{value}`: resources are lowercase plural names as listed by \
             `kubectl api-resources`, optionally with a subresource, e.g. \"deployments\" or \
             \"deployments/status\""
        )),
        Key::Verbs if value == "*" => Err(wildcard(key, &value, span)),
        Key::Verbs => {
            // Any lowercase verb is valid (APIs check their own, e.g. `approve` on
            // `signers`), but one a slip away from a known verb is more likely a typo.
            let known = Verb::parse(&value).map(|verb| matches!(verb, Verb::Known(_)));
            match (known, suggest::closest(&value, KNOWN_VERBS)) {
                (Ok(true), _) => Ok(value),
                (_, Some(verb)) => err(format!("unknown verb `{value}`; did you mean `{verb}`?")),
                (Ok(false), None) => Ok(value),
                (Err(error), None) => err(error.to_string()),
            }
        }
        Key::Urls if !value.starts_with('/') => err(format!(
            "invalid non-resource URL `{value}`: it must be a path starting with `/`, e.g. \"/metrics\""
        )),
        Key::ResourceNames if value.is_empty() => err("a resource name cannot be empty".to_owned()),
        _ => Ok(value),
    }
}

fn wildcard(key: Key, value: &str, span: Span) -> syn::Error {
    let what = match key {
        Key::Groups => "every API group".to_owned(),
        Key::Resources if value == "*" => "every resource".to_owned(),
        Key::Resources => format!("every resource matching `{value}`"),
        _ => "every verb, including escalate and impersonate".to_owned(),
    };
    syn::Error::new(
        span,
        format!(
            "wildcard in `{}` would grant {what}; list exactly what the reconciler needs \
             (least privilege), e.g. {}",
            key_name(key),
            example(key)
        ),
    )
}

/// The key's example, as messages quote it.
fn example(key: Key) -> String {
    format!("`{}`", table::key(key).example)
}

fn namespace(cx: &mut Ctxt, value: &Value) -> Option<String> {
    let lit = match value {
        Value::Str(lit) => lit,
        Value::List { bracket, .. } => {
            cx.error_at(
                bracket.span.join(),
                "`namespace` takes one string, e.g. `namespace = \"system\"`; \
                 use one #[rbac(...)] per namespace",
            );
            return None;
        }
        Value::Other(tokens) => {
            cx.error_spanned(
                tokens,
                "`namespace` takes a string, e.g. `namespace = \"system\"`",
            );
            return None;
        }
    };
    let ns = lit.value();
    if names::is_dns1123_label(&ns) {
        Some(ns)
    } else {
        cx.error_spanned(
            lit,
            format!(
                "invalid namespace `{ns}`: it must be a DNS-1123 label (at most 63 lowercase \
                 letters, digits and '-', starting and ending with a letter or digit)"
            ),
        );
        None
    }
}
