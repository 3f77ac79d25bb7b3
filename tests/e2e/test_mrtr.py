"""2026-07-28 end to end: the official Python SDK 2.3 on both sides, mcp-consent between.

The server (``mrtr_server.py``) asks through ``Resolve(Elicit(...))`` / ``Resolve(Sample(...))``,
which under 2026-07-28 the SDK sends as an ``InputRequiredResult`` (MRTR). The host is a 2.3
``Client`` in its default ``mode="auto"`` (it probes ``server/discover`` and the session runs on
2026-07-28) with sampling and elicitation callbacks that record every call: through the proxy
they must never be called. A person answers each question in real Chromium, and the tool
results carry what the person wrote.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from conftest import E2E_DIR, RealBrowser, Service, _child_env
from person import confirm_and_send, decline, open_question, outcome, review

pytestmark = pytest.mark.anyio


class Host:
    """The host and what its own callbacks saw (they must see nothing)."""

    def __init__(self, client: Client, calls: list[str]) -> None:
        self.client = client
        self.calls = calls


@pytest.fixture
async def host(service: Service, tmp_path: Path) -> AsyncIterator[Host]:
    calls: list[str] = []

    async def sample(_ctx: Any, params: Any) -> types.CreateMessageResult:
        calls.append(f"sampling: {params}")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="from the host"), model="host"
        )

    async def elicit(_ctx: Any, params: Any) -> types.ElicitResult:
        calls.append(f"elicitation: {params}")
        return types.ElicitResult(action="accept", content={"name": "the host"})

    params = StdioServerParameters(
        command=str(service.bin),
        args=["proxy", "--name", "mrtr", "--state-dir", str(service.state_dir), "--", sys.executable, str(E2E_DIR / "mrtr_server.py")],
        env=_child_env(),
    )
    with (tmp_path / "proxy.stderr").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), sampling_callback=sample, elicitation_callback=elicit) as client:
            assert client.protocol_version == "2026-07-28", client.protocol_version
            yield Host(client, calls)
    assert calls == [], f"the host's own callbacks were called: {calls}"


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_mrtr_elicitation_is_answered_by_the_person(real_browser: RealBrowser, host: Host) -> None:
    page = real_browser.page
    call = asyncio.create_task(host.client.call_tool("greet", {}))
    try:
        qpath = await open_question(real_browser, call)
        main = await page.locator("main").inner_text()
        assert "Who is visiting? (mrtr-e2e-7f3a)" in main, main[:1500]
        assert "mrtr" in main
        # The schema default is pre-filled.
        assert await page.locator("input[name='field.age']").input_value() == "30"
        await page.locator("input[name='field.name']").fill("Grace (person)")
        await review(page, qpath)
        await confirm_and_send(page, qpath)
        result = await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    assert not result.is_error, result
    assert text_of(result) == "hello Grace (person), 30"
    real_browser.assert_clean()


async def test_mrtr_sampling_is_answered_by_the_person(real_browser: RealBrowser, host: Host) -> None:
    page = real_browser.page
    call = asyncio.create_task(host.client.call_tool("think", {}))
    try:
        qpath = await open_question(real_browser, call)
        assert "What is 2+2? (mrtr-e2e-c41d)" in await page.locator("main").inner_text()
        await page.locator("textarea[name='text']").fill("4, says the person")
        await page.locator("input[name='model']").fill("person-e2e")
        await review(page, qpath)
        await confirm_and_send(page, qpath)
        result = await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    assert not result.is_error, result
    assert text_of(result) == "model person-e2e said 4, says the person"
    real_browser.assert_clean()


async def test_mrtr_sampling_declined_ends_the_call_with_minus_1(real_browser: RealBrowser, host: Host) -> None:
    call = asyncio.create_task(host.client.call_tool("think", {}))
    try:
        qpath = await open_question(real_browser, call)
        await decline(real_browser.page, qpath)
        with pytest.raises(MCPError) as raised:
            await asyncio.wait_for(call, 30)
    finally:
        call.cancel()
    assert raised.value.error.code == -1, raised.value.error
    assert await outcome(real_browser.page) == "Outcome: declined"
    real_browser.assert_clean()
