"""`/init`, memory (docs/protocol.md, "Memory") and the user's `!command` (`shell/run`): read
params, call the runtime, shape the result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from openvaala_server import errors, prompts
from openvaala_server.api.connection import Connection
from openvaala_server.domain.memory import FILE_MAX_CHARS, SCOPES
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as w
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.protocol.params import Params
from openvaala_server.runtime import memory, user_shell

if TYPE_CHECKING:
    from openvaala_server.runtime.manager import ConversationManager

COMMAND_MAX = 100_000  # characters of one `!command`

Handler = Callable[[Connection, Params], Awaitable[JsonMapping]]


def memory_methods(runtime: ConversationManager) -> dict[str, Handler]:
    async def init(conn: Connection, p: Params) -> w.SendResult:
        return await runtime.send_input(
            p.id("conversationId"), None, prompts.init_request(), "queue"
        )

    async def read(conn: Connection, p: Params) -> w.MemoryResult:
        conv = await runtime.open(p.id("conversationId"))
        return {"files": await memory.read(conv)}

    async def remember(conn: Connection, p: Params) -> w.MemoryFile:
        conv = await runtime.open(p.id("conversationId"))
        text = p.string("text", max_len=FILE_MAX_CHARS)
        return await memory.remember(conv, p.choice("scope", SCOPES, "project"), text)

    async def shell(conn: Connection, p: Params) -> w.ShellRunResult:
        command = p.string("command", max_len=COMMAND_MAX).strip()
        if not command:
            raise errors.InvalidParams("command is empty", param="command")
        return await user_shell.run(runtime, p.id("conversationId"), command)

    async def write(conn: Connection, p: Params) -> w.MemoryFile:
        conv = await runtime.open(p.id("conversationId"))
        text = p.string("text", "", max_len=FILE_MAX_CHARS)
        return await memory.write(conv, p.choice("scope", SCOPES), text)

    return {
        m.CONVERSATION_INIT: init,
        m.MEMORY_READ: read,
        m.MEMORY_REMEMBER: remember,
        m.MEMORY_WRITE: write,
        m.SHELL_RUN: shell,
    }
