"""The snapshot store of one conversation: a private git object store in its directory.

`<conversation>/checkpoints/` is a bare git repository that only OpenVaala uses, with the
conversation's working directory as its work tree for the duration of one command
(`git --git-dir=… --work-tree=…`). Nothing is ever written to the user's own repository, no commit
is ever made, no ref is kept: the blob ids live in `checkpoints.jsonl` (docs/storage.md).

Files a tool names (write_file, edit_file, apply_patch) are hashed and stored here in Python, as
git loose objects (no process to start). A `shell` call, which may change anything, is bracketed by
a snapshot of the whole tree (`git add -A` into the private index, which keeps stat data so only
changed files are read again, then `git write-tree`) and, after it, a second `git add -A` compared
with that tree (`git diff-index`). The user's `.gitignore` files apply, as they do for git itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import shutil
import stat
import tempfile
import threading
import zlib
from pathlib import Path
from typing import Final

from openvaala_server.domain.checkpoints import (
    EXEC_MODE,
    FILE_MODE,
    LINK_MODE,
    MODES,
    Blob,
    State,
    is_safe_relpath,
)
from openvaala_server.domain.permissions import repository_part
from openvaala_server.store.survey import Limits, count_tree, too_large
from openvaala_server.store.tree_watch import Changed, TreeWatch

GIT_DIR_NAME: Final = "checkpoints"
_UNBORN: Final = re.compile(r"error: '(.+?)/?' does not have a commit checked out")
JOURNAL_NAME: Final = "checkpoints.jsonl"


class SnapshotError(Exception):
    """A snapshot could not be taken (git failed, timed out, or the file is too large)."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail  # git's whole error output, when git failed


class TooLarge(SnapshotError):
    """A file larger than `max_file_bytes` was to be stored: it is recorded as skipped."""


class SnapshotTimeout(SnapshotError):
    """A whole-tree snapshot took longer than its limit: the directory is too large for it."""


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _hash_file(path: Path) -> str:
    """`blob_sha` of a file's content, read in pieces (it may be large). The header names the
    size, so a file that changes size while read is read again (a few times at most)."""
    for _attempt in range(3):
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            digest = hashlib.sha1(b"blob %d\0" % size, usedforsecurity=False)
            read = 0
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                read += len(chunk)
        if read == size:
            return digest.hexdigest()
    raise SnapshotError(f"{path.name} kept changing while it was read")


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _git_env() -> dict[str, str]:
    # Hermetic: no GIT_DIR/GIT_INDEX_FILE of the daemon's environment, no user or system config
    # (hooks, fsmonitor, filters): this repository is ours alone.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C")
    return env


_HEAD: Final = "ref: refs/heads/main\n"
# sharedRepository = 0600: git writes its objects and index for the owner only, as every other
# file of the data directory is (docs/security.md).
_CONFIG: Final = (
    "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tautocrlf = false\n"
    "\tfilemode = true\n\tsymlinks = true\n\tuntrackedCache = true\n"
    "\tsharedRepository = 0600\n[gc]\n\tauto = 0\n"
)
# What the repository may hold: what `ensure` writes, the loose objects and the private index
# (its stat cache); and locks (`*.lock`, git's and ours), which git never reads as settings.
_KEPT: Final = frozenset({"objects", "refs", "index", "HEAD", "config"})
# Loose objects' folders, and git's packs: `git add` streams a file over core.bigFileThreshold
# (512 MiB) into a pack. Never imported (domain/bundle.kept), so only git writes them here.
_OBJECTS: Final = re.compile(r"[0-9a-f]{2}|pack")
# Passed on every git command line, over anything a config file says (defence in depth: the
# config is ours, see `ensure`): no hooks, no fsmonitor command, no attributes file, no
# alternate object stores.
_GIT_OPTIONS: Final = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    f"core.attributesFile={os.devnull}",
    "-c",
    "core.sshCommand=false",
    "-c",
    "protocol.allow=never",
)
# The header of a loose object ("blob <size>\0") is at most this long.
_HEADER_BYTES: Final = 32
# How far a stored object is inflated when read back: at least `max_file_bytes` (what the file
# tools capture), and files a whole-tree snapshot (`git add -A`) stored whatever their size up to
# this — a restore puts them back. Bounded, because an object in an imported bundle could be a
# zlib bomb that inflates a thousandfold.
RESTORE_LIMIT_BYTES = 256 * 1024 * 1024


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


class SnapshotStore:
    def __init__(
        self,
        conversation_dir: Path,
        work_tree: Path,
        *,
        excludes: tuple[str, ...] = (),
        max_file_bytes: int = 10 * 1024 * 1024,
        timeout_s: float = 20.0,
    ) -> None:
        self.git_dir = conversation_dir / GIT_DIR_NAME
        self.work_tree = work_tree
        self.excludes = excludes
        self.max_file_bytes = max_file_bytes
        self._inflate_limit = max(max_file_bytes, RESTORE_LIMIT_BYTES)
        self.timeout_s = timeout_s

    # -- the repository -----------------------------------------------------------------

    def ensure(self) -> None:
        """The folders objects are written into from Python (no git runs: `_own` is for git)."""
        if (self.git_dir / "objects").is_dir():
            return
        self.git_dir.mkdir(mode=0o700, exist_ok=True)
        (self.git_dir / "objects").mkdir(mode=0o700, exist_ok=True)

    def _own(self) -> None:
        """Make the repository ours before git runs on it: `config` and `HEAD` with our own
        content, empty `refs/`, and nothing else git would honour (`info/attributes` naming a
        filter, `hooks/`, `objects/info/alternates` pointing at objects elsewhere, `commondir`,
        `packed-refs`, `shallow`, ...): only the objects and the private index are kept. A
        conversation directory may come from a bundle, and git runs commands its repository
        names (docs/security.md, "Checkpoints and bundles"). Checked before every git command
        (a few system calls, beside a process), rewritten only when it differs, by rename, so a
        git reading it meanwhile sees one or the other."""
        self.git_dir.mkdir(mode=0o700, exist_ok=True)
        with os.scandir(self.git_dir) as found:
            for entry in found:
                if entry.name not in _KEPT and not entry.name.endswith(".lock"):
                    _remove(Path(entry.path))
        objects = self.git_dir / "objects"
        objects.mkdir(mode=0o700, exist_ok=True)
        with os.scandir(objects) as found:
            for entry in found:  # info/ (alternates), ...
                if not (_OBJECTS.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)):
                    _remove(Path(entry.path))
        refs = self.git_dir / "refs"  # we keep no ref
        if refs.is_symlink() or not refs.is_dir() or os.listdir(refs):
            _remove(refs)
            refs.mkdir(mode=0o700)
        for name, text in (("HEAD", _HEAD), ("config", _CONFIG)):
            path = self.git_dir / name
            try:
                same = not path.is_symlink() and path.read_text() == text
            except (OSError, UnicodeError):
                same = False
            if not same:
                if path.is_dir() and not path.is_symlink():
                    _remove(path)
                tmp = self.git_dir / f"{name}.{secrets.token_hex(4)}.lock"
                _write_private(tmp, text)
                os.replace(tmp, path)

    def size_bytes(self) -> int:
        total = 0
        for dirpath, _dirs, files in os.walk(self.git_dir):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, name)).st_size
        return total

    def _object_path(self, sha: str) -> Path:
        return self.git_dir / "objects" / sha[:2] / sha[2:]

    def _write_object(self, sha: str, data: bytes) -> None:
        path = self._object_path(sha)
        if path.exists():
            return
        path.parent.mkdir(mode=0o700, exist_ok=True)
        packed = zlib.compress(b"blob %d\0" % len(data) + data, 1)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(packed)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    def blob_size(self, sha: str) -> int | None:
        """The size its header gives of a stored object (None: not stored), read without
        inflating the rest."""
        try:
            with open(self._object_path(sha), "rb") as f:
                start = f.read(256)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            header = zlib.decompressobj().decompress(start, _HEADER_BYTES).partition(b"\0")[0]
        except zlib.error:
            raise SnapshotError(f"the snapshot {sha} is damaged") from None
        size = header.partition(b" ")[2]
        if not size.isdigit():
            raise SnapshotError(f"the snapshot {sha} is damaged")
        return int(size)

    def has_blob(self, sha: str) -> bool:
        """Whether the object is stored. SnapshotError if it is, but larger than `read_blob`
        inflates (a file git captured whole): a restore checks every blob before it writes."""
        size = self.blob_size(sha)
        if size is not None and size > self._inflate_limit:
            raise SnapshotError(
                f"the snapshot {sha} is larger than the {self._inflate_limit} bytes a restore "
                "reads back"
            )
        return size is not None

    def too_large(self, rel: str, before: State, after: State) -> bool:
        """Whether a change a whole-tree snapshot found involves a file over `max_file_bytes`
        (git stores any size: the file as it is now, or its stored state before, is looked
        at). Such a change is recorded as skipped (docs/design.md, "Files the checkpoints
        cannot keep")."""
        if before is not None and (self.blob_size(before.sha) or 0) > self.max_file_bytes:
            return True
        if after is None:
            return False
        try:
            st = os.lstat(self._abs(rel))
        except (FileNotFoundError, NotADirectoryError):
            return False
        return stat.S_ISREG(st.st_mode) and st.st_size > self.max_file_bytes

    def read_blob(self, sha: str) -> bytes:
        raw = self._inflate(sha)
        return raw[raw.index(b"\0") + 1 :]

    def _inflate(self, sha: str) -> bytes:
        """A loose object, header and all, inflated no further than `_inflate_limit`: an object
        of a bundle could otherwise inflate a thousandfold."""
        try:
            packed = self._object_path(sha).read_bytes()
        except FileNotFoundError:
            raise SnapshotError(f"the snapshot {sha} is no longer stored") from None
        inflate = zlib.decompressobj()
        try:
            raw = inflate.decompress(packed, self._inflate_limit + _HEADER_BYTES)
        except zlib.error as exc:
            raise SnapshotError(f"the snapshot {sha} is damaged: {exc}") from None
        if inflate.unconsumed_tail:
            raise SnapshotError(
                f"the snapshot {sha} is larger than the {self._inflate_limit} bytes a restore "
                "reads back"
            )
        if not inflate.eof or b"\0" not in raw[:_HEADER_BYTES]:
            raise SnapshotError(f"the snapshot {sha} is damaged")
        return raw

    def gc(self, keep: set[str]) -> None:
        """Remove every object not in `keep`, and the index (its stat cache names objects; the
        next snapshot of the whole tree reads every file again)."""
        objects = self.git_dir / "objects"
        for sub in os.listdir(objects) if objects.is_dir() else ():
            if len(sub) != 2:
                continue
            for name in os.listdir(objects / sub):
                if sub + name not in keep:
                    (objects / sub / name).unlink(missing_ok=True)
        (self.git_dir / "index").unlink(missing_ok=True)

    def remove(self) -> None:
        shutil.rmtree(self.git_dir, ignore_errors=True)

    # -- single files (in a thread) -----------------------------------------------------

    def _abs(self, rel: str) -> Path:
        if not is_safe_relpath(rel):
            raise SnapshotError(f"not a path inside the working directory: {rel!r}")
        return self.work_tree / rel

    def state(self, rel: str, *, store: bool) -> State:
        """The path's content now (None: absent, or not a file or symlink), stored if `store`
        (TooLarge past `max_file_bytes`; a file only hashed, to compare, may be of any size)."""
        path = self._abs(rel)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(st.st_mode):
            data = os.fsencode(os.readlink(path))
            mode = LINK_MODE
        elif stat.S_ISREG(st.st_mode):
            mode = EXEC_MODE if st.st_mode & 0o100 else FILE_MODE  # git looks at the owner's bit
            if st.st_size > self.max_file_bytes:
                if store:
                    raise TooLarge(
                        f"{rel} is larger than the checkpoint limit of {self.max_file_bytes} bytes"
                    )
                return Blob(_hash_file(path), mode)
            data = path.read_bytes()
        else:
            return None
        sha = blob_sha(data)
        if store:
            self._write_object(sha, data)
        return Blob(sha, mode)

    def stored(self, data: bytes, mode: str) -> Blob:
        """Content that is not on disk (a file an editor holds: runtime/file_hosts.py), stored."""
        self.ensure()
        sha = blob_sha(data)
        self._write_object(sha, data)
        return Blob(sha, mode)

    def put_back(self, rel: str, target: State, source: SnapshotStore | None = None) -> None:
        """Make the path hold `target` again (None: remove it), read from `source` (default:
        this store; a fork restoring its parent's turns reads the parent's, never writing
        there). Never through a symlinked directory that leads out of the working directory
        (one may have replaced a folder)."""
        path = self._abs(rel)
        root = self.work_tree.resolve()
        existing = path.parent
        while not existing.exists() and existing != root:
            existing = existing.parent
        if not existing.resolve().is_relative_to(root):
            raise SnapshotError(f"{rel}: its folder now leads outside the working directory")
        if target is not None and (vcs := repository_part(existing.resolve(), root)):
            # A link swapped in for a folder must not lead a restore into .git either.
            raise SnapshotError(f"{rel}: its folder now leads into {vcs}, never restored into")
        if target is None:
            try:
                if not path.is_dir() or path.is_symlink():
                    path.unlink()
            except FileNotFoundError:
                pass
            return
        data = (source or self).read_blob(target.sha)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            path.unlink()
        if target.mode == LINK_MODE:
            os.symlink(os.fsdecode(data), path)
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o755 if target.mode == EXEC_MODE else 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    # -- the whole tree (git) -----------------------------------------------------------

    async def _git(self, *args: str, stdin: bytes | None = None, ok: int = 0) -> bytes:
        """Run git on the private repository; `ok`: a second exit status that is not a
        failure (`add` exits 1 when a path it was named is ignored, having done the rest)."""
        proc = await asyncio.create_subprocess_exec(
            "git",
            *_GIT_OPTIONS,
            f"--git-dir={self.git_dir}",
            f"--work-tree={self.work_tree}",
            *args,
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self.work_tree,
            env=_git_env(),
            umask=0o077,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), self.timeout_s)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise SnapshotTimeout(
                f"a snapshot of {self.work_tree} took longer than {self.timeout_s:g} s"
            ) from None
        except asyncio.CancelledError:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            raise
        if proc.returncode not in (0, ok) or b"fatal:" in err:
            message = err.decode(errors="replace").strip().splitlines()
            raise SnapshotError(
                f"git {args[0]} failed: {message[-1] if message else '?'}",
                err.decode(errors="replace"),
            )
        return out

    async def _add_all(self) -> None:
        # Callers hold the conversation's git lock: an index.lock now is stale (a git killed by
        # an interrupt or a crash) and would fail every later snapshot.
        (self.git_dir / "index.lock").unlink(missing_ok=True)
        # A repository made inside the tree and not committed to yet (`git init`, `cargo new`)
        # makes `git add` fail as a whole: left out, as a nested repository always is.
        unborn: list[str] = []
        while True:
            spec = [".", *(f":(exclude){e}" for e in (*self.excludes, *unborn))]
            try:
                await self._git("add", "-A", "--ignore-errors", "--", *spec)
                return
            except SnapshotTimeout:
                raise
            except SnapshotError as exc:
                found = [p for p in _UNBORN.findall(exc.detail) if p not in unborn]
                if not found or len(unborn) > 100:
                    raise
                unborn += found

    async def _add(self, changed: Changed | None) -> list[str] | None:
        """Bring the private index up to date: for the paths `changed` names (what a file
        watch saw), or, when None, for the whole tree. Returns the pathspec used (None: all).

        git refuses a pathspec that matches nothing in the index or the tree (a file made and
        removed again), so a path that is gone is named only when the index holds it."""
        if changed is None:
            await self._add_all()
            return None
        if not changed:
            return []
        (self.git_dir / "index.lock").unlink(missing_ok=True)
        paths = sorted(changed.paths)
        gone = _missing(self.work_tree, paths)
        if gone:
            listed = await self._git("ls-files", "-z", "--cached", "--", *_literal(gone))
            held = {os.fsdecode(n) for n in listed.split(b"\0") if n}
            kept = {p for p in gone if p in held or any(h.startswith(p + "/") for h in held)}
            paths = [p for p in paths if p not in gone or p in kept]
        if paths:
            spec = [*_literal(paths), *(f":(exclude){e}" for e in self.excludes)]
            await self._git("add", "-A", "--ignore-errors", "--", *spec, ok=1)
        return paths

    async def ignored_dirs(self) -> list[str]:
        """The directories git ignores here (`.gitignore`): a file watch need not look inside."""
        await asyncio.to_thread(self._own)
        spec = [".", *(f":(exclude){e}" for e in self.excludes)]
        out = await self._git(
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
            "--",
            *spec,
        )
        return [os.fsdecode(n).rstrip("/") for n in out.split(b"\0") if n.endswith(b"/")]

    async def survey(self, max_files: int, max_bytes: int) -> str | None:
        """Why the work tree is too large for whole-tree snapshots (more files or bytes than
        allowed, not counting what `.gitignore` leaves out), or None. A walk in a thread
        (store/survey.py) that stops at the first file past a limit, or at `timeout_s`."""
        stop = threading.Event()
        limits = Limits(max_files, max_bytes)
        try:
            async with asyncio.timeout(self.timeout_s):
                count = await asyncio.to_thread(
                    count_tree, self.work_tree, self.excludes, limits, stop
                )
        except TimeoutError:
            return f"listing {self.work_tree} took longer than {self.timeout_s:g} s"
        finally:
            stop.set()  # a walk still under way (past the deadline) ends at its next folder
        return too_large(self.work_tree, count, limits)

    # -- a few known paths, without git (in a thread) -------------------------------------

    def _tree(self, sha: str) -> dict[str, tuple[str, str]]:
        """A tree object's entries: name → (mode, sha). Ours are loose objects (no gc)."""
        raw = self._inflate(sha)
        body = raw[raw.index(b"\0") + 1 :]
        entries: dict[str, tuple[str, str]] = {}
        at = 0
        while at < len(body):
            space = body.index(b" ", at)
            nul = body.index(b"\0", space)
            mode = body[at:space].decode()
            entries[os.fsdecode(body[space + 1 : nul])] = (mode, body[nul + 1 : nul + 21].hex())
            at = nul + 21
        return entries

    def quick_changes(
        self, tree: str, changed: Changed
    ) -> tuple[list[tuple[str, State, State]], list[tuple[str, State]]] | None:
        """What the `changed` files hold now against the snapshot `tree`, hashed from the files
        and compared with the tree's objects without running git: a shell call that edited a
        few files of a large tree costs a few file reads instead of git's index work
        (docs/design.md, "Checkpoints without scanning the tree"). Also the paths that are
        new (not in `tree`): git decides whether it ignores them. None when git must answer
        instead: a folder was created, moved or
        removed, or a path lies in a nested repository or is too large."""
        if changed.dirs:
            return None
        trees: dict[str, dict[str, tuple[str, str]]] = {}

        def entries(folder: str, sha: str) -> dict[str, tuple[str, str]]:
            if folder not in trees:
                trees[folder] = self._tree(sha)
            return trees[folder]

        found: list[tuple[str, State, State]] = []
        new: list[tuple[str, State]] = []
        for rel in sorted(changed.paths):
            before: State = None
            folder, sha, known = "", tree, True
            parts = rel.split("/")
            for depth, part in enumerate(parts):
                entry = entries(folder, sha).get(part)
                if entry is None:
                    known = False
                    break
                mode, sha = entry
                folder = "/".join(parts[: depth + 1])
                if depth == len(parts) - 1:
                    if mode == "40000" or mode not in MODES:
                        return None  # a folder or a nested repository now a file: ask git
                    before = Blob(sha, mode)
                elif mode != "40000":
                    if mode == "160000":
                        return None  # inside a nested repository
                    known = False  # a file then, a folder now
                    break
            try:
                # Hashed, not stored: a restore needs only the `before` blobs, and the next
                # snapshot stores these contents anyway (they are the next turn's `before`).
                after = self.state(rel, store=False)
            except SnapshotError:
                return None
            if not known and after is not None:
                new.append((rel, after))
            elif before != after:
                found.append((rel, before, after))
        return found, new

    async def not_ignored(self, paths: list[str]) -> list[str]:
        """The paths git does not ignore (`.gitignore` files of the tree: `check-ignore`)."""
        if not paths:
            return []
        await asyncio.to_thread(self._own)
        listed = b"".join(p.encode() + b"\0" for p in paths)
        out = await self._git("check-ignore", "-z", "--no-index", "--stdin", stdin=listed, ok=1)
        ignored = {os.fsdecode(n) for n in out.split(b"\0") if n}
        return [p for p in paths if p not in ignored]

    async def snapshot(self, changed: Changed | None = None) -> str:
        """The id of a tree holding every (not ignored) file of the work tree now. `changed`:
        the paths changed since the index was last brought up to date (None: not known)."""
        await asyncio.to_thread(self._own)
        await self._add(changed)
        return (await self._git("write-tree")).decode().strip()

    async def changes_since(
        self, tree: str, changed: Changed | None = None
    ) -> list[tuple[str, State, State]]:
        """(path, before, after) of every file that differs from the snapshot `tree` now: the
        private index is brought up to date (`add -A`; only for the `changed` paths when they
        are known) and compared with `tree` (`diff-index`, for those paths)."""
        await asyncio.to_thread(self._own)
        spec = await self._add(changed)
        if spec == []:
            return []
        out = await self._git(
            "diff-index",
            "--cached",
            "-z",
            "--raw",
            "--no-renames",
            tree,
            *(["--", *_literal(spec)] if spec is not None else []),
        )
        return _parse_raw(out)


async def watched_changes(
    store: SnapshotStore, watch: TreeWatch, tree: str, changed: Changed
) -> list[tuple[str, State, State]]:
    """What differs from the snapshot `tree` now, given the paths a file watch saw change
    (`changed`, just taken; the caller holds the conversation's git lock). Files are read and
    compared with the tree's objects without git (`quick_changes`; git only says which new
    ones it ignores, and the private index takes them at the next snapshot); folders that
    came, went or moved are left to git, for those paths; anything that fails is answered by a
    scan of the whole tree, after which the watch starts again from "not known"."""
    try:
        quick = await asyncio.to_thread(store.quick_changes, tree, changed)
        if quick is not None:
            watch.again(changed)  # for the private index, at the next snapshot
            found, new = quick
            kept = set(await store.not_ignored([rel for rel, _after in new]))
            return found + [(rel, None, after) for rel, after in new if rel in kept]
        return await store.changes_since(tree, changed)
    except SnapshotTimeout:
        watch.forget()
        raise
    except (SnapshotError, OSError):
        watch.forget()
        return await store.changes_since(tree)  # all, to be sure
    except BaseException:  # cancelled: what was taken is not in the index
        watch.forget()
        raise


def _missing(root: Path, paths: list[str]) -> list[str]:
    return [p for p in paths if not os.path.lexists(root / p)]


def _literal(paths: list[str]) -> list[str]:
    """Pathspecs that match these names exactly (a file may be called `*.py` or `:x`)."""
    return [f":(literal){p}" for p in paths]


def _parse_raw(out: bytes) -> list[tuple[str, State, State]]:
    """`--raw -z` output: `:old_mode new_mode old_sha new_sha status NUL path NUL`, repeated."""
    fields = out.split(b"\0")
    changes: list[tuple[str, State, State]] = []
    for i in range(0, len(fields) - 1, 2):
        meta, path = fields[i].decode(), os.fsdecode(fields[i + 1])
        old_mode, new_mode, old_sha, new_sha, _status = meta.lstrip(":").split(" ")
        changes.append((path, _state(old_mode, old_sha), _state(new_mode, new_sha)))
    return changes


def _state(mode: str, sha: str) -> State:
    if mode not in MODES or set(sha) == {"0"}:
        return None  # absent, or a nested repository (160000), which is not ours to restore
    return Blob(sha, mode)
