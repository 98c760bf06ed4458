//! Text from the code, made safe for the book's Markdown.

/// `text` with what Markdown would take for markup escaped outside `code spans`: `<` (an
/// HTML tag to mdBook, e.g. `<V>`) and `*` (emphasis, e.g. `bases/*.yaml`).
pub fn text(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
        } else {
            out.push_str(&part.replace('<', "&lt;").replace('*', r"\*"));
        }
    }
    out
}

/// `text` as one table cell: on one line, with its pipes escaped (even in code spans).
pub fn cell(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    self::text(&words.join(" ")).replace('|', r"\|")
}

/// A table: the header row, the separator and one line per row.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// `text` in a code span.
pub fn code(text: &str) -> String {
    format!("`{text}`")
}
