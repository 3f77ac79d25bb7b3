# Installs the pinned MCP peers; sourced by tests/e2e/run.sh and benches/run.sh (not run
# alone). Idempotent and quick when nothing changed:
#   <repo>/.venv from tests/e2e/requirements.txt (the MCP Python SDK, pytest, Playwright),
#   re-installed only when requirements.txt changes;
#   tests/e2e/node_modules via `npm ci` (server-everything), only when package-lock.json
#   changed or node_modules is gone.
#
# Expects E2E (this directory) and VENV (<repo>/.venv) to be set by the caller.

install_peers() {
  local want stamp
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
}
