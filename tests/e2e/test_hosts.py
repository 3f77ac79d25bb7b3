"""End to end: ``mcp-consent hosts wrap`` rewrites a Claude-style and a VS Code-style file on a
temporary HOME; the official Python SDK then launches each wrapped entry exactly as a host would
(command, args, env and cwd taken from the file) and reaches server-everything through the
proxy, with a sampling question answered over the API.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import EVERYTHING_ARGS, Service, answer_pending

pytestmark = pytest.mark.anyio

ANSWER = {
    "action": "accept",
    "result": {"role": "assistant", "content": {"type": "text", "text": "seven, said the person"}, "model": "e2e-hosts"},
}


def strip_line_comments(text: str) -> str:
    """The VS Code file's ``//`` comment lines removed, so that ``json`` reads it (VS Code's own
    reader allows them)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def wrap(service: Service, home: Path, project: Path) -> str:
    done = subprocess.run(
        [str(service.bin), "hosts", "wrap"],
        cwd=project,
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "MCP_CONSENT_STATE_DIR": str(service.state_dir),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def launch_and_ask(service: Service, entry: dict[str, Any], cwd: Path, server: str, tmp_path: Path) -> None:
    """Starts the entry as the host would and asks server-everything for a sampling round."""
    assert Path(entry["command"]).name == "mcp-consent" and entry["args"][:3] == ["proxy", "--name", server], entry
    # The person's environment tells the proxy where the service is; the entry adds its own env.
    env = {"MCP_CONSENT_STATE_DIR": str(service.state_dir), **entry.get("env", {})}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=str(cwd))
    with (tmp_path / f"{server}.stderr").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert "trigger-sampling-request" in listed, f"the proxy did not declare sampling: {sorted(listed)}"
            call = asyncio.create_task(client.call_tool("trigger-sampling-request", {"prompt": "3+4?", "maxTokens": 10}))
            q = await answer_pending(service, server, ANSWER, call)
            assert q["kind"] == "sampling"
            result = await asyncio.wait_for(call, 30)
            text = json.dumps([c.model_dump() for c in result.content])
            assert "seven, said the person" in text, text


async def test_wrapped_claude_and_vscode_entries_reach_everything_through_the_proxy(
    service: Service, node_bin: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    vscode = project / ".vscode" / "mcp.json"
    for d in (claude.parent, vscode.parent):
        d.mkdir(parents=True)
    claude_text = json.dumps(
        {"globalShortcut": "", "mcpServers": {"everything-claude": {"command": node_bin, "args": EVERYTHING_ARGS}}},
        indent=2,
    )
    claude.write_text(claude_text + "\n")
    vscode_text = (
        "{\n  // Copilot servers\n  \"servers\": {\n    \"everything-vscode\": {\n      \"type\": \"stdio\",\n"
        f"      \"command\": {json.dumps(node_bin)},\n      \"args\": {json.dumps(EVERYTHING_ARGS)},\n"
        f"      \"cwd\": {json.dumps(str(project))},\n      \"env\": {{\"E2E_FROM\": \"vscode\"}}\n    }}\n  }}\n}}\n"
    )
    vscode.write_text(vscode_text)

    said = wrap(service, home, project)
    assert "everything-claude" in said and "everything-vscode" in said, said

    desktop = json.loads(claude.read_text())["mcpServers"]["everything-claude"]
    # Claude Desktop starts its servers in the home directory.
    await launch_and_ask(service, desktop, home, "everything-claude", tmp_path)

    wrapped_vscode = vscode.read_text()
    assert "// Copilot servers" in wrapped_vscode, wrapped_vscode
    code = json.loads(strip_line_comments(wrapped_vscode))["servers"]["everything-vscode"]
    assert code["env"] == {"E2E_FROM": "vscode"} and code["cwd"] == str(project), code
    await launch_and_ask(service, code, Path(code["cwd"]), "everything-vscode", tmp_path)

    unwrap = subprocess.run(
        [str(service.bin), "hosts", "unwrap"],
        cwd=project,
        env={"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
             "MCP_CONSENT_STATE_DIR": str(service.state_dir)},
        capture_output=True, text=True, timeout=60,
    )
    assert unwrap.returncode == 0, unwrap.stderr
    assert claude.read_text() == claude_text + "\n" and vscode.read_text() == vscode_text
