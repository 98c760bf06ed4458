//! The keys of one attribute as they are written: each must be known and, unless it is
//! repeatable, written once. Every attribute (`#[rbac]`, `#[rkb]` and its nested
//! `printcolumn(...)`, `scale(...)`, `validation(...)`, `#[rkb_runtime::webhook]`) checks
//! its keys here, so unknown and repeated keys are reported alike, at the key.

use proc_macro2::Span;

use super::ctxt::Ctxt;
use super::suggest;

#[derive(Debug)]
pub struct Keys<'a> {
    /// Where the keys are written, for messages: `#[rbac(...)]`, `` `scale(...)` ``.
    place: String,
    known: &'a [&'static str],
    /// Other tools' spellings (controller-gen's), tried before the closest key as the
    /// suggestion for an unknown key.
    aliases: &'a [(&'static str, &'static str)],
    repeatable: &'a [&'static str],
    /// What to do about a repeated key.
    advice: fn(&str) -> String,
    /// The keys given, with the span of their first use.
    given: Vec<(&'static str, Span)>,
    /// The keys given and those a misspelt key was taken for, so that a required key is
    /// not reported missing as well as misspelt.
    named: Vec<&'static str>,
    /// False after any unknown or repeated key.
    pub ok: bool,
}

impl<'a> Keys<'a> {
    pub fn new(
        place: impl Into<String>,
        known: &'a [&'static str],
        aliases: &'a [(&'static str, &'static str)],
    ) -> Self {
        Keys {
            place: place.into(),
            known,
            aliases,
            repeatable: &[],
            advice: |_| "write it once".to_owned(),
            given: Vec::new(),
            named: Vec::new(),
            ok: true,
        }
    }

    /// Keys that may be written more than once (one entry per CEL rule, per column).
    pub fn repeatable(mut self, keys: &'a [&'static str]) -> Self {
        self.repeatable = keys;
        self
    }

    /// What the message for a repeated key advises, instead of "write it once".
    pub fn advice(mut self, advice: fn(&str) -> String) -> Self {
        self.advice = advice;
        self
    }

    /// The key `name` as known, or `None` after reporting it unknown or repeated.
    pub fn accept(&mut self, cx: &mut Ctxt, name: &str, span: Span) -> Option<&'static str> {
        let (place, known) = (self.place.clone(), self.known);
        self.accept_or(cx, name, span, |hint| {
            suggest::unknown_key(name, &place, hint, known)
        })
    }

    /// [`Keys::accept`] with the attribute's own message for an unknown key, given the
    /// key it was most likely meant to be.
    pub fn accept_or(
        &mut self,
        cx: &mut Ctxt,
        name: &str,
        span: Span,
        unknown: impl FnOnce(Option<&'static str>) -> String,
    ) -> Option<&'static str> {
        let Some(key) = self.known.iter().copied().find(|k| *k == name) else {
            let hint = suggest::intended_key(name, self.aliases, self.known);
            self.named.extend(hint);
            let message = unknown(hint);
            cx.error_at(span, message);
            self.ok = false;
            return None;
        };
        if !self.repeatable.contains(&key) && self.given.iter().any(|(k, _)| *k == key) {
            cx.error_at(
                span,
                format!(
                    "duplicate key `{name}` in {}: {}",
                    self.place,
                    (self.advice)(key)
                ),
            );
            self.ok = false;
            return None;
        }
        self.given.push((key, span));
        self.named.push(key);
        Some(key)
    }

    /// Whether `key` was given (or meant by a misspelling).
    pub fn named(&self, key: &str) -> bool {
        self.named.contains(&key)
    }

    /// The keys given, each with the span where it was written.
    pub fn given(&self) -> &[(&'static str, Span)] {
        &self.given
    }
}
