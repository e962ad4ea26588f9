#!/usr/bin/env bash
# Make sure the Redis the tests use answers PING.
#
# The tests use TEST_REDIS_URL (default redis://127.0.0.1:6379), each under a key prefix of its
# own. This script checks that URL:
#   * fast path, Redis answers: one redis-cli call, no output;
#   * when the URL names this machine and nothing answers, it installs Debian's redis-server when
#     it is missing (root, or sudo) and starts a throwaway instance on the URL's port: no RDB
#     snapshots and no append-only file (the tests never need the shared server's data to survive
#     a restart; the tests that restart Redis start one of their own), its directory and log in
#     ${TMPDIR:-/tmp}/3ngram-redis-<port>, so starting it needs no root.
# A Redis that is not on this machine is never changed: the script says it does not answer.
#
# Environment (all optional):
#   TEST_REDIS_URL  the server to check (default above); the tests read the same variable
#   REDIS_WAIT      seconds to wait for PONG after starting (15)
set -euo pipefail

SETUP_NAME=ensure-redis
# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379}"
REDIS_WAIT="${REDIS_WAIT:-15}"

url_authority="${REDIS_URL#*://}"
url_authority="${url_authority%%/*}"
url_authority="${url_authority##*@}"
if [[ "$url_authority" =~ ^\[([^]]+)\](:([0-9]+))?$ ]] || [[ "$url_authority" =~ ^([^:]+)(:([0-9]+))?$ ]]; then
  REDIS_HOST="${BASH_REMATCH[1]}"
  REDIS_PORT="${BASH_REMATCH[3]:-6379}"
else
  setup_die "cannot read host and port from TEST_REDIS_URL"
fi

# redis-cli warns on stderr when the URL carries a password; only the answer matters here.
redis_ready() { [ "$(redis-cli -u "$REDIS_URL" ping 2>/dev/null)" = "PONG" ]; }

if command -v redis-cli >/dev/null 2>&1 && redis_ready; then
  exit 0 # fast path
fi

if ! setup_is_local_host "$REDIS_HOST"; then
  command -v redis-cli >/dev/null 2>&1 || setup_apt_install "the client that checks the tests' Redis" redis-tools
  redis_ready && exit 0
  setup_die "Redis at $REDIS_HOST:$REDIS_PORT does not answer and is not on this machine, so it cannot be started here; start it, or set TEST_REDIS_URL"
fi

if ! command -v redis-server >/dev/null 2>&1; then
  setup_apt_install "the tests' Redis" redis-server
  # Debian's package may start its own service on 6379 as it installs.
  redis_ready && {
    setup_log "Redis is ready (the package's own service)"
    exit 0
  }
fi

state_dir="${TMPDIR:-/tmp}/3ngram-redis-$REDIS_PORT"
mkdir -p "$state_dir"
setup_log "Redis does not answer on $REDIS_HOST:$REDIS_PORT; starting one (directory and log in $state_dir)"
# Both loopbacks; the leading "-" on ::1 tells Redis not to fail where IPv6 is off.
redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" \
  --save "" --appendonly no --dir "$state_dir" --logfile "$state_dir/redis.log" >/dev/null

setup_wait_for "$REDIS_WAIT" redis_ready ||
  setup_die "Redis still not answering after ${REDIS_WAIT}s (see $state_dir/redis.log)"
setup_log "Redis is ready"
