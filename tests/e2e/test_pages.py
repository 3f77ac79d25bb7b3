"""The review pages as a person uses them, in real Chromium:

* Enter pressed twice (once to submit the form, once more on the confirm page) sends nothing;
  Back from the confirm page brings the form back with every value, with JavaScript on and off;
* an open question page follows its question: withdrawn while untouched, it says so without a
  reload; withdrawn after the person typed, a notice appears and the typed text stays, and
  posting it anyway shows it back;
* a right-to-left override in the server's name cannot reorder the page's own words after it,
  and the page warns about it;
* at 390 px the queue's Review buttons are on screen and no page scrolls sideways; the tab title
  counts the waiting questions; dark mode follows ``prefers-color-scheme``; unknown routes get
  the styled 404 page.

Questions are opened through the JSON API, as the proxy does.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

# wait_for_live_queue waits for any page's EventSource; here the question page's.
from conftest import RealBrowser, Service, api_token, wait_for_live_queue
from playwright.async_api import expect

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {
        "nick": {"type": "string", "title": "Nickname"},
        "color": {
            "type": "string",
            "title": "Colour",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}],
        },
    },
    "required": ["nick"],
}


async def open_form(service: Service, message: str, rpc_id: int, server: str = "pages-e2e-server") -> str:
    body = {
        "server": server,
        "session": "s-pages",
        "tool": "pages-e2e-tool",
        "protocolVersion": "2025-11-25",
        "clientCapabilities": {"elicitation": {"form": {}}},
        "request": {
            "jsonrpc": "2.0",
            "id": rpc_id,
            "method": "elicitation/create",
            "params": {"message": message, "requestedSchema": SCHEMA},
        },
    }
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(
            service.url("/api/v1/requests"), json=body, headers={"authorization": f"Bearer {api_token(service)}"}
        )
    assert resp.status_code == 201, (resp.status_code, resp.text)
    return resp.json()["id"]


async def api(service: Service, method: str, path: str) -> Any:
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.request(
            method, service.url(path), json={} if method == "POST" else None,
            headers={"authorization": f"Bearer {api_token(service)}"},
        )
    assert resp.status_code == 200, (resp.status_code, resp.text)
    return resp.json()


async def enter_twice_then_back(rb: RealBrowser, service: Service) -> None:
    page = rb.page
    qid = await open_form(service, "Pick a nickname", 1)
    qpath = f"/questions/{qid}"
    await page.goto(qpath)
    await page.locator("select[name='field.color']").select_option("b")
    nick = page.locator("input[name='field.nick']")
    await nick.fill("Ada e2e")
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/answer")) as first:
        await nick.press("Enter")
    assert (await first.value).status == 200
    await page.locator("#payload").wait_for(state="visible")
    main = await page.locator("main").inner_text()
    assert "Nickname" in main and "Blue" in main, main

    # The second Enter lands on nothing that sends: the page's heading has the focus (app.js),
    # or nothing without JavaScript.
    await page.keyboard.press("Enter")
    focused = await page.evaluate("document.activeElement && document.activeElement.tagName")
    assert focused == ("H1" if rb.javascript else "BODY"), focused
    assert (await api(service, "GET", f"/api/v1/questions/{qid}"))["state"] == "pending"

    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/answer")) as back:
        await page.get_by_role("button", name="Back (keeps your answers)").click()
    assert (await back.value).status == 200
    await page.wait_for_load_state()
    assert await page.locator("input[name='field.nick']").input_value() == "Ada e2e"
    assert await page.locator("select[name='field.color']").input_value() == "b"
    assert (await api(service, "GET", f"/api/v1/questions/{qid}"))["state"] == "pending"
    rb.assert_clean()


async def test_enter_twice_sends_nothing_and_back_keeps_the_values(real_browser: RealBrowser, service: Service) -> None:
    await enter_twice_then_back(real_browser, service)


async def test_back_keeps_the_values_without_javascript(real_browser_nojs: RealBrowser, service: Service) -> None:
    await enter_twice_then_back(real_browser_nojs, service)


async def test_an_open_page_follows_its_withdrawal_without_reload(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    qid = await open_form(service, "Withdrawn while open", 2)
    await page.goto(f"/questions/{qid}")
    await wait_for_live_queue(service)
    loads: list[str] = []
    page.on("load", lambda: loads.append(page.url))
    await api(service, "POST", f"/api/v1/requests/{qid}/cancel")

    await page.get_by_text("The server withdrew this question").wait_for(timeout=10_000)
    assert loads == [], "the page reloaded instead of updating itself"
    assert await page.locator("input[name='field.nick']").count() == 0
    real_browser.assert_clean()


async def test_typed_input_survives_a_withdrawal(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    qid = await open_form(service, "Withdrawn while typing", 3)
    await page.goto(f"/questions/{qid}")
    await wait_for_live_queue(service)
    await page.locator("input[name='field.nick']").fill("Grace typed this")
    await api(service, "POST", f"/api/v1/requests/{qid}/cancel")

    notice = page.locator(".live-notice")
    await notice.wait_for(state="visible", timeout=10_000)
    assert "withdrawn" in await notice.inner_text()
    assert await page.locator("input[name='field.nick']").input_value() == "Grace typed this"
    # Nothing can be sent any more: the buttons are dead (question.js).
    await expect(page.get_by_role("button", name="Review and send…")).to_be_disabled()

    # Posting anyway (as a page without JavaScript can): 409, what happened, and the typed text
    # shown back.
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/answer")) as posted:
        await page.evaluate("""() => { const f = document.querySelector("form.answer");
            const a = document.createElement("input"); a.type = "hidden"; a.name = "action"; a.value = "accept";
            f.appendChild(a); f.submit(); }""")
    assert (await posted.value).status == 409
    await page.wait_for_load_state()
    main = await page.locator("main").inner_text()
    assert "The server withdrew this question" in main and "Grace typed this" in main, main
    # The 409 is the page's answer, not a failure: only it may be in the console.
    assert all("409" in p for p in real_browser.problems()), real_browser.problems()


async def no_sideways_scroll(page: Any, path: str) -> None:
    await page.goto(path)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{path} scrolls sideways at 390 px: {width}"


async def test_queue_at_390_px_dark_mode_title_count_and_404(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    await page.set_viewport_size({"width": 390, "height": 844})
    ids = [await open_form(service, f"Phone question {i} " + "long words " * 12, 10 + i) for i in range(3)]
    await api(service, "POST", f"/api/v1/requests/{ids[2]}/cancel")
    await page.goto("/")
    assert (await page.title()).startswith("(2) "), await page.title()
    buttons = page.get_by_role("link", name="Review")
    assert await buttons.count() == 2
    for i in range(2):
        box = await buttons.nth(i).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    previews = await page.locator("td.preview").all_inner_texts()
    assert all(p.startswith("Phone question") and p.endswith("…") for p in previews), previews
    for path in ["/", "/history", "/audit", "/rules", f"/questions/{ids[0]}"]:
        await no_sideways_scroll(page, path)

    await page.emulate_media(color_scheme="dark")
    await page.goto("/")
    bg = await page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(21, 24, 29)", bg

    resp = await page.goto("/no/such/page")
    assert resp is not None and resp.status == 404
    assert "There is no page at this address." in await page.locator("main").inner_text()
    assert await page.evaluate("getComputedStyle(document.body).backgroundColor") == bg, "styled like the others"
    assert all("404" in p for p in real_browser.problems()), real_browser.problems()


async def test_an_override_in_server_text_cannot_reorder_the_pages_words(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    # An unterminated RIGHT-TO-LEFT OVERRIDE: without isolation it would reverse everything
    # after it in the heading ("… asks for your input").
    qid = await open_form(service, "Harmless", 20, server="evil\u202egpj.exe")
    await page.goto(f"/questions/{qid}")
    heading = page.locator("h1")
    assert "asks for your input" in await heading.inner_text()
    layout = await heading.evaluate(
        """h => {
            const name = h.querySelector('.server');
            const text = [...h.childNodes].find(n => n.nodeType === 3 && n.data.includes('asks'));
            const range = document.createRange();
            const at = text.data.indexOf('asks');
            range.setStart(text, at);
            range.setEnd(text, at + 4);
            return {nameRight: name.getBoundingClientRect().right, asksLeft: range.getBoundingClientRect().left};
        }"""
    )
    assert layout["asksLeft"] >= layout["nameRight"] - 1, layout
    warning = await page.locator(".bidi-warning").inner_text()
    assert "server name (U+202E)" in warning, warning
    real_browser.assert_clean()
