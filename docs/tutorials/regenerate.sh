#!/usr/bin/env bash
# Regenerates the tutorials' projects in docs/tutorials/: re-runs the rkb commands each
# TUTORIAL.toml lists and rewrites every file the tutorial does not edit by hand (the check
# is in cli/tests/book/tutorials.rs), then runs `make manifests` in each. The edited files
# stay as they are: when the generator changed them, carry the change over by hand. Review
# the diff and commit it together with the change that caused it.
set -euo pipefail
cd "$(dirname "$0")/../.."
RKB_BLESS=1 cargo test --quiet -p rkb --test book -- tutorials::
for project in docs/tutorials/*/; do
  make --no-print-directory -C "$project" manifests
done
