"""The question pages as a careful person reads them, in real Chromium, against a service with two
configured models (a local fake of an OpenAI-compatible API, fake_model.py) and a cost cap that
only the cheap one fits:

* URL warnings that protect: invisible direction characters shown as code points, a look-alike
  of a well-known domain named, a well-known name in the subdomain and a brand the message names
  but the host is not on warned, each in a warning box unlike a note, with Decline the main
  button; the domain emphasised is the real one, never the whole host;
* one decision per step on the sampling page: one main button per step, writing the answer by
  hand behind "Answer without a model…", the request folded away once a run starts, and after
  "Approve and run" the step's status and buttons where the eye is (390 px);
* no sideways scroll at 390 px on the response and tool-use reviews (en and pt-BR), the
  Regenerate list labelled for Regenerate and starting at the model that just ran;
* a model over the cap shows its own estimate, marked over the cap, and runs after a
  confirmation naming the cost and the cap;
* prompt edit boxes labelled from 1 with the role, tool messages named, tall boxes for long text;
* the page leads with who asks and what (details folded), English kinds in plain words;
* a live countdown that warns in the last minute, and dead controls once the question is gone;
* after sending, what happened and a link to the next waiting question; a sent sampling question
  keeps the edited prompt and the receipt.

Each state is screenshotted into docs/screenshots/ and checked with axe-core (no finding at any
level). Questions are opened through the JSON API, as the proxy does.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx
import pytest

import fake_model
from conftest import RealBrowser, Service, api_token
from playwright.async_api import expect

pytestmark = pytest.mark.anyio

E2E = Path(__file__).resolve().parent
SHOTS = E2E.parent.parent / "docs" / "screenshots"
AXE = E2E / "node_modules" / "axe-core" / "axe.min.js"
SERVER = "pages-e2e"
CAPS_URL = {"elicitation": {"form": {}, "url": {}}}


@pytest.fixture
def fake_model_url() -> Iterator[str]:
    server, url = fake_model.start()
    try:
        yield url
    finally:
        server.shutdown()


@pytest.fixture
def service_config(tmp_path: Path, fake_model_url: str) -> Path:
    # fake-small fits the cap; fake-big is excluded only for its estimate over the cap.
    path = tmp_path / "config.toml"
    path.write_text(
        "[routing]\nmax_request_cost_usd = 0.01\n"
        + "".join(
            f'[[models]]\nid = "{mid}"\nprovider = "openai"\nbase_url = "{fake_model_url}"\n'
            f"input_usd_per_mtok = {price}\noutput_usd_per_mtok = {price}\ntools = true\n"
            for mid, price in (("fake-small", 0.5), ("fake-big", 400.0))
        )
    )
    return path


async def open_request(service: Service, method: str, params: dict[str, Any], rpc_id: int,
                       caps: dict[str, Any], server: str = SERVER) -> str:
    body = {
        "server": server, "session": "s-pages", "tool": "pages-e2e-tool", "protocolVersion": "2025-11-25",
        "clientCapabilities": caps,
        "request": {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params},
    }
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(service.url("/api/v1/requests"), json=body,
                                 headers={"authorization": f"Bearer {api_token(service)}"})
    assert resp.status_code == 201, (resp.status_code, resp.text)
    return resp.json()["id"]


async def open_url(service: Service, rpc_id: int, url: str, message: str = "Open this to continue") -> str:
    params = {"mode": "url", "message": message, "url": url, "elicitationId": f"el-{rpc_id}"}
    return await open_request(service, "elicitation/create", params, rpc_id, CAPS_URL)


async def open_form(service: Service, rpc_id: int, server: str = SERVER) -> str:
    schema = {"type": "object", "properties": {"nick": {"type": "string", "title": "Nickname"}}, "required": ["nick"]}
    return await open_request(service, "elicitation/create",
                              {"message": "Pick a nickname", "requestedSchema": schema}, rpc_id, CAPS_URL, server)


LONG = "\n".join(f"Line {i} of a long question about the weather in Paris and what to wear." for i in range(40))


async def open_sampling(service: Service, rpc_id: int, tools: bool = False, long: bool = False) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": {"type": "text", "text": LONG if long else "What is the weather in Paris?"}},
    ]
    if tools:
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather",
                                               "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "call_1",
                                          "content": [{"type": "text", "text": "18 °C"}]}]},
            {"role": "user", "content": {"type": "text", "text": "And tomorrow?"}},
        ]
    params: dict[str, Any] = {"systemPrompt": "You are a concise assistant.", "messages": messages, "maxTokens": 20}
    if tools:
        params["tools"] = [{"name": "get_weather", "description": "Current weather for a city",
                            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    return await open_request(service, "sampling/createMessage", params, rpc_id, {"sampling": {"tools": {}}})


async def api(service: Service, method: str, path: str, body: Any = None) -> Any:
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.request(method, service.url(path), json=body,
                                    headers={"authorization": f"Bearer {api_token(service)}"})
    assert resp.status_code == 200, (resp.status_code, resp.text)
    return resp.json()


async def wait_for_phase(service: Service, qid: str, phase: str) -> None:
    deadline = time.monotonic() + 15
    while (await api(service, "GET", f"/api/v1/questions/{qid}")).get("phase") != phase:
        assert time.monotonic() < deadline, f"{qid} never reached {phase}"
        await asyncio.sleep(0.05)


def plain(text: str) -> str:
    """``text`` without the invisible isolates (U+2068, U+2069) around server text in sentences."""
    return text.replace("\u2068", "").replace("\u2069", "")


async def no_sideways_scroll(page: Any) -> None:
    width = await page.evaluate("() => document.scrollingElement.scrollWidth")
    assert width <= 390, f"{page.url} scrolls sideways at 390 px: {width} px wide"


async def in_view(page: Any, selector: str) -> None:
    box = await page.locator(selector).first.bounding_box()
    height = page.viewport_size["height"]
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height, (selector, box)


@pytest.fixture
async def shoot(real_browser: RealBrowser) -> AsyncIterator[Any]:
    """``shoot(name)``: screenshots at 1280 and 390 px into docs/screenshots/NAME-WIDTH.png and runs
    axe-core there and in dark mode (no finding at any level); collects what axe finds."""
    await real_browser.context.add_init_script(path=str(AXE))
    SHOTS.mkdir(parents=True, exist_ok=True)
    findings: dict[str, list[str]] = {}

    async def run(name: str) -> None:
        page = real_browser.page
        for width, scheme in ((1280, "light"), (390, "light"), (1280, "dark")):
            await page.set_viewport_size({"width": width, "height": 900})
            await page.emulate_media(color_scheme=scheme)
            if scheme == "light":
                await page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
            found = await page.evaluate(
                """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
                    .map(v => v.id + " (" + v.impact + "): " + v.nodes.map(n => n.target.join(" ")).join(", "))"""
            )
            if found:
                findings[f"{name} @ {width} {scheme}"] = found
        await page.emulate_media(color_scheme="light")
        await page.set_viewport_size({"width": 1280, "height": 900})

    yield run
    assert not findings, "axe-core found problems:\n" + "\n".join(f"{k}: {v}" for k, v in findings.items())


# ---------------------------------------------------------------- URL warnings


async def decline_is_primary(page: Any) -> None:
    decline = page.locator(".decision button[value=decline]")
    assert "primary" in (await decline.get_attribute("class") or ""), "Decline is not the main button"
    open_link = page.locator(".decision a.button")
    assert "primary" not in (await open_link.get_attribute("class") or ""), "Open stays the main button"


async def test_a_direction_override_in_a_url_is_shown_as_a_code_point(real_browser: RealBrowser, service: Service,
                                                                     shoot: Any) -> None:
    page = real_browser.page
    qid = await open_url(service, 1, "https://files.example.com/invoice_\u202efdp.exe",
                         "Your invoice is ready: invoice_\u202efdp.exe")
    await page.goto(f"/questions/{qid}")
    url = page.locator("pre.url")
    # The real order, with the invisible character named where it is.
    assert await url.inner_text() == "https://files.example.com/invoice_U+202Efdp.exe"
    assert await url.locator(".hidden-char").inner_text() == "U+202E"
    assert "invisible characters" in await page.locator(".url-warnings").inner_text()
    await decline_is_primary(page)
    await shoot("url-hidden-characters")
    # Decline, the main button, sends the decline.
    await page.locator(".decision button[value=decline]").click()
    await page.locator("section.outcome").wait_for()
    await expect(page.locator(".what-happened")).to_contain_text(f"Declined at")
    assert '"action": "decline"' in await page.locator("section.outcome pre.json").inner_text()


async def test_a_lookalike_names_the_imitated_domain_in_a_warning_unlike_a_note(
    real_browser: RealBrowser, service: Service, shoot: Any
) -> None:
    page = real_browser.page
    qid = await open_url(service, 2, "https://xn--pple-43d.com/signin", "Sign in to your Apple ID")
    await page.goto(f"/questions/{qid}")
    warnings = page.locator(".url-warnings")
    text = plain(await warnings.inner_text())
    assert "This is not apple.com" in text, text
    await decline_is_primary(page)
    assert "Open xn--pple-43d.com anyway" in await page.locator(".decision a.button").inner_text()
    # The warning box and the note about international characters do not look alike.
    look = """e => { const s = getComputedStyle(e); return [s.backgroundColor, s.borderTopColor, s.borderTopWidth].join(" "); }"""
    note = page.locator("p.note").first
    await expect(note).to_contain_text("international characters")
    assert await warnings.evaluate(look) != await note.evaluate(look)
    await shoot("url-lookalike")


async def test_a_well_known_name_in_the_subdomain_and_a_brand_the_host_is_not_on_are_warned(
    real_browser: RealBrowser, service: Service, shoot: Any
) -> None:
    page = real_browser.page
    chain = await open_url(service, 3, "https://login.microsoftonline.com.evil.example/oauth")
    await page.goto(f"/questions/{chain}")
    # The real domain is emphasised and named on the button, never the whole host.
    assert await page.locator("p.host .domain").inner_text() == "evil.example"
    assert "Open evil.example anyway" in await page.locator(".decision a.button").inner_text()
    text = plain(await page.locator(".url-warnings").inner_text())
    assert "starts with microsoftonline.com" in text and "belongs to evil.example" in text, text
    await decline_is_primary(page)

    brand = await open_url(service, 4, "https://login.microsoftonline.com.account-verify.net/",
                           "Sign in to Microsoft 365")
    await page.goto(f"/questions/{brand}")
    text = plain(await page.locator(".url-warnings").inner_text())
    assert "The message names Microsoft" in text and "account-verify.net" in text, text
    assert "starts with microsoftonline.com" in text, text
    await shoot("url-subdomain-brand")

    # An honest address keeps Open as the main button.
    honest = await open_url(service, 5, "https://www.microsoft.com/account", "Sign in to Microsoft 365")
    await page.goto(f"/questions/{honest}")
    assert await page.locator(".url-warnings").count() == 0
    assert "primary" in (await page.locator(".decision a.button").get_attribute("class") or "")


# ---------------------------------------------------------------- sampling: one decision per step


async def primaries(page: Any) -> list[str]:
    return await page.locator("button.primary:visible, a.button.primary:visible").all_inner_texts()


async def test_one_decision_per_step_and_the_person_stays_at_it(real_browser: RealBrowser, service: Service,
                                                                shoot: Any) -> None:
    page = real_browser.page
    await page.set_viewport_size({"width": 390, "height": 900})
    qid = await open_sampling(service, 10, long=True)
    await page.goto(f"/questions/{qid}")
    # Request review: one main button; the hand-written answer only behind its explicit choice.
    assert await primaries(page) == ["Approve and run"]
    assert not await page.locator("textarea#text").is_visible()
    assert not await page.locator("textarea#resultJson").is_visible()
    await page.get_by_text("Answer without a model…").click()
    await expect(page.locator("textarea#text")).to_be_visible()
    assert not await page.locator("textarea#resultJson").is_visible(), "the JSON box opens only on its own choice"
    await page.get_by_text("Answer without a model…").click()

    # The long prompt gets a tall box.
    assert int(await page.locator("textarea[name='text.0.0']").get_attribute("rows")) >= 20

    await page.get_by_role("button", name="Approve and run", exact=True).click()
    await page.get_by_role("button", name="Send", exact=True).wait_for()
    # The answer is ready: its status and Send are on the first screen at 390 px, the long
    # request folded away below, and the status has the focus.
    await in_view(page, "#step-status")
    await in_view(page, "button[value=send]")
    await expect(page.locator("#step-status")).to_contain_text("the answer is ready")
    await expect(page.locator("#step-status")).to_be_focused()
    assert await page.locator("details.request-details").get_attribute("open") is None
    assert await primaries(page) == ["Send"]
    await no_sideways_scroll(page)
    # Regenerate's list says what it is for and starts at the model that just ran.
    await expect(page.locator("label[for=model-regenerate]")).to_have_text(
        "Model for Regenerate (estimated cost of this request on each)")
    assert await page.locator("#model-regenerate").input_value() == "fake-small"
    await page.set_viewport_size({"width": 1280, "height": 900})
    await shoot("sampling-response-ready")


async def test_the_tool_use_review_reflows_at_390_px_in_english_and_portuguese(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    qid = await open_sampling(service, 11, tools=True)
    await api(service, "POST", f"/api/v1/questions/{qid}/approvals",
              {"approvalId": f"{qid}:request:1", "decision": "approve"})
    await wait_for_phase(service, qid, "tool_use_review")
    await page.set_viewport_size({"width": 390, "height": 900})
    for lang in ("en", "pt-BR"):
        await page.goto(f"/language?set={lang}&next=/questions/{qid}")
        await expect(page.locator("html")).to_have_attribute("lang", lang)
        await page.locator("button[value=send]").wait_for()
        await no_sideways_scroll(page)


async def test_prompt_boxes_count_from_one_with_roles_and_keep_tool_messages(
    real_browser: RealBrowser, service: Service
) -> None:
    page = real_browser.page
    qid = await open_sampling(service, 12, tools=True)
    await page.goto(f"/questions/{qid}")
    labels = await page.locator("form.request-review label[for^='text.']").all_inner_texts()
    assert labels == ["Message 1 (user), block 1", "Message 4 (user), block 1"], labels
    fixed = await page.locator("form.request-review .fixed-block").all_inner_texts()
    assert any("Message 2 (assistant), block 1" in f and "tool_use" in f for f in fixed), fixed
    assert any("Message 3 (user), block 1" in f and "tool_result" in f for f in fixed), fixed
    assert int(await page.locator("textarea[name='text.0.0']").get_attribute("rows")) >= 4
    # The messages above use the same words for the roles.
    roles = await page.locator("ol.messages .role").all_inner_texts()
    assert [r.lower() for r in roles] == ["user", "assistant", "user", "user"], roles


async def test_an_over_cap_model_shows_its_estimate_and_runs_after_a_confirmation(
    real_browser: RealBrowser, service: Service, shoot: Any
) -> None:
    page = real_browser.page
    qid = await open_sampling(service, 13)
    await page.goto(f"/questions/{qid}")
    line = page.locator("[data-estimate-line]")
    await expect(line).to_contain_text("fake-small")
    await page.locator("#model-approve").select_option("fake-big")
    # The line now reads the chosen model's own estimate, marked over the cap.
    await expect(line).to_contain_text("fake-big")
    await expect(line).to_contain_text("over the cost cap")
    await page.get_by_role("button", name="Approve and run", exact=True).click()
    heading = page.locator("h1")
    await expect(heading).to_have_text("Run fake-big over the cost cap?")
    body = await page.locator("#over-cap-desc").inner_text()
    assert "0.01" in body and "fake-big" in body, body
    assert await primaries(page) == ["Back, keep within the cap"]
    await shoot("sampling-over-cap-confirm")
    await page.get_by_role("button", name="Run fake-big anyway", exact=False).click()
    await wait_for_phase(service, qid, "response_review")
    await page.goto(f"/questions/{qid}")
    await expect(page.locator("#run-cost")).to_contain_text("Answer from fake-big")
    # Regenerate starts at the model that just ran, not the routed one.
    assert await page.locator("#model-regenerate").input_value() == "fake-big"


# ---------------------------------------------------------------- who asks, deadlines, afterwards


async def test_the_page_leads_with_who_asks_and_what(real_browser: RealBrowser, service: Service) -> None:
    page = real_browser.page
    qid = await open_form(service, 20)
    await page.set_viewport_size({"width": 390, "height": 900})
    await page.goto(f"/questions/{qid}")
    assert await page.locator("main h1").inner_text() == f"{SERVER} asks for your input"
    # The details are folded; the field is on the first screen.
    assert not await page.locator("details.meta-details dl.meta").is_visible()
    await in_view(page, "input[name='field.nick']")
    # English kinds are plain words, and the title carries no invisible isolates.
    sid = await open_sampling(service, 21)
    await page.goto(f"/questions/{sid}")
    title = await page.title()
    assert title.startswith(f"model request from {SERVER}"), repr(title)
    assert "\u2068" not in title and "\u2069" not in title, repr(title)


async def test_the_deadline_counts_down_warns_and_the_controls_die(real_browser: RealBrowser,
                                                                    service: Service) -> None:
    page = real_browser.page
    await page.clock.install()
    qid = await open_form(service, 30)
    await page.goto(f"/questions/{qid}")
    deadline = page.locator(".deadline")
    await expect(deadline).to_contain_text("15 minutes")
    await page.clock.fast_forward("10:00")
    await expect(deadline).to_contain_text("5 minutes")
    await page.locator("input[name='field.nick']").fill("Ada")
    await page.clock.fast_forward("04:30")
    alert = page.locator(".deadline-alert")
    await expect(alert).to_contain_text("Less than a minute left")
    await page.clock.fast_forward("01:00")
    await expect(alert).to_contain_text("This question has expired")
    await expect(page.locator("button[value=accept]")).to_be_disabled()
    assert await page.locator("input[name='field.nick']").input_value() == "Ada", "what was typed stays"


async def test_a_withdrawal_kills_the_controls_and_keeps_what_was_typed(real_browser: RealBrowser,
                                                                         service: Service) -> None:
    page = real_browser.page
    qid = await open_form(service, 31)
    await page.goto(f"/questions/{qid}")
    await page.locator("input[name='field.nick']").fill("Grace")
    await api(service, "POST", f"/api/v1/requests/{qid}/cancel", {})
    await expect(page.locator("button[value=accept]")).to_be_disabled()
    await expect(page.locator("[data-state-chip]")).to_have_text("withdrawn")
    assert not await page.locator(".deadline").is_visible()
    assert await page.locator("input[name='field.nick']").input_value() == "Grace"


async def test_after_sending_the_page_says_what_happened_and_links_the_next_question(
    real_browser: RealBrowser, service: Service, shoot: Any
) -> None:
    page = real_browser.page
    first = await open_form(service, 40)
    second = await open_form(service, 41, server="other-server")
    await page.goto(f"/questions/{first}")
    await page.locator("input[name='field.nick']").fill("Ada")
    await page.get_by_role("button", name="Review and send…").click()
    await page.get_by_role("button", name="Send", exact=True).click()
    await page.locator("section.outcome").wait_for()
    assert await page.locator("main h1").inner_text() == f"{SERVER} asked for your input"
    assert plain(await page.locator(".what-happened").inner_text()).startswith(f"Sent to {SERVER} at ")
    nxt = page.locator("section.outcome .next a")
    assert await nxt.get_attribute("href") == f"/questions/{second}"
    await expect(nxt).to_contain_text("Next: other-server asks for your input")
    await shoot("form-sent")

    # A sent sampling question keeps the edited prompt and the receipt, and no waiting line.
    sid = await open_sampling(service, 42)
    await api(service, "POST", f"/api/v1/questions/{sid}/revisions",
              {"baseRevision": 1, "texts": [{"message": 0, "block": 0, "text": "Weather in Paris, in Celsius?"}]})
    await api(service, "POST", f"/api/v1/questions/{sid}/approvals",
              {"approvalId": f"{sid}:request:2", "decision": "approve"})
    await wait_for_phase(service, sid, "response_review")
    await page.goto(f"/questions/{sid}")
    await page.get_by_role("button", name="Send", exact=True).click()
    await page.locator("section.outcome").wait_for()
    done = page.locator("#decision")
    await expect(done).to_contain_text("Routed to")
    await expect(done.locator("ol.diff")).to_contain_text("Weather in Paris, in Celsius?")
    assert "has been waiting" not in await page.locator("main").inner_text()
    await shoot("sampling-sent")
