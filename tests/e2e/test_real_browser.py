"""The pages in a real browser: headless Chromium (Playwright over CDP, the system binary).

* a one-time login link logs in once: opened again, in another browser, it is refused;
* the queue updates itself (``/static/app.js`` listens to ``/api/v1/events`` and updates the list in place) while it
  is open, and the pages log no console error, no JS exception and no CSP violation;
* a person answers server-everything's ``trigger-elicitation-request`` form by typing into it
  and clicking "Review and send…" and then "Send", with JavaScript on and with it off: the
  confirm page shows what was typed plus the defaults, and the tool result carries exactly that.

Every request to another origin is aborted by the ``real_browser`` fixtures (conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from typing import Any

import httpx
import pytest
from mcp.client import Client

from conftest import SERVER_NAME, RealBrowser, Service, api_token, login_link
from person import confirm_and_send, open_question, outcome, queue_links, review
from test_everything import (
    ELICITATION_MESSAGE,
    assert_tools_declared,
    raw_elicitation_result,
    texts,
    tool_result,
)

pytestmark = pytest.mark.anyio

# What server-everything's form pre-fills (its schema defaults), as the server must receive them.
FORM_DEFAULTS = {
    "firstLine": "It was a dark and stormy night.",
    "integer": 42,
    "number": 3.14,
    "untitledSingleSelectEnum": "Monica",
    "untitledMultipleSelectEnum": ["Guitar"],
    "titledSingleSelectEnum": "hero-1",
    "titledMultipleSelectEnum": ["fish-1"],
    "legacyTitledEnum": "pet-1",
}


async def open_api_question(service: Service, message: str) -> str:
    """Opens a form question through the JSON API (as the proxy does); returns its id."""
    body = {
        "server": "live-e2e-server",
        "session": "s-live",
        "tool": "live-e2e-tool",
        "protocolVersion": "2025-11-25",
        "clientCapabilities": {"elicitation": {"form": {}}},
        "request": {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "elicitation/create",
            "params": {
                "message": message,
                "requestedSchema": {"type": "object", "properties": {"nick": {"type": "string"}}},
            },
        },
    }
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(
            service.url("/api/v1/requests"),
            json=body,
            headers={"authorization": f"Bearer {api_token(service)}"},
        )
    assert resp.status_code == 201, (resp.status_code, resp.text)
    return resp.json()["id"]


# ---------------------------------------------------------------- 0. the login link


async def test_a_login_link_logs_in_once(chromium: Any, service: Service) -> None:
    link = login_link(service)
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["token"][0]
    assert len(token) >= 16, token
    first = await chromium.new_context()
    second = await chromium.new_context()
    try:
        page = await first.new_page()
        await page.goto(link)
        assert page.url == service.base_url + "/", page.url
        cookies = await first.cookies(service.base_url)
        assert cookies and all(c["httpOnly"] for c in cookies), cookies

        # Someone else opening the same link later gets no session.
        other = await second.new_page()
        resp = await other.goto(link)
        assert resp is not None and resp.status == 401, resp and resp.status
        assert "already used" in await other.locator("main").inner_text()
        assert await second.cookies(service.base_url) == []
    finally:
        await first.close()
        await second.close()


# ---------------------------------------------------------------- 1. the live queue


async def test_queue_shows_a_new_question_without_reload(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    assert page.url == service.base_url + "/"
    assert await queue_links(page) == [], "queue not empty at start"
    assert "Nothing is waiting" in await page.locator("#queue").inner_text()

    loads: list[str] = []
    page.on("load", lambda: loads.append(page.url))
    qid = await open_api_question(service, "Live queue e2e 5d1c")

    # The test never reloads: the page updates its list in place on the event, with no page load
    # (so focus and a screen reader's place are kept).
    row = page.locator(f"#queue tr[data-question-id='{qid}']")
    await row.wait_for(state="visible", timeout=10_000)
    assert await queue_links(page) == [f"/questions/{qid}"]
    assert "live-e2e-server" in await row.inner_text()
    assert "live-e2e-tool" in await row.inner_text()
    assert not loads, f"the queue reloaded the page instead of updating in place: {loads}"
    assert page.url == service.base_url + "/", page.url

    # The link a person clicks leads to the question.
    await row.get_by_role("link").click()
    await page.wait_for_url(f"**/questions/{qid}")
    assert "Live queue e2e 5d1c" in await page.locator("main").inner_text()

    real_browser.assert_clean()
    assert real_browser.blocked == [], real_browser.blocked


# ---------------------------------------------------------------- 2./3. a form, JS on and off


async def _answer_form(rb: RealBrowser, mcp_client: Client) -> None:
    page = rb.page
    await assert_tools_declared(mcp_client, "trigger-elicitation-request")
    call = asyncio.create_task(mcp_client.call_tool("trigger-elicitation-request", {}))
    try:
        qpath = await open_question(rb, call)
        text = await page.locator("main").inner_text()
        assert SERVER_NAME in text and ELICITATION_MESSAGE in text, text[:1500]

        name = "Ada Lovelace (chromium e2e 9b2e)" if rb.javascript else "Ada Lovelace (no-js e2e 4c71)"
        email = "ada.e2e@example.org"
        await page.locator("input[name='field.name']").press_sequentially(name)
        await page.locator("input[name='field.email']").fill(email)
        # Defaults are pre-filled, untouched.
        assert await page.locator("input[name='field.integer']").input_value() == "42"

        await review(page, qpath)
        shown = await confirm_and_send(page, qpath)
        content = shown["content"] if "action" in shown else shown
        if "action" in shown:
            assert shown["action"] == "accept", shown
        # The untouched optional boolean "check" (no default) is left out, not sent as false.
        expected = {"name": name, "email": email, **FORM_DEFAULTS}
        assert content == expected, json.dumps(shown, indent=1, ensure_ascii=False)
        result = await tool_result(call)
    finally:
        call.cancel()

    assert not result.is_error, texts(result)
    all_text = "\n".join(texts(result))
    assert "User provided the requested information" in all_text, all_text
    assert f"- Name: {name}" in all_text, all_text
    assert raw_elicitation_result(result) == {"action": "accept", "content": expected}

    # After Send the person sees the question decided.
    assert await outcome(page) == "Outcome: accepted"
    rb.assert_clean()
    assert rb.blocked == [], rb.blocked


async def test_form_answered_in_chromium(real_browser: RealBrowser, mcp_client: Client) -> None:
    await _answer_form(real_browser, mcp_client)


async def test_form_answered_in_chromium_without_javascript(
    real_browser_nojs: RealBrowser, mcp_client: Client
) -> None:
    await _answer_form(real_browser_nojs, mcp_client)
