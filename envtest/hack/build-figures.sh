#!/usr/bin/env bash
# Cold build time of envtest's binaries, with and without kube-controller-manager, for each
# Kubernetes release given (default: the one rkb builds unless asked): runs `rkb
# setup-envtest --kubernetes-version V` into an empty cache with an empty Go build cache,
# then adds `--with controller-manager` to the same entry (what a first `make test` of a
# project whose tests need it costs). Wall and CPU seconds; Go's module cache is kept
# (downloads are not timed). Start times: `cargo bench -p rkb-envtest`.
#   envtest/hack/build-figures.sh [VERSION...]      e.g. 1.34.4 1.37.2
#   RKB=path/to/rkb envtest/hack/build-figures.sh    (default: cargo run --release)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${RKB:-}" ]; then rkb=("$RKB"); else rkb=(cargo run --quiet --locked --release -p rkb --); fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unset KUBEBUILDER_ASSETS
"${rkb[@]}" --version >/dev/null # build rkb before timing

# `timed LABEL COMMAND...`: runs COMMAND, prints LABEL with wall and CPU (user + sys of
# the shell's finished children) seconds, and leaves COMMAND's stdout in $out.
timed() {
  local label="$1" wall cpu_before
  shift
  children_cpu
  cpu_before=$cpu
  wall=$SECONDS
  "$@" >"$work/out"
  out="$(cat "$work/out")"
  children_cpu
  echo "$label: $((SECONDS - wall)) s wall, $((cpu - cpu_before)) s CPU"
}
# Sets $cpu to the seconds this shell's finished children used. `times` runs here, not in a
# $(...) subshell, which would count its own children; its second line is their user and
# sys time, e.g. `3m2.1s 0m9.5s`.
children_cpu() {
  times >"$work/times"
  cpu=$(sed -n 2p "$work/times" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
}

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("")
for version in "${versions[@]}"; do
  export RKB_ENVTEST_CACHE="$work/cache-$version" GOCACHE="$work/gocache-$version"
  flag=(); [ -z "$version" ] || flag=(--kubernetes-version "$version")
  echo "== Kubernetes ${version:-(the default)} (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  timed "cold etcd + kube-apiserver" "${rkb[@]}" setup-envtest "${flag[@]}"
  dir="$out"
  timed "then kube-controller-manager" "${rkb[@]}" setup-envtest "${flag[@]}" --with controller-manager
  du -b "$dir"/* | awk '{printf "%s: %d bytes\n", $2, $1}' | sed "s|$dir/||"
done
