"""Times tool calls from the MCP Python SDK (the host) to server-everything's ``echo``.

    sdk_echo.py CALLS -- COMMAND [ARGS...]

Starts COMMAND as a stdio MCP server (server-everything directly, or the mcp-consent proxy in
front of it), initialises, calls ``echo`` CALLS times one after another and prints one JSON
line: {"calls", "median_ms", "p90_ms", "init_ms"}. Used by benches/limits (the tool-call row).
"""

import json
import os
import statistics
import sys
import time

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(calls: int, command: list[str]) -> None:
    # The whole environment (the SDK passes only a few variables by default): the proxy reads
    # MCP_CONSENT_CONFIG from it.
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    started = time.perf_counter()
    async with Client(stdio_client(params)) as client:
        init_ms = (time.perf_counter() - started) * 1000
        for _ in range(20):  # warm-up: JIT of the server, first allocations
            await client.call_tool("echo", {"message": "warm"})
        took = []
        for i in range(calls):
            t = time.perf_counter()
            result = await client.call_tool("echo", {"message": f"hello {i}"})
            took.append((time.perf_counter() - t) * 1000)
            if result.is_error:
                raise SystemExit(f"echo failed: {result}")
    took.sort()
    print(
        json.dumps(
            {
                "calls": calls,
                "median_ms": statistics.median(took),
                "p90_ms": took[int(len(took) * 0.9) - 1],
                "init_ms": init_ms,
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit(__doc__)
    anyio.run(main, int(sys.argv[1]), sys.argv[3:])
