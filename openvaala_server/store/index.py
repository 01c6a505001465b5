"""metadata.db: the SQLite index of conversations, sessions, turns and searchable text.

Storage contract: the index holds nothing the directories don't. Every row is a function of the
journal files (`conversation_rows`), computed the same way by the live store and by `reindex`, so a
rebuilt index equals the live one. A missing or corrupt file, another schema version, or a file the
last process did not close cleanly (it may have died between a journal fsync and the index update)
is not repaired in place: `needs_rebuild` says so and the store rebuilds it from the directories.

Writes go through ONE aiosqlite connection owned by ONE writer task, which batches whatever is
pending into a single transaction of a few merged statements (`merge_statements`); reads use a
second aiosqlite connection (WAL lets them run alongside the writer). The writes commit behind
the durable journal append, off its path, so aiosqlite's thread trip per statement is paid per
batch, not per append (docs/design.md, "Store throughput and aiosqlite"). The
index is derived data, so it runs with ``synchronous=NORMAL``: a power cut may lose its last
commits, which the "closed cleanly" flag (written with a full sync) turns into a rebuild. The flag
is cleared at open in metadata.db itself (a checkpoint), not only in the `-wal` file: a WAL lost
after a kill would otherwise take the "not closed cleanly" with it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import logging
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from pathlib import Path
from typing import Any, Final

import aiosqlite

from openvaala_server.domain import meta as m
from openvaala_server.domain import recall, snippets
from openvaala_server.domain import records as r
from openvaala_server.errors import StoreError
from openvaala_server.protocol import codec

log = logging.getLogger(__name__)

# 3: the search table keeps no per-text token counts (`columnsize=0`, see SCHEMA). 4: tool output
# is searchable text too (kind `tool_output`, domain/recall.py), so older indexes are rebuilt to
# hold it. An index of another version is rebuilt from the journals at open (`needs_rebuild`).
SCHEMA_VERSION: Final = 4
# The protocol's ConversationSummary of a row, computed by SQLite when the row is written (a
# stored generated column) so a listing fetches one string per conversation and sends it as is:
# building 10,000 dicts of 12 fields cost more than the 30 ms a full listing may take. A turn
# that completed leaves the conversation "idle", the word a live conversation uses.
SUMMARY_JSON: Final = """json_object(
        'conversationId', id, 'title', title, 'cwd', cwd, 'agent', agent, 'model', model,
        'createdAt', created_at, 'updatedAt', updated_at,
        'archived', json(CASE WHEN archived THEN 'true' ELSE 'false' END),
        'status', CASE last_status WHEN 'completed' THEN 'idle' ELSE last_status END,
        'messageCount', message_count, 'turnCount', turn_count,
        'forkedFrom', json(forked_from))"""
# The turns still running: what a start looks up to end those a crash cut
# (`running_conversations`).
RUNNING_TURNS_INDEX: Final = (
    "CREATE INDEX IF NOT EXISTS turns_running ON turns (conversation_id) WHERE status = 'running'"
)
# Created apart from SCHEMA too: reindex drops it and fills `search` itself (store/reindex.py).
TEXTS_INSERT_TRIGGER: Final = """
CREATE TRIGGER texts_ai AFTER INSERT ON texts BEGIN
    INSERT INTO search (rowid, text) VALUES (new.rowid, new.text);
END;
"""
SCHEMA: Final = (
    """
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    cwd TEXT NOT NULL,
    agent TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    archived INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    turn_count INTEGER NOT NULL,
    last_status TEXT NOT NULL,
    forked_from TEXT,
    summary TEXT GENERATED ALWAYS AS ("""
    + SUMMARY_JSON
    + """) STORED
);
-- Covering: a listing reads the index alone, in order, from the cursor on.
CREATE INDEX conversations_by_update ON conversations (archived, updated_at DESC, id DESC, summary);
CREATE TABLE sessions (
    conversation_id TEXT NOT NULL,
    id TEXT NOT NULL,
    parent_session_id TEXT,
    agent TEXT NOT NULL,
    model TEXT NOT NULL,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (conversation_id, id)
);
CREATE TABLE turns (
    conversation_id TEXT NOT NULL,
    id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    PRIMARY KEY (conversation_id, id)
);
-- Searchable text (titles, messages and tool output, bounded: domain/recall.py). The FTS5 table
-- uses it as external content, so a conversation's rows are found by an ordinary index when it
-- is renamed or deleted, and the text is stored once. columnsize=0: no table of token counts per
-- text, which every insert wrote (a sixth of reindex's FTS5 time); only ranking
-- (`search_messages`) uses them, and FTS5 then counts the tokens of the matched texts it ranks,
-- with the same result.
CREATE TABLE texts (
    rowid INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX texts_by_conversation ON texts (conversation_id, kind);
CREATE VIRTUAL TABLE search USING fts5 (
    text, content='texts', content_rowid='rowid', columnsize=0
);
CREATE TRIGGER texts_ad AFTER DELETE ON texts BEGIN
    INSERT INTO search (search, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
    + TEXTS_INSERT_TRIGGER
)
TABLES: Final = ("conversations", "sessions", "turns", "texts")
TITLE: Final = "title"
MESSAGE: Final = recall.MESSAGE
TOOL_OUTPUT: Final = recall.TOOL_OUTPUT  # found by search_history, not by the list's search
SNIPPET_TOKENS: Final = 12  # words around the matches in a search snippet (FTS5 allows 64)
MESSAGE_TYPES: Final = frozenset({r.USER_MESSAGE, r.AGENT_MESSAGE})

# What SQLite stores and returns (no REAL or BLOB column here, but the type says what a row is).
SqlValue = str | int | float | bytes | None
Row = tuple[SqlValue, ...]
# A ConversationSummary (docs/protocol.md) as parsed from the JSON the index stores; a plain dict
# because the ConversationStore protocol (store/interface.py) and its in-memory twin say so.
Summary = dict[str, Any]


# --- rows: the one definition of what the index holds ------------------------------------------


def fold_conversation(records: list[r.Record]) -> tuple[m.ConversationMeta, int]:
    """`meta.fold`, except that a later record the fold cannot apply is skipped and counted
    instead of making the whole conversation unreadable. `MetaError` for a bad first record."""
    if not records:
        raise m.MetaError("metadata.jsonl has no records")
    meta = m.created_from(records[0])
    skipped = 0
    for record in records[1:]:
        skipped += not apply_record(meta, record)
    return meta, skipped


def apply_record(meta: m.ConversationMeta, record: r.Record) -> bool:
    try:
        m.apply(meta, record)
    except (KeyError, TypeError, ValueError):
        return False
    return True


@dataclass
class ItemStats:
    """What the index takes from session records: counts, searchable text, the latest ts."""

    message_count: int = 0
    texts: list[str] = field(default_factory=list)  # the messages'
    updated_at: str = ""
    outputs: list[str] = field(default_factory=list)  # tool results', bounded (domain/recall.py)

    def add(self, records: Iterable[r.Record]) -> None:
        records = records if isinstance(records, list) else list(records)
        if not self._add_clean(records):
            self._add_checked(records)

    def _add_checked(self, records: list[r.Record]) -> None:
        """Any records: updated_at is the greatest string ts; a message is an item record whose
        item dict has a message type; its text is `r.item_text`, empty for every other item."""
        stamps = [ts for record in records if isinstance(ts := record.get("ts"), str)]
        if stamps:
            self.updated_at = max(self.updated_at, max(stamps))
        messages = [
            item
            for record in records
            if record.get("type") == r.ITEM
            and isinstance(item := record.get("item"), dict)
            and isinstance(kind := item.get("type"), str)  # a damaged record: no crash
            and kind in MESSAGE_TYPES
        ]
        self.message_count += len(messages)
        self.texts += [text for item in messages if (text := r.item_text(item))]
        self.outputs += [
            found[1]
            for record in records
            if record.get("type") == r.ITEM
            and isinstance(item := record.get("item"), dict)
            and item.get("type") == r.TOOL_RESULT
            and (found := recall.searchable(item)) is not None
        ]

    def _add_clean(self, records: list[r.Record]) -> bool:
        """`_add_checked` for the common case — every record an item record with a dict item
        whose type is a string, every ts and message text a string — in C-level passes (map,
        compress) instead of Python work per record: reindex feeds every record through here.
        False, with nothing changed, for anything else."""
        if not records:
            return True
        try:
            if not _ITEM_ONLY.issuperset(map(_GET, records, repeat("type"))):
                return False
            items = list(map(_GET, records, repeat("item")))
            kinds = list(map(_GET, items, repeat("type")))  # TypeError unless all are dicts
            stamps = list(map(_GET, records, repeat("ts")))
        except TypeError:
            return False
        if not (_STR.issuperset(map(type, kinds)) and _STR.issuperset(map(type, stamps))):
            return False
        messages = list(compress(items, map(MESSAGE_TYPES.__contains__, kinds)))
        texts = list(map(_GET, messages, repeat("text")))
        results = compress(items, map(_IS_RESULT, kinds))
        outputs = list(map(_GET, results, repeat("output")))
        if not (_STR.issuperset(map(type, texts)) and _STR.issuperset(map(type, outputs))):
            return False
        self.updated_at = max(self.updated_at, max(stamps))
        self.message_count += len(messages)
        self.texts += filter(None, texts)
        self.outputs += map(recall.bounded_output, filter(None, outputs))
        return True


# dict.get as a plain function: applied with map() over records, it raises TypeError on a
# non-dict, which sends the batch to the checked path.
_GET: Final[Callable[[Any, str], Any]] = dict.get
_ITEM_ONLY: Final = frozenset({r.ITEM})
_IS_RESULT: Final[Callable[[object], bool]] = r.TOOL_RESULT.__eq__
_STR: Final = frozenset({str})


def conversation_row(meta: m.ConversationMeta, message_count: int, updated_at: str) -> Row:
    forked = codec.dumps(meta.forked_from, sort_keys=True).decode()
    return (
        meta.conversation_id,
        meta.title,
        meta.cwd,
        meta.agent,
        meta.model,
        meta.created_at,
        max(meta.updated_at, updated_at),
        int(meta.archived),
        message_count,
        len(meta.turns),
        meta.last_status,
        None if meta.forked_from is None else forked,
    )


def session_rows(meta: m.ConversationMeta) -> list[Row]:
    return [
        (
            meta.conversation_id,
            s.session_id,
            s.parent_session_id,
            s.agent,
            s.model,
            s.title,
            m.session_status(meta, s.session_id),
        )
        for s in meta.sessions.values()
    ]


def turn_rows(meta: m.ConversationMeta, only: set[str] | None = None) -> list[Row]:
    return [
        (meta.conversation_id, t.turn_id, t.session_id, t.status, t.started_at, t.ended_at)
        for t in meta.turns.values()
        if only is None or t.turn_id in only
    ]


INSERT_CONVERSATION: Final = "INSERT INTO conversations VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
UPSERT_SESSION: Final = "INSERT OR REPLACE INTO sessions VALUES (?,?,?,?,?,?,?)"
UPSERT_TURN: Final = "INSERT OR REPLACE INTO turns VALUES (?,?,?,?,?,?)"
INSERT_TEXT: Final = "INSERT INTO texts (conversation_id, kind, text) VALUES (?,?,?)"
# A metadata change keeps the counts the item appends maintain, and updated_at only grows.
UPSERT_CONVERSATION: Final = (
    INSERT_CONVERSATION
    + """ ON CONFLICT (id) DO UPDATE SET title = excluded.title, cwd = excluded.cwd,
    agent = excluded.agent, model = excluded.model, created_at = excluded.created_at,
    updated_at = max(updated_at, excluded.updated_at), archived = excluded.archived,
    turn_count = excluded.turn_count, last_status = excluded.last_status,
    forked_from = excluded.forked_from"""
)


# --- opening -----------------------------------------------------------------------------------

MIN_SQLITE: Final = (3, 31, 0)  # stored generated columns (the summary)


def check_sqlite() -> None:
    """Fail with a clear message if this Python's SQLite cannot hold the index (too old, or
    built without JSON or FTS5), rather than on every start at the first CREATE TABLE."""
    version = sqlite3.sqlite_version_info
    if version < MIN_SQLITE:
        have = ".".join(map(str, version))
        need = ".".join(map(str, MIN_SQLITE))
        raise StoreError(
            f"OpenVaala needs SQLite {need} or newer; this Python uses SQLite {have} "
            "(install a Python built against a newer SQLite)"
        )
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("SELECT json_object('a', 1)")
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5 (text)")
    except sqlite3.OperationalError as exc:
        raise StoreError(
            f"this Python's SQLite lacks what OpenVaala's index needs (JSON and FTS5): {exc}"
        ) from exc
    finally:
        conn.close()


def needs_rebuild(path: Path, *, check_pages: bool = True) -> str | None:
    """Why the index at `path` cannot be used as it is, or None if it can. `check_pages=False`:
    the file is as a clean close left it (store/closed_mark.py), its pages need no check."""
    if not path.exists():
        return "no index yet"
    try:
        conn = sqlite3.connect(path)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                return f"schema version {version}, this OpenVaala uses {SCHEMA_VERSION}"
            for table in (*TABLES, "search"):
                conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchall()
            clean = conn.execute("SELECT value FROM state WHERE key = 'clean'").fetchone()
            if clean != ("1",):
                return "the last server did not close it cleanly"
            if not check_pages:
                return None
            log.info("checking every page of %s: it is not as the last clean stop left it", path)
            # Damaged pages past the first rows show only when a query reaches them: check
            # every page once at open (a few ms per MB) rather than fail later, mid-recovery.
            problems = conn.execute("PRAGMA quick_check").fetchall()
            if problems != [("ok",)]:
                return f"damaged ({problems[0][0].splitlines()[-1]})"
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"unreadable ({exc})"
    return None


def is_corruption(exc: BaseException) -> bool:
    """A damaged or foreign file, as opposed to a busy, full or read-only disk."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _dump_sql(table: str) -> str:
    return (
        "SELECT conversation_id, kind, text FROM texts"
        if table == "texts"
        else (f"SELECT * FROM {table}")
    )


def dump(conn: sqlite3.Connection) -> dict[str, list[Row]]:
    """Every row of every table, sorted, without SQLite's own rowids: what 'equal indexes' means."""
    return {table: sorted(conn.execute(_dump_sql(table)).fetchall(), key=repr) for table in TABLES}


# --- the live index ----------------------------------------------------------------------------

# How long the first write of a batch waits for others to share its commit. Nothing waits for an
# index write but reads, which cut the wait short, so waiting costs no one time; sharing a commit
# saves, per write, a transaction, a new FTS5 segment and its WAL frames (which the journal's next
# syncfs would flush too): with 8 conversations appending at once, a third of the index's CPU.
COALESCE_S: Final = 0.01

ADD_ITEMS: Final = (
    "UPDATE conversations SET message_count = message_count + ?, "
    "updated_at = max(updated_at, ?) WHERE id = ?"
)
DELETE_TITLE: Final = "DELETE FROM texts WHERE conversation_id = ? AND kind = ?"


# The texts of a batch in one statement, as one JSON array of [conversation_id, kind, text]
# (rowids in the array's order, as executemany would give them): SQLite runs a statement without
# the GIL, while executemany takes it back for every row — once per FTS5 insert, from the event
# loop and the journal's thread, which cost more CPU than the inserts themselves.
INSERT_TEXTS_JSON: Final = (
    "INSERT INTO texts (conversation_id, kind, text) SELECT json_extract(value, '$[0]'), "
    "json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?)"
)


def _texts_json(rows: list[Row]) -> str | None:
    """`rows` for `INSERT_TEXTS_JSON`, or None if a text holds a NUL, which SQLite's JSON
    functions would cut (executemany then)."""
    try:
        data = codec.dumps(rows)
    except codec.JSONEncodeError:  # not UTF-8 (a lone surrogate): executemany says why
        return None
    return None if b"\\u0000" in data else data.decode()


def plan(statement: Statement) -> tuple[str, list[Row]]:
    """How a merged statement runs: its SQL and the rows to run it with (one row: `execute`)."""
    if statement.sql == INSERT_TEXT and len(statement.rows) > 1:
        texts = _texts_json(statement.rows)
        if texts is not None:
            return INSERT_TEXTS_JSON, [(texts,)]
    return statement.sql, statement.rows


@dataclass(frozen=True)
class Statement:
    """One SQL statement of an index write, run once per row of parameters (executemany), and
    the tables it changes, which say what it may be merged across (`merge_statements`)."""

    sql: str
    rows: list[Row]
    tables: frozenset[str]


# One index write: its statements, in order. Plain data (not a function of a connection), so
# that a batch of writes can be merged into a few statements, each one trip to aiosqlite's thread.
WriteOp = list[Statement]

_CONVERSATIONS: Final = frozenset({"conversations"})
_SESSIONS: Final = frozenset({"sessions"})
_TURNS: Final = frozenset({"turns"})
_TEXTS: Final = frozenset({"texts", "search"})  # the triggers keep `search` in step


def merge_statements(ops: Iterable[WriteOp]) -> list[Statement]:
    """The statements of `ops` in order, with each one merged into an earlier statement of the
    same SQL when every statement between them changes other tables only (so the two commute):
    a batch of item appends in 8 conversations is 2 statements, not 16.

    The result leaves every table as running the ops one statement after the other would: a
    statement only moves earlier past statements on disjoint tables, and keeps its rows' order
    relative to every statement on its own tables."""
    merged: list[Statement] = []
    for op in ops:
        for statement in op:
            for earlier in reversed(merged):
                if earlier.sql == statement.sql:
                    earlier.rows.extend(statement.rows)
                    break
                if earlier.tables & statement.tables:
                    merged.append(Statement(statement.sql, list(statement.rows), statement.tables))
                    break
            else:
                merged.append(Statement(statement.sql, list(statement.rows), statement.tables))
    for statement in merged:
        if statement.sql == ADD_ITEMS and len(statement.rows) > 1:
            statement.rows[:] = _sum_counts(statement.rows)
    return merged


def _sum_counts(rows: list[Row]) -> list[Row]:
    """`ADD_ITEMS` rows with one row per conversation: adding a then b to the count is adding
    a + b, and the greatest of the stamps is the greatest of the greatest (SQLite's max on
    text and Python's on str agree: UTF-8 byte order is code point order). Each conversation's
    row is rewritten once per batch rather than once per append."""
    summed: dict[SqlValue, tuple[int, str]] = {}
    for count, stamp, cid in rows:
        assert isinstance(count, int) and isinstance(stamp, str)
        before = summed.get(cid)
        summed[cid] = (
            (count, stamp) if before is None else (before[0] + count, max(before[1], stamp))
        )
    return [(count, stamp, cid) for cid, (count, stamp) in summed.items()]


def put_conversation_op(
    meta: m.ConversationMeta, *, turns: set[str] | None = None, title: bool = True
) -> WriteOp:
    """Upsert a conversation's metadata rows (its counts from items are kept); `turns`: only
    these turns' rows; `title`: its searchable title too."""
    row = conversation_row(meta, 0, meta.updated_at)
    cid = meta.conversation_id
    op = [Statement(UPSERT_CONVERSATION, [row], _CONVERSATIONS)]
    if sessions := session_rows(meta):
        op.append(Statement(UPSERT_SESSION, sessions, _SESSIONS))
    if turn_list := turn_rows(meta, turns):
        op.append(Statement(UPSERT_TURN, turn_list, _TURNS))
    if title:
        op.append(Statement(DELETE_TITLE, [(cid, TITLE)], _TEXTS))
        op.append(Statement(INSERT_TEXT, [(cid, TITLE, meta.title)], _TEXTS))
    return op


def add_items_op(cid: str, stats: ItemStats) -> WriteOp:
    op = [Statement(ADD_ITEMS, [(stats.message_count, stats.updated_at, cid)], _CONVERSATIONS)]
    texts: list[Row] = [(cid, MESSAGE, text) for text in stats.texts]
    texts += [(cid, TOOL_OUTPUT, text) for text in stats.outputs]
    if texts:
        op.append(Statement(INSERT_TEXT, texts, _TEXTS))
    return op


def delete_conversation_op(cid: str) -> WriteOp:
    op = [Statement("DELETE FROM conversations WHERE id = ?", [(cid,)], _CONVERSATIONS)]
    for table, tables in (("sessions", _SESSIONS), ("turns", _TURNS), ("texts", _TEXTS)):
        op.append(Statement(f"DELETE FROM {table} WHERE conversation_id = ?", [(cid,)], tables))
    return op


@dataclass
class _Job:
    op: WriteOp | Callable[[], WriteOp]  # a callable: computed when the writer reaches it
    future: asyncio.Future[None]


class Index:
    """The live index: one writer task and one aiosqlite connection that writes; another
    aiosqlite connection that reads (WAL lets it run beside the writer).

    The writer task takes every write pending, merges their statements (`merge_statements`) and
    runs them in one transaction: a batch costs a few trips to the writer connection's thread
    (one per merged statement, one to commit), whatever its size. Reads are one trip each
    (`execute_fetchall`). docs/design.md, "Store throughput and aiosqlite", has the figures.
    """

    def __init__(self, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self._writer = writer
        self._reader = reader
        self._jobs: asyncio.Queue[_Job | None] = asyncio.Queue()
        self._last_write: asyncio.Future[None] | None = None
        self._write_failed = False  # any write failed: the index lags the journals
        self._closing = False
        # Set when a caller waits for the queued writes (a read, a delete, close): the writer
        # stops waiting for more writes to join its batch.
        self._hurry = asyncio.Event()
        self._task = asyncio.create_task(self._write_loop(), name="index-writer")

    @classmethod
    async def open(cls, path: Path) -> Index:
        writer = await _connect(path, autocommit=False)
        try:
            await _prepare_writer(writer)
            reader = await _connect(path)
        except BaseException:
            await writer.close()
            raise
        return cls(writer, reader)

    async def close(self, clean: bool = True) -> bool:
        """Stop the writer; `clean=False` leaves the index marked for a rebuild at next open.
        Whether it was marked closed cleanly.

        A write that failed (its caller did not wait for it) also leaves it marked, even one
        that was still queued when this was called."""
        self._closing = True
        self._hurry.set()
        await self._jobs.put(None)
        await self._task
        clean = clean and not self._write_failed
        try:
            clean = await _close_writer(self._writer, clean)
        finally:
            await self._reader.close()
        return clean

    def _enqueue(
        self, op: WriteOp | Callable[[], WriteOp], *, awaited: bool = False
    ) -> asyncio.Future[None]:
        """Queue a write; the future settles once it is committed (or failed). `awaited`: the
        caller waits for it, so it is committed without waiting for others to join."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._closing:  # nothing would ever run it: fail now rather than never
            log.error("index write after close: the index will be rebuilt at the next start")
            self._write_failed = True
            future.set_exception(sqlite3.ProgrammingError("the index is closed"))
            return future
        self._jobs.put_nowait(_Job(op, future))
        self._last_write = future
        if awaited:
            self._hurry.set()
        return future

    async def settle_writes(self) -> None:
        """Wait until every write queued so far is committed or failed (without raising)."""
        last = self._last_write
        if last is not None and not last.done():
            self._hurry.set()
            await asyncio.wait([last])

    async def _write_loop(self) -> None:
        """Take everything pending, run it in one transaction, settle the callers; repeat.

        While one batch commits, the next accumulates: under load, the index costs one commit
        per batch, not per append. The first write of a batch also waits up to `COALESCE_S` for
        others, unless something is waiting for it (`_hurry`)."""
        while True:
            first = await self._jobs.get()
            if first is not None and not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), COALESCE_S)
            # No await from here to the batch's last job: a hurry signalled before this point
            # is for a job already queued, so it is in this batch.
            self._hurry.clear()
            batch = [first]
            while not self._jobs.empty():
                batch.append(self._jobs.get_nowait())
            jobs, ops = [], []
            for job in batch:
                if job is not None and (op := await self._op(job)) is not None:
                    jobs.append(job)
                    ops.append(op)
            if jobs:
                try:
                    errors = await self._run_batch(ops)
                except Exception as exc:  # the connection itself failed: fail every caller
                    errors = [exc] * len(jobs)
                for job, error in zip(jobs, errors, strict=True):
                    self._write_failed = self._write_failed or error is not None
                    _settle(job.future, error)
            if None in batch:
                return

    async def _op(self, job: _Job) -> WriteOp | None:
        """A job's statements; a deferred write's are computed in a thread (it reads files).
        None, with its caller failed, if that fails."""
        if isinstance(job.op, list):
            return job.op
        try:
            return await asyncio.to_thread(job.op)
        except Exception as exc:
            log.exception("index update failed")
            self._write_failed = True
            _settle(job.future, exc)
            return None

    async def _run_batch(self, ops: list[WriteOp]) -> list[BaseException | None]:
        """One transaction for all; if it fails, one each, so a bad op fails only its own
        caller."""
        try:
            await self._transaction(merge_statements(ops))
        except Exception:
            results: list[BaseException | None] = []
            for op in ops:
                try:
                    await self._transaction(merge_statements([op]))
                except Exception as exc:
                    log.exception("index update failed")
                    results.append(exc)
                else:
                    results.append(None)
            return results
        return [None] * len(ops)

    async def _transaction(self, statements: list[Statement]) -> None:
        # The writer connection opens the transaction itself at the first statement (sqlite3's
        # implicit BEGIN before an INSERT, UPDATE or DELETE): one trip to its thread fewer.
        db = self._writer
        try:
            for statement in statements:
                sql, rows = plan(statement)
                if len(rows) == 1:
                    await db.execute(sql, rows[0])
                else:
                    await db.executemany(sql, rows)
            await db.commit()
        except BaseException:
            if db.in_transaction:
                await db.rollback()
            raise

    async def _read(self, sql: str, params: Sequence[SqlValue] = ()) -> list[Row]:
        # Writes are queued without waiting (see `put_conversation`): a read first lets every
        # earlier one commit, so a caller always reads what it wrote.
        await self.settle_writes()
        return [tuple(row) for row in await self._reader.execute_fetchall(sql, params)]

    # --- writes --------------------------------------------------------------------------------

    # Writes return at once with a future: the journal append they follow is already durable, so
    # nothing waits for the index but reads (`_read`), and the next journal batch overlaps with
    # this commit. A crash before the commit leaves the index marked unclean: rebuilt at start.

    def put_conversation(
        self, meta: m.ConversationMeta, *, turns: set[str] | None = None, title: bool = True
    ) -> asyncio.Future[None]:
        """Upsert a conversation's metadata rows (its counts from items are kept)."""
        return self._enqueue(put_conversation_op(meta, turns=turns, title=title))

    def add_items(self, cid: str, stats: ItemStats) -> asyncio.Future[None]:
        return self._enqueue(add_items_op(cid, stats))

    def write_later(self, compute: Callable[[], WriteOp]) -> asyncio.Future[None]:
        """Queue a write whose statements `compute` makes, in a thread, when the writer reaches
        it (an import's texts, read from files already durable): a read waits for it like for
        any queued write, so no reader sees the index without it."""
        return self._enqueue(compute)

    def delete_conversation(self, cid: str) -> asyncio.Future[None]:
        return self._enqueue(delete_conversation_op(cid), awaited=True)

    # --- reads ---------------------------------------------------------------------------------

    async def list_summaries(
        self, *, archived: bool, search: str | None, limit: int, cursor: str | None
    ) -> tuple[list[tuple[str, str]], str | None]:
        """(conversation id, ConversationSummary as JSON text) pairs, newest first, and the
        cursor of the next page (None on the last)."""
        where = ["archived = ?"]
        params: list[SqlValue] = [int(archived)]
        if cursor is not None:
            updated_at, cid = decode_cursor(cursor)
            # A row value, so SQLite seeks the (archived, updated_at, id) index to the cursor
            # instead of scanning every newer row.
            where.append("(updated_at, id) < (?, ?)")
            params += [updated_at, cid]
        query = fts_query(search or "")
        if query:
            where.append(
                "id IN (SELECT t.conversation_id FROM search JOIN texts t "
                "ON t.rowid = search.rowid WHERE search MATCH ? AND t.kind != ?)"
            )
            params += [query, TOOL_OUTPUT]
        sql = (
            f"SELECT id, summary FROM conversations WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC, id DESC LIMIT ?"
        )
        limit = max(0, limit)
        params.append(limit + 1)
        rows = [(str(cid), str(summary)) for cid, summary in await self._read(sql, params)]
        more = len(rows) > limit
        del rows[limit:]
        if not (more and rows):
            return rows, None
        last = codec.parse(rows[-1][1])
        return rows, encode_cursor(last["updatedAt"], last["conversationId"])

    async def get_summary(self, cid: str) -> Summary | None:
        rows = await self._read("SELECT summary FROM conversations WHERE id = ?", (cid,))
        return parse_summaries([str(rows[0][0])])[0] if rows else None

    async def running_conversations(self) -> list[str]:
        """The conversations with a turn that never ended (a crash or a kill cut it), from the
        partial index of running turns: a start asks this without reading every conversation."""
        rows = await self._read(
            "SELECT DISTINCT conversation_id FROM turns INDEXED BY turns_running"
            " WHERE status = 'running'"
        )
        return [str(row[0]) for row in rows]

    async def fork_summaries(self) -> list[Summary]:
        """The summary of every fork and rewind (the conversation tree's branches)."""
        rows = await self._read("SELECT summary FROM conversations WHERE forked_from IS NOT NULL")
        return parse_summaries([str(row[0]) for row in rows])

    async def search_messages(self, cids: list[str], search: str, limit: int) -> list[str]:
        """The message and tool output texts (domain/recall.py) of these conversations that
        match `search` (every word, as a prefix), best match first: what `search_history` looks
        up (tools/history.py)."""
        query = fts_query(search)
        if not query or not cids:
            return []
        marks = ",".join("?" * len(cids))
        sql = (
            "SELECT DISTINCT t.text FROM search JOIN texts t ON t.rowid = search.rowid "
            f"WHERE search MATCH ? AND t.kind IN (?, ?) AND t.conversation_id IN ({marks}) "
            "ORDER BY search.rank LIMIT ?"
        )
        params: list[SqlValue] = [query, MESSAGE, TOOL_OUTPUT, *cids, max(0, limit)]
        return [str(row[0]) for row in await self._read(sql, params)]

    async def search_snippets(self, cids: list[str], search: str) -> dict[str, str]:
        """Per conversation, a snippet of its best matching message text (FTS5 `snippet()`, a
        few words around the matches, each match between `snippets.OPEN` and `snippets.CLOSE`).
        The window function picks each conversation's best text first, so a conversation with
        thousands of matching messages costs one snippet, not thousands."""
        query = fts_query(search)
        if not query or not cids:
            return {}
        marks = ",".join("?" * len(cids))
        sql = (
            "SELECT t.conversation_id, snippet(search, 0, ?, ?, ?, ?) "
            "FROM search JOIN texts t ON t.rowid = search.rowid "
            "WHERE search MATCH ? AND search.rowid IN (SELECT rid FROM ("
            "SELECT b.rowid AS rid, row_number() OVER ("
            "PARTITION BY b.conversation_id ORDER BY search.rank) AS n "
            "FROM search JOIN texts b ON b.rowid = search.rowid "
            f"WHERE search MATCH ? AND b.kind = ? AND b.conversation_id IN ({marks})"
            ") WHERE n = 1)"
        )
        params: list[SqlValue] = [
            snippets.OPEN,
            snippets.CLOSE,
            snippets.ELLIPSIS,
            SNIPPET_TOKENS,
            query,
            query,
            MESSAGE,
            *cids,
        ]
        return {str(cid): str(text) for cid, text in await self._read(sql, params)}

    async def dump(self) -> dict[str, list[Row]]:
        await self.settle_writes()
        return {table: sorted(await self._read(_dump_sql(table)), key=repr) for table in TABLES}


async def _connect(path: Path, *, autocommit: bool = True) -> aiosqlite.Connection:
    # The reader runs in autocommit mode (each read sees the last commit); the writer in sqlite3's
    # default mode, where a data statement opens a transaction that `commit()` ends.
    conn = aiosqlite.connect(path, isolation_level=None if autocommit else "DEFERRED")
    # aiosqlite's thread is not a daemon: a process that ends without closing the store (a start
    # that fails later on, an unhandled error) would wait for it forever at exit. Left unclosed,
    # the index is only marked unclean, and rebuilt at the next start.
    thread = getattr(conn, "_thread", conn)  # aiosqlite < 0.21: the connection is the thread
    if isinstance(thread, threading.Thread):
        thread.daemon = True
    return await conn


async def _prepare_writer(db: aiosqlite.Connection) -> None:
    await db.execute("PRAGMA journal_mode = WAL")
    # Made here, not in SCHEMA: an index of schema 4 written before it gets it at its next open
    # instead of a rebuild. Few turns are running at any time, so it stays a few rows.
    await db.execute(RUNNING_TURNS_INDEX)
    # Until close() says otherwise, this index may lag the journals: if this process
    # dies, the next open rebuilds it. Written with a full sync so it cannot be lost.
    await db.execute("PRAGMA synchronous = FULL")
    await db.execute("INSERT OR REPLACE INTO state VALUES ('clean', '0')")
    await db.commit()
    # ...and copied into metadata.db itself: a flag only in the `-wal` file is lost with it (a
    # kill, then the WAL deleted or not carried along in a copy), and the file would still say
    # "closed cleanly" from the previous stop while it lacks everything written since.
    await _checkpoint(db)
    await db.execute("PRAGMA synchronous = NORMAL")


async def _checkpoint(db: aiosqlite.Connection) -> None:
    async with db.execute("PRAGMA wal_checkpoint(TRUNCATE)") as cursor:
        busy, _, _ = await cursor.fetchone() or (1, 0, 0)
    if busy:  # another process has metadata.db open (it should not): serve, but say so
        log.warning("metadata.db is in use elsewhere: a lost -wal file would go unnoticed")


async def _close_writer(db: aiosqlite.Connection, clean: bool = True) -> bool:
    try:
        if clean:
            await db.execute("PRAGMA synchronous = FULL")
            await db.execute("INSERT OR REPLACE INTO state VALUES ('clean', '1')")
            await db.commit()
    except sqlite3.Error:
        clean = False  # not marked clean: the next open rebuilds the index from the journals
    finally:
        await db.close()
    return clean


def parse_summaries(texts: list[str]) -> list[Summary]:
    """JSON summaries as dicts, parsed in one call (one array) rather than one by one."""
    parsed: list[Summary] = codec.parse("[" + ",".join(texts) + "]")
    return parsed


# Cursors are signed with a key of this process: docs/protocol.md promises that a cursor the
# server did not give out is refused, and only a MAC tells a forged, well-formed one apart.
_CURSOR_KEY: Final = secrets.token_bytes(32)
_CURSOR_MAC_BYTES: Final = 16


def _cursor_mac(payload: bytes) -> bytes:
    return hmac.digest(_CURSOR_KEY, payload, "sha256")[:_CURSOR_MAC_BYTES]


def encode_cursor(updated_at: str, cid: str) -> str:
    payload = codec.dumps([updated_at, cid])
    return base64.urlsafe_b64encode(_cursor_mac(payload) + payload).decode()


def decode_cursor(cursor: str) -> tuple[str, str]:
    """The position a cursor of `encode_cursor` names; ValueError for any other string."""
    try:
        raw = base64.urlsafe_b64decode(cursor.encode())
    except (ValueError, TypeError) as exc:
        raise ValueError("invalid cursor") from exc
    mac, payload = raw[:_CURSOR_MAC_BYTES], raw[_CURSOR_MAC_BYTES:]
    if not hmac.compare_digest(mac, _cursor_mac(payload)):
        raise ValueError("invalid cursor")
    updated_at, cid = codec.parse(payload)
    return str(updated_at), str(cid)


def fts_query(search: str) -> str:
    """Words typed by a user as an FTS5 query: each word a quoted prefix, all required.

    Quoting keeps FTS5 syntax (AND, NEAR, ", *, column:) from being interpreted.
    """
    words = search.split()
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words)


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)
