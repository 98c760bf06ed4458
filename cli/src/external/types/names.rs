//! Rust names for JSON properties: fields and struct names.

use heck::{ToSnakeCase, ToUpperCamelCase};

/// The Rust field for a JSON property: snake_case, a raw identifier for a keyword.
pub(super) fn field_name(json: &str) -> String {
    let mut snake: String = json
        .to_snake_case()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        snake.insert(0, '_');
    }
    match snake.as_str() {
        "self" | "super" | "crate" | "Self" => format!("{snake}_"),
        "as" | "break" | "const" | "continue" | "else" | "enum" | "extern" | "false" | "fn"
        | "for" | "if" | "impl" | "in" | "let" | "loop" | "match" | "mod" | "move" | "mut"
        | "pub" | "ref" | "return" | "static" | "struct" | "trait" | "true" | "type" | "unsafe"
        | "use" | "where" | "while" | "async" | "await" | "dyn" | "abstract" | "become" | "box"
        | "do" | "final" | "macro" | "override" | "priv" | "typeof" | "unsized" | "virtual"
        | "yield" | "try" | "gen" => format!("r#{snake}"),
        _ => snake,
    }
}

/// A property's part of a struct name: `issuerRef` -> `IssuerRef`.
pub(super) fn type_part(json: &str) -> String {
    let part = json.to_upper_camel_case();
    let part: String = part.chars().filter(char::is_ascii_alphanumeric).collect();
    if part.is_empty() {
        "Field".into()
    } else {
        part
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_become_rust_fields() {
        assert_eq!(field_name("issuerRef"), "issuer_ref");
        assert_eq!(field_name("type"), "r#type");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("9lives"), "_9lives");
        assert_eq!(field_name("x-forwarded.for"), "x_forwarded_for");
        assert_eq!(type_part("issuerRef"), "IssuerRef");
        assert_eq!(type_part("$ref"), "Ref");
    }
}
