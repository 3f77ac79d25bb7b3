"""A real MCP server for test_real_model.py: the official Python SDK's MCPServer, whose tools ask
the client for a completion with ``ctx.session.create_message`` (a plain ``sampling/createMessage``
request), and return what came back, so the host sees what the server was delivered.

* ``weather``: offers one tool (``get_weather``, ``toolChoice`` auto) and asks which city's weather
  the user wants;
* ``capital``: a short question without tools.

Run as: python model_server.py  (stdio)
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("model-e2e")

WEATHER_TOOL = types.Tool(
    name="get_weather",
    description="Get the current weather for a city",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name"}},
        "required": ["city"],
    },
)


def describe(result: Any) -> str:
    """The delivered CreateMessageResult as JSON text (the host's tool result)."""
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True)


@app.tool()
async def weather(ctx: Context) -> str:
    """Asks the client's model, offering a get_weather tool."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text="What is the weather in Paris right now? Use the get_weather tool."))],
        max_tokens=64,
        system_prompt="You are a helpful assistant with tools.",
        temperature=0.0,
        tools=[WEATHER_TOOL],
        tool_choice=types.ToolChoice(mode="auto"),
    )
    return describe(result)


@app.tool()
async def capital(ctx: Context) -> str:
    """Asks the client's model a short question without tools."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text="What is the capital of France? Answer in one word."))],
        max_tokens=32,
        temperature=0.0,
    )
    return describe(result)


if __name__ == "__main__":
    app.run()
