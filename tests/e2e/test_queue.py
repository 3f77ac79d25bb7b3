"""The queue, history, rules and audit pages as a person works them, in real Chromium:

* the live queue changes in place when questions come and go: no reload, the focus stays on the
  same control (or moves to the row that took the place of one that left), ticked boxes stay
  ticked, and a polite status says what changed;
* tables never break inside a word, at 1280 and 390 px, in English and Portuguese (on narrow
  screens they become lists of labelled cards), and no page scrolls sideways;
* the queue is searched and filtered by server, kind and text, grouped by server, and several
  questions are declined at once after a confirmation page; a server is paused, blocked or muted
  from the queue (with JavaScript off: every step is a plain form);
* rules offer the servers seen, refuse a misspelt name until it is confirmed or corrected, ask
  for an explicit confirmation of "both steps", last an hour at the shortest, read "in 7 days"
  for a 7-day rule, and creating and revoking one shows in the audit;
* a question says why it is asked (host session, tool call, what the server asked before);
  History finds decided questions by server, kind, outcome, time and text, saying when, where
  and by whom each was decided;
* each new page state passes axe-core in the three languages and is screenshotted for docs/answering.md.

Questions are opened through the JSON API, as the proxy does.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from conftest import RealBrowser, Service, api_token
from test_a11y import AXE, axe_findings, shooter  # noqa: F401 (shooter is a fixture)

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"nick": {"type": "string", "title": "Nickname"}}, "required": ["nick"]}


async def open_question(service: Service, server: str, rpc_id: int, kind: str = "form", text: str = "Pick a nickname",
                        session: str = "host-session-1", tool: str | None = "search_issues") -> str:
    if kind == "form":
        method, params = "elicitation/create", {"message": text, "requestedSchema": SCHEMA}
    elif kind == "url":
        method, params = "elicitation/create", {"mode": "url", "elicitationId": f"e-{rpc_id}",
                                                 "url": "https://accounts.example.com/connect", "message": text}
    else:
        method, params = "sampling/createMessage", {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": 50}
    body = {
        "server": server,
        "session": session,
        "protocolVersion": "2025-11-25",
        "clientCapabilities": {"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}},
        "request": {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params},
    }
    if tool:
        body["tool"] = tool
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(service.url("/api/v1/requests"), json=body,
                                 headers={"authorization": f"Bearer {api_token(service)}"})
    assert resp.status_code in (200, 201), (resp.status_code, resp.text)
    return resp.json().get("id") or resp.json()["response"]["error"]["message"]


async def api(service: Service, method: str, path: str, body: Any = None) -> Any:
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.request(method, service.url(path), json=body,
                                    headers={"authorization": f"Bearer {api_token(service)}"})
    assert resp.status_code == 200, (resp.status_code, resp.text)
    return resp.json()


async def active(page: Any) -> dict[str, str]:
    return await page.evaluate(
        """() => { const e = document.activeElement; const row = e && e.closest("[data-question-id]");
            return {tag: e ? e.tagName : "", name: (e && e.getAttribute("name")) || "",
                    value: (e && e.getAttribute("value")) || "", row: row ? row.getAttribute("data-question-id") : ""}; }"""
    )


# ---------------------------------------------------------------- the live queue


async def test_the_live_queue_changes_in_place_keeping_focus_and_says_what_changed(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    first = await open_question(service, "github", 1)
    second = await open_question(service, "calendar", 2, kind="sampling", text="Summarise my week")
    third = await open_question(service, "github", 3, text="Choose a reviewer")
    rows = page.locator("#queue tr[data-question-id]")
    await asyncio.wait_for(_rows(page, 3), 15)
    # A reload would lose this mark; an in-place update keeps it.
    await page.evaluate("window.__stillTheSamePage = true")
    box = page.locator(f"#select-{second}")
    await box.focus()
    await page.keyboard.press("Space")
    assert await box.is_checked()

    fourth = await open_question(service, "notes", 4, text="Name the new notebook")
    await asyncio.wait_for(_rows(page, 4), 15)
    status = page.locator("[data-queue-status]")
    await status.filter(has_text="1 new question in the queue.").wait_for(state="attached")
    assert await page.evaluate("window.__stillTheSamePage === true"), "the page reloaded"
    assert await active(page) == {"tag": "INPUT", "name": "id", "value": second, "row": second}
    assert await page.locator(f"#select-{second}").is_checked(), "the tick stays"
    assert await status.get_attribute("role") == "status"

    # The focused row leaves: the focus goes to the same control of the row now in its place.
    await api(service, "POST", f"/api/v1/questions/{second}/answer", {"action": "decline"})
    await asyncio.wait_for(_rows(page, 3), 15)
    await status.filter(has_text="1 question left the queue.").wait_for(state="attached")
    assert await active(page) == {"tag": "INPUT", "name": "id", "value": third, "row": third}
    assert await page.evaluate("window.__stillTheSamePage === true")
    assert await rows.evaluate_all("rs => rs.map(r => r.getAttribute('data-question-id'))") == [first, third, fourth]
    assert "(3) Waiting" in await page.title()
    real_browser.assert_clean()


async def _rows(page: Any, n: int) -> None:
    while await page.locator("#queue tr[data-question-id]").count() != n:
        await asyncio.sleep(0.05)


# ---------------------------------------------------------------- tables

# Every visible word of every table cell lies on one line (a word split across lines has rects
# on two lines), and the page itself does not scroll sideways.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("table td, table th")) {
    if (cell.offsetParent === null) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest(".sr-only")) continue;  // read out, never seen
      const re = /\\S+/g; let m;
      while ((m = re.exec(node.data))) {
        const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  return {broken, sideways: document.documentElement.scrollWidth - window.innerWidth};
}"""


async def test_tables_never_break_inside_a_word_and_become_cards_on_a_phone(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    await page.goto("about:blank")
    for i in range(12):
        await open_question(service, f"server-{i % 3}", 10 + i, kind=["form", "sampling", "url"][i % 3],
                            text="Please review the withdrawn sampling configuration")
    declined = await open_question(service, "server-0", 40)
    await api(service, "POST", f"/api/v1/questions/{declined}/answer", {"action": "decline"})
    withdrawn = await open_question(service, "server-1", 41, kind="sampling")
    await api(service, "POST", f"/api/v1/requests/{withdrawn}/cancel", {})
    await page.goto("/rules")
    await page.locator("#server").fill("server-0")
    await page.locator("#reason").fill("approved by the team")
    await page.get_by_role("button", name="Add rule").click()
    await page.locator("table.questions").wait_for()

    for lang in ("en", "pt-BR"):
        for width in (1280, 390):
            await page.set_viewport_size({"width": width, "height": 900})
            for path in ("/", "/history", "/audit", "/rules"):
                await page.goto(f"{path}?lang={lang}")
                found = await page.evaluate(BROKEN_WORDS)
                assert not found["broken"], f"{path} {lang} @ {width}: words broken across lines: {found['broken'][:10]}"
                assert found["sideways"] <= 0, f"{path} {lang} @ {width} scrolls sideways by {found['sideways']} px"
                if width == 390:
                    header = page.locator("table.questions thead").first
                    assert await header.evaluate("h => h.getBoundingClientRect().height <= 1"), \
                        f"{path}: on a phone the rows are cards with their own labels"
    await page.set_viewport_size({"width": 1280, "height": 900})


# ---------------------------------------------------------------- a queue you can work (no JS)


async def test_the_queue_is_filtered_grouped_and_several_are_declined_at_once_without_javascript(
    real_browser_nojs: RealBrowser, service: Service
) -> None:
    page = real_browser_nojs.page
    a = await open_question(service, "github", 1, text="Pick a label")
    b = await open_question(service, "github", 2, kind="sampling", text="Summarise the pull request")
    c = await open_question(service, "calendar", 3, text="Pick a meeting room")
    await page.goto("/")

    await page.get_by_label("Kind").select_option("sampling")
    await page.get_by_role("button", name="Filter", exact=True).click()
    await page.wait_for_url("**/?*kind=sampling*")
    assert await page.locator("#queue tr[data-question-id]").evaluate_all(
        "rs => rs.map(r => r.getAttribute('data-question-id'))") == [b]
    await page.get_by_role("link", name="Show all").click()
    await page.get_by_label("Search").fill("MEETING")
    await page.get_by_role("button", name="Filter", exact=True).click()
    assert await page.locator("#queue tr[data-question-id]").count() == 1
    assert "Showing 1 of 3 waiting questions." in await page.locator("#queue .count").inner_text()

    await page.goto("/")
    await page.get_by_label("Group by server").check()
    await page.get_by_role("button", name="Filter", exact=True).click()
    groups = await page.locator("h2.group .server").all_inner_texts()
    assert groups == ["github", "calendar"], groups

    # Tick two with the keyboard's Space, decline them after the confirmation page.
    for qid in (a, c):
        await page.locator(f"#select-{qid}").focus()
        await page.keyboard.press("Space")
    await page.get_by_role("button", name="Decline selected…").click()
    await page.get_by_role("heading", name="Decline 2 questions?").wait_for()
    assert await page.locator("ul.decline-list li").count() == 2
    assert (await api(service, "GET", f"/api/v1/questions/{a}"))["state"] == "pending"
    await page.get_by_role("button", name="Decline 2 questions").click()
    await page.get_by_role("status").filter(has_text="Declined 2 questions.").wait_for()
    for qid in (a, c):
        assert (await api(service, "GET", f"/api/v1/questions/{qid}"))["state"] == "declined"
    assert (await api(service, "GET", f"/api/v1/questions/{b}"))["state"] == "pending"

    # Block github from the queue: its next request is refused; unblock and it asks again.
    github = page.locator("#servers li[data-server='github']")
    await github.get_by_role("button", name="Block").click()
    await page.locator("#servers li[data-server='github']").get_by_text("blocked").wait_for()
    refused = await open_question(service, "github", 5)
    assert refused == "the person blocked requests from this server", refused
    await page.locator("#servers li[data-server='github']").get_by_role("button", name="Unblock").click()
    await page.locator("#servers li[data-server='github']").get_by_role("button", name="Pause for an hour").click()
    assert "paused until" in await page.locator("#servers li[data-server='github']").inner_text()
    await page.locator("#servers li[data-server='github']").get_by_role("button", name="Resume").click()
    await page.locator("#servers li[data-server='github']").get_by_role("button", name="Mute notices").click()
    assert "notices muted" in await page.locator("#servers li[data-server='github']").inner_text()
    assert len(await open_question(service, "github", 6)) == 36, "a muted server still asks"
    real_browser_nojs.assert_clean()


# ---------------------------------------------------------------- rules


async def test_rules_catch_a_misspelt_server_confirm_both_steps_and_are_audited(
    real_browser_nojs: RealBrowser, service: Service
) -> None:
    page = real_browser_nojs.page
    await open_question(service, "github", 1)
    await page.goto("/rules")
    assert await page.locator("#servers-seen option").evaluate_all("os => os.map(o => o.value)") == ["github"]
    await page.get_by_label("Server name").fill("gitub")
    await page.get_by_label("Covers").select_option("both")
    await page.get_by_label("Reason").fill("my own code-review bot")
    await page.get_by_label("Expires after").select_option(label="1 hour")
    await page.get_by_role("button", name="Add rule").click()
    summary = page.locator(".error-summary")
    await summary.wait_for()
    text = await summary.inner_text()
    assert "No server named gitub has asked anything yet." in text and "Confirm that both steps" in text, text
    assert await page.locator("table.questions").count() == 0, "no rule was created"
    assert "without you seeing it, tool calls included" in await page.locator("#both-warning").inner_text()

    # Take the offered name; "both steps" still needs its confirmation.
    await page.get_by_role("button", name="Use github").click()
    await summary.wait_for()
    assert "No server named" not in await summary.inner_text()
    assert await page.get_by_label("Server name").input_value() == "github"
    assert await page.get_by_label("Reason").input_value() == "my own code-review bot", "what was typed stays"
    await page.get_by_label("I understand: send the model's answers").check()
    await page.get_by_role("button", name="Add rule").click()
    row = page.locator("table.questions tbody tr").first
    await row.wait_for()
    cells = await row.inner_text()
    assert "both steps" in cells and "in 1 h" in cells, cells

    await page.get_by_label("Server name").fill("github")
    await page.get_by_label("Reason").fill("a week of trust")
    await page.get_by_role("button", name="Add rule").click()
    newest = page.locator("table.questions tbody tr").first
    await newest.get_by_text("a week of trust").wait_for()
    assert "in 7 days" in await newest.inner_text()
    await newest.get_by_role("button", name="Revoke").click()
    await page.goto("/audit")
    actions = await page.locator("table.questions tbody tr td:nth-child(2)").all_inner_texts()
    assert actions[:3] == ["rule revoked", "rule created", "rule created"], actions
    # The two 422s are the page's answers to the refused forms, not failures.
    problems = real_browser_nojs.problems()
    assert problems and all("422" in p for p in problems), problems


# ---------------------------------------------------------------- why, history


async def test_a_question_says_why_and_history_finds_how_each_was_decided(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    await page.goto("about:blank")
    earlier = await open_question(service, "github", 1, text="Pick a label")
    await api(service, "POST", f"/api/v1/questions/{earlier}/answer", {"action": "decline"})
    link = await open_question(service, "github", 2, kind="url", text="Connect your account")
    now = await open_question(service, "github", 3, text="Pick a reviewer")

    await page.goto(f"/questions/{now}")
    why = page.locator("details.why")
    await why.locator("summary").focus()
    await page.keyboard.press("Enter")
    assert await why.evaluate("d => d.open")
    text = await why.inner_text()
    assert "host-session-1" in text and "3 questions from this session" in text, text
    assert "search_issues" in text and "This server asked 2 times before" in text, text
    assert "declined" in text and "a script (API or CLI)" in text, text

    # The person's click on "Open": the service records it and redirects (the fixture's browser
    # never leaves the service, so the redirect is read, not followed).
    opened = await page.request.get(f"/questions/{link}/open", max_redirects=0)
    assert opened.status == 303, opened.status
    await page.goto("/history")
    await page.get_by_label("Kind").select_option("url")
    await page.get_by_role("button", name="Filter", exact=True).click()
    rows = page.locator("table.questions tbody tr")
    assert await rows.count() == 1
    row = await rows.first.inner_text()
    assert "Connect your account" in row and "you, in the browser" in row and "link opened" in row, row
    await page.goto("/history?since=hour&server=github&q=label")
    assert "a script (API or CLI)" in await rows.first.inner_text()
    assert await rows.count() == 1
    real_browser.assert_clean()


# ---------------------------------------------------------------- axe and screenshots


async def test_the_new_page_states_pass_axe_in_every_language_and_are_screenshotted(
    real_browser: RealBrowser, service: Service, shooter: Any
) -> None:
    page = real_browser.page
    await page.goto("about:blank")
    earlier = await open_question(service, "github", 1, text="Pick a label for the issue")
    await api(service, "POST", f"/api/v1/questions/{earlier}/answer", {"action": "decline"})
    a = await open_question(service, "github", 2, text="Pick a reviewer")
    await open_question(service, "calendar", 3, kind="sampling", text="Summarise my week")
    await open_question(service, "github", 4, kind="url", text="Connect your account")

    await page.goto("/?group=server")
    await shooter("queue-grouped")
    await page.goto(f"/questions/{a}")
    await page.locator("details.why summary").click()
    await shooter("question-why")
    await page.goto("/history")
    await shooter("history")
    await page.goto("/rules")
    await page.locator("#server").fill("gitub")
    await page.locator("#reason").fill("trusted")
    await page.get_by_role("button", name="Add rule").click()
    await page.locator(".error-summary").wait_for()
    await shooter("rules-unknown-server")

    findings = {}
    for lang in ("zh-CN", "pt-BR"):
        for path in ("/?group=server", f"/questions/{a}", "/history", "/rules", "/audit"):
            await page.goto(f"{path}{'&' if '?' in path else '?'}lang={lang}")
            if bad := await axe_findings(page):
                findings[f"{path} {lang}"] = bad
    assert not findings, findings
