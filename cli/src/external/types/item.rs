//! One struct's text: its doc comment, attributes and fields. Both the writer, which makes
//! the structs, and the module around them use it.

use std::fmt::Write as _;

pub(super) fn render_struct(
    name: &str,
    doc: Option<&str>,
    keys: &[String],
    body: &str,
    head: &str,
) -> String {
    let mut out = String::new();
    let doc = doc.map(|d| doc_comment(d, "")).unwrap_or_default();
    // A `#[schemars]` attribute goes after the derive that introduces it.
    let after = doc.starts_with("#[");
    if !after {
        out.push_str(&doc);
    }
    out.push_str(head);
    out.push('\n');
    if head == "#[rkb_runtime::schema]" {
        out.push_str(
            "#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]\n",
        );
    }
    if after {
        out.push_str(&doc);
    }
    if !keys.is_empty() {
        let _ = writeln!(out, "#[rkb({})]", keys.join(", "));
    }
    let _ = write!(out, "pub struct {name} {{\n{body}}}\n");
    out
}

/// `///` lines for a description that survives them unchanged (schemars joins the lines
/// with `\n` after taking one space off each) and holds no code block; else schemars'
/// `description` attribute.
pub(super) fn doc_comment(text: &str, indent: &str) -> String {
    let plain = !text.is_empty()
        && text
            .lines()
            .all(|l| l == l.trim_end() && !l.contains('\r') && !l.starts_with(char::is_whitespace))
        && !text.ends_with('\n')
        && !text.contains("```")
        && text.split('\n').count() == text.lines().count();
    if plain {
        text.lines()
            .map(|l| {
                if l.is_empty() {
                    format!("{indent}///\n")
                } else {
                    format!("{indent}/// {l}\n")
                }
            })
            .collect()
    } else {
        // Not a doc comment: rustdoc would run its code blocks as doctests.
        format!("{indent}#[schemars(description = {text:?})]\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_doc_comments_unless_rustdoc_or_schemars_would_change_them() {
        assert_eq!(
            doc_comment("One line.\n\nTwo.", ""),
            "/// One line.\n///\n/// Two.\n"
        );
        for text in [
            "A fence:\n```\ncode\n```",
            "Trailing space \nhere",
            "\tindented",
            "ends\n",
        ] {
            assert_eq!(
                doc_comment(text, "    "),
                format!("    #[schemars(description = {text:?})]\n"),
                "{text:?}"
            );
        }
    }
}
