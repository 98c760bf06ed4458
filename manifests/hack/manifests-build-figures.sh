#!/usr/bin/env bash
# What the first `make manifests` of a new project costs, rerunnable by anyone on one machine:
#   1. rkb: a project from `rkb init` + `rkb create api` (the Memcached skeleton) with an empty
#      target directory: cold `make manifests`, then warm after an edit of the types, and the
#      crates each compiles;
#   2. the floor: a crate holding only the same API types with rkb-runtime's `manifests`
#      feature and kube's `derive` (no client, runtime, TLS or tokio): what a build of only
#      what the CRDs need would cost, cold and warm;
#   3. controller-gen v0.21.0 on the CronJob types of cronjob-controller-gen/ (kubebuilder's
#      tutorial API, larger than the skeleton): `go install` with an empty build cache (the
#      module downloads are cached first, as cargo's are), the first run, and a warm run.
# Prints one line per figure, and the machine's load, which skews every figure.
# Usage: manifests/hack/manifests-build-figures.sh [WORK_DIR]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
cd "$repo"
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only
cargo build --quiet --locked -p rkb
rkb="$repo/target/debug/rkb"
log="$work/last.log"
# Seconds (wall) a command takes; its output goes to $log.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
  end=$(date +%s.%N)
  echo "$start $end" | awk '{ printf "%.1f", $2 - $1 }'
}
compiled() { grep -c '^ *Compiling ' "$log" || true; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== 1. rkb: make manifests in a new project"
project="$work/memcached-operator"
rm -rf "$project" "$work/target-project"
mkdir -p "$project"
"$rkb" init --domain example.com --dir "$project" >/dev/null
"$rkb" create api --group cache --version v1alpha1 --kind Memcached --dir "$project" >/dev/null
export CARGO_TARGET_DIR="$work/target-project"
# Downloads are not build time: fetch first, as a warm cargo cache would hold them.
(cd "$project" && cargo fetch --quiet)
t=$(cd "$project" && CARGO_TERM_VERBOSE=false seconds make manifests CARGO="cargo --color never")
echo "rkb cold make manifests: ${t} s, $(compiled) crates compiled"
types="$project/src/api/cache/v1alpha1/memcached.rs"
echo "// edited" >>"$types"
t=$(cd "$project" && seconds make manifests CARGO="cargo --color never")
echo "rkb warm make manifests (types edited): ${t} s, $(compiled) crates compiled"
echo "target dir: $(du -sh "$CARGO_TARGET_DIR" | cut -f1)"

echo "== 2. the floor: only the API types and what the CRD needs"
floor="$work/floor"
rm -rf "$floor" "$work/target-floor"
mkdir -p "$floor/src"
cp -r "$project/src/api" "$floor/src/api"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
cat >"$floor/Cargo.toml" <<EOF
[package]
name = "manifests-floor"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
k8s-openapi = { version = "0.29", features = ["v1_34", "schemars"] }
kube = { version = "5.0", default-features = false, features = ["derive"] }
rkb-runtime = { version = "$version", default-features = false, features = ["manifests"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"

[patch.crates-io]
rkb-core = { path = "$repo/core" }
rkb-derive = { path = "$repo/derive" }
rkb-manifests = { path = "$repo/manifests" }
rkb-runtime = { path = "$repo/runtime" }

[workspace]
EOF
cat >"$floor/src/main.rs" <<'EOF'
mod api;

fn main() {
    let crd = rkb_runtime::crd::<api::cache::v1alpha1::Memcached>().expect("a valid CRD");
    println!("{}", serde_json::to_string(&crd).expect("JSON"));
}
EOF
export CARGO_TARGET_DIR="$work/target-floor"
(cd "$floor" && cargo fetch --quiet)
t=$(cd "$floor" && seconds cargo run --color never)
echo "floor cold build and run: ${t} s, $(compiled) crates compiled"
echo "// edited" >>"$floor/src/api/cache/v1alpha1/memcached.rs"
t=$(cd "$floor" && seconds cargo run --color never)
echo "floor warm build and run (types edited): ${t} s, $(compiled) crates compiled"
unset CARGO_TARGET_DIR

echo "== 3. controller-gen v0.21.0 on the CronJob types"
here="$repo/manifests/hack/cronjob-controller-gen"
export GOPATH="$work/gopath" GOCACHE="$work/gocache" GOFLAGS=-modcacherw
rm -rf "$GOCACHE" "$GOPATH/bin"
go mod download -x sigs.k8s.io/controller-tools@v0.21.0 >/dev/null 2>&1 || true
(cd "$here" && go mod download)
t=$(seconds go install sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0)
echo "controller-gen cold go install: ${t} s"
out="$work/controller-gen-out"
t=$(cd "$here" && seconds "$GOPATH/bin/controller-gen" crd paths=./... output:crd:dir="$out")
echo "controller-gen first run (loads and type-checks the API packages): ${t} s"
t=$(cd "$here" && seconds "$GOPATH/bin/controller-gen" crd paths=./... output:crd:dir="$out")
echo "controller-gen warm run: ${t} s"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
