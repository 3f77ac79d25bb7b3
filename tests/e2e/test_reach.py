"""Reaching the person on another device, with real parts on every side:

* a real SMTP server (``aiosmtpd``) receives the email notice, over STARTTLS with a test
  certificate the service trusts through ``SSL_CERT_FILE``; a local HTTP receiver takes the
  webhook and checks its HMAC; neither sees anything of the request;
* a real reverse proxy (Debian's nginx, ``tests/e2e/run.sh`` installs it) serves the pages over
  TLS at ``public_url`` with a certificate made for this run (openssl), and Chromium with a
  390 px phone viewport follows the notice's link through it: passphrase login, one question and
  its decision without sideways scrolling, the answer, live updates, ``Secure`` cookies, CSRF;
  a one-time link from ``mcp-consent login`` works there too;
* a request whose ``Host`` is neither loopback nor the public URL is refused, through the proxy
  and directly.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
from email import message_from_bytes
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx
import pytest

from conftest import CHROMIUM_ARGS, Service, _child_env, api_token, wait_for_live_queue
from test_pages import open_form

pytestmark = pytest.mark.anyio

MARKER = "marker-9d2e in the request"
PASSPHRASE = "correct horse battery staple"
HOOK_SECRET = "hook-secret-4b1"
PUBLIC_HOST = "consent.test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(d: Path) -> dict[str, Path]:
    """A test CA and a server certificate it signs for consent.test and 127.0.0.1."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=mcp-consent test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
            "-keyout", "ca.key", "-out", "ca.pem", cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={PUBLIC_HOST}",
            "-keyout", "server.key", "-out", "server.csr", cwd=d)
    (d / "ext.cnf").write_text(
        f"subjectAltName=DNS:{PUBLIC_HOST},IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
    )
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem", cwd=d)
    return {"ca": d / "ca.pem", "cert": d / "server.pem", "key": d / "server.key"}


def spki_hash(cert: Path) -> str:
    """The base64 SHA-256 of the certificate's public key, for Chromium's SPKI allow-list."""
    pub = subprocess.run(["openssl", "x509", "-in", str(cert), "-pubkey", "-noout"], check=True,
                         capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub, check=True,
                         capture_output=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


class Hooks(http.server.BaseHTTPRequestHandler):
    """The webhook receiver: keeps each body whose signature is right, answers 401 otherwise."""

    got: list[dict[str, Any]] = []
    bad: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        want = "sha256=" + hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
        if hmac.compare_digest(self.headers.get("x-mcp-consent-signature", ""), want):
            Hooks.got.append({"body": body, "json": json.loads(body)})
            self.send_response(200)
        else:
            Hooks.bad.append(self.headers.get("x-mcp-consent-signature", ""))
            self.send_response(401)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class Mailbox:
    """aiosmtpd's handler: keeps each message."""

    def __init__(self) -> None:
        self.mails: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.mails.append((envelope, message_from_bytes(envelope.content), session.ssl is not None))
        return "250 OK queued"


@pytest.fixture
def reach(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Certificates, the SMTP server, the webhook receiver and the service's config file."""
    from aiosmtpd.controller import Controller

    certs = make_certificates(tmp_path)
    # The service trusts the test CA for SMTP's STARTTLS, as a person's system roots would.
    monkeypatch.setenv("SSL_CERT_FILE", str(certs["ca"]))
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(certs["cert"], certs["key"])
    mailbox = Mailbox()
    smtp = Controller(mailbox, hostname="127.0.0.1", port=free_port(), tls_context=tls)
    smtp.start()
    Hooks.got, Hooks.bad = [], []
    hooks = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hooks)
    threading.Thread(target=hooks.serve_forever, daemon=True).start()

    secret = tmp_path / "hook-secret"
    secret.write_text(HOOK_SECRET + "\n")
    secret.chmod(0o600)
    hashed = tmp_path / "passphrase.hash"
    bin_path = os.environ.get("MCP_CONSENT_BIN") or str(Path(__file__).parents[2] / "target/debug/mcp-consent")
    subprocess.run([bin_path, "passwd", "--output", str(hashed)], input=PASSPHRASE + "\n", text=True,
                   check=True, capture_output=True)
    proxy_port = free_port()
    public_url = f"https://{PUBLIC_HOST}:{proxy_port}"
    config = tmp_path / "config.toml"
    config.write_text(
        f'public_url = "{public_url}"\n'
        f'passphrase_hash_file = "{hashed}"\n\n'
        "[notifications]\ndesktop = false\nlanguage = \"en\"\n\n"
        "[[notifications.channels]]\nkind = \"webhook\"\n"
        f'url = "http://127.0.0.1:{hooks.server_address[1]}/hook"\nsecret_file = "{secret}"\n\n'
        "[[notifications.channels]]\nkind = \"email\"\n"
        f'smtp_url = "smtp://127.0.0.1:{smtp.port}"\n'
        'from = "mcp-consent <consent@example.test>"\nto = ["me@example.test", "phone@example.test"]\n'
    )
    config.chmod(0o600)
    try:
        yield {"config": config, "certs": certs, "mailbox": mailbox, "public_url": public_url,
               "proxy_port": proxy_port, "dir": tmp_path}
    finally:
        smtp.stop()
        hooks.shutdown()


@pytest.fixture
def service_config(reach: dict[str, Any]) -> Path:
    return reach["config"]


@pytest.fixture
def nginx(reach: dict[str, Any], service: Service) -> Iterator[str]:
    """nginx terminating TLS at the public URL and proxying to the service; yields that URL."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    d: Path = reach["dir"] / "nginx"
    (d / "logs").mkdir(parents=True)
    user = "user root;\n" if os.geteuid() == 0 else ""
    (d / "nginx.conf").write_text(f"""{user}worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/logs/error.log;
events {{ worker_connections 64; }}
http {{
  access_log {d}/logs/access.log;
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;
  server {{
    listen 127.0.0.1:{reach["proxy_port"]} ssl;
    server_name {PUBLIC_HOST};
    ssl_certificate {reach["certs"]["cert"]};
    ssl_certificate_key {reach["certs"]["key"]};
    location / {{
      proxy_pass {service.base_url};
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto https;
      proxy_buffering off;
      proxy_read_timeout 120s;
    }}
  }}
}}
""")
    proc = subprocess.Popen([binary, "-p", str(d), "-c", str(d / "nginx.conf"), "-g", "daemon off;"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", reach["proxy_port"]), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, f"nginx exited: {proc.stdout.read() if proc.stdout else ''}"
            assert time.monotonic() < deadline, "nginx did not listen"
            time.sleep(0.1)
    try:
        yield reach["public_url"]
    finally:
        proc.terminate()
        proc.wait(timeout=5)


@pytest.fixture
async def phone(chromium_bin: str, reach: dict[str, Any]) -> AsyncIterator[Any]:
    """A Chromium with a 390 px phone viewport that resolves consent.test to loopback and trusts
    only this run's server certificate; every request elsewhere is aborted."""
    from playwright.async_api import async_playwright

    args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {PUBLIC_HOST} 127.0.0.1",
            f"--ignore-certificate-errors-spki-list={spki_hash(reach['certs']['cert'])}"]
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_bin, headless=True, args=args)
        context = await browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                            has_touch=True, device_scale_factor=2)
        context.set_default_timeout(15_000)
        origin = reach["public_url"]

        async def only_public(route: Any) -> None:
            url = route.request.url
            await (route.continue_() if url.startswith(origin + "/") else route.abort("blockedbyclient"))

        await context.route("**/*", only_public)
        try:
            yield context
        finally:
            await context.close()
            await browser.close()


async def wait_for(check: Any, what: str, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        await asyncio.sleep(0.1)
    return found


async def test_a_notice_leads_the_phone_through_the_proxy_to_the_question(
    service: Service, reach: dict[str, Any], nginx: str, phone: Any
) -> None:
    qid = await open_form(service, f"Nickname please {MARKER}", 1, server="weather")
    link = f"{nginx}/questions/{qid}"

    hook = (await wait_for(lambda: Hooks.got, "signed webhook"))[0]
    assert not Hooks.bad, Hooks.bad
    assert hook["json"]["id"] == qid and hook["json"]["url"] == link, hook["json"]
    assert hook["json"]["server"] == "weather" and hook["json"]["kind"] == "form"
    assert hook["json"]["waiting"] == 1
    envelope, mail, over_tls = (await wait_for(lambda: reach["mailbox"].mails, "mail"))[0]
    assert over_tls, "smtp:// upgrades with STARTTLS when the server offers it"
    assert sorted(envelope.rcpt_tos) == ["me@example.test", "phone@example.test"]
    assert "weather" in mail["Subject"] and "input" in mail["Subject"], mail["Subject"]
    text = mail.get_payload(decode=True).decode()
    assert link in text, text
    for seen in [hook["body"].decode(), envelope.content.decode(errors="replace")]:
        assert MARKER not in seen and "Nickname please" not in seen, seen

    # The person taps the link on the phone: login with the passphrase, then the question.
    page = await phone.new_page()
    await page.goto(link)
    assert page.url.startswith(f"{nginx}/login"), page.url
    await page.get_by_label("Passphrase").fill(PASSPHRASE)
    await page.get_by_role("button", name="Log in").click()
    # Back on the question the notice linked to.
    await page.wait_for_url(link)
    cookies = await phone.cookies(nginx)
    assert cookies and all(c["secure"] and c["httpOnly"] for c in cookies), cookies
    await page.locator("form[action$='/answer']").first.wait_for(state="visible")
    wide = await page.evaluate("document.documentElement.scrollWidth")
    assert wide <= 390, f"the question page scrolls sideways on a phone: {wide} px"
    assert await page.get_by_role("button", name="Decline").is_visible()

    # CSRF through the proxy: a post without the page's token is refused.
    forged = await page.evaluate(
        "url => fetch(url, {method: 'POST', body: new URLSearchParams({action: 'decline'})}).then(r => r.status)",
        f"{link}/answer",
    )
    assert forged == 403, forged

    await page.get_by_label("Nickname").fill("phone-nick")
    await page.get_by_role("button", name="Review and send…").click()
    await page.locator("#payload").wait_for(state="visible")
    await page.get_by_role("button", name="Send", exact=True).click()
    await page.locator("section.outcome").wait_for(state="visible")
    async with httpx.AsyncClient(timeout=10.0) as client:
        got = await client.get(service.url(f"/api/v1/questions/{qid}"),
                               headers={"authorization": f"Bearer {api_token(service)}"})
    assert got.json()["state"] == "accepted", got.json()
    assert got.json()["response"]["result"]["content"]["nick"] == "phone-nick"

    # Live updates through the proxy: the queue shows a question that opens while it is open.
    await page.goto(f"{nginx}/")
    await wait_for_live_queue(service)
    second = await open_form(service, "second", 2, server="weather")
    await page.locator(f"a[href='/questions/{second}']").wait_for(state="visible")


async def test_a_one_time_link_from_login_opens_on_the_phone(
    service: Service, nginx: str, phone: Any
) -> None:
    done = subprocess.run([str(service.bin), "login", "--state-dir", str(service.state_dir)],
                          capture_output=True, text=True, timeout=30, env=_child_env(), check=True)
    links = [ln for ln in done.stdout.splitlines() if "/login?token=" in ln]
    # The link for any device, then the same one at the loopback address.
    assert len(links) == 2 and links[1].startswith(service.base_url + "/login?token="), done.stdout
    link = links[0]
    assert link.startswith(f"{nginx}/login?token="), link
    page = await phone.new_page()
    await page.goto(link)
    assert page.url == f"{nginx}/", page.url
    cookies = await phone.cookies(nginx)
    assert cookies and all(c["secure"] for c in cookies), cookies


async def test_a_host_that_is_neither_loopback_nor_public_is_refused(
    service: Service, reach: dict[str, Any], nginx: str
) -> None:
    ca = str(reach["certs"]["ca"])
    port = reach["proxy_port"]
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=ca), timeout=10.0) as client:
        ok = await client.get(f"https://127.0.0.1:{port}/login", headers={"host": f"{PUBLIC_HOST}:{port}"})
        assert ok.status_code == 200, ok.status_code
        evil = await client.get(f"https://127.0.0.1:{port}/login", headers={"host": "evil.example"})
        assert evil.status_code == 403, evil.status_code
        # Through the proxy, /metrics is not "this machine": it needs its token.
        metrics = await client.get(f"https://127.0.0.1:{port}/metrics", headers={"host": f"{PUBLIC_HOST}:{port}"})
        assert metrics.status_code == 401, metrics.status_code
    async with httpx.AsyncClient(timeout=10.0) as client:
        direct = await client.get(service.url("/login"), headers={"host": "evil.example"})
        assert direct.status_code == 403
        forwarded = await client.get(service.url("/login"), headers={"x-forwarded-host": "evil.example"})
        assert forwarded.status_code == 403
        assert (await client.get(service.url("/login"))).status_code == 200
