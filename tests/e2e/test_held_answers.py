"""Consent bound to the exact request, with a plain SDK host: the official Python SDK 2.3 on
both sides (host in its default ``mode="auto"``, so the session runs on 2026-07-28), mcp-consent
between. The server's ``delete_file`` asks, in one ``InputRequiredResult``, the person for a
confirmation and the host for its roots; the proxy asks the person, hands the host only the
roots entry, and the host's own retry (the SDK's, unmodified) carries the person's answer to
the server. Two calls in flight at once each get their own answer.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import E2E_DIR, Service, _child_env, answer_pending, api_token

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(service: Service, tmp_path: Path) -> AsyncIterator[Client]:
    asked: list[str] = []

    async def roots(_ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///home/me", name="home")])

    async def elicit(_ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(f"elicitation: {params}")
        return types.ElicitResult(action="accept", content={"ok": True})

    params = StdioServerParameters(
        command=str(service.bin),
        args=["proxy", "--name", "held-e2e", "--state-dir", str(service.state_dir), "--", sys.executable, str(E2E_DIR / "held_server.py")],
        env=_child_env(),
    )
    with (tmp_path / "proxy.stderr").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), list_roots_callback=roots, elicitation_callback=elicit
        ) as c:
            assert c.protocol_version == "2026-07-28", c.protocol_version
            yield c
    assert asked == [], f"the host's own elicitation callback was called: {asked}"


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_the_answer_reaches_the_retry_of_its_own_call(service: Service, client: Client) -> None:
    call = asyncio.create_task(client.call_tool("delete_file", {"path": "/home/me/notes-a.txt"}))
    try:
        await answer_pending(service, "held-e2e", {"action": "accept", "content": {"ok": True}}, call)
        result = await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    assert not result.is_error, result
    assert text_of(result) == "/home/me/notes-a.txt: ok=True roots=1"


async def test_two_calls_in_flight_each_get_their_own_answer(service: Service, client: Client) -> None:
    a = asyncio.create_task(client.call_tool("delete_file", {"path": "/a"}))
    b = None
    try:
        headers = {"Authorization": f"Bearer {api_token(service)}"}
        async with httpx.AsyncClient(base_url=service.base_url + "/api/v1", headers=headers, timeout=10) as api:

            async def pending() -> list[dict[str, Any]]:
                return (await api.get("/questions", params={"state": "pending"})).json()["questions"]

            for _ in range(150):
                if len(await pending()) == 1:
                    break
                await asyncio.sleep(0.2)
            (first,) = await pending()
            b = asyncio.create_task(client.call_tool("delete_file", {"path": "/b"}))
            for _ in range(150):
                if len(await pending()) == 2:
                    break
                await asyncio.sleep(0.2)
            second = next(q for q in await pending() if q["id"] != first["id"])
            # Answered in the other order, differently: each call must get its own.
            sent = await api.post(f"/questions/{second['id']}/answer", json={"action": "accept", "content": {"ok": False}})
            assert sent.status_code == 200, sent.text
            sent = await api.post(f"/questions/{first['id']}/answer", json={"action": "accept", "content": {"ok": True}})
            assert sent.status_code == 200, sent.text
        ra, rb = await asyncio.wait_for(asyncio.gather(a, b), 30)
    finally:
        a.cancel()
        if b is not None:
            b.cancel()
    assert text_of(ra) == "/a: ok=True roots=1"
    assert text_of(rb) == "/b: ok=False roots=1"
