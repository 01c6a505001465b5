"""`read_mcp_resource`: the model reads a resource of one of its agent's MCP servers (the ones
`mcp/list` shows under `resources`, or a link a tool's result gave). Offered to an agent whose
servers list resources; a read changes nothing, so it never asks (docs/security.md)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from openvaala_server.domain.permissions import Access
from openvaala_server.mcp import catalog
from openvaala_server.mcp.connection import McpCallError, McpConnection
from openvaala_server.models.base import ToolSpec
from openvaala_server.tools.base import ToolContext, ToolResult, truncate_output

READ_MCP_RESOURCE: Final = "read_mcp_resource"


class ReadResourceTool:
    def __init__(self, connections: Mapping[str, McpConnection]) -> None:
        # The agent's servers, by name.
        self.connections = dict(connections)
        listed = [
            f"{name}: " + ", ".join(str(r.uri) for r in conn.resources[:20])
            for name, conn in self.connections.items()
            if conn.resources
        ]
        self._spec = ToolSpec(
            name=READ_MCP_RESOURCE,
            description=(
                "Read a resource of an MCP server (its text). Resources listed now: "
                + ("; ".join(listed) or "none yet")
                + ". A tool result's [resource: URI] link can be read this way too."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "server": {"type": "string", "enum": list(self.connections)},
                    "uri": {"type": "string", "description": "The resource's URI."},
                },
                "required": ["server", "uri"],
                "additionalProperties": False,
            },
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def access(self, arguments: dict[str, Any], cwd: Path) -> Access:
        return Access(summary=f"read {arguments.get('uri')} from {arguments.get('server')}")

    async def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server, uri = arguments.get("server"), arguments.get("uri")
        conn = self.connections.get(server) if isinstance(server, str) else None
        if conn is None:
            names = ", ".join(self.connections) or "none"
            return ToolResult(f"No MCP server {server!r} here (this agent's: {names})", True)
        if not isinstance(uri, str) or not uri:
            return ToolResult("`uri` must be a non-empty string", is_error=True)
        try:
            result = await conn.request(
                f"reading {uri}", lambda session, _: session.read_resource(uri)
            )
        except McpCallError as exc:
            return ToolResult(str(exc), is_error=True)
        output, truncated = truncate_output(catalog.resource_text(result), ctx.output_limit)
        return ToolResult(output, truncated=truncated)
