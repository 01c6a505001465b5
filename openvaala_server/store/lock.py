"""runtime.lock: at most one server per data directory, and how clients find it.

Storage contract: the running server holds a non-blocking exclusive ``flock`` on ``runtime.lock``
for its whole life, and the file holds ``{"pid": ..., "address": ...}``. The kernel drops the lock
when the process dies (even by SIGKILL), so a stale file never blocks the next server: whether a
server runs is the lock, not the file's existence. Nobody ever deletes the file (deleting it would
let a second server lock a new inode while the first still holds the old one).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from openvaala_server.store.paths import StoreError


@dataclass(frozen=True)
class LockInfo:
    pid: int | None
    address: str | None


class LockHeld(StoreError):
    """Another process holds the lock."""

    def __init__(self, pid: int | None, address: str | None) -> None:
        super().__init__(f"another OpenVaala server runs (pid {pid}, address {address})")
        self.pid = pid
        self.address = address


def _parse(data: bytes) -> LockInfo:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return LockInfo(None, None)  # the holder is between truncate and write
    if not isinstance(value, dict):
        return LockInfo(None, None)
    pid, address = value.get("pid"), value.get("address")
    return LockInfo(
        pid if isinstance(pid, int) else None, address if isinstance(address, str) else None
    )


def _probe(path: Path) -> tuple[bool, bytes]:
    """(held by someone, content), probing with a flock on a fresh descriptor."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False, b""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            held = True
        else:
            held = False
            fcntl.flock(fd, fcntl.LOCK_UN)
        return held, os.pread(fd, 4096, 0)
    finally:
        os.close(fd)


def is_locked(path: Path) -> bool:
    return _probe(path)[0]


def read_lock(path: Path) -> LockInfo | None:
    """Who holds the lock, or None if nobody does (a leftover file's content means nothing)."""
    held, data = _probe(path)
    return _parse(data) if held else None


class RuntimeLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._address: str | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, address: str | None = None) -> None:
        """Take the lock or raise `LockHeld` naming the holder."""
        if self._fd is not None:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            data = os.pread(fd, 4096, 0)
            os.close(fd)
            info = _parse(data)
            raise LockHeld(info.pid, info.address) from None
        self._fd = fd
        self.set_address(address)

    def set_address(self, address: str | None) -> None:
        """Record where the server listens (once it knows its port)."""
        if self._fd is None:
            raise RuntimeError("the lock is not held")
        self._address = address
        data = orjson.dumps({"pid": os.getpid(), "address": address})
        # Overwrite in place, then cut: a reader never sees an empty file mid-update.
        os.pwrite(self._fd, data, 0)
        os.ftruncate(self._fd, len(data))

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
