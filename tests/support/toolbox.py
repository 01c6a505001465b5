"""What the toolbox tests of the clients share: an agent with update_plan, apply_patch, two MCP
servers (one real, built with the SDK, one that cannot run), and a fake model script using them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fakes.providers import FakeProvider
from tests.fakes.script import Reply

MCP_SERVER = Path(__file__).parents[1] / "server" / "mcp" / "mcp_test_server.py"

STEPS = [
    {"step": "Read the code", "status": "completed"},
    {"step": "Patch greet.py", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]
PATCH = (
    "*** Begin Patch\n*** Update File: greet.py\n@@\n def greet():\n"
    "-    return 'hi'\n+    return 'hello'\n*** End Patch\n"
)
ORIGINAL = "def greet():\n    return 'hi'\n"


def toolbox_config(fake: FakeProvider, *, mcp: bool = True) -> str:
    """The default tools (update_plan, apply_patch, …) plus, with `mcp`, every MCP server."""
    text = fake.config_toml("fake") + '\n[agents.default]\ndescription = "t"\nmodel = "fake"\n'
    if not mcp:
        return text
    return (
        text
        + 'tools = ["read_file", "apply_patch", "update_plan", "mcp:*"]\n'
        + "\n[mcp_servers.t]\n"
        + f"command = {json.dumps(sys.executable)}\n"
        + f'args = [{json.dumps(str(MCP_SERVER))}, "stdio"]\n'
        + "startup_timeout_s = 45\ntrust = true\n"
        + '\n[mcp_servers.gone]\ncommand = "openvaala-no-such-mcp-server"\n'
    )


def plan_and_patch(fake: FakeProvider, *, mcp: bool = True) -> None:
    """One turn: update_plan, then apply_patch on greet.py, then an answer. With `mcp` it first
    calls the MCP server `t`, so the server has started when the turn ends (servers start in the
    background and a turn waits only for one it calls, docs/configuration.md)."""
    if mcp:
        fake.enqueue(Reply().tool_call("mcp__t__echo", {"text": "ready"}))
    fake.enqueue(
        Reply().tool_call("update_plan", {"explanation": "Small fix", "plan": STEPS}),
        Reply().tool_call("apply_patch", {"input": PATCH}),
        Reply().text("Patched."),
    )
