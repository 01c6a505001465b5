"""Moving bundle members between files: kernel copies, hashing threads, tar headers, and the
check that a journal's lines look like records (store/bundle.py uses them for export and import).

The copy (`sendfile`) and the checksum (zlib and hashlib let go of the GIL) run at the same time
in different threads over the same descriptor, each with its own offsets (pread): on two cores an
export or import costs about the longer of the two instead of their sum.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import tarfile
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Protocol, TypeVar

from openvaala_server.domain import bundle as b
from openvaala_server.store.journal import write_all

CHUNK = 1 << 20
Data = bytes | bytearray | memoryview
T = TypeVar("T")


@functools.cache
def workers() -> ThreadPoolExecutor:
    """The threads that hash and copy bundle members, for the process's life (starting them per
    bundle cost a millisecond): two cores hash and copy, the others mostly wait for the disk."""
    return ThreadPoolExecutor(4, thread_name_prefix="bundle")


class Tasks:
    """The work one export or import hands to `workers`: leaving the block (an error too)
    cancels what has not started and waits for the rest, so nothing still reads a descriptor
    or writes into a staging directory after it is closed or removed."""

    def __init__(self) -> None:
        self._futures: list[Future[Any]] = []

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        future = workers().submit(fn, *args)
        if len(self._futures) >= 1024:  # forget the finished ones: thousands of members
            self._futures = [f for f in self._futures if not f.done()]
        self._futures.append(future)
        return future

    def __enter__(self) -> Tasks:
        return self

    def __exit__(self, *exc: object) -> None:
        for future in self._futures:
            future.cancel()
        wait(self._futures)


def tar_header(name: str, size: int, mtime: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.type = size, mtime, 0o600, tarfile.REGTYPE
    return info.tobuf(tarfile.PAX_FORMAT, tarfile.ENCODING, "strict")


def tar_padding(size: int) -> bytes:
    return bytes(-size % tarfile.BLOCKSIZE)


def copy_range(src: int, offset: int, size: int, out: int) -> int:
    """Copy `size` bytes of `src` at `offset` to `out` at its position, in the kernel
    (`sendfile`, as shutil copies files) where it can, else through a buffer; the bytes copied,
    fewer if `src` ends first."""
    done = 0
    try:
        while done < size:
            sent = os.sendfile(out, src, offset + done, min(size - done, _SEND_MAX))
            if sent == 0:
                return done
            done += sent
    except OSError as exc:
        if done or exc.errno not in _NO_SENDFILE:
            raise
        while done < size:
            chunk = os.pread(src, min(size - done, CHUNK), offset + done)
            if not chunk:
                break
            write_all(out, chunk)
            done += len(chunk)
    return done


_SEND_MAX = 1 << 30
_NO_SENDFILE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP}


class Crc32:
    """zlib's CRC-32 with hashlib's interface (zlib lets go of the GIL as hashlib does)."""

    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Data) -> None:
        self.value = zlib.crc32(data, self.value)

    def hexdigest(self) -> str:
        return f"{self.value:08x}"


class _Hash(Protocol):
    def update(self, data: Data, /) -> None: ...

    def hexdigest(self) -> str: ...


HASHES: dict[str, Callable[[], _Hash]] = {"crc32": Crc32, "sha256": hashlib.sha256}


def checksum_of(
    kind: str, src: int, offset: int, size: int, lines: JournalLines | None = None
) -> str | None:
    """The checksum (`kind`: a key of HASHES) of `size` bytes of `src` at `offset`, read with
    pread (a copy may be reading the same descriptor at its own offsets) and fed to `lines` too;
    None if `src` ends first."""
    digest = HASHES[kind]()
    buffer = bytearray(min(size, CHUNK))
    view = memoryview(buffer)
    done = 0
    while done < size:
        n = os.preadv(src, [view[: min(size - done, CHUNK)]], offset + done)
        if n == 0:
            return None
        digest.update(view[:n])
        if lines is not None:
            lines.feed(buffer, n)
        done += n
    return digest.hexdigest()


class JournalLines:
    """Checks, chunk by chunk, that every line of a journal opens with `{` and closes with `}`
    and a newline, and keeps its first line.

    Not a parse: the store's reader skips a line it cannot parse, as it does a line damaged on
    disk, so a bundle's journals are parsed only for the index, behind the answer. This check
    (a memchr and two byte compares a line) refuses what is not a journal at all (a binary
    file, a text file, a line cut short) before anything is moved into place."""

    def __init__(self) -> None:
        self.line = 1  # the number of the line being read
        self.bad: int | None = None  # the first line that is not a record
        self.first = bytearray()  # the first line, once `first_done`
        self.first_done = False
        self._at_start = True  # the next byte opens a line
        self._last = 0  # the last byte fed

    def feed(self, chunk: bytearray, n: int) -> None:
        if self.bad is not None or n == 0:
            return
        if not self.first_done:
            end = chunk.find(b"\n", 0, n)
            self.first += chunk[: n if end < 0 else end]
            self.first_done = end >= 0 or len(self.first) > b.MAX_MANIFEST_BYTES
        i = 0
        while i < n:
            if self._at_start and chunk[i] != _OPEN:
                self.bad = self.line
                return
            self._at_start = False
            end = chunk.find(b"\n", i, n)
            if end < 0:
                break
            if (chunk[end - 1] if end > i else self._last) != _CLOSE:
                self.bad = self.line
                return
            self.line += 1
            self._at_start = True
            i = end + 1
        self._last = chunk[n - 1]

    def odd_line(self) -> int | None:
        """The first line that is not a record (a last line without its newline too)."""
        return self.bad if self.bad is not None or self._at_start else self.line


_OPEN, _CLOSE = ord("{"), ord("}")
