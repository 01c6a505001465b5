"""The MCP servers' state as the TUI last heard it: read with `mcp/list`, then followed through
`mcp/statusChanged` (docs/protocol.md), so the composer completes a server's prompts and resources
as soon as it is ready, and a failure is shown when it happens. No Textual here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from openvaala_tui import completion
from openvaala_tui.mcp_status import server_line


class McpServers:
    def __init__(self) -> None:
        self.servers: dict[str, Mapping[str, Any]] = {}

    def load(self, servers: Iterable[Mapping[str, Any]]) -> None:
        """`mcp/list`'s servers, replacing what was known."""
        self.servers = {str(s.get("name")): s for s in servers}

    def changed(self, state: Mapping[str, Any]) -> str | None:
        """Take one server's new state; returns a line to show when it has just failed."""
        name = str(state.get("name"))
        before = self.servers.get(name, {}).get("status")
        if state.get("status") == "removed":  # a reload took it out of the config
            self.servers.pop(name, None)
            return None
        self.servers[name] = state
        if state.get("status") == "failed" and before != "failed":
            return f"MCP server {server_line(dict(state))}"
        return None

    def offers(self) -> completion.McpOffers:
        return completion.mcp_offers(list(self.servers.values()))
