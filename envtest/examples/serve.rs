//! Starts a control plane and keeps it until stdin closes (or Ctrl-C): for scripts and
//! for trying things by hand with kubectl.
//!
//!   cargo run -p rkb-envtest --example serve > kubeconfig-path &
//!   kubectl --kubeconfig "$(head -1 kubeconfig-path)" get namespaces
//!
//! The first line on stdout is the admin kubeconfig's path.

use std::io::Read as _;

#[tokio::main]
async fn main() -> Result<(), rkb_envtest::Error> {
    let env = rkb_envtest::Environment::start().await?;
    println!("{}", env.kubeconfig_path().display());
    // Block on stdin in a thread: the control plane's processes die with this one.
    tokio::task::spawn_blocking(|| {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    })
    .await
    .ok();
    Ok(())
}
