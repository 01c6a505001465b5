"""Where OpenVaala keeps its data, and the only way the store turns an id into a path.

Contract (docs/storage.md, "Layout")::

    <root>/metadata.db                  derived index (SQLite, WAL)
    <root>/runtime.lock                 flock held by the running server
    <root>/token                        the running server's auth token
    <root>/conversations/<cid>/metadata.jsonl
    <root>/conversations/<cid>/<sid>.jsonl

Every id is checked with `is_valid_id` before it becomes a path, and a conversation directory that
is a symlink, or whose name is not an id, is never followed.

The store's exceptions (their root, `StoreError`, is in openvaala_server/errors.py with the
protocol's errors; a store failure reaches a client as `storage_failed`)::

    StoreError
    ├── InvalidId            (also a ValueError) an id that may not touch the disk
    ├── NotFound             no such conversation / item
    ├── FormatTooNew         written by a newer OpenVaala: not opened, never half-understood
    ├── CorruptConversation  metadata.jsonl does not describe a conversation
    └── JournalWriteError    (journal.py) an append did not reach the disk
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Final

from openvaala_server.discovery import LOCK_FILE, TOKEN_FILE, data_root
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.errors import StoreError

METADATA_FILE = "metadata.jsonl"
JOURNAL_SUFFIX = ".jsonl"
# A conversation directory renamed to this prefix is being deleted (see Store.delete_conversation).
TRASH_PREFIX = ".trash-"
# An import unpacks into <root>/import-<id>/ before one rename moves it into conversations/
# (store/bundle.py); one left by a crash is removed when the store opens.
IMPORT_STAGING_PREFIX: Final = "import-"


class InvalidId(StoreError, ValueError):
    """An id that is not 32 lowercase hex characters: it never reaches a path."""


class NotFound(StoreError):
    """No such conversation (or item)."""


class FormatTooNew(StoreError):
    """The conversation was written by a newer OpenVaala."""


class CorruptConversation(StoreError):
    """metadata.jsonl cannot be read or does not start with a conversation_created record."""


def check_id(value: object) -> str:
    if not is_valid_id(value):
        raise InvalidId(f"invalid id: {value!r}")
    assert isinstance(value, str)
    return value


def is_real_dir(path: Path) -> bool:
    """A directory that is not a symlink (lstat, so a link to a directory does not count)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def is_real_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


DIR_MODE = 0o700
FILE_MODE = 0o600


def _scan(directory: Path) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as entries:
        return list(entries)


def tighten(path: Path, entry: os.DirEntry[str] | None = None) -> bool:
    """Take group and other permissions off a directory (0700) or regular file (0600); whether
    there were any. Symlinks are left alone (chmod would follow them out of the data directory)."""
    st = entry.stat(follow_symlinks=False) if entry is not None else os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        wanted = DIR_MODE
    elif stat.S_ISREG(st.st_mode):
        wanted = FILE_MODE
    else:
        return False
    if not stat.S_IMODE(st.st_mode) & 0o077:
        return False
    os.chmod(path, wanted)
    return True


def _tighten_tree(directory: Path) -> None:
    """Everything under a conversation's directory: attachments/ and the snapshot store
    (checkpoints/) hold files two levels down. Symlinks are neither followed nor changed."""
    for inner in _scan(directory):
        tighten(Path(inner.path), inner)
        if inner.is_dir(follow_symlinks=False):
            _tighten_tree(Path(inner.path))


_PATH_CACHE_SIZE = 4096


@dataclass(frozen=True)
class DataDir:
    root: Path
    _paths: dict[tuple[str, str, str], Path] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    @classmethod
    def resolve(cls, environ: Mapping[str, str] | None = None) -> DataDir:
        """`$OPENVAALA_HOME` › `$XDG_DATA_HOME/openvaala` › `~/.local/share/openvaala`."""
        return cls(data_root(environ))

    def ensure(self) -> None:
        """Create the root (0700: it holds the token and every conversation) and conversations/,
        and tighten what is there to the modes this version creates: directories 0700, files
        0600 (message text must not be readable by other users, the index's WAL included).
        Raises OSError when the directory cannot be created or changed (read-only, not ours)."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.conversations_dir.mkdir(mode=0o700, exist_ok=True)
        loose = tighten(self.root)
        for entry in _scan(self.root):
            if entry.name != self.conversations_dir.name:
                tighten(Path(entry.path), entry)
        loose = tighten(self.conversations_dir) or loose
        # Under a 0700 root, nothing is in other users' reach whatever its mode: the
        # conversations are walked (10,000 directories take a while) only when the root or
        # conversations/ was open, and a conversation's files only when its directory was.
        if not loose:
            return
        for entry in _scan(self.conversations_dir):
            if tighten(Path(entry.path), entry) and entry.is_dir(follow_symlinks=False):
                _tighten_tree(Path(entry.path))

    def unusable(self, exc: OSError) -> StoreError:
        """What `ensure` (or a later write at the root) raising `exc` means to a user."""
        # `mkdir(exist_ok=True)` says "File exists" only when what is there is no directory.
        why = "it is not a directory" if isinstance(exc, FileExistsError) else exc.strerror or exc
        return StoreError(f"cannot write to {exc.filename or self.root}: {why}")

    @property
    def metadata_db(self) -> Path:
        return self.root / "metadata.db"

    @property
    def lock_path(self) -> Path:
        return self.root / LOCK_FILE

    @property
    def token_path(self) -> Path:
        return self.root / TOKEN_FILE

    @cached_property
    def conversations_dir(self) -> Path:
        return self.root / "conversations"

    # Every append asks for its file's path: on Python 3.11 each `Path /` costs ~10 µs, which
    # made path building a visible share of an append. Paths of recent ids are kept (bounded).

    def conversation_dir(self, cid: str) -> Path:
        return self._cached(("dir", cid, ""), lambda: self.conversations_dir / check_id(cid))

    def trash_dir(self, cid: str) -> Path:
        return self.conversations_dir / (TRASH_PREFIX + check_id(cid))

    def metadata_file(self, cid: str) -> Path:
        return self._cached(("meta", cid, ""), lambda: self.conversation_dir(cid) / METADATA_FILE)

    def session_file(self, cid: str, sid: str) -> Path:
        return self._cached(
            ("session", cid, sid),
            lambda: self.conversation_dir(cid) / (check_id(sid) + JOURNAL_SUFFIX),
        )

    def _cached(self, key: tuple[str, str, str], build: Callable[[], Path]) -> Path:
        path = self._paths.get(key)
        if path is None:
            if len(self._paths) >= _PATH_CACHE_SIZE:
                self._paths.clear()
            path = self._paths[key] = build()  # only valid ids get here: build() checks them
        return path
