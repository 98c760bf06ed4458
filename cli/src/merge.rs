//! The three-way merge of `rkb alpha update`, one file at a time: the scaffold of the rkb
//! that wrote the project (base), the scaffold of this rkb (theirs) and the user's file
//! (ours).
//!
//! Whole-file rules come first, so that a file only one side changed is never run through
//! a line merge: unchanged by the user means this rkb's version, unchanged by rkb means the
//! user's. Only files both changed are merged line by line (diffy's diff3), and a merge
//! that cannot be made is written with conflict markers, so a user line is always either
//! in the result or inside a conflict.

use std::borrow::Cow;

use diffy::{ConflictStyle, IncompleteHunkStyle, MergeOptions};

/// What the update does with one file the scaffolds know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The user's file already is this rkb's (or neither scaffold changed it): nothing to do.
    UpToDate,
    /// Only the user changed it: kept as it is.
    KeptYours,
    /// Only rkb changed it: this rkb's version replaces the user's.
    TakenNew(String),
    /// New in this rkb's scaffold and absent from the project.
    Added(String),
    /// Both changed it, in different lines: merged.
    Merged(String),
    /// Both changed the same lines: written with conflict markers for the user to resolve.
    Conflict(String),
    /// Both changed it but one side is not UTF-8 text, which no line merge can read: left
    /// as it is, for the user to bring forward by hand.
    NotText,
    /// The user deleted it and this rkb still generates it: stays deleted.
    DeletedByYou,
    /// rkb no longer generates it and the user kept it: kept as it is.
    NoLongerGenerated,
}

impl Outcome {
    /// The new content of the user's file, when it changes.
    pub fn content(&self) -> Option<&str> {
        match self {
            Outcome::TakenNew(text)
            | Outcome::Added(text)
            | Outcome::Merged(text)
            | Outcome::Conflict(text) => Some(text),
            _ => None,
        }
    }
}

/// The outcome for one path, from its content in the base scaffold, the user's tree and
/// this rkb's scaffold (`None`: absent there). `None` when the path is in neither the
/// user's tree nor this rkb's scaffold (rkb and the user both dropped it).
pub fn file(base: Option<&[u8]>, ours: Option<&[u8]>, theirs: Option<&[u8]>) -> Option<Outcome> {
    let outcome = match (base, ours, theirs) {
        (_, None, None) => return None,
        (None, None, Some(new)) => match text(new) {
            Some(new) => Outcome::Added(new.into()),
            None => Outcome::NotText,
        },
        (Some(_), None, Some(_)) => Outcome::DeletedByYou,
        (_, Some(_), None) => Outcome::NoLongerGenerated,
        (_, Some(ours), Some(theirs)) if ours == theirs => Outcome::UpToDate,
        (Some(base), Some(_), Some(theirs)) if base == theirs => Outcome::KeptYours,
        (Some(base), Some(ours), Some(theirs)) if base == ours => {
            match std::str::from_utf8(theirs) {
                Ok(new) => Outcome::TakenNew(new.into()),
                Err(_) => Outcome::NotText,
            }
        }
        // Both changed it, or both added it with different contents (an empty base: a
        // line merge then keeps what they share and puts the rest in a conflict).
        (base, Some(ours), Some(theirs)) => {
            let (Some(base), Some(ours), Some(theirs)) =
                (text(base.unwrap_or_default()), text(ours), text(theirs))
            else {
                return Some(Outcome::NotText);
            };
            match lines(base, ours, theirs) {
                Ok(merged) => Outcome::Merged(merged),
                Err(conflict) => Outcome::Conflict(conflict),
            }
        }
    };
    Some(outcome)
}

fn text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// The line merge of `ours` and `theirs` from `base`: `Ok` when it is clean, `Err` with
/// git's diff3 markers (`<<<<<<< ours`, `||||||| original`, `=======`, `>>>>>>> theirs`)
/// otherwise. A user's file with Windows line endings is merged as LF and written back
/// with them, so that the line endings alone do not turn every line into a conflict.
pub fn lines(base: &str, ours: &str, theirs: &str) -> Result<String, String> {
    let crlf = is_crlf(ours);
    let lf = |text: &str| -> String { text.replace("\r\n", "\n") };
    let (base, ours, theirs): (Cow<str>, Cow<str>, Cow<str>) = if crlf {
        (lf(base).into(), lf(ours).into(), lf(theirs).into())
    } else {
        (base.into(), ours.into(), theirs.into())
    };
    let mut options = MergeOptions::new();
    options
        .set_conflict_style(ConflictStyle::Diff3)
        // Markers on lines of their own, even after a last line without a newline.
        .set_incomplete_hunk_style(IncompleteHunkStyle::Git);
    let merged = options.merge(&base, &ours, &theirs);
    let back = |text: String| {
        if crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        }
    };
    merged.map(back).map_err(back)
}

/// Every line break is CRLF (and there is at least one).
fn is_crlf(text: &str) -> bool {
    text.contains("\r\n") && !text.replace("\r\n", "").contains('\n')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn outcome(base: Option<&str>, ours: Option<&str>, theirs: Option<&str>) -> Option<Outcome> {
        file(
            base.map(str::as_bytes),
            ours.map(str::as_bytes),
            theirs.map(str::as_bytes),
        )
    }

    #[test]
    fn whole_file_rules() {
        let (b, u, n) = (Some("a\n"), Some("a\nmine\n"), Some("a\nnew\n"));
        assert_eq!(outcome(b, b, n), Some(Outcome::TakenNew("a\nnew\n".into())));
        assert_eq!(outcome(b, u, b), Some(Outcome::KeptYours));
        assert_eq!(outcome(b, n, n), Some(Outcome::UpToDate));
        assert_eq!(outcome(b, b, b), Some(Outcome::UpToDate));
        assert_eq!(
            outcome(None, None, n),
            Some(Outcome::Added("a\nnew\n".into()))
        );
        assert_eq!(outcome(b, None, n), Some(Outcome::DeletedByYou));
        assert_eq!(outcome(b, u, None), Some(Outcome::NoLongerGenerated));
        assert_eq!(outcome(b, b, None), Some(Outcome::NoLongerGenerated));
        assert_eq!(outcome(b, None, None), None);
    }

    #[test]
    fn changes_to_different_lines_merge() {
        let base = "one\ntwo\nthree\nfour\nfive\n";
        let ours = "one\ntwo (mine)\nthree\nfour\nfive\n";
        let theirs = "one\ntwo\nthree\nfour\nfive (new)\n";
        assert_eq!(
            outcome(Some(base), Some(ours), Some(theirs)),
            Some(Outcome::Merged(
                "one\ntwo (mine)\nthree\nfour\nfive (new)\n".into()
            ))
        );
    }

    #[test]
    fn changes_to_the_same_line_conflict_with_both_sides_and_the_base() {
        let merged = outcome(Some("a\nb\nc\n"), Some("a\nB1\nc\n"), Some("a\nB2\nc\n"));
        assert_eq!(
            merged,
            Some(Outcome::Conflict(
                "a\n<<<<<<< ours\nB1\n||||||| original\nb\n=======\nB2\n>>>>>>> theirs\nc\n".into()
            ))
        );
    }

    #[test]
    fn a_file_both_added_differently_is_one_conflict() {
        let Some(Outcome::Conflict(text)) = outcome(None, Some("mine\n"), Some("new\n")) else {
            panic!("a conflict")
        };
        assert!(text.contains("mine\n") && text.contains("new\n"), "{text}");
    }

    #[test]
    fn crlf_files_merge_as_lines_and_keep_their_endings() {
        let base = "one\ntwo\nthree\nfour\n";
        let ours = "one\r\ntwo (mine)\r\nthree\r\nfour\r\n";
        let theirs = "one\ntwo\nthree\nfour (new)\n";
        assert_eq!(
            lines(base, ours, theirs),
            Ok("one\r\ntwo (mine)\r\nthree\r\nfour (new)\r\n".into())
        );
    }

    #[test]
    fn a_file_that_is_not_text_is_left_to_the_user() {
        let file = |b: &[u8], o: &[u8], t: &[u8]| super::file(Some(b), Some(o), Some(t));
        assert_eq!(file(b"a\n", b"\xff\n", b"b\n"), Some(Outcome::NotText));
        assert_eq!(file(b"a\n", b"a\n", b"\xff\n"), Some(Outcome::NotText));
    }

    /// One random edit of a file's lines: replace, insert or delete at a position.
    #[derive(Debug, Clone)]
    enum Edit {
        Replace(usize),
        Insert(usize),
        Delete(usize),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            (0..40usize).prop_map(Edit::Replace),
            (0..40usize).prop_map(Edit::Insert),
            (0..40usize).prop_map(Edit::Delete),
        ]
    }

    /// Applies `edits` to `base`; every line written is new and unique (`<who> <n>`).
    fn apply(base: &[String], edits: &[Edit], who: &str) -> (Vec<String>, Vec<String>) {
        let mut lines = base.to_vec();
        let mut written = Vec::new();
        for (n, edit) in edits.iter().enumerate() {
            let line = format!("{who} line {n}");
            match *edit {
                Edit::Replace(at) if !lines.is_empty() => {
                    let at = at % lines.len();
                    lines[at] = line.clone();
                }
                Edit::Insert(at) => lines.insert(at % (lines.len() + 1), line.clone()),
                Edit::Delete(at) if !lines.is_empty() => {
                    let at = at % lines.len();
                    lines.remove(at);
                    continue;
                }
                _ => continue,
            }
            written.push(line);
        }
        // A later edit may have deleted or replaced a line an earlier one wrote.
        written.retain(|line| lines.contains(line));
        (lines, written)
    }

    fn joined(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Whatever the user and rkb change, every line the user wrote is in the result:
        /// in a clean merge, or inside a conflict. A clean merge keeps every line rkb
        /// wrote too.
        #[test]
        fn no_user_line_is_ever_dropped(
            size in 0..30usize,
            ours_edits in proptest::collection::vec(edit(), 0..8),
            theirs_edits in proptest::collection::vec(edit(), 0..8),
        ) {
            let base: Vec<String> = (0..size).map(|i| format!("scaffold line {i}")).collect();
            let (ours, user_lines) = apply(&base, &ours_edits, "user");
            let (theirs, rkb_lines) = apply(&base, &theirs_edits, "rkb");
            let (base, ours, theirs) = (joined(&base), joined(&ours), joined(&theirs));
            let result = file(Some(base.as_bytes()), Some(ours.as_bytes()), Some(theirs.as_bytes()))
                .expect("all three exist");
            let text = match &result {
                Outcome::KeptYours | Outcome::UpToDate => ours.clone(),
                other => other.content().expect("a written outcome").to_owned(),
            };
            let result_lines: Vec<&str> = text.lines().collect();
            for line in &user_lines {
                prop_assert!(result_lines.contains(&line.as_str()), "{line} dropped:\n{text}");
            }
            if !matches!(result, Outcome::Conflict(_)) {
                for line in &rkb_lines {
                    prop_assert!(result_lines.contains(&line.as_str()), "{line} dropped:\n{text}");
                }
                prop_assert!(!text.contains("<<<<<<<"), "markers in a clean merge:\n{text}");
            }
        }

        /// The update with no change from rkb gives the user's file back, byte for byte.
        #[test]
        fn no_change_from_rkb_gives_the_users_file_back(
            size in 0..30usize,
            ours_edits in proptest::collection::vec(edit(), 0..8),
        ) {
            let base: Vec<String> = (0..size).map(|i| format!("scaffold line {i}")).collect();
            let (ours, _) = apply(&base, &ours_edits, "user");
            let (base, ours) = (joined(&base), joined(&ours));
            let result = file(Some(base.as_bytes()), Some(ours.as_bytes()), Some(base.as_bytes()))
                .expect("both exist");
            prop_assert!(
                matches!(result, Outcome::KeptYours | Outcome::UpToDate),
                "{result:?}"
            );
        }
    }
}
