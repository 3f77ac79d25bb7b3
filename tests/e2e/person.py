"""What a person does in the pages, in real Chromium (the ``real_browser`` fixtures, conftest.py).

Find the waiting question in the queue and open it, click "Review and send…", read the confirm
page and click "Send", or click "Decline". Every step waits on page state (Playwright's
auto-waiting locators and navigation events), never on a fixed delay; the one poll is the
reload a person does when JavaScript is off.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.parse
from typing import Any

from conftest import RealBrowser

QUESTION_WAIT = 20.0  # seconds for a held request to show up in the queue
QUESTION_LINK = re.compile(r"^/questions/[0-9a-f-]+$")
QUEUE_LINKS = "#queue a[href^='/questions/']"


class OriginNullRefused(AssertionError):
    """The service refused the browser's own form POST because of its ``Origin`` header.

    Pages are served with ``Referrer-Policy: same-origin``: under ``no-referrer`` a browser sends
    ``Origin: null`` on its own form posts and the Origin check refuses them (a bug these tests
    found)."""


def _ended(call: asyncio.Task[Any]) -> str:
    error = call.exception()
    return repr(error) if error is not None else repr(call.result())


async def queue_links(page: Any) -> list[str]:
    """Paths of the question links in the queue table, in order."""
    hrefs = await page.locator(QUEUE_LINKS).evaluate_all("els => els.map(e => e.getAttribute('href'))")
    return [h for h in hrefs if QUESTION_LINK.match(h)]


async def open_question(rb: RealBrowser, call: asyncio.Task[Any]) -> str:
    """From the queue page, click the one question that waits; returns its path.

    With JavaScript on the queue page shows it by itself (the fixture waited until the page
    listens to ``/api/v1/events``); without, the person reloads. Fails as soon as ``call`` ends
    without the person having been asked.
    """
    page = rb.page
    if rb.javascript:
        appeared = asyncio.ensure_future(
            page.locator(QUEUE_LINKS).first.wait_for(state="visible", timeout=QUESTION_WAIT * 1000)
        )
        done, _ = await asyncio.wait({appeared, call}, return_when=asyncio.FIRST_COMPLETED)
        if appeared not in done:
            appeared.cancel()
            raise AssertionError(f"the call ended before a question appeared: {_ended(call)}")
        await appeared  # a Playwright TimeoutError when nothing appeared in QUESTION_WAIT
    else:
        deadline = time.monotonic() + QUESTION_WAIT
        while not await queue_links(page):
            assert not call.done(), f"the call ended before a question appeared: {_ended(call)}"
            assert time.monotonic() < deadline, "no question in the queue"
            await asyncio.sleep(0.3)
            await page.reload()
    links = await queue_links(page)
    assert len(links) == 1, f"expected one pending question, queue links: {links}"
    (qpath,) = links
    await page.locator(f"#queue a[href='{qpath}']").click()
    await page.wait_for_url(f"**{qpath}")
    return qpath


async def click_answer(page: Any, qpath: str, button: str) -> tuple[Any, list[tuple[str, str]]]:
    """Clicks ``button`` of the answer form; returns the response to the POST and the form data
    set Chromium posted (ordered name/value pairs)."""
    async with page.expect_response(
        lambda r: r.request.method == "POST" and r.url.endswith(f"{qpath}/answer")
    ) as posted:
        await page.get_by_role("button", name=button, exact=True).click()
    response = await posted.value
    if response.status == 403 and "Origin not allowed" in await response.text():
        raise OriginNullRefused(
            f"POST {qpath}/answer refused: {response.status} {await response.text()!r}; "
            f"request Origin: {await response.request.header_value('origin')!r}"
        )
    sent = urllib.parse.parse_qsl(response.request.post_data or "", keep_blank_values=True)
    csrf = [v for n, v in sent if n == "csrf"]
    assert len(csrf) == 1 and len(csrf[0]) >= 16, f"the answer form posts no proper csrf token: {csrf}"
    return response, sent


async def review(page: Any, qpath: str) -> list[tuple[str, str]]:
    """Clicks "Review and send…" and waits for the confirm page; returns what Chromium posted."""
    response, sent = await click_answer(page, qpath, "Review and send…")
    assert response.status == 200, (response.status, (await response.text())[:1000])
    await page.wait_for_url(f"**{qpath}/answer")
    await page.locator("#payload").wait_for(state="visible")
    return sent


async def confirm_and_send(page: Any, qpath: str) -> Any:
    """On the confirm page: checks it shows exactly the JSON its form will send, clicks "Send"
    and waits for the question page; returns the JSON shown."""
    shown = json.loads(await page.locator("#payload").inner_text())
    form = page.locator(f"form[action$='{qpath}/send']")
    hidden = await form.locator("input[name='payload']").get_attribute("value")
    assert json.loads(hidden) == shown, "the confirm form would send something else than it shows"
    async with page.expect_response(
        lambda r: r.request.method == "POST" and r.url.endswith(f"{qpath}/send")
    ) as posted:
        await form.get_by_role("button", name="Send", exact=True).click()
    response = await posted.value
    assert response.status == 303, (response.status, (await response.text())[:1000])
    await page.wait_for_url(f"**{qpath}")
    await page.locator("section.outcome").wait_for(state="visible")
    return shown


async def decline(page: Any, qpath: str) -> None:
    """Clicks "Decline": sent at once, no confirm step; waits for the decided question page."""
    response, _ = await click_answer(page, qpath, "Decline")
    assert response.status == 303, (response.status, (await response.text())[:1000])
    # The URL does not change (the form lives on the question page): wait for what is new.
    await page.locator("section.outcome").wait_for(state="visible")


async def outcome(page: Any) -> str:
    """The heading of the decided question's outcome ("Outcome: accepted", …); waits for it."""
    return await page.locator("section.outcome h2").inner_text()
