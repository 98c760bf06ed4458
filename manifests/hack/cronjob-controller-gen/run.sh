#!/usr/bin/env bash
# controller-gen's CRD for the same CronJob types as runtime/tests/integration/cronjob/mod.rs (kubebuilder's
# tutorial API), to compare with rkb's: writes it to $1 (default /tmp/cronjob-controller-gen)
# and prints the keyword counts of both. Needs Go; controller-gen comes from the Go module proxy.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-/tmp/cronjob-controller-gen}"
version=v0.21.0
gobin="$(go env GOPATH)/bin"
[ -x "$gobin/controller-gen" ] && "$gobin/controller-gen" --version | grep -q "$version" ||
  go install "sigs.k8s.io/controller-tools/cmd/controller-gen@$version"
(cd "$here" && "$gobin/controller-gen" crd paths=./... output:crd:dir="$out")
"$here/../crd-keywords.py" "$here/../../../runtime/tests/snapshots/cronjob.yaml" "$out/batch.tutorial.kubebuilder.io_cronjobs.yaml"
