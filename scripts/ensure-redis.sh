#!/usr/bin/env bash
# Make sure a local Redis answers PING.
#
# Safe to run repeatedly: if Redis already replies PONG this is a single
# redis-cli call. Otherwise it starts a throwaway, non-persistent instance
# (no RDB snapshots, no AOF: the tests never need data to survive a restart)
# and waits, bounded, for it to come up.
#
# Environment (all optional):
#   REDIS_HOST  default 127.0.0.1
#   REDIS_PORT  default 6379
#   REDIS_WAIT  seconds to wait for PONG after starting (15)
set -euo pipefail

REDIS_HOST="${REDIS_HOST:-127.0.0.1}"
REDIS_PORT="${REDIS_PORT:-6379}"
REDIS_WAIT="${REDIS_WAIT:-15}"

log() { printf 'ensure-redis: %s\n' "$*"; }
die() { printf 'ensure-redis: ERROR: %s\n' "$*" >&2; exit 1; }

redis_ready() {
  [ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]
}

if redis_ready; then
  exit 0 # fast path
fi

case "$REDIS_HOST" in
  127.0.0.1 | localhost | ::1) ;;
  *) die "Redis at $REDIS_HOST:$REDIS_PORT is not answering and is not local, so it cannot be started here" ;;
esac

log "Redis not answering on $REDIS_HOST:$REDIS_PORT; starting it"
# The data and log directories come from the redis-server package but may be
# missing on a stripped image.
mkdir -p /var/lib/redis /var/log/redis
# Bind IPv4 and IPv6 loopback; the leading "-" on ::1 tells Redis not to fail
# when IPv6 is unavailable.
redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" \
  --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log

waited=0
until redis_ready; do
  if [ "$waited" -ge "$REDIS_WAIT" ]; then
    die "Redis still not answering after ${REDIS_WAIT}s (see /var/log/redis/ci.log)"
  fi
  sleep 1
  waited=$((waited + 1))
done
log "Redis is ready (after ~${waited}s)"
