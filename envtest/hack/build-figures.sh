#!/usr/bin/env bash
# Cold build time of envtest's binaries, with and without kube-controller-manager: runs
# `rkb setup-envtest` into an empty cache with an empty Go build cache, then adds
# `--with controller-manager` to the same entry (what a first `make test` of a project
# whose tests need it costs). Go's module cache is kept (downloads are not timed).
#   envtest/hack/build-figures.sh [RKB]     (RKB: an rkb binary; default: cargo run)
set -euo pipefail
cd "$(dirname "$0")/../.."
rkb=("${1:-}")
[ -n "${rkb[0]}" ] || rkb=(cargo run --quiet --locked --release -p rkb --)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export RKB_ENVTEST_CACHE="$work/cache" GOCACHE="$work/gocache"
unset KUBEBUILDER_ASSETS
"${rkb[@]}" --version >/dev/null # build rkb before timing
start=$(date +%s)
dir="$("${rkb[@]}" setup-envtest)"
base=$(($(date +%s) - start))
start=$(date +%s)
"${rkb[@]}" setup-envtest --with controller-manager >/dev/null
extra=$(($(date +%s) - start))
echo "cold etcd + kube-apiserver: ${base} s"
echo "then kube-controller-manager: ${extra} s"
du -b "$dir"/* | awk '{printf "%s: %d bytes\n", $2, $1}' | sed "s|$dir/||"
