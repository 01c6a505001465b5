"""MCP resources and prompts for editors (docs/editors.md, "MCP"): the daemon's `mcp/list`,
`mcp/readResource` and `mcp/getPrompt` passed through, and `openvaala/mcp/expand`, which turns a
composer's text into the message to send the way the TUI does: `/mcp__SERVER__PROMPT name=value …`
becomes the server's filled-in prompt, and each `@SERVER:URI` of a configured server gets that
resource's text appended in a fence. Editors without a plugin's own parser (Neovim, the VS Code
panel) call it before `openvaala/send`, so the command syntax is read in one place
(openvaala_server/client/mcp_prompts.py)."""

from __future__ import annotations

import re

from pygls.exceptions import JsonRpcInvalidParams

from openvaala_lsp.bridge import Bridge
from openvaala_lsp.params import Params, required
from openvaala_lsp.replies import Expanded
from openvaala_server.client.mcp_prompts import (
    PromptInputError,
    parse_prompt_command,
    resource_mentions,
)
from openvaala_server.protocol import methods, payloads

# Pushed to the editor for each `mcp/statusChanged` of the daemon (params unchanged).
MCP_STATUS = "$/openvaala/mcpStatus"


def fence(label: str, content: str) -> str:
    """`content` in a code fence labelled `label`, longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    bar = "`" * max(3, longest + 1)
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"{bar}{label}\n{body}{bar}"


def _arguments(params: Params) -> dict[str, str]:
    raw = params.get("arguments") or {}
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise JsonRpcInvalidParams(
            "'arguments' must be an object of strings", data={"param": "arguments"}
        )
    return {str(k): v for k, v in raw.items() if isinstance(v, str)}  # all are, checked above


class McpActions:
    """The `openvaala/mcp/*` requests (mixed into actions.Actions)."""

    @property
    def bridge(self) -> Bridge:
        raise NotImplementedError  # Actions.bridge

    async def mcp_list(self, params: Params) -> payloads.McpResult:
        """`mcp/list`, quietly (`openvaala/mcp` also shows its text to the user)."""
        return await self.bridge.request(methods.MCP_LIST, {})

    async def mcp_read_resource(self, params: Params) -> payloads.McpTextResult:
        call: payloads.ReadResourceParams = {
            "server": required(params, "server"),
            "uri": required(params, "uri"),
        }
        return await self.bridge.request(methods.MCP_READ_RESOURCE, call)

    async def mcp_get_prompt(self, params: Params) -> payloads.GetPromptResult:
        call: payloads.GetPromptParams = {
            "server": required(params, "server"),
            "name": required(params, "name"),
            "arguments": _arguments(params),
        }
        return await self.bridge.request(methods.MCP_GET_PROMPT, call)

    async def mcp_expand(self, params: Params) -> Expanded:
        """`{text}` → `{text, prompt?, attached}`: the message to send for a composer's text.
        A malformed `/mcp__…` command is `invalid_params` naming what is wrong; a prompt or a
        resource the server refuses is the daemon's error (`not_found`, `not_available`)."""
        text = params.get("text")
        if not isinstance(text, str):
            raise JsonRpcInvalidParams("missing or invalid 'text'", data={"param": "text"})
        try:
            call = parse_prompt_command(text)
        except PromptInputError as exc:
            raise JsonRpcInvalidParams(str(exc), data={"param": "text"}) from None
        if call is not None:
            got = await self.mcp_get_prompt(
                {"server": call.server, "name": call.name, "arguments": {**call.arguments}}
            )
            return {
                "text": str(got["text"]),
                "prompt": f"{call.server}:{call.name}",
                "attached": [],
            }
        mentions = resource_mentions(text)
        if not mentions:
            return {"text": text, "attached": []}
        listed = await self.mcp_list({})
        servers = {str(s.get("name")) for s in listed.get("servers") or ()}
        blocks: list[str] = []
        attached: list[str] = []
        for server, uri in mentions:
            if server not in servers:
                continue  # an e-mail address, a handle: left as written
            read = await self.mcp_read_resource({"server": server, "uri": uri})
            blocks.append(fence(f"{server}:{uri}", str(read["text"])))
            attached.append(f"{server}:{uri}")
        if not blocks:
            return {"text": text, "attached": []}
        return {"text": text.rstrip() + "\n\n" + "\n\n".join(blocks), "attached": attached}
