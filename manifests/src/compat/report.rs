//! [`Breaking`]: the findings no allowance accepts, one line each: where, which rule,
//! before and after, what to do, and the allowance to copy if the change is meant.

use std::fmt;

use super::Finding;

/// Breaking changes to released CRDs that the project has not allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breaking {
    /// The directory of the released CRDs, as the message names it.
    pub released: String,
    /// The file allowances are recorded in, as the message names it.
    pub allow_file: String,
    /// Each change, sorted.
    pub findings: Vec<Finding>,
}

impl fmt::Display for Breaking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.findings.len();
        writeln!(
            f,
            "{n} breaking change{} to the CRDs released in {}:",
            if n == 1 { "" } else { "s" },
            self.released
        )?;
        for finding in &self.findings {
            writeln!(f, "  {}", line(finding))?;
        }
        write!(
            f,
            "Fix each as it says, or, if the change is meant (no cluster stores such objects \
             yet), allow it: `make manifests ALLOW_BREAKING=\"<rule>@<location> ...\"` \
             records it in {}, where you can say why after a #. `make release-crds` makes \
             the CRDs of a release the ones compared with.",
            self.allow_file
        )
    }
}

/// One finding's line: where, which rule, before and after, what to do.
#[derive(Clone, Copy, Debug)]
pub struct Line<'a>(pub &'a Finding);

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let finding = self.0;
        f.write_str(&finding.crd)?;
        if let Some(version) = &finding.version {
            write!(f, " {version}")?;
        }
        if let Some(path) = &finding.path {
            write!(f, " {path}")?;
        }
        write!(
            f,
            ": {} ({} -> {}): {}",
            finding.rule,
            finding.old,
            finding.new,
            finding.rule.remedy()
        )
    }
}

/// A breaking finding's line, with the allowance to copy.
fn line(finding: &Finding) -> String {
    format!(
        "{}; or allow it: ALLOW_BREAKING={}",
        Line(finding),
        finding.allowance()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::Rule;

    #[test]
    fn one_line_per_finding_with_what_to_do_and_the_allowance() {
        let finding =
            |rule, version: Option<&str>, path: Option<&str>, old: &str, new: &str| Finding {
                crd: "memcacheds.cache.example.com".into(),
                version: version.map(Into::into),
                path: path.map(Into::into),
                rule,
                old: old.into(),
                new: new.into(),
            };
        let report = Breaking {
            released: "config/crd/released/".into(),
            allow_file: "config/crd/released/allow-breaking.txt".into(),
            findings: vec![
                finding(
                    Rule::StorageVersionChanged,
                    None,
                    None,
                    "v1alpha1",
                    "v1beta1",
                ),
                finding(
                    Rule::FieldRemoved,
                    Some("v1alpha1"),
                    Some(".spec.size"),
                    "integer",
                    "absent",
                ),
            ],
        }
        .to_string();
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines.len(), 4, "{report}");
        assert_eq!(
            lines[0],
            "2 breaking changes to the CRDs released in config/crd/released/:"
        );
        assert!(
            lines[1].starts_with(
                "  memcacheds.cache.example.com: storage-version-changed (v1alpha1 -> v1beta1): \
                 objects stored at the old version"
            ),
            "{report}"
        );
        assert!(
            lines[1].ends_with(
                "; or allow it: ALLOW_BREAKING=storage-version-changed@memcacheds.cache.example.com"
            ),
            "{report}"
        );
        assert!(
            lines[2].starts_with(
                "  memcacheds.cache.example.com v1alpha1 .spec.size: field-removed (integer -> \
                 absent): keep the field in this version"
            ),
            "{report}"
        );
        assert!(
            lines[2].ends_with(
                "ALLOW_BREAKING=field-removed@memcacheds.cache.example.com/v1alpha1:.spec.size"
            ),
            "{report}"
        );
        assert!(
            lines[3].contains("config/crd/released/allow-breaking.txt"),
            "{report}"
        );
    }
}
