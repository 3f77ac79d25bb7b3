"""Tool-call consent in every pairing the proxy serves: the official Python SDK host
(``tool_host.py``) and the TypeScript SDK v2 host (``tool_host.mjs``), in both eras (2025-11-25
through the initialize handshake; 2026-07-28, whose every request carries the protocol version in
``_meta``), over stdio and over Streamable HTTP (``proxy --url``), against the Python SDK server
of ``tools_server.py``, whose tools record every call they receive: what reaches the server (and
what never does) is read from its own record.

One session per pairing walks through every rule of the tool-call contract; the person answers
as the page does (their browser session and its CSRF token over the JSON API: a tool call is
never answerable with the API token). Chromium drives the page itself in test_tool_calls.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import E2E_DIR, Service, _child_env, login_link
from test_remote import free_port, start
from test_tool_calls import RULES as TOOL_RULES

pytestmark = pytest.mark.anyio

SERVER = "tools-e2e"
# Short enough that the expiry is observed within the session; every other question is
# answered at once.
TIMEOUT_SECS = 6
# The rules of test_tool_calls.py: `read_file` allowed (the default), `drop_*` denied,
# `delete_file` asked about.
RULES = f"question_timeout_secs = {TIMEOUT_SECS}\n{TOOL_RULES}"
ERAS = {"2025-11-25": "legacy", "2026-07-28": "auto"}
HOSTS = {
    "python-sdk": lambda node: [sys.executable, str(E2E_DIR / "tool_host.py")],
    "ts-sdk-v2": lambda node: [node, str(E2E_DIR / "tool_host.mjs")],
}


@pytest.fixture
def service_config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(RULES)
    return path


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("TOOLS_RECORD", str(path))
    return path


def received(record: Path) -> list[dict[str, Any]]:
    """Every call the server's tools received, in order."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line]


@pytest.fixture(params=["stdio", "url"])
def upstream(request: pytest.FixtureRequest, record: Path, tmp_path: Path) -> Iterator[list[str]]:
    """What follows ``proxy --name tools-e2e``: the server as a child, or its URL."""
    server = [sys.executable, str(E2E_DIR / "tools_server.py")]
    if request.param == "stdio":
        yield ["--", *server]
        return
    port = free_port()
    for url in start([*server, "--http", str(port)], port, tmp_path, "tools-server"):
        yield ["--url", url]


class DrivenHost:
    """A host process speaking the line protocol of tool_host.py."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.outcomes: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next = 0
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for raw in self.proc.stdout:
            line = json.loads(raw)
            n = line.get("call", line.get("cancelled"))
            if n in self.outcomes and not self.outcomes[n].done():
                self.outcomes[n].set_result(line)

    async def send(self, command: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + "\n").encode())
        await self.proc.stdin.drain()

    async def call(self, name: str, **arguments: Any) -> int:
        """Starts a call; returns its number."""
        self.next += 1
        self.outcomes[self.next] = asyncio.get_running_loop().create_future()
        await self.send({"call": self.next, "name": name, "arguments": arguments})
        return self.next

    async def outcome(self, n: int) -> dict[str, Any]:
        return await asyncio.wait_for(self.outcomes[n], 60)

    async def result(self, n: int) -> dict[str, Any]:
        outcome = await self.outcome(n)
        assert "result" in outcome, outcome
        return outcome["result"]

    def running(self, n: int) -> bool:
        return not self.outcomes[n].done()


@pytest.fixture(params=list(HOSTS))
async def host(
    request: pytest.FixtureRequest, service: Service, upstream: list[str], node_bin: str, tmp_path: Path
) -> AsyncIterator[tuple[DrivenHost, str]]:
    era = request.node.callspec.params["era"]
    proxy = [str(service.bin), "proxy", "--name", SERVER, "--state-dir", str(service.state_dir), *upstream]
    # What the proxy writes to the host, as written (the SDKs fill in what a result lacks).
    tap = ["sh", "-c", f'"$@" | tee -a {tmp_path / "to-host.jsonl"}', "sh"]
    errlog = (tmp_path / "host.stderr").open("w")
    proc = await asyncio.create_subprocess_exec(
        *HOSTS[request.param](node_bin),
        "--mode",
        ERAS[era],
        "--",
        *tap,
        *proxy,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=errlog,
        cwd=str(E2E_DIR),
        env=_child_env(),
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60) or b"null")
        assert ready and ready["ready"], (tmp_path / "host.stderr").read_text()[-3000:]
        yield DrivenHost(proc), ready["protocolVersion"]
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        errlog.close()
        print(f"--- host and proxy stderr ---\n{(tmp_path / 'host.stderr').read_text()[-6000:]}")


class Person:
    """The person, as their logged-in page answers: session cookie and CSRF token."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.http = httpx.AsyncClient(base_url=service.base_url, timeout=10, follow_redirects=True)

    async def login(self) -> None:
        resp = await self.http.get(login_link(self.service))
        assert resp.status_code == 200, resp.status_code

    async def question(self, path: str, others: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The pending tool-call question about ``path`` (not one of ``others``), once it exists."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = (await self.http.get("/api/v1/questions", params={"state": "pending"})).json()["questions"]
            for summary in listed:
                if summary["kind"] != "tool_call" or summary["id"] in others:
                    continue
                q = (await self.http.get(f"/api/v1/questions/{summary['id']}")).json()
                if q["request"]["arguments"].get("path") == path:
                    assert (q["server"], q["tool"], q["request"]["name"]) == (SERVER, "delete_file", "delete_file"), q
                    return q
            await asyncio.sleep(0.1)
        raise AssertionError(f"no question about {path}")

    async def state(self, qid: str) -> str:
        return (await self.http.get(f"/api/v1/questions/{qid}")).json()["state"]

    async def answer(self, qid: str, answer: dict[str, Any]) -> httpx.Response:
        page = (await self.http.get(f"/questions/{qid}")).text
        m = re.search(r'name="csrf" value="([^"]+)"', page)
        assert m, page[:500]
        return await self.http.post(f"/api/v1/questions/{qid}/answer", json=answer, headers={"X-CSRF-Token": m.group(1)})


@pytest.fixture
async def person(service: Service) -> AsyncIterator[Person]:
    p = Person(service)
    await p.login()
    yield p
    await p.http.aclose()


def text_of(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result["content"])


def refused(result: dict[str, Any], why: str, era: str, tool: str = "delete_file") -> None:
    """A result the proxy made: a tool error naming the tool and the server and saying why, with
    the SEP-2643 envelope beside the text."""
    assert result.get("isError") is True, result
    text = text_of(result)
    assert why in text and f'tool "{tool}" on server "{SERVER}"' in text, text
    assert result["_meta"]["authorization"]["reason"] == "insufficient_authorization", result


@pytest.mark.parametrize("era", ERAS)
async def test_every_rule_of_tool_call_consent(
    era: str, host: tuple[DrivenHost, str], person: Person, service: Service, record: Path, tmp_path: Path
) -> None:
    h, negotiated = host
    assert negotiated == era

    # Expiry: nobody answers this one; it runs while the rest happens.
    expiring = await h.call("delete_file", path="/expire-me")

    # deny: refused by the rule, and the server never hears of it (the allowed call sent after
    # it reaches the server behind it, so its absence there is observed).
    denied = await h.result(await h.call("drop_db"))
    refused(denied, "rules", era, "drop_db")
    assert "tools.rules[1]" in text_of(denied), text_of(denied)
    allowed = await h.result(await h.call("read_file", path="/etc/hostname"))
    assert not allowed.get("isError") and text_of(allowed) == "read /etc/hostname", allowed
    assert received(record) == [{"tool": "read_file", "arguments": {"path": "/etc/hostname"}}]

    # ask → accept: held until the person answers, then forwarded as the person saw it.
    call = await h.call("delete_file", path="/a")
    q = await person.question("/a")
    assert h.running(call) and [r["tool"] for r in received(record)] == ["read_file"]
    assert (await person.answer(q["id"], {"action": "accept"})).status_code == 200
    assert text_of(await h.result(call)) == "deleted /a"

    # ask → accept with edited arguments: one that does not fit the inputSchema is refused by
    # field and the question stays open; the fitting edit is what the server gets.
    call = await h.call("delete_file", path="/b")
    q = await person.question("/b")
    bad = await person.answer(q["id"], {"action": "accept", "arguments": {"path": 7}})
    assert bad.status_code == 422, bad.text
    assert [e["field"] for e in bad.json()["errors"]] == ["path"], bad.text
    assert await person.state(q["id"]) == "pending" and h.running(call)
    good = await person.answer(q["id"], {"action": "accept", "arguments": {"path": "/b-edited"}})
    assert good.status_code == 200, good.text
    assert text_of(await h.result(call)) == "deleted /b-edited"

    # decline: never forwarded; the host is told the person declined.
    call = await h.call("delete_file", path="/c")
    q = await person.question("/c")
    assert (await person.answer(q["id"], {"action": "decline"})).status_code == 200
    refused(await h.result(call), "declined", era)

    # The host cancels: the question is withdrawn, nothing is forwarded.
    call = await h.call("delete_file", path="/d")
    q = await person.question("/d")
    await h.send({"cancel": call})
    assert "cancelled" in await h.outcome(call)
    deadline = time.monotonic() + 15
    while await person.state(q["id"]) != "withdrawn":
        assert time.monotonic() < deadline, await person.state(q["id"])
        await asyncio.sleep(0.1)
    late = await person.answer(q["id"], {"action": "accept"})
    assert late.status_code == 409, late.text

    # Parallel calls of the same tool: a question each, each answered on its own.
    first, second = await h.call("delete_file", path="/p1"), await h.call("delete_file", path="/p2")
    q1 = await person.question("/p1")
    q2 = await person.question("/p2", frozenset({q1["id"]}))
    assert q1["id"] != q2["id"]
    assert (await person.answer(q2["id"], {"action": "decline"})).status_code == 200
    assert (await person.answer(q1["id"], {"action": "accept"})).status_code == 200
    assert text_of(await h.result(first)) == "deleted /p1"
    refused(await h.result(second), "declined", era)

    # Expiry: the host is told no one approved it in time.
    refused(await h.result(expiring), "expired", era)

    # The service goes away: `ask` fails closed, `allow` keeps working from the cached rules.
    service.process.terminate()
    service.process.wait(timeout=10)
    refused(await h.result(await h.call("delete_file", path="/u")), "cannot be reached", era)
    still = await h.result(await h.call("read_file", path="/still"))
    assert text_of(still) == "read /still", still

    # The results the proxy made, as the host got them: `resultType: "complete"` under
    # 2026-07-28 (hosts of that revision refuse a result without it), none before.
    made = [
        m["result"]
        for m in map(json.loads, (tmp_path / "to-host.jsonl").read_text().splitlines())
        if "authorization" in m.get("result", {}).get("_meta", {})
    ]
    assert len(made) == 5, made  # denied, declined twice, expired, unreachable
    assert [r.get("resultType") for r in made] == ["complete" if era == "2026-07-28" else None] * 5, made

    assert received(record) == [
        {"tool": "read_file", "arguments": {"path": "/etc/hostname"}},
        {"tool": "delete_file", "arguments": {"path": "/a"}},
        {"tool": "delete_file", "arguments": {"path": "/b-edited"}},
        {"tool": "delete_file", "arguments": {"path": "/p1"}},
        {"tool": "read_file", "arguments": {"path": "/still"}},
    ]
