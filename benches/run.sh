#!/usr/bin/env bash
# The tables of docs/benchmarks.md: every figure next to a baseline measured in the same run.
#
#   benches/run.sh            # everything (a few minutes on 2 cores)
#   benches/run.sh --quick    # fewer lines, calls and rows (about a minute)
#   benches/run.sh --only proxy|service|shared   # shared: the shared-queue rows alone
#   MCP_CONSENT_BIN=/path/to/mcp-consent benches/run.sh   # measure another build
#
# Builds the release binary, installs the pinned MCP peers the tool-call row uses (the MCP
# Python SDK into <repo>/.venv and server-everything into tests/e2e/node_modules, with
# tests/e2e/install.sh as tests/e2e/run.sh does; SKIP_PEERS=1 skips them and that row), then runs
# `cargo bench --bench limits`. The markdown table goes to stdout, progress to stderr. The
# shared-queue rows run on a temporary PostgreSQL cluster started here when the server is
# installed (Debian's postgresql package), or on $MCP_CONSENT_BENCH_DATABASE_URL.
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

# The shared-queue rows need a PostgreSQL database: a temporary cluster (Debian's postgresql
# package; as root it runs as the postgres user), stopped when the bench ends.
PG_BIN=$(compgen -G '/usr/lib/postgresql/*/bin' | sort | tail -1 || true)
if [ -z "${MCP_CONSENT_BENCH_DATABASE_URL:-}" ] && [ -n "$PG_BIN" ]; then
  PG_DIR=$(mktemp -d /tmp/mcp-consent-bench-pg.XXXXXX)
  as_pg=()
  if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_DIR"; as_pg=(runuser -u postgres --); fi
  PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as_pg[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust --no-sync >/dev/null
  "${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c max_connections=100" start >/dev/null
  trap '"${as_pg[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null; rm -rf "$PG_DIR"' EXIT
  export MCP_CONSENT_BENCH_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
fi
cargo bench --quiet --bench limits -- "$@"
