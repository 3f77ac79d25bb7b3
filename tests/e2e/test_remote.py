"""End to end over HTTP: the Python SDK host -> ``mcp-consent proxy --url`` -> a real remote
server, with the questions answered over the API (they are agent questions).

* server-everything in its Streamable HTTP mode (``node dist/index.js streamableHttp``, port from
  ``PORT``; TypeScript SDK 1.32.2, sessions on 2025-11-25): its sampling request arrives on the
  ``tools/call`` event stream and becomes a question.
* the Python SDK 2.3 server of mrtr_server.py over Streamable HTTP (mrtr_http_server.py): the
  2.3 host in its default auto mode runs 2026-07-28, the tools answer with an
  ``InputRequiredResult`` that the proxy answers through questions.

The host has no sampling or elicitation callbacks: the proxy declares those capabilities.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import E2E_DIR, EVERYTHING_ENTRY, REPO_ROOT, Service, _child_env, answer_pending

pytestmark = pytest.mark.anyio

QUESTION_WAIT = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the server exited with {proc.returncode}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"nothing listened on port {port}")


def start(argv: list[str], port: int, tmp_path: Path, name: str) -> Iterator[str]:
    log = (tmp_path / f"{name}.log").open("w")
    proc = subprocess.Popen(argv, env={**_child_env(), "PORT": str(port)}, stdout=log, stderr=log, cwd=E2E_DIR)
    try:
        wait_listening(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture
def everything_url(node_bin: str, tmp_path: Path) -> Iterator[str]:
    yield from start([node_bin, str(EVERYTHING_ENTRY), "streamableHttp"], free_port(), tmp_path, "everything")


@pytest.fixture
def mrtr_url(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    yield from start([sys.executable, str(E2E_DIR / "mrtr_http_server.py"), str(port)], port, tmp_path, "mrtr")


async def remote_host(service: Service, url: str, tmp_path: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=str(service.bin),
        args=["proxy", "--name", "remote", "--state-dir", str(service.state_dir), "--url", url],
        env=_child_env(),
        cwd=str(REPO_ROOT),
    )
    with (tmp_path / "proxy.stderr").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


async def answer_next(service: Service, answer: dict[str, Any], call: asyncio.Task[Any]) -> dict[str, Any]:
    """Waits for the one pending question of the remote server, answers it over the API."""
    return await answer_pending(service, "remote", answer, call, QUESTION_WAIT)


SAMPLED = {
    "action": "accept",
    "result": {"role": "assistant", "content": {"type": "text", "text": "four, said the person"}, "model": "e2e-person"},
}


async def test_everything_over_streamable_http_asks_the_person(
    service: Service, everything_url: str, tmp_path: Path
) -> None:
    async for client in remote_host(service, everything_url, tmp_path):
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "trigger-sampling-request" in listed, "the proxy did not declare sampling over HTTP"
        call = asyncio.create_task(client.call_tool("trigger-sampling-request", {"prompt": "2+2?", "maxTokens": 10}))
        q = await answer_next(service, SAMPLED, call)
        assert q["kind"] == "sampling"
        result = await asyncio.wait_for(call, 30)
        text = json.dumps([c.model_dump() for c in result.content])
        assert "four, said the person" in text and "e2e-person" in text, text


async def test_python_sdk_http_server_mrtr_elicitation_and_sampling(
    service: Service, mrtr_url: str, tmp_path: Path
) -> None:
    async for client in remote_host(service, mrtr_url, tmp_path):
        call = asyncio.create_task(client.call_tool("greet", {}))
        q = await answer_next(service, {"action": "accept", "content": {"name": "Ada"}}, call)
        assert q["kind"] == "form"
        result = await asyncio.wait_for(call, 30)
        assert "hello Ada, 30" in json.dumps([c.model_dump() for c in result.content])

        call = asyncio.create_task(client.call_tool("think", {}))
        q = await answer_next(service, SAMPLED, call)
        assert q["kind"] == "sampling"
        result = await asyncio.wait_for(call, 30)
        assert "model e2e-person said four, said the person" in json.dumps([c.model_dump() for c in result.content])
