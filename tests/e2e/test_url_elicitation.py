"""URL-mode elicitation end to end: server-everything's ``trigger-url-elicitation`` (request
path: one ``elicitation/create`` with ``mode: "url"``, 10-minute timeout) through the proxy.

1. A Punycode host, in real Chromium: the question page shows the URL verbatim, the host in
   ASCII and Unicode and the Punycode warning; the URL is not a link; the only way out is the
   service's own ``/questions/<id>/open`` (new tab, ``rel="noopener noreferrer"``). Clicking it
   answers 303 to exactly the URL; the browser's request to that host is aborted by the
   fixture's routing (nothing leaves the machine), and the tool result reports the acceptance.
2. A plain ``http:`` URL, in real Chromium: the page warns "Not HTTPS" (and not about
   Punycode), the URL is not a link; clicking Decline reaches the server as a decline.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp.client import Client

from conftest import SERVER_NAME, RealBrowser, Service
from person import decline, open_question, outcome
from test_everything import assert_tools_declared, raw_elicitation_result, texts, tool_result

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
    message = "Sign in to continue (e2e-url-3a7f)"
    call = asyncio.create_task(
        mcp_client.call_tool("trigger-url-elicitation", {"url": IDN_URL, "message": message})
    )
    try:
        qpath = await open_question(real_browser, call)

        main = await page.locator("main").inner_text()
        assert SERVER_NAME in main and message in main, main[:2000]
        assert await page.locator("pre.url").inner_text() == IDN_URL
        assert "www.xn--80ak6aa92e.com" in main and IDN_HOST_UNICODE in main, main[:2000]
        warnings = await page.locator(".url-warnings li, p.note").all_inner_texts()
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
        await popup_info.value
        deadline = time.monotonic() + 10
        while not (redirects and real_browser.blocked):
            assert time.monotonic() < deadline, (redirects, real_browser.blocked)
            await asyncio.sleep(0.1)
        assert redirects == [(303, IDN_URL, "no-referrer")], redirects
        assert real_browser.blocked == [IDN_URL], real_browser.blocked
        # The tab stays open until the fixture closes the whole context: closing it here can race
        # the commit of its error page, and Chromium may then never close it, so page.close()
        # waits forever (microsoft/playwright#42068, crbug.com/536385539; it hung this suite once).

        result = await tool_result(call)
    finally:
        call.cancel()

    assert not result.is_error, texts(result)
    first = texts(result)[0]
    assert "User completed the URL elicitation flow" in first and f"URL: {IDN_URL}" in first, first
    assert raw_elicitation_result(result) == {"action": "accept"}

    await page.reload()
    assert await outcome(page) == "Outcome: accepted"
    real_browser.assert_clean()


async def test_url_elicitation_http_warns_and_decline(
    real_browser: RealBrowser, mcp_client: Client, service: Service
) -> None:
    page = real_browser.page
    await assert_tools_declared(mcp_client, "trigger-url-elicitation")
    call = asyncio.create_task(mcp_client.call_tool("trigger-url-elicitation", {"url": HTTP_URL}))
    try:
        qpath = await open_question(real_browser, call)
        main = await page.locator("main").inner_text()
        assert HTTP_URL in main, main[:2000]
        warnings = await page.locator(".url-warnings li, p.note").all_inner_texts()
        assert any(NOT_HTTPS_WARNING in w for w in warnings), warnings
        assert not any(PUNYCODE_WARNING in w for w in warnings), warnings
        hrefs = await page.locator("a[href]").evaluate_all("els => els.map(e => e.href)")
        assert HTTP_URL not in hrefs and f"{service.base_url}{qpath}/open" in hrefs, hrefs
        await decline(page, qpath)
        result = await tool_result(call)
    finally:
        call.cancel()
    assert not result.is_error, texts(result)
    assert "User declined to open the URL" in texts(result)[0], texts(result)
    assert raw_elicitation_result(result) == {"action": "decline"}
    assert await outcome(page) == "Outcome: declined"
    assert real_browser.blocked == [], real_browser.blocked
    real_browser.assert_clean()
