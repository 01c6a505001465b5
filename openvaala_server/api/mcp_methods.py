"""MCP methods besides `mcp/list` (docs/protocol.md): `mcp/getPrompt` fills in a server's prompt,
which a client then sends as the user's message (`/mcp__SERVER__PROMPT` in the TUI), and
`mcp/readResource` reads a resource a user attaches (`@SERVER:URI` in the TUI)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.api.connection import Connection
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as w
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.protocol.params import Params

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

Handler = Callable[[Connection, Params], Awaitable[JsonMapping]]


def mcp_methods(runtime: ConversationManager) -> dict[str, Handler]:
    async def get_prompt(conn: Connection, p: Params) -> w.GetPromptResult:
        server = p.string("server", max_len=200)
        name = p.string("name", max_len=500)
        raw = p.obj("arguments") or {}
        arguments: dict[str, str] = {}
        for key, value in raw.items():
            if not isinstance(value, str):
                raise errors.InvalidParams(f"arguments.{key} must be a string")
            arguments[key] = value
        text = await runtime.mcp.prompt_text(server, name, arguments)
        return {"text": text}

    async def read_resource(conn: Connection, p: Params) -> w.McpTextResult:
        server = p.string("server", max_len=200)
        text = await runtime.mcp.resource_text(server, p.string("uri", max_len=4000))
        return {"text": text}

    return {m.MCP_GET_PROMPT: get_prompt, m.MCP_READ_RESOURCE: read_resource}
