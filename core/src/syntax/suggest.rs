//! "Did you mean" hints for misspelt keys and verbs.

/// The candidate closest to `input`, if it is close enough to be a likely typo.
pub fn closest<'a>(input: &str, candidates: &[&'a str]) -> Option<&'a str> {
    // Case and `_` differences (`deleteCollection`, `resourcenames`) are the
    // commonest slips; treat them as exact matches before measuring typos.
    let folded = fold(input);
    if let Some(hit) = candidates.iter().find(|c| fold(c) == folded) {
        return Some(hit);
    }
    candidates
        .iter()
        .map(|c| (distance(&folded, &fold(c)), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The key a misspelt `name` most likely meant: a known alias (another tool's
/// spelling, e.g. controller-gen's) first, else the closest key.
pub fn intended_key<'a>(
    name: &str,
    aliases: &[(&str, &'a str)],
    keys: &[&'a str],
) -> Option<&'a str> {
    aliases
        .iter()
        .find(|(alias, _)| *alias == name)
        .map(|(_, key)| *key)
        .or_else(|| closest(name, keys))
}

/// ``unknown key `x` in <place>; did you mean `y`?``, or the keys that are accepted.
pub fn unknown_key(name: &str, place: &str, hint: Option<&str>, keys: &[&str]) -> String {
    match hint {
        Some(key) => format!("unknown key `{name}` in {place}; did you mean `{key}`?"),
        None => format!(
            "unknown key `{name}` in {place}; expected one of: {}",
            keys.join(", ")
        ),
    }
}

/// `s` without case, `_` and `-`: the spellings of one key or value that are taken alike.
pub fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Optimal string alignment distance: Levenshtein plus adjacent transpositions,
/// so `lsit` is one edit from `list`.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j] = distance between a[..i] and b[..j]
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERBS: &[&str] = &["get", "list", "watch", "delete", "deletecollection"];

    #[test]
    fn suggests_typos() {
        assert_eq!(closest("lsit", VERBS), Some("list"));
        assert_eq!(closest("wacth", VERBS), Some("watch"));
        assert_eq!(closest("delet", VERBS), Some("delete"));
        assert_eq!(closest("deleteCollection", VERBS), Some("deletecollection"));
    }

    #[test]
    fn no_suggestion_for_unrelated_words() {
        assert_eq!(closest("frobnicate", VERBS), None);
        assert_eq!(closest("x", VERBS), None);
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("ab", "ba"), 1);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
