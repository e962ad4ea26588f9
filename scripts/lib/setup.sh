# Shared helpers for the scripts/ensure-*.sh setup scripts; source it, do not run it.
#
# Every ensure script follows the same contract: when what it checks is already there it prints
# nothing and exits 0 quickly; otherwise it installs or starts what is missing (Debian packages,
# as root or through sudo), says what it did, and fails with a message that says what to do.
#
# The sourcing script sets SETUP_NAME (the prefix of its messages) before sourcing.

setup_log() { printf '%s: %s\n' "${SETUP_NAME:-setup}" "$*"; }
setup_die() {
  printf '%s: ERROR: %s\n' "${SETUP_NAME:-setup}" "$*" >&2
  exit 1
}

# True when a host name or address can only be this machine, so we may install and start servers
# for it. A Unix socket directory (a path) counts as local too.
setup_is_local_host() {
  case "$1" in
    127.0.0.1 | localhost | ::1 | '[::1]' | /*) return 0 ;;
    *) return 1 ;;
  esac
}

# Runs a command as root: directly when we are root, through sudo otherwise. $1 says why root is
# needed, so a user without sudo learns what to do by hand instead of seeing a bare failure.
setup_as_root() {
  local why="$1"
  shift
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    setup_die "need root to $why (no sudo here). Run as root: $*"
  fi
}

# A step's output goes to a log file; it is shown (its tail) only when the step fails, so a first
# run stays readable and a failure still says why.
setup_quiet() {
  local step_log
  step_log="$(mktemp "${TMPDIR:-/tmp}/3ngram-setup-log.XXXXXX")"
  if ! "$@" >"$step_log" 2>&1; then
    tail -n 40 "$step_log" >&2
    rm -f "$step_log"
    setup_die "step failed: $*"
  fi
  rm -f "$step_log"
}

# True when apt knows a package of that name (installed or installable).
setup_apt_has() {
  apt-cache show "$1" >/dev/null 2>&1
}

# Refreshes apt's package lists at most once per half hour across all ensure scripts: the lists a
# fresh machine image carries can be too old to download from, and one refresh is enough for a run.
setup_apt_update() {
  local stamp="${TMPDIR:-/tmp}/3ngram-apt-updated"
  if [ -n "$(find "$stamp" -mmin -30 2>/dev/null)" ]; then return 0; fi
  setup_log "apt-get update"
  setup_quiet setup_as_root "refresh apt's package lists" apt-get update
  touch "$stamp"
}

# Installs Debian packages, without recommends and without questions. $1 says why.
setup_apt_install() {
  local why="$1"
  shift
  command -v apt-get >/dev/null 2>&1 || setup_die "apt-get not found: install $* by hand ($why), or point the tests at servers you run (README, Development)"
  setup_apt_update
  setup_log "installing $* ($why)"
  setup_quiet setup_as_root "install $* ($why)" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "$@"
}

# Waits up to $1 seconds for the command after it to succeed; returns 1 on timeout. The caller
# reports the timeout, since only it knows where the logs are.
setup_wait_for() {
  local limit="$1" waited=0
  shift
  until "$@"; do
    [ "$waited" -lt "$limit" ] || return 1
    sleep 1
    waited=$((waited + 1))
  done
}
