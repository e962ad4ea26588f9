#!/usr/bin/env bash
# Make sure the PostgreSQL the tests use answers, lets the tests in, and can create the pgvector
# extension ("vector").
#
# The tests connect to TEST_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres)
# and create one database per test file there. This script checks that URL:
#   * fast path, everything there: pg_isready and one psql query, no output (well under a second);
#   * on a machine with nothing installed (a fresh CI machine), when the URL names this machine,
#     it installs Debian's PostgreSQL server (the release's default major version: 15 on bookworm),
#     creates a cluster on the URL's port if there is none, lets the `postgres` role in over
#     loopback without a password (a `trust` line at the top of that cluster's pg_hba.conf: the
#     tests connect that way), starts it, and installs pgvector (Debian's package where the release
#     has one for that major version; otherwise it builds the extension from Debian trixie's
#     source package, since bookworm has no postgresql-15-pgvector).
# Installing, creating a cluster, editing pg_hba.conf and starting a Debian cluster need root: as
# another user the script uses sudo, and without it says which command to run as root.
# A server that is not on this machine is never changed: the script says what is missing.
#
# Environment (all optional):
#   TEST_DATABASE_ADMIN_URL  the server to check (default above); the tests read the same variable
#   PG_WAIT                  seconds to wait for the server to accept connections (30)
#   PG_VERSION               major version to install when none is (default: the release's)
set -euo pipefail

SETUP_NAME=ensure-postgres
# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

ADMIN_URL="${TEST_DATABASE_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
PG_WAIT="${PG_WAIT:-30}"

# Host and port of the URL, for deciding whether we may install and start the server ourselves.
# An empty host is the local Unix socket.
url_authority="${ADMIN_URL#*://}"
url_authority="${url_authority%%/*}"
url_authority="${url_authority%%\?*}"
url_authority="${url_authority##*@}"
if [[ "$url_authority" =~ ^\[([^]]+)\](:([0-9]+))?$ ]] || [[ "$url_authority" =~ ^([^:]*)(:([0-9]+))?$ ]]; then
  PG_HOST="${BASH_REMATCH[1]:-/var/run/postgresql}"
  PG_PORT="${BASH_REMATCH[3]:-5432}"
else
  setup_die "cannot read host and port from TEST_DATABASE_ADMIN_URL"
fi

server_ready() { pg_isready -q -d "$ADMIN_URL" >/dev/null 2>&1; }
can_connect() { psql -X -q -At -d "$ADMIN_URL" -c "SELECT 1" >/dev/null 2>&1; }
vector_available() {
  [ "$(psql -X -q -At -d "$ADMIN_URL" \
    -c "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'" 2>/dev/null)" = "1" ]
}

# True when the server's program on disk is newer than the running server: a package upgrade
# (apt installing pgvector's build headers pulls the matching server point release) replaced it
# under a running postmaster, which then fails to load its own libraries ("undefined symbol" from
# plpgsql.so) until it is restarted. Debian's packages do not restart a cluster on a machine
# without systemd.
server_outdated() {
  local row major started binary
  row="$(psql -X -q -At -F ' ' -d "$ADMIN_URL" \
    -c "SELECT current_setting('server_version_num')::int / 10000, floor(extract(epoch FROM pg_postmaster_start_time()))::bigint" 2>/dev/null)" || return 1
  read -r major started <<<"$row"
  binary="/usr/lib/postgresql/$major/bin/postgres"
  [ -n "$started" ] && [ -e "$binary" ] && [ "$(stat -c %Z "$binary")" -gt "$started" ]
}

# --- fast path ---------------------------------------------------------------------------------
if command -v psql >/dev/null 2>&1 && server_ready && can_connect && vector_available && ! server_outdated; then
  exit 0
fi

# Everything below changes the machine; two concurrent runs (make -j, two checkouts) must not both
# install or build, so the rest runs under a lock and re-checks what the other run may have done.
LOCK_DIR=/run/lock
[ -d "$LOCK_DIR" ] && [ -w "$LOCK_DIR" ] || LOCK_DIR="${TMPDIR:-/tmp}"
if command -v flock >/dev/null 2>&1 && [ -z "${_ENSURE_PG_LOCKED:-}" ]; then
  export _ENSURE_PG_LOCKED=1
  # -o: the lock stays with flock itself, so a postmaster started below does not inherit it (it
  # would hold the lock for as long as it runs, and the next run that needs the lock would hang).
  exec flock -o "$LOCK_DIR/3ngram-ensure-postgres.lock" bash "${BASH_SOURCE[0]}" "$@"
fi

is_local=false
setup_is_local_host "$PG_HOST" && is_local=true

# Newest major version whose server binaries are installed (Debian layout), or nothing.
installed_major() {
  local dir
  for dir in /usr/lib/postgresql/*/bin/postgres; do
    [ -x "$dir" ] && basename "$(dirname "$(dirname "$dir")")"
  done | sort -V | tail -n 1
}

# "<version> <name>" of the Debian cluster configured for our port, or nothing.
cluster_on_port() {
  command -v pg_lsclusters >/dev/null 2>&1 || return 0
  pg_lsclusters -h 2>/dev/null | awk -v p="$PG_PORT" '$3 == p { print $1 " " $2; exit }'
}

# --- 1. client and server installed ------------------------------------------------------------
if ! $is_local; then
  command -v psql >/dev/null 2>&1 || setup_apt_install "the client that checks the tests' database" postgresql-client
elif [ -z "$(installed_major)" ]; then
  setup_apt_install "the tests' database server" "postgresql${PG_VERSION:+-$PG_VERSION}"
  [ -n "$(installed_major)" ] || setup_die "the postgresql package installed no server under /usr/lib/postgresql"
fi

# --- 2. a cluster on our port, started ---------------------------------------------------------
if ! server_ready; then
  $is_local || setup_die "PostgreSQL at $PG_HOST:$PG_PORT does not answer and is not on this machine, so it cannot be started here; start it, or set TEST_DATABASE_ADMIN_URL"
  command -v pg_ctlcluster >/dev/null 2>&1 ||
    setup_die "nothing answers on port $PG_PORT and this is not a Debian PostgreSQL (no pg_ctlcluster): start a PostgreSQL 15+ with pgvector there, or set TEST_DATABASE_ADMIN_URL"
  cluster="$(cluster_on_port)"
  if [ -z "$cluster" ]; then
    major="$(installed_major)"
    name=main
    [ ! -d "/etc/postgresql/$major/main" ] || name=3ngram
    setup_log "creating PostgreSQL $major cluster '$name' on port $PG_PORT"
    setup_quiet setup_as_root "create a PostgreSQL cluster" pg_createcluster "$major" "$name" --port "$PG_PORT"
    cluster="$major $name"
  fi
  read -r cl_ver cl_name <<<"$cluster"
  setup_log "starting PostgreSQL cluster $cl_ver/$cl_name on port $PG_PORT"
  # --skip-systemctl-redirect: CI machines have no systemd, so start the postmaster directly. A
  # non-zero exit ("already running") is not fatal by itself; the bounded wait is the real check.
  setup_as_root "start the PostgreSQL cluster" pg_ctlcluster --skip-systemctl-redirect "$cl_ver" "$cl_name" start || true
  setup_wait_for "$PG_WAIT" server_ready ||
    setup_die "PostgreSQL still not accepting connections after ${PG_WAIT}s (see /var/log/postgresql/postgresql-$cl_ver-$cl_name.log)"
  setup_log "PostgreSQL $cl_ver/$cl_name is accepting connections"
fi

# --- 3. the tests may connect ------------------------------------------------------------------
# A stock Debian cluster asks TCP clients for a password. The tests connect as `postgres` over
# loopback without one, so a cluster on this machine gets a trust line for exactly that.
TRUST_MARK="# 3ngram scripts/ensure-postgres.sh: the tests connect as postgres over loopback without a password"
if ! can_connect; then
  cluster="$(cluster_on_port)"
  if ! $is_local || [ -z "$cluster" ]; then
    reason="$(psql -X -q -At -d "$ADMIN_URL" -c "SELECT 1" 2>&1 | head -n 1 || true)"
    setup_die "cannot connect to the tests' database ($reason); put the user and password in TEST_DATABASE_ADMIN_URL"
  fi
  read -r cl_ver cl_name <<<"$cluster"
  hba="/etc/postgresql/$cl_ver/$cl_name/pg_hba.conf"
  if ! setup_as_root "read $hba" grep -qF "$TRUST_MARK" "$hba"; then
    setup_log "letting role postgres in over loopback without a password ($hba)"
    # Prepended, since pg_hba.conf is read top down and the first matching line wins; written with
    # cat so the file keeps its owner and mode.
    setup_as_root "edit $hba" sh -c '
      tmp="$(mktemp)"
      { printf "%s\n%s\n%s\n\n" "$2" "host all postgres 127.0.0.1/32 trust" "host all postgres ::1/128 trust"; cat "$1"; } >"$tmp"
      cat "$tmp" >"$1"
      rm -f "$tmp"' sh "$hba" "$TRUST_MARK"
    setup_as_root "reload the PostgreSQL cluster" pg_ctlcluster --skip-systemctl-redirect "$cl_ver" "$cl_name" reload
  fi
  setup_wait_for 10 can_connect || setup_die "still cannot connect to the tests' database after allowing it in $hba"
fi

# --- 4. a server that runs the installed program ----------------------------------------------
# Restarted after any install below too, since pgvector's build headers may upgrade the server.
restart_if_outdated() {
  server_outdated || return 0
  local cluster cl_ver cl_name
  cluster="$(cluster_on_port)"
  if ! $is_local || [ -z "$cluster" ]; then
    setup_die "the PostgreSQL on $PG_HOST:$PG_PORT runs an older program than the one installed (a package upgrade); restart it"
  fi
  read -r cl_ver cl_name <<<"$cluster"
  setup_log "restarting PostgreSQL cluster $cl_ver/$cl_name: its package was upgraded while it ran"
  setup_quiet setup_as_root "restart the PostgreSQL cluster" pg_ctlcluster --skip-systemctl-redirect "$cl_ver" "$cl_name" restart
  setup_wait_for "$PG_WAIT" can_connect ||
    setup_die "PostgreSQL does not accept connections ${PG_WAIT}s after its restart (see /var/log/postgresql/postgresql-$cl_ver-$cl_name.log)"
}
restart_if_outdated

# --- 5. pgvector -------------------------------------------------------------------------------
if vector_available; then
  exit 0
fi
$is_local || setup_die "pgvector is missing on $PG_HOST:$PG_PORT, which is not this machine; install it on that server"

# The major version the running server reports, so a machine with several gets the right one.
ver="$(psql -X -q -At -d "$ADMIN_URL" -c "SELECT current_setting('server_version_num')::int / 10000")"
started_at=$(date +%s)
setup_apt_update
if setup_apt_has "postgresql-$ver-pgvector"; then
  setup_apt_install "the vector extension the search service needs" "postgresql-$ver-pgvector"
else
  setup_log "no pgvector package for PostgreSQL $ver here; building it from Debian trixie's source package"
  # A private deb-src entry for trixie. Only source indexes come from it, so it can never change
  # which binary packages apt installs.
  SRC_LIST=/etc/apt/sources.list.d/3ngram-trixie-src.sources
  if [ ! -f "$SRC_LIST" ]; then
    setup_log "adding $SRC_LIST (deb-src only)"
    setup_as_root "add a source-package list" tee "$SRC_LIST" >/dev/null <<'EOF'
# Added by 3ngram scripts/ensure-postgres.sh: source packages only, used to build pgvector for a
# PostgreSQL that has no pgvector binary package in this release.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    rm -f "${TMPDIR:-/tmp}/3ngram-apt-updated"
    setup_apt_update
  fi

  # Headers and PGXS for the server; a toolchain and dpkg-source only when missing.
  pkgs=("postgresql-server-dev-$ver")
  { command -v make && command -v gcc; } >/dev/null 2>&1 || pkgs+=(build-essential)
  command -v dpkg-source >/dev/null 2>&1 || pkgs+=(dpkg-dev)
  setup_apt_install "pgvector's build" "${pkgs[@]}"

  work="$(mktemp -d "${TMPDIR:-/tmp}/3ngram-pgvector.XXXXXX")"
  trap 'setup_as_root "remove the build directory" rm -rf "$work"' EXIT
  # apt downloads as the unprivileged _apt user; letting it own the directory avoids a warning.
  if id _apt >/dev/null 2>&1; then setup_as_root "hand the build directory to apt" chown _apt "$work"; fi

  setup_log "downloading pgvector's source package (trixie)"
  setup_quiet setup_as_root "download pgvector's source" sh -c 'cd "$1" && apt-get source --download-only pgvector' sh "$work"
  dsc="$(find "$work" -maxdepth 1 -name 'pgvector_*.dsc' | head -n 1)"
  [ -n "$dsc" ] || setup_die "apt-get source did not produce a pgvector .dsc in $work"
  # apt checked the files against the signed Release file, so dpkg-source's missing-keyring
  # warning about the .dsc signature is harmless.
  setup_quiet setup_as_root "unpack pgvector's source" sh -c 'cd "$1" && dpkg-source -x "$2" src' sh "$work" "$(basename "$dsc")"

  # OPTFLAGS="" drops pgvector's default -march=native, so the library keeps working if this
  # machine's disk image is later reused on a different CPU.
  pg_config="/usr/lib/postgresql/$ver/bin/pg_config"
  setup_log "building pgvector (make && make install)"
  setup_quiet setup_as_root "build pgvector" make -C "$work/src" PG_CONFIG="$pg_config" OPTFLAGS=""
  setup_quiet setup_as_root "install pgvector" make -C "$work/src" PG_CONFIG="$pg_config" OPTFLAGS="" install
fi

restart_if_outdated
vector_available || setup_die "pgvector was installed but PostgreSQL $ver does not list the 'vector' extension"
version="$(psql -X -q -At -d "$ADMIN_URL" -c "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")"
setup_log "pgvector $version ready for PostgreSQL $ver (in $(($(date +%s) - started_at))s)"
