#!/usr/bin/env bash
# Side by side: crdify (sigs.k8s.io/crdify) and rkb's breaking-change gate on the same pairs
# of CRDs, manifests/testdata/compat/<pair>/{old,new}.yaml (one pair per rkb rule, and
# `ok-*` pairs that rkb holds compatible). Prints a Markdown table: pair, crdify's findings,
# rkb's findings. rkb's own tests use the same pairs but never crdify; this is for figures.
#
#   manifests/hack/crdify-compare.sh            # crdify built once into $CRDIFY_HOME
#   manifests/hack/crdify-compare.sh --short    # names only: crdify's validations, rkb's rules
#   CRDIFY=/path/to/crdify manifests/hack/crdify-compare.sh
#
# Needs Go (for crdify) and python3 (to read crdify's JSON output).
set -euo pipefail
cd "$(dirname "$0")/../.."
CRDIFY_VERSION=${CRDIFY_VERSION:-v0.5.0}
CRDIFY_HOME=${CRDIFY_HOME:-${TMPDIR:-/tmp}/crdify-$CRDIFY_VERSION}
PAIRS=manifests/testdata/compat
SHORT=${1:-}

if [ -z "${CRDIFY:-}" ]; then
  CRDIFY=$CRDIFY_HOME/bin/crdify
  if [ ! -x "$CRDIFY" ]; then
    mkdir -p "$CRDIFY_HOME/bin"
    export GOPATH=$CRDIFY_HOME/gopath GOBIN=$CRDIFY_HOME/bin GOFLAGS=-modcacherw
    # `go install` also asks the proxy for the module's version list (for deprecation
    # notices), which some proxies refuse; the module itself is then built from its zip.
    if ! go install "sigs.k8s.io/crdify@$CRDIFY_VERSION" 2>"$CRDIFY_HOME.log"; then
      dir=$(go mod download -json "sigs.k8s.io/crdify@$CRDIFY_VERSION" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
      (cd "$dir" && go build -o "$CRDIFY" .)
    fi
  fi
fi

cargo build --quiet -p rkb-manifests --example crd-compat
rkb=$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples/crd-compat

# crdify's JSON report -> one finding per line: "<version> <path> <validation>: <message>".
crdify_findings() {
  python3 -c '
import json, re, sys
report = json.load(sys.stdin)
def short(message):
    # An "unhandled" finding is a Go diff of the schemas: name the fields it changes.
    fields = sorted(set(re.findall(r"^[-+]\s+(\w+):", message, re.M)))
    if fields:
        return "unhandled change of " + ", ".join(fields)
    return " ".join(message.split())
out = []
def results(where, items):
    for item in items or []:
        for kind in ("errors", "warnings"):
            for message in item.get(kind) or []:
                out.append(where + item["name"] + ": " + short(message))
results("", report.get("crdValidation"))
for key in ("sameVersionValidation", "servedVersionValidation"):
    for version, paths in (report.get(key) or {}).items():
        for path, items in paths.items():
            results(version + " " + path + " ", items)
if sys.argv[1:] == ["--short"]:
    out = [line.split(":")[0] for line in out]
print("<br>".join(sorted(out)) or "-")
' "$SHORT"
}

echo "| pair | crdify $CRDIFY_VERSION | rkb | |"
echo "|---|---|---|---|"
both=0 rkb_only=0 crdify_only=0 neither=0 unhandled=0
for pair in $(ls "$PAIRS"); do
  old=$PAIRS/$pair/old.yaml new=$PAIRS/$pair/new.yaml
  c=$("$CRDIFY" -o json "file://$old" "file://$new" 2>/dev/null | crdify_findings || true)
  r=$("$rkb" "$old" "$new" || true)
  if [ "$SHORT" = --short ]; then
    r=$(printf '%s\n' "$r" | sed -E 's/^([a-z-]+)@.*(\(warning\))$/\1 \2/; t; s/^([a-z-]+)@.*/\1/')
  fi
  r=$(printf '%s' "$r" | sed 's/|/\\|/g' | paste -sd '~' - | sed 's/~/<br>/g')
  r=${r:--}
  if [ "$c" != "-" ] && ! printf '%s\n' "${c//<br>/$'\n'}" | grep -Eqv ' unhandled(: |$)'; then
    unhandled=$((unhandled + 1))
  fi
  case "$c/$r" in
    -/-) verdict="neither"; neither=$((neither + 1)) ;;
    -/*) verdict="rkb only"; rkb_only=$((rkb_only + 1)) ;;
    */-) verdict="crdify only"; crdify_only=$((crdify_only + 1)) ;;
    *) verdict="both"; both=$((both + 1)) ;;
  esac
  echo "| $pair | ${c//|/\\|} | $r | $verdict |"
done
echo
echo "pairs: $((both + rkb_only + crdify_only + neither)); both find a change: $both; rkb only: $rkb_only; crdify only: $crdify_only; neither: $neither"
echo "pairs crdify finds only through its catch-all \"unhandled\" check (no rule names the change): $unhandled"
