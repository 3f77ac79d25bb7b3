"""The pages in a real browser: headless Chromium (Playwright over CDP, the system binary).

* the queue updates itself (``/static/app.js`` listens to ``/api/v1/events`` and reloads) while it
  is open, and the pages log no console error, no JS exception and no CSP violation;
* a person answers server-everything's ``trigger-elicitation-request`` form by typing into it
  and clicking "Review and send…" and then "Send", with JavaScript on and with it off: the
  confirm page shows what was typed plus the defaults, and the tool result carries exactly that.

Every request to another origin is aborted by the ``real_browser`` fixtures (conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

import httpx
import pytest
from mcp.client import Client

from conftest import SERVER_NAME, RealBrowser, Service, api_token
from test_everything import (
    ELICITATION_MESSAGE,
    assert_tools_declared,
    raw_elicitation_result,
    texts,
    tool_result,
)

pytestmark = pytest.mark.anyio

QUESTION_WAIT = 20.0
QUESTION_LINK = re.compile(r"^/questions/[0-9a-f-]+$")

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


async def event_subscribers(service: Service) -> int:
    async with httpx.AsyncClient(timeout=5.0) as client:
        resp = await client.get(service.url("/metrics"))
    assert resp.status_code == 200, resp.text[:300]
    m = re.search(r"^mcp_consent_event_subscribers(?:\{[^}]*\})? (\S+)$", resp.text, re.M)
    assert m, "no mcp_consent_event_subscribers in /metrics"
    return int(float(m.group(1)))


async def wait_for_live_queue(service: Service) -> None:
    """Until the open queue page's EventSource is subscribed (so no event can be missed)."""
    deadline = time.monotonic() + 10
    while await event_subscribers(service) < 1:
        assert time.monotonic() < deadline, "the queue page never subscribed to /api/v1/events"
        await asyncio.sleep(0.1)


async def queue_links(page: Any) -> list[str]:
    hrefs = await page.locator("#queue a[href^='/questions/']").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))"
    )
    return [h for h in hrefs if QUESTION_LINK.match(h)]


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


# ---------------------------------------------------------------- 1. the live queue


async def test_queue_shows_a_new_question_without_reload(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    assert page.url == service.base_url + "/"
    await wait_for_live_queue(service)
    assert await queue_links(page) == [], "queue not empty at start"
    assert "Nothing is waiting" in await page.locator("#queue").inner_text()

    loads: list[str] = []
    page.on("load", lambda: loads.append(page.url))
    qid = await open_api_question(service, "Live queue e2e 5d1c")

    # The test never reloads: the page must do it by itself on the event.
    row = page.locator(f"#queue tr[data-question-id='{qid}']")
    await row.wait_for(state="visible", timeout=10_000)
    assert await queue_links(page) == [f"/questions/{qid}"]
    assert "live-e2e-server" in await row.inner_text()
    assert "live-e2e-tool" in await row.inner_text()
    assert loads, "the row appeared without a page load?"
    assert page.url == service.base_url + "/", page.url

    # The link a person clicks leads to the question.
    await row.get_by_role("link").click()
    await page.wait_for_url(f"**/questions/{qid}")
    assert "Live queue e2e 5d1c" in await page.locator("main").inner_text()

    real_browser.assert_clean()
    assert real_browser.blocked == [], real_browser.blocked


# ---------------------------------------------------------------- 2./3. a form, JS on and off


class OriginNullRefused(AssertionError):
    """The service refused the browser's own form POST because of its ``Origin`` header."""


# Pages are served with ``Referrer-Policy: same-origin``: under ``no-referrer`` a browser sends
# ``Origin: null`` on its own form posts and the Origin check refuses them (a bug these tests
# found). A 403 naming the Origin check is reported as OriginNullRefused.


async def _answer_form(rb: RealBrowser, mcp_client: Client, service: Service, javascript: bool) -> None:
    page = rb.page
    await assert_tools_declared(mcp_client, "trigger-elicitation-request")
    if javascript:
        await wait_for_live_queue(service)
    call = asyncio.create_task(mcp_client.call_tool("trigger-elicitation-request", {}))
    try:
        if javascript:
            # The page is already open: the question appears by itself.
            link = page.locator("#queue a[href^='/questions/']")
            await link.first.wait_for(state="visible", timeout=QUESTION_WAIT * 1000)
        else:
            # Without JavaScript the person reloads.
            deadline = time.monotonic() + QUESTION_WAIT
            while not await queue_links(page):
                assert not call.done(), f"tool call ended before a question appeared: {call.result()!r}"
                assert time.monotonic() < deadline, "no question in the queue"
                await asyncio.sleep(0.3)
                await page.reload()
        (qpath,) = await queue_links(page)
        await page.locator(f"#queue a[href='{qpath}']").click()
        await page.wait_for_url(f"**{qpath}")

        main = page.locator("main")
        text = await main.inner_text()
        assert SERVER_NAME in text and ELICITATION_MESSAGE in text, text[:1500]

        name = "Ada Lovelace (chromium e2e 9b2e)" if javascript else "Ada Lovelace (no-js e2e 4c71)"
        email = "ada.e2e@example.org"
        await page.locator("input[name='field.name']").press_sequentially(name)
        await page.locator("input[name='field.email']").fill(email)
        # Defaults are pre-filled, untouched.
        assert await page.locator("input[name='field.integer']").input_value() == "42"

        async with page.expect_response(
            lambda r: r.request.method == "POST" and r.url.endswith(f"{qpath}/answer")
        ) as posted:
            await page.get_by_role("button", name="Review and send…").click()
        answer = await posted.value
        if answer.status == 403 and "Origin not allowed" in await answer.text():
            raise OriginNullRefused(
                f"POST {qpath}/answer refused: {answer.status} {await answer.text()!r}; "
                f"request Origin: {await answer.request.header_value('origin')!r}"
            )
        assert answer.status == 200, (answer.status, (await answer.text())[:500])
        await page.wait_for_url(f"**{qpath}/answer")
        payload = page.locator("#payload")
        await payload.wait_for(state="visible")
        shown = json.loads(await payload.inner_text())
        content = shown["content"] if "action" in shown else shown
        if "action" in shown:
            assert shown["action"] == "accept", shown
        # The untouched optional boolean "check" (no default) is left out, not sent as false.
        expected = {"name": name, "email": email, **FORM_DEFAULTS}
        assert content == expected, json.dumps(shown, indent=1, ensure_ascii=False)
        hidden = await page.locator("form[action$='/send'] input[name='payload']").get_attribute("value")
        assert json.loads(hidden) == shown, "the confirm form would send something else than it shows"

        await page.get_by_role("button", name="Send", exact=True).click()
        await page.wait_for_load_state()
        result = await tool_result(call)
    finally:
        call.cancel()

    assert not result.is_error, texts(result)
    all_text = "\n".join(texts(result))
    assert "User provided the requested information" in all_text, all_text
    assert f"- Name: {name}" in all_text, all_text
    assert raw_elicitation_result(result) == {"action": "accept", "content": expected}

    # After Send the person sees the question decided.
    await page.goto(qpath)
    assert "Outcome: accepted" in await page.locator("main").inner_text()
    rb.assert_clean()
    assert rb.blocked == [], rb.blocked


async def test_form_answered_in_chromium(real_browser: RealBrowser, mcp_client: Client, service: Service) -> None:
    await _answer_form(real_browser, mcp_client, service, javascript=True)


async def test_form_answered_in_chromium_without_javascript(
    real_browser_nojs: RealBrowser, mcp_client: Client, service: Service
) -> None:
    await _answer_form(real_browser_nojs, mcp_client, service, javascript=False)
