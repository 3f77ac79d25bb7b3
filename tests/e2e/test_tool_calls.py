"""Tool-call consent end to end: the official Python SDK 2.3 as host (default ``mode="auto"``,
so the session runs on 2026-07-28), mcp-consent proxy, and a Python SDK server whose tools record
every call they receive (``tools_server.py``). The `[tools]` rules allow ``read_file``, deny
``drop_db`` and ask about ``delete_file``; the person answers in real Chromium. What reaches the
server is read from its own record.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import E2E_DIR, RealBrowser, Service, _child_env
from person import click_answer, open_question

pytestmark = pytest.mark.anyio

RULES = """
[tools]
default = "allow"
[[tools.rules]]
server = "tools-e2e"
tool = "drop_*"
action = "deny"
[[tools.rules]]
server = "tools-e?e"
tool = "delete_file"
action = "ask"
"""


@pytest.fixture
def service_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(RULES)
    return path


class Host:
    def __init__(self, client: Client, record: Path) -> None:
        self.client = client
        self.record = record

    def received(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line]


@pytest.fixture
async def host(service: Service, tmp_path: Path) -> AsyncIterator[Host]:
    record = tmp_path / "received.jsonl"
    env = _child_env()
    env["TOOLS_RECORD"] = str(record)
    params = StdioServerParameters(
        command=str(service.bin),
        args=["proxy", "--name", "tools-e2e", "--state-dir", str(service.state_dir), "--", sys.executable, str(E2E_DIR / "tools_server.py")],
        env=env,
    )
    with (tmp_path / "proxy.stderr").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            # The proxy learns the tools' schemas from this listing.
            await client.list_tools()
            yield Host(client, record)


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_allow_passes_and_deny_never_reaches_the_server(host: Host) -> None:
    denied = await host.client.call_tool("drop_db", {})
    assert denied.is_error, denied
    assert "rules" in text_of(denied) and "drop_db" in text_of(denied), text_of(denied)
    # Sent after the denied one: once the server has it, it would have had the other too.
    allowed = await host.client.call_tool("read_file", {"path": "/etc/hostname"})
    assert not allowed.is_error, allowed
    assert text_of(allowed) == "read /etc/hostname"
    assert host.received() == [{"tool": "read_file", "arguments": {"path": "/etc/hostname"}}]


async def test_an_asked_call_reaches_the_server_only_as_the_person_allowed_it(
    real_browser: RealBrowser, host: Host
) -> None:
    page = real_browser.page
    call = asyncio.create_task(host.client.call_tool("delete_file", {"path": "/home/me/everything"}))
    try:
        qpath = await open_question(real_browser, call)
        main = await page.locator("main").inner_text()
        assert "delete_file" in main and "/home/me/everything" in main, main[:1500]
        assert host.received() == [], "held until the person answers"
        # An edit that does not fit the tool's schema is refused and the question stays open.
        await page.locator("details:has(#field\\.arguments) summary").click()
        await page.locator("#field\\.arguments").fill('{"path": 7}')
        response, _ = await click_answer(page, qpath, "Allow once")
        assert response.status == 422, response.status
        assert "path" in await page.locator(".error-summary").inner_text()
        await page.locator("#field\\.arguments").fill('{"path": "/home/me/tmp.txt"}')
        response, _ = await click_answer(page, qpath, "Allow once")
        assert response.status == 303, response.status
        result = await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    assert not result.is_error, result
    assert text_of(result) == "deleted /home/me/tmp.txt"
    assert host.received() == [{"tool": "delete_file", "arguments": {"path": "/home/me/tmp.txt"}}]
    # The one expected problem: the browser logs the refused edit's 422.
    assert [p for p in real_browser.problems() if "422" not in p] == [], real_browser.problems()


async def test_an_asked_call_accepted_as_it_was_reaches_the_server_unchanged(
    real_browser: RealBrowser, host: Host
) -> None:
    page = real_browser.page
    call = asyncio.create_task(host.client.call_tool("delete_file", {"path": "/home/me/old.log"}))
    try:
        qpath = await open_question(real_browser, call)
        assert host.received() == [], "held until the person answers"
        response, _ = await click_answer(page, qpath, "Allow once")
        assert response.status == 303, response.status
        result = await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    assert not result.is_error, result
    assert text_of(result) == "deleted /home/me/old.log"
    assert host.received() == [{"tool": "delete_file", "arguments": {"path": "/home/me/old.log"}}]
    real_browser.assert_clean()


async def test_a_declined_call_is_never_forwarded(real_browser: RealBrowser, host: Host) -> None:
    page = real_browser.page
    call = asyncio.create_task(host.client.call_tool("delete_file", {"path": "/home/me/notes.txt"}))
    try:
        qpath = await open_question(real_browser, call)
        response, _ = await click_answer(page, qpath, "Decline")
        assert response.status == 303, response.status
        result = await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    assert result.is_error, result
    assert "declined" in text_of(result), text_of(result)
    allowed = await host.client.call_tool("read_file", {"path": "/after"})
    assert not allowed.is_error
    assert [r["tool"] for r in host.received()] == ["read_file"], host.received()


async def test_a_grant_answers_the_waiting_calls_of_the_tool(
    real_browser: RealBrowser, host: Host, service: Service
) -> None:
    page = real_browser.page
    first = asyncio.create_task(host.client.call_tool("delete_file", {"path": "/a"}))
    try:
        qpath = await open_question(real_browser, first)
        second = asyncio.create_task(host.client.call_tool("delete_file", {"path": "/b"}))
        # Wait until the second call's question exists before granting.
        for _ in range(100):
            if await page.evaluate(
                "async () => (await (await fetch('/api/v1/questions?state=pending')).json()).questions.length"
            ) == 2:
                break
            await asyncio.sleep(0.1)
        await page.goto(service.url(qpath))
        response, _ = await click_answer(page, qpath, "Allow for an hour")
        assert response.status == 303, response.status
        results = await asyncio.wait_for(asyncio.gather(first, second), 30)
    finally:
        first.cancel()
    assert [text_of(r) for r in results] == ["deleted /a", "deleted /b"]
    assert sorted(r["arguments"]["path"] for r in host.received()) == ["/a", "/b"]
