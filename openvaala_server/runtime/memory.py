"""Memory files: read, appended to, rewritten (docs/protocol.md, "Memory"; the entries'
format is domain/memory.py). The user's file is `MEMORY.md` in the configuration directory, the
project's `.openvaala/MEMORY.md` at the project's root (runtime/surroundings.py). Every file
access runs in a worker thread. After a change, the conversation's idle sessions gather their
surroundings again, so the cockpit and the next request show it at once."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from openvaala_server import errors
from openvaala_server.domain import memory as m
from openvaala_server.runtime import surroundings
from openvaala_server.tools.memory import REMEMBER_TOOL, RememberTool

if TYPE_CHECKING:
    from openvaala_server.protocol import payloads as wire
    from openvaala_server.runtime.ports import Conversation
    from openvaala_server.runtime.session import LiveSession
    from openvaala_server.tools.base import Tool


async def path_of(conv: Conversation, scope: m.Scope) -> Path:
    root = await anyio.to_thread.run_sync(surroundings.project_root, conv.cwd)
    return surroundings.memory_path(scope, root, surroundings.config_dir(conv.runtime.config))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise errors.StorageFailed(f"cannot read {path}: {exc.strerror or exc}") from None


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise errors.StorageFailed(f"cannot write {path}: {exc.strerror or exc}") from None


def _append(path: Path, text: str) -> str:
    updated = m.appended(_read(path) or "", text)
    _write(path, updated)
    return updated


async def read(conv: Conversation) -> list[wire.MemoryFile]:
    files: list[wire.MemoryFile] = []
    for scope in m.SCOPES:
        path = await path_of(conv, scope)
        text = await anyio.to_thread.run_sync(_read, path)
        files.append(
            {"scope": scope, "path": str(path), "text": text or "", "exists": text is not None}
        )
    return files


def _known_path(conv: Conversation, session: LiveSession, scope: m.Scope) -> Path:
    """Where the file is, from the root the session's turn gathered (no I/O)."""
    found = session.surroundings
    root = found.root if found is not None else conv.cwd
    return surroundings.memory_path(scope, root, surroundings.config_dir(conv.runtime.config))


def tools_for(conv: Conversation, session: LiveSession) -> dict[str, Tool]:
    """The `remember` tool, for agents that list it (the default)."""
    agent = conv.runtime.config_for(session).agents.get(session.agent)
    if agent is None or REMEMBER_TOOL not in agent.tools:
        return {}

    async def append(path: Path, text: str) -> None:
        await anyio.to_thread.run_sync(_append, path, text)
        renew(conv)

    return {REMEMBER_TOOL: RememberTool(partial(_known_path, conv, session), append)}


async def remember(conv: Conversation, scope: m.Scope, text: str) -> wire.MemoryFile:
    """Append `text` as an entry of the `scope` memory file (created if needed)."""
    if not text.strip():
        raise errors.InvalidParams("there is nothing to remember: the text is empty", param="text")
    if len(text) > m.ENTRY_MAX_CHARS:
        raise errors.InvalidParams(
            f"a memory entry is at most {m.ENTRY_MAX_CHARS} characters", param="text"
        )
    path = await path_of(conv, scope)
    updated = await anyio.to_thread.run_sync(_append, path, text)
    renew(conv)
    return {"scope": scope, "path": str(path), "text": updated, "exists": True}


async def write(conv: Conversation, scope: m.Scope, text: str) -> wire.MemoryFile:
    """Replace the `scope` memory file's text (the user edited it)."""
    if len(text) > m.FILE_MAX_CHARS:
        raise errors.InvalidParams(
            f"a memory file is at most {m.FILE_MAX_CHARS} characters", param="text"
        )
    path = await path_of(conv, scope)
    await anyio.to_thread.run_sync(_write, path, text)
    renew(conv)
    return {"scope": scope, "path": str(path), "text": text, "exists": True}


def renew(conv: Conversation) -> None:
    """Idle sessions gather their surroundings again (a running turn's next one does)."""
    for session in conv.sessions.values():
        if session.turn is None and session.surroundings_loading is None:
            session.surroundings = None
            if session.context_ready and session.model in conv.runtime.config.models:
                conv.refresh_usage_estimate(session)
                conv.publish_usage(session)
