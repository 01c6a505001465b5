"""Writing and reading conversation bundles (the format: domain/bundle.py).

Export reads the conversation directories as they are on disk; a journal is cut at its last
complete line, so a bundle made while a turn runs holds only whole records. Member data is copied
file to file by the kernel while worker threads hash it.

Import never writes into `conversations/` before everything was checked: members are copied into
a private staging directory in the data directory (regular files only, created exclusively,
fsynced, checked against the manifest's sizes and checksums, computed alongside the copy), every
journal line must look like a record, each conversation's first metadata record must create it in
a format known here, and only then are the directories renamed into place. Any refusal removes
the staging directory. The journals are parsed and folded for the index behind the answer
(`read_imported`, run by the index writer; every read of the index waits for it): a line the
journal reader cannot use is skipped there, as everywhere a line damaged on disk is.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import tarfile
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from openvaala_server.domain import bundle as b
from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import is_valid_id, new_id
from openvaala_server.protocol import codec
from openvaala_server.store import bundle_copy as copying
from openvaala_server.store import bundle_trust as trust
from openvaala_server.store import index as ix
from openvaala_server.store import journal
from openvaala_server.store.paths import IMPORT_STAGING_PREFIX, METADATA_FILE, DataDir
from openvaala_server.store.reindex import read_meta


class ImportConflict(Exception):
    def __init__(self, ids: list[str]) -> None:
        super().__init__(
            f"{len(ids)} conversation(s) of this bundle already exist here: keep both (the "
            "imported ones get new ids) or skip them"
        )
        self.ids = ids


@dataclass
class ImportResult:
    conversation_id: str | None  # the exported conversation as it is here (None: skipped)
    imported: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # bundle id → new id (keep both)
    # `approval_granted` records dropped: an import trusts no grant (store/bundle_trust.py).
    grants_dropped: int = 0
    # Agent names replaced by the importer's `agent_for` (store/bundle_trust.screen).
    agents_reset: int = 0
    # How the index reads each imported conversation (`read_imported`), which it does behind
    # the answer: every read of the index waits for it.
    index: dict[str, Callable[[], tuple[m.ConversationMeta, ix.ItemStats] | None]] = field(
        default_factory=dict
    )


# -- export -----------------------------------------------------------------------------------


def _first_record(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        line = f.readline()
    value = codec.parse(line)
    if not isinstance(value, dict):
        raise ValueError(f"{path}: the first record is not an object")
    return value


def _files_of(directory: Path) -> list[tuple[str, Path, int]]:
    """(relative path, path, size to copy) of every regular file worth bundling, sorted."""
    found: list[tuple[str, Path, int]] = []
    for dirpath, dirs, files in os.walk(directory):  # never follows symlinks to directories
        dirs.sort()
        for name in sorted(files):
            path = Path(dirpath) / name
            rel = path.relative_to(directory).as_posix()
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or b.excluded(rel):
                continue
            size = st.st_size
            if name.endswith(".jsonl"):
                size = _complete_length(path, size)
            found.append((rel, path, size))
    return found


def _complete_length(path: Path, size: int) -> int:
    """The length up to the last newline: an append in progress is left out."""
    with open(path, "rb") as f:
        pos = size
        while pos > 0:
            start = max(0, pos - 65536)
            f.seek(start)
            block = f.read(pos - start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                return start + nl + 1
            pos = start
    return 0


def conversations_to_export(data_dir: DataDir, cid: str) -> tuple[list[str], list[str]]:
    """The conversation and its ancestors present here, and the ancestors missing here."""
    order: list[str] = []
    missing: list[str] = []
    todo = [cid]
    while todo:
        current = todo.pop(0)
        if current in order or current in missing:
            continue
        meta_path = data_dir.metadata_file(current)
        if not meta_path.is_file():
            missing.append(current)
            continue
        order.append(current)
        todo.extend(b.ancestors_of(_first_record(meta_path)))
    return order, missing


def export_bundle(data_dir: DataDir, cid: str, out: IO[bytes]) -> tuple[b.Manifest, list[str]]:
    """Write the bundle of `cid` to `out`, a real file (it has a descriptor and can seek); the
    manifest, and the ancestors that are not here.

    The tar is written as `tarfile` writes it (PAX headers, 512-byte blocks, two zero blocks and
    zeros up to a 10 KiB record), but by hand, so that member data goes from file to file in the
    kernel (`sendfile`) while worker threads checksum the same files (zlib lets go of the GIL):
    the copy and the checksums overlap instead of following each other. The manifest comes first
    and needs every checksum: it is written with placeholders of the same length, and written
    again in place once the checksums are known."""
    ids, missing = conversations_to_export(data_dir, cid)
    plan: list[tuple[str, list[tuple[str, Path, int]]]] = []
    entries: list[b.ConversationEntry] = []
    for index, conv_id in enumerate(ids):
        directory = data_dir.conversation_dir(conv_id)
        files = _files_of(directory)
        entries.append(
            {
                "conversationId": conv_id,
                "title": str(_first_record(directory / METADATA_FILE).get("title") or ""),
                "role": "exported" if index == 0 else "ancestor",
                "files": [{"path": rel, "size": n, "crc32": _UNKNOWN} for rel, _p, n in files],
            }
        )
        plan.append((conv_id, files))
    manifest: b.Manifest = {
        "format": b.FORMAT,
        "version": b.VERSION,
        "conversationId": cid,
        "exportedAt": r.utc_now(),
        "conversations": entries,
    }
    out.flush()
    # A descriptor of our own: if `out` is closed while this runs (its caller gone), this never
    # writes into whatever file was given the old descriptor's number next.
    fd = os.dup(out.fileno())
    try:
        _write_tar(fd, manifest, plan)
    finally:
        os.close(fd)
    out.seek(0, os.SEEK_END)  # the file object's position, for its caller
    return manifest, missing


def _write_tar(
    fd: int, manifest: b.Manifest, plan: list[tuple[str, list[tuple[str, Path, int]]]]
) -> None:
    entries = manifest["conversations"]
    mtime = int(time.time())
    placeholder = codec.dumps(manifest, indent=True)
    journal.write_all(fd, copying.tar_header(b.MANIFEST, len(placeholder), mtime))
    manifest_at = os.lseek(fd, 0, os.SEEK_CUR)
    journal.write_all(fd, placeholder + copying.tar_padding(len(placeholder)))
    digests: list[str | None] = []
    # Members whose checksum is still being computed, each with its open file: at most
    # `_IN_FLIGHT`, so that a snapshot store of thousands of objects never holds thousands of
    # descriptors (1,024 is a common limit).
    pending: deque[tuple[Future[str | None], int]] = deque()
    try:
        with copying.Tasks() as pool:
            for conv_id, files in plan:
                for rel, path, size in files:
                    src = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                    try:
                        done = pool.submit(copying.checksum_of, "crc32", src, 0, size)
                    except BaseException:
                        os.close(src)
                        raise
                    pending.append((done, src))
                    header = copying.tar_header(f"{b.PREFIX}{conv_id}/{rel}", size, mtime)
                    journal.write_all(fd, header)
                    # A journal grown since it was listed is cut where its checksum is taken.
                    if copying.copy_range(src, 0, size, fd) != size:
                        raise OSError(f"{path} shrank while it was exported")
                    journal.write_all(fd, copying.tar_padding(size))
                    while len(pending) > _IN_FLIGHT:
                        digests.append(_settled(pending.popleft()))
            while pending:
                digests.append(_settled(pending.popleft()))
    finally:
        for _done, src in pending:  # after an error, once `Tasks` waited for every checksum
            os.close(src)
    hashed = iter(digests)
    for entry in entries:
        for f in entry["files"]:
            digest = next(hashed)
            if digest is None:
                raise OSError(f"{f['path']} shrank while it was exported")
            f["crc32"] = digest
    data = codec.dumps(manifest, indent=True)
    if len(data) != len(placeholder):  # the digests are as long as their placeholders
        raise ValueError("the manifest changed length while it was written")
    os.pwrite(fd, data, manifest_at)
    end = os.lseek(fd, 0, os.SEEK_CUR) + 2 * tarfile.BLOCKSIZE
    journal.write_all(fd, bytes(2 * tarfile.BLOCKSIZE + -end % tarfile.RECORDSIZE))


_UNKNOWN = "0" * 8  # a checksum not computed yet: as long as a CRC-32 in hex
_IN_FLIGHT = 64


def _settled(pending: tuple[Future[str | None], int]) -> str | None:
    """The checksum of a member once computed; its file closed either way."""
    done, src = pending
    try:
        return done.result()
    finally:
        os.close(src)


# -- import -----------------------------------------------------------------------------------


def import_bundle(
    data_dir: DataDir,
    source: IO[bytes],
    *,
    exists: Callable[[str], bool],
    on_conflict: str = "ask",
    cwd: str | None = None,
    agent_for: Callable[[str], str] | None = None,
) -> ImportResult:
    """Check the whole bundle, then move its conversations into place. Raises `BundleError`
    (nothing written) or `ImportConflict` (nothing written; ask, then call again).

    What the index needs of the session journals (counts, searchable text) is not read here:
    `ImportResult.index` says how to count it, which the index does behind the answer."""
    staging = data_dir.root / f"{IMPORT_STAGING_PREFIX}{new_id()}"
    staging.mkdir(mode=0o700)
    try:
        readable = _seekable(source, staging)
        try:
            manifest = _unpack(readable, staging)
        finally:
            if readable is not source:
                readable.close()
        result = _commit(data_dir, staging, manifest, exists, on_conflict, cwd, agent_for)
        for entry in manifest["conversations"]:
            cid = entry["conversationId"]
            if cid in result.skipped:
                continue
            here = result.renamed.get(cid, cid)
            journals = {f["path"]: f["size"] for f in entry["files"] if _is_session(f["path"])}
            result.index[here] = functools.partial(
                read_imported, data_dir.conversation_dir(here), journals
            )
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def read_imported(
    directory: Path, journals: dict[str, int]
) -> tuple[m.ConversationMeta, ix.ItemStats] | None:
    """What the index takes from an imported conversation, read as `reindex` reads it (a line
    the journal reader cannot use is skipped): its metadata folded, and its session journals
    counted as far as the bundle brought them (an append since then is indexed by its own
    write; a metadata record appended since is an upsert of the same rows). None if the
    conversation is gone (deleted right after its import)."""
    try:
        meta, _read = read_meta(directory / METADATA_FILE)
        stats = ix.ItemStats()
        for name, size in sorted(journals.items()):
            with open(directory / name, "rb") as f:
                stats.add(journal.parse_journal(f.read(size)).records)
    except FileNotFoundError:
        return None
    return meta, stats


def _is_session(rel: str) -> bool:
    return rel.endswith(".jsonl") and is_valid_id(rel.removesuffix(".jsonl"))


def _seekable(source: IO[bytes], staging: Path) -> IO[bytes]:
    """`source` itself if it is a file that can seek (a path, an upload spooled to a file),
    else a copy of it in the staging directory: members are copied from their offsets."""
    try:
        if source.seekable():
            source.fileno()
            return source
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        pass
    copy = open(staging / ".bundle", "w+b")  # noqa: SIM115 - closed by the caller
    try:
        size = 0
        while chunk := source.read(copying.CHUNK):
            size += len(chunk)
            if size > b.MAX_TOTAL_BYTES + b.MAX_MANIFEST_BYTES:
                raise b.BundleError(f"the bundle holds more than {b.MAX_TOTAL_BYTES} bytes")
            copy.write(chunk)
        copy.seek(0)
    except BaseException:
        copy.close()
        raise
    return copy


@dataclass
class _Staged:
    """A member being unpacked by a worker thread, and what the manifest says of it."""

    name: str
    want: b.FileEntry
    copied: Future[None]  # copied to the staging directory and fsynced
    digest: Future[str | None]  # its checksum (None: the bundle ends first)
    lines: copying.JournalLines | None  # a journal's lines, checked as they are hashed
    metadata_of: str | None  # the conversation whose metadata.jsonl this is


def _unpack(source: IO[bytes], staging: Path) -> b.Manifest:
    """Unpack and check every member into `staging`; the manifest. Member data goes from the
    bundle to the staged file in worker threads (pread, hash, write, fsync: without the GIL
    but for the check of a journal's lines), while this thread reads the next headers."""
    try:
        tar = tarfile.open(fileobj=source, mode="r:")  # noqa: SIM115 - closed below
    except (tarfile.TarError, EOFError, OSError, ValueError, UnicodeError) as exc:
        raise b.BundleError(f"not a bundle (not a tar archive): {exc}") from None
    # The workers read a descriptor of our own, closed once they are done.
    fd = os.dup(source.fileno())
    try:
        with tar, copying.Tasks() as pool:
            manifest, first_lines = _stage_members(tar, fd, staging, pool)
    finally:
        os.close(fd)
    for entry in manifest["conversations"]:
        cid = entry["conversationId"]
        if cid not in first_lines:
            raise b.BundleError(f"conversation {cid} has no metadata.jsonl")
        _check_created(first_lines[cid], cid)
    for entry in manifest["conversations"]:
        (staging / entry["conversationId"]).mkdir(mode=0o700, exist_ok=True)
    # Each conversation's directories hold the new files' entries; `staging` itself only the
    # conversation directories, which `_commit` moves out (and syncs `conversations/`).
    for entry in manifest["conversations"]:
        for dirpath, _dirs, _files in os.walk(staging / entry["conversationId"]):
            journal.fsync_dir(Path(dirpath))
    return manifest


def _stage_members(
    tar: tarfile.TarFile, fd: int, staging: Path, pool: copying.Tasks
) -> tuple[b.Manifest, dict[str, bytes]]:
    """The manifest, and the first line of each conversation's metadata.jsonl, once every
    member is staged and checked. At most `_IN_FLIGHT` members are being staged at a time (the
    oldest is checked before another starts), so a bundle of many small files holds a bounded
    number of tasks, and damage is refused as soon as it is found."""
    manifest: b.Manifest | None = None
    expected: dict[tuple[str, str], b.FileEntry] = {}
    seen: set[tuple[str, str]] = set()
    window: deque[_Staged] = deque()
    first_lines: dict[str, bytes] = {}
    total = 0
    try:
        for count, member in enumerate(tar, start=1):
            if count > b.MAX_MEMBERS:
                raise b.BundleError(f"more than {b.MAX_MEMBERS} members")
            name = member.name
            if member.isdir() and manifest is not None:
                b.split_member(name.rstrip("/") + "/x")  # checked, then nothing to write
                continue
            # A sparse member passes isreg() but its size is the expanded one, not what follows
            # its header; CONTTYPE and other types tarfile reads as files are not ours either.
            if member.type not in _FILE_TYPES or member.issparse():
                raise b.BundleError(
                    f"member {name[:200]!r} is a {_kind(member)}: only regular files are allowed"
                )
            if member.size > b.MAX_MEMBER_BYTES:
                raise b.BundleError(
                    f"member {name[:200]!r} is {member.size} bytes, over the limit of "
                    f"{b.MAX_MEMBER_BYTES}"
                )
            total += member.size
            if total > b.MAX_TOTAL_BYTES:
                raise b.BundleError(f"the bundle holds more than {b.MAX_TOTAL_BYTES} bytes")
            if manifest is None:
                if name != b.MANIFEST or member.size > b.MAX_MANIFEST_BYTES:
                    raise b.BundleError("not a bundle: the first member is not manifest.json")
                manifest = _read_manifest(fd, member)
                for entry in manifest["conversations"]:
                    for f in entry["files"]:
                        expected[(entry["conversationId"], f["path"])] = f
                continue
            cid, rel = b.split_member(name)
            want = expected.get((cid, rel))
            if want is None:
                raise b.BundleError(f"member {name[:200]!r} is not in the manifest")
            if (cid, rel) in seen:
                raise b.BundleError(f"member {name[:200]!r} appears twice")
            seen.add((cid, rel))
            if member.size != want["size"]:
                raise b.BundleError(f"member {name[:200]!r} does not have the manifest's size")
            if not b.kept(rel):
                if rel.startswith(b.GIT_FILES):  # the snapshot store writes its own
                    continue
                raise b.BundleError(
                    f"member {name[:200]!r} is not a file OpenVaala keeps in a conversation "
                    "(journals, attachments/, checkpoints/objects/)"
                )
            target = staging / cid / rel
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            lines = copying.JournalLines() if rel.endswith(".jsonl") else None
            kind, _digits = b.checksum(want)
            digest = pool.submit(
                copying.checksum_of, kind, fd, member.offset_data, member.size, lines
            )
            copied = pool.submit(_stage, fd, member.offset_data, member.size, target)
            of = cid if rel == METADATA_FILE else None
            window.append(_Staged(name, want, copied, digest, lines, of))
            while len(window) > _IN_FLIGHT:
                _finished(window.popleft(), first_lines)
    except (tarfile.TarError, EOFError, ValueError, UnicodeError) as exc:
        if isinstance(exc, b.BundleError):
            raise
        raise b.BundleError(f"the bundle is damaged or truncated: {exc}") from None
    if manifest is None:
        raise b.BundleError("not a bundle: it is empty")
    while window:
        _finished(window.popleft(), first_lines)
    absent = set(expected) - seen
    if absent:
        cid, rel = sorted(absent)[0]
        raise b.BundleError(f"the bundle lacks {b.PREFIX}{cid}/{rel}, which its manifest lists")
    return manifest, first_lines


def _read_manifest(fd: int, member: tarfile.TarInfo) -> b.Manifest:
    raw = os.pread(fd, member.size, member.offset_data)
    if len(raw) != member.size:
        raise b.BundleError("the bundle is damaged or truncated: manifest.json is cut")
    try:
        return b.parse_manifest(codec.parse(raw))
    except codec.JSONDecodeError as exc:
        raise b.BundleError(f"manifest.json is not JSON: {exc}") from None


def _finished(member: _Staged, first_lines: dict[str, bytes]) -> None:
    """Wait for a staged member and check it (keeping a metadata.jsonl's first line).
    BundleError if it is damaged."""
    digest = member.digest.result()
    member.copied.result()
    if digest is None:
        raise b.BundleError(f"the bundle is damaged or truncated: {member.name[:200]!r} is cut")
    if digest != b.checksum(member.want)[1]:
        raise b.BundleError(f"member {member.name[:200]!r} is damaged (checksum differs)")
    if member.lines is None:
        return
    line = member.lines.odd_line()
    if line is not None:
        raise b.BundleError(
            f"{member.name[len(b.PREFIX) :][:200]}:{line}: not a journal record (one JSON "
            "object a line)"
        )
    if member.metadata_of is not None:
        first_lines[member.metadata_of] = bytes(member.lines.first)


_FILE_TYPES: frozenset[bytes] = frozenset({tarfile.REGTYPE, tarfile.AREGTYPE})


def _stage(src: int, offset: int, size: int, target: Path) -> None:
    """Copy `size` bytes at `offset` of the bundle into a new file at `target`, durably (a
    worker hashes the same bytes meanwhile)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        if copying.copy_range(src, offset, size, fd) == size:
            os.fsync(fd)  # durable before its directory is moved into place
    finally:
        os.close(fd)


def _kind(member: tarfile.TarInfo) -> str:
    if member.issparse():
        return "sparse file"
    if member.issym():
        return "symlink"
    if member.islnk():
        return "hard link"
    if member.isdev() or member.isfifo():
        return "device"
    if member.isdir():
        return "directory"
    return "special file"


def _check_created(line: bytes, cid: str) -> None:
    """The first record of metadata.jsonl creates this conversation, in a format known here,
    and is one the journal reader accepts (integer `seq`, string `type`): a creation record it
    would skip (`"seq": "1"`) was imported, never listed, could not be opened and made every
    later import of it a conflict. With its creation record readable the store can open the
    conversation (the fold skips a later record it cannot apply). The rest of the file is
    folded behind the answer (`read_imported`): folding a 1.7 MB metadata.jsonl (10,000 items)
    costs ~18 ms, more than the fsync'd copy of the whole conversation."""
    record = journal.parse_line(line)
    if isinstance(record, str):
        raise b.BundleError(f"conversation {cid}: metadata.jsonl: the first record: {record}")
    if record.get("conversationId") != cid:
        raise b.BundleError(f"conversation {cid}: metadata.jsonl does not describe it")
    try:
        m.created_from(record)  # also refuses a newer format, saying so
    except m.MetaError as exc:
        raise b.BundleError(f"conversation {cid}: {exc}") from None


def _commit(
    data_dir: DataDir,
    staging: Path,
    manifest: b.Manifest,
    exists: Callable[[str], bool],
    on_conflict: str,
    cwd: str | None,
    agent_for: Callable[[str], str] | None,
) -> ImportResult:
    ids = [e["conversationId"] for e in manifest["conversations"]]
    clashes = [cid for cid in ids if exists(cid)]
    if clashes and on_conflict == "ask":
        raise ImportConflict(clashes)
    renamed: dict[str, str] = {}
    skipped: list[str] = []
    if on_conflict == "keep-both":
        renamed = {cid: new_id() for cid in clashes}
    else:
        skipped = clashes
    result = ImportResult(conversation_id=None, skipped=skipped, renamed=renamed)
    moving = [cid for cid in ids if cid not in skipped]
    for cid in moving:  # all rewritten before the first moves: no half import
        screened = trust.screen(staging / cid / METADATA_FILE, agent_for)
        result.grants_dropped += screened.grants_dropped
        result.agents_reset += screened.agents_reset
        if renamed or cwd is not None:
            _rewrite_meta(staging / cid / METADATA_FILE, renamed, cwd)
            journal.fsync_dir(staging / cid)
        trust.make_private(staging / cid)
    for cid in moving:
        os.rename(staging / cid, data_dir.conversation_dir(renamed.get(cid, cid)))
        result.imported.append(renamed.get(cid, cid))
    # Emptied first, so that its removal goes to the disk with the renames' commit rather than
    # wait for that commit to end.
    shutil.rmtree(staging, ignore_errors=True)
    journal.fsync_dir(data_dir.conversations_dir)
    main = manifest["conversationId"]
    result.conversation_id = renamed.get(main, main)
    return result


def _rewrite_meta(path: Path, renamed: dict[str, str], cwd: str | None) -> None:
    """New ids in the creation record (keep both), and the new working directory appended as a
    `conversation_cwd_set` record (--cwd), before the directory is moved into place."""
    data = path.read_bytes()
    first, _, rest = data.partition(b"\n")
    record = codec.parse(first)
    if renamed:
        record = b.remap_created(record, renamed)
    lines = [codec.dumps(record), rest.rstrip(b"\n")] if rest.strip() else [codec.dumps(record)]
    if cwd is not None:
        last_seq = journal.parse_journal(data).last_seq  # lines were shape-checked, not parsed
        lines.append(
            codec.dumps(
                {"seq": last_seq + 1, "ts": r.utc_now(), "type": r.CONVERSATION_CWD_SET, "cwd": cwd}
            )
        )
    tmp = path.with_name(".tmp-" + path.name)
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
