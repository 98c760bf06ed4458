#!/usr/bin/env bash
# The edit loop side by side: the same Memcached API scaffolded by kubebuilder v4 and by rkb on
# this machine, then the steps a user repeats all day, timed on both sides in one run.
#
#   first `make manifests`   from an empty build cache (cargo: an empty target directory; Go:
#                            an empty GOCACHE, so controller-gen's `go install` is in it), with
#                            the downloads fetched first (a warm module cache holds them);
#   first `make test`        right after it (kubebuilder: setup-envtest's `go install` and the
#                            test build; rkb: the test build); FIRST_RUNS times, both from empty
#                            caches each time;
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
#   FIRST_RUNS=3               runs of the first two steps (each from empty caches again)
#   KUBEBUILDER_VERSION=v4.16.0
#   KUBEBUILDER_ASSETS=...     kube-apiserver and etcd (default: `rkb setup-envtest`'s directory,
#                              which builds them once if they are missing)
#   RKB_FLAGS=...              extra flags for `rkb init`, e.g. --rkb-source registry
#   RKB_BEFORE=DIR             another checkout of rkb (e.g. a worktree of the parent commit):
#                              its scaffold is a third side, "rkb-before", timed in the same run
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
runs="${RUNS:-3}"
first_runs="${FIRST_RUNS:-3}"
kubebuilder_version="${KUBEBUILDER_VERSION:-v4.16.0}"

(cd "$repo" && cargo build --quiet --locked -p rkb)
rkb="${CARGO_TARGET_DIR:-$repo/target}/debug/rkb"
# The other checkout's rkb, built into its own target directory: a project it scaffolds points
# .cargo/config.toml at that checkout, so each side builds against its own crates.
rkb_sides=(rkb)
if [ -n "${RKB_BEFORE:-}" ]; then
  before="$(cd "$RKB_BEFORE" && pwd)"
  (cd "$before" && CARGO_TARGET_DIR="$before/target" cargo build --quiet --locked -p rkb)
  rkb_before="$before/target/debug/rkb"
  rkb_sides=(rkb-before rkb)
fi
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
# Library crates built into a cargo target directory so far, and how many of them more than
# once (another set of features, or a host copy for build scripts and proc macros).
crates() {
  local libs
  libs="$(find "$1/debug/deps" -name '*.rlib' -printf '%f\n' | sed 's/-[0-9a-f]*\.rlib$//' | sort)"
  echo "$(wc -l <<<"$libs") library crates built, $(uniq -d <<<"$libs" | wc -l) of them more than once"
}

kb_dir="$work/kubebuilder/memcached-operator"
dir_of() { echo "$work/$1/memcached-operator"; }
target_of() { echo "$work/target-$1"; }
rkb_of() { if [ "$1" = rkb-before ]; then echo "$rkb_before"; else echo "$rkb"; fi; }
# The types file: api/src/ in the API crate layout, src/api/ before it.
types_of() {
  local dir
  dir="$(dir_of "$1")"
  if [ -d "$dir/api/src" ]; then echo "$dir/api/src/cache/v1alpha1/memcached.rs"; else echo "$dir/src/api/cache/v1alpha1/memcached.rs"; fi
}

echo "== scaffolding (kubebuilder $kubebuilder_version, rkb at $(git -C "$repo" rev-parse --short HEAD))"
export GOBIN="$work/gobin"
go install "sigs.k8s.io/kubebuilder/v4@$kubebuilder_version"
rm -rf "$work/kubebuilder" "$work/rkb" "$work/rkb-before"
mkdir -p "$kb_dir"
(cd "$kb_dir" &&
  "$GOBIN/kubebuilder" init --domain example.com --repo example.com/memcached-operator >/dev/null 2>&1 &&
  "$GOBIN/kubebuilder" create api --group cache --version v1alpha1 --kind Memcached \
    --resource --controller --make=false >/dev/null 2>&1) || {
  echo "kubebuilder failed to scaffold the project in $kb_dir" >&2
  exit 1
}
for side in "${rkb_sides[@]}"; do
  mkdir -p "$(dir_of "$side")"
  # shellcheck disable=SC2086 # RKB_FLAGS is a list of flags
  "$(rkb_of "$side")" init --domain example.com --dir "$(dir_of "$side")" ${RKB_FLAGS:-} >/dev/null
  "$(rkb_of "$side")" create api --group cache --version v1alpha1 --kind Memcached --dir "$(dir_of "$side")" >/dev/null
done

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
for side in "${rkb_sides[@]}"; do
  rm -rf "$(target_of "$side")"
  (cd "$(dir_of "$side")" && cargo fetch --quiet)
done

kb_make=(env "KUBEBUILDER_ASSETS=$kb_assets" make)
# Runs make step $2 on every side, kubebuilder first, under step name $1.
each_side() {
  measure "$1" "$kb_dir" "${kb_make[@]}" "$2"
  for side in "${rkb_sides[@]}"; do
    measure "$1" "$(dir_of "$side")" env "CARGO_TARGET_DIR=$(target_of "$side")" make "RKB=$(rkb_of "$side")" "$2"
  done
}

echo "== first make manifests and make test (empty build caches): $first_runs runs each"
for round in $(seq "$first_runs"); do
  # Empty again: Go's build cache and the tools kubebuilder's Makefile installed into bin/
  # (the first `make manifests` installs controller-gen), cargo's target directories.
  rm -rf "$GOCACHE" "$kb_dir/bin"
  for side in "${rkb_sides[@]}"; do rm -rf "$(target_of "$side")"; done
  each_side first-manifests manifests
  [ "$round" != 1 ] || for side in "${rkb_sides[@]}"; do echo "$side: $(crates "$(target_of "$side")") by the first make manifests"; done
  each_side first-test test
  [ "$round" != 1 ] || for side in "${rkb_sides[@]}"; do echo "$side: $(crates "$(target_of "$side")") after the first make test"; done
done

# The edits: each one new, so that every run has something to rebuild.
edit=0
edit_types() {
  edit=$((edit + 1))
  sed -i "/^type MemcachedSpec struct {/a\\
\\t// extra$edit is a field the benchmark added.\\
\\t// +optional\\
\\tExtra$edit *int32 \`json:\"extra$edit,omitempty\"\`" "$kb_dir/api/v1alpha1/memcached_types.go"
  for side in "${rkb_sides[@]}"; do
    sed -i "/^pub struct MemcachedSpec {/a\\
    /// A field the benchmark added.\\
    #[serde(default, skip_serializing_if = \"Option::is_none\")]\\
    pub extra$edit: Option<i32>," "$(types_of "$side")"
  done
}
edit_controller() {
  edit=$((edit + 1))
  printf '\nconst benchEdit%s = %s\n' "$edit" "$edit" >>"$kb_dir/internal/controller/memcached_controller.go"
  for side in "${rkb_sides[@]}"; do
    printf '\nconst _BENCH_EDIT_%s: u32 = %s;\n' "$edit" "$edit" >>"$(dir_of "$side")/src/controller/memcached.rs"
  done
}

echo "== warm: $runs runs each"
for _ in $(seq "$runs"); do
  edit_types
  each_side types-edit-manifests manifests
done
for _ in $(seq "$runs"); do
  edit_types
  each_side types-edit-test test
done
for _ in $(seq "$runs"); do
  edit_controller
  each_side controller-edit-test test
done
for side in "${rkb_sides[@]}"; do echo "$side: target directory $(du -sh "$(target_of "$side")" | cut -f1)"; done
echo "load after: $(load)"

echo
echo "Medians ($first_runs runs for the first steps, $runs for the warm ones), wall-clock (CPU), on $(nproc) cores:"
echo
header="| step | kubebuilder |" rule="|---|---:|"
for side in "${rkb_sides[@]}"; do header+=" $side | $side / kubebuilder (wall) |" rule+="---:|---:|"; done
echo "$header"
echo "$rule"
median() { # the median of the runs of step $1 on side $2, column $3 (3 wall, 4 CPU)
  awk -v step="$1" -v side="$2" -v col="$3" '$1 == step && $2 == side { print $col }' "$results" |
    sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for step in first-manifests first-test types-edit-manifests types-edit-test controller-edit-test; do
  kb_wall="$(median "$step" kubebuilder 3)"
  row="$(printf '| %s | %.1f s (%.1f s) |' "$step" "$kb_wall" "$(median "$step" kubebuilder 4)")"
  for side in "${rkb_sides[@]}"; do
    wall="$(median "$step" "$side" 3)"
    row+="$(printf ' %.1f s (%.1f s) | %s |' "$wall" "$(median "$step" "$side" 4)" \
      "$(awk -v a="$wall" -v b="$kb_wall" 'BEGIN { printf "%.2f×", a / b }')")"
  done
  echo "$row"
done
