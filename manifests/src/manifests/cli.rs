//! The command line of a project's manifests generator (`src/bin/manifests.rs`):
//! [`Manifests::main`] and [`Manifests::run`].

use std::path::PathBuf;
use std::process::ExitCode;

use super::{Error, Manifests, RELEASED_DIR};
use crate::compat::Allowance;

/// The flags of a project's manifests generator (`src/bin/manifests.rs`).
#[derive(Debug, clap::Parser)]
#[command(
    name = "manifests",
    about = "Writes config/crd/bases/*.yaml and config/rbac/role.yaml from the Rust types and \
             #[rbac] attributes (`make manifests`).",
    after_help = "Set both size flags in manifests() in src/lib.rs to make them stick: \
                  `make test` checks without flags."
)]
struct Args {
    /// Fail if the files are not up to date, writing nothing.
    #[arg(long)]
    check: bool,
    /// Allow a breaking change to a released CRD, as its error line gives it, and record
    /// it in config/crd/released/allow-breaking.txt (repeatable).
    #[arg(long, value_name = "RULE@LOCATION", conflicts_with = "check")]
    allow_breaking: Vec<Allowance>,
    /// After writing, make the CRDs the released ones that later runs compare with
    /// (`make release-crds`): copies them to config/crd/released/ and clears its
    /// allowances.
    #[arg(long, conflicts_with = "check")]
    release_crds: bool,
    /// The project root.
    #[arg(long, value_name = "PROJECT_ROOT", default_value = ".")]
    dir: PathBuf,
    /// Cut descriptions to N bytes, 0 drops them (default: keep them while the CRD fits).
    #[arg(long, value_name = "N")]
    max_desc_len: Option<usize>,
    /// Size budget of one CRD in bytes of compact JSON, the form client-side `kubectl
    /// apply` stores in an annotation; 0 for none (default: 261120).
    #[arg(long, value_name = "BYTES")]
    max_crd_size: Option<usize>,
}

impl Manifests {
    /// Entry point for the project's `src/bin/manifests.rs`: parses
    /// `[--check] [--dir <project root>]` (default `.`), writes or checks,
    /// prints a one-line summary, and fails on any error.
    pub fn main(self) -> ExitCode {
        match self.run(std::env::args().skip(1)) {
            Ok(summary) => {
                println!("{summary}");
                ExitCode::SUCCESS
            }
            Err(Error::Usage(err)) => {
                // clap's own layout: "error: ...", then the usage line.
                let _ = err.print();
                ExitCode::FAILURE
            }
            Err(err) => {
                eprintln!("error: {err}");
                ExitCode::FAILURE
            }
        }
    }

    /// [`Manifests::main`] without the process: returns the summary line (or the help).
    pub fn run(&self, args: impl IntoIterator<Item = String>) -> Result<String, Error> {
        use clap::Parser as _;
        use clap::error::ErrorKind;

        let args = match Args::try_parse_from(std::iter::once("manifests".to_owned()).chain(args)) {
            Ok(args) => args,
            Err(help) if help.kind() == ErrorKind::DisplayHelp => {
                return Ok(help.render().to_string().trim_end().to_owned());
            }
            Err(err) => return Err(Error::Usage(Box::new(err))),
        };
        let mut this = self.clone();
        if let Some(len) = args.max_desc_len {
            this.max_desc_len = Some(len);
        }
        if let Some(bytes) = args.max_crd_size {
            this.max_crd_size = (bytes > 0).then_some(bytes);
        }
        this.allow_breaking = args.allow_breaking;
        if args.check {
            let count = this.check_files(&args.dir)?;
            return Ok(format!("manifests: {count} files up to date"));
        }
        let mut summary = this.write(&args.dir)?.to_string();
        if args.release_crds {
            let released = this.release(&args.dir)?;
            summary.push_str(&format!(
                "\nreleased {} CRD{} to {RELEASED_DIR}/: `make manifests` now fails on \
                 breaking changes to them",
                released.len(),
                if released.len() == 1 { "" } else { "s" }
            ));
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        let m = Manifests::new(vec![], vec![]);
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let help = m.run(args(&["--help"])).unwrap();
        assert!(help.contains("Usage: manifests [OPTIONS]"), "{help}");
        assert!(help.contains("--max-crd-size <BYTES>"), "{help}");
        let err = m.run(args(&["--bogus"])).unwrap_err().to_string();
        assert!(err.starts_with("unexpected argument '--bogus'"), "{err}");
        assert!(err.contains("Usage: manifests [OPTIONS]"), "{err}");
        let err = m.run(args(&["--dir"])).unwrap_err().to_string();
        assert!(
            err.contains("a value is required for '--dir <PROJECT_ROOT>'"),
            "{err}"
        );
        let err = m
            .run(args(&["--max-desc-len", "x"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("invalid value 'x' for '--max-desc-len <N>'"),
            "{err}"
        );
        let err = m.run(args(&["--max-crd-size"])).unwrap_err().to_string();
        assert!(
            err.contains("a value is required for '--max-crd-size <BYTES>'"),
            "{err}"
        );
        let err = m.run(args(&["--check=yes"])).unwrap_err().to_string();
        assert!(
            err.contains("unexpected value 'yes' for '--check'"),
            "{err}"
        );
    }
}
