#!/usr/bin/env bash
# End-to-end tests with real peers: the MCP Python SDK as host, mcp-consent proxy + service,
# @modelcontextprotocol/server-everything as the MCP server.
#
#   tests/e2e/run.sh                 # everything
#   tests/e2e/run.sh tests/e2e/test_everything.py -k decline   # any pytest arguments
#
# Installs what it needs (idempotent; quick when nothing changed):
#   <repo>/.venv from tests/e2e/requirements.txt, tests/e2e/node_modules via `npm ci`,
#   Debian's `chromium` via apt when no Chromium is found (CHROMIUM_BIN overrides; the tests
#   drive it with Playwright, which never downloads a browser of its own), Debian's
#   fonts-noto-cjk when missing (Chinese glyphs in the pages and screenshots), Debian's nginx
#   and openssl when missing (the reverse proxy of test_reach.py),
#   and `cargo build --bin mcp-consent` unless MCP_CONSENT_BIN is set or E2E_SKIP_BUILD=1.
set -euo pipefail

E2E="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$E2E/../.." && pwd)"
VENV="$REPO/.venv"

# Python and Node peers (tests/e2e/install.sh, shared with benches/run.sh).
# shellcheck source=tests/e2e/install.sh
source "$E2E/install.sh"
install_peers

# Chromium: every test that uses the pages drives it (conftest.py, person.py).
if [ -z "${CHROMIUM_BIN:-}" ] && ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  if ! command -v apt-get >/dev/null; then
    echo "run.sh: Chromium is missing and apt-get is not available: install Chromium and set CHROMIUM_BIN" >&2
    exit 1
  fi
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null; then
    as_root=(sudo)
  else
    echo "run.sh: Chromium is missing; run 'apt-get install chromium' as root (or set CHROMIUM_BIN)" >&2
    exit 1
  fi
  echo "run.sh: installing chromium (apt)" >&2
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
  command -v chromium >/dev/null || { echo "run.sh: chromium still not on PATH after apt-get" >&2; exit 1; }
fi

# A CJK font (Debian's fonts-noto-cjk), so Chinese text renders as glyphs rather than boxes: the
# zh-CN pages, the language switcher's 简体中文 and the screenshots test_a11y.py writes.
if command -v apt-get >/dev/null && ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif sudo -n true 2>/dev/null; then
    as_root=(sudo)
  else
    as_root=(none)
  fi
  if [ "${as_root[*]}" = none ]; then
    echo "run.sh: fonts-noto-cjk is missing (Chinese text shows as boxes); install it as root" >&2
  else
    echo "run.sh: installing fonts-noto-cjk (apt)" >&2
    "${as_root[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends fonts-noto-cjk >/dev/null
  fi
fi

# A real reverse proxy with TLS (Debian's nginx) and openssl for the test certificates:
# test_reach.py serves the pages through it at public_url.
if command -v apt-get >/dev/null && { ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ] || ! command -v openssl >/dev/null; }; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif sudo -n true 2>/dev/null; then
    as_root=(sudo)
  else
    echo "run.sh: nginx or openssl is missing; run 'apt-get install nginx openssl' as root" >&2
    exit 1
  fi
  echo "run.sh: installing nginx and openssl (apt)" >&2
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends nginx openssl >/dev/null
  # Only the binary is wanted: the packaged site must not hold port 80.
  if command -v systemctl >/dev/null; then "${as_root[@]}" systemctl disable --now nginx >/dev/null 2>&1 || true; fi
fi

# The binary under test.
if [ -z "${MCP_CONSENT_BIN:-}" ] && [ "${E2E_SKIP_BUILD:-0}" != 1 ]; then
  (cd "$REPO" && cargo build --quiet --bin mcp-consent)
fi

cd "$REPO"
if [ $# -eq 0 ]; then
  set -- tests/e2e
fi
exec "$VENV/bin/python" -m pytest -q "$@"
