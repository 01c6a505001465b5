"""Rebuilding metadata.db from the conversation directories (`openvaala reindex`).

Storage contract: the rebuilt index is written to a temporary file and then swapped in, so a crash
leaves either the old index or the new one (or none, which the next open rebuilds), never half of
one. Every ``metadata.jsonl`` and ``<session-id>.jsonl`` is replayed with the same row functions the
live store uses (`index.py`), so the result equals the index the server kept live.

On the way, reindex repairs what a crash can leave: torn last lines are moved to their sidecars,
and deletions found half done (a ``.trash-<id>`` directory) are finished. Anything it cannot index
is skipped with a reason, never fatal: an invalid directory name, a symlink, a missing or unreadable
metadata.jsonl, a conversation written by a newer OpenVaala.

It must run with the server stopped (or through `Store.reindex`, which pauses the store's files).
The bulk work uses plain sqlite3 in a thread: one transaction, executemany, no per-row round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.store import index as ix
from openvaala_server.store import journal
from openvaala_server.store.paths import (
    METADATA_FILE,
    TRASH_PREFIX,
    CorruptConversation,
    DataDir,
    FormatTooNew,
    is_real_dir,
    is_real_file,
)


@dataclass(frozen=True)
class Skipped:
    name: str  # the directory entry under conversations/
    reason: str


@dataclass
class ReindexReport:
    indexed: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    torn_repaired: list[Path] = field(default_factory=list)  # the sidecars written
    deletions_finished: list[str] = field(default_factory=list)
    problems: list[tuple[Path, journal.JournalProblem]] = field(default_factory=list)
    bytes_read: int = 0
    seconds: float = 0.0

    def describe(self) -> str:
        """A human summary, one fact per line (printed by `openvaala reindex`)."""
        mb = self.bytes_read / 1e6
        lines = [f"indexed {len(self.indexed)} conversations ({mb:.1f} MB in {self.seconds:.2f} s)"]
        lines += [f"skipped {s.name}: {s.reason}" for s in self.skipped]
        lines += [f"moved a torn last line to {p}" for p in self.torn_repaired]
        lines += [f"finished deleting {cid}" for cid in self.deletions_finished]
        lines += [f"{path}:{p.line_no}: {p.kind}: {p.detail}" for path, p in self.problems]
        return "\n".join(lines)


def read_meta(path: Path) -> tuple[m.ConversationMeta, journal.JournalRead]:
    """Fold a metadata.jsonl. Raises OSError, `FormatTooNew` or `CorruptConversation`."""
    read = journal.read_journal(path)
    if read.records:
        version = read.records[0].get("formatVersion", r.FORMAT_VERSION)
        if isinstance(version, int) and version > r.FORMAT_VERSION:
            raise FormatTooNew(
                f"{path}: written by a newer OpenVaala (format {version} > {r.FORMAT_VERSION})"
            )
    try:
        meta, _ = ix.fold_conversation(read.records)
    except m.MetaError as exc:
        raise CorruptConversation(f"{path}: {exc}") from exc
    return meta, read


def _index_conversation(
    data_dir: DataDir, cid: str, report: ReindexReport
) -> tuple[m.ConversationMeta, ix.ItemStats] | str:
    """The derived data of one conversation, or why it is skipped."""
    directory = data_dir.conversation_dir(cid)
    meta_path = directory / METADATA_FILE
    if not is_real_file(meta_path):
        return "no metadata.jsonl"
    files = [meta_path] + [path for _, path in data_dir.session_files(cid)]
    try:
        for path in files:
            sidecar = journal.repair(path)
            if sidecar is not None:
                report.torn_repaired.append(sidecar)
        meta, read = read_meta(meta_path)
        report.problems += [(meta_path, p) for p in read.problems]
        report.bytes_read += read.good_length
        stats = ix.ItemStats()
        for path in files[1:]:
            session = journal.read_journal(path)
            report.problems += [(path, p) for p in session.problems]
            report.bytes_read += session.good_length
            stats.add(session.records)
    except FormatTooNew:
        return "newer format"
    except CorruptConversation as exc:
        return f"unreadable: {exc}"
    except OSError as exc:
        return f"unreadable: {exc}"
    return meta, stats


def _finish_deletion(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def build(data_dir: DataDir, db_path: Path) -> ReindexReport:
    """Write a complete index of `data_dir` into the new file `db_path` (synchronous)."""
    started = time.perf_counter()
    report = ReindexReport()
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        # A fresh private file: no rollback journal needed, the caller fsyncs it before use.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -262144")  # 256 MB: the FTS build is cache-bound
        ix.create_schema(conn)
        conn.execute("BEGIN")
        conversations: list[ix.Row] = []
        sessions: list[ix.Row] = []
        turns: list[ix.Row] = []
        texts: list[ix.Row] = []
        try:
            names = sorted(os.listdir(data_dir.conversations_dir))
        except FileNotFoundError:
            names = []
        for name in names:
            path = data_dir.conversations_dir / name
            if name.startswith(TRASH_PREFIX) and is_real_dir(path):
                _finish_deletion(path)
                report.deletions_finished.append(name.removeprefix(TRASH_PREFIX))
                continue
            if not is_valid_id(name):
                report.skipped.append(Skipped(name, "invalid id"))
                continue
            if path.is_symlink():
                report.skipped.append(Skipped(name, "symlinked directory"))
                continue
            if not is_real_dir(path):
                report.skipped.append(Skipped(name, "not a directory"))
                continue
            result = _index_conversation(data_dir, name, report)
            if isinstance(result, str):
                report.skipped.append(Skipped(name, result))
                continue
            meta, stats = result
            report.indexed.append(name)
            conversations.append(ix.conversation_row(meta, stats.message_count, stats.updated_at))
            sessions += ix.session_rows(meta)
            turns += ix.turn_rows(meta)
            texts.append((name, ix.TITLE, meta.title))
            texts += [(name, ix.MESSAGE, text) for text in stats.texts]
        conn.executemany(ix.INSERT_CONVERSATION, conversations)
        conn.executemany(ix.UPSERT_SESSION, sessions)
        conn.executemany(ix.UPSERT_TURN, turns)
        # Fill the FTS index once from the finished table ('rebuild') instead of row by row
        # through the trigger: about twice as fast for a bulk load.
        conn.execute("DROP TRIGGER texts_ai")
        conn.executemany(ix.INSERT_TEXT, texts)
        conn.execute("INSERT INTO search (search) VALUES ('rebuild')")
        conn.execute(ix.TEXTS_INSERT_TRIGGER)
        # Consistent with the directories as of now: the next open may trust it.
        conn.execute("INSERT INTO state VALUES ('clean', '1')")
        conn.execute("COMMIT")
    finally:
        conn.close()
    report.seconds = time.perf_counter() - started
    return report


def replace_index(new: Path, db_path: Path) -> None:
    """Swap `new` in as `db_path`. The old file goes first, then its WAL (which must never be
    replayed into the new file), then the rename: a crash at any point leaves a usable index or
    none, and no index means a rebuild at the next open."""
    fd = os.open(new, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    for stale in (db_path, *(db_path.with_name(db_path.name + s) for s in ("-wal", "-shm"))):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    os.replace(new, db_path)
    journal.fsync_dir(db_path.parent)


def reindex_sync(data_dir: DataDir, db_path: Path | None = None) -> ReindexReport:
    data_dir.ensure()
    target = db_path or data_dir.metadata_db
    tmp = target.with_name(f"{target.name}.rebuild-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        report = build(data_dir, tmp)
        replace_index(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return report


async def reindex(data_dir: DataDir, *, db_path: Path | None = None) -> ReindexReport:
    """Rebuild the index of `data_dir` (into `db_path`, default its metadata.db)."""
    return await asyncio.to_thread(reindex_sync, data_dir, db_path)
