#!/usr/bin/env bash
# The tables of docs/benchmarks.md: every figure next to a baseline measured in the same run.
#
#   benches/run.sh            # everything (a few minutes on 2 cores)
#   benches/run.sh --quick    # fewer lines, calls and rows (about a minute)
#   benches/run.sh --only proxy|service
#   MCP_CONSENT_BIN=/path/to/mcp-consent benches/run.sh   # measure another build
#
# Builds the release binary, installs the pinned MCP peers the tool-call row uses (the MCP
# Python SDK into <repo>/.venv and server-everything into tests/e2e/node_modules, with
# tests/e2e/install.sh as tests/e2e/run.sh does; SKIP_PEERS=1 skips them and that row), then runs
# `cargo bench --bench limits`. The markdown table goes to stdout, progress to stderr.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E="$REPO/tests/e2e"
VENV="$REPO/.venv"
cd "$REPO"

if [ "${SKIP_PEERS:-0}" != 1 ]; then
  # shellcheck source=tests/e2e/install.sh
  source "$E2E/install.sh"
  install_peers
fi

if [ -z "${MCP_CONSENT_BIN:-}" ]; then
  cargo build --quiet --release --bin mcp-consent
  export MCP_CONSENT_BIN="${CARGO_TARGET_DIR:-$REPO/target}/release/mcp-consent"
fi
exec cargo bench --quiet --bench limits -- "$@"
