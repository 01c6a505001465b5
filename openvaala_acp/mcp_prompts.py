"""MCP prompts and resources in an ACP editor (docs/editors.md): each ready server's prompt is
offered as `/mcp__SERVER__PROMPT` in `available_commands_update`, kept current through
`mcp/statusChanged` (docs/protocol.md); running one sends the server's filled-in prompt as the
user's message, and each `@SERVER:URI` a message mentions gets that resource's text with it, as
embedded context does a file. Both are read the way the TUI reads them
(openvaala_server/client/mcp_prompts.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp import RequestError
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from openvaala_acp.link import DaemonLink
from openvaala_server.client.mcp_prompts import (
    PromptInputError,
    parse_prompt_command,
    prompt_commands,
    resource_mentions,
)
from openvaala_server.protocol import methods

if TYPE_CHECKING:
    from openvaala_server.protocol.payloads import McpServerState


class McpPrompts:
    def __init__(self, link: DaemonLink) -> None:
        self.link = link
        # Each configured server's state by name, as last read or told.
        self.servers: dict[str, McpServerState] = {}
        # Whether `mcp/list` was read: a server ready before this editor connected is told of
        # no change, so a change told first does not stand for the whole list.
        self.loaded = False

    async def load(self) -> None:
        """Read the servers once (`mcp/list`); from then on `changed` keeps them current."""
        if self.loaded:
            return
        try:
            listed = await self.link.request(methods.MCP_LIST, {})
        except RequestError:
            return  # read again at the next session; changes told meanwhile are kept
        self.servers = {s["name"]: s for s in listed.get("servers") or ()}
        self.loaded = True

    def changed(self, state: McpServerState) -> bool:
        """Take one server's new state; True when the commands offered changed with it."""
        before = self.commands()
        if state.get("status") == "removed":  # a reload took it out of the config
            self.servers.pop(str(state.get("name")), None)
        else:
            self.servers[str(state.get("name"))] = state
        return self.commands() != before

    def commands(self) -> list[AvailableCommand]:
        return [
            AvailableCommand(
                name=command.name,
                description=command.description,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=command.hint))
                if command.hint
                else None,
            )
            for command in prompt_commands(self.servers.values())
        ]

    async def expand(self, text: str) -> str | None:
        """The server's filled-in prompt when `text` is `/mcp__SERVER__PROMPT …`, else None.
        A malformed command, or one the server refuses, is an error naming why."""
        try:
            call = parse_prompt_command(text)
        except PromptInputError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        if call is None:
            return None
        result = await self.link.request(
            methods.MCP_GET_PROMPT,
            {"server": call.server, "name": call.name, "arguments": call.arguments},
        )
        return str(result["text"])

    async def attach(self, text: str) -> str:
        """`text` with the text of each `@SERVER:URI` of a configured server appended, as an
        editor's embedded context is (content.py); a mention of no server (an e-mail address)
        stays as it is. A resource the server cannot read is an error naming why."""
        mentions = resource_mentions(text)
        if not mentions:
            return text
        await self.load()
        blocks: list[str] = []
        for server, uri in mentions:
            if server not in self.servers:
                continue
            result = await self.link.request(
                methods.MCP_READ_RESOURCE, {"server": server, "uri": uri}
            )
            blocks.append(
                f"\n<context file={server + ':' + uri!r}>\n{result['text']}\n</context>\n"
            )
        return text + "\n" + "".join(blocks) if blocks else text
