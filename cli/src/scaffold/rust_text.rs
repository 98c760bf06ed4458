//! Rust source read as text, rkb's one lexer: which bytes are code (not a comment, a
//! string or a char literal), identifiers and `::` paths over that, and the names a file's
//! `use` trees and items take. The marker editor (`scaffold::markers`), `rkb edit
//! --multigroup`'s path rewrite and the kind-name check all read Rust through it.

use std::collections::BTreeMap;

/// Whether `c` can be part of an identifier.
pub fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Where the lexer is: in code, a block comment (nested to a depth), a string, or a raw
/// string (with its number of `#`).
#[derive(Clone, Copy, PartialEq)]
enum State {
    Code,
    Block(u32),
    Str,
    Raw(usize),
}

/// For each byte of Rust source, whether it is code: not inside a comment, a string or a
/// char literal (the newline that ends a `//` comment counts as code). A lexer of just
/// what decides that: comments (nested), strings with escapes, raw strings, char literals.
pub fn code_mask(src: &str) -> Vec<bool> {
    let b = src.as_bytes();
    let mut code = vec![false; b.len()];
    let mut state = State::Code;
    let mut i = 0;
    while i < b.len() {
        (state, i) = match state {
            State::Code => code_step(b, i, &mut code),
            State::Block(depth) => block_step(b, i, depth),
            State::Str => match b[i] {
                b'\\' => (State::Str, i + 2),
                b'"' => (State::Code, i + 1),
                _ => (State::Str, i + 1),
            },
            State::Raw(hashes) => {
                let closes = b[i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&h| h == b'#')
                    .count();
                if b[i] == b'"' && closes == hashes {
                    (State::Code, i + 1 + hashes)
                } else {
                    (State::Raw(hashes), i + 1)
                }
            }
        };
    }
    code
}

/// One step in code from byte `i`, marking it in `code` when it is code: the state after
/// it and where the next step starts.
fn code_step(b: &[u8], i: usize, code: &mut [bool]) -> (State, usize) {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    match b[i] {
        b'/' if at(i + 1) == b'/' => {
            let end = i + b[i..].iter().take_while(|&&c| c != b'\n').count();
            (State::Code, end)
        }
        b'/' if at(i + 1) == b'*' => (State::Block(1), i + 2),
        b'"' => (State::Str, i + 1),
        b'r' if matches!(at(i + 1), b'"' | b'#') => {
            let before = if at(i.wrapping_sub(1)) == b'b' {
                i.wrapping_sub(2)
            } else {
                i.wrapping_sub(1)
            };
            let hashes = b[i + 1..].iter().take_while(|&&h| h == b'#').count();
            if (i == 0 || !is_ident_byte(at(before))) && at(i + 1 + hashes) == b'"' {
                (State::Raw(hashes), i + 2 + hashes)
            } else {
                (State::Code, i + 1)
            }
        }
        b'\'' => {
            // A char literal ('x', '\n', '"'), or a lifetime, which has no closing quote.
            let end = if at(i + 1) == b'\\' {
                i + 2
                    + b[i + 2..]
                        .iter()
                        .take_while(|&&c| c != b'\'' && c != b'\n')
                        .count()
            } else if at(i + 2) == b'\'' {
                i + 2
            } else {
                i
            };
            (State::Code, end + 1)
        }
        _ => {
            code[i] = true;
            (State::Code, i + 1)
        }
    }
}

/// One step inside a block comment `depth` deep.
fn block_step(b: &[u8], i: usize, depth: u32) -> (State, usize) {
    match (b[i], b.get(i + 1)) {
        (b'/', Some(b'*')) => (State::Block(depth + 1), i + 2),
        (b'*', Some(b'/')) if depth == 1 => (State::Code, i + 2),
        (b'*', Some(b'/')) => (State::Block(depth - 1), i + 2),
        _ => (State::Block(depth), i + 1),
    }
}

/// For each line of Rust source, whether it begins inside a block comment or a string
/// literal, where a `// +rkb:scaffold:` line is text rather than a marker.
pub fn lines_in_literals(src: &str) -> Vec<bool> {
    let code = code_mask(src);
    let mut hidden = vec![false];
    hidden.extend(
        src.bytes()
            .zip(&code)
            .filter(|(b, _)| *b == b'\n')
            .map(|(_, code)| !code),
    );
    hidden
}

/// `src` with every byte that is not code (see [`code_mask`]) a space, line breaks kept.
pub fn code_only(src: &str) -> String {
    src.bytes()
        .zip(code_mask(src))
        .map(|(c, code)| if code || c == b'\n' { c as char } else { ' ' })
        .collect::<String>()
}

/// Rust source with [`code_mask`]'s answer for each byte, read as identifiers and `::`
/// paths: what a rewrite of paths needs.
#[derive(Debug)]
pub struct Source<'a> {
    pub text: &'a str,
    bytes: &'a [u8],
    code: Vec<bool>,
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Self {
        Source {
            text,
            bytes: text.as_bytes(),
            code: code_mask(text),
        }
    }

    /// The byte at `i`, if it is code.
    pub fn code_at(&self, i: usize) -> Option<u8> {
        self.code
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| self.bytes[i])
    }

    /// Whether an identifier starts at `i` (and not inside one).
    pub fn starts_ident(&self, i: usize) -> bool {
        let c = self.bytes[i];
        (c.is_ascii_alphabetic() || c == b'_') && !(i > 0 && is_ident_byte(self.bytes[i - 1]))
    }

    /// The identifier from `i` (at most the length) on, empty when none starts there.
    pub fn ident_at(&self, i: usize) -> &'a str {
        let end = i + self.bytes[i..]
            .iter()
            .take_while(|&&c| is_ident_byte(c))
            .count();
        &self.text[i..end]
    }

    /// Whether the identifier `word` at `at` ends there (is not the head of a longer one).
    pub fn whole_word(&self, word: &str, at: usize) -> bool {
        !word.is_empty()
            && !self
                .bytes
                .get(at + word.len())
                .is_some_and(|&c| is_ident_byte(c))
    }

    fn skip_space(&self, mut i: usize) -> usize {
        while i < self.bytes.len() && (self.bytes[i] as char).is_whitespace() {
            i += 1;
        }
        i
    }

    /// The position after the `::` that follows position `i` (spaces allowed), if any.
    pub fn after_sep(&self, i: usize) -> Option<usize> {
        let i = self.skip_space(i);
        (self.bytes.get(i..i + 2) == Some(b"::")).then(|| self.skip_space(i + 2))
    }

    /// The identifier before the `::` that ends right before position `i`, if any.
    pub fn before_sep(&self, i: usize) -> Option<&'a str> {
        let head = self.text[..i].trim_end().strip_suffix("::")?.trim_end();
        let start = head.len() - head.bytes().rev().take_while(|&c| is_ident_byte(c)).count();
        Some(&head[start..])
    }
}

/// The type names generated Rust next to a kind already takes, with why: every name the
/// `sources` (template name, text) import or define in code. A kind of such a name would
/// be imported twice (E0252) or clash with an item (E0255). Tera tags that choose between
/// names (`{% if %}NamespacedApi{% else %}ClusterApi{% endif %}`) take both.
pub fn names_taken_by<'a>(
    sources: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<String, String> {
    let mut taken = BTreeMap::new();
    for (template, source) in sources {
        let code = code_only(&without_tera_tags(source));
        let mut take = |name: &str, why: &str| {
            if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                taken
                    .entry(name.to_owned())
                    .or_insert_with(|| format!("{template} {why}"));
            }
        };
        for name in imported_names(&code) {
            take(
                &name,
                "imports it, so a kind of that name would be imported twice (error E0252)",
            );
        }
        for name in defined_names(&code) {
            take(
                &name,
                "defines it, so a kind of that name would be defined twice (error E0255)",
            );
        }
    }
    taken
}

/// The names the `use` statements of `code` (comments and literals blanked) bring into
/// scope.
fn imported_names(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let line = line.trim_start();
        let Some(tree) = line.strip_prefix("use ").or(line.strip_prefix("pub use ")) else {
            continue;
        };
        // A statement may span lines: `use a::{\n    B,\n};`.
        let mut statement = tree.to_owned();
        while !statement.contains(';') {
            let Some(next) = lines.next() else { break };
            statement.push_str(next);
        }
        use_tree_names(statement.split(';').next().unwrap_or_default(), &mut names);
    }
    names
}

/// The names the `struct`, `enum`, `type` and `trait` items of `code` define.
fn defined_names(code: &str) -> Vec<String> {
    let words: Vec<&str> = code.split_whitespace().collect();
    words
        .windows(2)
        .filter(|pair| ["struct", "enum", "type", "trait"].contains(&pair[0]))
        .map(|pair| {
            pair[1]
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect()
        })
        .collect()
}

/// `source` with tera's `{% %}` and `{# #}` tags as spaces, and each `{{ }}` as `#`, which
/// no name holds: an import of the kind itself names no other type.
fn without_tera_tags(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tag = &rest[at..];
        let close = match tag.get(..2) {
            Some("{%") => Some(("%}", " ")),
            Some("{#") => Some(("#}", " ")),
            Some("{{") => Some(("}}", "#")),
            _ => None,
        };
        match close.and_then(|(end, with)| Some((tag.find(end)? + 2, with))) {
            Some((len, with)) => {
                out.push_str(with);
                rest = &tag[len..];
            }
            None => {
                out.push('{');
                rest = &tag[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The names a `use` tree brings into scope: `a::{b::C, D as E, self}` gives `C`, `E`, `a`.
fn use_tree_names(tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) {
        let prefix = tree[..open].trim_end_matches("::");
        let mut depth = 0;
        let mut start = open + 1;
        for (i, c) in tree.char_indices().take(close).skip(open + 1) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_tree_item(prefix, &tree[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_tree_item(prefix, &tree[start..close], out);
        return;
    }
    let name = match tree.split_once(" as ") {
        Some((_, alias)) => alias,
        None => tree.rsplit("::").next().unwrap_or(tree),
    };
    out.extend(
        name.split_whitespace()
            .filter(|n| *n != "_" && n.chars().all(is_ident_char))
            .map(str::to_owned),
    );
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn use_tree_item(prefix: &str, item: &str, out: &mut Vec<String>) {
    match item.trim() {
        "" => {}
        "self" => use_tree_names(prefix, out),
        item => use_tree_names(item, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_strings_and_chars_are_not_code() {
        let blank = |n: usize| " ".repeat(n);
        assert_eq!(
            code_only("a /* b */ c // d\n\"e\\\"\" 'f' '\\n' x"),
            format!(
                "a {} c {}\n{} {} {} x",
                blank(7),
                blank(4),
                blank(5),
                blank(3),
                blank(4)
            )
        );
        // Raw strings, nested comments; a lifetime is code but for its quote.
        assert_eq!(
            code_only("r#\"a\"b\"# /* /* */ */ &'a x"),
            format!("{} {} & a x", blank(8), blank(11))
        );
    }

    #[test]
    fn use_trees_and_items_take_their_names() {
        let source = "use a::{b::C, D as E, self};\n// use x::Commented;\n\
                      pub use f::{\n    G,\n};\nstruct H<T>;\nlet s = \"struct Quoted\";\n\
                      {% if x %}use i::J;{% endif %}";
        let taken = names_taken_by([("t.rs.tera", source)]);
        let names: Vec<&str> = taken.keys().map(String::as_str).collect();
        assert_eq!(names, ["C", "E", "G", "H", "J"]);
        assert!(taken["H"].starts_with("t.rs.tera defines it"));
        assert!(taken["C"].starts_with("t.rs.tera imports it"));
    }
}
