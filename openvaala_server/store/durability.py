"""Making several files' appended bytes durable at once.

One ``fdatasync`` per file is the portable way, but a batch that touched eight files pays eight
journal commits (ext4 merges concurrent ones only partly: measured here, eight files synced in
parallel cost ~3–4× one file). Linux's ``syncfs(fd)`` flushes every dirty page and the journal of
the file system holding ``fd`` in one call — one commit for the whole batch, measured at about the
cost of a single ``fdatasync`` (bench/append.py). Since Linux 5.8 it also reports write-back
errors of that file system, so a failure is seen (though not which file failed: the caller fails
every file of the group); on older kernels it is not used.

`syncfs` flushes what *other* writers left dirty on the same file system too, so it is only used
when a batch spans several files; one file keeps its own ``fdatasync``. Where ``syncfs`` is not
available (not Linux), or fails for a reason other than an I/O error (a seccomp filter, say),
each file is synced on its own, in parallel.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Final, TypeVar

T = TypeVar("T")

# Errors that mean "the data may not be on disk", as opposed to "syncfs cannot be used here".
_IO_ERRORS: Final = frozenset({errno.EIO, errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def _kernel_reports_errors() -> bool:
    """syncfs reports write-back errors only since Linux 5.8; before, it returned 0 anyway."""
    uname = os.uname()
    if uname.sysname != "Linux":
        return False
    try:
        major, minor = (int(part) for part in uname.release.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (5, 8)


def _load_syncfs() -> Callable[[int], None] | None:
    if not _kernel_reports_errors():
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = libc.syncfs
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int

    def syncfs(fd: int) -> None:
        if function(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return syncfs


# `syncfs(fd)`: flush the whole file system holding fd, raising OSError; None where unavailable.
syncfs: Callable[[int], None] | None = _load_syncfs()


class GroupSync:
    """Syncs groups of open files; one instance per writer thread (it owns a small pool)."""

    def __init__(self, *, use_syncfs: bool = True, threads: int = 8) -> None:
        self._syncfs = syncfs if use_syncfs else None
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="journal-fsync")

    @property
    def uses_syncfs(self) -> bool:
        return self._syncfs is not None

    def close(self) -> None:
        self._pool.shutdown()

    def sync_filesystem(self, fd: int) -> bool:
        """``syncfs`` the file system holding `fd`. False if it cannot be used (then sync each
        file instead); raises OSError if the file system reported a write error."""
        if self._syncfs is None:
            return False
        try:
            self._syncfs(fd)
        except OSError as exc:
            if exc.errno in _IO_ERRORS:
                raise
            self._syncfs = None  # not allowed (a seccomp filter) or not supported: stop trying
            return False
        return True

    def sync_each(self, files: Sequence[T], sync: Callable[[T], None]) -> None:
        """Run `sync` for every file, in parallel (the kernel merges some concurrent commits)."""
        list(self._pool.map(sync, files))
