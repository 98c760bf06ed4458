#!/usr/bin/env bash
# Where the rkb operator's memory goes in the race (issue #27): one rkb run of the bench
# (race.rs) with the operator under heaptrack, then its peak heap by allocation site,
# grouped (the two watch caches, the managedFields kept aside, the Events' task, the
# reconciler's records of its writes, the rest).
#
#   hack/race/prepare.sh && hack/race/heap-profile.sh [objects, default 2000]
#
# Needs heaptrack (Debian: apt-get install heaptrack) and python3; a bench-only tool, like
# Go. The operator runs slower under heaptrack, so the run's times mean nothing, and its
# peak RSS there includes heaptrack's own.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
RACE_DIR=${RACE_DIR:-$HOME/.cache/rkb/race}
objects=${1:-2000}
work=$(mktemp -d)
trap 'pkill -f "$work/bin/operator" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/heap"
ln -s "$RACE_DIR/crds" "$work/crds"
# The operator through a path under $work, so that its process can be told from others'.
ln -s "$RACE_DIR/bin/rkb-manager" "$work/bin/operator"
printf '#!/usr/bin/env bash\nexec heaptrack -o %q %q "$@"\n' \
    "$work/heap/rkb" "$work/bin/operator" >"$work/bin/rkb-manager"
chmod +x "$work/bin/rkb-manager"

(
    cd "$repo"
    RACE_DIR=$work RACE_SIDES=rkb RACE_RUNS=1 RACE_OBJECTS=$objects cargo bench --locked -p rkb-race
) >&2
# The bench killed heaptrack's script, not the operator it runs as a child: stop that one
# too, then let heaptrack finish writing the profile.
pkill -TERM -f "$work/bin/operator" || true
for _ in $(seq 60); do
    if ! pgrep -f "$work/bin/operator" >/dev/null && ! pgrep -f heaptrack_interpret >/dev/null; then
        break
    fi
    sleep 1
done

profile=$(ls "$work"/heap/rkb*)
heaptrack_print -f "$profile" --print-peaks 0 --print-allocators 0 --print-temporary 0 \
    --print-leaks 0 --flamegraph-cost-type peak -F "$work/peak.txt" | grep -E '^(peak|total runtime)'
python3 - "$work/peak.txt" <<'PY'
import collections, sys

groups = collections.Counter()
stacks = []
for line in open(sys.argv[1]):
    stack, _, cost = line.rstrip().rpartition(" ")
    stacks.append((stack.split(";"), int(cost)))
# One store writer per kind (its symbol names no type): a writer whose allocations clone
# Deployments is the Deployments' cache.
writer = lambda frames: next((f for f in frames if "apply_watcher_event" in f), None)
deployment_writers = {
    writer(frames) for frames, _ in stacks if any("deployment..Deployment" in f for f in frames)
}
for frames, cost in stacks:

    def has(*words):
        return any(w in f for f in frames for w in words)

    if writer(frames):
        kind = "Deployments" if writer(frames) in deployment_writers else "the operator's kind"
        group = f"watch cache: {kind}"
    elif has("managed_fields"):
        group = "managedFields kept aside (cache::managed_fields)"
    elif has("events..Recorder", "events::Recorder", "rkb_manager::events"):
        group = "Events task (kube's Recorder)"
    elif has("OwnWrites", "::report::"):
        group = "the reconciler's records of its writes (OwnWrites)"
    else:
        group = "the rest"
    groups[group] += cost
print(f"{'peak heap by site':52} MiB")
for group, cost in groups.most_common():
    print(f"{group:52} {cost / 2**20:6.1f}")
PY
