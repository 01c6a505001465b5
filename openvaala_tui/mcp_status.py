"""`/mcp`: the configured MCP servers and their state, from `mcp/list` (docs/protocol.md)."""

from __future__ import annotations

from typing import Any

from openvaala_server.protocol.display import mcp_server_state

MARKERS = {"ready": "●", "failed": "✗"}


def server_line(server: dict[str, Any]) -> str:
    marker = MARKERS.get(str(server.get("status")), "○")
    return f"{marker} {server.get('name') or '?'} — {mcp_server_state(server)}"


def mcp_status_text(servers: list[dict[str, Any]]) -> str:
    if not servers:
        return "MCP servers: none configured ([mcp_servers.NAME] in config.toml)."
    return "\n".join(["MCP servers:", *(server_line(s) for s in servers)])
