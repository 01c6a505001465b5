"""Custom commands for clients that do not read the files themselves (docs/protocol.md,
"commands/list", "commands/expand"): the same loader as the terminal's
(openvaala_server/custom_commands.py), on the conversation's directory and the user's
`commands/` beside the daemon's config file."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from openvaala_server import errors
from openvaala_server.api.connection import Connection
from openvaala_server.config import config_path
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as w
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.protocol.params import Params

if TYPE_CHECKING:
    from openvaala_server.custom_commands import CustomCommand
    from openvaala_server.runtime.manager import ConversationManager

Handler = Callable[[Connection, Params], Awaitable[JsonMapping]]
ARGUMENTS_MAX = 100_000  # characters of `/name arguments`


def command_methods(runtime: ConversationManager) -> dict[str, Handler]:
    async def commands_of(p: Params) -> tuple[dict[str, CustomCommand], Path]:
        # At the first use: not on a start's way to its first turn (docs/design.md, "Exec's
        # spawn and the daemon's first turn").
        from openvaala_server.custom_commands import directories, load

        conv = await runtime.open(p.id("conversationId"))
        user_dir = (runtime.config.path or config_path()).parent / "commands"
        dirs = directories(user_dir, conv.cwd)
        return await asyncio.to_thread(load, dirs), user_dir

    async def listing(conn: Connection, p: Params) -> w.CommandsResult:
        found, user_dir = await commands_of(p)
        return {
            "commands": [
                {
                    "name": c.name,
                    "description": c.description,
                    "source": "user" if c.path.parent == user_dir else "project",
                }
                for c in sorted(found.values(), key=lambda c: c.name)
            ]
        }

    async def expand(conn: Connection, p: Params) -> w.ExpandResult:
        name = p.string("name", max_len=200).lstrip("/").lower()
        arguments = p.string("arguments", "", max_len=ARGUMENTS_MAX)
        found, user_dir = await commands_of(p)
        command = found.get(name)
        if command is None:
            known = ", ".join(f"/{n}" for n in sorted(found)) or "none"
            raise errors.NotFound(
                f"no custom command /{name} (a Markdown file in {user_dir} or the project's "
                f".openvaala/commands/; here: {known})",
                param="name",
            )
        return {"text": command.expand(arguments)}

    return {m.COMMANDS_LIST: listing, m.COMMANDS_EXPAND: expand}
