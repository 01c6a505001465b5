"""The editor's `mcpServers` of `session/new` and `session/load` (docs/editors.md, ACP): stdio and
HTTP entries become the conversation's own MCP servers (`conversation/setMcpServers`), started
by the daemon under the rules of configured servers, never trusted. SSE entries are not offered
(`mcpCapabilities.sse` is false) and are left out if sent."""

from __future__ import annotations

import logging
import re
from functools import partial

from acp import RequestError
from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

from openvaala_acp.link import DaemonLink
from openvaala_server.protocol import methods
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.structured import Supervisor

log = logging.getLogger(__name__)

_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def server_name(name: str) -> str:
    """An editor's server name as an OpenVaala server name (letters, digits, - and _, no `__`):
    the model sees `mcp__NAME__TOOL`."""
    cleaned = _NOT_NAME.sub("-", name).strip("-_")
    while "__" in cleaned:
        cleaned = cleaned.replace("__", "_")
    return cleaned or "editor"


Entry = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


Tables = dict[str, JsonObject]  # name → a `[mcp_servers.NAME]` table


def tables(entries: list[Entry] | None) -> Tables:
    """Each stdio or HTTP entry as a `[mcp_servers.NAME]` table."""
    out: Tables = {}
    for entry in entries or []:
        table: JsonObject
        if isinstance(entry, HttpMcpServer):
            headers: JsonObject = {h.name: h.value for h in entry.headers or []}
            table = {"url": entry.url, "headers": headers}
        elif isinstance(entry, McpServerStdio):
            env: JsonObject = {v.name: v.value for v in entry.env or []}
            table = {"command": entry.command, "args": list(entry.args or []), "env": env}
        else:
            log.warning(
                "MCP server %r left out: %s servers are not supported", entry.name, entry.type
            )
            continue
        name = base = server_name(entry.name)
        number = 1
        while name in out:  # two editor names that clean up alike: both kept
            number += 1
            name = f"{base}-{number}"
        out[name] = table
    return out


class EditorServers:
    """The servers each session brought, brought again to a daemon that restarted (a new
    daemon connection has none: they belong to the connection that brought them)."""

    def __init__(self, link: DaemonLink, tasks: Supervisor) -> None:
        self.link = link
        self.tasks = tasks
        self.brought: dict[str, Tables] = {}  # conversation → tables

    async def bring(self, conversation_id: str, entries: list[Entry] | None) -> None:
        servers = tables(entries)
        if servers:
            await self._send(conversation_id, servers)
            self.brought[conversation_id] = servers

    async def _send(self, conversation_id: str, servers: Tables) -> None:
        await self.link.request(
            methods.CONVERSATION_SET_MCP_SERVERS,
            {"conversationId": conversation_id, "servers": {**servers}},
        )

    def reconnected(self) -> None:
        for cid, servers in self.brought.items():
            self.tasks.spawn(partial(self._again, cid, servers), f"acp-mcp-{cid}")

    async def _again(self, conversation_id: str, servers: Tables) -> None:
        try:
            await self._send(conversation_id, servers)
        except RequestError as exc:  # the daemon went again: the next reconnection retries
            log.warning("could not start the editor's MCP servers again: %s", exc)
