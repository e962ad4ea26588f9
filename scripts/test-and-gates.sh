#!/usr/bin/env bash
# The test step of `make test`: vitest and, on a full run, the retrieval and LoCoMo gates.
#
# The gates need no test's output, so they start beside vitest at a lower CPU priority (nice 10):
# vitest's workers spend part of the run waiting on databases, restarts and child processes, and the
# gates take the cycles left idle; at nice 10 the scheduler gives vitest's processes the CPU first
# whenever both want it. On the 2-core machine this gains little (2026-12-07: vitest 275-288 s with
# the gates beside it, against 227 s alone plus ~45 s of gates after it): vitest leaves few idle
# cycles. The gates' report is held in a file and printed whole after vitest's, so the two never
# interleave.
#
# Usage: scripts/test-and-gates.sh [vitest arguments]. With arguments the run is narrowed, and the
# gates are skipped, as they measure the whole system.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The Node.js the Makefile was given (NODE=…), as the gates ran with before.
node="${NODE:-node}"

if [ $# -gt 0 ]; then
  npx vitest run "$@"
  status=$?
  echo "retrieval and LoCoMo gates skipped (VITEST_ARGS narrows the run)"
  exit "$status"
fi

report=$(mktemp "${TMPDIR:-/tmp}/3ngram-gates.XXXXXX")
(
  nice -n 10 "$node" scripts/run-ts.mjs eval/retrieval/run.ts && nice -n 10 "$node" scripts/run-ts.mjs eval/locomo/run.ts
) >"$report" 2>&1 &
gates=$!
# An interrupted run stops the gates too, and leaves no report file behind.
trap 'pkill -P "$gates" 2>/dev/null; kill "$gates" 2>/dev/null; rm -f "$report"' EXIT

npx vitest run
tests=$?

echo "waiting for the retrieval and LoCoMo gates (started beside vitest)…"
wait "$gates"
gated=$?
cat "$report"

if [ "$tests" -ne 0 ]; then exit "$tests"; fi
exit "$gated"
