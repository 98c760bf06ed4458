#!/usr/bin/env bash
# Puts kube-apiserver and etcd for rkb's envtest into a versioned cache directory
# outside the repository and prints that directory (use it as KUBEBUILDER_ASSETS).
#
#   KUBEBUILDER_ASSETS set    -> its binaries are used as they are; nothing is built
#   cached build present      -> reused
#   otherwise                 -> built from Go modules (the Go module in assets/)
#
# Release binaries are not downloaded: they are built with `go build`, which needs
# Go >= 1.24 and the Go module proxy. Progress goes to stderr, the directory to stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The Kubernetes release is the one k8s.io/kubernetes is pinned to in assets/go.mod.
k8s_version="$(sed -n 's/^[[:space:]]*k8s\.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/assets/go.mod")"
etcd_version="$(sed -n 's/^[[:space:]]*go\.etcd\.io\/etcd\/server\/v3 \(v[0-9.]*\)$/\1/p' "$here/assets/go.mod")"

if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  for bin in kube-apiserver etcd; do
    if [ ! -x "$KUBEBUILDER_ASSETS/$bin" ]; then
      echo "setup-envtest: KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable $bin." >&2
      echo "  Point it at a directory holding kube-apiserver and etcd (as setup-envtest use -p path prints)," >&2
      echo "  or unset it to have this script build them: unset KUBEBUILDER_ASSETS; $0" >&2
      exit 1
    fi
  done
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

sum="$(cat "$here/assets/go.mod" "$here/assets/go.sum" "$here"/assets/cmd/*/main.go | sha256sum | cut -c1-12)"
cache="${RKB_ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rkb/envtest}"
dir="$cache/k8s-${k8s_version}-$(go env GOOS 2>/dev/null || uname -s | tr A-Z a-z)-$(go env GOARCH 2>/dev/null || uname -m)-$sum"

if [ -x "$dir/kube-apiserver" ] && [ -x "$dir/etcd" ]; then
  echo "setup-envtest: using the cached build in $dir" >&2
  echo "$dir"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  cat >&2 <<MSG
setup-envtest: cannot build kube-apiserver $k8s_version and etcd $etcd_version: Go is not installed.
  Either install Go >= 1.24 (https://go.dev/dl, or your distribution's golang package) and run again,
  or point KUBEBUILDER_ASSETS at existing envtest binaries, for example from controller-runtime's tool:
    go install sigs.k8s.io/controller-runtime/tools/setup-envtest@latest
    export KUBEBUILDER_ASSETS="\$(setup-envtest use -p path ${k8s_version#v})"
MSG
  exit 1
fi

mkdir -p "$cache"
tmp="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
ldflags="-s -w"
minor="${k8s_version#v1.}"; minor="${minor%%.*}"
for var in "gitVersion=$k8s_version" "gitMajor=1" "gitMinor=$minor" "gitTreeState=clean" "buildDate=1970-01-01T00:00:00Z"; do
  ldflags="$ldflags -X k8s.io/component-base/version.$var"
done
ldflags="$ldflags -X k8s.io/component-base/version.gitCommit=0000000000000000000000000000000000000000"
start=$SECONDS
echo "setup-envtest: building etcd $etcd_version and kube-apiserver $k8s_version into $dir (cold: several minutes)" >&2
(
  cd "$here/assets"
  CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "-s -w" -o "$tmp/etcd" ./cmd/etcd
  CGO_ENABLED=0 go build -mod=readonly -trimpath -ldflags "$ldflags" -o "$tmp/kube-apiserver" ./cmd/kube-apiserver
)
# Rename as a whole, so a cancelled build never leaves a half-filled cache entry.
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "setup-envtest: built in $((SECONDS - start)) s" >&2
echo "$dir"
