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
#   drive it with Playwright, which never downloads a browser of its own),
#   and `cargo build --bin mcp-consent` unless MCP_CONSENT_BIN is set or E2E_SKIP_BUILD=1.
set -euo pipefail

E2E="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$E2E/../.." && pwd)"
VENV="$REPO/.venv"

# Python: venv + pinned requirements (re-installed only when requirements.txt changes).
if [ ! -x "$VENV/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$VENV"
fi
want="$(sha256sum "$E2E/requirements.txt" | cut -d' ' -f1)"
stamp="$VENV/.e2e-requirements.sha256"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$E2E/requirements.txt"
  echo "$want" >"$stamp"
fi

# Node: exact tree from package-lock.json (npm ci only when the lock changed or node_modules is gone).
want="$(sha256sum "$E2E/package-lock.json" | cut -d' ' -f1)"
stamp="$E2E/node_modules/.e2e-lock.sha256"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

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

# The binary under test.
if [ -z "${MCP_CONSENT_BIN:-}" ] && [ "${E2E_SKIP_BUILD:-0}" != 1 ]; then
  (cd "$REPO" && cargo build --quiet --bin mcp-consent)
fi

cd "$REPO"
if [ $# -eq 0 ]; then
  set -- tests/e2e
fi
exec "$VENV/bin/python" -m pytest -q "$@"
