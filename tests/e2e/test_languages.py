"""The pages in English, Simplified Chinese and Brazilian Portuguese, in real Chromium:

* the browser's language (Playwright's ``locale`` sets ``Accept-Language``) picks the pages'
  language, ``<html lang>`` names it, and the switcher's link changes it for the next pages;
* axe-core (pinned in package.json, run from ``node_modules/axe-core/axe.min.js``, injected as an
  init script so the page's CSP does not apply to it) finds no serious or critical violation on
  the main page states in each language: the queue (empty and with questions), a form question,
  its confirm step, a form re-rendered with an error, a sampling question, a URL question, a
  local-network URL's second confirmation, a decided question, history, audit, rules, the login
  page and the 404 page.

Questions are opened through the JSON API, as the proxy does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from conftest import E2E_DIR, Service, api_token, login_link

pytestmark = pytest.mark.anyio

AXE = E2E_DIR / "node_modules" / "axe-core" / "axe.min.js"

# The heading of the queue in each language, as the catalogues write it.
QUEUE_HEADING = {"en": "Waiting for you", "zh-CN": "等待你处理", "pt-BR": "Aguardando você"}

FORM = {
    "type": "object",
    "properties": {
        "nick": {"type": "string", "title": "Nickname", "minLength": 3},
        "age": {"type": "integer", "title": "Age", "minimum": 1, "maximum": 150},
        "agree": {"type": "boolean", "title": "Agree"},
        "color": {
            "type": "string",
            "title": "Colour",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}],
        },
        "pets": {"type": "array", "title": "Pets", "items": {"type": "string", "enum": ["cat", "dog"]}, "minItems": 1},
    },
    "required": ["nick", "pets"],
}


async def open_request(service: Service, rpc_id: int, method: str, params: dict[str, Any]) -> str:
    body = {
        "server": "lang-e2e-server",
        "session": "s-lang",
        "protocolVersion": "2025-11-25",
        "clientCapabilities": {"sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}}},
        "request": {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params},
    }
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(
            service.url("/api/v1/requests"), json=body, headers={"authorization": f"Bearer {api_token(service)}"}
        )
    assert resp.status_code == 201, (resp.status_code, resp.text)
    return resp.json()["id"]


async def open_all(service: Service) -> dict[str, str]:
    """One question of each kind, plus one that is decided (declined over the API)."""
    ids = {
        "form": await open_request(service, 1, "elicitation/create", {"message": "Your profile", "requestedSchema": FORM}),
        "sampling": await open_request(service, 2, "sampling/createMessage", {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise the report"}}],
            "systemPrompt": "Be brief.",
            "maxTokens": 200,
            "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 0.5},
        }),
        "url": await open_request(service, 3, "elicitation/create", {
            "mode": "url", "message": "Sign in", "url": "https://accounts.example.com/login", "elicitationId": "e-1",
        }),
        "local": await open_request(service, 4, "elicitation/create", {
            "mode": "url", "message": "Local tool", "url": "http://127.0.0.1:9/setup", "elicitationId": "e-2",
        }),
        "decided": await open_request(service, 5, "elicitation/create", {"message": "Old one", "requestedSchema": FORM}),
    }
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(
            service.url(f"/api/v1/questions/{ids['decided']}/answer"),
            json={"action": "decline"},
            headers={"authorization": f"Bearer {api_token(service)}"},
        )
    assert resp.status_code == 200, resp.text
    return ids


@pytest.fixture
async def browser_in(chromium: Any, service: Service) -> AsyncIterator[Any]:
    """``browser_in(locale)``: a page of a fresh Chromium context whose language is ``locale``,
    with axe-core loaded in every document, logged in through a one-time link."""
    contexts: list[Any] = []

    async def make(locale: str) -> Any:
        context = await chromium.new_context(locale=locale, base_url=service.base_url)
        contexts.append(context)
        context.set_default_timeout(15_000)
        await context.add_init_script(path=str(AXE))
        page = await context.new_page()
        resp = await page.goto(login_link(service))
        assert resp is not None and resp.ok
        return page

    yield make
    for context in contexts:
        await context.close()


async def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    found = await page.evaluate(
        """async () => {
          const r = await axe.run(document, {resultTypes: ["violations"]});
          return r.violations
            .filter(v => v.impact === "serious" || v.impact === "critical")
            .map(v => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "));
        }"""
    )
    return list(found)


async def check(page: Any, path: str, lang: str, problems: list[str], status: int = 200) -> None:
    resp = await page.goto(path)
    assert resp is not None and resp.status == status, (path, resp and resp.status)
    assert await page.evaluate("document.documentElement.lang") == lang, path
    problems.extend(f"{lang} {path}: {v}" for v in await serious_violations(page))


@pytest.mark.parametrize("lang", ["en", "zh-CN", "pt-BR"])
async def test_every_main_page_state_passes_axe_in_each_language(browser_in: Any, service: Service, lang: str) -> None:
    page = await browser_in(lang)
    problems: list[str] = []

    await check(page, "/", lang, problems)
    assert await page.locator("h1").inner_text() == QUEUE_HEADING[lang]
    # Away from the live queue first: the questions opened next would make it reload itself
    # under the next navigation.
    await page.goto("/history")
    ids = await open_all(service)
    for path in ["/", f"/questions/{ids['form']}", f"/questions/{ids['sampling']}", f"/questions/{ids['url']}",
                 f"/questions/{ids['decided']}", f"/questions/{ids['local']}/open", "/history", "/audit", "/rules"]:
        await check(page, path, lang, problems)

    # A form sent with an error only the server sees (no pet chosen in a required multi-select,
    # minItems 1: 422, the
    # field marked), then correctly: the confirm step.
    await page.goto(f"/questions/{ids['form']}")
    await page.fill("input[name='field.nick']", "abc")
    await page.locator("button[value='accept']").click()
    await page.wait_for_selector("[aria-invalid='true']")
    assert await page.evaluate("document.documentElement.lang") == lang
    problems.extend(f"{lang} form with an error: {v}" for v in await serious_violations(page))
    await page.locator("input[name='field.pets'][value='cat']").check()
    await page.locator("button[value='accept']").click()
    await page.wait_for_selector("#payload")
    problems.extend(f"{lang} confirm: {v}" for v in await serious_violations(page))

    await check(page, "/no/such/page", lang, problems, status=404)
    await page.context.clear_cookies()
    await check(page, "/login", lang, problems)

    assert not problems, "axe found serious or critical violations:\n" + "\n".join(problems)


async def test_the_switcher_changes_the_language_of_the_next_pages(browser_in: Any, service: Service) -> None:
    page = await browser_in("zh-CN")
    assert await page.locator("h1").inner_text() == QUEUE_HEADING["zh-CN"]
    await page.get_by_role("link", name="Português (Brasil)").click()
    await page.wait_for_url(service.base_url + "/")
    assert await page.evaluate("document.documentElement.lang") == "pt-BR"
    assert await page.locator("h1").inner_text() == QUEUE_HEADING["pt-BR"]
    assert await page.locator("nav.languages a[aria-current='true']").inner_text() == "Português (Brasil)"
    await page.goto("/history")
    assert await page.locator("h1").inner_text() == "Decididas"
    # Back to English from a question page: the switcher returns to the same page.
    qid = await open_request(service, 9, "elicitation/create", {"message": "Hi", "requestedSchema": FORM})
    await page.goto(f"/questions/{qid}")
    await page.get_by_role("link", name="English").click()
    await page.wait_for_url(service.base_url + f"/questions/{qid}")
    assert await page.evaluate("document.documentElement.lang") == "en"
    assert "asks for your input" in await page.locator("h1").inner_text()
