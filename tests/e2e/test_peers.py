"""The real peers alone (no mcp-consent): pins down the server-everything behaviour that
test_everything.py relies on, so an upstream change shows up here first and plainly.

The Python SDK talks straight to ``node <server-everything> stdio`` with its own callbacks.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import EVERYTHING_ARGS
from test_everything import raw_elicitation_result, sampling_result, texts

pytestmark = pytest.mark.anyio

CONDITIONAL = {"trigger-elicitation-request", "trigger-sampling-request", "trigger-url-elicitation"}

# Exactly what server-everything 2026.8.31 puts in elicitation/create (tools/trigger-elicitation-request.js).
EXPECTED_REQUESTED_SCHEMA_KEYS = [
    "name",
    "check",
    "firstLine",
    "email",
    "homepage",
    "birthdate",
    "integer",
    "number",
    "untitledSingleSelectEnum",
    "untitledMultipleSelectEnum",
    "titledSingleSelectEnum",
    "titledMultipleSelectEnum",
    "legacyTitledEnum",
]


@pytest.fixture
def everything(node_bin: str, tmp_path) -> Any:
    def connect(**callbacks: Any) -> Client:
        params = StdioServerParameters(command=node_bin, args=EVERYTHING_ARGS)
        errlog = (tmp_path / "everything.stderr").open("w")
        return Client(stdio_client(params, errlog=errlog), **callbacks)

    return connect


async def test_conditional_tools_need_capabilities(everything: Any) -> None:
    async with everything() as client:
        assert client.protocol_version == "2025-11-25"  # server/discover -> -32601 -> initialize
        names = {t.name for t in (await client.list_tools()).tools}
    assert not (names & CONDITIONAL), names & CONDITIONAL

    async def never(*_: Any) -> Any:
        raise AssertionError("not called")

    async with everything(sampling_callback=never, elicitation_callback=never) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert CONDITIONAL <= tools.keys(), sorted(tools)
    assert tools["trigger-elicitation-request"].input_schema.get("properties", {}) == {}
    props = tools["trigger-sampling-request"].input_schema["properties"]
    assert set(props) == {"prompt", "maxTokens"}
    assert tools["trigger-sampling-request"].input_schema["required"] == ["prompt"]


async def test_elicitation_round_trip(everything: Any) -> None:
    seen: list[types.ElicitRequestParams] = []

    async def elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada", "integer": 42, "check": False})

    async def sample(*_: Any) -> Any:
        raise AssertionError("not called")

    async with everything(sampling_callback=sample, elicitation_callback=elicit) as client:
        result = await client.call_tool("trigger-elicitation-request", {})
    (params,) = seen
    dumped = params.model_dump(by_alias=True, exclude_none=True)
    assert dumped["message"] == "Please provide inputs for the following fields:"
    schema = dumped["requestedSchema"]
    assert list(schema["properties"]) == EXPECTED_REQUESTED_SCHEMA_KEYS
    assert schema["required"] == ["name"]
    assert not result.is_error
    assert "- Name: Ada" in texts(result)[1] and "- Agreed to terms: false" in texts(result)[1]
    assert raw_elicitation_result(result) == {
        "action": "accept",
        "content": {"name": "Ada", "integer": 42, "check": False},
    }


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_elicitation_decline_cancel(everything: Any, action: str) -> None:
    async def elicit(*_: Any) -> types.ElicitResult:
        return types.ElicitResult(action=action)

    async def sample(*_: Any) -> Any:
        raise AssertionError("not called")

    async with everything(sampling_callback=sample, elicitation_callback=elicit) as client:
        result = await client.call_tool("trigger-elicitation-request", {})
    assert not result.is_error
    first = texts(result)[0]
    assert ("declined" if action == "decline" else "cancelled") in first, first
    assert raw_elicitation_result(result) == {"action": action}


async def test_sampling_result_and_error(everything: Any) -> None:
    seen: list[types.CreateMessageRequestParams] = []
    answer: list[Any] = []

    async def sample(_ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        seen.append(params)
        return answer[0]

    async def elicit(*_: Any) -> Any:
        raise AssertionError("not called")

    async with everything(sampling_callback=sample, elicitation_callback=elicit) as client:
        answer.append(
            types.CreateMessageResult(
                role="assistant", content=types.TextContent(type="text", text="hi there"), model="m-1"
            )
        )
        ok = await client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 7})
        answer[0] = types.ErrorData(code=-1, message="User rejected sampling request")
        err = await client.call_tool("trigger-sampling-request", {"prompt": "say no"})

    assert seen[0].model_dump(by_alias=True, exclude_none=True) == {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Resource trigger-sampling-request context: say hi"}}
        ],
        "systemPrompt": "You are a helpful test server.",
        "maxTokens": 7,
        "temperature": 0.7,
    }
    assert seen[1].max_tokens == 100  # the tool's default
    assert not ok.is_error
    assert sampling_result(ok) == {"role": "assistant", "content": {"type": "text", "text": "hi there"}, "model": "m-1"}
    assert err.is_error
    assert texts(err) == ["MCP error -1: User rejected sampling request"], json.dumps(texts(err))
