#!/usr/bin/env bash
# The README's "Benchmarks" table: every figure next to a baseline measured in the same run.
#
#   benches/run.sh            # everything (a few minutes on 2 cores)
#   benches/run.sh --quick    # fewer lines, calls and rows (about a minute)
#   benches/run.sh --only proxy|service
#   MCP_CONSENT_BIN=/path/to/mcp-consent benches/run.sh   # measure another build
#
# Builds the release binary, installs the pinned MCP peers the tool-call row uses (the MCP
# Python SDK into <repo>/.venv and server-everything into tests/e2e/node_modules, exactly as
# tests/e2e/run.sh does; SKIP_PEERS=1 skips them and that row), then runs
# `cargo bench --bench limits`. The markdown table goes to stdout, progress to stderr.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E="$REPO/tests/e2e"
VENV="$REPO/.venv"
cd "$REPO"

if [ "${SKIP_PEERS:-0}" != 1 ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$VENV"
  fi
  want="$(sha256sum "$E2E/requirements.txt" | cut -d' ' -f1)"
  stamp="$VENV/.e2e-requirements.sha256"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$E2E/requirements.txt"
    echo "$want" >"$stamp"
  fi
  want="$(sha256sum "$E2E/package-lock.json" | cut -d' ' -f1)"
  stamp="$E2E/node_modules/.e2e-lock.sha256"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" >"$stamp"
  fi
fi

if [ -z "${MCP_CONSENT_BIN:-}" ]; then
  cargo build --quiet --release --bin mcp-consent
  export MCP_CONSENT_BIN="${CARGO_TARGET_DIR:-$REPO/target}/release/mcp-consent"
fi
exec cargo bench --quiet --bench limits -- "$@"
