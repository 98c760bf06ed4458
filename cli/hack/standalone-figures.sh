#!/usr/bin/env bash
# Figures for standalone projects, rerunnable by anyone on one machine:
#   1. the size of each packaged crate, and the time `cargo package` takes;
#   2. a cold `make test` of a generated project whose rkb crates come from the packages,
#      and of the same project taking them from this checkout, one after the other, each
#      with an empty target directory (crates.io downloads are cached by cargo either way);
#   3. the image: `make image` (a cold static release build), its size, and the seconds
#      from `make image` to a sample reconciled by the image under podman against envtest.
# Needs what .ci/install-tools installs.
# Usage: cli/hack/standalone-figures.sh [WORK_DIR] [SECTIONS, default 123]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${1:-$(mktemp -d)}"
sections="${2:-123}"
mkdir -p "$work"
cd "$repo"
export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only CARGO_PROFILE_TEST_DEBUG=line-tables-only
cargo build --quiet --locked -p rkb -p rkb-envtest --example serve
rkb="$repo/target/debug/rkb"
KUBEBUILDER_ASSETS="$("$rkb" setup-envtest)"
export KUBEBUILDER_ASSETS
seconds() { local start=$SECONDS; "$@" >"$work/last.log" 2>&1 || { tail -40 "$work/last.log"; exit 1; }; echo $((SECONDS - start)); }

echo "== 1. packages"
libs=(rkb-core rkb-derive rkb-envtest rkb-manager rkb-manifests rkb-runtime rkb-testing)
args=(); for c in "${libs[@]}" rkb; do args+=(-p "$c"); done
t=$(seconds cargo package --locked --no-verify --allow-dirty "${args[@]}" --target-dir "$work/pkg")
echo "cargo package --no-verify (8 crates): ${t} s"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
for c in "${libs[@]}" rkb; do
  printf '%-16s %8d bytes\n' "$c" "$(stat -c %s "$work/pkg/package/$c-$version.crate")"
done
rm -rf "$work/crates"; mkdir -p "$work/crates"
for c in "${libs[@]}"; do tar -xzf "$work/pkg/package/$c-$version.crate" -C "$work/crates"; done

if [[ $sections == *2* ]]; then
echo "== 2. cold make test: packaged crates against the checkout, side by side (at the same time)"
for source in packages checkout; do
  dir="$work/op-$source"; rm -rf "$dir" "$work/target-$source"
  path="$work/crates"; [ "$source" = checkout ] && path="$repo"
  "$rkb" init --domain example.com --dir "$dir" --project-name memcached-operator --rkb-path "$path" >/dev/null
  "$rkb" create api --dir "$dir" --group cache --version v1alpha1 --kind Memcached \
    --image memcached:1.6.26-alpine3.19 --image-container-port 11211 >/dev/null
  (
    start=$SECONDS
    cd "$dir" && CARGO_TARGET_DIR="$work/target-$source" RKB="$rkb" make test >"$work/test-$source.log" 2>&1
    echo "cold make test, rkb crates from the $source: $((SECONDS - start)) s"
  ) &
done
wait
fi

[[ $sections == *3* ]] || exit 0
echo "== 3. image"
dir="$work/op-packages"
start=$SECONDS
t=$(cd "$dir" && CARGO_TARGET_DIR="$work/target-image" RKB="$rkb" seconds make image IMG=example.com/memcached-operator:v0.0.1)
echo "make image (cold static release build + archive): ${t} s"
echo "image archive: $(stat -c %s "$dir/dist/image.tar") bytes"
podman load -q -i "$dir/dist/image.tar" >/dev/null
coproc SERVE { exec "$repo/target/debug/examples/serve"; }
read -r kubeconfig <&"${SERVE[0]}"
kc() { kubectl --kubeconfig "$kubeconfig" "$@"; }
cp "$kubeconfig" "$work/kubeconfig.json"; chmod 644 "$work/kubeconfig.json"
python3 - "$work/kubeconfig.json" <<'PY'
import base64, json, sys
path = sys.argv[1]; c = json.load(open(path))
def inline(o, f):
    if f in o: o[f + "-data"] = base64.b64encode(open(o.pop(f), "rb").read()).decode()
for x in c["clusters"]: inline(x["cluster"], "certificate-authority")
for u in c["users"]: inline(u["user"], "client-certificate"); inline(u["user"], "client-key")
json.dump(c, open(path, "w"))
PY
(cd "$dir" && kc apply --server-side -k config/crd >/dev/null)
name="figures-$$"
podman --runtime "${OCI_RUNTIME:-runc}" run --detach --name "$name" --network host --read-only \
  --user 65532:65532 --cap-drop all --security-opt no-new-privileges \
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
  --volume "$work/kubeconfig.json:/etc/kubeconfig.json:ro" --env KUBECONFIG=/etc/kubeconfig.json \
  --env MEMCACHED_IMAGE=memcached:1.6.26-alpine3.19 \
  example.com/memcached-operator:v0.0.1 --health-probe-bind-address=127.0.0.1:0 >/dev/null
(cd "$dir" && kc apply -n default -f config/samples/cache_v1alpha1_memcached.yaml >/dev/null)
until kc get deployment -n default memcached-sample >/dev/null 2>&1; do sleep 0.2; done
echo "from make image to a reconciled sample under podman: $((SECONDS - start)) s"
podman rm --force "$name" >/dev/null
exec {SERVE[1]}>&-
