//! One module per subcommand; each plans all its writes into a [`Changes`] set and
//! commits them at the end, so a failing command leaves the directory untouched.

mod create_api;
mod create_webhook;
mod edit;
mod init;
mod layout;

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, Command, CreateCommand};
use crate::scaffold::{Changes, Written};

pub use create_api::create_api;
pub use create_webhook::create_webhook;
pub use edit::edit;
pub use init::init;

pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    match cli.command {
        Command::Init(args) => init(&args, out),
        Command::Create(CreateCommand::Api(args)) => create_api(&args, out),
        Command::Create(CreateCommand::Webhook(args)) => create_webhook(&args, out),
        Command::Edit(args) => edit(&args, out),
        Command::Completion { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "rkb", out);
            Ok(())
        }
        Command::Version => {
            writeln!(
                out,
                "rkb {}\nkube {}\nk8s-openapi {} (Kubernetes API {})",
                env!("CARGO_PKG_VERSION"),
                crate::KUBE_VERSION,
                crate::K8S_OPENAPI_VERSION,
                crate::K8S_API_FEATURE
                    .trim_start_matches('v')
                    .replace('_', ".")
            )?;
            Ok(())
        }
    }
}

/// Commits the change set and lists what was written, like kubebuilder's scaffold log.
fn commit(changes: Changes, out: &mut dyn Write) -> anyhow::Result<()> {
    let root = changes.root().to_path_buf();
    for (path, written) in changes.commit()? {
        let verb = match written {
            Written::Created => "create",
            Written::Updated => "update",
            Written::Removed => "remove",
        };
        writeln!(out, "{verb:>8} {}", display(&root, &path))?;
    }
    Ok(())
}

fn display(root: &Path, rel: &Path) -> String {
    if root == Path::new(".") {
        rel.display().to_string()
    } else {
        root.join(rel).display().to_string()
    }
}
