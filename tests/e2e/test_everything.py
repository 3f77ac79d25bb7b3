"""End to end: Python MCP host -> mcp-consent proxy -> @modelcontextprotocol/server-everything,
with a person answering in the web page (played by the ``browser`` fixture).

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
import time
import urllib.parse
from typing import Any

import pytest
from mcp.client import Client
from mcp_types import CallToolResult

from browser import Browser, Form, Page, last_value, question_links
from conftest import SERVER_NAME

pytestmark = pytest.mark.anyio

QUESTION_WAIT = 20.0  # seconds for a held request to show up in the queue
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


async def wait_for_question(browser: Browser, call: asyncio.Task[Any]) -> str:
    """Poll the queue page until exactly one ``/questions/<id>`` link shows up; return its path."""
    deadline = time.monotonic() + QUESTION_WAIT
    last: Page | None = None
    while time.monotonic() < deadline:
        if call.done():  # the call ended without the person ever being asked
            raise AssertionError(f"tool call finished before a question appeared: {call.result()!r}")
        last = await browser.get("/")
        assert last.status == 200, (last.status, last.html[:500])
        links = question_links(last)
        if links:
            assert len(links) == 1, f"expected one pending question, queue links: {links}"
            return links[0]
        await asyncio.sleep(0.2)
    raise AssertionError(
        f"no /questions/<id> link on / within {QUESTION_WAIT}s; last page text: {last.text[:1000] if last else None}"
    )


def assert_csrf(form: Form) -> None:
    token = form.hidden("csrf")
    assert len(token) >= 16, f"csrf token looks too short: {token!r}"


async def confirm_and_send(browser: Browser, question_path: str, confirm: Page) -> Any:
    """Check the confirm page shows exactly the JSON its form will send, then click send."""
    assert confirm.status == 200, (confirm.status, confirm.text[:1000])
    shown = json.loads(confirm.element_text("payload"))
    form = confirm.form(action_endswith=f"{question_path}/send", button=("action", "send"))
    assert form.method == "post"
    assert_csrf(form)
    assert json.loads(form.hidden("payload")) == shown, "the confirm form would send something else than it shows"
    sent = await browser.submit(form, click=("action", "send"))
    assert sent.status in (200, 303), (sent.status, sent.text[:1000])
    return shown


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


async def test_elicitation_accept_with_defaults(mcp_client: Client, browser: Browser) -> None:
    await assert_tools_declared(mcp_client, "trigger-elicitation-request")
    call = asyncio.create_task(mcp_client.call_tool("trigger-elicitation-request", {}))
    try:
        qpath = await wait_for_question(browser, call)
        page = await browser.get(qpath)
        assert page.status == 200, (page.status, page.text[:1000])
        assert SERVER_NAME in page.text, f"question page does not name the server: {page.text[:1000]}"
        assert ELICITATION_MESSAGE in page.text, page.text[:2000]

        form = page.form(action_endswith=f"{qpath}/answer", button=("action", "accept"))
        assert form.method == "post"
        assert_csrf(form)
        assert form.has_button("action", "decline"), form.buttons()

        # What a person sees pre-filled before touching anything.
        untouched = form.data_set(click=("action", "accept"))
        assert last_value(untouched, "field.firstLine") == "It was a dark and stormy night."
        assert last_value(untouched, "field.integer") == "42"
        assert last_value(untouched, "field.number") == "3.14"
        assert last_value(untouched, "field.untitledSingleSelectEnum") == "Monica"
        assert last_value(untouched, "field.titledSingleSelectEnum") == "hero-1"
        assert last_value(untouched, "field.legacyTitledEnum") == "pet-1"
        assert [v for n, v in untouched if n == "field.untitledMultipleSelectEnum" and v] == ["Guitar"]
        assert [v for n, v in untouched if n == "field.titledMultipleSelectEnum" and v] == ["fish-1"]
        # An optional boolean without a default starts as "not answered": left out, not false.
        assert last_value(untouched, "field.check") == "", "an untouched optional boolean must be left out"

        # The person types a name, an email and a date, ticks the box; leaves every default alone.
        name = "Grace Hopper e2e-7f3a"
        form.set("field.name", name)
        form.set("field.email", "grace.e2e@example.org")
        form.set("field.birthdate", "1906-12-09")
        form.check("field.check", "true")

        confirm = await browser.submit(form, click=("action", "accept"))
        shown = await confirm_and_send(browser, qpath, confirm)
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


async def test_sampling_accept(mcp_client: Client, browser: Browser) -> None:
    await assert_tools_declared(mcp_client, "trigger-sampling-request")
    prompt = "Name a colour for consent (e2e-prompt-51c2)"
    call = asyncio.create_task(
        mcp_client.call_tool("trigger-sampling-request", {"prompt": prompt, "maxTokens": 64})
    )
    try:
        qpath = await wait_for_question(browser, call)
        page = await browser.get(qpath)
        assert page.status == 200, (page.status, page.text[:1000])
        assert SERVER_NAME in page.text, page.text[:1000]
        assert f"Resource trigger-sampling-request context: {prompt}" in page.text, page.text[:2000]

        form = page.form(action_endswith=f"{qpath}/answer", button=("action", "accept"), field="text")
        assert form.method == "post"
        assert_csrf(form)
        assert any(c.tag == "textarea" for c in form.named("text")), "no <textarea name=text>"
        assert any(c.tag == "input" for c in form.named("model")), "no <input name=model>"

        answer = "Teal, written by a person (e2e-answer-9d41)"
        model = "human-e2e-model-3b07"
        form.set("text", answer)
        form.set("model", model)
        confirm = await browser.submit(form, click=("action", "accept"))
        shown = await confirm_and_send(browser, qpath, confirm)
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


async def test_sampling_decline(mcp_client: Client, browser: Browser) -> None:
    await assert_tools_declared(mcp_client, "trigger-sampling-request")
    call = asyncio.create_task(
        mcp_client.call_tool("trigger-sampling-request", {"prompt": "Please decline me (e2e-4e8d)"})
    )
    try:
        qpath = await wait_for_question(browser, call)
        page = await browser.get(qpath)
        assert page.status == 200, (page.status, page.text[:1000])
        form = page.form(action_endswith=f"{qpath}/answer", button=("action", "decline"))
        assert_csrf(form)
        # Decline sends at once: no confirm step, no payload to review.
        declined = await browser.submit(form, click=("action", "decline"))
        assert declined.status in (200, 303), (declined.status, declined.text[:1000])
        assert "payload" not in declined.ids, "decline must not go through the confirm page"

        result = await tool_result(call)
    finally:
        call.cancel()

    # server-everything turns the JSON-RPC error reply into an isError tool result "MCP error -1: ...".
    assert result.is_error, texts(result)
    (text,) = texts(result)
    assert re.match(r"MCP error -1: \S", text), text
