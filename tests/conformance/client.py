#!/usr/bin/env python3
"""The client under test for the official MCP conformance suite's client scenarios.

The suite starts a scenario server and runs ``client.py URL`` (the scenario name is in
``MCP_CONFORMANCE_SCENARIO``). This script is the host: it starts
``mcp-consent proxy --name NAME --url URL`` and speaks newline-delimited JSON-RPC to it on stdio
as a host would (initialize, initialized, tools/list, each tool called), declaring no sampling or
elicitation capability of its own, so every such request from the scenario server has to become
a question on the mcp-consent service. A test answerer, in a thread, answers those questions
the way the README describes:

* questions for agents over the API (``POST /api/v1/questions/{id}/answer``, token from
  ``<state>/api-token``): forms accepted with empty content (the service applies the
  schema's defaults), sampling with a fixed text;
* questions for a person (URL questions, the sign-in question of MCP authorization) as the
  person: a browser session from a one-time login link (``POST /api/v1/login-links``) lists them
  (``GET /api/v1/questions?audience=human``), then opens each one's link
  (``GET /questions/{id}/open``) and follows the redirects as a browser would: the suite's
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
import urllib.request
from pathlib import Path
from typing import Any

RESPONSE_TIMEOUT = 60.0
PROTOCOL_VERSION = "2025-11-25"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


class Answerer(threading.Thread):
    """Answers this run's questions (those whose server is ``name``) until stopped."""

    def __init__(self, state_dir: Path, name: str) -> None:
        super().__init__(daemon=True)
        self.base = (state_dir / "service-url").read_text().strip().rstrip("/")
        self.token = (state_dir / "api-token").read_text().strip()
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
            link = self.api("POST", "/login-links", {})["url"]
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
            if q["server"] != self.name or q["id"] in self.done or q["kind"] != "url":
                continue
            self.done.add(q["id"])
            # Consent: the person clicks Open; the browser follows the URL where it leads (for a
            # sign-in, the authorization server redirects back to the proxy's loopback listener).
            try:
                self.browser().open(f"{self.base}/questions/{q['id']}/open", timeout=20).read()
            except urllib.error.URLError as e:
                print(f"answerer: opening {q['id']}: {e!r}", file=sys.stderr)
            print(f"answerer: opened URL question {q['id']}", file=sys.stderr)


class Host:
    """The host side of `mcp-consent proxy` on stdio."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0
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
                    raise RuntimeError(f"{method} failed: {msg['error']}")
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
    host = Host(argv, env)
    failed = None
    try:
        host.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp-consent-conformance-host", "version": "1.0.0"},
            },
        )
        host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = host.request("tools/list", {}).get("tools", [])
        for tool in tools:
            result = host.request(
                "tools/call", {"name": tool["name"], "arguments": arguments(tool.get("inputSchema") or {})}
            )
            print(f"client: {tool['name']} -> {json.dumps(result)[:300]}", file=sys.stderr)
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
