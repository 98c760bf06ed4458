//! `rkb build-image` (`make image`): the manager as a static binary on an empty base,
//! written as an OCI archive without a container engine and without pulling a base image,
//! as ko does for Go. The binary is built by cargo for this machine's target with glibc
//! linked in statically (`-C target-feature=+crt-static`), so the image needs no loader.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

use crate::cli::BuildImageArgs;
use crate::oci;
use crate::project::Project;

pub fn build_image(args: &BuildImageArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    check_tag(&args.tag)?;
    let target = args.target.clone().unwrap_or_else(oci::host_target);
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => {
            let project = Project::load(&args.dir)?;
            cargo_build(&args.dir, &project.project_name, &target)?
        }
    };
    let bytes = std::fs::read(&binary)
        .with_context(|| format!("cannot read the manager binary {}", binary.display()))?;
    match oci::needs_dynamic_loader(&bytes) {
        Some(false) => {}
        Some(true) => bail!(
            "{} is linked dynamically, and an image with no base has no dynamic loader to start it.\n  \
             Build it statically, e.g.  RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build --release --target {target}\n  \
             or leave out --binary and let rkb build it.",
            binary.display()
        ),
        None => bail!(
            "{} is not a 64-bit Linux executable (ELF); an image runs Linux binaries.\n  \
             On another system, cross-build for Linux: rkb build-image --target x86_64-unknown-linux-musl ...",
            binary.display()
        ),
    }
    let (os, architecture) = platform(&target)?;
    let image = oci::Image {
        binary: &bytes,
        tag: &args.tag,
        os,
        architecture,
        user: &args.user,
    };
    let (archive, digest) = oci::archive(&image).context("cannot build the image archive")?;
    let output = args.dir.join(&args.output);
    write_atomically(&output, &archive)?;
    writeln!(
        out,
        "wrote {} ({} bytes): {} {digest}, {os}/{architecture}, user {}\n\
         Load it:  podman load -i {0}   or  skopeo copy oci-archive:{0} docker://{}",
        args.output.display(),
        archive.len(),
        args.tag,
        args.user,
        args.tag,
    )?;
    Ok(())
}

/// `cargo build --release --locked` of the manager for `target`, statically linked; returns
/// the executable cargo reports.
fn cargo_build(dir: &Path, bin: &str, target: &str) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    rustflags.push_str(" -C target-feature=+crt-static");
    let output = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--locked",
            "--bin",
            bin,
            "--target",
            target,
        ])
        .args(["--message-format", "json-render-diagnostics"])
        .current_dir(dir)
        // With --target, RUSTFLAGS reach the target's crates only, not build scripts and
        // proc macros, which run on this machine.
        .env("RUSTFLAGS", rustflags.trim())
        .env("CARGO_PROFILE_RELEASE_STRIP", "symbols")
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo")?;
    if !output.status.success() {
        bail!(
            "`cargo build --release --locked --bin {bin} --target {target}` failed (its errors are above)"
        );
    }
    let executable = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == bin)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from));
    executable.with_context(|| format!("cargo built no executable named {bin}"))
}

/// The OCI platform of a Rust target triple.
fn platform(target: &str) -> anyhow::Result<(&'static str, &'static str)> {
    let arch = match target.split('-').next().unwrap_or_default() {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "armv7" => "arm",
        "s390x" => "s390x",
        "powerpc64le" => "ppc64le",
        "riscv64gc" => "riscv64",
        other => bail!(
            "the target {target} has an architecture ({other}) rkb does not map to an OCI platform.\n  \
             Accepted: x86_64, aarch64, armv7, s390x, powerpc64le, riscv64gc Linux targets, \
             e.g. --target aarch64-unknown-linux-gnu"
        ),
    };
    if !target.contains("-linux-") {
        bail!(
            "the target {target} is not a Linux target; images run Linux binaries.\n  \
             Pass one, e.g. --target x86_64-unknown-linux-musl"
        );
    }
    Ok(("linux", arch))
}

/// An image reference as the distribution grammar allows it (the same rule as `--image`).
fn check_tag(tag: &str) -> anyhow::Result<()> {
    crate::deploy_image::check_image(tag).map_err(|mut e| {
        e.flag = "--tag";
        e.example = "--tag example.com/memcached-operator:v0.0.1".to_owned();
        e.into()
    })
}

/// Writes `path` by rename, so an interrupted run never leaves half an archive.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let mut staged = tempfile::NamedTempFile::new_in(parent)
        .with_context(|| format!("cannot write in {}", parent.display()))?;
    staged.write_all(bytes)?;
    staged
        .persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_map_to_oci_platforms() {
        assert_eq!(
            platform("x86_64-unknown-linux-gnu").unwrap(),
            ("linux", "amd64")
        );
        assert_eq!(
            platform("aarch64-unknown-linux-musl").unwrap(),
            ("linux", "arm64")
        );
        let message = platform("x86_64-apple-darwin").unwrap_err().to_string();
        assert!(message.contains("not a Linux target"), "{message}");
        assert!(platform("mips-unknown-linux-gnu").is_err());
    }
}
