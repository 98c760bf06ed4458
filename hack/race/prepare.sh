#!/usr/bin/env bash
# Prepares the two operators of issue #27's race (hack/race/race.rs, `make race`) in
# $RACE_DIR (default ~/.cache/rkb/race):
#
#   bin/go-manager, crds/go.yaml    kubebuilder's deploy-image Memcached operator, scaffolded
#                                   by kubebuilder itself (from the Go module proxy) and built
#                                   with `go build`; nothing of it is in this repository but
#                                   the race's knob for its MaxConcurrentReconciles
#   bin/rkb-manager, crds/rkb.yaml  the operator this checkout's `rkb init` + `rkb create api
#                                   --image` scaffold (cli/tests/commands/golden.rs' flags), built
#                                   --release against this checkout
#
# Go's caches (GOPATH, GOCACHE, GOMODCACHE) stay under $RACE_DIR, so reruns are warm; the
# Go project is scaffolded again only when KUBEBUILDER_VERSION changes, the rkb project on
# every run (it is this checkout's scaffold). A bench-only dependency: neither CI nor
# `cargo test` needs Go or anything here.
#
# Needs: go (1.26), cargo, make. Respects CARGO_TARGET_DIR.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
RACE_DIR=${RACE_DIR:-$HOME/.cache/rkb/race}
KUBEBUILDER_VERSION=${KUBEBUILDER_VERSION:-v4.16.0}
target=${CARGO_TARGET_DIR:-$repo/target}
mkdir -p "$RACE_DIR/bin" "$RACE_DIR/crds"
RACE_DIR=$(cd "$RACE_DIR" && pwd)

export GOPATH=$RACE_DIR/gopath
export GOCACHE=$RACE_DIR/gocache
export GOMODCACHE=$RACE_DIR/gopath/pkg/mod
export GOFLAGS=-buildvcs=false
export PATH=$GOPATH/bin:$PATH

step() { printf '\n== %s\n' "$*" >&2; }

# --- Go: kubebuilder's deploy-image Memcached ---------------------------------------------
go_dir=$RACE_DIR/go-memcached
marker=$go_dir/.scaffolded-by-kubebuilder-$KUBEBUILDER_VERSION
if [[ ! -f $marker ]]; then
    step "kubebuilder $KUBEBUILDER_VERSION (go install from the module proxy)"
    go install "sigs.k8s.io/kubebuilder/v4@$KUBEBUILDER_VERSION"
    step "scaffolding the Go operator in $go_dir"
    rm -rf "$go_dir"
    mkdir -p "$go_dir"
    (
        cd "$go_dir"
        kubebuilder init --domain example.com --repo example.com/memcached-operator
        kubebuilder create api --group cache --version v1alpha1 --kind Memcached \
            --image=memcached:1.6.26-alpine3.19 \
            --image-container-command="memcached,--memory-limit=64,-o,modern,-v" \
            --image-container-port="11211" --run-as-user="1001" \
            --plugins="deploy-image/v1-alpha" --make=false
        # DeepCopy methods and the CRD, with the controller-gen the Makefile pins.
        make generate manifests
    )
    touch "$marker"
fi
# The race's concurrency knob (RACE_CONCURRENCY): MaxConcurrentReconciles from
# RACE_MAX_CONCURRENT_RECONCILES; unset, controller-runtime's default (one at a time).
cat > "$go_dir/internal/controller/race_options.go" <<'GO'
package controller

import (
	"os"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// raceOptions sets MaxConcurrentReconciles from RACE_MAX_CONCURRENT_RECONCILES (added by
// rkb's hack/race/prepare.sh); zero, the default, leaves it to controller-runtime.
func raceOptions() controller.Options {
	n, _ := strconv.Atoi(os.Getenv("RACE_MAX_CONCURRENT_RECONCILES"))
	return controller.Options{MaxConcurrentReconciles: n}
}
GO
controller_go=$go_dir/internal/controller/memcached_controller.go
if ! grep -q 'WithOptions(raceOptions())' "$controller_go"; then
    sed -i 's/^\t\tComplete(r)$/\t\tWithOptions(raceOptions()).\n\t\tComplete(r)/' "$controller_go"
fi
grep -q 'WithOptions(raceOptions())' "$controller_go" || {
    echo "prepare.sh: cannot add the concurrency knob to $controller_go (no Complete(r) line)" >&2
    exit 1
}
step "go build of the Go operator"
(cd "$go_dir" && go build -o "$RACE_DIR/bin/go-manager" ./cmd)
cp "$go_dir/config/crd/bases/cache.example.com_memcacheds.yaml" "$RACE_DIR/crds/go.yaml"
grep -h 'sigs.k8s.io/controller-runtime ' "$go_dir/go.mod" | sed 's/^[[:space:]]*/go: /' >&2

# --- rkb: this checkout's `rkb create api --image` ----------------------------------------
step "rkb (this checkout, --release)"
(cd "$repo" && cargo build --release --locked -p rkb)
rkb=$target/release/rkb
rkb_dir=$RACE_DIR/rkb-memcached
step "scaffolding the rkb operator in $rkb_dir"
rm -rf "$rkb_dir"
"$rkb" init --dir "$rkb_dir" --rkb-path "$repo" --domain example.com --project-name memcached-image
"$rkb" create api --dir "$rkb_dir" --group cache --version v1alpha1 --kind Memcached \
    --image memcached:1.6.26-alpine3.19 \
    --image-container-command "memcached,--memory-limit=64,-o,modern,-v" \
    --image-container-port 11211 --run-as-user 1001
# The checkout's versions of every crate, so that the build reuses what the checkout's
# builds already compiled in the same target directory (cargo drops the unused entries).
cp "$repo/Cargo.lock" "$rkb_dir/Cargo.lock"
step "cargo build --release of the rkb operator"
(
    cd "$rkb_dir"
    # The manager, and the generator of the API crate (api/), as `make manifests` runs it.
    CARGO_TARGET_DIR=$target cargo build --release --workspace --bins
    CARGO_TARGET_DIR=$target cargo run --quiet --release -p memcached-image-api --bin memcached-image-manifests
)
# Through a new file: a running copy (a bench interrupted) would make `cp` fail.
cp "$target/release/memcached-image" "$RACE_DIR/bin/rkb-manager.new"
mv -f "$RACE_DIR/bin/rkb-manager.new" "$RACE_DIR/bin/rkb-manager"
cp "$rkb_dir/config/crd/bases/cache.example.com_memcacheds.yaml" "$RACE_DIR/crds/rkb.yaml"

step "ready: RACE_DIR=$RACE_DIR cargo bench -p rkb-race (or make race)"
ls -l "$RACE_DIR/bin" >&2
