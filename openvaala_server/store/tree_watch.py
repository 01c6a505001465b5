"""Which paths of a working directory changed since it was last asked: Linux inotify.

A checkpoint of a `shell` call needs to know what the call changed. Asking git to compare the
whole tree with its index (`git add -A`) lstat()s every file: 30-45 ms for 10,000 files on a
quiet machine, many times that under load, on every call. The kernel can say instead: every
directory of the tree is watched, and the paths its events name are all git is asked about
(docs/design.md, "Checkpoints …").

One inotify instance serves the whole daemon (the kernel allows few per user, and other programs
need them): a directory watched for two conversations is watched once. Events are read only when
a conversation asks (`take`), without blocking: the kernel has queued every event of a call that
has returned, so nothing of it can be missing then.

`take` answers None — "scan everything" — whenever it cannot vouch for the answer: the first time
(the watches were only just placed), after the kernel's queue overflowed, once the tree holds more
directories than `max_dirs`, or when the root itself was moved or deleted. What is not watched
never needs to be: `.git` directories, nested repositories (git records them as one entry),
directories git ignores (`ignored`, given at the start; a directory created later is watched
whatever it is, as git's answer is not known yet) and `skip`ped ones (the data directory).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Final, NamedTuple, Protocol

log = logging.getLogger(__name__)

# inotify(7) event bits (the values of <sys/inotify.h>, as inotify_simple.flags has them).
MODIFY: Final = 0x2
ATTRIB: Final = 0x4
CLOSE_WRITE: Final = 0x8
MOVED_FROM: Final = 0x40
MOVED_TO: Final = 0x80
CREATE: Final = 0x100
DELETE: Final = 0x200
DELETE_SELF: Final = 0x400
MOVE_SELF: Final = 0x800
Q_OVERFLOW: Final = 0x4000
IGNORED: Final = 0x8000
ONLYDIR: Final = 0x01000000
DONT_FOLLOW: Final = 0x02000000
EXCL_UNLINK: Final = 0x04000000
ISDIR: Final = 0x40000000
MASK: Final = (
    MODIFY
    | ATTRIB
    | CLOSE_WRITE
    | MOVED_FROM
    | MOVED_TO
    | CREATE
    | DELETE
    | DELETE_SELF
    | MOVE_SELF
    | ONLYDIR
    | DONT_FOLLOW
    | EXCL_UNLINK
)
MAX_DIRS: Final = 10_000


class _Event(NamedTuple):
    wd: int
    mask: int
    cookie: int
    name: str


class _Inotify(Protocol):
    """What is used of `inotify_simple.INotify` (a thin ctypes wrapper, without types)."""

    def add_watch(self, path: str, mask: int) -> int: ...
    def rm_watch(self, wd: int) -> None: ...
    def read(self, timeout: int | None = None) -> list[_Event]: ...
    def close(self) -> None: ...


class Changed:
    """What `take` found: paths (relative, `/`-separated) whose content may differ, and which
    of them are (or were) directories: a directory's whole subtree may differ."""

    def __init__(self, paths: set[str], dirs: set[str]) -> None:
        self.paths = paths
        self.dirs = dirs

    def __bool__(self) -> bool:
        return bool(self.paths)


class TreeWatch:
    """The changes under one root since the last `take` (one conversation's view)."""

    def __init__(
        self,
        root: Path,
        *,
        ignored: Iterable[str] = (),
        skip: Iterable[str] = (),
        max_dirs: int = MAX_DIRS,
    ) -> None:
        self.root = root
        self._prefix = str(root).rstrip("/") + "/"
        self._ignored = frozenset(p.rstrip("/") for p in ignored)
        self._skip = tuple(s.rstrip("/") for s in skip)
        self.max_dirs = max_dirs
        self.id = next(_ids)
        self._wds: set[int] = set()
        self._paths: set[str] = set()
        self._dirs: set[str] = set()
        self._known = False  # False: the next `take` says "scan everything"
        self.broken: str | None = None  # why this watch can no longer answer (then always None)
        self._finalizer = weakref.finalize(self, _HUB.drop, self.id)

    # -- used by the hub (its lock held) ----------------------------------------------------

    def _relative(self, absolute: str) -> str | None:
        if absolute == self._prefix[:-1]:
            return ""
        if not absolute.startswith(self._prefix):
            return None
        return absolute[len(self._prefix) :]

    def _wanted(self, rel: str) -> bool:
        """Whether the directory `rel` (relative to the root) is to be watched."""
        name = rel.rsplit("/", 1)[-1]
        if name == ".git" or rel in self._ignored:
            return False
        if any(rel == s or rel.startswith(s + "/") for s in self._skip):
            return False
        path = os.path.join(self._prefix, rel)
        return not os.path.lexists(os.path.join(path, ".git"))  # a nested repository

    def _note(self, rel: str, is_dir: bool) -> None:
        if self._known:
            self._paths.add(rel)
            if is_dir:
                self._dirs.add(rel)

    def _lose(self, why: str) -> None:
        """Events may have been missed: the next `take` says "scan everything"."""
        self._known = False
        self._paths.clear()
        self._dirs.clear()
        if why:
            log.info("file watch of %s: %s", self.root, why)

    # -- the conversation's side ------------------------------------------------------------

    def start(self) -> bool:
        """Watch every directory of the tree (in a thread: it walks the tree). False when
        inotify is not available or the tree is too large; then `take` always says None."""
        try:
            _HUB.watch_tree(self, "")
        except _TooMany:
            self._fail(f"more than {self.max_dirs} directories")
        except (OSError, ImportError, AttributeError) as exc:  # not Linux; the kernel's limits
            self._fail(f"cannot watch: {exc}")
        return self.broken is None

    def _fail(self, why: str) -> None:
        self.broken = why
        _HUB.drop(self.id)
        log.info("file watch of %s given up: %s", self.root, why)

    def take(self) -> Changed | None:
        """The paths changed since the last call, or None: they are not known, scan all."""
        if self.broken is not None:
            return None
        with _HUB.lock:
            _HUB.drain()
            if self.broken is not None:
                return None
            changed = Changed(self._paths, self._dirs) if self._known else None
            self._paths, self._dirs = set(), set()
            self._known = True
        return changed

    def again(self, changed: Changed) -> None:
        """Paths taken but not given to git yet: the next `take` names them again."""
        with _HUB.lock:
            if self._known:
                self._paths |= changed.paths
                self._dirs |= changed.dirs

    def forget(self) -> None:
        """What was taken last could not be used (the index was dropped, a scan failed): the
        next `take` says "scan everything"."""
        with _HUB.lock:
            self._lose("")

    def close(self) -> None:
        self._finalizer()


class _TooMany(Exception):
    pass


class _Hub:
    """The daemon's one inotify instance and its watch descriptors."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._inotify: _Inotify | None = None
        self._dir_of: dict[int, str] = {}  # wd → absolute directory path
        self._wd_of: dict[str, int] = {}
        self._users: dict[int, set[int]] = {}  # wd → TreeWatch ids
        self._watches: dict[int, weakref.ref[TreeWatch]] = {}

    def _instance(self) -> _Inotify:
        if self._inotify is None:
            from inotify_simple import INotify  # type: ignore[import-untyped]

            inotify: _Inotify = INotify(nonblocking=True)
            self._inotify = inotify
        return self._inotify

    def watch_tree(self, watch: TreeWatch, rel: str) -> None:
        """Watch `rel` (relative to the watch's root) and every wanted directory below it."""
        with self.lock:
            self._watches[watch.id] = weakref.ref(watch)
            inotify = self._instance()
            stack = [rel]
            while stack:
                current = stack.pop()
                absolute = watch._prefix + current if current else watch._prefix[:-1]
                try:
                    wd = inotify.add_watch(absolute, MASK)
                except (FileNotFoundError, NotADirectoryError, PermissionError):
                    continue  # gone already, or not ours to read: its parent's event covers it
                if wd not in watch._wds and len(watch._wds) >= watch.max_dirs:
                    raise _TooMany
                self._dir_of[wd] = absolute
                self._wd_of[absolute] = wd
                self._users.setdefault(wd, set()).add(watch.id)
                watch._wds.add(wd)
                with contextlib.suppress(OSError), os.scandir(absolute) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            child = f"{current}/{entry.name}" if current else entry.name
                            if watch._wanted(child):
                                stack.append(child)

    def drop(self, watch_id: int) -> None:
        with self.lock:
            self._watches.pop(watch_id, None)
            for wd in [wd for wd, users in list(self._users.items()) if watch_id in users]:
                self._release(wd, watch_id)
            if not self._watches and self._inotify is not None:
                # Nothing is watched any more (every conversation released, or the process
                # exiting): the descriptor goes back rather than stay open for the process's
                # life. The next watch opens a new one.
                self._inotify.close()
                self._inotify = None
                self._dir_of.clear()
                self._wd_of.clear()
                self._users.clear()

    def _release(self, wd: int, watch_id: int) -> None:
        users = self._users.get(wd)
        if users is None:
            return
        users.discard(watch_id)
        if users:
            return
        del self._users[wd]
        path = self._dir_of.pop(wd, None)
        if path is not None and self._wd_of.get(path) == wd:
            del self._wd_of[path]
        if self._inotify is not None:
            with contextlib.suppress(OSError):  # already gone with its directory
                self._inotify.rm_watch(wd)

    def _alive(self, ids: Iterable[int]) -> list[TreeWatch]:
        found = []
        for watch_id in list(ids):
            ref = self._watches.get(watch_id)
            watch = ref() if ref is not None else None
            if watch is not None and watch.broken is None:
                found.append(watch)
        return found

    def drain(self) -> None:
        """Read every queued event (without blocking) and note it with each watch concerned."""
        # Looked up again after each batch: an event can make the last watch give up, and
        # `drop` then closes the instance.
        while (inotify := self._inotify) is not None:
            try:
                events = inotify.read(timeout=0)
            except BlockingIOError:
                return
            if not events:
                return
            for event in events:
                if self._inotify is not inotify:  # closed by the event before: the rest is moot
                    return
                self._one(event.wd, event.mask, event.name)

    def _one(self, wd: int, mask: int, name: str) -> None:
        if mask & Q_OVERFLOW:
            for watch in self._alive(self._watches):
                watch._lose("the kernel's event queue overflowed")
            return
        directory = self._dir_of.get(wd)
        if directory is None:
            return
        users = self._alive(self._users.get(wd, ()))
        if mask & IGNORED:  # the directory was deleted (its parent said so) or unwatched
            for watch in users:
                watch._wds.discard(wd)
            self._users.pop(wd, None)
            self._dir_of.pop(wd, None)
            if self._wd_of.get(directory) == wd:
                del self._wd_of[directory]
            return
        if mask & (DELETE_SELF | MOVE_SELF):
            for watch in users:
                if watch._relative(directory) == "":
                    watch._lose("its root was moved or deleted")
                    watch.broken = "the working directory was moved or deleted"
            return  # a subdirectory: its parent's event names it
        absolute = f"{directory}/{name}" if name else directory
        is_dir = bool(mask & ISDIR)
        for watch in users:
            rel = watch._relative(absolute)
            if rel is None or rel == "":
                continue
            if any(rel == s or rel.startswith(s + "/") for s in watch._skip):
                continue
            watch._note(rel, is_dir)
            if not is_dir:
                continue
            if mask & MOVED_FROM:  # its watches now describe another place: drop them
                self._forget_below(watch, absolute)
            elif mask & (CREATE | MOVED_TO) and watch._wanted(rel):
                try:
                    self.watch_tree(watch, rel)
                except _TooMany:
                    watch._fail(f"more than {watch.max_dirs} directories")
                except OSError as exc:
                    watch._fail(f"cannot watch: {exc}")

    def _forget_below(self, watch: TreeWatch, absolute: str) -> None:
        prefix = absolute + "/"
        below = [
            wd
            for wd in watch._wds
            if (p := self._dir_of.get(wd)) is not None and (p == absolute or p.startswith(prefix))
        ]
        for wd in below:
            watch._wds.discard(wd)
            self._release(wd, watch.id)


_ids = itertools.count(1)
_HUB = _Hub()
