#!/usr/bin/env bash
# Make sure Debian's chromium is installed for the real-browser UI tests
# (services/gateway/test/browser, driven by puppeteer-core, which never downloads a browser).
#
# Fast path, the binary is there: one test, no output. Otherwise it installs Debian's package
# (root, or sudo) and fails loudly if it cannot: the browser tests are part of `make test` and
# are never skipped.
#
# Environment (optional):
#   CHROMIUM_PATH  default /usr/bin/chromium; the tests read the same variable
set -euo pipefail

SETUP_NAME=ensure-chromium
# shellcheck source=lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$CHROMIUM_PATH" ]; then
  exit 0 # fast path
fi

# A first headless start builds chromium's and fontconfig's caches; paying that here, once, keeps
# it out of the browser tests' launch budget on a freshly installed machine.
warm_up() {
  local profile
  profile="$(mktemp -d)"
  timeout 120 "$CHROMIUM_PATH" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --disable-background-networking --user-data-dir="$profile" \
    --dump-dom about:blank >/dev/null 2>&1 || setup_log "warm-up start of chromium failed (the browser tests will say why)"
  rm -rf "$profile"
}

setup_apt_install "the web UI's browser tests" chromium
[ -x "$CHROMIUM_PATH" ] || setup_die "chromium installed but $CHROMIUM_PATH is still missing; set CHROMIUM_PATH"
warm_up
setup_log "chromium $("$CHROMIUM_PATH" --version 2>/dev/null | awk '{print $2}') ready"
