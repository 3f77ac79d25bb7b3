"""URL-mode elicitation end to end: server-everything's ``trigger-url-elicitation`` (request
path: one ``elicitation/create`` with ``mode: "url"``, 10-minute timeout) through the proxy.

1. A Punycode host, in real Chromium: the question page shows the URL verbatim, the host in
   ASCII and Unicode and the Punycode warning; the URL is not a link; the only way out is the
   service's own ``/questions/<id>/open`` (new tab, ``rel="noopener noreferrer"``). Clicking it
   answers 303 to exactly the URL; the browser's request to that host is aborted by the
   fixture's routing (nothing leaves the machine), and the tool result reports the acceptance.
2. A plain ``http:`` URL: the page warns "Not HTTPS"; Decline (clicked with the httpx browser)
   reaches the server as a decline.
"""

from __future__ import annotations

import asyncio
import time
import urllib.parse

import pytest
from mcp.client import Client

from browser import Browser
from conftest import SERVER_NAME, RealBrowser, Service
from test_everything import (
    assert_csrf,
    assert_tools_declared,
    raw_elicitation_result,
    texts,
    tool_result,
    wait_for_question,
)
from test_real_browser import QUESTION_WAIT, queue_links, wait_for_live_queue

pytestmark = pytest.mark.anyio

IDN_URL = "https://www.xn--80ak6aa92e.com/login?x=1"
IDN_HOST_UNICODE = "www.\u0430\u0440\u0440\u04cf\u0435.com"  # Cyrillic а р р ӏ е: looks like "apple"
HTTP_URL = "http://example.org/plain"
PUNYCODE_WARNING = "This address uses international characters (Punycode)."
NOT_HTTPS_WARNING = "Not HTTPS"


async def test_url_elicitation_open_in_chromium(
    real_browser: RealBrowser, mcp_client: Client, service: Service
) -> None:
    assert IDN_HOST_UNICODE == "www.xn--80ak6aa92e.com".encode().decode("idna")
    page = real_browser.page
    context = real_browser.context
    await assert_tools_declared(mcp_client, "trigger-url-elicitation")
    await wait_for_live_queue(service)
    message = "Sign in to continue (e2e-url-3a7f)"
    call = asyncio.create_task(
        mcp_client.call_tool("trigger-url-elicitation", {"url": IDN_URL, "message": message})
    )
    try:
        await page.locator("#queue a[href^='/questions/']").first.wait_for(timeout=QUESTION_WAIT * 1000)
        (qpath,) = await queue_links(page)
        await page.locator(f"#queue a[href='{qpath}']").click()
        await page.wait_for_url(f"**{qpath}")

        main = await page.locator("main").inner_text()
        assert SERVER_NAME in main and message in main, main[:2000]
        assert await page.locator("pre.url").inner_text() == IDN_URL
        assert "www.xn--80ak6aa92e.com" in main and IDN_HOST_UNICODE in main, main[:2000]
        warnings = await page.locator("p.warning").all_inner_texts()
        assert any(PUNYCODE_WARNING in w for w in warnings), warnings
        # A whole-script look-alike: the emphasised domain and the Open button use the ASCII form.
        assert await page.locator("strong.domain").inner_text() == "xn--80ak6aa92e.com"
        assert any("Look-alike host" in w for w in warnings), warnings
        assert "Open xn--80ak6aa92e.com" in main, main[:2000]
        assert not any(NOT_HTTPS_WARNING in w for w in warnings), warnings

        # The URL is never a link: every link stays on the service; one opens the URL.
        links = await page.locator("a[href]").evaluate_all(
            "els => els.map(e => ({href: e.href, target: e.getAttribute('target'), rel: e.getAttribute('rel')}))"
        )
        foreign = [a for a in links if not a["href"].startswith(service.base_url + "/")]
        assert foreign == [], foreign
        outward = [a for a in links if a["target"] == "_blank"]
        assert outward == [a for a in links if a["href"].endswith("/open")], links
        (open_link,) = outward
        assert open_link["href"] == f"{service.base_url}{qpath}/open", open_link
        assert set((open_link["rel"] or "").split()) >= {"noopener", "noreferrer"}, open_link
        assert await page.locator("pre.url a, p.host a").count() == 0

        # Click Open: a new tab goes to /open, which answers 303 to the URL; the routing aborts
        # the request to the foreign host, so the test never touches the network.
        redirects: list[tuple[int, str | None, str | None]] = []

        def on_response(resp) -> None:  # noqa: ANN001
            if resp.url.endswith(f"{qpath}/open"):
                redirects.append((resp.status, resp.headers.get("location"), resp.headers.get("referrer-policy")))

        context.on("response", on_response)
        async with context.expect_page() as popup_info:
            await page.locator(f"a[href='{qpath}/open']").click()
        popup = await popup_info.value
        deadline = time.monotonic() + 10
        while not (redirects and real_browser.blocked):
            assert time.monotonic() < deadline, (redirects, real_browser.blocked)
            await asyncio.sleep(0.1)
        assert redirects == [(303, IDN_URL, "no-referrer")], redirects
        assert real_browser.blocked == [IDN_URL], real_browser.blocked
        await popup.close()

        result = await tool_result(call)
    finally:
        call.cancel()

    assert not result.is_error, texts(result)
    first = texts(result)[0]
    assert "User completed the URL elicitation flow" in first and f"URL: {IDN_URL}" in first, first
    assert raw_elicitation_result(result) == {"action": "accept"}

    await page.reload()
    assert "Outcome: accepted" in await page.locator("main").inner_text()
    real_browser.assert_clean()


async def test_url_elicitation_open_redirects_without_following(mcp_client: Client, browser: Browser) -> None:
    """The same consent through plain HTTP: the 303's Location is exactly the URL, not followed."""
    await assert_tools_declared(mcp_client, "trigger-url-elicitation")
    call = asyncio.create_task(mcp_client.call_tool("trigger-url-elicitation", {"url": IDN_URL}))
    try:
        qpath = await wait_for_question(browser, call)
        page = await browser.get(qpath)
        assert page.status == 200, (page.status, page.text[:1000])
        assert IDN_URL in page.text and IDN_HOST_UNICODE in page.text and PUNYCODE_WARNING in page.text
        assert [h for h in page.links if "xn--" in h or urllib.parse.urlsplit(h).netloc] == [], page.links
        assert f"{qpath}/open" in page.links, page.links
        opened = await browser.get(f"{qpath}/open")  # the Browser never follows redirects itself
        assert opened.status == 303, (opened.status, opened.text[:500])
        assert opened.response is not None
        assert opened.response.headers["location"] == IDN_URL
        assert opened.response.headers["referrer-policy"] == "no-referrer"
        result = await tool_result(call)
    finally:
        call.cancel()
    assert not result.is_error, texts(result)
    assert raw_elicitation_result(result) == {"action": "accept"}


async def test_url_elicitation_http_warns_and_decline(mcp_client: Client, browser: Browser) -> None:
    await assert_tools_declared(mcp_client, "trigger-url-elicitation")
    call = asyncio.create_task(mcp_client.call_tool("trigger-url-elicitation", {"url": HTTP_URL}))
    try:
        qpath = await wait_for_question(browser, call)
        page = await browser.get(qpath)
        assert page.status == 200, (page.status, page.text[:1000])
        assert HTTP_URL in page.text, page.text[:2000]
        assert NOT_HTTPS_WARNING in page.text, page.text[:2000]
        assert PUNYCODE_WARNING not in page.text
        assert HTTP_URL not in page.links and f"{qpath}/open" in page.links, page.links
        form = page.form(action_endswith=f"{qpath}/answer", button=("action", "decline"))
        assert_csrf(form)
        declined = await browser.submit(form, click=("action", "decline"))
        assert declined.status in (200, 303), (declined.status, declined.text[:1000])
        result = await tool_result(call)
    finally:
        call.cancel()
    assert not result.is_error, texts(result)
    assert "User declined to open the URL" in texts(result)[0], texts(result)
    assert raw_elicitation_result(result) == {"action": "decline"}
