#!/usr/bin/env bash
# Make sure Debian's chromium is installed for the real-browser UI tests
# (services/gateway/test/browser, driven by puppeteer-core, which never downloads a browser).
#
# Safe to run repeatedly: when the binary is there this is one test. Otherwise it installs the
# Debian package (as root, or through sudo), and fails loudly if it cannot: the browser tests are
# part of `make test` and must not be skipped.
#
# Environment (optional):
#   CHROMIUM_PATH  default /usr/bin/chromium
set -euo pipefail

CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"

log() { printf 'ensure-chromium: %s\n' "$*"; }
die() { printf 'ensure-chromium: ERROR: %s\n' "$*" >&2; exit 1; }

# A first headless start builds chromium's and fontconfig's caches; paying that here, once,
# keeps it out of the browser tests' launch budget on a freshly installed machine.
warm_up() {
  local profile
  profile="$(mktemp -d)"
  timeout 120 "$CHROMIUM_PATH" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --disable-background-networking --user-data-dir="$profile" \
    --dump-dom about:blank >/dev/null 2>&1 || log "warm-up start of chromium failed (the browser tests will say why)"
  rm -rf "$profile"
}

if [ -x "$CHROMIUM_PATH" ]; then
  exit 0 # fast path
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  die "$CHROMIUM_PATH is missing and this user cannot install packages; install Debian's chromium package"
fi

log "installing Debian's chromium package (once per machine)"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq chromium >/dev/null
[ -x "$CHROMIUM_PATH" ] || die "chromium installed but $CHROMIUM_PATH is still missing; set CHROMIUM_PATH"
warm_up
log "chromium $("$CHROMIUM_PATH" --version 2>/dev/null | awk '{print $2}') ready"
