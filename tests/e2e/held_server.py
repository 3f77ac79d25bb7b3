"""A real 2026-07-28 server for the held-answers test: the official Python SDK's MCPServer, whose
`delete_file` asks in one round both the person (a confirmation form) and the host (its roots,
`roots/list`). Under 2026-07-28 the SDK sends both as one `InputRequiredResult`; the proxy asks
the person, hands the host only the roots entry, and must give the person's answer to the
retry of that very call only.

Run as: python held_server.py  (stdio)
"""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve
from pydantic import BaseModel

app = MCPServer("held-e2e")


class Confirm(BaseModel):
    ok: bool


def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Delete the file? (held-e2e-91b2)", Confirm)


def ask_roots() -> ListRoots:
    return ListRoots()


@app.tool()
def delete_file(
    path: str,
    confirm: Annotated[Confirm, Resolve(ask_confirm)],
    roots: Annotated[types.ListRootsResult, Resolve(ask_roots)],
) -> str:
    """Deletes a file once the person confirms (reports what it was told)."""
    return f"{path}: ok={confirm.ok} roots={len(roots.roots)}"


if __name__ == "__main__":
    app.run()
