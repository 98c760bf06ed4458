//! rkb: scaffold and maintain Kubernetes operators on kube-rs, the kubebuilder way.
//!
//! The binary is a thin shell over this library so the scaffolder can be tested
//! (and benchmarked) without spawning processes.
//!
//! Layout: [`cli`] holds the clap model, [`commands`] one module per subcommand,
//! [`project`] the `PROJECT` file, [`model`] every name and path derived from it,
//! [`names`] validation and naming rules, [`scaffold`] template rendering plus the
//! all-or-nothing file writer, and [`merge`] the three-way merge of `rkb alpha update`.
//!
//! The commands and their flags are in the rkb Book's [CLI reference][cli]; how the code
//! is laid out and where a new command goes is in the repository's [ARCHITECTURE.md][arch].
//!
//! [cli]: https://github.com/rkb-rs/rkb/blob/main/docs/src/reference/cli.md
//! [arch]: https://github.com/rkb-rs/rkb/blob/main/ARCHITECTURE.md

// Its doc comments are clap's help text, where `<VALUE>` is a placeholder, not HTML.
#[allow(rustdoc::invalid_html_tags)]
pub mod cli;
pub mod commands;
pub mod deploy_image;
pub mod external;
pub mod grafana;
pub mod helm;
pub mod merge;
pub mod model;
pub mod names;
pub mod oci;
pub mod project;
pub mod rkb_crates;
pub mod scaffold;
pub mod version;

use std::process::ExitCode;

use clap::Parser;

/// Versions of the crates that generated projects are built on.
pub const KUBE_VERSION: &str = "5.0";
pub const K8S_OPENAPI_VERSION: &str = "0.29";
/// Kubernetes API level selected in k8s-openapi (its `v1_37` feature).
pub const K8S_API_FEATURE: &str = "v1_37";

/// Runs rkb with the process arguments; errors are printed, not panicked.
pub fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli, &mut std::io::stdout()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
