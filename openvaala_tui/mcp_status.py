"""`/mcp`: the configured MCP servers and their state, from `mcp/list` (docs/protocol.md)."""

from __future__ import annotations

from typing import Any

STATES = {
    "stopped": "not started yet (starts when an agent that lists it first needs it)",
    "starting": "starting…",
}


def server_line(server: dict[str, Any]) -> str:
    name = str(server.get("name") or "?")
    status = str(server.get("status") or "?")
    tools = [str(t) for t in server.get("tools") or []]
    if status == "ready":
        noun = "tool" if len(tools) == 1 else "tools"
        listed = f": {', '.join(tools)}" if tools else ""
        return f"● {name} — ready, {len(tools)} {noun}{listed}"
    if status == "failed":
        return f"✗ {name} — failed: {server.get('error') or 'no reason given'}"
    return f"○ {name} — {STATES.get(status, status)}"


def mcp_status_text(servers: list[dict[str, Any]]) -> str:
    if not servers:
        return "MCP servers: none configured ([mcp_servers.NAME] in config.toml)."
    return "\n".join(["MCP servers:", *(server_line(s) for s in servers)])
