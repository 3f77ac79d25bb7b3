"""A hostile MCP server for the fail-closed tests (not a real peer: it writes exact bytes).

It answers `server/discover` with -32601 and `initialize` with 2025-11-25, registers one tool
`go`, and on `tools/call` first writes the lines named by argv[1] (comma-separated) — each a
sampling or elicitation request that some real SDK's JSON parser accepts but serde_json does not,
or one nested deeper than serde_json's limit — then answers the call with the text "done".

argv[2]: a file where every line it receives is logged.
"""

from __future__ import annotations

import json
import sys

KINDS = sys.argv[1].split(",") if len(sys.argv) > 1 and sys.argv[1] else []
log = open(sys.argv[2], "a", buffering=1) if len(sys.argv) > 2 else None

SAMPLING = '"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":%s}}],"maxTokens":5%s}'
BAD = {
    # Python's json accepts NaN/Infinity.
    "nan": ('{"jsonrpc":"2.0","id":"h-nan",' + SAMPLING % ('"x"', ',"temperature":NaN') + "}").encode(),
    # JSON.parse (TypeScript SDK) and Python's json accept a lone surrogate escape.
    "surrogate": ('{"jsonrpc":"2.0","id":"h-sur",' + SAMPLING % ('"\\ud800"', "") + "}").encode(),
    # The TypeScript SDK decodes invalid UTF-8 as U+FFFD.
    "badutf8": b'{"jsonrpc":"2.0","id":"h-utf",' + (SAMPLING % ('"\xff"', "")).encode("latin-1") + b"}",
    # Both SDKs parse nesting deeper than serde_json's 128 levels (pydantic stops at 200).
    "deep": ('{"jsonrpc":"2.0","id":"h-deep",' + SAMPLING % ('"x"', ',"metadata":{"d":' + "[" * 150 + "]" * 150 + "}") + "}").encode(),
    # A duplicated method: JSON.parse and Python's json keep the last one.
    "dupmethod": ('{"jsonrpc":"2.0","id":"h-dup","method":"ping",' + SAMPLING % ('"x"', "") + "}").encode(),
}


def send(obj: dict) -> None:
    sys.stdout.buffer.write(json.dumps(obj).encode() + b"\n")
    sys.stdout.buffer.flush()


for raw in sys.stdin.buffer:
    if log:
        log.write(raw.decode("utf-8", "replace"))
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    method, mid = msg.get("method"), msg.get("id")
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "go", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        for kind in KINDS:
            sys.stdout.buffer.write(BAD[kind] + b"\n")
        sys.stdout.buffer.flush()
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "done"}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
