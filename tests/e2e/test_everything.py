"""End to end: Python MCP host -> mcp-consent proxy -> @modelcontextprotocol/server-everything,
with a person answering in the web page, in real Chromium (``real_browser``; ``person.py``).

What server-everything 2026.8.31 does (read from its dist/tools/*.js and observed on the wire):

* ``trigger-elicitation-request`` (no arguments) sends one ``elicitation/create`` (form mode,
  10-minute timeout) and returns three text items: a verdict line, for accept a
  ``User inputs:`` list (name/check/email/homepage/birthdate/integer/number only), and
  ``"\\nRaw result: " + JSON.stringify(result, null, 2)``.
* ``trigger-sampling-request`` ({prompt, maxTokens=100}) sends ``sampling/createMessage`` with
  the text ``"Resource trigger-sampling-request context: " + prompt`` (60 s default timeout) and
  returns ``"LLM sampling result: \\n" + JSON.stringify(result, null, 2)``.  A JSON-RPC error
  reply to the sampling request comes back as a *tool result* with ``isError: true`` and the text
  ``"MCP error <code>: <message>"`` (McpServer wraps handler exceptions), not as a JSON-RPC error
  on ``tools/call``.
* Both tools are only registered when the client declared the capability (checked after
  ``notifications/initialized``), so their presence in ``tools/list`` proves the proxy declared it.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp_types import CallToolResult

from conftest import SERVER_NAME, RealBrowser
from person import confirm_and_send, decline, open_question, outcome, review

pytestmark = pytest.mark.anyio

RESULT_WAIT = 20.0  # seconds for the tool result once the answer is sent
ELICITATION_MESSAGE = "Please provide inputs for the following fields:"


# ---------------------------------------------------------------- helpers


def texts(result: CallToolResult) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


def raw_elicitation_result(result: CallToolResult) -> dict[str, Any]:
    for t in texts(result):
        if t.startswith("\nRaw result: "):
            return json.loads(t[len("\nRaw result: ") :])
    raise AssertionError(f"no 'Raw result:' item in {texts(result)}")


def sampling_result(result: CallToolResult) -> dict[str, Any]:
    (t,) = texts(result)
    prefix = "LLM sampling result: \n"
    assert t.startswith(prefix), t
    return json.loads(t[len(prefix) :])


def values(pairs: list[tuple[str, str]], name: str) -> list[str]:
    """Every value posted for ``name``, in order (the service reads the last one of a single
    field, all non-empty ones of a multi-select)."""
    return [v for n, v in pairs if n == name]


async def tool_result(call: asyncio.Task[CallToolResult]) -> CallToolResult:
    return await asyncio.wait_for(call, timeout=RESULT_WAIT)


async def assert_tools_declared(client: Client, *names: str) -> None:
    listed = {t.name for t in (await client.list_tools()).tools}
    missing = [n for n in names if n not in listed]
    assert not missing, (
        f"{missing} not registered by server-everything: the proxy did not declare the "
        f"sampling/elicitation capability; tools: {sorted(listed)}"
    )


# ---------------------------------------------------------------- tests


async def test_elicitation_accept_with_defaults(mcp_client: Client, real_browser: RealBrowser) -> None:
    page = real_browser.page
    await assert_tools_declared(mcp_client, "trigger-elicitation-request")
    call = asyncio.create_task(mcp_client.call_tool("trigger-elicitation-request", {}))
    try:
        qpath = await open_question(real_browser, call)
        main = await page.locator("main").inner_text()
        assert SERVER_NAME in main, f"question page does not name the server: {main[:1000]}"
        assert ELICITATION_MESSAGE in main, main[:2000]
        form = page.locator(f"form[action='{qpath}/answer']")
        assert await form.get_attribute("method") == "post"
        for button in ("Review and send…", "Decline", "Cancel"):
            await form.get_by_role("button", name=button, exact=True).wait_for()

        # What a person sees pre-filled before touching anything: the data set Chromium itself
        # would post for "Review and send…" (FormData with that submitter).
        untouched = await form.evaluate(
            "f => [...new FormData(f, f.querySelector('button[value=accept]'))]"
        )
        untouched = [(n, v) for n, v in untouched]
        assert values(untouched, "field.firstLine")[-1] == "It was a dark and stormy night."
        assert values(untouched, "field.integer")[-1] == "42"
        assert values(untouched, "field.number")[-1] == "3.14"
        assert values(untouched, "field.untitledSingleSelectEnum")[-1] == "Monica"
        assert values(untouched, "field.titledSingleSelectEnum")[-1] == "hero-1"
        assert values(untouched, "field.legacyTitledEnum")[-1] == "pet-1"
        assert [v for v in values(untouched, "field.untitledMultipleSelectEnum") if v] == ["Guitar"]
        assert [v for v in values(untouched, "field.titledMultipleSelectEnum") if v] == ["fish-1"]
        # An optional boolean without a default starts as "not answered": left out, not false.
        assert values(untouched, "field.check")[-1] == "", "an untouched optional boolean must be left out"
        assert values(untouched, "action") == ["accept"]

        # The person types a name, an email and a date, answers "yes"; leaves every default alone.
        name = "Grace Hopper e2e-7f3a"
        await page.get_by_label("String * name", exact=True).fill(name)
        await page.get_by_label("String with email format email", exact=True).fill("grace.e2e@example.org")
        await page.get_by_label("String with date format birthdate", exact=True).fill("1906-12-09")
        await page.get_by_label("yes", exact=True).check()

        sent = await review(page, qpath)
        assert values(sent, "field.name") == [name], sent
        assert values(sent, "field.birthdate") == ["1906-12-09"], sent
        assert values(sent, "field.check") == ["true"], sent  # the "yes" radio
        assert values(sent, "action") == ["accept"], sent
        shown = await confirm_and_send(page, qpath)
        # The confirm page may show the whole ElicitResult or only its content.
        if "action" in shown:
            assert shown["action"] == "accept", shown
            content = shown["content"]
        else:
            content = shown
        expected = {
            "name": name,
            "email": "grace.e2e@example.org",
            "birthdate": "1906-12-09",
            "check": True,
            "firstLine": "It was a dark and stormy night.",
            "integer": 42,
            "number": 3.14,
            "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar"],
            "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-1",
        }
        assert content == expected, json.dumps(content, indent=1)  # homepage left empty -> omitted
        assert type(content["integer"]) is int and type(content["check"]) is bool

        result = await tool_result(call)
    finally:
        call.cancel()

    assert not result.is_error, texts(result)
    all_text = "\n".join(texts(result))
    assert "User provided the requested information" in all_text, all_text
    assert f"- Name: {name}" in all_text and "- Favorite Integer: 42" in all_text, all_text
    raw = raw_elicitation_result(result)
    assert raw == {"action": "accept", "content": expected}, raw
    assert await outcome(page) == "Outcome: accepted"
    real_browser.assert_clean()


async def test_sampling_accept(mcp_client: Client, real_browser: RealBrowser) -> None:
    page = real_browser.page
    await assert_tools_declared(mcp_client, "trigger-sampling-request")
    prompt = "Name a colour for consent (e2e-prompt-51c2)"
    call = asyncio.create_task(
        mcp_client.call_tool("trigger-sampling-request", {"prompt": prompt, "maxTokens": 64})
    )
    try:
        qpath = await open_question(real_browser, call)
        main = await page.locator("main").inner_text()
        assert SERVER_NAME in main, main[:1000]
        assert f"Resource trigger-sampling-request context: {prompt}" in main, main[:2000]

        # The person writes the response and names the model, in place of one.
        answer = "Teal, written by a person (e2e-answer-9d41)"
        model = "human-e2e-model-3b07"
        text_box = page.get_by_label("Response text", exact=True)
        assert await text_box.evaluate("e => e.tagName") == "TEXTAREA"
        await text_box.fill(answer)
        await page.get_by_label("Model name reported to the server", exact=True).fill(model)
        sent = await review(page, qpath)
        assert values(sent, "text") == [answer] and values(sent, "model") == [model], sent
        shown = await confirm_and_send(page, qpath)
        assert shown["role"] == "assistant", shown
        assert shown["content"] == {"type": "text", "text": answer}, shown
        assert shown["model"] == model, shown

        result = await tool_result(call)
    finally:
        call.cancel()

    assert not result.is_error, texts(result)
    echoed = sampling_result(result)
    assert echoed["role"] == "assistant", echoed
    assert echoed["content"] == {"type": "text", "text": answer}, echoed
    assert echoed["model"] == model, echoed
    assert await outcome(page) == "Outcome: accepted"
    real_browser.assert_clean()


async def test_sampling_decline(mcp_client: Client, real_browser: RealBrowser) -> None:
    page = real_browser.page
    await assert_tools_declared(mcp_client, "trigger-sampling-request")
    call = asyncio.create_task(
        mcp_client.call_tool("trigger-sampling-request", {"prompt": "Please decline me (e2e-4e8d)"})
    )
    try:
        qpath = await open_question(real_browser, call)

        # A post from outside the page, with the person's cookie but without the page's CSRF
        # token, is refused and changes nothing (only an HTTP client can send this).
        service = real_browser.service
        cookies = {c["name"]: c["value"] for c in await real_browser.context.cookies(service.base_url)}
        async with httpx.AsyncClient(cookies=cookies, follow_redirects=False, timeout=10.0) as forger:
            forged = await forger.post(
                service.url(f"{qpath}/answer"),
                data={"csrf": "0" * 64, "action": "decline"},
                headers={"origin": service.base_url},
            )
        assert forged.status_code == 403, (forged.status_code, forged.text[:500])
        await page.reload()
        assert await page.locator(".state").text_content() == "pending"

        # Decline sends at once: no confirm step, no payload to review.
        await decline(page, qpath)
        assert await page.locator("#payload").count() == 0, "decline must not go through the confirm page"

        result = await tool_result(call)
    finally:
        call.cancel()

    # server-everything turns the JSON-RPC error reply into an isError tool result "MCP error -1: ...".
    assert result.is_error, texts(result)
    (text,) = texts(result)
    assert re.match(r"MCP error -1: \S", text), text
    assert await outcome(page) == "Outcome: declined"
    real_browser.assert_clean()
