"""Every configured MCP server for the whole daemon: started on first need, shared, stopped once.

One `McpManager` per daemon. A conversation's agent asks for servers with `mcp:NAME` / `mcp:*` in
its `tools`; `tools_for` starts those not running yet (each bounded by its `startup_timeout_s`) and
returns their tools. A server whose start failed still offers the tools it listed before (or its
`enabled_tools`), so the model's call gets a tool error saying why instead of a missing tool.

The MCP SDK takes longer to import than the rest of the daemon together (its pydantic types):
it is imported when a server is configured, never by a daemon that has none (docs/design.md,
"Start-up time").
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

import anyio

from openvaala_server.config import McpServerConfig
from openvaala_server.protocol.payloads import McpServerState
from openvaala_server.structured import Supervisor
from openvaala_server.tools.base import Tool

if TYPE_CHECKING:
    from mcp.types import Tool as McpToolInfo

    from openvaala_server.mcp.connection import McpConnection
    from openvaala_server.mcp.tool import McpTool

_TOOL_MODULE = "openvaala_server.mcp.tool"


def as_mcp_tool(tool: object) -> McpTool | None:
    """`tool` if it is an MCP server's tool. Without importing the SDK: until a server is
    configured the module is not loaded, and then no tool can be one of its."""
    module = sys.modules.get(_TOOL_MODULE)
    return tool if module is not None and isinstance(tool, module.McpTool) else None


def _connect(cfg: McpServerConfig, tasks: Supervisor) -> McpConnection:
    from openvaala_server.mcp.connection import McpConnection  # the SDK: see the docstring

    return McpConnection(cfg, tasks)


def servers_named(tools: Iterable[str], configured: Iterable[str]) -> list[str]:
    """The servers an agent's `tools` ask for (`mcp:NAME`, `mcp:*`), in configuration order."""
    wanted = {name.removeprefix("mcp:") for name in tools if name.startswith("mcp:")}
    return [name for name in configured if "*" in wanted or name in wanted]


class McpManager:
    def __init__(self, servers: Mapping[str, McpServerConfig], tasks: Supervisor) -> None:
        # Each running server is an activity of `tasks` (the runtime's supervisor), so none
        # outlives the daemon.
        self.tasks = tasks
        self.connections = {name: _connect(cfg, tasks) for name, cfg in servers.items()}
        # Servers a reload replaced or removed, each stopped once its calls have finished.
        self._retiring: set[McpConnection] = set()

    def reconfigure(self, servers: Mapping[str, McpServerConfig]) -> list[str]:
        """Take a reloaded `[mcp_servers]`: a server whose table is unchanged keeps running; one
        changed or removed is stopped once its calls under way have finished (a changed one starts
        again, with its new settings, at the next need). Returns the names restarted or removed."""
        kept: dict[str, McpConnection] = {}
        retired: list[McpConnection] = []
        for name, cfg in servers.items():
            old = self.connections.get(name)
            if old is not None and old.config == cfg:
                kept[name] = old
                continue
            kept[name] = _connect(cfg, self.tasks)
            if old is not None:
                retired.append(old)
        retired += [conn for name, conn in self.connections.items() if name not in servers]
        self.connections = kept
        for conn in retired:
            self._retiring.add(conn)
            self.tasks.spawn(partial(self._retire, conn), f"mcp-retire:{conn.config.name}")
        return [conn.config.name for conn in retired]

    async def tools_for(self, tools: Sequence[str]) -> list[Tool]:
        """The MCP tools an agent's `tools` list asks for, starting the servers it needs."""
        await self.start(tools)
        return self.current_tools(tools)

    async def start(self, tools: Sequence[str]) -> None:
        """Start the servers an agent's `tools` name that are not running, side by side; returns
        when each is ready or failed (within its `startup_timeout_s`)."""
        names = servers_named(tools, self.connections)
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(partial(self.connections[name].ensure_started, retry_failed=False))

    def current_tools(self, tools: Sequence[str]) -> list[Tool]:
        """The tools of the servers `tools` names, as last listed, without starting any: for a
        caller that cannot wait (a usage estimate) after `start` ran for the turn."""
        out: list[Tool] = []
        names = servers_named(tools, self.connections)
        if not names:
            return out
        from openvaala_server.mcp.tool import McpTool  # loaded with the connections (see above)

        for name in names:
            conn = self.connections[name]
            out.extend(McpTool(conn, info) for info in _offered(conn))
        return out

    def statuses(self) -> list[McpServerState]:
        """`mcp/list`: [{name, status, tools: [names], error?}] for every configured server."""
        return [conn.snapshot().to_dict() for conn in self.connections.values()]

    async def shutdown(self) -> None:
        # The daemon stops: calls under way on retiring servers end with it.
        retiring, self._retiring = set(self._retiring), set()
        async with anyio.create_task_group() as group:
            for conn in [*self.connections.values(), *retiring]:
                group.start_soon(conn.stop)

    async def _retire(self, conn: McpConnection) -> None:
        try:
            await conn.until_idle()  # each call is bounded by its tool_timeout_s
            await conn.stop()
        finally:
            self._retiring.discard(conn)


def _offered(conn: McpConnection) -> tuple[McpToolInfo, ...]:
    if conn.tools or conn.config.enabled_tools is None or conn.status != "failed":
        return conn.tools
    # Never listed (its start failed): offer the allow-listed names so a call explains why.
    from mcp.types import Tool as McpToolInfo

    return tuple(
        McpToolInfo(name=name, input_schema={"type": "object"})
        for name in conn.config.enabled_tools
        if conn.config.offers(name)
    )
