"""`metadata.db.closed`: the index was closed cleanly and nothing has written to it since
(docs/storage.md, "The index's check at start").

A start checks every page of a cleanly closed index (`PRAGMA quick_check`) before trusting it: a
damaged page would otherwise show only when a query reached it, or not at all (garbage read
without an SQLite error). That check grows with the index (~1.3 ms per MB, seconds at 50,000
conversations). So a clean close writes down what the file looked like once every connection to
it was closed — its size, inode, modification and change times — and the next start skips the
check when the file still looks exactly so. Any write to the file after that changes its change
time (which no user tool can set back), so a file damaged by any program is checked again. A
mark written in the same clock tick as the file's last write could miss a write in that tick:
such a mark is not trusted (git's "racy clean" rule). What the mark cannot see is the disk
corrupting bytes by itself; the journals stay the truth, and `openvaala reindex` rebuilds.

The mark is removed at every open, before the index is written, so it only ever describes the
file as the last clean close left it.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import TypedDict

from openvaala_server.protocol import codec

log = logging.getLogger(__name__)

SUFFIX = ".closed"


class Mark(TypedDict):
    size: int
    ino: int
    dev: int
    mtime_ns: int
    ctime_ns: int


def mark_path(db: Path) -> Path:
    return db.with_name(db.name + SUFFIX)


def _mark_of(st: os.stat_result) -> Mark:
    return {
        "size": st.st_size,
        "ino": st.st_ino,
        "dev": st.st_dev,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
    }


def _wal_holds_frames(db: Path) -> bool:
    return _non_empty(db.with_name(db.name + "-wal"))


def _pending(db: Path) -> bool:
    """Whether SQLite would write into `db` at its first read: frames in its `-wal`, or a
    rollback `-journal` (left by a tool that opened the index in another journal mode and died,
    or restored beside it from a backup). A journal is played back into the file whatever wrote
    it, after the mark was compared: pages of another version, mixed in without an error."""
    return _wal_holds_frames(db) or _non_empty(db.with_name(db.name + "-journal"))


def _non_empty(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except FileNotFoundError:
        return False
    except OSError:  # cannot tell: the pages get checked
        return True


FileId = tuple[int, int]  # device, inode


def file_id(db: Path) -> FileId | None:
    """Which file is at `db` now: taken when the index is opened, so that the close marks only
    that file."""
    try:
        st = db.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def write(db: Path, opened: FileId | None) -> None:
    """Mark `db` as closed cleanly; call once every connection to it is closed. `opened`: the file
    those connections had (`file_id` at the open). Best effort: a mark that cannot be written
    only means the next start checks the index."""
    try:
        if _wal_holds_frames(db):  # not everything is in the file itself: nothing to vouch for
            return
        st = db.stat()
        if opened is None or (st.st_dev, st.st_ino) != opened:
            # Replaced while open (a backup restored under the daemon): the clean close was of
            # another file, this one has never been checked.
            log.warning("%s was replaced while the index was open: the next start checks it", db)
            return
        last_write = max(st.st_mtime_ns, st.st_ctime_ns)
        path = mark_path(db)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, codec.dumps(_mark_of(st)))
            if not _after(fd, last_write):
                return
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("cannot mark %s as closed cleanly (%s): the next start checks it", db, exc)


def _after(fd: int, last_write: int) -> bool:
    """Give the mark a modification time later than `last_write`: file times move by clock
    ticks of a few milliseconds, so the mark waits for the next one (at most ~50 ms)."""
    for _ in range(50):
        if os.fstat(fd).st_mtime_ns > last_write:
            return True
        time.sleep(0.001)
        os.utime(fd)  # now, by the same clock as the file's writes
    return False


def unchanged(db: Path) -> bool:
    """Whether `db` is as the last clean close left it (its pages need no check)."""
    path = mark_path(db)
    try:
        mark = codec.loads(path.read_bytes())
        marked_at = path.stat().st_mtime_ns
        now = _mark_of(db.stat())
    except (OSError, ValueError):  # unreadable, or not JSON
        return False
    if mark != now or _pending(db):
        return False
    # Written in a later tick than the file's last write: a write in the tick of the mark itself
    # would leave the file's times as marked.
    return marked_at > now["mtime_ns"] and marked_at > now["ctime_ns"]


def clear(db: Path) -> None:
    """Forget the mark: the index is about to be written. A mark that cannot be removed (a
    directory in its place, a file the data directory's owner may not delete) must not keep the
    daemon from starting: it cannot vouch for the file this run leaves (every write moves the
    change time it recorded), and a clean stop replaces it or says it cannot."""
    path = mark_path(db)
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("cannot remove %s (%s): the next start checks the index", path, exc)
