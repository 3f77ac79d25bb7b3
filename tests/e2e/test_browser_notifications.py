"""The queue's "Notify me in this browser" in real Chromium: with the
permission granted, a question that opens while the queue is open shows one browser notification
naming the server and the kind, and nothing of the request.

Chromium's notification permission is granted in the browser context; the page's
``Notification`` is replaced by an init script that records what would be shown in
``sessionStorage`` (the queue reloads itself after each event).
"""

from __future__ import annotations

import pytest

from conftest import RealBrowser, Service, wait_for_live_queue
from test_pages import open_form

pytestmark = pytest.mark.anyio

RECORD_NOTIFICATIONS = """
(function () {
  var Real = window.Notification;
  if (!Real) return;
  function Recorded(title, options) {
    var shown = JSON.parse(sessionStorage.getItem("shown") || "[]");
    shown.push({ title: title, body: (options || {}).body });
    sessionStorage.setItem("shown", JSON.stringify(shown));
  }
  Object.defineProperty(Recorded, "permission", { get: function () { return Real.permission; } });
  Recorded.requestPermission = function () { return Real.requestPermission(); };
  window.Notification = Recorded;
})();
"""

MARKER = "marker-5e1b in the request"


async def test_a_new_question_notifies_this_browser_with_server_and_kind_only(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    await real_browser.context.grant_permissions(["notifications"], origin=service.base_url)
    await real_browser.context.add_init_script(RECORD_NOTIFICATIONS)
    await page.goto("/")
    # Already allowed: the button gives way to the note that notifications are on.
    await page.locator("[data-notify-on]").wait_for(state="visible")
    assert not await page.locator("[data-notify-ask]").is_visible()
    await wait_for_live_queue(service)

    qid = await open_form(service, MARKER, 51, server="notify-e2e")
    await page.locator(f"tr[data-question-id='{qid}']").wait_for()
    shown = await page.evaluate("JSON.parse(sessionStorage.getItem('shown') || '[]')")
    assert shown == [{"title": "mcp-consent", "body": "notify-e2e asks for input"}], shown
    assert MARKER not in str(shown)
    real_browser.assert_clean()


async def test_the_button_shows_where_the_browser_can_notify(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    await page.goto("/")
    ask = page.get_by_role("button", name="Notify me in this browser")
    await ask.wait_for(state="visible")
    real_browser.assert_clean()
