//! `namespaceSelector` and `objectSelector` written as kubectl's `--selector`
//! (`environment in (prod, staging), tier=web, !legacy`), parsed into the requirements
//! of a `metav1.LabelSelector`.

use crate::names;

/// How a [`Requirement`] matches a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key=value` or `key==value`: `matchLabels`.
    Equals,
    /// `key!=value`: `NotIn` with one value.
    NotEquals,
    In,
    NotIn,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
}

/// One comma-separated part of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    /// One value for `Equals`/`NotEquals`, one or more for `In`/`NotIn`, none otherwise.
    pub values: Vec<String>,
}

impl Operator {
    /// The `matchExpressions` operator; `None` for `Equals`, which is a `matchLabels` entry.
    pub const fn expression_operator(self) -> Option<&'static str> {
        match self {
            Self::Equals => None,
            Self::NotEquals | Self::NotIn => Some("NotIn"),
            Self::In => Some("In"),
            Self::Exists => Some("Exists"),
            Self::DoesNotExist => Some("DoesNotExist"),
        }
    }
}

/// The requirements of `text`, or why it is not a selector a webhook can have (the reason
/// completes "… is invalid: ").
pub fn parse(text: &str) -> Result<Vec<Requirement>, String> {
    if text.trim().is_empty() {
        return Err(
            "it is empty, and an empty selector matches everything: leave the key out".into(),
        );
    }
    split_outside_parentheses(text)?
        .into_iter()
        .map(|part| requirement(part.trim()))
        .collect()
}

/// `text` split at the commas that are not inside `( )`.
fn split_outside_parentheses(text: &str) -> Result<Vec<&str>, String> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0u32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Err("it has a ')' without its '('".into()),
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err("it has a '(' without its ')'".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn requirement(part: &str) -> Result<Requirement, String> {
    if part.is_empty() {
        return Err("it has an empty requirement (two commas in a row, or one at an end)".into());
    }
    if part.contains(['<', '>']) {
        return Err(format!(
            "{part:?} compares numbers, which a webhook's label selector cannot: use in, notin, \
             =, != or a key alone"
        ));
    }
    let equality = [
        ("!=", Operator::NotEquals),
        ("==", Operator::Equals),
        ("=", Operator::Equals),
    ];
    let (key, operator, values) = if let Some(key) = part.strip_prefix('!') {
        (key.trim(), Operator::DoesNotExist, Vec::new())
    } else if let Some((key, operator, value)) = equality
        .iter()
        .find_map(|(token, op)| part.split_once(token).map(|(k, v)| (k, *op, v)))
    {
        (key.trim(), operator, vec![value.trim().to_owned()])
    } else {
        set_requirement(part)?
    };
    names::qualified_name(key).map_err(|e| format!("the label key {key:?} is invalid: {e}"))?;
    for value in &values {
        names::label_value(value)
            .map_err(|e| format!("the label value {value:?} of {key:?} is invalid: {e}"))?;
    }
    Ok(Requirement {
        key: key.to_owned(),
        operator,
        values,
    })
}

/// `key in (a, b)`, `key notin (a)` or `key` alone.
fn set_requirement(part: &str) -> Result<(&str, Operator, Vec<String>), String> {
    let mut words = part.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or_default();
    let Some(rest) = words.next().map(str::trim) else {
        return Ok((key, Operator::Exists, Vec::new()));
    };
    let word_end = rest
        .find(|c: char| c.is_whitespace() || c == '(')
        .unwrap_or(rest.len());
    let (operator, list) = match rest.split_at(word_end) {
        ("in", list) => (Operator::In, list),
        ("notin", list) => (Operator::NotIn, list),
        _ => {
            return Err(format!(
                "{part:?} is not a requirement: write key=value, key!=value, key in (a, b), \
                 key notin (a, b), key or !key"
            ));
        }
    };
    let Some(list) = list
        .trim()
        .strip_prefix('(')
        .and_then(|l| l.strip_suffix(')'))
    else {
        return Err(format!(
            "{part:?}: the values of in and notin go in parentheses, e.g. {key} in (a, b)"
        ));
    };
    let values: Vec<String> = list.split(',').map(|v| v.trim().to_owned()).collect();
    if values.iter().all(String::is_empty) {
        return Err(format!("{part:?} lists no values"));
    }
    Ok((key, operator, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirement(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator,
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        }
    }

    #[test]
    fn kubectl_selectors_are_parsed() {
        assert_eq!(
            parse("environment in (prod, staging), tier=web,app.kubernetes.io/part-of!=x, !legacy, team, zone notin (a), k==v")
                .unwrap(),
            [
                requirement("environment", Operator::In, &["prod", "staging"]),
                requirement("tier", Operator::Equals, &["web"]),
                requirement("app.kubernetes.io/part-of", Operator::NotEquals, &["x"]),
                requirement("legacy", Operator::DoesNotExist, &[]),
                requirement("team", Operator::Exists, &[]),
                requirement("zone", Operator::NotIn, &["a"]),
                requirement("k", Operator::Equals, &["v"]),
            ]
        );
        assert_eq!(
            parse("tier=").unwrap(),
            [requirement("tier", Operator::Equals, &[""])]
        );
    }

    #[test]
    fn what_a_label_selector_cannot_hold_is_refused() {
        for (text, reason) in [
            ("", "empty selector matches everything"),
            ("a,,b", "empty requirement"),
            ("replicas > 2", "compares numbers"),
            ("tier in prod", "go in parentheses"),
            ("tier in ()", "lists no values"),
            ("tier in (a", "without its ')'"),
            ("tier is web", "is not a requirement"),
            ("tier indigo", "is not a requirement"),
            ("Tier_=web", "label key \"Tier_\" is invalid"),
            ("tier=-web", "label value \"-web\" of \"tier\" is invalid"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(reason), "{text:?}: {error}");
        }
    }
}
