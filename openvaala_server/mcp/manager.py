"""Every configured MCP server for the whole daemon: started on first need, shared, stopped once.

One `McpManager` per daemon. A conversation's agent asks for servers with `mcp:NAME` / `mcp:*` in
its `tools`; `start` starts those not running yet in the background and never waits for them
(docs/design.md, "MCP servers start in the background"). A server that is not ready offers the
tools it listed last (kept across restarts, mcp/listings.py) or its `enabled_tools`; a call of one
waits for the server's start (bounded by `startup_timeout_s`) or gets a tool error saying why.

The MCP SDK takes longer to import than the rest of the daemon together (its pydantic types):
it is imported when a server is configured, never by a daemon that has none (docs/design.md,
"Start-up time").
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio

from openvaala_server import errors
from openvaala_server.config import McpServerConfig
from openvaala_server.protocol.payloads import McpServerState
from openvaala_server.structured import Supervisor
from openvaala_server.tools.base import Tool

if TYPE_CHECKING:
    from mcp.types import Tool as McpToolInfo

    from openvaala_server.mcp.connection import McpConnection
    from openvaala_server.mcp.tool import McpTool

T = TypeVar("T")
_TOOL_MODULE = "openvaala_server.mcp.tool"
# The file in the data directory that keeps each server's last tool listing (mcp/listings.py).
LISTINGS_FILE = "mcp-tools.json"


def as_mcp_tool(tool: object) -> McpTool | None:
    """`tool` if it is an MCP server's tool. Without importing the SDK: until a server is
    configured the module is not loaded, and then no tool can be one of its."""
    module = sys.modules.get(_TOOL_MODULE)
    return tool if module is not None and isinstance(tool, module.McpTool) else None


def last_listed(tool: object) -> bool:
    """Whether `tool` is offered from its MCP server's last listing (the server is not ready)."""
    mcp_tool = as_mcp_tool(tool)
    return mcp_tool is not None and not mcp_tool.connection.ready


def servers_named(tools: Iterable[str], configured: Iterable[str]) -> list[str]:
    """The servers an agent's `tools` ask for (`mcp:NAME`, `mcp:*`), in configuration order."""
    wanted = {name.removeprefix("mcp:") for name in tools if name.startswith("mcp:")}
    return [name for name in configured if "*" in wanted or name in wanted]


class McpManager:
    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        tasks: Supervisor,
        listings: Path | None = None,
    ) -> None:
        # Each running server is an activity of `tasks` (the runtime's supervisor), so none
        # outlives the daemon.
        self.tasks = tasks
        # Where each server's last tool listing is kept (None: not kept, e.g. in unit tests).
        self._listings_path = listings
        self._listings: dict[str, tuple[McpToolInfo, ...]] | None = None
        self._saving = anyio.Lock()
        self.connections = {name: self._connect(cfg) for name, cfg in servers.items()}
        # Servers a reload replaced or removed, each stopped once its calls have finished.
        self._retiring: set[McpConnection] = set()
        # Told of each configured server's new state (the runtime sends `mcp/statusChanged`).
        self.on_status: Callable[[McpServerState], None] | None = None

    def _connect(self, cfg: McpServerConfig) -> McpConnection:
        from openvaala_server.mcp import listings  # the SDK: see the docstring
        from openvaala_server.mcp.connection import McpConnection

        if self._listings is None:
            self._listings = listings.load(self._listings_path)
        known = self._listings.get(cfg.name, ())
        return McpConnection(
            cfg, self.tasks, known=known, on_listed=self._listed, on_changed=self._status_changed
        )

    def _status_changed(self, conn: McpConnection, state: McpServerState) -> None:
        # A server a reload retired is no longer the one clients see under its name.
        if self.on_status is not None and self.connections.get(conn.config.name) is conn:
            self.on_status(state)

    def _listed(self, name: str, tools: tuple[McpToolInfo, ...]) -> None:
        from openvaala_server.mcp import listings

        assert self._listings is not None  # loaded by the first connection
        if self._listings.get(name) == tools:
            return
        self._listings[name] = tools
        snapshot = dict(self._listings)

        async def save() -> None:
            async with self._saving:  # one writer at a time, in the order listed
                # Off the event loop: a slow disk never holds the daemon.
                await anyio.to_thread.run_sync(listings.save, self._listings_path, snapshot)

        self.tasks.spawn(save, "mcp-listings")

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
            kept[name] = self._connect(cfg)
            if old is not None:
                retired.append(old)
        retired += [conn for name, conn in self.connections.items() if name not in servers]
        self.connections = kept
        for conn in retired:
            self._retiring.add(conn)
            self.tasks.spawn(partial(self._retire, conn), f"mcp-retire:{conn.config.name}")
            self._announce(conn.config.name)
        return [conn.config.name for conn in retired]

    def _announce(self, name: str) -> None:
        """Tell clients what a reload made of the server `name`: the new one's state (it starts
        at the next need), or `removed` when it is no longer configured."""
        conn = self.connections.get(name)
        if conn is not None:
            conn.announce()
        elif self.on_status is not None:
            self.on_status({"name": name, "status": "removed", "tools": []})

    async def tools_for(self, tools: Sequence[str]) -> list[Tool]:
        """The MCP tools an agent's `tools` list asks for, once the servers it needs are ready
        or failed (each within its `startup_timeout_s`)."""
        names = servers_named(tools, self.connections)
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(partial(self.connections[name].ensure_started, retry_failed=False))
        return self.current_tools(tools)

    def start(self, tools: Sequence[str]) -> None:
        """Start the servers an agent's `tools` name that are not running, in the background."""
        for name in servers_named(tools, self.connections):
            self.connections[name].start_soon()

    async def tool_when_started(self, tools: Sequence[str], name: str) -> Tool | None:
        """The tool `name` of a server `tools` names that was not listed when the model was
        asked (it was starting): waits for that server's start, then looks again."""
        from openvaala_server.mcp.tool import split_tool_name

        server = (split_tool_name(name) or ("", ""))[0]
        conn = self.connections.get(server)
        if conn is None or server not in servers_named(tools, self.connections):
            return None
        await conn.ensure_started(retry_failed=False)
        return next((t for t in self.current_tools(tools) if t.spec.name == name), None)

    def current_tools(self, tools: Sequence[str]) -> list[Tool]:
        """The tools of the servers `tools` names, as last listed, without starting any."""
        out: list[Tool] = []
        names = servers_named(tools, self.connections)
        if not names:
            return out
        from openvaala_server.mcp.resource_tool import ReadResourceTool  # as McpTool
        from openvaala_server.mcp.tool import McpTool  # loaded with the connections (see above)

        for name in names:
            conn = self.connections[name]
            out.extend(McpTool(conn, info) for info in _offered(conn))
        if any(self.connections[name].resources for name in names):
            out.append(ReadResourceTool({name: self.connections[name] for name in names}))
        return out

    async def prompt_text(self, server: str, name: str, arguments: dict[str, str]) -> str:
        """`mcp/getPrompt`: a server's prompt filled in with `arguments`, as one message."""
        from openvaala_server.mcp import catalog

        conn = self._configured(server)
        return catalog.prompt_text(
            await _asked(
                conn.request(f"the prompt {name}", lambda s, _: s.get_prompt(name, arguments))
            )
        )

    async def resource_text(self, server: str, uri: str) -> str:
        """`mcp/readResource`: the text of one of a server's resources."""
        from openvaala_server.mcp import catalog

        conn = self._configured(server)
        return catalog.resource_text(
            await _asked(conn.request(f"reading {uri}", lambda s, _: s.read_resource(uri)))
        )

    def _configured(self, server: str) -> McpConnection:
        conn = self.connections.get(server)
        if conn is None:
            raise errors.NotFound(f"no MCP server {server!r} is configured")
        return conn

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


async def _asked(request: Awaitable[T]) -> T:
    """A client's request to a server: a failure is `not_available` with the server's reason."""
    from openvaala_server.mcp.connection import McpCallError

    try:
        return await request
    except McpCallError as exc:
        raise errors.NotAvailable(str(exc)) from None
