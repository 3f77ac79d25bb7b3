"""A real 2026-07-28 server for the end-to-end tests: the official Python SDK's MCPServer, whose
tools ask through `Resolve(Elicit(...))` / `Resolve(Sample(...))`. Under 2026-07-28 the SDK turns
those into an `InputRequiredResult` (MRTR); under 2025-11-25 into plain server requests.

Run as: python mrtr_server.py  (stdio)
"""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from pydantic import BaseModel

app = MCPServer("mrtr-e2e")


class Visitor(BaseModel):
    name: str
    age: int = 30


def ask_visitor() -> Elicit[Visitor]:
    return Elicit("Who is visiting? (mrtr-e2e-7f3a)", Visitor)


def ask_model() -> Sample:
    return Sample(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text="What is 2+2? (mrtr-e2e-c41d)"))],
        max_tokens=16,
    )


@app.tool()
def greet(visitor: Annotated[Visitor, Resolve(ask_visitor)]) -> str:
    """Greets the visitor the person describes."""
    return f"hello {visitor.name}, {visitor.age}"


@app.tool()
def think(answer: Annotated[types.CreateMessageResult, Resolve(ask_model)]) -> str:
    """Asks the client's model a question."""
    content = answer.content
    text = content.text if isinstance(content, types.TextContent) else repr(content)
    return f"model {answer.model} said {text}"


if __name__ == "__main__":
    app.run()
