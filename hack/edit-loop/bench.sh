#!/usr/bin/env bash
# The edit loop side by side: the same Memcached API scaffolded by kubebuilder v4 and by rkb on
# this machine, then the steps a user repeats all day, timed on both sides in one run.
#
#   first `make manifests`   from an empty build cache (cargo: an empty target directory; Go:
#                            an empty GOCACHE, so controller-gen's `go install` is in it), with
#                            the downloads fetched first (a warm module cache holds them);
#   first `make test`        right after it (kubebuilder: setup-envtest's `go install` and the
#                            test build; rkb: the test build);
#   then RUNS times each, alternating the two sides so that both see the same load:
#   types edit → `make manifests`   a field added to MemcachedSpec;
#   types edit → `make test`        another field, then the whole `make test`;
#   controller edit → `make test`   a constant added to the controller's file.
#
# Neither side downloads Kubernetes: both run the envtest binaries in KUBEBUILDER_ASSETS
# (setup-envtest and `rkb setup-envtest` print it when it is set). Cargo runs with the
# project's own profile settings (CARGO_PROFILE_* and CARGO_INCREMENTAL are unset).
#
# Prints each measurement with the load average before it, then a table of medians, wall-clock
# and CPU seconds (user + system, children included; what the machine's load inflates less).
#
# Usage: hack/edit-loop/bench.sh [WORK_DIR]
#   RUNS=3                     runs per warm step
#   KUBEBUILDER_VERSION=v4.16.0
#   KUBEBUILDER_ASSETS=...     kube-apiserver and etcd (default: `rkb setup-envtest`'s directory,
#                              which builds them once if they are missing)
#   RKB_FLAGS=...              extra flags for `rkb init`, e.g. --rkb-source registry
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
runs="${RUNS:-3}"
kubebuilder_version="${KUBEBUILDER_VERSION:-v4.16.0}"

(cd "$repo" && cargo build --quiet --locked -p rkb)
rkb="${CARGO_TARGET_DIR:-$repo/target}/debug/rkb"
# The projects build with their own settings, as a user's would (rkb itself builds with the
# caller's, so that its target directory is reused).
unset CARGO_TARGET_DIR CARGO_PROFILE_DEV_DEBUG CARGO_PROFILE_TEST_DEBUG CARGO_INCREMENTAL CARGO_BUILD_JOBS
export CARGO_TERM_COLOR=never GOTOOLCHAIN=local GOFLAGS=-modcacherw
export KUBEBUILDER_ASSETS="${KUBEBUILDER_ASSETS:-$("$rkb" setup-envtest)}"
# kubebuilder's setup-envtest prints KUBEBUILDER_ASSETS rather than download into bin/ when
# the directory holds kube-apiserver, etcd and kubectl (which the tests do not run).
export ENVTEST_USE_ENV=1 ENVTEST_INSTALLED_ONLY=1
kb_assets="$work/kubebuilder-assets"
mkdir -p "$kb_assets"
ln -sf "$KUBEBUILDER_ASSETS/kube-apiserver" "$KUBEBUILDER_ASSETS/etcd" "$kb_assets/"
ln -sf "$(command -v kubectl || echo /bin/false)" "$kb_assets/kubectl"

log="$work/last.log"
results="$work/results"
: >"$results"
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Runs a command in directory $2, records "STEP SIDE WALL CPU" under step $1 and prints it.
measure() {
  local step="$1" dir="$2" side
  shift 2
  side="$(basename "$(dirname "$dir")")"
  local before
  before="$(load)"
  (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$work/time" "$@") >"$log" 2>&1 || {
    tail -40 "$log" >&2
    echo "$side: $step failed: $*" >&2
    exit 1
  }
  read -r wall user system <"$work/time"
  cpu="$(awk -v u="$user" -v s="$system" 'BEGIN { printf "%.1f", u + s }')"
  echo "$step $side $wall $cpu" >>"$results"
  printf '%-28s %-12s %7.1f s (CPU %6.1f s)  load before: %s\n' "$step" "$side" "$wall" "$cpu" "$before"
}
# Library crates built into a cargo target directory so far.
crates() { find "$1/debug/deps" -name '*.rlib' | wc -l; }

kb_dir="$work/kubebuilder/memcached-operator"
rkb_dir="$work/rkb/memcached-operator"

echo "== scaffolding (kubebuilder $kubebuilder_version, rkb at $(git -C "$repo" rev-parse --short HEAD))"
export GOBIN="$work/gobin"
go install "sigs.k8s.io/kubebuilder/v4@$kubebuilder_version"
rm -rf "$work/kubebuilder" "$work/rkb"
mkdir -p "$kb_dir" "$rkb_dir"
(cd "$kb_dir" &&
  "$GOBIN/kubebuilder" init --domain example.com --repo example.com/memcached-operator >/dev/null 2>&1 &&
  "$GOBIN/kubebuilder" create api --group cache --version v1alpha1 --kind Memcached \
    --resource --controller --make=false >/dev/null 2>&1) || {
  echo "kubebuilder failed to scaffold the project in $kb_dir" >&2
  exit 1
}
# shellcheck disable=SC2086 # RKB_FLAGS is a list of flags
"$rkb" init --domain example.com --dir "$rkb_dir" ${RKB_FLAGS:-} >/dev/null
"$rkb" create api --group cache --version v1alpha1 --kind Memcached --dir "$rkb_dir" >/dev/null

# Downloads first: the project's modules and crates, and the modules of the tools kubebuilder's
# Makefile installs (the timed `go install` then only asks the proxy about the version).
export GOCACHE="$work/gocache"
rm -rf "$GOCACHE"
(cd "$kb_dir" && go mod download)
for tool in "sigs.k8s.io/controller-tools@$(sed -n 's/^CONTROLLER_TOOLS_VERSION ?= //p' "$kb_dir/Makefile")" \
  "sigs.k8s.io/controller-runtime/tools/setup-envtest@$(cd "$kb_dir" && go list -m -f '{{.Version}}' sigs.k8s.io/controller-runtime)"; do
  go mod download "$tool"
  (cd "$(go env GOMODCACHE)/${tool%@*}@${tool#*@}" && go mod download)
done
export CARGO_TARGET_DIR="$work/target-rkb"
rm -rf "$CARGO_TARGET_DIR"
(cd "$rkb_dir" && cargo fetch --quiet)

kb_make=(env "KUBEBUILDER_ASSETS=$kb_assets" make)
rkb_make=(make "RKB=$rkb")

echo "== first make manifests and make test (empty build caches)"
measure "first-manifests" "$kb_dir" "${kb_make[@]}" manifests
measure "first-manifests" "$rkb_dir" "${rkb_make[@]}" manifests
echo "rkb: $(crates "$CARGO_TARGET_DIR") library crates built by the first make manifests"
measure "first-test" "$kb_dir" "${kb_make[@]}" test
measure "first-test" "$rkb_dir" "${rkb_make[@]}" test
echo "rkb: $(crates "$CARGO_TARGET_DIR") library crates built after the first make test"

# The edits: each one new, so that every run has something to rebuild.
edit=0
edit_types() {
  edit=$((edit + 1))
  sed -i "/^type MemcachedSpec struct {/a\\
\\t// extra$edit is a field the benchmark added.\\
\\t// +optional\\
\\tExtra$edit *int32 \`json:\"extra$edit,omitempty\"\`" "$kb_dir/api/v1alpha1/memcached_types.go"
  sed -i "/^pub struct MemcachedSpec {/a\\
    /// A field the benchmark added.\\
    #[serde(default, skip_serializing_if = \"Option::is_none\")]\\
    pub extra$edit: Option<i32>," "$rkb_dir/src/api/cache/v1alpha1/memcached.rs"
}
edit_controller() {
  edit=$((edit + 1))
  printf '\nconst benchEdit%s = %s\n' "$edit" "$edit" >>"$kb_dir/internal/controller/memcached_controller.go"
  printf '\nconst _BENCH_EDIT_%s: u32 = %s;\n' "$edit" "$edit" >>"$rkb_dir/src/controller/memcached.rs"
}

echo "== warm: $runs runs each"
for _ in $(seq "$runs"); do
  edit_types
  measure "types-edit-manifests" "$kb_dir" "${kb_make[@]}" manifests
  measure "types-edit-manifests" "$rkb_dir" "${rkb_make[@]}" manifests
done
for _ in $(seq "$runs"); do
  edit_types
  measure "types-edit-test" "$kb_dir" "${kb_make[@]}" test
  measure "types-edit-test" "$rkb_dir" "${rkb_make[@]}" test
done
for _ in $(seq "$runs"); do
  edit_controller
  measure "controller-edit-test" "$kb_dir" "${kb_make[@]}" test
  measure "controller-edit-test" "$rkb_dir" "${rkb_make[@]}" test
done
echo "rkb: target directory $(du -sh "$CARGO_TARGET_DIR" | cut -f1); load after: $(load)"

echo
echo "Medians ($runs runs for the warm steps), wall-clock (CPU), on $(nproc) cores:"
echo
echo "| step | kubebuilder | rkb | rkb / kubebuilder (wall) |"
echo "|---|---:|---:|---:|"
for step in first-manifests first-test types-edit-manifests types-edit-test controller-edit-test; do
  median() { # side column: the median of the runs of $step on side $1, column $2 (3 wall, 4 CPU)
    awk -v step="$step" -v side="$1" -v col="$2" '$1 == step && $2 == side { print $col }' "$results" |
      sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
  }
  kb_wall="$(median kubebuilder 3)" kb_cpu="$(median kubebuilder 4)"
  rkb_wall="$(median rkb 3)" rkb_cpu="$(median rkb 4)"
  ratio="$(awk -v a="$rkb_wall" -v b="$kb_wall" 'BEGIN { printf "%.1f×", a / b }')"
  printf '| %s | %.1f s (%.1f s) | %.1f s (%.1f s) | %s |\n' "$step" "$kb_wall" "$kb_cpu" "$rkb_wall" "$rkb_cpu" "$ratio"
done
