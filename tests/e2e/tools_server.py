"""A real MCP server for the tool-call consent tests: the official Python SDK's MCPServer with
three tools that record every call they receive (one JSON line each, to the file named by
``TOOLS_RECORD``), so "never forwarded" is observed at the server, not assumed.

Run as: TOOLS_RECORD=/path python tools_server.py             (stdio)
        TOOLS_RECORD=/path python tools_server.py --http PORT (Streamable HTTP, /mcp on 127.0.0.1)
"""

from __future__ import annotations

import json
import os
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("tools-e2e")


def record(tool: str, **arguments: object) -> None:
    with open(os.environ["TOOLS_RECORD"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@app.tool()
def read_file(path: str) -> str:
    """Reads a file (records the call)."""
    record("read_file", path=path)
    return f"read {path}"


@app.tool()
def delete_file(path: str) -> str:
    """Deletes a file (records the call)."""
    record("delete_file", path=path)
    return f"deleted {path}"


@app.tool()
def drop_db() -> str:
    """Drops the database (records the call)."""
    record("drop_db")
    return "dropped"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
