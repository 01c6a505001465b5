"""`directories/list` (docs/protocol.md): the subdirectories of a directory the daemon's user can
open, for a client's folder picker. Only names of directories are told, never files; `~` is
the daemon user's home (domain/dir_paths.py)."""

from __future__ import annotations

import asyncio
import errno
import os
import stat
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


def _refused(path: str, exc: OSError) -> errors.OpenVaalaError:
    """The error a client is told for a path the daemon could not read, naming why."""
    if isinstance(exc, FileNotFoundError):
        return errors.NotFound(f"no directory {path}", param="path")
    if isinstance(exc, NotADirectoryError):
        return errors.NotFound(f"{path} is not a directory", param="path")
    if isinstance(exc, PermissionError):
        return errors.InvalidParams(f"the daemon's user cannot read {path}", param="path")
    if exc.errno == errno.ELOOP:
        return errors.InvalidParams(f"{path}: too many levels of symbolic links", param="path")
    return errors.InvalidParams(f"{path} cannot be read: {exc.strerror or exc}", param="path")


def list_directories(path: str, hidden: bool) -> w.DirectoryListing:
    """Blocking: read `path` (absolute, normalized) and keep the subdirectories one can open."""
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", path)
        if not _readable(path):
            raise PermissionError(errno.EACCES, "permission denied", path)
        names = _subdirectories(path, hidden)
    except OSError as exc:  # also one removed or made unreadable while it is read
        raise _refused(path, exc) from None
    return {
        "path": path,
        "parent": parent(path),
        "home": str(Path.home()),
        "directories": [{"name": n, "path": os.path.join(path, n)} for n in names[:MAX_ENTRIES]],
        "truncated": len(names) > MAX_ENTRIES,
    }


def _subdirectories(path: str, hidden: bool) -> list[str]:
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
    return names


def directory_methods() -> dict[str, Handler]:
    async def directories(conn: Connection, p: Params) -> w.DirectoryListing:
        raw = p.string("path", "~", max_len=PATH_MAX)
        try:
            path = expand(raw, str(Path.home()))
        except BadPath as exc:
            raise errors.InvalidParams(f'"path": {exc}', param="path") from None
        return await asyncio.to_thread(list_directories, path, p.boolean("hidden", False))

    return {m.DIRECTORIES_LIST: directories}
