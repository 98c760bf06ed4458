//! `make docker-buildx`: a multi-arch image with `docker buildx build --platform=$(PLATFORMS)`
//! from a Dockerfile that cross-compiles for every platform PLATFORMS names. Docker is not
//! run (there is none here): the target's command, `make help`, the Dockerfile's stages and
//! its architecture mapping (run by `sh` for every platform) are checked.

use crate::common;

use std::process::Command;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::rkb_in(
        dir.path(),
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "demo",
            "--rkb-source",
            "registry",
        ],
    );
    dir
}

/// `make docker-buildx` runs `docker buildx build` for PLATFORMS (printed, not run: there is
/// no docker here), and `make help` lists it.
#[test]
fn docker_buildx_builds_every_platform_of_platforms() {
    let dir = project();
    let dry = Command::new("make")
        .args(["-n", "docker-buildx", "IMG=example.com/demo:v1"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&dry.stdout);
    assert!(
        dry.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(
        printed.contains(
            "docker buildx build --push --platform=linux/arm64,linux/amd64,linux/s390x,linux/ppc64le --tag example.com/demo:v1 ."
        ),
        "{printed}"
    );
    assert!(
        printed.contains("docker buildx rm demo-builder"),
        "{printed}"
    );
    let help = Command::new("make")
        .arg("help")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("docker-buildx"),
        "make help does not list docker-buildx"
    );
}

/// The Dockerfile cross-compiles: the builder stage runs on BUILDPLATFORM and reads
/// TARGETARCH; for every platform of the Makefile's PLATFORMS its own shell mapping (run
/// here as the Dockerfile has it) gives the Rust target and Debian cross toolchain of that
/// architecture, which the build and the copy then use; the runtime stage is the image's
/// platform (no --platform) and runs as an unprivileged user.
#[test]
fn the_dockerfile_cross_compiles_for_every_platform() {
    let dir = project();
    let dockerfile = std::fs::read_to_string(dir.path().join("Dockerfile")).unwrap();
    let froms: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    assert!(
        froms[0].starts_with("FROM --platform=$BUILDPLATFORM rust:")
            && froms[0].ends_with(" AS builder"),
        "{}",
        froms[0]
    );
    assert!(!froms[1].contains("--platform"), "{}", froms[1]);
    let builder =
        &dockerfile[dockerfile.find(froms[0]).unwrap()..dockerfile.find(froms[1]).unwrap()];
    assert!(builder.contains("\nARG TARGETARCH\n"), "{builder}");
    assert!(builder.contains("--target \"$RUST_TARGET\""), "{builder}");
    assert!(
        builder.contains("cp \"target/$RUST_TARGET/release/demo\" /manager"),
        "{builder}"
    );
    assert!(dockerfile.contains("\nUSER 65532:65532\n"), "{dockerfile}");

    // The mapping: the `case` of the Dockerfile's RUN, its line continuations joined.
    let joined = dockerfile.replace(" \\\n", "\n");
    let start = joined.find("    case \"$arch\" in").unwrap();
    let end = joined[start..].find("esac;").unwrap() + start + "esac;".len();
    let mapping = &joined[start..end];

    let makefile = std::fs::read_to_string(dir.path().join("Makefile")).unwrap();
    let platforms = makefile
        .lines()
        .find_map(|l| l.strip_prefix("PLATFORMS ?= "))
        .unwrap();
    let expected = [
        (
            "amd64",
            "x86_64-unknown-linux-gnu",
            "x86-64-linux-gnu",
            "amd64",
        ),
        (
            "arm64",
            "aarch64-unknown-linux-gnu",
            "aarch64-linux-gnu",
            "arm64",
        ),
        (
            "s390x",
            "s390x-unknown-linux-gnu",
            "s390x-linux-gnu",
            "s390x",
        ),
        (
            "ppc64le",
            "powerpc64le-unknown-linux-gnu",
            "powerpc64le-linux-gnu",
            "ppc64el",
        ),
    ];
    let platforms: Vec<&str> = platforms.split(',').collect();
    assert!(platforms.len() >= 2, "{platforms:?}");
    for platform in platforms {
        let arch = platform.strip_prefix("linux/").unwrap();
        let script = format!("set -eu; arch={arch}; {mapping} echo \"$target $gnu $deb\"");
        let output = Command::new("sh").args(["-c", &script]).output().unwrap();
        assert!(
            output.status.success(),
            "{platform}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let got = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let (_, target, gnu, deb) = expected
            .iter()
            .find(|e| e.0 == arch)
            .unwrap_or_else(|| panic!("{platform}: no expectation for it"));
        assert_eq!(got, format!("{target} {gnu} {deb}"), "{platform}");
    }
    let unknown = format!("set -eu; arch=mips; {mapping}");
    let output = Command::new("sh").args(["-c", &unknown]).output().unwrap();
    assert!(!output.status.success(), "an unknown TARGETARCH is refused");
}
