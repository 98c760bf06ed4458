//! The marker edits of a change set: code inserted right above a `+rkb:scaffold:<marker>`
//! line (once, sorted, or replacing what an earlier run inserted under the same first
//! line), and taken out again by `rkb delete`. The edits are text functions over a file's
//! lines; in Rust sources a marker inside a block comment or a string literal is text, as
//! [`rust_text`](super::rust_text) reads it.

use anyhow::{Context as _, bail};

use super::changes::Changes;
use super::plan::{Edit, Marker};
use super::rust_text::lines_in_literals;

impl Changes {
    /// Plans the `edit` of `text` at the `+rkb:scaffold:<marker>` line of `rel`.
    pub fn edit_at_marker(
        &mut self,
        rel: &str,
        marker: Marker,
        edit: Edit,
        text: &str,
    ) -> anyhow::Result<()> {
        if edit == Edit::Withdraw && !self.exists(rel)? {
            return Ok(());
        }
        let name = marker.name();
        let rust = rel.ends_with(".rs");
        self.edit_marked_file(rel, marker, |content, hidden| match edit {
            // Already there (a re-run, or `--force`), even as rustfmt wrapped it: unchanged.
            Edit::Insert if rust && remove_snippet(content, name, text, hidden, true).is_some() => {
                Ok(content.to_owned())
            }
            Edit::Insert => insert_at_marker(content, name, text, hidden),
            Edit::Sorted => insert_sorted(content, name, text.trim(), hidden),
            Edit::Upsert => upsert(content, name, text, hidden),
            Edit::Withdraw => withdraw(content, name, text.trim(), hidden),
        })
    }

    /// Removes the lines an insertion of `snippet` at `marker` left in `rel`, the inverse of
    /// [`Self::edit_at_marker`]'s insertions. The lines are matched ignoring whitespace (and, in Rust, the trailing commas rustfmt adds when it wraps a
    /// line), nearest above the marker. Returns whether they were found; a missing file has
    /// nothing to remove.
    pub fn remove_inserted(
        &mut self,
        rel: &str,
        marker: Marker,
        snippet: &str,
    ) -> anyhow::Result<bool> {
        if !self.exists(rel)? {
            return Ok(true);
        }
        let mut found = false;
        self.edit_lf(rel, |content, hidden| {
            let rust = rel.ends_with(".rs");
            Ok(
                match remove_snippet(content, marker.name(), snippet, hidden, rust) {
                    Some(removed) => {
                        found = true;
                        removed
                    }
                    None => content.to_owned(),
                },
            )
        })?;
        Ok(found)
    }

    /// Plans `edit` of the file that holds `marker`, if it changes anything. The file keeps
    /// its line endings (the edit sees LF), and in Rust sources a marker inside a block
    /// comment or a string literal is text, not a marker (`edit` gets those lines).
    fn edit_marked_file(
        &mut self,
        rel: &str,
        marker: Marker,
        edit: impl FnOnce(&str, &[bool]) -> anyhow::Result<String>,
    ) -> anyhow::Result<()> {
        let marker = marker.name();
        if !self.exists(rel)? {
            bail!(
                "{rel} is missing; rkb inserts code there at the `+rkb:scaffold:{marker}` marker. \
                 Restore the file from a fresh `rkb init` or add the code by hand"
            );
        }
        self.edit_lf(rel, edit)
    }

    /// Plans `edit` of the existing file `rel`, if it changes anything. The edit sees LF
    /// line endings and which lines of Rust lie in a comment or literal.
    fn edit_lf(
        &mut self,
        rel: &str,
        edit: impl FnOnce(&str, &[bool]) -> anyhow::Result<String>,
    ) -> anyhow::Result<()> {
        let content = self.read(rel)?.context("a file checked above")?;
        let crlf = content.contains("\r\n");
        if crlf && content.replace("\r\n", "").contains('\n') {
            bail!(
                "cannot update {rel}: it mixes Windows (CRLF) and Unix (LF) line endings, so rkb \
                 cannot tell which to write. Convert it to one of them (e.g. `dos2unix {rel}` or \
                 your editor's line-ending setting) and run the command again"
            );
        }
        let lf = if crlf {
            content.replace("\r\n", "\n")
        } else {
            content.clone()
        };
        let hidden = if rel.ends_with(".rs") {
            lines_in_literals(&lf)
        } else {
            Vec::new()
        };
        let updated = edit(&lf, &hidden).with_context(|| format!("cannot update {rel}"))?;
        let updated = if crlf {
            updated.replace('\n', "\r\n")
        } else {
            updated
        };
        if updated != content {
            self.set(rel, Some(updated))?;
        }
        Ok(())
    }
}

/// Index of the marker line, or an error telling how to restore it. A marker is a line
/// that is only a `//` or `#` comment `+rkb:scaffold:<marker>`, outside the lines `hidden`
/// marks (inside a Rust block comment or string literal).
fn marker_line(lines: &[&str], marker: &str, hidden: &[bool]) -> anyhow::Result<usize> {
    let tag = format!("+rkb:scaffold:{marker}");
    let is_marker = |line: &str| {
        let text = line.trim();
        let comment = text
            .strip_prefix("//")
            .or_else(|| text.strip_prefix('#'))
            .map(str::trim);
        comment == Some(tag.as_str())
    };
    lines
        .iter()
        .enumerate()
        .position(|(i, line)| !hidden.get(i).copied().unwrap_or(false) && is_marker(line))
        .with_context(|| {
            format!(
                "its `{tag}` marker line is gone; rkb inserts generated code right above it. \
                 Put the marker back (see a freshly generated project) and run the command again"
            )
        })
}

/// `content` with `line` added to the contiguous block above the marker, in version-sort order.
fn insert_sorted(
    content: &str,
    marker: &str,
    line: &str,
    hidden: &[bool],
) -> anyhow::Result<String> {
    let lines: Vec<&str> = content.lines().collect();
    let at = marker_line(&lines, marker, hidden)?;
    let mut start = at;
    while start > 0
        && !lines[start - 1].trim().is_empty()
        && !lines[start - 1].trim_start().starts_with("//")
    {
        start -= 1;
    }
    // Already there, in this block or elsewhere in code (a comment between the block and
    // the marker starts a new block): a second `pub mod x;` would not compile.
    let present =
        |(i, l): (usize, &&str)| l.trim() == line && !hidden.get(i).copied().unwrap_or(false);
    if lines.iter().enumerate().any(present) {
        return Ok(content.to_owned());
    }
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    let position = start
        + lines[start..at]
            .iter()
            .take_while(|l| version_cmp(l.trim(), line).is_lt())
            .count();
    let new_line = format!("{indent}{line}");
    let mut out: Vec<&str> = lines[..position].to_vec();
    out.push(&new_line);
    out.extend_from_slice(&lines[position..]);
    let mut text = out.join("\n");
    if content.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// rustfmt's "version sort" (style edition 2024): digit runs compare as numbers,
/// so `v2` sorts before `v10` and `v1` before `v1alpha1`.
fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut rest = s;
        while let Some(first) = rest.chars().next() {
            let digit = first.is_ascii_digit();
            let len = rest
                .find(|c: char| c.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            out.push((digit, &rest[..len]));
            rest = &rest[len..];
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, xa), (db, xb)) in ca.iter().zip(&cb) {
        let ord = if *da && *db {
            let (na, nb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            na.len().cmp(&nb.len()).then(na.cmp(nb))
        } else {
            xa.cmp(xb)
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len())
}

/// `content` with the lines under `snippet`'s first line replaced by the snippet's, each
/// keeping its indent; or, without that line, with `snippet` inserted at the marker.
fn upsert(content: &str, marker: &str, snippet: &str, hidden: &[bool]) -> anyhow::Result<String> {
    let mut wanted = snippet.lines();
    let key = wanted.next().unwrap_or_default().trim();
    let mut lines: Vec<String> = content.lines().map(str::to_owned).collect();
    let Some(at) = lines.iter().position(|l| l.trim() == key) else {
        return insert_at_marker(content, marker, snippet, hidden);
    };
    // A line is replaced by one of the same field (`value:` by `value:`), never another.
    let field = |line: &str| line.trim().split(':').next().unwrap_or_default().to_owned();
    for (offset, new) in wanted.enumerate() {
        let Some(old) = lines
            .get_mut(at + 1 + offset)
            .filter(|old| field(old) == field(new))
        else {
            bail!(
                "`{key}` is not followed by `{}` as rkb writes it; set it to `{}` by hand, or remove \
                 the entry and run rkb again",
                field(new),
                new.trim()
            );
        };
        let indent = old.len() - old.trim_start().len();
        *old = format!("{}{}", &old[..indent], new.trim_start());
    }
    let mut text = lines.join("\n");
    if content.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// `text` without whitespace and, in Rust, without the commas before a closing bracket:
/// what survives rustfmt's rewrapping of an inserted snippet.
pub(crate) fn normalized(text: &str, rust: bool) -> String {
    let mut out: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if rust {
        for closer in [")", "]", ">", "}"] {
            out = out.replace(&format!(",{closer}"), closer);
        }
    }
    out
}

/// `content` without the whole lines that hold `snippet` (compared [`normalized`]): the
/// match nearest above the marker, else the first. `None` when no lines match.
fn remove_snippet(
    content: &str,
    marker: &str,
    snippet: &str,
    hidden: &[bool],
    rust: bool,
) -> Option<String> {
    let wanted = normalized(snippet, rust);
    if wanted.is_empty() {
        return Some(content.to_owned());
    }
    let lines: Vec<&str> = content.lines().collect();
    let mut matches = Vec::new();
    for start in 0..lines.len() {
        if lines[start].trim().is_empty() {
            continue;
        }
        let mut stripped = String::new();
        for (end, line) in lines.iter().enumerate().skip(start) {
            stripped.extend(line.chars().filter(|c| !c.is_whitespace()));
            let seen = normalized(&stripped, rust);
            if seen == wanted {
                matches.push(start..end + 1);
                break;
            }
            // A trailing comma may yet precede a closing bracket on the next line.
            if !wanted.starts_with(seen.strip_suffix(',').unwrap_or(&seen)) {
                break;
            }
        }
    }
    let marker_at = marker_line(&lines, marker, hidden).ok();
    let mut chosen = marker_at
        .and_then(|at| matches.iter().rev().find(|m| m.end <= at))
        .or(matches.first())?
        .clone();
    // Blank lines the snippet starts or ends with were inserted with it.
    let blank = |l: &str| l.trim().is_empty();
    let snippet_lines: Vec<&str> = snippet.lines().collect();
    let leading = snippet_lines.iter().take_while(|l| blank(l)).count();
    let trailing = snippet_lines.iter().rev().take_while(|l| blank(l)).count();
    for _ in 0..leading {
        if chosen.start > 0 && blank(lines[chosen.start - 1]) {
            chosen.start -= 1;
        }
    }
    for _ in 0..trailing {
        if chosen.end < lines.len() && blank(lines[chosen.end]) {
            chosen.end += 1;
        }
    }
    let mut out: Vec<&str> = lines[..chosen.start].to_vec();
    out.extend_from_slice(&lines[chosen.end..]);
    let mut text = out.join("\n");
    if content.ends_with('\n') && !text.is_empty() {
        text.push('\n');
    }
    Some(text)
}

/// `content` without the list item keyed `key` (see [`Edit::Withdraw`]).
fn withdraw(content: &str, marker: &str, key: &str, hidden: &[bool]) -> anyhow::Result<String> {
    let mut lines: Vec<&str> = content.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start().len();
    let Some(at) = lines.iter().position(|l| l.trim() == key) else {
        return Ok(content.to_owned());
    };
    // The item's body is indented under its `- ` line.
    let end = at
        + 1
        + lines[at + 1..]
            .iter()
            .take_while(|l| !l.trim().is_empty() && indent(l) > indent(lines[at]))
            .count();
    // A list key the first insertion opened (`env:`) goes with its last item, so the file
    // is again what it was before any: a key without items would be `env: null`.
    let opener = lines[..at].last().map(|l| l.trim()).unwrap_or_default();
    let last_item = marker_line(&lines, marker, hidden).is_ok_and(|m| m == end)
        && opener.ends_with(':')
        && !opener.starts_with(['-', '#']);
    lines.drain(at..end);
    if last_item {
        lines.remove(at - 1);
    }
    let mut text = lines.join("\n");
    if content.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// The text of `content` with `snippet` inserted before its marker line.
fn insert_at_marker(
    content: &str,
    marker: &str,
    snippet: &str,
    hidden: &[bool],
) -> anyhow::Result<String> {
    let lines: Vec<&str> = content.lines().collect();
    let at = marker_line(&lines, marker, hidden)?;
    let start: usize = lines[..at].iter().map(|l| l.len() + 1).sum();
    let marker_line = content[start..].lines().next().unwrap_or_default();
    let indent = &marker_line[..marker_line.len() - marker_line.trim_start().len()];
    let snippet_lines: Vec<&str> = snippet.lines().collect();
    // Already there (a re-run, or `--force`): leave the file alone.
    let existing: Vec<&str> = content.lines().map(str::trim).collect();
    let wanted: Vec<&str> = snippet_lines.iter().map(|l| l.trim()).collect();
    if !wanted.is_empty()
        && existing
            .windows(wanted.len())
            .any(|w| w == wanted.as_slice())
    {
        return Ok(content.to_owned());
    }
    // Multi-line snippets (YAML blocks, Rust items) keep their own nesting under the marker.
    let common_indent = snippet_lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut inserted = String::new();
    for line in snippet_lines {
        if line.trim().is_empty() {
            inserted.push('\n');
        } else {
            inserted.push_str(indent);
            inserted.push_str(&line[common_indent..]);
            inserted.push('\n');
        }
    }
    Ok(format!(
        "{}{inserted}{}",
        &content[..start],
        &content[start..]
    ))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn inserts_above_marker_with_its_indent_once() {
        let text = "fn f() {\n    let v = vec![\n        // +rkb:scaffold:items\n    ];\n}\n";
        let once = insert_at_marker(text, "items", "a(),", &[]).unwrap();
        assert_eq!(
            once,
            "fn f() {\n    let v = vec![\n        a(),\n        // +rkb:scaffold:items\n    ];\n}\n"
        );
        assert_eq!(insert_at_marker(&once, "items", "a(),", &[]).unwrap(), once);
        let twice = insert_at_marker(&once, "items", "b(),", &[]).unwrap();
        assert!(twice.contains("        a(),\n        b(),\n        // +rkb"));
    }

    #[test]
    fn nested_snippets_keep_their_relative_indent() {
        let text = "spec:\n  # +rkb:scaffold:env\n";
        let snippet = "env:\n- name: A\n  value: b\n";
        assert_eq!(
            insert_at_marker(text, "env", snippet, &[]).unwrap(),
            "spec:\n  env:\n  - name: A\n    value: b\n  # +rkb:scaffold:env\n"
        );
    }

    #[test]
    fn upserts_replace_the_lines_under_their_key() {
        let text = "spec:\n  # +rkb:scaffold:env\n";
        let first = upsert(text, "env", "env:\n- name: A\n  value: b\n", &[]).unwrap();
        assert_eq!(
            first,
            "spec:\n  env:\n  - name: A\n    value: b\n  # +rkb:scaffold:env\n"
        );
        assert_eq!(
            upsert(&first, "env", "- name: A\n  value: c\n", &[]).unwrap(),
            "spec:\n  env:\n  - name: A\n    value: c\n  # +rkb:scaffold:env\n"
        );
        let edited = first.replace("value: b", "valueFrom: {}");
        let error = upsert(&edited, "env", "- name: A\n  value: c\n", &[]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`- name: A` is not followed by `value`"),
            "{error}"
        );
    }

    #[test]
    fn sorted_insertion_follows_rustfmt_order() {
        let mut text = String::from("//! docs\n\n// +rkb:scaffold:versions\n");
        for version in ["v2", "v1alpha1", "v10", "v1", "v1beta1", "v1"] {
            text = insert_sorted(&text, "versions", &format!("pub mod {version};"), &[]).unwrap();
        }
        assert_eq!(
            text,
            "//! docs\n\npub mod v1;\npub mod v1alpha1;\npub mod v1beta1;\npub mod v2;\npub mod v10;\n// +rkb:scaffold:versions\n"
        );
    }

    #[test]
    fn removal_undoes_an_insertion_even_after_rustfmt_rewrapped_it() {
        let before = "let v = vec![\n    a(),\n    // +rkb:scaffold:items\n];\n";
        let snippet = "webhook::<api::v1::Memcached, webhook::v1::memcached::MemcachedWebhook>(),";
        let inserted = insert_at_marker(before, "items", snippet, &[]).unwrap();
        assert_eq!(
            remove_snippet(&inserted, "items", snippet, &[], true).as_deref(),
            Some(before)
        );
        // As rustfmt wraps it: one argument a line, with a trailing comma.
        let wrapped = "let v = vec![\n    a(),\n    webhook::<\n        api::v1::Memcached,\n        \
                       webhook::v1::memcached::MemcachedWebhook,\n    >(),\n    // +rkb:scaffold:items\n];\n";
        assert_eq!(
            remove_snippet(wrapped, "items", snippet, &[], true).as_deref(),
            Some(before)
        );
        // Only whole lines go, and a changed line is not the snippet.
        assert_eq!(remove_snippet(before, "items", "a", &[], true), None);
        let changed = wrapped.replace("Memcached,", "Memcached, Extra,");
        assert_eq!(remove_snippet(&changed, "items", snippet, &[], true), None);
        // YAML keeps its commas; of two copies, the one above the marker goes.
        let yaml = "- a.yaml\n# +rkb:scaffold:samples\n- a.yaml\n";
        assert_eq!(
            remove_snippet(yaml, "samples", "- a.yaml", &[], false).as_deref(),
            Some("# +rkb:scaffold:samples\n- a.yaml\n")
        );
    }

    #[test]
    fn missing_marker_is_an_actionable_error() {
        let err = insert_at_marker("nothing here\n", "items", "x", &[]).unwrap_err();
        assert!(
            err.to_string()
                .contains("`+rkb:scaffold:items` marker line is gone")
        );
    }

    #[test]
    fn crlf_files_keep_their_line_endings_and_mixed_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let crlf = "mod a;\r\n// +rkb:scaffold:modules\r\n\r\nfn main() {}\r\n";
        fs::write(dir.path().join("lib.rs"), crlf).unwrap();
        fs::write(
            dir.path().join("mixed.yaml"),
            "a: 1\r\nb: 2\n# +rkb:scaffold:crds\n",
        )
        .unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .edit_at_marker("lib.rs", Marker::Modules, Edit::Sorted, "mod b;")
            .unwrap();
        assert_eq!(
            changes.read("lib.rs").unwrap().unwrap(),
            "mod a;\r\nmod b;\r\n// +rkb:scaffold:modules\r\n\r\nfn main() {}\r\n"
        );
        let err = changes
            .edit_at_marker("mixed.yaml", Marker::Crds, Edit::Insert, "- x.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mixes Windows (CRLF) and Unix (LF) line endings"),
            "{err}"
        );
    }

    #[test]
    fn markers_in_block_comments_and_strings_are_text() {
        let dir = tempfile::tempdir().unwrap();
        let source = "/* an example:\n// +rkb:scaffold:modules\n*/\nconst S: &str = r#\"\n// +rkb:scaffold:modules\n\"#;\n\
                      const T: &str = \"a \\\" quote\n// +rkb:scaffold:modules\n\";\nconst C: char = '\"';\n\
                      mod a;\n// +rkb:scaffold:modules\n";
        fs::write(dir.path().join("lib.rs"), source).unwrap();
        let mut changes = Changes::open(dir.path()).unwrap();
        changes
            .edit_at_marker("lib.rs", Marker::Modules, Edit::Sorted, "mod b;")
            .unwrap();
        let updated = changes.read("lib.rs").unwrap().unwrap();
        assert!(
            updated.ends_with("mod a;\nmod b;\n// +rkb:scaffold:modules\n"),
            "{updated}"
        );
        assert_eq!(updated.matches("mod b;").count(), 1, "{updated}");
        // Only a comment in a string: no marker at all.
        fs::write(
            dir.path().join("only.rs"),
            "const S: &str = \"\n// +rkb:scaffold:modules\n\";\n",
        )
        .unwrap();
        let err = changes
            .edit_at_marker("only.rs", Marker::Modules, Edit::Sorted, "mod b;")
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("marker line is gone"),
            "{err:#}"
        );
        let hidden = lines_in_literals("fn f<'a>(x: &'a str) {}\n/* /* nested */\nstill */\nok\n");
        assert_eq!(hidden, [false, false, true, false, false]);
    }
}
