"""The `remember` tool: the model keeps a note the user asked it to remember across conversations
(docs/configuration.md, "What the model is told"), appended to the project's or the user's
memory file.

A write like any other: it states the file it changes, so the approval policy asks (or refuses)
as it would for `write_file` there. The user's file lives in the configuration directory, which
no tool may write; the call asks to go past the sandbox instead, so the user decides each time.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from openvaala_server import errors
from openvaala_server.domain import tool_names
from openvaala_server.domain.memory import ENTRY_MAX_CHARS, SCOPES, Scope
from openvaala_server.domain.permissions import Access
from openvaala_server.models.base import ToolSpec
from openvaala_server.protocol.json_types import JsonObject
from openvaala_server.tools.base import ToolContext, ToolResult

REMEMBER_TOOL: Final = tool_names.REMEMBER

_SPEC = ToolSpec(
    name=REMEMBER_TOOL,
    description=(
        "Keep a note for every later conversation, when the user asks you to remember something "
        "(a preference, a convention, a command). It is appended to a memory file the user owns "
        "and is shown to you at the start of every conversation. One short fact per call, "
        "written as an instruction to yourself. scope 'project' (the default) keeps it for this "
        "repository, 'user' for every project."
    ),
    parameters={
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The note, one or two sentences."},
            "scope": {"type": "string", "enum": list(SCOPES), "description": "Default: project."},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
)


class _BadArguments(Exception):
    pass


def _arguments(arguments: JsonObject) -> tuple[Scope, str]:
    text = arguments.get("text")
    if not isinstance(text, str) or not text.strip():
        raise _BadArguments('"text" must be a non-empty string.')
    if len(text) > ENTRY_MAX_CHARS:
        raise _BadArguments(f'"text" must be at most {ENTRY_MAX_CHARS} characters.')
    scope = arguments.get("scope", "project")
    for known in SCOPES:
        if scope == known:
            return known, text
    raise _BadArguments('"scope" must be "project" or "user".')


class RememberTool:
    def __init__(
        self, path_of: Callable[[Scope], Path], append: Callable[[Path, str], Awaitable[None]]
    ) -> None:
        self.path_of = path_of  # where a scope's file is (no I/O: the turn gathered the root)
        self.append = append

    @property
    def spec(self) -> ToolSpec:
        return _SPEC

    def access(self, arguments: JsonObject, cwd: Path) -> Access:
        try:
            scope, text = _arguments(arguments)
        except _BadArguments:
            return Access(summary="remember (invalid arguments)")
        path = Path(os.path.realpath(self.path_of(scope)))
        summary = f"remember in {path}: {' '.join(text.split())[:100]}"
        if scope == "user":
            return Access(summary=summary, outside_sandbox=f"add a note to your memory file {path}")
        return Access(summary=summary, writes=(path,))

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolResult:
        try:
            scope, text = _arguments(arguments)
        except _BadArguments as exc:
            return ToolResult(f"remember: {exc}", is_error=True)
        path = self.path_of(scope)
        try:
            await self.append(path, text)
        except errors.OpenVaalaError as exc:
            return ToolResult(f"remember: {exc.message}", is_error=True)
        return ToolResult(f"Remembered in {path}; every later conversation is given it.")
