"""The MCP servers' state as the TUI last heard it: read with `mcp/list`, then followed through
`mcp/statusChanged` (docs/protocol.md), so the composer completes a server's prompts and resources
as soon as it is ready, and a failure is shown when it happens. No Textual here."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from openvaala_tui import completion
from openvaala_tui.mcp_status import server_line

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import McpServerState


class McpServers:
    def __init__(self) -> None:
        self.servers: dict[str, McpServerState] = {}

    def load(self, servers: Iterable[McpServerState]) -> None:
        """`mcp/list`'s servers, replacing what was known."""
        self.servers = {s["name"]: s for s in servers}

    def changed(self, state: McpServerState) -> str | None:
        """Take one server's new state; returns a line to show when it has just failed."""
        name = state["name"]
        known = self.servers.get(name)
        before = known["status"] if known is not None else None
        if state["status"] == "removed":  # a reload took it out of the config
            self.servers.pop(name, None)
            return None
        self.servers[name] = state
        if state["status"] == "failed" and before != "failed":
            return f"MCP server {server_line(state)}"
        return None

    def offers(self) -> completion.McpOffers:
        return completion.mcp_offers(list(self.servers.values()))
