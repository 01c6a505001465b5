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
from pathlib import Path

from openvaala_server.discovery import LockInfo, is_locked, parse_lock, read_lock
from openvaala_server.errors import StoreError

# The reader side (how clients find the server) lives where the client library can use it
# without the store.
from openvaala_server.protocol import codec

__all__ = ["LockHeld", "LockInfo", "RuntimeLock", "is_locked", "read_lock"]


class LockHeld(StoreError):
    """Another process holds the lock."""

    def __init__(self, pid: int | None, address: str | None) -> None:
        super().__init__(f"another OpenVaala server runs (pid {pid}, address {address})")
        self.pid = pid
        self.address = address


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
            info = parse_lock(data)
            raise LockHeld(info.pid, info.address) from None
        self._fd = fd
        self.set_address(address)

    def set_address(self, address: str | None) -> None:
        """Record where the server listens (once it knows its port)."""
        if self._fd is None:
            raise RuntimeError("the lock is not held")
        self._address = address
        data = codec.dumps({"pid": os.getpid(), "address": address})
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
