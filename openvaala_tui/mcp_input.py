"""What the composer sends for MCP (docs/protocol.md, mcp/getPrompt and mcp/readResource):
`/mcp__SERVER__PROMPT name=value …` becomes the server's filled-in prompt, and each
`@SERVER:URI` mention of a configured server gets that resource's text appended, fenced like an
`@path` file. No Textual here: the app passes a `request` function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from openvaala_server.client.mcp_prompts import (  # the parsing every client shares
    PROMPT_PREFIX,
    PromptCall,
    PromptInputError,
    parse_prompt_command,
    resource_mentions,
)
from openvaala_server.protocol import methods
from openvaala_tui.completion import fenced

if TYPE_CHECKING:
    from openvaala_server.protocol.calls import Request

__all__ = [
    "PROMPT_PREFIX",
    "PromptCall",
    "PromptInputError",
    "WithResources",
    "attach_resources",
    "parse_prompt_command",
    "prompt_text",
]


async def prompt_text(request: Request, call: PromptCall) -> str:
    result = await request(
        methods.MCP_GET_PROMPT,
        {"server": call.server, "name": call.name, "arguments": call.arguments},
    )
    return result["text"]


@dataclass(frozen=True)
class WithResources:
    text: str
    attached: list[str]  # `server:uri` of each resource appended


async def attach_resources(request: Request, text: str) -> WithResources:
    """`text` with the text of each `@SERVER:URI` resource of a configured server appended
    (once each). A mention naming no configured server is left as it is (an email, a
    handle); one that cannot be read raises the daemon's error."""
    mentions = resource_mentions(text)
    if not mentions:
        return WithResources(text, [])
    listed = await request(methods.MCP_LIST, {})
    servers = {s["name"] for s in listed["servers"]}
    blocks: list[str] = []
    attached: list[str] = []
    for server, uri in mentions:
        if server not in servers:
            continue
        result = await request(methods.MCP_READ_RESOURCE, {"server": server, "uri": uri})
        blocks.append(fenced(f"{server}:{uri}", result["text"]))
        attached.append(f"{server}:{uri}")
    if not blocks:
        return WithResources(text, [])
    return WithResources(text.rstrip() + "\n\n" + "\n\n".join(blocks), attached)
