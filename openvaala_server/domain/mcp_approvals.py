"""When a call of an MCP server's tool asks the user first (docs/configuration.md, MCP servers).

Pure, beside `approvals.decide`: an MCP server runs outside OpenVaala's sandbox and its calls
state no command or file the shell rules could judge, so they are judged by the tool alone.

- `trust = true` in the server's table: never asks.
- approval "never": runs (the user chose an agent that is never asked, and configured the server).
- approval "escalate" or "always": asks, until the user answers "allow for this conversation" for
  that tool; "allow" lets that one call run. So each tool asks at least once per conversation.
"""

from __future__ import annotations

from collections.abc import Collection

from openvaala_server.domain.approvals import Ask, Decision, Run
from openvaala_server.domain.permissions import ApprovalMode


def decide_mcp(
    approval: ApprovalMode, tool: str, server: str, trust: bool, granted: Collection[str]
) -> Decision:
    """Run or ask for one call of `tool` (its `mcp__SERVER__TOOL` name) of MCP server `server`.

    `granted`: the tool names the user allowed for this conversation ("allow_conversation").
    """
    if trust or approval == "never" or tool in granted:
        return Run()
    return Ask(
        f"the MCP server {server!r} is not trusted: each of its tools asks once per conversation "
        "(set trust = true in its [mcp_servers] table to never ask)"
    )
