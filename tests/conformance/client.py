#!/usr/bin/env python3
"""The client under test for the official MCP conformance suite's client scenarios.

The suite starts a scenario server and runs ``client.py URL`` (the scenario name is in
``MCP_CONFORMANCE_SCENARIO``). This script is the host: it starts
``mcp-consent proxy --name NAME --url URL`` and speaks newline-delimited JSON-RPC to it on stdio
as a host would, in the revision the suite runs the scenario at (``MCP_CONFORMANCE_PROTOCOL_VERSION``):

* 2025-11-25 and earlier: initialize, initialized, tools/list, each tool called;
* 2026-07-28: no handshake; every request carries its ``_meta`` (protocol version, client info,
  capabilities), ``server/discover`` first, a request refused with ``-32022`` is retried once
  with a version the server supports, then tools/list and each tool called, and resources and
  prompts listed and read when the server offers them; a result that asks the host for input
  (``input_required`` with entries the proxy left to it, such as ``roots/list``) is answered and
  retried as the spec's MRTR says.

It declares no sampling or elicitation capability of its own, so every such request from the
scenario server has to become a question on the mcp-consent service. Tool arguments come from
the scenario's context (``toolCalls``) when it gives them; ``json_schema_echo`` gets the focal
tool's ``inputSchema`` as the host received it (so the suite sees whether the proxy kept every
keyword). A test answerer, in a thread, answers those questions
the way docs/answering.md and docs/remote.md describe:

* questions for agents over the API (``POST /api/v1/questions/{id}/answer``, token from
  ``<state>/api-token``): forms accepted with empty content (the service applies the
  schema's defaults), sampling with a fixed text;
* questions for a person as the person: a browser session from a one-time login link
  (``mcp-consent login``, over the service's socket) lists them (``GET /api/v1/questions?audience=human``). The
  consent question before dynamic client registration (a form with no fields whose ``_meta``
  holds ``io.github.mcp-consent/personOnly``) is accepted over the API with the session and the question page's CSRF token; URL questions
  (the sign-in question of MCP authorization among them) are opened: each one's link
  (``GET /questions/{id}/open``, confirming again when the URL is on the local network) and
  follows the redirects as a browser would: the suite's
  authorization server approves at once and redirects to the proxy's loopback callback. The
  proxy itself never completes a sign-in: only this click gives the authorization URL out.

Scenarios with a pre-registered client (``MCP_CONFORMANCE_CONTEXT`` holds ``client_id`` and
``client_secret``) get ``--client-id`` and ``--client-secret-env``; every run passes the suite's
client ID metadata document URL with ``--client-metadata-url``.

Environment: ``MCP_CONSENT_BIN`` (the binary), ``MCP_CONSENT_STATE_DIR`` (the running service's
state directory). Standard library only.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

RESPONSE_TIMEOUT = 60.0
PROTOCOL_VERSION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "2025-11-25"
# The first revision without the initialize handshake (requests carry their own _meta).
MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO = {"name": "mcp-consent-conformance-host", "version": "1.0.0"}
# Bounded MRTR rounds the host itself answers (roots/list and the like).
MAX_ROUNDS = 5
# json-schema-2020-12-preservation: the focal tool's inputSchema is echoed back through this one.
ECHO_TOOL = "json_schema_echo"
FOCAL_TOOL = "json_schema_2020_12_tool"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
# The `_meta` key of mcp-consent's own person-only questions (the consent to register).
PERSON_ONLY_META = "io.github.mcp-consent/personOnly"


class Answerer(threading.Thread):
    """Answers this run's questions (those whose server is ``name``) until stopped."""

    def __init__(self, state_dir: Path, name: str) -> None:
        super().__init__(daemon=True)
        self.base = (state_dir / "service-url").read_text().strip().rstrip("/")
        self.token = (state_dir / "api-token").read_text().strip()
        self.state_dir = state_dir
        self.name = name
        self.done: set[str] = set()
        self.stop = threading.Event()
        self.pages: urllib.request.OpenerDirector | None = None

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + "/api/v1" + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read() or b"null")

    def browser(self) -> urllib.request.OpenerDirector:
        """A cookie-keeping opener logged in through a one-time link."""
        if self.pages is None:
            jar = http.cookiejar.CookieJar()
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
            # `mcp-consent login` asks over the owner-only socket, the only door that makes one.
            link = subprocess.run(
                [os.environ["MCP_CONSENT_BIN"], "--state-dir", str(self.state_dir), "login"],
                check=True, capture_output=True, text=True, timeout=30,
            ).stdout
            link = next(w for w in link.split() if "/login?token=" in w)
            opener.open(link, timeout=10).read()
            self.pages = opener
        return self.pages

    def run(self) -> None:
        while not self.stop.wait(0.2):
            try:
                self.agent_questions()
                self.human_questions()
            except Exception as e:  # noqa: BLE001 - keep answering; the scenario reports failures
                print(f"answerer: {e!r}", file=sys.stderr)

    def agent_questions(self) -> None:
        listed = self.api("GET", "/questions?state=pending")["questions"]
        for q in listed:
            if q["server"] != self.name or q["id"] in self.done:
                continue
            self.done.add(q["id"])
            if q["kind"] == "sampling":
                answer = {
                    "action": "accept",
                    "result": {
                        "role": "assistant",
                        "content": {"type": "text", "text": "answered by the conformance answerer"},
                        "model": "conformance-answerer",
                    },
                }
            else:
                answer = {"action": "accept", "content": {}}
            self.api("POST", f"/questions/{q['id']}/answer", answer)
            print(f"answerer: answered {q['kind']} question {q['id']}", file=sys.stderr)

    def human_questions(self) -> None:
        # Questions for a person only are hidden from the token; the logged-in browser session
        # (a person) lists them through the same API.
        listed = json.loads(
            self.browser()
            .open(self.base + "/api/v1/questions?state=pending&audience=human", timeout=10)
            .read()
        )["questions"]
        for q in listed:
            if q["server"] != self.name or q["id"] in self.done:
                continue
            if q["kind"] == "form" and self.asks_for_a_person(q["id"]):
                self.done.add(q["id"])
                self.accept_as_person(q["id"])
                continue
            if q["kind"] != "url":
                continue
            self.done.add(q["id"])
            # Consent: the person clicks Open; the browser follows the URL where it leads (for a
            # sign-in, the authorization server redirects back to the proxy's loopback listener).
            # The suite's authorization server is on loopback, so the service asks again before
            # opening it (a local-network URL): the person confirms on that page.
            try:
                open_url = f"{self.base}/questions/{q['id']}/open"
                page = self.browser().open(open_url, timeout=20).read().decode()
                if 'name="confirm" value="local-network"' in page:
                    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
                    form = urllib.parse.urlencode(
                        {"csrf": csrf.group(1) if csrf else "", "confirm": "local-network"}
                    ).encode()
                    req = urllib.request.Request(open_url, data=form, method="POST")
                    req.add_header("Origin", self.base)
                    self.browser().open(req, timeout=20).read()
            except urllib.error.URLError as e:
                print(f"answerer: opening {q['id']}: {e!r}", file=sys.stderr)
            print(f"answerer: opened URL question {q['id']}", file=sys.stderr)


    def asks_for_a_person(self, qid: str) -> bool:
        """Whether the form is mcp-consent's own consent question (its request's ``_meta``
        asks for a person); a scenario server's person-only forms are left alone as before."""
        detail = json.loads(
            self.browser().open(f"{self.base}/api/v1/questions/{qid}", timeout=10).read()
        )
        meta = (detail.get("request") or {}).get("_meta") or {}
        return meta.get(PERSON_ONLY_META) is True

    def accept_as_person(self, qid: str) -> None:
        """Accepts a person-only form (the sign-in's consent to register) as the person would:
        the page's CSRF token with the session, the answer over the API."""
        try:
            page = self.browser().open(f"{self.base}/questions/{qid}", timeout=20).read().decode()
            csrf = re.search(r'name="csrf" value="([^"]+)"', page)
            data = json.dumps({"action": "accept", "content": {}}).encode()
            req = urllib.request.Request(
                f"{self.base}/api/v1/questions/{qid}/answer", data=data, method="POST"
            )
            req.add_header("Content-Type", "application/json")
            req.add_header("X-CSRF-Token", csrf.group(1) if csrf else "")
            self.browser().open(req, timeout=20).read()
        except urllib.error.URLError as e:
            print(f"answerer: accepting {qid}: {e!r}", file=sys.stderr)
        print(f"answerer: accepted person-only form {qid}", file=sys.stderr)


class RpcError(RuntimeError):
    """A JSON-RPC error answer."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method} failed: {error}")
        self.error = error


def answer(entry: dict[str, Any]) -> dict[str, Any]:
    """The host's answer to an input request the proxy left to it (never sampling or
    elicitation: those are the person's, and reaching the host is a leak)."""
    method = entry.get("method")
    if method in ("sampling/createMessage", "elicitation/create"):
        raise RuntimeError(f"the host was asked {method} in an input round: the boundary leaked")
    if method == "roots/list":
        return {"roots": []}
    raise RuntimeError(f"the host cannot answer the input request {method}")


class Host:
    """The host side of `mcp-consent proxy` on stdio."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0
        self.version = PROTOCOL_VERSION
        # Lines are read in a thread so a silent proxy is a timeout here, not a hang.
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def modern(self) -> bool:
        return self.version >= MODERN

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request as the revision asks: with its ``_meta`` from 2026-07-28 on (retried once
        with a supported version when refused with -32022), MRTR rounds meant for the host
        answered."""
        if not self.modern():
            return self.request(method, params)
        retried = False
        rounds = 0
        while True:
            meta = {
                META_VERSION: self.version,
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
            }
            try:
                result = self.request(method, {**params, "_meta": meta})
            except RpcError as e:
                supported = (e.error.get("data") or {}).get("supported") or []
                if e.error.get("code") == -32022 and supported and not retried:
                    retried = True
                    self.version = supported[0]
                    continue
                raise
            if result.get("resultType") != "input_required":
                return result
            rounds += 1
            if rounds > MAX_ROUNDS:
                raise RuntimeError(f"{method}: more than {MAX_ROUNDS} input rounds")
            params = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
            params["inputResponses"] = {
                key: answer(entry) for key, entry in (result.get("inputRequests") or {}).items()
            }
            if "requestState" in result:
                params["requestState"] = result["requestState"]

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + RESPONSE_TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not line:
                raise RuntimeError(f"the proxy closed its output before answering {method}")
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                if "error" in msg:
                    raise RpcError(method, msg["error"])
                return msg["result"]
            if "method" in msg and "id" in msg:
                # A request the proxy let through to the host (never sampling/elicitation).
                if msg["method"] in ("sampling/createMessage", "elicitation/create"):
                    raise RuntimeError(f"the host was asked {msg['method']}: the boundary leaked")
                reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"]}
                if msg["method"] == "ping":
                    reply["result"] = {}
                else:
                    reply["error"] = {"code": -32601, "message": "not supported by this host"}
                self.send(reply)
        raise RuntimeError(f"no answer to {method} within {RESPONSE_TIMEOUT}s")

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible arguments for a tool's input schema (numbers 2, 3, …; strings "x")."""
    args: dict[str, Any] = {}
    for n, (key, prop) in enumerate((schema.get("properties") or {}).items(), start=2):
        kind = prop.get("type")
        args[key] = {"number": n, "integer": n, "boolean": True, "string": "x"}.get(kind, None)
    return {k: v for k, v in args.items() if v is not None}


def session(host: Host) -> dict[str, Any]:
    """Starts the session the revision has (the handshake, or from 2026-07-28 server/discover)
    and returns the server's capabilities."""
    if host.modern():
        try:
            return host.call("server/discover", {}).get("capabilities") or {}
        except RpcError as e:
            # A server without server/discover still serves the rest.
            print(f"client: {e}", file=sys.stderr)
            return {}
    result = host.request(
        "initialize",
        {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
    )
    host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return result.get("capabilities") or {}


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "scenario")
    state_dir = Path(os.environ["MCP_CONSENT_STATE_DIR"])
    name = "conformance-" + re.sub(r"[^a-z0-9-]", "-", scenario.lower()) + f"-{os.getpid()}"
    answerer = Answerer(state_dir, name)
    answerer.start()
    argv = [os.environ["MCP_CONSENT_BIN"], "proxy", "--name", name, "--url", url]
    # The client ID metadata document the suite expects (it never fetches it); the proxy uses it
    # only where the authorization server advertises support.
    argv += ["--client-metadata-url", CLIENT_METADATA_URL]
    env = dict(os.environ)
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if "client_id" in context:
        # A pre-registered client: the id as an argument, the secret through the environment.
        argv += ["--client-id", context["client_id"]]
        if "client_secret" in context:
            env["CONFORMANCE_CLIENT_SECRET"] = context["client_secret"]
            argv += ["--client-secret-env", "CONFORMANCE_CLIENT_SECRET"]
    given = {c["name"]: c.get("arguments") or {} for c in context.get("toolCalls") or []}
    host = Host(argv, env)
    failed = None
    try:
        capabilities = session(host)
        tools = host.call("tools/list", {}).get("tools", [])
        schemas = {t["name"]: t.get("inputSchema") for t in tools}
        for tool in tools:
            args = given.get(tool["name"]) or arguments(tool.get("inputSchema") or {})
            if tool["name"] == ECHO_TOOL and FOCAL_TOOL in schemas:
                # The schema as the host received it through the proxy, sent back verbatim.
                args = {"schema": schemas[FOCAL_TOOL]}
            result = host.call("tools/call", {"name": tool["name"], "arguments": args})
            print(f"client: {tool['name']} -> {json.dumps(result)[:300]}", file=sys.stderr)
        if host.modern() and "resources" in capabilities:
            for resource in host.call("resources/list", {}).get("resources", []):
                host.call("resources/read", {"uri": resource["uri"]})
        if host.modern() and "prompts" in capabilities:
            for prompt in host.call("prompts/list", {}).get("prompts", []):
                host.call("prompts/get", {"name": prompt["name"]})
    except Exception as e:  # noqa: BLE001 - reported to the suite through the exit code
        failed = e
        print(f"client: {e}", file=sys.stderr)
    finally:
        code = host.close()
        answerer.stop.set()
    print(f"client: proxy exited with {code}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
