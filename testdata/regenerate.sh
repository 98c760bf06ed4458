#!/usr/bin/env bash
# Regenerates the golden projects in testdata/: re-scaffolds them with the current rkb
# (the commands are listed in cli/tests/commands/golden.rs), then runs `make manifests` in each.
# Review the diff and commit it together with the change that caused it.
set -euo pipefail
cd "$(dirname "$0")/.."
RKB_BLESS=1 cargo test --quiet -p rkb --test commands golden::
for project in testdata/project-*/; do
  make --no-print-directory -C "$project" manifests
done
