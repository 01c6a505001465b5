"""MCP servers a client brings for one conversation (an ACP editor's `mcpServers`:
docs/editors.md; `conversation/setMcpServers` in docs/protocol.md).

Each is checked as a `[mcp_servers.NAME]` table is and runs as a configured server does (the same
connection code, environment rules and time-outs), never trusted: its calls ask under the agent's
approval rules. Its tools are offered to that conversation's root agent only, once the servers
started (or failed, each within its `startup_timeout_s`). They stop when replaced, or when the
client that brought them goes away.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from openvaala_server import errors
from openvaala_server.config import ConfigError, McpServerConfig, parse_mcp_server
from openvaala_server.mcp.manager import McpManager
from openvaala_server.protocol.json_types import JsonValue
from openvaala_server.structured import Supervisor
from openvaala_server.tools.base import Tool

EVERY = ["mcp:*"]


def parse_servers(
    raw: Mapping[str, JsonValue], configured: Iterable[str]
) -> dict[str, McpServerConfig]:
    """The servers of a request, checked; `invalid_params` naming the first wrong key."""
    taken = set(configured)
    servers: dict[str, McpServerConfig] = {}
    for name, table in raw.items():
        if name in taken:
            raise errors.InvalidParams(
                f"servers.{name}: a configured MCP server has this name; give it another"
            )
        try:
            config = parse_mcp_server(name, table)
        except ConfigError as exc:
            key = exc.key.removeprefix("mcp_servers.")
            raise errors.InvalidParams(f"servers.{key}: {exc.problem}") from None
        servers[name] = replace(config, trust=False)  # a client's server is never trusted
    return servers


class SessionServers:
    def __init__(self, tasks: Supervisor) -> None:
        self.tasks = tasks
        self._by_conversation: dict[str, tuple[object, McpManager]] = {}

    async def set(
        self, conversation_id: str, owner: object, servers: dict[str, McpServerConfig]
    ) -> McpManager | None:
        """Replace the conversation's servers with `servers`, started (or failed) before this
        returns."""
        await self.drop(conversation_id)
        if not servers:
            return None
        manager = McpManager(servers, self.tasks)
        self._by_conversation[conversation_id] = (owner, manager)
        await manager.tools_for(EVERY)
        return manager

    def tools(self, conversation_id: str) -> list[Tool]:
        held = self._by_conversation.get(conversation_id)
        return held[1].current_tools(EVERY) if held is not None else []

    def with_tools(self, conversation_id: str, configured: dict[str, Tool]) -> dict[str, Tool]:
        """The configured servers' tools plus the conversation's own. A configured name is
        never shadowed; `read_mcp_resource` reads the resources of both."""
        own = self.tools(conversation_id)
        if not own:
            # Most turns: nothing to merge, and the MCP SDK (~0.5 s of imports) stays unloaded
            # until an MCP server is configured (docs/design.md, "Start-up imports").
            return dict(configured)
        from openvaala_server.mcp.resource_tool import ReadResourceTool  # as mcp/manager.py

        out = dict(configured)
        for tool in own:
            name, theirs = tool.spec.name, out.get(tool.spec.name)
            if isinstance(tool, ReadResourceTool) and isinstance(theirs, ReadResourceTool):
                out[name] = ReadResourceTool({**tool.connections, **theirs.connections})
            elif theirs is None:
                out[name] = tool
        return out

    async def drop(self, conversation_id: str) -> None:
        held = self._by_conversation.pop(conversation_id, None)
        if held is not None:
            await held[1].shutdown()

    async def release(self, owner: object) -> None:
        """The client that brought them left: its conversations' servers stop."""
        for cid in [c for c, (o, _m) in self._by_conversation.items() if o is owner]:
            await self.drop(cid)

    async def shutdown(self) -> None:
        for cid in list(self._by_conversation):
            await self.drop(cid)
