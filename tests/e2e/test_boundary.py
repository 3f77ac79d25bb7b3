"""Fail closed, against the official SDKs' own parsers: a sampling request that a real host's
JSON parser accepts but mcp-consent cannot judge (serde_json refuses it) never reaches a host
handler through the proxy, and the server gets an error for it.

Each hostile line is first shown to reach the host's handler WITHOUT the proxy (the control), so
the test proves a real hazard, then shown not to through it. The hosts: the official Python SDK
(``mcp`` 2.3) and the official TypeScript SDK (``@modelcontextprotocol/sdk`` 1.32.2, the one
inside server-everything). The server: ``hostile_server.py`` (it writes exact bytes).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import E2E_DIR, Service, _child_env, api_token

pytestmark = pytest.mark.anyio

HOSTILE = E2E_DIR / "hostile_server.py"
TS_HOST = E2E_DIR / "ts_host.mjs"
# The lines each SDK's parser takes as a sampling request (checked by the control tests).
PYTHON_ACCEPTS = ["nan", "deep", "dupmethod"]
TYPESCRIPT_ACCEPTS = ["surrogate", "badutf8", "deep", "dupmethod"]
IDS = {"nan": "h-nan", "surrogate": "h-sur", "badutf8": "h-utf", "deep": "h-deep", "dupmethod": "h-dup"}


def hostile(kinds: list[str], log: Path) -> list[str]:
    return [sys.executable, str(HOSTILE), ",".join(kinds), str(log)]


def proxied(service: Service, command: list[str]) -> list[str]:
    return [str(service.bin), "proxy", "--name", "hostile", "--state-dir", str(service.state_dir), "--", *command]


async def python_host(command: list[str], tmp_path: Path, expect_call: bool) -> tuple[list[str], list[str]]:
    """Runs the Python SDK as host against `command`; returns (handler calls, tool result texts)."""
    calls: list[str] = []
    called = anyio.Event()

    async def sample(_ctx: Any, _params: Any) -> types.CreateMessageResult:
        calls.append("sampling")
        called.set()
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="answered by the host"), model="host"
        )

    params = StdioServerParameters(command=command[0], args=command[1:], env=_child_env())
    with (tmp_path / "host.stderr").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), sampling_callback=sample) as client:
            result = await client.call_tool("go", {})
            if expect_call:
                with anyio.fail_after(10):
                    await called.wait()
            else:
                # The server wrote its lines before the result and stdio keeps order: after one
                # more round trip the host has dispatched every one of them.
                await client.list_tools()
    return calls, [c.text for c in result.content if getattr(c, "type", None) == "text"]


def typescript_host(command: list[str], node: str) -> dict[str, Any]:
    done = subprocess.run(
        [node, str(TS_HOST), "--", *command],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(E2E_DIR),
        env=_child_env(),
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


async def no_questions(service: Service) -> None:
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.get(
            service.url("/api/v1/questions"), headers={"authorization": f"Bearer {api_token(service)}"}
        )
    assert resp.json()["questions"] == [], resp.text


def server_got_errors(log: Path, kinds: list[str]) -> None:
    received = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    errors = {m.get("id"): m["error"] for m in received if "error" in m}
    for kind in kinds:
        assert IDS[kind] in errors, f"the server got no error for {kind}: {received}"


@pytest.mark.parametrize("kind", PYTHON_ACCEPTS)
async def test_control_the_python_host_answers_the_line_without_the_proxy(kind: str, tmp_path: Path) -> None:
    calls, text = await python_host(hostile([kind], tmp_path / "server.log"), tmp_path, expect_call=True)
    assert calls == ["sampling"], calls
    assert text == ["done"]


async def test_through_the_proxy_the_python_host_never_sees_them(service: Service, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    calls, text = await python_host(proxied(service, hostile(PYTHON_ACCEPTS, log)), tmp_path, expect_call=False)
    assert calls == [], "a request mcp-consent could not judge reached the host's handler"
    assert text == ["done"]
    server_got_errors(log, PYTHON_ACCEPTS)
    await no_questions(service)


@pytest.mark.parametrize("kind", TYPESCRIPT_ACCEPTS)
def test_control_the_typescript_host_answers_the_line_without_the_proxy(
    kind: str, node_bin: str, tmp_path: Path
) -> None:
    out = typescript_host(hostile([kind], tmp_path / "server.log"), node_bin)
    assert out == {"handlerCalls": 1, "text": "done"}, out


async def test_through_the_proxy_the_typescript_host_never_sees_them(
    service: Service, node_bin: str, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    out = await anyio.to_thread.run_sync(
        typescript_host, proxied(service, hostile(TYPESCRIPT_ACCEPTS, log)), node_bin
    )
    assert out == {"handlerCalls": 0, "text": "done"}, out
    server_got_errors(log, TYPESCRIPT_ACCEPTS)
    await no_questions(service)


def test_hosts_are_installed() -> None:
    assert HOSTILE.is_file() and TS_HOST.is_file()
    assert shutil.which(sys.executable)
