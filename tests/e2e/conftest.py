"""Fixtures for the end-to-end tests with real peers.

* ``service``: ``mcp-consent serve --listen 127.0.0.1:0 --state-dir <tmp>``, read until
  ``listening on http://ADDR``; killed at teardown.
* ``mcp_client``: the MCP Python SDK (2.x ``mcp.client.Client``) over stdio to
  ``mcp-consent proxy --name everything --state-dir <tmp> -- node <server-everything> stdio``,
  with no sampling/elicitation callbacks (the proxy declares those capabilities).

* ``chromium`` (one per session), ``real_browser``, ``real_browser_nojs``: a real headless
  Chromium (Playwright over CDP, the system binary), a fresh context per test logged in the way
  a person is, through a one-time link; see the section at the end. ``person.py`` holds what the
  person then does in the pages.

``MCP_CONSENT_BIN`` overrides the binary (default: ``<repo>/target/debug/mcp-consent``).
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client


E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parent.parent
EVERYTHING_PKG = E2E_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything"
# package.json "bin": {"mcp-server-everything": "dist/index.js"}; first argument picks the transport.
EVERYTHING_ENTRY = EVERYTHING_PKG / "dist" / "index.js"
EVERYTHING_ARGS = [str(EVERYTHING_ENTRY), "stdio"]
SERVER_NAME = "everything"

STARTUP_TIMEOUT = 30.0
LISTENING_RE = re.compile(r"listening on (http://\S+)")


def _log_tail(path: Path, limit: int = 6000) -> str:
    try:
        data = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return data[-limit:] if data else "(empty)"


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    # Session scope: the session-wide ``chromium`` fixture is async, and anyio runs it (and every
    # test) in one event loop only when the backend fixture lives at least as long.
    return "asyncio"


@pytest.fixture(scope="session")
def mcp_consent_bin() -> Path:
    raw = os.environ.get("MCP_CONSENT_BIN")
    path = Path(raw) if raw else REPO_ROOT / "target" / "debug" / "mcp-consent"
    if not path.is_absolute():
        path = REPO_ROOT / path
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"mcp-consent binary not found at {path}: run `cargo build` in {REPO_ROOT} "
            "or set MCP_CONSENT_BIN",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def node_bin() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH", pytrace=False)
    if not EVERYTHING_ENTRY.is_file():
        pytest.fail(
            f"{EVERYTHING_ENTRY} is missing: run `npm ci` in {E2E_DIR} (tests/e2e/run.sh does)",
            pytrace=False,
        )
    return node


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    d = tmp_path / "state"
    d.mkdir()
    return d


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("RUST_BACKTRACE", "1")
    return env


@dataclass
class Service:
    process: subprocess.Popen[str]
    base_url: str  # http://127.0.0.1:PORT (no trailing slash)
    state_dir: Path
    log_path: Path
    bin: Path

    def url(self, path: str) -> str:
        return urllib.parse.urljoin(self.base_url + "/", path.lstrip("/"))


@pytest.fixture
def service_config() -> Path | None:
    """The config file ``serve`` reads (``--config``); none by default. A test module overrides
    this fixture to configure models (test_a11y.py)."""
    return None


@pytest.fixture
def service(
    mcp_consent_bin: Path, state_dir: Path, tmp_path: Path, service_config: Path | None
) -> Iterator[Service]:
    log_path = tmp_path / "service.log"
    log = log_path.open("w")
    config = ["--config", str(service_config)] if service_config else []
    proc = subprocess.Popen(
        [str(mcp_consent_bin), "serve", "--listen", "127.0.0.1:0", "--state-dir", str(state_dir), *config],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=_child_env(),
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:  # keeps draining stdout so the service can never block on it
        assert proc.stdout is not None
        with (tmp_path / "service.stdout").open("w") as out:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    base_url = None
    deadline = time.monotonic() + STARTUP_TIMEOUT
    seen: list[str] = []
    try:
        while base_url is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"service printed no 'listening on http://…' in {STARTUP_TIMEOUT}s; stdout: {seen}")
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                pytest.fail(
                    f"service exited ({proc.wait()}) before listening; stdout: {seen}\n"
                    f"stderr:\n{_log_tail(log_path)}"
                )
            seen.append(line.rstrip("\n"))
            m = LISTENING_RE.search(line)
            if m:
                base_url = m.group(1).rstrip("/")
        parsed = urllib.parse.urlsplit(base_url)
        assert parsed.hostname == "127.0.0.1" and parsed.port and parsed.port != 0, base_url
        yield Service(proc, base_url, state_dir, log_path, mcp_consent_bin)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        log.close()
        print(f"--- service stderr ({log_path}) ---\n{_log_tail(log_path)}")


@pytest.fixture
def proxy_params(service: Service, node_bin: str, tmp_path: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=str(service.bin),
        args=[
            "proxy",
            "--name",
            SERVER_NAME,
            "--state-dir",
            str(service.state_dir),
            "--",
            node_bin,
            *EVERYTHING_ARGS,
        ],
        env=_child_env(),
        cwd=str(REPO_ROOT),
    )


@pytest.fixture
async def mcp_client(proxy_params: StdioServerParameters, tmp_path: Path) -> AsyncIterator[Client]:
    """The Python SDK as the MCP host, through the proxy, with NO sampling/elicitation callbacks.

    The default connect mode "auto" first probes ``server/discover`` (2026-07-28) and falls back
    to ``initialize`` on an error reply, exactly like a real 2.x host.
    """
    errlog_path = tmp_path / "proxy.stderr"
    with errlog_path.open("w") as errlog:
        try:
            # stdio_client hands errlog to the child process as its stderr.
            async with Client(stdio_client(proxy_params, errlog=errlog)) as client:
                yield client
        finally:
            errlog.flush()
            print(f"--- proxy stderr ({errlog_path}) ---\n{_log_tail(errlog_path)}", file=sys.stdout)


# ---------------------------------------------------------------- a real browser (Chromium)
#
# ``chromium``: the system Chromium (``CHROMIUM_BIN``, else ``chromium`` / ``chromium-browser`` on
# PATH; tests/e2e/run.sh installs Debian's ``chromium`` when it is missing) driven by Playwright
# over CDP (``executable_path``: Playwright's own browser downloads are never used).
# One Chromium per test session; each test gets its own context (cookies, storage: nothing is
# shared between tests).
# ``real_browser`` / ``real_browser_nojs``: a fresh context logged in through a one-time login
# link, with every request to another origin aborted (the tests never touch the network), and
# every console message, page error and CSP violation recorded. With JavaScript on, the fixture
# hands over the queue page only once it listens to ``/api/v1/events``, so no question opened
# by the test can be missed.

CHROMIUM_ARGS = [
    "--no-sandbox",  # we may run as root (CI)
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Reports CSP violations to the console as well (Chromium logs most of them itself; this also
# catches those it reports only as events). Injected through CDP, so the page's CSP does not apply.
_CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + e.blockedURI + " at " + e.sourceFile + ":" + e.lineNumber);
});
"""


def login_link(service: Service) -> str:
    """A fresh one-time login URL from ``mcp-consent login --state-dir …`` (last stdout line)."""
    done = subprocess.run(
        [str(service.bin), "login", "--state-dir", str(service.state_dir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        env=_child_env(),
    )
    assert done.returncode == 0, f"login failed ({done.returncode}): {done.stdout}\n{done.stderr}"
    nonempty = [ln.strip() for ln in done.stdout.splitlines() if ln.strip()]
    assert nonempty, f"login printed nothing on stdout; stderr: {done.stderr}"
    url = nonempty[-1]
    assert url.startswith(service.base_url + "/login?token="), (url, service.base_url)
    return url


@pytest.fixture(scope="session")
def chromium_bin() -> str:
    raw = os.environ.get("CHROMIUM_BIN")
    found = raw if raw else (shutil.which("chromium") or shutil.which("chromium-browser"))
    if not found or not os.access(found, os.X_OK):
        pytest.fail(
            "Chromium not found (set CHROMIUM_BIN or install Debian's `chromium`; tests/e2e/run.sh does)",
            pytrace=False,
        )
    return found


@pytest.fixture(scope="session")
async def chromium(chromium_bin: str) -> AsyncIterator[Any]:
    """A headless Chromium for the whole session (fresh temporary profile), closed at the end."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_bin, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class RealBrowser:
    """A logged-in Chromium context and what it reported."""

    context: Any  # playwright BrowserContext
    page: Any  # playwright Page (the first tab)
    service: Service
    javascript: bool
    console: list[str]  # "type: text @ url", every tab
    page_errors: list[str]  # uncaught exceptions
    blocked: list[str]  # requests to other origins, aborted

    def problems(self) -> list[str]:
        """Console errors/warnings (this includes every CSP violation) and uncaught JS errors."""
        bad = [m for m in self.console if m.split(":", 1)[0] in ("error", "warning", "assert")]
        bad += [m for m in self.console if "content security policy" in m.lower()]
        return list(dict.fromkeys(bad + [f"pageerror: {e}" for e in self.page_errors]))

    def assert_clean(self) -> None:
        assert not self.problems(), "browser reported problems:\n" + "\n".join(self.problems())


async def _real_browser(chromium: Any, service: Service, javascript: bool) -> AsyncIterator[RealBrowser]:
    context = await chromium.new_context(java_script_enabled=javascript, base_url=service.base_url)
    context.set_default_timeout(15_000)  # well under the 60 s a held sampling request may wait
    rb = RealBrowser(context, None, service, javascript, [], [], [])
    origin = service.base_url

    async def only_the_service(route: Any) -> None:
        url = route.request.url
        if url == origin or url.startswith(origin + "/"):
            await route.continue_()
        else:
            rb.blocked.append(url)
            await route.abort("blockedbyclient")

    def watch(page: Any) -> None:
        page.on("console", lambda m: rb.console.append(f"{m.type}: {m.text} @ {m.location.get('url', '')}"))
        page.on("pageerror", lambda e: rb.page_errors.append(str(e)))

    await context.route("**/*", only_the_service)
    await context.add_init_script(_CSP_LISTENER)
    context.on("page", watch)
    try:
        rb.page = await context.new_page()
        link = login_link(service)
        resp = await rb.page.goto(link)
        assert resp is not None and resp.ok, resp and resp.status
        # The one-time link sets the session cookie and lands on the queue.
        assert rb.page.url == service.base_url + "/", rb.page.url
        cookies = await context.cookies(service.base_url)
        assert cookies and all(c["httpOnly"] for c in cookies), cookies
        if javascript:
            await wait_for_live_queue(service)
        yield rb
    finally:
        print("--- chromium console ---\n" + "\n".join(rb.console + rb.page_errors) + f"\nblocked: {rb.blocked}")
        await context.close()


@pytest.fixture
async def real_browser(chromium: Any, service: Service) -> AsyncIterator[RealBrowser]:
    """Chromium with JavaScript on, logged in, on the queue page."""
    async for rb in _real_browser(chromium, service, javascript=True):
        yield rb


@pytest.fixture
async def real_browser_nojs(chromium: Any, service: Service) -> AsyncIterator[RealBrowser]:
    """Chromium with JavaScript off, logged in, on the queue page."""
    async for rb in _real_browser(chromium, service, javascript=False):
        yield rb


async def event_subscribers(service: Service) -> int:
    """``mcp_consent_event_subscribers`` from ``/metrics``: pages listening to ``/api/v1/events``."""
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


def api_token(service: Service) -> str:
    return (service.state_dir / "api-token").read_text().strip()


async def answer_pending(
    service: Service, server: str, answer: dict[str, Any], call: asyncio.Task[Any], wait: float = 30.0
) -> dict[str, Any]:
    """Waits for the one pending question of ``server`` while ``call`` runs, answers it over the
    API with ``answer`` and returns its summary."""
    headers = {"Authorization": f"Bearer {api_token(service)}"}
    async with httpx.AsyncClient(base_url=service.base_url + "/api/v1", headers=headers, timeout=10) as api:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if call.done():
                raise AssertionError(f"the call ended before a question appeared: {call.result()!r}")
            listed = (await api.get("/questions", params={"state": "pending"})).json()["questions"]
            mine = [q for q in listed if q["server"] == server]
            if mine:
                (q,) = mine
                sent = await api.post(f"/questions/{q['id']}/answer", json=answer)
                assert sent.status_code == 200, sent.text
                return q
            await asyncio.sleep(0.2)
    raise AssertionError(f"no question from {server} appeared")
