"""Making several files' appended bytes durable at once.

One ``fdatasync`` per file is the portable way, but a batch that touched eight files pays eight
journal commits (ext4 merges concurrent ones only partly: measured here, eight files synced in
parallel cost ~3–4× one file). Linux's ``syncfs(fd)`` flushes every dirty page and the journal of
the file system holding ``fd`` in one call — one commit for the whole batch, measured at about the
cost of a single ``fdatasync`` (bench/append.py).

`syncfs` is only used where it is known to be both durable and cheap; everywhere else each file
gets its own ``fdatasync`` (in parallel):

- **Linux ≥ 5.17.** Before that, `syncfs` ignored the error of the file system's own sync (an
  ext4 journal commit or an XFS log force that failed still returned 0).
- **ext4 or XFS.** FUSE, 9p and ecryptfs do not pass `syncfs` down to where the data lives, so
  it would return before the data is safe; btrfs turns it into a full transaction commit, which
  its per-file log makes unnecessary for `fdatasync`.
- **Little dirty data on the machine.** `syncfs` waits for everything dirty on the file system,
  a large copy or build included: with more than `DIRTY_LIMIT` bytes dirty or under write-back
  (``/proc/meminfo``), the batch's own files are synced one by one instead.
- **A batch of several files.** One file keeps its own ``fdatasync``.

If `syncfs` reports an error, it cannot say which file it belongs to (it may even be another
program's): the caller then syncs each file on its own, so exactly the files whose data did not
reach the disk fail.
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final, TypeVar

T = TypeVar("T")

EXT4_SUPER_MAGIC: Final = 0xEF53
XFS_SUPER_MAGIC: Final = 0x58465342
SYNCFS_FILE_SYSTEMS: Final = frozenset({EXT4_SUPER_MAGIC, XFS_SUPER_MAGIC})
DIRTY_LIMIT: Final = 32 * 1024 * 1024
DIRTY_RECHECK_S: Final = 0.1
MEMINFO = Path("/proc/meminfo")


def _kernel_at_least(version: tuple[int, int]) -> bool:
    uname = os.uname()
    if uname.sysname != "Linux":
        return False
    try:
        major, minor = (int(part) for part in uname.release.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= version


def _libc() -> ctypes.CDLL | None:
    # The symbols the process already has (libc's among them): `ctypes.util.find_library` would
    # run `ldconfig` at every start, twice (docs/design.md, "Start-up imports").
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _load_syncfs() -> Callable[[int], None] | None:
    libc = _libc() if _kernel_at_least((5, 17)) else None
    function = getattr(libc, "syncfs", None)
    if function is None:
        return None
    function.argtypes = [ctypes.c_int]
    function.restype = ctypes.c_int

    def syncfs(fd: int) -> None:
        if function(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return syncfs


def _load_fstatfs_type() -> Callable[[int], int] | None:
    libc = _libc() if os.uname().sysname == "Linux" else None
    function = getattr(libc, "fstatfs", None)
    if function is None:
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_void_p]
    function.restype = ctypes.c_int

    def fs_type(fd: int) -> int:
        # struct statfs starts with f_type (a C long); 256 bytes hold the whole struct.
        buffer = ctypes.create_string_buffer(256)
        if function(fd, buffer) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF

    return fs_type


# `syncfs(fd)`: flush the whole file system holding fd, raising OSError; None where unusable.
syncfs: Callable[[int], None] | None = _load_syncfs()
# `fs_type(fd)`: the magic number of the file system holding fd (statfs f_type).
fs_type: Callable[[int], int] | None = _load_fstatfs_type()


def dirty_bytes() -> int:
    """Bytes dirty or under write-back on this machine (a large number if it cannot tell)."""
    try:
        text = MEMINFO.read_text()
    except OSError:
        return 1 << 62
    total = 0
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name in ("Dirty", "Writeback"):
            total += int(rest.split()[0]) * 1024
    return total


class GroupSync:
    """Syncs groups of open files; one instance per writer thread (it owns a small pool)."""

    def __init__(self, *, threads: int = 8) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="journal-fsync")
        self._fs_ok: dict[int, bool] = {}  # by st_dev: is syncfs fit for this file system?
        # Reading /proc/meminfo costs ~40 µs; dirty data does not change much in 100 ms.
        self._calm_until = 0.0

    def close(self) -> None:
        self._pool.shutdown()

    def syncfs_fits(self, fd: int, device: int) -> bool:
        """Would `try_syncfs` use syncfs for the file system of `fd` (device `device`) now?"""
        if syncfs is None or fs_type is None:
            return False
        fits = self._fs_ok.get(device)
        if fits is None:
            try:
                fits = fs_type(fd) in SYNCFS_FILE_SYSTEMS
            except OSError:
                fits = False
            self._fs_ok[device] = fits
        return fits and self._little_dirty()

    def _little_dirty(self) -> bool:
        now = time.monotonic()
        if now < self._calm_until:
            return True
        if dirty_bytes() > DIRTY_LIMIT:
            return False
        self._calm_until = now + DIRTY_RECHECK_S
        return True

    def try_syncfs(self, fd: int, device: int) -> bool:
        """Make everything written on the file system of `fd` durable with one syncfs. False
        if syncfs does not fit (see the module docstring) or reported an error: then sync each
        file instead, which also tells which of them failed."""
        if syncfs is None or not self.syncfs_fits(fd, device):
            return False
        try:
            syncfs(fd)
        except OSError:
            return False
        return True

    def sync_each(self, files: Sequence[T], sync: Callable[[T], None]) -> None:
        """Run `sync` for every file, in parallel (the kernel merges some concurrent commits)."""
        list(self._pool.map(sync, files))
