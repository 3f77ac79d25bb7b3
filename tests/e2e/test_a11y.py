"""The question pages with the keyboard only, Escape, axe-core and screenshots, in real
Chromium, against a service with one configured model (a local fake of an OpenAI-compatible API,
fake_model.py):

* a form is answered with Tab, Enter and Space only: the focus starts on the heading, after a
  refused answer on the error summary, whose link leads into the invalid field; the confirm
  page is reached and Send is pressed with the keyboard;
* a sampling request is approved and its answer sent with the keyboard only;
* Escape asks before it rejects (sampling) or declines (form): Escape again keeps the question
  open, and only the dialog's button sends the page's own Reject / Decline to the server;
* every page state (queue, form question / error / confirm, URL question and local-network
  confirm, sampling request review with an edit, response review, tool-use review, rules,
  audit, login, 404) is screenshotted at 1280 and 390 px into docs/screenshots/ (overwritten on
  every run, so the pictures stay current) and checked with axe-core: no serious or critical
  finding, in light and dark mode.

Questions are opened through the JSON API, as the proxy does.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx
import pytest

import fake_model
from playwright.async_api import expect
from conftest import RealBrowser, Service, api_token

pytestmark = pytest.mark.anyio

E2E = Path(__file__).resolve().parent
SHOTS = E2E.parent.parent / "docs" / "screenshots"
AXE = E2E / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = (1280, 390)

FORM_SCHEMA = {
    "type": "object",
    "properties": {
        "nick": {"type": "string", "title": "Nickname", "description": "What we should call you"},
        "when": {"type": "string", "format": "date-time", "title": "Preferred time"},
        "color": {
            "type": "string",
            "title": "Colour",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}],
            "default": "r",
        },
        "news": {"type": "boolean", "title": "Send me news", "default": False},
    },
    "required": ["nick"],
}


@pytest.fixture
def fake_model_url() -> Iterator[str]:
    server, url = fake_model.start()
    try:
        yield url
    finally:
        server.shutdown()


@pytest.fixture
def service_config(tmp_path: Path, fake_model_url: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        "[[models]]\n"
        'id = "fake-small"\n'
        'provider = "openai"\n'
        f'base_url = "{fake_model_url}"\n'
        "input_usd_per_mtok = 0.5\n"
        "output_usd_per_mtok = 1.5\n"
        "tools = true\n"
    )
    return path


async def open_request(service: Service, method: str, params: dict[str, Any], rpc_id: int,
                       caps: dict[str, Any], server: str = "a11y-e2e-server") -> str:
    body = {
        "server": server,
        "session": "s-a11y",
        "tool": "a11y-e2e-tool",
        "protocolVersion": "2025-11-25",
        "clientCapabilities": caps,
        "request": {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params},
    }
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(
            service.url("/api/v1/requests"), json=body, headers={"authorization": f"Bearer {api_token(service)}"}
        )
    assert resp.status_code == 201, (resp.status_code, resp.text)
    return resp.json()["id"]


async def open_form(service: Service, rpc_id: int, message: str = "Pick a nickname and a time") -> str:
    return await open_request(
        service, "elicitation/create", {"message": message, "requestedSchema": FORM_SCHEMA}, rpc_id,
        {"elicitation": {"form": {}, "url": {}}},
    )


async def open_url(service: Service, rpc_id: int, url: str) -> str:
    params = {"mode": "url", "message": "Sign in to connect your calendar", "url": url,
              "elicitationId": f"el-{rpc_id}"}
    return await open_request(service, "elicitation/create", params, rpc_id, {"elicitation": {"form": {}, "url": {}}})


async def open_sampling(service: Service, rpc_id: int, tools: bool = False) -> str:
    params: dict[str, Any] = {
        "systemPrompt": "You are a concise assistant.\nAnswer in one sentence.",
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is the weather in Paris today?"}}],
        "maxTokens": 200,
    }
    if tools:
        params["tools"] = [{"name": "get_weather", "description": "Current weather for a city",
                            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    caps = {"sampling": {"tools": {}}}
    return await open_request(service, "sampling/createMessage", params, rpc_id, caps)


async def api(service: Service, method: str, path: str, body: Any = None) -> Any:
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.request(method, service.url(path), json=body,
                                    headers={"authorization": f"Bearer {api_token(service)}"})
    assert resp.status_code == 200, (resp.status_code, resp.text)
    return resp.json()


async def wait_for_phase(service: Service, qid: str, phase: str) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while True:
        q = await api(service, "GET", f"/api/v1/questions/{qid}")
        if q.get("phase") == phase:
            return q
        assert time.monotonic() < deadline, f"question {qid} never reached {phase}: {q}"
        await asyncio.sleep(0.05)


async def focused(page: Any) -> dict[str, str]:
    return await page.evaluate(
        """() => { const e = document.activeElement; return e ? {tag: e.tagName, id: e.id || "",
            cls: e.className || "", name: e.getAttribute("name") || "", value: e.getAttribute("value") || "",
            text: (e.textContent || "").trim().slice(0, 80)} : {}; }"""
    )


async def tab_to(page: Any, selector: str, limit: int = 80) -> None:
    """Presses Tab until the focused element matches ``selector`` (the keyboard only)."""
    for _ in range(limit):
        await page.keyboard.press("Tab")
        if await page.evaluate("s => !!document.activeElement && document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}; focus on {await focused(page)}")


# ---------------------------------------------------------------- keyboard only


async def test_a_form_is_answered_with_the_keyboard_only(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    qid = await open_form(service, 1)
    qpath = f"/questions/{qid}"
    await page.goto(qpath)
    await expect(page.locator("main h1")).to_be_focused()

    # The skip link is the first thing Tab reaches on a fresh page and leads to the content.
    first = await page.evaluate(
        "() => document.querySelector('body').querySelector('a[href], button, input:not([type=hidden]), select, textarea').className"
    )
    assert first == "skip-link", first

    await tab_to(page, "input[name='field.nick']")
    await page.keyboard.type("Ada keys")
    await tab_to(page, "input[name='field.when']")
    await page.keyboard.type("tomorrow at ten")
    await tab_to(page, "button[value=accept]")
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/answer")) as posted:
        await page.keyboard.press("Enter")
    assert (await posted.value).status == 422

    # The focus is on the error summary; its link leads into the invalid field.
    await expect(page.locator(".error-summary")).to_be_focused()
    assert await page.locator("input[name='field.when']").get_attribute("aria-invalid") == "true"
    await page.keyboard.press("Tab")
    assert (await focused(page))["tag"] == "A", await focused(page)
    await page.keyboard.press("Enter")
    await expect(page.locator("input[name='field.when']")).to_be_focused()
    # The typed values are kept; fix the time.
    assert await page.locator("input[name='field.nick']").input_value() == "Ada keys"
    await page.keyboard.press("Control+A")
    await page.keyboard.type("2026-12-01T10:00:00Z")
    await tab_to(page, "button[value=accept]")
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/answer")) as posted:
        await page.keyboard.press("Enter")
    assert (await posted.value).status == 200
    await page.locator("#payload").wait_for(state="visible")
    # The confirm page starts at its heading (never on Send); Tab reaches Send, Space sends.
    await expect(page.locator("main h1")).to_be_focused()
    await tab_to(page, "button[value=send]")
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/send")):
        await page.keyboard.press("Space")
    await page.get_by_text("Outcome: accepted").wait_for()
    q = await api(service, "GET", f"/api/v1/questions/{qid}")
    assert q["state"] == "accepted", q
    assert q["response"]["result"]["content"] == {
        "nick": "Ada keys", "when": "2026-12-01T10:00:00Z", "color": "r", "news": False}, q["response"]
    assert all("422" in p for p in real_browser.problems()), real_browser.problems()


async def test_a_sampling_request_is_approved_and_sent_with_the_keyboard_only(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    qid = await open_sampling(service, 2)
    await page.goto(f"/questions/{qid}")
    await expect(page.locator("main h1")).to_be_focused()
    await tab_to(page, "button[value=approve]")
    described = await page.evaluate("() => document.activeElement.getAttribute('aria-describedby')")
    cost = await page.locator(f"#{described}").inner_text()
    assert "estimated cost" in cost, cost
    await page.keyboard.press("Enter")
    await wait_for_phase(service, qid, "response_review")
    # The page may have landed while the model ran, or after it: either way the live page shows
    # the response review without a reload (a change before its event stream opened included).
    await page.locator("button[value=send]").wait_for()
    # The page comes back at the step, not the top: its status has the focus.
    await expect(page.locator("#step-status")).to_be_focused()
    await tab_to(page, "button[value=send]")
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/decide")):
        await page.keyboard.press("Space")
    await page.get_by_text("Outcome: accepted").wait_for()
    q = await api(service, "GET", f"/api/v1/questions/{qid}")
    assert q["response"]["result"]["content"]["text"] == "Sunny in Paris (fake model)", q["response"]
    real_browser.assert_clean()


async def test_escape_asks_then_rejects_or_declines(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    dialog = page.locator("dialog.escape-confirm")

    # Sampling: Escape asks, the safe button focused; Escape again, or Enter, keeps the question;
    # only Tab to the reject button and Enter rejects it.
    sid = await open_sampling(service, 3)
    await page.goto(f"/questions/{sid}")
    await page.keyboard.press("Escape")
    await dialog.wait_for(state="visible")
    assert "Reject this request?" in await dialog.inner_text()
    await expect(dialog.locator("[data-escape-cancel]")).to_be_focused()
    await page.keyboard.press("Escape")
    await dialog.wait_for(state="hidden")
    await page.keyboard.press("Escape")
    await dialog.wait_for(state="visible")
    await page.keyboard.press("Enter")
    await dialog.wait_for(state="hidden")
    assert (await api(service, "GET", f"/api/v1/questions/{sid}"))["state"] == "pending"
    await page.keyboard.press("Escape")
    await dialog.wait_for(state="visible")
    await page.keyboard.press("Tab")
    await expect(dialog.locator("[data-escape-confirm]")).to_be_focused()
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/decide")):
        await page.keyboard.press("Enter")
    await page.get_by_text("Outcome: declined").wait_for()
    q = await api(service, "GET", f"/api/v1/questions/{sid}")
    assert q["response"]["error"]["code"] == -1, q["response"]

    # A form: Escape, Tab, Enter declines it.
    fid = await open_form(service, 4)
    await page.goto(f"/questions/{fid}")
    await page.keyboard.press("Escape")
    await dialog.wait_for(state="visible")
    assert "Decline this question?" in await dialog.inner_text()
    await page.keyboard.press("Tab")
    async with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/answer")):
        await page.keyboard.press("Enter")
    await page.get_by_text("Outcome: declined").wait_for()
    q = await api(service, "GET", f"/api/v1/questions/{fid}")
    assert q["response"]["result"] == {"action": "decline"}, q["response"]
    real_browser.assert_clean()


# ---------------------------------------------------------------- screenshots and axe-core


async def axe_findings(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is (WCAG 2.x A/AA + best practice)."""
    found = await page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            return r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
              .map(v => v.id + " (" + v.impact + "): " + v.nodes.map(n => n.target.join(" ")).join(", "));
        }"""
    )
    return list(found)


@pytest.fixture
async def shooter(real_browser: RealBrowser) -> AsyncIterator[Any]:
    """``shoot(name)``: screenshots the page at each width into docs/screenshots/NAME-WIDTH.png and
    runs axe-core there (and in dark mode at 1280 px); collects the findings."""
    assert AXE.is_file(), f"{AXE} missing: tests/e2e/run.sh installs axe-core with npm ci"
    await real_browser.context.add_init_script(path=str(AXE))
    SHOTS.mkdir(parents=True, exist_ok=True)
    findings: dict[str, list[str]] = {}

    async def shoot(name: str, page: Any = None) -> None:
        page = page or real_browser.page
        for width in WIDTHS:
            await page.set_viewport_size({"width": width, "height": 900})
            await page.emulate_media(color_scheme="light")
            await page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
            if bad := await axe_findings(page):
                findings[f"{name} @ {width}"] = bad
        await page.emulate_media(color_scheme="dark")
        if bad := await axe_findings(page):
            findings[f"{name} @ 1280 dark"] = bad
        await page.emulate_media(color_scheme="light")
        await page.set_viewport_size({"width": WIDTHS[0], "height": 900})

    yield shoot
    assert not findings, "axe-core found serious or critical problems:\n" + "\n".join(
        f"{k}: {v}" for k, v in findings.items()
    )


async def test_every_page_state_is_screenshotted_and_passes_axe(
    real_browser: RealBrowser, service: Service, chromium: Any, shooter: Any
) -> None:
    page = real_browser.page

    # Login, in a context without a session.
    anonymous = await chromium.new_context(base_url=service.base_url)
    try:
        await anonymous.add_init_script(path=str(AXE))
        login = await anonymous.new_page()
        await login.goto("/login")
        await shooter("login", login)
    finally:
        await anonymous.close()

    # The logged-in page rests on the live queue, which reloads itself when questions open;
    # park it on a blank page so that reload cannot race the navigations below.
    await page.goto("about:blank")
    form = await open_form(service, 10)
    url = await open_url(service, 11, "https://accounts.example.com/connect?client=calendar")
    local = await open_url(service, 12, "http://192.168.1.20:8080/setup")
    sampling = await open_sampling(service, 13)
    tools = await open_sampling(service, 14, tools=True)

    await page.goto("/")
    await shooter("queue")

    await page.goto(f"/questions/{form}")
    await shooter("form-question")
    await page.locator("input[name='field.nick']").fill("Ada")
    await page.locator("input[name='field.when']").fill("tomorrow")
    await page.get_by_role("button", name="Review and send…").click()
    await page.locator(".error-summary").wait_for()
    await shooter("form-error")
    await page.locator("input[name='field.when']").fill("2026-12-01T10:00:00Z")
    await page.get_by_role("button", name="Review and send…").click()
    await page.locator("#payload").wait_for()
    await shooter("form-confirm")

    await page.goto(f"/questions/{url}")
    await shooter("url-question")
    await page.goto(f"/questions/{local}/open")
    await page.get_by_role("button", name="Open this local address anyway").wait_for()
    await shooter("url-local-network-confirm")

    # The request review after an edit, so the diff from the server's original shows.
    await api(service, "POST", f"/api/v1/questions/{sampling}/revisions", {
        "baseRevision": 1,
        "texts": [{"message": 0, "block": 0, "text": "What is the weather in Paris today?\nAnswer in Celsius."}],
    })
    await page.goto(f"/questions/{sampling}")
    await page.locator("ol.diff").wait_for()
    await shooter("sampling-request-review")

    await api(service, "POST", f"/api/v1/questions/{sampling}/approvals",
              {"approvalId": f"{sampling}:request:2", "decision": "approve"})
    await wait_for_phase(service, sampling, "response_review")
    await page.goto(f"/questions/{sampling}")
    await shooter("sampling-response-review")

    await api(service, "POST", f"/api/v1/questions/{tools}/approvals",
              {"approvalId": f"{tools}:request:1", "decision": "approve"})
    await wait_for_phase(service, tools, "tool_use_review")
    await page.goto(f"/questions/{tools}")
    allows = await page.locator("#send-allows").inner_text()
    assert "Sending lets a11y-e2e-server run the tool get_weather with these arguments" in allows, allows
    await shooter("sampling-tool-use-review")

    await page.goto("/rules")
    await shooter("rules")
    await page.goto("/audit")
    await shooter("audit")
    resp = await page.goto("/no/such/page")
    assert resp is not None and resp.status == 404
    await shooter("not-found")

    names = {p.name for p in SHOTS.glob("*.png")}
    for state in ["login", "queue", "form-question", "form-error", "form-confirm", "url-question",
                  "url-local-network-confirm", "sampling-request-review", "sampling-response-review",
                  "sampling-tool-use-review", "rules", "audit", "not-found"]:
        for width in WIDTHS:
            assert f"{state}-{width}.png" in names, (state, width)
    # The 422 of the refused form and the 404 are the pages' answers, not failures.
    assert all("422" in p or "404" in p for p in real_browser.problems()), real_browser.problems()
