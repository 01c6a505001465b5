"""`/init` and memory for editors (docs/editors.md): the daemon's `conversation/init` and
`memory/*` passed through. As a command, `openvaala.remember` says where the note went and
`openvaala.memory` opens the project's memory file in the editor (created empty if missing), since
an editor without a plugin shows no command result."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from lsprotocol import types

from openvaala_lsp.bridge import Bridge
from openvaala_lsp.host import Host
from openvaala_lsp.params import Params, optional, required
from openvaala_server.domain.memory import Scope
from openvaala_server.protocol import methods, payloads


class MemoryActions:
    ls: Host

    @property
    def bridge(self) -> Bridge:
        return self.ls.bridge

    async def show(self, uri: str) -> bool:
        raise NotImplementedError  # Actions.show

    async def init(self, params: Params) -> payloads.SendResult:
        cid = required(params, "conversationId")
        return await self.bridge.request(methods.CONVERSATION_INIT, {"conversationId": cid})

    async def remember(self, params: Params, *, show: bool = False) -> payloads.MemoryFile:
        call: payloads.RememberParams = {
            "conversationId": required(params, "conversationId"),
            "text": required(params, "text"),
        }
        if (scope := optional(params, "scope")) is not None:
            call["scope"] = _scope(scope)
        saved = await self.bridge.request(methods.MEMORY_REMEMBER, call)
        if show:
            message = f"Remembered in {saved['path']}"
            self.ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Info, message=message)
            )
        return saved

    async def memory(self, params: Params, *, show: bool = False) -> payloads.MemoryResult:
        cid = required(params, "conversationId")
        result = await self.bridge.request(methods.MEMORY_READ, {"conversationId": cid})
        if show:
            scope = _scope(optional(params, "scope") or "project")
            chosen = next(f for f in result["files"] if f["scope"] == scope)
            if not chosen["exists"]:
                call: payloads.MemoryWriteParams = {
                    "conversationId": cid,
                    "scope": scope,
                    "text": "",
                }
                chosen = await self.bridge.request(methods.MEMORY_WRITE, call)
            await self.show(Path(chosen["path"]).as_uri())
        return result

    async def write_memory(self, params: Params) -> payloads.MemoryFile:
        call: payloads.MemoryWriteParams = {
            "conversationId": required(params, "conversationId"),
            "scope": _scope(required(params, "scope")),
            "text": required(params, "text"),
        }
        return await self.bridge.request(methods.MEMORY_WRITE, call)


def _scope(scope: str) -> Scope:
    # Passed as the editor sent it: the daemon names a scope it does not know (docs/protocol.md).
    return cast("Scope", scope)
