"""A host on the official Python SDK (``mcp.client.Client``) that a test drives line by line, for
the tool-call consent matrix (test_tool_matrix.py; tool_host.mjs is the same on the TypeScript
SDK v2).

    tool_host.py --mode legacy|auto -- COMMAND [ARGS...]   (the proxy, over stdio)

Connects (``legacy``: the initialize handshake, 2025-11-25; ``auto``: 2026-07-28 when the server
speaks it), lists the tools and prints ``{"ready": true, "protocolVersion": "..."}``. Then reads
one JSON command a line from stdin and prints one JSON line per outcome:

* ``{"call": N, "name": "...", "arguments": {...}}`` calls the tool without waiting for earlier
  calls; when it ends: ``{"call": N, "result": {...CallToolResult...}}`` or
  ``{"call": N, "error": "..."}``;
* ``{"cancel": N}`` abandons call N the way the SDK does (``notifications/cancelled``), then
  ``{"cancelled": N}``.

Stdin closing ends the session.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client


def say(line: dict[str, Any]) -> None:
    print(json.dumps(line), flush=True)


async def main(mode: str, command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(stdio_client(params, errlog=sys.stderr), mode=mode) as client:  # type: ignore[arg-type]
        await client.list_tools()
        say({"ready": True, "protocolVersion": client.protocol_version})
        scopes: dict[int, anyio.CancelScope] = {}

        async def call(n: int, name: str, arguments: dict[str, Any]) -> None:
            with anyio.CancelScope() as scope:
                scopes[n] = scope
                try:
                    result = await client.call_tool(name, arguments)
                    say({"call": n, "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)})
                except Exception as e:  # noqa: BLE001 - the test reads what went wrong
                    say({"call": n, "error": f"{type(e).__name__}: {e}"})
            if scope.cancelled_caught:
                say({"cancelled": n})

        async with anyio.create_task_group() as tg:
            stdin = anyio.wrap_file(sys.stdin)
            async for line in stdin:
                command_ = json.loads(line)
                if "call" in command_:
                    tg.start_soon(call, command_["call"], command_["name"], command_.get("arguments", {}))
                elif "cancel" in command_:
                    scopes[command_["cancel"]].cancel()
            tg.cancel_scope.cancel()


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 4 or args[0] != "--mode" or args[2] != "--":
        raise SystemExit(__doc__)
    anyio.run(main, args[1], args[3:])
