"""`/mcp`: the configured MCP servers and their state, from `mcp/list` (docs/protocol.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openvaala_server.protocol.display import mcp_server_state

if TYPE_CHECKING:
    from collections.abc import Sequence

    from openvaala_server.protocol.payloads import McpServerState

MARKERS = {"ready": "●", "failed": "✗"}


def server_line(server: McpServerState) -> str:
    marker = MARKERS.get(server["status"], "○")
    return f"{marker} {server['name'] or '?'} — {mcp_server_state(server)}"


def mcp_status_text(servers: Sequence[McpServerState]) -> str:
    if not servers:
        return "MCP servers: none configured ([mcp_servers.NAME] in config.toml)."
    return "\n".join(["MCP servers:", *(server_line(s) for s in servers)])
