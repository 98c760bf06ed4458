//! [`Ctxt`]: the errors of one attribute or item, gathered with their spans.

use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// Collects every error of one derive invocation, so a user sees all mistakes
/// in one compile instead of fixing them one build at a time.
#[derive(Debug, Default)]
pub struct Ctxt {
    errors: Option<syn::Error>,
}

impl Ctxt {
    pub fn push(&mut self, err: syn::Error) {
        match &mut self.errors {
            Some(errors) => errors.combine(err),
            None => self.errors = Some(err),
        }
    }

    pub fn error_at(&mut self, span: Span, msg: impl Display) {
        self.push(syn::Error::new(span, msg));
    }

    pub fn error_spanned(&mut self, tokens: impl ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(tokens, msg));
    }

    pub fn check(self) -> syn::Result<()> {
        self.errors.map_or(Ok(()), Err)
    }
}
