//! A lenient parser for `#[rkb(...)]` attribute contents.
//!
//! The grammar accepts every value shape (`key`, `key = <tokens>`,
//! `key(<entries>)`) so that checking in `schema_attr` can report each
//! mistake with its own span and a suggestion, instead of syn stopping at the
//! first unexpected token with "expected `,`".

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, LitStr, Token, UnOp, parenthesized, token};

#[derive(Debug)]
pub struct Entry {
    pub key: Ident,
    pub value: Value,
}

#[derive(Debug)]
pub enum Value {
    /// `key`
    Flag,
    /// `key = <tokens up to the next comma>`
    Assign(TokenStream),
    /// `key(<entries>)`
    Nested(token::Paren, Punctuated<Entry, Token![,]>),
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `parse_any` so that keywords such as `type` reach the key checks.
        let key = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            let mut tokens = TokenStream::new();
            while !input.is_empty() && !input.peek(Token![,]) {
                tokens.extend([input.parse::<TokenTree>()?]);
            }
            if tokens.is_empty() {
                return Err(input.error(format!("expected a value after `{key} =`")));
            }
            Value::Assign(tokens)
        } else if input.peek(token::Paren) {
            let content;
            let paren = parenthesized!(content in input);
            Value::Nested(paren, content.parse_terminated(Entry::parse, Token![,])?)
        } else {
            Value::Flag
        };
        Ok(Entry { key, value })
    }
}

pub fn parse_entries(tokens: TokenStream) -> syn::Result<Punctuated<Entry, Token![,]>> {
    syn::parse::Parser::parse2(Punctuated::<Entry, Token![,]>::parse_terminated, tokens)
}

impl Entry {
    pub fn name(&self) -> String {
        self.key.unraw().to_string()
    }

    /// The span of the whole entry, for errors about its value.
    pub fn span(&self) -> Span {
        match &self.value {
            Value::Flag => self.key.span(),
            Value::Assign(tokens) => join(self.key.span(), tokens),
            Value::Nested(paren, _) => self
                .key
                .span()
                .join(paren.span.close())
                .unwrap_or(self.key.span()),
        }
    }

    /// The value's span, or the key's for flags.
    pub fn value_span(&self) -> Span {
        match &self.value {
            Value::Flag => self.key.span(),
            Value::Assign(tokens) => tokens_span(tokens),
            Value::Nested(paren, _) => paren.span.join(),
        }
    }
}

fn tokens_span(tokens: &TokenStream) -> Span {
    let mut iter = tokens.clone().into_iter();
    let first = iter.next().map_or_else(Span::call_site, |t| t.span());
    let last = iter.last().map_or(first, |t| t.span());
    first.join(last).unwrap_or(first)
}

fn join(start: Span, tokens: &TokenStream) -> Span {
    start.join(tokens_span(tokens)).unwrap_or(start)
}

/// A number written in an attribute, e.g. `0`, `-1`, `2.5`, `1e3`.
#[derive(Clone, Debug)]
pub struct Number {
    pub value: f64,
    pub is_integer: bool,
    pub tokens: TokenStream,
}

pub fn as_number(tokens: &TokenStream) -> Option<Number> {
    let expr: Expr = syn::parse2(tokens.clone()).ok()?;
    let (negative, lit) = match &expr {
        Expr::Lit(ExprLit { lit, .. }) => (false, lit),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match expr.as_ref() {
            Expr::Lit(ExprLit { lit, .. }) => (true, lit),
            _ => return None,
        },
        _ => return None,
    };
    let (value, is_integer) = match lit {
        Lit::Int(int) => (int.base10_parse::<f64>().ok()?, true),
        Lit::Float(float) => (float.base10_parse::<f64>().ok()?, false),
        _ => return None,
    };
    Some(Number {
        value: if negative { -value } else { value },
        is_integer,
        tokens: tokens.clone(),
    })
}

pub fn as_str(tokens: &TokenStream) -> Option<LitStr> {
    match syn::parse2::<Expr>(tokens.clone()).ok()? {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        _ => None,
    }
}

pub fn as_bool(tokens: &TokenStream) -> Option<bool> {
    match syn::parse2::<Expr>(tokens.clone()).ok()? {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Some(b.value),
        _ => None,
    }
}

pub fn as_ident(tokens: &TokenStream) -> Option<Ident> {
    let mut iter = tokens.clone().into_iter();
    match (iter.next(), iter.next()) {
        (Some(TokenTree::Ident(ident)), None) => Some(ident),
        _ => None,
    }
}

/// The items of `[a, b, c]`, each as its own tokens.
pub fn as_list(tokens: &TokenStream) -> Option<Vec<TokenStream>> {
    let mut iter = tokens.clone().into_iter();
    let group = match (iter.next(), iter.next()) {
        (Some(TokenTree::Group(g)), None) if g.delimiter() == proc_macro2::Delimiter::Bracket => g,
        _ => return None,
    };
    let mut items = Vec::new();
    let mut current = TokenStream::new();
    for tt in group.stream() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                items.push(std::mem::take(&mut current));
            }
            _ => current.extend([tt]),
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    Some(items)
}

/// A span covering `tokens`, for errors.
pub fn span_of(tokens: &TokenStream) -> Span {
    tokens_span(tokens)
}

/// Source text of `tokens`, for messages.
pub fn text(tokens: &impl ToTokens) -> String {
    tokens.to_token_stream().to_string()
}
