"""`conversation/setMcpServers` (docs/protocol.md): MCP servers a client brings for one
conversation, as an ACP editor's `mcpServers` (runtime/session_mcp.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.api.connection import Connection
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as w
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.protocol.params import Params
from openvaala_server.runtime.session_mcp import parse_servers

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

Handler = Callable[[Connection, Params], Awaitable[JsonMapping]]
MAX_SERVERS = 32


def session_mcp_methods(runtime: ConversationManager) -> dict[str, Handler]:
    released: set[int] = set()  # connections whose leaving already stops their servers

    async def set_servers(conn: Connection, p: Params) -> w.McpResult:
        cid = p.id("conversationId")
        raw = p.obj("servers")
        if raw is None:
            raise errors.InvalidParams("servers must be an object of name → server")
        if len(raw) > MAX_SERVERS:
            raise errors.InvalidParams(f"at most {MAX_SERVERS} servers")
        servers = parse_servers(raw, runtime.mcp.connections)
        await runtime.open(cid)  # an unknown conversation is `not_found`
        sessions = runtime.session_mcp
        if id(conn) not in released:
            released.add(id(conn))

            def gone() -> None:
                released.discard(id(conn))
                runtime.tasks.spawn(partial(sessions.release, conn), "mcp-session-release")

            conn.on_close.append(gone)
        manager = await sessions.set(cid, conn, servers)
        return {"servers": manager.statuses() if manager is not None else []}

    return {m.CONVERSATION_SET_MCP_SERVERS: set_servers}
