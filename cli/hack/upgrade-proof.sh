#!/usr/bin/env bash
# The proof of `rkb alpha update` on a real upgrade (#25 item 3): builds rkb at an older
# commit and at this checkout, scaffolds a project with the older one, makes the edits a
# user makes (a field with validation, reconcile logic, a flag in main.rs, a kustomize
# patch, a Makefile target), commits, runs the new `rkb alpha update --from <older rkb>`,
# and reports what was merged, conflicted and kept, the update's wall time, and whether
# `make manifests test` passes afterwards (conflicts resolved first, as a user would: rkb's
# lines, then the user's). Heavy (two rkb builds and a project build with
# envtest tests): run by hand, not by .ci/run.
#
# Usage: cli/hack/upgrade-proof.sh [OLDER_COMMIT]
#   OLDER_COMMIT   default 296a747, the last commit of rkb 0.1.0 (before standalone
#                  projects: path dependencies on rkb's checkout, `$(RKB_PATH)` in the
#                  Makefile, no .cargo/config.toml), so the update is the 0.1.0 -> 0.2.0
#                  upgrade CHANGELOG.md describes.
# Environment:
#   WORK                      where everything goes [a new temporary directory]; kept
#   UPGRADE_PROOF_TARGET_DIR  cargo target directory for the two rkb builds [$WORK/target];
#                             each binary is copied out right after its build
#   PROJECT_TARGET_DIR        cargo target directory for the project [$WORK/project-target]
#   KUBEBUILDER_ASSETS        envtest binaries for `make test` [built by `rkb setup-envtest`]
set -euo pipefail

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
older=${1:-296a747}
work=${WORK:-$(mktemp -d -t rkb-upgrade-proof.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
target=${UPGRADE_PROOF_TARGET_DIR:-$work/target}
project_target=${PROJECT_TARGET_DIR:-$work/project-target}
project=$work/memcached-operator

step() { printf '\n== %s\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

older_tree=$work/rkb-older
cleanup() { git -C "$repo" worktree remove --force "$older_tree" 2>/dev/null || true; }
trap cleanup EXIT

step "build rkb at $older ($(git -C "$repo" log -1 --format='%h %s' "$older" | cut -c1-90))"
git -C "$repo" worktree add --detach "$older_tree" "$older" >/dev/null
CARGO_TARGET_DIR=$target cargo build --quiet --locked -p rkb --bin rkb \
    --manifest-path "$older_tree/Cargo.toml"
cp "$target/debug/rkb" "$work/rkb-older.bin"
step "build rkb at this checkout ($(git -C "$repo" log -1 --format='%h'), with its uncommitted changes)"
CARGO_TARGET_DIR=$target cargo build --quiet --locked -p rkb --bin rkb \
    --manifest-path "$repo/Cargo.toml"
cp "$target/debug/rkb" "$work/rkb-new.bin"
old_rkb=$work/rkb-older.bin
new_rkb=$work/rkb-new.bin
echo "older: $("$old_rkb" --version)   new: $("$new_rkb" --version)"

step "scaffold the project with the older rkb"
rm -rf "$project"
"$old_rkb" init --dir "$project" --domain example.com --project-name memcached-operator \
    --owner "The Upgrade Authors" >/dev/null
"$old_rkb" create api --dir "$project" --group cache --version v1alpha1 --kind Memcached >/dev/null
# rkb had no webhooks before 0.1.0's last weeks.
if "$old_rkb" create webhook --help >/dev/null 2>&1; then
    "$old_rkb" create webhook --dir "$project" --group cache --version v1alpha1 --kind Memcached \
        --defaulting --programmatic-validation >/dev/null
fi
cd "$project"
git init -q
git add -A
git -c user.name=proof -c user.email=proof@example.com commit -q -m "scaffold of rkb $older"

step "the user's edits"
python3 - <<'EOF'
from pathlib import Path

def edit(path, old, new):
    p = Path(path)
    text = p.read_text()
    assert old in text, f"{path}: no {old!r}"
    p.write_text(text.replace(old, new, 1))
    print(f"  edited {path}")

# A field with validation in the types.
edit("src/api/cache/v1alpha1/memcached.rs", "    pub foo: Option<String>,\n}", """    pub foo: Option<String>,
    /// How many memcached pods to run.
    #[rkb(minimum = 1, maximum = 5)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i32>,
}""")
# Reconcile logic.
edit("src/controller/memcached.rs", "    let key = ObjectRef::from(object.as_ref()).to_string();\n",
     """    let key = ObjectRef::from(object.as_ref()).to_string();
    let size = object.spec.size.unwrap_or(1);
    tracing::debug!(object = %key, size, "desired size");
""")
# A flag of the operator's own in main.rs.
edit("src/main.rs", "    // TODO(user): add the operator's own flags here.\n", """    /// How many seconds between two full resyncs.
    #[arg(long, default_value_t = 300)]
    resync_seconds: u64,
""")
edit("src/main.rs", "    let client = kube::Client::try_default()",
     "    tracing::info!(resync_seconds = args.resync_seconds, \"resync period\");\n    let client = kube::Client::try_default()")
# A kustomize patch of the manager's memory, listed in config/default.
Path("config/default/manager_memory_patch.yaml").write_text("""# More memory for large caches.
- op: replace
  path: /spec/template/spec/containers/0/resources/limits/memory
  value: 256Mi
""")
print("  created config/default/manager_memory_patch.yaml")
edit("config/default/kustomization.yaml", "patches:\n", """patches:
- path: manager_memory_patch.yaml
  target:
    kind: Deployment
""")
# A Makefile target.
text = Path("Makefile").read_text()
Path("Makefile").write_text(text + "\n.PHONY: hello\nhello: ## Say hello.\n\t@echo hello from $(IMG)\n")
print("  edited Makefile")
EOF
git add -A
git -c user.name=proof -c user.email=proof@example.com commit -q -m "user edits"

step "rkb alpha update --from <rkb $older>"
start=$(now)
set +e
"$new_rkb" alpha update --from "$old_rkb" 2>&1 | tee "$work/update.log"
update_status=${PIPESTATUS[0]}
set -e
update_seconds=$(since "$start")
echo "exit status $update_status, wall time ${update_seconds} s"
git status --short | sed 's/^/  /'

conflicts=$(grep -rlE '^(<<<<<<< ours|>>>>>>> theirs)$' --exclude-dir=.git . || true)

# rkb 0.3 moved the types into the API crate: src/api/ is api/src/, with the user's field.
if [ -d src/api ]; then
    api_crate="src/api/ is still there: $(find src/api -type f | tr '\n' ' ')"
elif grep -q 'pub size: Option<i32>,' api/src/cache/v1alpha1/memcached.rs 2>/dev/null; then
    api_crate="src/api/ moved to api/src/, with the user's field"
else
    api_crate="api/src/cache/v1alpha1/memcached.rs lacks the user's field"
fi
echo "API crate: $api_crate"

# 0.2.0 names rkb's crates by version; until they are published a project needs the
# [patch] of .cargo/config.toml, which CHANGELOG.md tells 0.1.0 projects to copy from a
# fresh `rkb init` (the update cannot: the older project has no such file to keep).
if [ ! -f .cargo/config.toml ] && grep -q '^rkb-runtime = "' Cargo.toml; then
    step "CHANGELOG 0.2.0 by hand: .cargo/config.toml from a fresh rkb init"
    "$new_rkb" init --dir "$work/scratch" --domain example.com --rkb-path "$repo" >/dev/null
    mkdir -p .cargo
    cp "$work/scratch/.cargo/config.toml" .cargo/config.toml
    rm -rf "$work/scratch"
fi

if [ -n "$conflicts" ]; then
    # Standing in for the user: each conflict becomes rkb's new lines followed by the
    # user's lines the old scaffold did not have (git merge-file --union, minus the base).
    step "resolve the conflicts as a user would: rkb's lines, then yours"
    for file in $conflicts; do
        python3 - "$file" <<'RESOLVE'
import sys
path = sys.argv[1]
out, part, ours, base, theirs = [], None, [], [], []
for line in open(path).read().splitlines(keepends=True):
    marker = line.rstrip("\n")
    if marker == "<<<<<<< ours":
        part, ours, base, theirs = "ours", [], [], []
    elif marker == "||||||| original" and part == "ours":
        part = "base"
    elif marker == "=======" and part in ("ours", "base"):
        part = "theirs"
    elif marker == ">>>>>>> theirs" and part == "theirs":
        out += theirs + [l for l in ours if l not in base]
        part = None
    elif part == "ours":
        ours.append(line)
    elif part == "base":
        base.append(line)
    elif part == "theirs":
        theirs.append(line)
    else:
        out.append(line)
open(path, "w").write("".join(out))
print(f"  resolved {path}")
RESOLVE
    done
fi

# rkb 0.3 tests the manager's flags in the library: `Args` moved from src/main.rs to
# src/lib.rs, and the flag the user added to it comes out of the merge where the struct was.
# As CHANGELOG.md's upgrade note says, the user moves it into `Args` in src/lib.rs.
if grep -q '^pub struct Args' src/lib.rs 2>/dev/null && grep -q '^    resync_seconds: u64,' src/main.rs; then
    step "the upgrade note by hand: the user's flag into Args in src/lib.rs"
    python3 - <<'MOVE'
from pathlib import Path
flag = [
    "    /// How many seconds between two full resyncs.\n",
    "    #[arg(long, default_value_t = 300)]\n",
    "    resync_seconds: u64,\n",
]
main = Path("src/main.rs")
text = main.read_text()
assert "".join(flag) in text, "the flag's lines are not together in src/main.rs"
main.write_text(text.replace("".join(flag), "", 1))
lib = Path("src/lib.rs")
todo = "    // TODO(user): add the operator's own flags here.\n"
text = lib.read_text()
assert todo in text, "src/lib.rs has no Args to add the flag to"
lib.write_text(text.replace(todo, "".join(flag).replace("    resync", "    pub resync") + todo, 1))
print("  moved resync_seconds from src/main.rs to src/lib.rs")
MOVE
fi

step "make manifests test"
if grep -rqE '^(<<<<<<< ours|>>>>>>> theirs)$' --exclude-dir=.git .; then
    echo "skipped: conflict markers left"
    tests=skipped
else
    start=$(now)
    if CARGO_TARGET_DIR=$project_target make manifests test RKB="$new_rkb" >"$work/make.log" 2>&1; then
        tests=passed
    else
        tests=failed
        tail -40 "$work/make.log"
    fi
    echo "make manifests test: $tests ($(since "$start") s; log $work/make.log)"
    grep -E '^test result:' "$work/make.log" | sed 's/^/  /' || true
    if command -v kubectl >/dev/null; then
        if kubectl kustomize config/default | grep -q 'memory: 256Mi'; then
            echo "kustomize: config/default builds, with the user's patch"
        else
            echo "kustomize: config/default does not carry the user's patch"
        fi
    fi
fi

step "result"
echo "older rkb: $older ($("$old_rkb" --version)); new rkb: $(git -C "$repo" log -1 --format=%h) ($("$new_rkb" --version))"
grep '^summary:' "$work/update.log" || echo "summary: (none: the update failed)"
echo "update: exit status $update_status, wall time ${update_seconds} s"
echo "conflicted files: ${conflicts:-none}${conflicts:+ (then resolved by the script: new lines first, then the user lines)}"
echo "API crate: ${api_crate}"
echo "make manifests test: $tests"
echo "project: $project"
