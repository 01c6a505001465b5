"""`directories/list` (docs/protocol.md): the subdirectories of a directory the daemon's user can
open, for a client's folder picker. Only names of directories are told, never files; `~` is
the daemon user's home (domain/dir_paths.py)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from openvaala_server import errors
from openvaala_server.api.connection import Connection
from openvaala_server.domain.dir_paths import PATH_MAX, BadPath, expand, parent
from openvaala_server.protocol import methods as m
from openvaala_server.protocol import payloads as w
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.protocol.params import Params

MAX_ENTRIES = 1000  # a picker shows names, not a whole disk: the rest is `truncated`

Handler = Callable[[Connection, Params], Awaitable[JsonMapping]]


def _readable(path: str) -> bool:
    return os.access(path, os.R_OK | os.X_OK)


def list_directories(path: str, hidden: bool) -> w.DirectoryListing:
    """Blocking: read `path` (absolute, normalized) and keep the subdirectories one can open."""
    if not os.path.isdir(path):
        raise errors.NotFound(f"no directory {path}", param="path")
    if not _readable(path):
        raise errors.InvalidParams(f"the daemon's user cannot read {path}", param="path")
    names: list[str] = []
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.name.startswith(".") and not hidden:
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                continue
            if is_dir and _readable(entry.path):
                names.append(entry.name)
    names.sort(key=lambda n: (n.casefold(), n))
    return {
        "path": path,
        "parent": parent(path),
        "home": str(Path.home()),
        "directories": [{"name": n, "path": os.path.join(path, n)} for n in names[:MAX_ENTRIES]],
        "truncated": len(names) > MAX_ENTRIES,
    }


def directory_methods() -> dict[str, Handler]:
    async def directories(conn: Connection, p: Params) -> w.DirectoryListing:
        raw = p.string("path", "~", max_len=PATH_MAX)
        try:
            path = expand(raw, str(Path.home()))
        except BadPath as exc:
            raise errors.InvalidParams(f'"path": {exc}', param="path") from None
        return await asyncio.to_thread(list_directories, path, p.boolean("hidden", False))

    return {m.DIRECTORIES_LIST: directories}
