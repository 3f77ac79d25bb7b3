"""The TypeScript SDK v2 on both sides of the proxy: a host on ``@modelcontextprotocol/client``
(``v2_host.mjs``, negotiating ``legacy`` — the SDK's default — or ``auto``) whose sampling and
elicitation handlers only count their calls, and a server on ``@modelcontextprotocol/server``
(``v2_server.mjs``) whose tool asks a form and a sampling request through ``inputRequired(...)``:
its legacy shim sends them as server requests under 2025-11-25, an ``InputRequiredResult``
carries them under 2026-07-28.

Through ``mcp-consent proxy`` (stdio, and Streamable HTTP with ``--url``) every one of them
becomes a question the service answers (here over the API, as a script answering agent questions
would), and the host's handlers are never called; the control run without the proxy shows the
same host does get them. Over ``--url`` a host in ``auto`` mode runs a whole 2026-07-28 session
with the v2 server, which refuses any 2026-07-28 request without the SEP-2243 headers.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import E2E_DIR, Service, _child_env, api_token

V2_HOST = E2E_DIR / "v2_host.mjs"
V2_SERVER = E2E_DIR / "v2_server.mjs"
NAME = "v2-server"
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}
SAMPLED = "answered by mcp-consent"
# The form's default (the answer gives no content, the service applies it) and the sampling
# answer, as the tool reports them: only answers that went through the service look like this.
THROUGH_THE_SERVICE = f"note=from the person draft={SAMPLED} model=e2e-answerer"
# What the host's own handlers answer (the control run).
BY_THE_HOST = "note=answered by the host draft=answered by the host model=host"


def v2_host(node: str, mode: str, command: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [node, str(V2_HOST), "--mode", mode, "--", *command],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=str(E2E_DIR),
        env=_child_env(),
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


class Answerer(threading.Thread):
    """Answers the service's pending questions for ``NAME`` over the API until stopped: forms
    accepted with no content (the schema's default applies), sampling with a fixed message."""

    def __init__(self, service: Service) -> None:
        super().__init__(daemon=True)
        self.service = service
        self.stop = threading.Event()
        self.answered: list[str] = []

    def run(self) -> None:
        headers = {"authorization": f"Bearer {api_token(self.service)}"}
        with httpx.Client(timeout=10.0, headers=headers) as http:
            while not self.stop.wait(0.1):
                listed = http.get(self.service.url("/api/v1/questions?state=pending")).json()
                for q in listed["questions"]:
                    if q["server"] != NAME:
                        continue
                    if q["kind"] == "sampling":
                        answer: dict[str, Any] = {
                            "action": "accept",
                            "result": {
                                "role": "assistant",
                                "content": {"type": "text", "text": SAMPLED},
                                "model": "e2e-answerer",
                            },
                        }
                    else:
                        answer = {"action": "accept", "content": {}}
                    resp = http.post(self.service.url(f"/api/v1/questions/{q['id']}/answer"), json=answer)
                    if resp.status_code == 200:
                        self.answered.append(q["kind"])


@pytest.fixture
def answerer(service: Service) -> Iterator[Answerer]:
    a = Answerer(service)
    a.start()
    yield a
    a.stop.set()
    a.join(timeout=5)


@pytest.fixture
def v2_http_server(node_bin: str, tmp_path: Path) -> Iterator[str]:
    log = (tmp_path / "v2-server.log").open("w")
    proc = subprocess.Popen(
        [node_bin, str(V2_SERVER), "--http"],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        cwd=str(E2E_DIR),
        env=_child_env(),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on "), line
        yield line.removeprefix("listening on ").strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def proxy(service: Service, *upstream: str) -> list[str]:
    return [str(service.bin), "proxy", "--name", NAME, "--state-dir", str(service.state_dir), *upstream]


@pytest.mark.parametrize("mode", MODES)
def test_control_without_the_proxy_the_v2_hosts_handlers_are_called(mode: str, node_bin: str) -> None:
    out = v2_host(node_bin, mode, [node_bin, str(V2_SERVER)])
    assert out == {"handlerCalls": 2, "protocolVersion": MODES[mode], "text": BY_THE_HOST}


@pytest.mark.parametrize("mode", MODES)
def test_over_stdio_the_service_answers_and_the_v2_host_is_never_asked(
    mode: str, service: Service, node_bin: str, answerer: Answerer
) -> None:
    out = v2_host(node_bin, mode, proxy(service, "--", node_bin, str(V2_SERVER)))
    assert out == {"handlerCalls": 0, "protocolVersion": MODES[mode], "text": THROUGH_THE_SERVICE}
    assert sorted(answerer.answered) == ["form", "sampling"]


@pytest.mark.parametrize("mode", MODES)
def test_over_streamable_http_the_service_answers_and_the_v2_host_is_never_asked(
    mode: str, service: Service, node_bin: str, answerer: Answerer, v2_http_server: str
) -> None:
    # In `auto` mode this is a whole 2026-07-28 session through `proxy --url`: the v2 server
    # answers no 2026-07-28 request that lacks Mcp-Method / Mcp-Name (method-header-missing).
    started = time.monotonic()
    out = v2_host(node_bin, mode, proxy(service, "--url", v2_http_server))
    assert out == {"handlerCalls": 0, "protocolVersion": MODES[mode], "text": THROUGH_THE_SERVICE}, (
        time.monotonic() - started
    )
    assert sorted(answerer.answered) == ["form", "sampling"]
