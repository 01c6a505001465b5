"""Writing and reading conversation bundles (the format: domain/bundle.py).

Export reads the conversation directories as they are on disk; a journal is cut at its last
complete line, so a bundle made while a turn runs holds only whole records. Import never writes
into `conversations/` before everything was checked: members are unpacked into a private staging
directory in the data directory (regular files only, created exclusively, checked against the
manifest's sizes and SHA-256), every journal is parsed and every conversation folded, and only then
are the directories renamed into place. Any refusal removes the staging directory.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from openvaala_server.domain import bundle as b
from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain.checkpoints import RECORD_TYPES as CHECKPOINT_RECORDS
from openvaala_server.domain.ids import is_valid_id, new_id
from openvaala_server.store import index as ix
from openvaala_server.store import journal
from openvaala_server.store.checkpoints import JOURNAL_NAME
from openvaala_server.store.paths import METADATA_FILE, DataDir

_CHUNK = 1 << 20
_READ_AHEAD = 64 << 10
_IN_MEMORY = 256 << 20  # file contents an export keeps between hashing and archiving


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
    # What the index needs of each imported conversation (folded and counted while checking).
    index: dict[str, tuple[m.ConversationMeta, ix.ItemStats]] = field(default_factory=dict)


# -- export -----------------------------------------------------------------------------------


def _first_record(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        line = f.readline()
    value = orjson.loads(line)
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


def _sha256(path: Path, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        left = size
        while left > 0:
            chunk = f.read(min(_CHUNK, left))
            if not chunk:
                raise OSError(f"{path} shrank while it was exported")
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()


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


def export_bundle(data_dir: DataDir, cid: str, out: IO[bytes]) -> b.Manifest:
    ids, _missing = conversations_to_export(data_dir, cid)
    plan: list[tuple[str, list[tuple[str, Path, int]]]] = []
    entries: list[b.ConversationEntry] = []
    # The manifest (first in the archive) holds every file's checksum: files up to _IN_MEMORY
    # are read once, hashed and kept for the archive; larger ones are read twice.
    held: dict[Path, bytes] = {}
    budget = _IN_MEMORY
    for index, conv_id in enumerate(ids):
        directory = data_dir.conversation_dir(conv_id)
        files = _files_of(directory)
        title = str(_first_record(directory / METADATA_FILE).get("title") or "")
        listed: list[b.FileEntry] = []
        for rel, path, size in files:
            if size <= budget:
                data = _read_exactly(path, size)
                held[path] = data
                budget -= size
                digest = hashlib.sha256(data).hexdigest()
            else:
                digest = _sha256(path, size)
            listed.append({"path": rel, "size": size, "sha256": digest})
        entries.append(
            {
                "conversationId": conv_id,
                "title": title,
                "role": "exported" if index == 0 else "ancestor",
                "files": listed,
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
    now = time.time()
    # Not the stream mode (`w|`): it gathers the blocks into a growing bytes object, which cost
    # more than hashing the whole bundle. `out` is a file (or a spooled one): it can tell().
    with tarfile.TarFile(
        fileobj=out, mode="w", format=tarfile.PAX_FORMAT, copybufsize=_CHUNK
    ) as tar:
        data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2)
        tar.addfile(_info(b.MANIFEST, len(data), now), io.BytesIO(data))
        for conv_id, files in plan:
            for rel, path, size in files:
                info = _info(f"{b.PREFIX}{conv_id}/{rel}", size, now)
                kept = held.pop(path, None)
                if kept is not None:
                    tar.addfile(info, _View(kept))  # type: ignore[arg-type]  # memoryviews
                    continue
                # tarfile copies exactly `size` bytes: a journal grown since is cut where
                # its checksum was taken.
                with open(path, "rb") as f:
                    tar.addfile(info, f)
    return manifest


class _View:
    """Bytes read as a file without copying them (tarfile writes the slices as they are)."""

    def __init__(self, data: bytes) -> None:
        self.view, self.at = memoryview(data), 0

    def read(self, n: int) -> memoryview:
        chunk = self.view[self.at : self.at + n]
        self.at += len(chunk)
        return chunk


def _read_exactly(path: Path, size: int) -> bytes:
    with open(path, "rb") as f:
        data = f.read(size)
    if len(data) != size:
        raise OSError(f"{path} shrank while it was exported")
    return data


def _info(name: str, size: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.type = size, int(mtime), 0o600, tarfile.REGTYPE
    return info


# -- import -----------------------------------------------------------------------------------


def import_bundle(
    data_dir: DataDir,
    source: IO[bytes],
    *,
    exists: Callable[[str], bool],
    on_conflict: str = "ask",
    cwd: str | None = None,
) -> ImportResult:
    """Check the whole bundle, then move its conversations into place. Raises `BundleError`
    (nothing written) or `ImportConflict` (nothing written; ask, then call again)."""
    staging = data_dir.root / f"import-{new_id()}"
    staging.mkdir(mode=0o700)
    try:
        manifest = _unpack(source, staging)
        checked = {
            entry["conversationId"]: _check_conversation(
                staging / entry["conversationId"], entry["conversationId"]
            )
            for entry in manifest["conversations"]
        }
        result = _commit(data_dir, staging, manifest, exists, on_conflict, cwd)
        for cid, (meta, stats) in checked.items():
            if cid in result.skipped:
                continue
            # As `_rewrite_meta` wrote it: new ids, the new working directory.
            meta.conversation_id = result.renamed.get(cid, cid)
            remapped = b.remap_created({"forkedFrom": meta.forked_from}, result.renamed)
            meta.forked_from = remapped["forkedFrom"]
            if cwd is not None:
                meta.cwd = cwd
            result.index[meta.conversation_id] = (meta, stats)
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _unpack(source: IO[bytes], staging: Path) -> b.Manifest:
    try:
        # Read ahead in 64 KiB: the stream mode's default (10 KiB) costs a call per block.
        tar = tarfile.open(fileobj=source, mode="r|", bufsize=_READ_AHEAD)  # noqa: SIM115
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise b.BundleError(f"not a bundle (not a tar archive): {exc}") from None
    manifest: b.Manifest | None = None
    expected: dict[tuple[str, str], b.FileEntry] = {}
    seen: set[tuple[str, str]] = set()
    total = 0
    try:
        for count, member in enumerate(tar):
            if count > b.MAX_MEMBERS:
                raise b.BundleError(f"more than {b.MAX_MEMBERS} members")
            name = member.name
            if member.isdir() and manifest is not None:
                b.split_member(name.rstrip("/") + "/x")  # checked, then nothing to write
                continue
            if not member.isreg():
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
                raw = _read(tar, member)
                try:
                    manifest = b.parse_manifest(orjson.loads(raw))
                except orjson.JSONDecodeError as exc:
                    raise b.BundleError(f"manifest.json is not JSON: {exc}") from None
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
            digest = _extract(tar, member, staging / cid / rel)
            if digest != want["sha256"]:
                raise b.BundleError(f"member {name[:200]!r} is damaged (checksum differs)")
    except (tarfile.TarError, EOFError) as exc:
        raise b.BundleError(f"the bundle is damaged or truncated: {exc}") from None
    finally:
        tar.close()
    if manifest is None:
        raise b.BundleError("not a bundle: it is empty")
    absent = set(expected) - seen
    if absent:
        cid, rel = sorted(absent)[0]
        raise b.BundleError(f"the bundle lacks {b.PREFIX}{cid}/{rel}, which its manifest lists")
    for entry in manifest["conversations"]:
        (staging / entry["conversationId"]).mkdir(mode=0o700, exist_ok=True)
    for dirpath, _dirs, _files in os.walk(staging):
        journal.fsync_dir(Path(dirpath))
    return manifest


def _kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "symlink"
    if member.islnk():
        return "hard link"
    if member.isdev() or member.isfifo():
        return "device"
    if member.isdir():
        return "directory"
    return "special file"


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    f = tar.extractfile(member)
    if f is None:
        raise b.BundleError(f"member {member.name[:200]!r} cannot be read")
    data = f.read()
    if len(data) != member.size:
        raise b.BundleError(f"member {member.name[:200]!r} is truncated")
    return data


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> str:
    f = tar.extractfile(member)
    if f is None:
        raise b.BundleError(f"member {member.name[:200]!r} cannot be read")
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            out.write(chunk)
            written += len(chunk)
        out.flush()
        os.fsync(out.fileno())  # durable before its directory is moved into place
    if written != member.size:
        raise b.BundleError(f"member {member.name[:200]!r} is truncated")
    return digest.hexdigest()


def _check_journal(path: Path, known: frozenset[str]) -> list[r.Record]:
    read = journal.read_journal(path, known)
    for problem in read.problems:
        if problem.kind != journal.UNKNOWN_TYPE:  # a newer record type is kept, as on disk
            where = f"{path.parent.name}/{path.name}:{problem.line_no}"
            raise b.BundleError(f"{where}: {problem.kind}: {problem.detail}")
    return read.records


def _check_conversation(directory: Path, cid: str) -> tuple[m.ConversationMeta, ix.ItemStats]:
    meta_path = directory / METADATA_FILE
    if not meta_path.is_file():
        raise b.BundleError(f"conversation {cid} has no metadata.jsonl")
    records = _check_journal(meta_path, journal.KNOWN_TYPES)
    if not records or records[0].get("conversationId") != cid:
        raise b.BundleError(f"conversation {cid}: metadata.jsonl does not describe it")
    try:
        meta, _skipped = ix.fold_conversation(records)
    except m.MetaError as exc:
        raise b.BundleError(f"conversation {cid}: {exc}") from None
    stats = ix.ItemStats()
    for path in sorted(directory.iterdir()):
        if path.name.endswith(".jsonl") and is_valid_id(path.name.removesuffix(".jsonl")):
            stats.add(_check_journal(path, journal.KNOWN_TYPES))
        elif path.name == JOURNAL_NAME:
            _check_journal(path, CHECKPOINT_RECORDS)
    return meta, stats


def _commit(
    data_dir: DataDir,
    staging: Path,
    manifest: b.Manifest,
    exists: Callable[[str], bool],
    on_conflict: str,
    cwd: str | None,
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
    for cid in ids:
        if cid in skipped:
            continue
        directory = staging / cid
        _rewrite_meta(directory / METADATA_FILE, renamed, cwd)
        target = data_dir.conversation_dir(renamed.get(cid, cid))
        os.rename(directory, target)
        result.imported.append(renamed.get(cid, cid))
    journal.fsync_dir(data_dir.conversations_dir)
    main = manifest["conversationId"]
    result.conversation_id = renamed.get(main, main)
    return result


def _rewrite_meta(path: Path, renamed: dict[str, str], cwd: str | None) -> None:
    """New ids in the creation record (keep both), and the new working directory appended as a
    `conversation_cwd_set` record (--cwd), before the directory is moved into place."""
    data = path.read_bytes()
    first, _, rest = data.partition(b"\n")
    record = orjson.loads(first)
    if renamed:
        record = b.remap_created(record, renamed)
    lines = [orjson.dumps(record), rest.rstrip(b"\n")] if rest.strip() else [orjson.dumps(record)]
    if cwd is not None:
        last_seq = orjson.loads(lines[-1].rsplit(b"\n", 1)[-1])["seq"]
        lines.append(
            orjson.dumps(
                {"seq": last_seq + 1, "ts": r.utc_now(), "type": r.CONVERSATION_CWD_SET, "cwd": cwd}
            )
        )
    tmp = path.with_name(".tmp-" + path.name)
    with open(tmp, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
