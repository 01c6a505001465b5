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
The bulk work uses plain sqlite3 in a thread: one transaction, no per-row round trip; the texts and
their search index are loaded by a second thread while the files are parsed (`_Loader`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.protocol import codec
from openvaala_server.store import index as ix
from openvaala_server.store import journal
from openvaala_server.store.paths import (
    JOURNAL_SUFFIX,
    METADATA_FILE,
    TRASH_PREFIX,
    CorruptConversation,
    DataDir,
    FormatTooNew,
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
    # (fork, parent): a fork or rewind whose parent conversation is not in this data directory.
    orphans: list[tuple[str, str]] = field(default_factory=list)
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
        lines += [
            f"fork {fork}: its parent {parent} is missing (copy the parent's directory too, "
            "or the history it shares with it cannot be read)"
            for fork, parent in self.orphans
        ]
        return "\n".join(lines)


def _orphans(parents: dict[str, str], present: set[str]) -> list[tuple[str, str]]:
    return sorted((fork, parent) for fork, parent in parents.items() if parent not in present)


def read_meta(path: Path) -> tuple[m.ConversationMeta, journal.JournalRead]:
    """Fold a metadata.jsonl. Raises OSError, `FormatTooNew` or `CorruptConversation`."""
    read = journal.read_journal(path)
    return fold_meta(path, read), read


def fold_meta(path: Path, read: journal.JournalRead) -> m.ConversationMeta:
    """Fold the read of a metadata.jsonl. Raises `FormatTooNew` or `CorruptConversation`."""
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
    return meta


def _journal_files(directory: str) -> tuple[Path | None, list[Path]]:
    """metadata.jsonl (None if it is not a regular file) and every regular `<sid>.jsonl`,
    sorted by name, from one scan of the directory: its entries' types come with the listing,
    so no file is stat'ed on its own."""
    meta: Path | None = None
    sessions: list[tuple[str, str]] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if not entry.is_file(follow_symlinks=False):
                continue
            if name == METADATA_FILE:
                meta = Path(entry.path)
            elif name.endswith(JOURNAL_SUFFIX) and is_valid_id(name[: -len(JOURNAL_SUFFIX)]):
                sessions.append((name, entry.path))
    sessions.sort()
    return meta, [Path(path) for _, path in sessions]


def _index_conversation(
    directory: str, report: ReindexReport, loader: _Loader | None = None
) -> tuple[m.ConversationMeta, ix.ItemStats] | str:
    """The derived data of one conversation, or why it is skipped. With a `loader` that streams,
    its message and tool-output texts are handed over as each part is counted (and taken back if
    the conversation is then skipped): a 50k-item conversation's texts are ~22 MB of strings,
    which held to the end put a reindex's peak over 100 MB (docs/design.md, "Reindex memory")."""
    try:
        meta_path, session_paths = _journal_files(directory)
    except OSError as exc:
        return f"unreadable: {exc}"
    if meta_path is None:
        return "no metadata.jsonl"
    files = [meta_path, *session_paths]
    try:
        # Every file is repaired (in order) before anything is folded, as separate repair and
        # read passes would; `read_repaired` does both with one read of the file.
        # A long session is read in parts, each counted and let go before the next: a reindex
        # holds about `_PART_BYTES` of any one journal (~8x that parsed), not its whole history.
        reads: list[tuple[Path, Iterable[journal.JournalRead]]] = []
        for path in files:
            if path is not meta_path and _size(path) > _PART_BYTES:
                parts, sidecar = journal.read_repaired_parts(path, _PART_BYTES)
                reads.append((path, parts))
            else:
                read, sidecar = journal.read_repaired(path)
                reads.append((path, [read]))
            if sidecar is not None:
                report.torn_repaired.append(sidecar)
        [meta_read] = reads[0][1]
        meta = fold_meta(meta_path, meta_read)
        # Folded: its records (two per turn) need not stay while the sessions are read.
        reads[0] = (
            meta_path,
            [journal.JournalRead([], meta_read.problems, None, meta_read.good_length)],
        )
        del meta_read
        stats = ix.ItemStats()
        for path, path_reads in reads:
            for read in path_reads:
                report.problems += [(path, p) for p in read.problems]
                report.bytes_read += read.good_length
                if path is not meta_path:
                    stats.add(read.records)
                del read  # before the next part is parsed, not after
                if loader is not None and loader.streams:
                    loader.add_texts(meta.conversation_id, stats)
    except FormatTooNew:
        return _skip(loader, directory, "newer format")
    except CorruptConversation as exc:
        return _skip(loader, directory, f"unreadable: {exc}")
    except OSError as exc:
        return _skip(loader, directory, f"unreadable: {exc}")
    return meta, stats


def _skip(loader: _Loader | None, directory: str, reason: str) -> str:
    """`reason`, once any texts already handed over for the conversation are taken back."""
    if loader is not None:
        loader.drop(os.path.basename(directory))
    return reason


def _size(path: Path) -> int:
    return os.stat(path, follow_symlinks=False).st_size


# Bigger session journals are read and counted in parts of this size (`_index_conversation`).
_PART_BYTES: Final = 1 << 20


def _finish_deletion(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# One statement inserts a whole chunk of texts: for each conversation and kind, its texts as a
# JSON array of strings, which `json_each` hands over decoded (no per-row JSON path to evaluate,
# ~3.5x faster than rows given as [id, kind, text] arrays). The groups are joined by UNION ALL in
# one statement, not one statement each: SQLite runs a statement without holding the GIL, but
# every statement must take it back from the parsing thread, which costs ~0.25 ms here.
_TEXTS_GROUP: Final = "SELECT ?, ?, value FROM json_each(?)"
# 768 parameters and 256 SELECTs: within SQLite's oldest limits (999 parameters, 500 compound).
_GROUPS_PER_STATEMENT: Final = 256


def _insert_texts_sql(groups: int) -> str:
    union = " UNION ALL ".join([_TEXTS_GROUP] * groups)
    return f"INSERT INTO texts (conversation_id, kind, text) {union}"


def _rows_sql(sql: str, rows: int) -> str:
    """`sql` (an INSERT … VALUES of one row's parameters, as executemany would run it) for
    `rows` rows in one statement. executemany takes the GIL back after every row: the loader
    thread waited for the parsing thread ~24,000 times per 2,000 conversations (their
    conversations, sessions and turns rows). 10,000 conversations of 10 items: a build of
    1.2–2.1 s by executemany, 1.1–1.4 s so (docs/design.md, "Store throughput and aiosqlite")."""
    head, _, row = sql.partition(" VALUES ")
    return f"{head} VALUES {','.join([row] * rows)}"


# Parameters per statement: SQLite's oldest limit (999 before 3.32).
_PARAMETERS: Final = 999


_JSON_PROBE: Final = "SELECT value FROM json_each('[\"a\"]')"
# SQLite's JSON functions cut a string at an escaped NUL: such a group goes through executemany.
INDEX_TEXTS_AFTER: Final = (
    "INSERT INTO search (rowid, text) SELECT rowid, text FROM texts WHERE rowid > ?"
)
_JSON_NUL: Final = b"\\u0000"
_DROP_TEXTS: Final = "DELETE FROM texts WHERE conversation_id = ?"
_LAST_TEXT: Final = "SELECT coalesce(max(rowid), 0) FROM texts"
# A chunk handed to the loader thread: at most this many texts, or this many bytes of them, or
# this many conversations' rows. With at most `_QUEUED` chunks waiting, one being loaded and one
# being filled, what reindex holds in memory does not grow with the data directory. Each chunk
# in flight costs ~4x its bytes (the strings, their JSON, the statement's copy, SQLite's): 4 MB
# chunks with 2 waiting put one 50k-item conversation's reindex at ~120 MB, 1 MB and 1 at ~78 MB
# for the same time (docs/design.md, "Reindex memory").
_CHUNK: Final = 8192
_CHUNK_BYTES: Final = 1 << 20
_CHUNK_ROWS: Final = 256
_QUEUED: Final = 1
_GROUP_TEXTS: Final = 1024  # texts of one conversation and kind per group, at most
# FTS5 merges its segments as it goes, 4 of a level into one of the next ('automerge'). During the
# load that is switched off: segments are merged only when 16 accumulate on a level (FTS5's
# 'crisismerge'), so each text's entries are rewritten about half as often (a fifth less FTS5
# time). The live index gets FTS5's default back (4) before the commit, and merges as it writes.
_AUTOMERGE_OFF: Final = "INSERT INTO search (search, rank) VALUES ('automerge', 0)"
_AUTOMERGE_ON: Final = "INSERT INTO search (search, rank) VALUES ('automerge', 4)"
# SQLite's page cache for the build: the FTS5 load is what uses it (docs/storage.md, Benchmarks,
# has the figures that chose it); 256 MB put the peak RSS of 50k conversations at 350 MB.
_CACHE_KIB: Final = 8192


@dataclass(frozen=True)
class _Group:
    """Texts of one conversation and kind, in order."""

    conversation_id: str
    kind: str
    texts: list[str]
    data: bytes  # `texts` as a JSON array

    def rows(self) -> list[ix.Row]:
        return [(self.conversation_id, self.kind, text) for text in self.texts]


@dataclass
class _Chunk:
    groups: list[_Group] = field(default_factory=list)
    conversations: list[ix.Row] = field(default_factory=list)
    sessions: list[ix.Row] = field(default_factory=list)
    turns: list[ix.Row] = field(default_factory=list)
    texts: int = 0  # in `groups`
    text_bytes: int = 0
    drops: list[str] = field(default_factory=list)  # conversations whose texts are taken back

    def full(self) -> bool:
        return (
            self.texts >= _CHUNK
            or self.text_bytes >= _CHUNK_BYTES
            or len(self.conversations) >= _CHUNK_ROWS
        )


class _Loader:
    """Inserts the rows of the conversations read so far — their conversations, sessions and
    turns rows, and their texts, in order, indexed for search — on a second thread while the
    caller reads the next files. The texts insert trigger must be dropped.

    The caller hands over bounded chunks (`_Chunk.full`), at most `_QUEUED` waiting, so memory
    stays flat however many conversations there are. The connection belongs to the loader thread
    until `finish`/`close`. Without SQLite's JSON functions it does it all in the caller's
    thread: the rows as they come, then one FTS5 'rebuild' from the finished table in `finish`
    (about twice as fast as row by row through the trigger).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._chunk = _Chunk()
        self._error: BaseException | None = None
        self._queue: queue.Queue[_Chunk | None] = queue.Queue(_QUEUED)
        self._thread: threading.Thread | None = None
        self._streamed: str | None = None  # the conversation whose texts went ahead of its rows
        try:
            conn.execute(_JSON_PROBE).fetchall()
        except sqlite3.OperationalError:  # an SQLite built without JSON
            return
        self._thread = threading.Thread(target=self._run, name="reindex-texts", daemon=True)
        self._thread.start()

    @property
    def streams(self) -> bool:
        """Whether texts may be handed over before their conversation's rows (`add_texts`): only
        with the loader thread, which indexes texts as they come and so can take them back."""
        return self._thread is not None

    def add_texts(self, cid: str, stats: ix.ItemStats) -> None:
        """Hand over the texts `stats` holds so far (its lists are emptied) once there are at
        least a group's worth; `add` hands over the rest."""
        if len(stats.texts) + len(stats.outputs) < _GROUP_TEXTS:
            return
        self._add_groups(cid, ((ix.MESSAGE, stats.texts), (ix.TOOL_OUTPUT, stats.outputs)))
        stats.texts, stats.outputs = [], []
        self._streamed = cid

    def drop(self, cid: str) -> None:
        """Take back the texts handed over for `cid`, whose conversation is skipped after all."""
        if self._streamed != cid:
            return
        self._streamed = None
        self._chunk.drops.append(cid)
        self._send()

    def add(self, meta: m.ConversationMeta, stats: ix.ItemStats) -> None:
        cid = meta.conversation_id
        self._streamed = None
        chunk = self._chunk
        chunk.conversations.append(ix.conversation_row(meta, stats.message_count, stats.updated_at))
        chunk.sessions += ix.session_rows(meta)
        chunk.turns += ix.turn_rows(meta)
        self._add_groups(
            cid,
            ((ix.TITLE, [meta.title]), (ix.MESSAGE, stats.texts), (ix.TOOL_OUTPUT, stats.outputs)),
        )
        if self._thread is None:
            chunk = self._chunk
            self._insert_rows(chunk)
            for group in chunk.groups:
                self._conn.executemany(ix.INSERT_TEXT, group.rows())
            self._chunk = _Chunk()
        elif self._chunk.full():
            self._send()

    def _add_groups(self, cid: str, kinds: Iterable[tuple[str, list[str]]]) -> None:
        chunk = self._chunk
        for kind, texts in kinds:
            # In slices: one long conversation's texts would otherwise make one chunk, held
            # three times over (the strings, their JSON, the statement's copy) while it loads.
            for start in range(0, len(texts), _GROUP_TEXTS):
                part = texts[start : start + _GROUP_TEXTS]
                data = codec.dumps(part) if self._thread is not None else b""
                chunk.groups.append(_Group(cid, kind, part, data))
                chunk.texts += len(part)
                chunk.text_bytes += len(data)
                if self._thread is not None and chunk.full():
                    self._send()
                    chunk = self._chunk

    def finish(self) -> None:
        """Insert what is left and wait for every row to be in; raises the loader's error."""
        if self._thread is None:
            self._conn.execute("INSERT INTO search (search) VALUES ('rebuild')")
            return
        self._send()
        self.close()
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def _send(self) -> None:
        chunk, self._chunk = self._chunk, _Chunk()
        self._queue.put(chunk)

    def _run(self) -> None:
        indexed = 0  # texts rowids count from 1 in the new file: those up to here are searchable
        pending = 0  # texts inserted since
        while True:
            chunk = self._queue.get()
            if self._error is not None:
                if chunk is None:
                    return
                continue  # drain, so the caller never blocks; finish() raises
            try:
                if chunk is not None:
                    self._insert_rows(chunk)
                    self._insert(chunk.groups)
                    pending += chunk.texts
                    if chunk.drops:
                        # The delete trigger takes each text out of the search index, so
                        # every text must be in it first.
                        if pending:
                            self._conn.execute(INDEX_TEXTS_AFTER, (indexed,))
                            indexed, pending = indexed + pending, 0
                        for cid in chunk.drops:
                            self._conn.execute(_DROP_TEXTS, (cid,))
                        # Rowids are reused from the largest left (no AUTOINCREMENT): the
                        # next texts may take the dropped ones' rowids.
                        [(indexed,)] = self._conn.execute(_LAST_TEXT).fetchall()
                # Texts go to the search index `_CHUNK` at a time however small the chunks
                # were cut: each such statement leaves an FTS5 segment, and more segments make
                # every later search slower.
                if pending and (pending >= _CHUNK or chunk is None):
                    self._conn.execute(INDEX_TEXTS_AFTER, (indexed,))
                    indexed, pending = indexed + pending, 0
            except BaseException as exc:
                self._error = exc
            if chunk is None:
                return

    def _insert_rows(self, chunk: _Chunk) -> None:
        """Each table's rows by as few statements as SQLite's parameter limit allows."""
        for sql, rows in (
            (ix.INSERT_CONVERSATION, chunk.conversations),
            (ix.UPSERT_SESSION, chunk.sessions),
            (ix.UPSERT_TURN, chunk.turns),
        ):
            per = max(1, _PARAMETERS // len(rows[0])) if rows else 1
            for start in range(0, len(rows), per):
                part = rows[start : start + per]
                self._conn.execute(_rows_sql(sql, len(part)), [v for row in part for v in row])

    def _insert(self, groups: list[_Group]) -> None:
        """Insert the groups' rows in order: runs of JSON-safe groups by one statement each."""
        run: list[_Group] = []
        for group in [*groups, None]:
            if group is not None and _JSON_NUL not in group.data:
                run.append(group)
                if len(run) < _GROUPS_PER_STATEMENT:
                    continue
            if run:
                params = [p for g in run for p in (g.conversation_id, g.kind, g.data.decode())]
                self._conn.execute(_insert_texts_sql(len(run)), params)
                run = []
            if group is not None and _JSON_NUL in group.data:
                self._conn.executemany(ix.INSERT_TEXT, group.rows())


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def build(data_dir: DataDir, db_path: Path) -> ReindexReport:
    """Write a complete index of `data_dir` into the new file `db_path` (synchronous)."""
    started = time.perf_counter()
    report = ReindexReport()
    # Created here 0600, as SQLite would make it 0644: the index holds message text, and its
    # -wal and -shm files later take the database file's mode.
    os.close(os.open(db_path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
    # Used by the texts loader's thread too, never by two threads at once.
    conn = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    loader: _Loader | None = None
    try:
        # A fresh private file: no rollback journal needed, the caller fsyncs it before use.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        ix.create_schema(conn)
        conn.execute("BEGIN")
        # The texts index is kept during the load, by the loader thread: conversations come in
        # id order, so its entries are appended, and building it after the load was a serial
        # step (~0.1 s on 200,000 texts) that no parsing overlapped.
        conn.execute(_AUTOMERGE_OFF)
        # The texts and their FTS index are filled by the loader, not row by row by the trigger.
        conn.execute("DROP TRIGGER texts_ai")
        loader = _Loader(conn)
        parents: dict[str, str] = {}  # fork → the conversation it was forked from
        try:
            with os.scandir(data_dir.conversations_dir) as scan:
                # Each entry's type comes with the listing (no lstat per conversation).
                entries = sorted(scan, key=_entry_name)
        except FileNotFoundError:
            entries = []
        for entry in entries:
            name = entry.name
            if name.startswith(TRASH_PREFIX) and entry.is_dir(follow_symlinks=False):
                _finish_deletion(Path(entry.path))
                report.deletions_finished.append(name.removeprefix(TRASH_PREFIX))
                continue
            if not is_valid_id(name):
                report.skipped.append(Skipped(name, "invalid id"))
                continue
            if entry.is_symlink():
                report.skipped.append(Skipped(name, "symlinked directory"))
                continue
            if not entry.is_dir(follow_symlinks=False):
                report.skipped.append(Skipped(name, "not a directory"))
                continue
            result = _index_conversation(entry.path, report, loader)
            if isinstance(result, str):
                report.skipped.append(Skipped(name, result))
                continue
            meta, stats = result
            if meta.conversation_id != name:
                # A copy of another conversation's directory (a backup left in place): indexing
                # it would give two rows one id; the metadata's own directory is the real one.
                reason = f"its metadata.jsonl is conversation {meta.conversation_id}'s (a copy?)"
                report.skipped.append(Skipped(name, reason))
                continue
            report.indexed.append(name)
            parent = meta.forked_from.get("conversationId") if meta.forked_from else None
            if isinstance(parent, str):
                parents[name] = parent
            loader.add(meta, stats)
        del entries
        loader.finish()
        report.orphans = _orphans(parents, set(report.indexed))
        conn.execute(ix.TEXTS_INSERT_TRIGGER)
        conn.execute(_AUTOMERGE_ON)
        # Consistent with the directories as of now: the next open may trust it.
        conn.execute("INSERT INTO state VALUES ('clean', '1')")
        conn.execute("COMMIT")
    finally:
        if loader is not None:
            loader.close()
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
    ix.check_sqlite()
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
