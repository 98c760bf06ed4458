//! `rkb setup-envtest`: kube-apiserver and etcd for envtest (and, on request,
//! kube-controller-manager), built from Go modules into a versioned cache and printed as the directory to use as `KUBEBUILDER_ASSETS`, as
//! controller-runtime's `setup-envtest use -p path` prints one. Release binaries cannot be
//! downloaded everywhere rkb runs, but the Go module proxy can be reached: the Go module that
//! builds them (`envtest/assets/` in rkb's repository) is compiled into rkb.
//!
//!   KUBEBUILDER_ASSETS set  -> its binaries are used as they are; nothing is built
//!   cached build present    -> reused
//!   otherwise               -> built with `go build`, under a lock, and published by rename
//!
//! A cache entry is published whole with etcd and kube-apiserver; an optional binary
//! (`--with controller-manager`) is built later into the same entry, each by a rename.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};
use clap::ValueEnum as _;
use include_dir::{Dir, include_dir};
use sha2::{Digest as _, Sha256};

use crate::cli::{EnvtestExtra, SetupEnvtestArgs};

/// `envtest/assets/`: a main per binary (`cmd/`), and for each Kubernetes release rkb can
/// build, the go.mod and go.sum that pin it (`releases/<version>/`).
static MODULE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/envtest-assets");

/// A Kubernetes release rkb can build envtest binaries of: its go.mod and go.sum.
#[derive(Debug, Clone, Copy)]
pub struct Release {
    /// As Kubernetes names it, e.g. `v1.37.2`.
    pub version: &'static str,
    go_mod: &'static str,
    go_sum: &'static str,
}

impl Release {
    /// The version of `module` that go.mod requires.
    fn pinned(&self, module: &str) -> &'static str {
        self.go_mod
            .lines()
            .filter_map(|line| line.trim().strip_prefix(module))
            .find_map(|rest| rest.strip_prefix(' '))
            .map(str::trim)
            .unwrap_or_default()
    }

    /// The etcd release Kubernetes' own go.mod pairs with this one.
    pub fn etcd(&self) -> &'static str {
        self.pinned(ETCD_MODULE)
    }

    /// The oldest Go that builds it (go.mod's `go` line).
    fn go(&self) -> &'static str {
        self.go_mod
            .lines()
            .find_map(|line| line.strip_prefix("go "))
            .unwrap_or("1.24")
    }

    /// The cache key of the module: the first 12 hex digits of the SHA-256 of go.mod,
    /// go.sum and the mains, in build order.
    fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(self.go_mod);
        hasher.update(self.go_sum);
        for binary in BINARIES {
            hasher.update(module_file(&main_file(binary)));
        }
        format!("{:x}", hasher.finalize())[..12].to_owned()
    }
}

/// The release new projects record and `rkb setup-envtest` builds unless asked for another;
/// the same as `rkb_envtest::KUBERNETES_VERSION` (a test holds them together).
pub const DEFAULT_RELEASE: &str = "v1.37.2";

/// Every release under `releases/`, oldest first.
pub fn releases() -> Vec<Release> {
    let mut releases: Vec<Release> = MODULE
        .get_dir("releases")
        .map(|dir| dir.dirs().collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|dir| {
            let file = |name: &str| {
                dir.get_file(dir.path().join(name))
                    .and_then(|f| f.contents_utf8())
            };
            Some(Release {
                version: dir.path().file_name()?.to_str()?,
                go_mod: file("go.mod")?,
                go_sum: file("go.sum")?,
            })
        })
        .collect();
    releases.sort_by_key(|r| version_key(r.version));
    releases
}

/// The release new projects test against, [`DEFAULT_RELEASE`].
pub fn default_release() -> Release {
    *releases()
        .iter()
        .find(|r| r.version == DEFAULT_RELEASE)
        .expect("envtest/assets/releases/ holds the default release")
}

/// `v1.37.2` as numbers, for ordering.
fn version_key(version: &str) -> Vec<u64> {
    version
        .trim_start_matches('v')
        .split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// The release `requested` names (`1.37.2` or `v1.37.2`), or the default.
pub fn release(requested: Option<&str>) -> anyhow::Result<Release> {
    let Some(requested) = requested else {
        return Ok(default_release());
    };
    let wanted = format!("v{}", requested.trim().trim_start_matches('v'));
    let all = releases();
    if let Some(release) = all.iter().find(|r| r.version == wanted) {
        return Ok(*release);
    }
    let known: Vec<&str> = all
        .iter()
        .map(|r| r.version.trim_start_matches('v'))
        .collect();
    let default = DEFAULT_RELEASE.trim_start_matches('v');
    bail!(
        "--kubernetes-version {requested}: this rkb cannot build envtest binaries of Kubernetes {wanted}.\n  \
         It builds {} ({default} unless asked for another).\n  \
         Use one of them, e.g.  rkb setup-envtest --kubernetes-version {default}  \
         (in a project: make test ENVTEST_K8S_VERSION={default}),\n  \
         or point KUBEBUILDER_ASSETS at binaries of {wanted}, e.g. from controller-runtime's tool:  \
         export KUBEBUILDER_ASSETS=\"$(setup-envtest use -p path {})\"",
        known.join(", "),
        wanted.trim_start_matches('v')
    );
}

/// A binary of a cache entry: the package of the Go module that builds it, and the upstream
/// module it comes from (pinned in go.mod).
struct Binary {
    name: &'static str,
    package: &'static str,
    module: &'static str,
    /// Built with Kubernetes' version ldflags, so `/version` names the release.
    versioned: bool,
    /// Built only when asked for (`--with`), because most tests do not need it.
    extra: Option<EnvtestExtra>,
}

/// The binaries a cache entry holds, in build order.
const BINARIES: &[Binary] = &[
    Binary {
        name: "etcd",
        package: "./cmd/etcd",
        module: ETCD_MODULE,
        versioned: false,
        extra: None,
    },
    Binary {
        name: "kube-apiserver",
        package: "./cmd/kube-apiserver",
        module: KUBERNETES_MODULE,
        versioned: true,
        extra: None,
    },
    Binary {
        name: "kube-controller-manager",
        package: "./cmd/kube-controller-manager",
        module: KUBERNETES_MODULE,
        versioned: true,
        extra: Some(EnvtestExtra::ControllerManager),
    },
];

/// The binaries a run with these extras wants, in build order.
fn wanted(with: &[EnvtestExtra]) -> impl Iterator<Item = &'static Binary> + '_ {
    BINARIES
        .iter()
        .filter(move |b| b.extra.is_none_or(|extra| with.contains(&extra)))
}
const KUBERNETES_MODULE: &str = "k8s.io/kubernetes";
const ETCD_MODULE: &str = "go.etcd.io/etcd/server/v3";

/// Lines of Go's output shown when a build fails.
const TAIL_LINES: usize = 25;

/// Where the environment points: the variables are read once, so tests can pass their own.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub kubebuilder_assets: Option<OsString>,
    pub cache: Option<OsString>,
    pub xdg_cache_home: Option<OsString>,
    pub home: Option<OsString>,
    /// The `go` command (`GO`, else `go` on PATH).
    pub go: Option<OsString>,
}

impl Env {
    pub fn from_process() -> Self {
        let var = std::env::var_os;
        Env {
            kubebuilder_assets: var("KUBEBUILDER_ASSETS").filter(|v| !v.is_empty()),
            cache: var("RKB_ENVTEST_CACHE"),
            xdg_cache_home: var("XDG_CACHE_HOME"),
            home: var("HOME"),
            go: var("GO"),
        }
    }

    /// `RKB_ENVTEST_CACHE`, else `$XDG_CACHE_HOME/rkb/envtest`, else `~/.cache/rkb/envtest`
    /// (the rule rkb-envtest looks up binaries by).
    fn cache_dir(&self) -> PathBuf {
        if let Some(dir) = &self.cache {
            return dir.into();
        }
        let base = self
            .xdg_cache_home
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| self.home.as_ref().map(|h| Path::new(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        base.join("rkb").join("envtest")
    }

    fn go(&self) -> OsString {
        self.go.clone().unwrap_or_else(|| "go".into())
    }
}

pub fn setup_envtest(args: &SetupEnvtestArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let release = release(args.kubernetes_version.as_deref())?;
    let dir = assets_dir(
        &Env::from_process(),
        release,
        &args.with,
        &mut std::io::stderr(),
    )?;
    writeln!(out, "{}", dir.display())?;
    Ok(())
}

/// The directory of usable binaries (those of `with` included), building them when
/// needed; progress goes to `log`.
pub fn assets_dir(
    env: &Env,
    release: Release,
    with: &[EnvtestExtra],
    log: &mut dyn Write,
) -> anyhow::Result<PathBuf> {
    let (k8s, etcd) = (release.version, release.etcd());
    if let Some(dir) = &env.kubebuilder_assets {
        return given_assets(PathBuf::from(dir), with);
    }
    let cache = env.cache_dir();
    let dir = cache.join(format!(
        "k8s-{k8s}-{}-{}-{}",
        go_os(),
        go_arch(),
        release.hash()
    ));
    if missing_binaries(&dir, with).is_empty() {
        writeln!(
            log,
            "setup-envtest: using the cached build in {}",
            dir.display()
        )?;
        return Ok(dir);
    }
    check_go(env, release)?;
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create the envtest cache {}", cache.display()))?;
    // One build at a time per cache: a second `rkb setup-envtest` (two `make test` at once)
    // waits here, then finds the first one's build.
    let lock = File::create(cache.join(".lock"))
        .with_context(|| format!("cannot create a lock file in {}", cache.display()))?;
    lock.lock()
        .with_context(|| format!("cannot lock {}", cache.join(".lock").display()))?;
    if missing_binaries(&dir, with).is_empty() {
        writeln!(
            log,
            "setup-envtest: using the build another run just finished in {}",
            dir.display()
        )?;
        return Ok(dir);
    }
    remove_leftovers(&cache);
    let build = tempfile::Builder::new()
        .prefix(".build.")
        .tempdir_in(&cache)
        .with_context(|| format!("cannot create a build directory in {}", cache.display()))?;
    // An entry holds etcd and kube-apiserver or nothing, so only extras can be missing
    // from one that exists.
    let to_build: Vec<&Binary> = wanted(with)
        .filter(|b| missing_binaries(&dir, with).contains(&b.name))
        .collect();
    let names: Vec<&str> = to_build.iter().map(|b| b.name).collect();
    writeln!(
        log,
        "setup-envtest: building {} (Kubernetes {k8s}, etcd {etcd}) from Go modules into {} (cold: several minutes)",
        names.join(", "),
        dir.display()
    )?;
    let start = std::time::Instant::now();
    let bin = build.path().join("bin");
    build_into(env, build.path(), release, &to_build, log)?;
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| !is_executable(&bin.join(name)))
        .collect();
    if !missing.is_empty() {
        bail!(
            "setup-envtest: `go build` reported success but left no {} in {}; nothing was cached.",
            missing.join(" and "),
            build.path().display()
        );
    }
    publish(&bin, &dir, &names)?;
    writeln!(
        log,
        "setup-envtest: built in {} s",
        start.elapsed().as_secs()
    )?;
    Ok(dir)
}

/// `KUBEBUILDER_ASSETS`, when it holds every binary asked for.
fn given_assets(dir: PathBuf, with: &[EnvtestExtra]) -> anyhow::Result<PathBuf> {
    let missing = missing_binaries(&dir, with);
    if !missing.is_empty() {
        bail!(
            "KUBEBUILDER_ASSETS={} has no executable {}.\n  \
             Point it at a directory holding {} (as controller-runtime's \
             `setup-envtest use -p path` prints one, plus what --with asks for),\n  \
             or unset it to have rkb build them:  unset KUBEBUILDER_ASSETS; rkb setup-envtest{}",
            dir.display(),
            missing.join(" and "),
            wanted(with).map(|b| b.name).collect::<Vec<_>>().join(", "),
            with_flags(with)
        );
    }
    Ok(dir)
}

/// Moves the binaries `names` built in `bin` into the cache entry `dir`. A rename
/// publishes the entry whole, and then each extra: a build cut short never leaves a
/// half-filled entry or a half-written binary.
fn publish(bin: &Path, dir: &Path, names: &[&str]) -> anyhow::Result<()> {
    if dir.exists() {
        for name in names {
            std::fs::rename(bin.join(name), dir.join(name))
                .with_context(|| format!("cannot move {name} into {}", dir.display()))?;
        }
    } else {
        std::fs::rename(bin, dir)
            .with_context(|| format!("cannot move the new build into {}", dir.display()))?;
    }
    Ok(())
}

fn check_go(env: &Env, release: Release) -> anyhow::Result<()> {
    let (k8s, etcd) = (release.version, release.etcd());
    let found = Command::new(env.go())
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        bail!(
            "cannot build kube-apiserver {k8s} and etcd {etcd}: Go is not installed (no `{}` command).\n  \
             Either install Go >= {} (https://go.dev/dl, or your distribution's golang package) and run again,\n  \
             or point KUBEBUILDER_ASSETS at existing envtest binaries, for example from controller-runtime's tool:\n    \
             go install sigs.k8s.io/controller-runtime/tools/setup-envtest@latest\n    \
             export KUBEBUILDER_ASSETS=\"$(setup-envtest use -p path {})\"",
            env.go().to_string_lossy(),
            release.go(),
            k8s.trim_start_matches('v')
        );
    }
    Ok(())
}

/// The `--with` flags that ask for these extras again, for messages.
fn with_flags(with: &[EnvtestExtra]) -> String {
    with.iter()
        .map(|extra| {
            let value = extra.to_possible_value().expect("no skipped variants");
            format!(" --with {}", value.get_name())
        })
        .collect()
}

/// Writes the module of `release` into `build/src` and builds `binaries` into `build/bin`.
fn build_into(
    env: &Env,
    build: &Path,
    release: Release,
    binaries: &[&Binary],
    log: &mut dyn Write,
) -> anyhow::Result<()> {
    let k8s = release.version;
    let src = build.join("src");
    let write_module = || -> std::io::Result<()> {
        std::fs::create_dir_all(&src)?;
        MODULE
            .get_dir("cmd")
            .map_or(Ok(()), |cmd| cmd.extract(&src))?;
        std::fs::write(src.join("go.mod"), release.go_mod)?;
        std::fs::write(src.join("go.sum"), release.go_sum)
    };
    write_module().with_context(|| format!("cannot write the Go module into {}", src.display()))?;
    for binary in binaries {
        writeln!(log, "setup-envtest: go build {}", binary.package)?;
        let output = Command::new(env.go())
            .args(["build", "-mod=readonly", "-trimpath", "-ldflags"])
            .arg(if binary.versioned {
                version_ldflags(k8s)
            } else {
                "-s -w".to_owned()
            })
            .arg("-o")
            .arg(build.join("bin").join(binary.name))
            .arg(binary.package)
            .current_dir(&src)
            .env("CGO_ENABLED", "0")
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run `{} build`", env.go().to_string_lossy()))?;
        if !output.status.success() {
            bail!("{}", build_failure(binary, &output));
        }
    }
    Ok(())
}

/// What a failed `go build` says: the step, how it ended, and the end of Go's output.
fn build_failure(binary: &Binary, output: &std::process::Output) -> String {
    use std::os::unix::process::ExitStatusExt;
    let ended = match (output.status.code(), output.status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(9)) => {
            "killed by SIGKILL (out of memory? a timeout?; rerun on a less loaded machine)"
                .to_owned()
        }
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "an unknown end".to_owned(),
    };
    let text = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(TAIL_LINES)..];
    let Binary {
        name,
        package,
        module,
        ..
    } = binary;
    format!(
        "setup-envtest: building {name} failed: `go build {package}` (module {module}) ended with {ended}.\n  \
         Last lines of Go's output:\n    {}\n  \
         A network error means the Go module proxy is unreachable (check GOPROXY); a checksum or \
         zip error, a broken module cache (`go clean -modcache`, then run again).",
        if tail.is_empty() {
            "(none)".to_owned()
        } else {
            tail.join("\n    ")
        }
    )
}

fn version_ldflags(k8s: &str) -> String {
    let minor = k8s
        .trim_start_matches("v1.")
        .split('.')
        .next()
        .unwrap_or_default();
    let mut flags = "-s -w".to_owned();
    for (var, value) in [
        ("gitVersion", k8s),
        ("gitMajor", "1"),
        ("gitMinor", minor),
        ("gitTreeState", "clean"),
        ("buildDate", "1970-01-01T00:00:00Z"),
        ("gitCommit", "0000000000000000000000000000000000000000"),
    ] {
        flags.push_str(&format!(" -X k8s.io/component-base/version.{var}={value}"));
    }
    flags
}

/// Build directories of runs that were killed before they could clean up.
fn remove_leftovers(cache: &Path) {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(".build.") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn missing_binaries(dir: &Path, with: &[EnvtestExtra]) -> Vec<&'static str> {
    wanted(with)
        .map(|binary| binary.name)
        .filter(|name| !is_executable(&dir.join(name)))
        .collect()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn main_file(binary: &Binary) -> String {
    format!("{}/main.go", binary.package.trim_start_matches("./"))
}

fn module_file(path: &str) -> &'static str {
    MODULE
        .get_file(path)
        .and_then(|f| f.contents_utf8())
        .unwrap_or_default()
}

/// Go's names for this machine, which the cache directory is named by.
fn go_os() -> &'static str {
    std::env::consts::OS
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_versions_come_from_each_release_s_go_mod() {
        let releases = releases();
        assert!(releases.len() >= 2, "{releases:?}");
        for release in &releases {
            let k8s = release.version;
            assert_eq!(
                release.pinned(KUBERNETES_MODULE),
                k8s,
                "releases/{k8s}/go.mod"
            );
            assert!(release.etcd().starts_with("v3."), "{release:?}");
            assert!(release.go().starts_with("1."), "{release:?}");
            assert!(version_ldflags(k8s).contains(&format!("gitVersion={k8s}")));
        }
        assert!(releases.iter().any(|r| r.version == DEFAULT_RELEASE));
    }

    /// rkb and rkb-envtest name the same default: new projects test on what rkb's own
    /// tests run on.
    #[test]
    fn the_default_release_is_rkb_envtest_s() {
        assert_eq!(DEFAULT_RELEASE, rkb_envtest::KUBERNETES_VERSION);
    }

    #[test]
    fn a_release_is_named_with_or_without_its_v() {
        assert_eq!(release(None).unwrap().version, DEFAULT_RELEASE);
        for known in releases() {
            let version = known.version;
            assert_eq!(release(Some(version)).unwrap().version, version);
            let bare = version.trim_start_matches('v');
            assert_eq!(release(Some(bare)).unwrap().version, version);
        }
    }

    #[test]
    fn an_unknown_release_is_refused_with_the_ones_it_builds() {
        let message = release(Some("1.36.0")).unwrap_err().to_string();
        let default = DEFAULT_RELEASE.trim_start_matches('v');
        for expected in [
            "--kubernetes-version 1.36.0",
            "cannot build envtest binaries of Kubernetes v1.36.0",
            "It builds 1.34.4, 1.37.2 (1.37.2 unless asked for another)",
            &format!("rkb setup-envtest --kubernetes-version {default}"),
            &format!("make test ENVTEST_K8S_VERSION={default}"),
            "setup-envtest use -p path 1.36.0",
        ] {
            assert!(
                message.contains(expected),
                "{expected:?} not in:\n{message}"
            );
        }
    }

    /// A stand-in for `go` that answers `go version`, and for `go build -o OUT` runs
    /// `body` (a shell snippet that sees $out), counting its builds in `count`.
    fn fake_go(dir: &Path, body: &str) -> OsString {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("go");
        let script = format!(
            "#!/bin/sh\n[ \"$1\" = version ] && exit 0\n\
             while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=\"$2\"; shift; done\n\
             echo build >> {}/count\n{body}\n",
            dir.display()
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.into()
    }

    fn env(cache: &Path, go: OsString) -> Env {
        Env {
            cache: Some(cache.into()),
            go: Some(go),
            ..Env::default()
        }
    }

    fn builds(dir: &Path) -> usize {
        std::fs::read_to_string(dir.join("count")).map_or(0, |c| c.lines().count())
    }

    #[test]
    fn kubebuilder_assets_without_the_binaries_is_refused_with_what_to_do() {
        let tmp = tempfile::tempdir().unwrap();
        let env = Env {
            kubebuilder_assets: Some(tmp.path().into()),
            ..Env::default()
        };
        let message = assets_dir(&env, default_release(), &[], &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("has no executable etcd and kube-apiserver"),
            "{message}"
        );
        assert!(
            message.contains("unset KUBEBUILDER_ASSETS; rkb setup-envtest"),
            "{message}"
        );
    }

    #[test]
    fn without_go_it_says_how_to_get_go_or_binaries() {
        let tmp = tempfile::tempdir().unwrap();
        let env = env(tmp.path(), tmp.path().join("no-go").into());
        let message = assets_dir(&env, default_release(), &[], &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(message.contains("Go is not installed"), "{message}");
        assert!(
            message.contains("setup-envtest use -p path 1.37"),
            "{message}"
        );
        assert!(
            std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
            "nothing is written"
        );
    }

    #[test]
    fn a_failed_build_names_the_step_the_module_and_go_s_last_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let go = fake_go(
            tmp.path(),
            "echo 'go: downloading go.etcd.io/etcd/server/v3 v3.6.4' >&2\n\
             echo 'verifying go.etcd.io/etcd/server/v3@v3.6.4: checksum mismatch' >&2\nexit 1",
        );
        let cache = tmp.path().join("cache");
        let message = assets_dir(&env(&cache, go), default_release(), &[], &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("building etcd failed: `go build ./cmd/etcd`"),
            "{message}"
        );
        assert!(
            message.contains("(module go.etcd.io/etcd/server/v3) ended with exit status 1"),
            "{message}"
        );
        assert!(message.contains("checksum mismatch"), "{message}");
        assert!(message.contains("go clean -modcache"), "{message}");
        // Nothing half-built is left in the cache.
        let left: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [".lock"], "{left:?}");
    }

    #[test]
    fn concurrent_runs_build_once_and_both_get_the_binaries() {
        let tmp = tempfile::tempdir().unwrap();
        let go = fake_go(
            tmp.path(),
            "sleep 1; mkdir -p \"$(dirname \"$out\")\"; printf x > \"$out\"; chmod +x \"$out\"",
        );
        let cache = tmp.path().join("cache");
        // A killed run's build directory, which the next run clears.
        std::fs::create_dir_all(cache.join(".build.killed")).unwrap();
        let runs: Vec<_> = (0..2)
            .map(|_| {
                let env = env(&cache, go.clone());
                std::thread::spawn(move || {
                    assets_dir(&env, default_release(), &[], &mut Vec::new())
                })
            })
            .collect();
        let dirs: Vec<PathBuf> = runs
            .into_iter()
            .map(|r| r.join().unwrap().unwrap())
            .collect();
        assert_eq!(dirs[0], dirs[1]);
        assert!(missing_binaries(&dirs[0], &[]).is_empty());
        let base = wanted(&[]).count();
        assert_eq!(builds(tmp.path()), base, "one build of each binary");
        assert!(!cache.join(".build.killed").exists());
        // And the next run takes the cache.
        let mut log = Vec::new();
        assets_dir(&env(&cache, go.clone()), default_release(), &[], &mut log).unwrap();
        assert!(
            String::from_utf8(log)
                .unwrap()
                .contains("using the cached build")
        );
        assert_eq!(builds(tmp.path()), base);

        // An extra goes into the same entry, built alone; the entry's binaries stay.
        let extra = [EnvtestExtra::ControllerManager];
        let mut log = Vec::new();
        let dir = assets_dir(
            &env(&cache, go.clone()),
            default_release(),
            &extra,
            &mut log,
        )
        .unwrap();
        assert_eq!(dir, dirs[0]);
        assert!(missing_binaries(&dir, &extra).is_empty());
        assert_eq!(builds(tmp.path()), base + 1);
        let log = String::from_utf8(log).unwrap();
        assert!(log.contains("building kube-controller-manager ("), "{log}");
        assets_dir(&env(&cache, go), default_release(), &extra, &mut Vec::new()).unwrap();
        assert_eq!(builds(tmp.path()), base + 1, "then cached");
    }

    #[test]
    fn kubebuilder_assets_without_an_extra_asked_for_says_how_to_get_it() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["etcd", "kube-apiserver"] {
            std::fs::write(tmp.path().join(name), "").unwrap();
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::Permissions::from_mode(0o755);
            std::fs::set_permissions(tmp.path().join(name), mode).unwrap();
        }
        let env = Env {
            kubebuilder_assets: Some(tmp.path().into()),
            ..Env::default()
        };
        assert!(assets_dir(&env, default_release(), &[], &mut Vec::new()).is_ok());
        let extra = [EnvtestExtra::ControllerManager];
        let message = assets_dir(&env, default_release(), &extra, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("has no executable kube-controller-manager"),
            "{message}"
        );
        assert!(
            message.contains("rkb setup-envtest --with controller-manager"),
            "{message}"
        );
    }

    #[test]
    fn every_module_file_is_embedded() {
        for path in BINARIES.iter().map(main_file) {
            assert!(!module_file(&path).is_empty(), "{path} is not embedded");
        }
        for release in releases() {
            assert!(release.go_sum.contains("k8s.io/"), "{release:?}");
            assert_eq!(release.hash().len(), 12);
        }
        let hashes: std::collections::BTreeSet<String> =
            releases().iter().map(Release::hash).collect();
        assert_eq!(hashes.len(), releases().len(), "one cache key per release");
    }
}
