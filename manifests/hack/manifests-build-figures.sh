#!/usr/bin/env bash
# What `make manifests` costs in a new project, against controller-gen, rerunnable by anyone on
# one machine. Each part starts from an empty target directory (and, for Go, an empty build
# cache); downloads are fetched first, since a warm cargo or Go module cache would hold them.
#   before:  a project from `rkb init` + `rkb create api` (the Memcached skeleton) as rkb
#            scaffolds it: cold `make manifests`, warm after an edit of the types, then the
#            build `make test` adds (`cargo test --no-run`), and both again after another edit
#            (the loop of changing the API and running the tests);
#   light:   the same project with manifests-light-layout.patch applied (the prototype of a
#            light layout: an `operator` default feature holds the client, runtime and
#            controllers, `make manifests` builds with --no-default-features, and the RBAC
#            rules sit on a unit struct per controller in src/rbac.rs): the same figures, so
#            that what the light `make manifests` saves can be weighed against what `make test`
#            must then build twice (crates needed in both feature sets). The patch is a diff of
#            such a project: when the scaffold changes and it no longer applies, make the same
#            edits in a new project and write it again with `git diff -- Cargo.toml Makefile src`;
#   floor:   a crate holding only the same API types with rkb-runtime's `manifests` feature
#            and kube's `derive`: the least any `make manifests` of these types could build;
#   controller-gen: v0.21.0 on the CronJob types of cronjob-controller-gen/ (kubebuilder's
#            tutorial API, larger than the skeleton): `go install` with an empty build cache,
#            the first run, and a warm run.
# Prints one line per figure, wall-clock and CPU seconds, and the machine's load before and
# after each part, which skews every figure (CPU seconds much less than wall-clock ones).
# Usage: manifests/hack/manifests-build-figures.sh [WORK_DIR] [PART...]
#   (parts: before light floor controller-gen; all by default)
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
shift || true
parts="${*:-before light floor controller-gen}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
cd "$repo"
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only CARGO_PROFILE_TEST_DEBUG=line-tables-only
cargo build --quiet --locked -p rkb
rkb="${CARGO_TARGET_DIR:-$repo/target}/debug/rkb"
log="$work/last.log"
# "WALL CPU": the seconds a command takes, wall-clock and CPU (user + system, its children
# included: what the machine's load does not inflate as much); its output goes to $log.
seconds() {
  /usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
  awk '{ printf "%.1f %.1f", $1, $2 + $3 }' "$work/time"
}
# "WALL s (CPU s)" from one or more "WALL CPU" pairs, summed.
fmt() { echo "$@" | awk '{ for (i = 1; i <= NF; i += 2) { w += $i; c += $(i + 1) } printf "%.1f s (CPU %.1f s)", w, c }'; }
load() { echo "load: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"; }
# Library crates in the target directory so far (make manifests runs cargo --quiet), and how
# many of them were built more than once: for the host (proc macros, build scripts) and the
# target, or in two feature sets.
crates() {
  local deps="$CARGO_TARGET_DIR/debug/deps"
  echo "$(find "$deps" -name '*.rlib' | wc -l) library crates built ($(find "$deps" -name '*.rlib' |
    sed 's|.*/lib\(.*\)-[0-9a-f]*\.rlib|\1|' | sort | uniq -d | wc -l) of them more than once)"
}
# A new project from `rkb init` + `rkb create api`, in $work/$1/memcached-operator.
new_project() {
  local project="$work/$1/memcached-operator"
  rm -rf "$work/$1"
  mkdir -p "$project"
  "$rkb" init --domain example.com --dir "$project" >/dev/null
  "$rkb" create api --group cache --version v1alpha1 --kind Memcached --dir "$project" >/dev/null
  echo "$project"
}
# Cold and warm `make manifests` in $2 (label $1), then the build `make test` adds.
measure_project() {
  local label="$1" project="$2" t manifests test
  export CARGO_TARGET_DIR="$work/target-$label"
  rm -rf "$CARGO_TARGET_DIR"
  (cd "$project" && cargo fetch --quiet)
  load
  manifests=$(cd "$project" && seconds make manifests CARGO="cargo --color never")
  echo "$label: cold make manifests: $(fmt $manifests), $(crates)"
  echo "// edited" >>"$project/src/api/cache/v1alpha1/memcached.rs"
  t=$(cd "$project" && seconds make manifests CARGO="cargo --color never")
  echo "$label: warm make manifests (types edited): $(fmt $t)"
  test=$(cd "$project" && seconds cargo test --color never --no-run)
  echo "$label: then the test build (cargo test --no-run): $(fmt $test), $(crates)"
  echo "$label: cold make manifests + test build: $(fmt $manifests $test)"
  # The loop of a user changing the API: edit the types, `make test` (manifests, then tests).
  echo "// edited again" >>"$project/src/api/cache/v1alpha1/memcached.rs"
  manifests=$(cd "$project" && seconds make manifests CARGO="cargo --color never")
  test=$(cd "$project" && seconds cargo test --color never --no-run)
  echo "$label: warm make manifests + test build (types edited): $(fmt $manifests $test) = $(fmt $manifests) + $(fmt $test)"
  echo "$label: target dir: $(du -sh "$CARGO_TARGET_DIR" | cut -f1)"
  load
  rm -rf "$CARGO_TARGET_DIR"
  unset CARGO_TARGET_DIR
}

for part in $parts; do
  case "$part" in
  before)
    echo "== before: make manifests in a new project as rkb scaffolds it"
    measure_project before "$(new_project before)"
    ;;
  light)
    echo "== light: the same project with manifests-light-layout.patch"
    project="$(new_project light)"
    (cd "$project" && patch --quiet -p1 <"$repo/manifests/hack/manifests-light-layout.patch")
    measure_project light "$project"
    ;;
  floor)
    echo "== floor: only the API types and what the CRD needs"
    project="$(new_project floor-project)"
    floor="$work/floor"
    rm -rf "$floor"
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
k8s-openapi = { version = "0.29", features = ["v1_37", "schemars"] }
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
    println!("{}", serde_json::to_string(&crd.into_definition()).expect("JSON"));
}
EOF
    export CARGO_TARGET_DIR="$work/target-floor"
    rm -rf "$CARGO_TARGET_DIR"
    (cd "$floor" && cargo fetch --quiet)
    load
    t=$(cd "$floor" && seconds cargo run --color never)
    echo "floor: cold build and run: $(fmt $t), $(crates)"
    echo "// edited" >>"$floor/src/api/cache/v1alpha1/memcached.rs"
    t=$(cd "$floor" && seconds cargo run --color never)
    echo "floor: warm build and run (types edited): $(fmt $t)"
    load
    rm -rf "$CARGO_TARGET_DIR"
    unset CARGO_TARGET_DIR
    ;;
  controller-gen)
    echo "== controller-gen v0.21.0 on the CronJob types"
    here="$repo/manifests/hack/cronjob-controller-gen"
    export GOCACHE="$work/gocache" GOBIN="$work/gobin" GOFLAGS=-modcacherw
    rm -rf "$GOCACHE" "$GOBIN"
    # Every module the install and the runs need, in the module cache (downloads are not build
    # time): the timed install then only asks the module proxy about the version (`go install
    # pkg@version` always does), and the runs may not use the network at all.
    go mod download sigs.k8s.io/controller-tools@v0.21.0
    (cd "$(go env GOMODCACHE)/sigs.k8s.io/controller-tools@v0.21.0" && go mod download)
    (cd "$here" && go mod download)
    load
    t=$(seconds go install sigs.k8s.io/controller-tools/cmd/controller-gen@v0.21.0)
    echo "controller-gen: cold go install (empty build cache): $(fmt $t)"
    out="$work/controller-gen-out"
    t=$(cd "$here" && seconds env GOPROXY=off "$GOBIN/controller-gen" crd paths=./... output:crd:dir="$out")
    echo "controller-gen: first run (loads and type-checks the API packages): $(fmt $t)"
    t=$(cd "$here" && seconds env GOPROXY=off "$GOBIN/controller-gen" crd paths=./... output:crd:dir="$out")
    echo "controller-gen: warm run: $(fmt $t)"
    load
    rm -rf "$GOCACHE"
    ;;
  *)
    echo "unknown part $part (before, light, floor, controller-gen)" >&2
    exit 2
    ;;
  esac
done
