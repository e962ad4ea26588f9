#!/usr/bin/env bash
# Make sure a local PostgreSQL is accepting connections and that the pgvector
# extension ("vector") can be created in it.
#
# Safe to run any number of times: when the server is up and pgvector is
# already installed, this only runs pg_isready and one psql query (well under
# a second). It does real work only on a fresh machine:
#   * starts the Debian cluster if nobody is listening, then waits (bounded);
#   * builds pgvector from Debian trixie's SOURCE package, because bookworm
#     ships no postgresql-15-pgvector binary package.
#
# Environment (all optional):
#   PGHOST      default 127.0.0.1
#   PGPORT      default 5432
#   PGUSER      default postgres
#   PG_WAIT     seconds to wait for the server to accept connections (30)
#   PG_VERSION  major version of the Debian cluster to start/build for
#               (default: newest directory under /etc/postgresql)
set -euo pipefail

export PGHOST="${PGHOST:-127.0.0.1}"
export PGPORT="${PGPORT:-5432}"
export PGUSER="${PGUSER:-postgres}"
PG_WAIT="${PG_WAIT:-30}"

log() { printf 'ensure-postgres: %s\n' "$*"; }
die() { printf 'ensure-postgres: ERROR: %s\n' "$*" >&2; exit 1; }

# Only a server on this machine can be started or extended by us.
is_local_host() {
  case "$PGHOST" in
    127.0.0.1 | localhost | ::1 | /*) return 0 ;;
    *) return 1 ;;
  esac
}

# Debian layout: one directory per installed major version.
pg_major() {
  if [ -n "${PG_VERSION:-}" ]; then
    printf '%s\n' "$PG_VERSION"
    return
  fi
  [ -d /etc/postgresql ] || die "/etc/postgresql not found; is PostgreSQL installed?"
  # shellcheck disable=SC2012 # names are plain version numbers
  ls /etc/postgresql | sort -V | tail -n 1
}

# Run a command as root: directly if we are root, via sudo otherwise.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

server_ready() { pg_isready -q -h "$PGHOST" -p "$PGPORT" >/dev/null 2>&1; }

# --- 1. Server up? -----------------------------------------------------------
if ! server_ready; then
  is_local_host || die "PostgreSQL at $PGHOST:$PGPORT is not reachable and is not local, so it cannot be started here"
  # Prefer the Debian cluster configured for $PGPORT; fall back to
  # <newest version>/main (the layout of a stock install).
  cluster="$(pg_lsclusters -h 2>/dev/null | awk -v p="$PGPORT" '$3 == p { print $1 " " $2; exit }')"
  [ -n "$cluster" ] || cluster="$(pg_major) main"
  read -r cl_ver cl_name <<<"$cluster"
  log "PostgreSQL not accepting connections on $PGHOST:$PGPORT; starting cluster $cl_ver/$cl_name"
  # --skip-systemctl-redirect: CI machines have no systemd, so start the
  # postmaster directly. A non-zero exit (e.g. "already running") is not
  # fatal by itself; the readiness wait below is the real check.
  as_root pg_ctlcluster --skip-systemctl-redirect "$cl_ver" "$cl_name" start || true

  # Bounded wait: a cold start (crash recovery, slow disk) can take a while,
  # but a broken cluster must not hang CI forever.
  waited=0
  until server_ready; do
    if [ "$waited" -ge "$PG_WAIT" ]; then
      die "PostgreSQL still not ready after ${PG_WAIT}s (see /var/log/postgresql/)"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  log "PostgreSQL is ready (after ~${waited}s)"
fi

# --- 2. pgvector available? --------------------------------------------------
vector_available() {
  [ "$(psql -X -q -At -d postgres \
        -c "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'" 2>/dev/null)" = "1" ]
}

if vector_available; then
  exit 0 # fast path: nothing to do
fi

is_local_host || die "pgvector is missing on $PGHOST:$PGPORT, which is not local; install it on that server"

# Serialise builds: two concurrent callers (e.g. make -j) must not both run
# apt-get and make install. The second one waits, then sees the extension.
LOCK_DIR=/run/lock
[ -d "$LOCK_DIR" ] && [ -w "$LOCK_DIR" ] || LOCK_DIR="${TMPDIR:-/tmp}"
if command -v flock >/dev/null 2>&1 && [ -z "${_ENSURE_PG_LOCKED:-}" ]; then
  export _ENSURE_PG_LOCKED=1
  exec flock "$LOCK_DIR/3ngram-pgvector.lock" bash "$0" "$@"
fi
if vector_available; then
  log "pgvector was installed by a concurrent run"
  exit 0
fi

# Build against the major version the running server reports, so a machine
# with several clusters gets the library for the right one.
ver="$(psql -X -q -At -d postgres -c "SELECT current_setting('server_version_num')::int / 10000")"
[ -n "$ver" ] || ver="$(pg_major)"
PG_CONFIG="/usr/lib/postgresql/$ver/bin/pg_config"
started_at=$(date +%s)
log "pgvector not available for PostgreSQL $ver; building it from Debian trixie source"

# Private deb-src entry for trixie. Only source indexes are fetched from it,
# so it can never change which binary packages apt installs on bookworm.
SRC_LIST=/etc/apt/sources.list.d/3ngram-trixie-src.sources
if [ ! -f "$SRC_LIST" ]; then
  log "adding $SRC_LIST (deb-src only)"
  as_root tee "$SRC_LIST" >/dev/null <<'EOF'
# Added by 3ngram scripts/ensure-postgres.sh: source packages only, used to
# build pgvector for the bookworm PostgreSQL (no binary package exists there).
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi

# Scratch directory for the download and build; removed on any exit.
# The step log lives outside $work because $work is handed to _apt below.
work="$(mktemp -d "${TMPDIR:-/tmp}/3ngram-pgvector.XXXXXX")"
step_log="$(mktemp "${TMPDIR:-/tmp}/3ngram-pgvector-log.XXXXXX")"
trap 'as_root rm -rf "$work"; rm -f "$step_log"' EXIT

# Keep the console short: send a step's output to a log file and show its
# tail only when the step fails.
quiet() {
  if ! "$@" >"$step_log" 2>&1; then
    tail -n 40 "$step_log" >&2
    die "step failed: $*"
  fi
}

log "apt-get update"
quiet as_root apt-get update

# Headers and PGXS for the server. build-essential / dpkg-dev only when the
# toolchain is incomplete (make, gcc and dpkg-source are usually present).
pkgs="postgresql-server-dev-$ver"
{ command -v make && command -v gcc; } >/dev/null 2>&1 || pkgs="$pkgs build-essential"
command -v dpkg-source >/dev/null 2>&1 || pkgs="$pkgs dpkg-dev"
log "installing build dependencies: $pkgs"
# shellcheck disable=SC2086 # intentional word splitting of the package list
quiet as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs

# apt fetches files as the unprivileged _apt user; letting it own the target
# directory avoids the "download is performed unsandboxed as root" warning.
if id _apt >/dev/null 2>&1; then as_root chown _apt "$work"; fi

log "downloading pgvector source package (trixie)"
quiet as_root sh -c 'cd "$1" && apt-get source --download-only pgvector' sh "$work"
dsc="$(ls "$work"/pgvector_*.dsc 2>/dev/null | head -n 1)"
[ -n "$dsc" ] || die "apt-get source did not produce a pgvector .dsc in $work"

# apt already verified the files against the signed Release file, so a
# missing debian-keyring (dpkg-source cannot check the .dsc signature) only
# produces a warning and is not a problem.
log "unpacking $(basename "$dsc")"
quiet as_root sh -c 'cd "$1" && dpkg-source -x "$2" src' sh "$work" "$(basename "$dsc")"

# OPTFLAGS="" drops pgvector's default -march=native, so the library keeps
# working if this machine's disk image is later reused on a different CPU.
log "building pgvector (make && make install)"
quiet as_root make -C "$work/src" PG_CONFIG="$PG_CONFIG" OPTFLAGS=""
quiet as_root make -C "$work/src" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" install

vector_available || die "pgvector was installed but PostgreSQL does not list the 'vector' extension"
version="$(psql -X -q -At -d postgres \
  -c "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")"
log "pgvector $version installed in $(( $(date +%s) - started_at ))s"
