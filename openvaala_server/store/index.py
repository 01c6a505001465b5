"""metadata.db: the SQLite index of conversations, sessions, turns and searchable text.

Storage contract: the index holds nothing the directories don't. Every row is a function of the
journal files (`conversation_rows`), computed the same way by the live store and by `reindex`, so a
rebuilt index equals the live one. A missing or corrupt file, another schema version, or a file the
last process did not close cleanly (it may have died between a journal fsync and the index update)
is not repaired in place: `needs_rebuild` says so and the store rebuilds it from the directories.

Writes go through ONE connection owned by ONE writer task, which batches whatever is pending into a
single transaction run by one call into the writer's thread; reads use a separate connection in its
own thread (WAL lets them run alongside the writer). Both are plain sqlite3: aiosqlite's thread
round trip per statement cost more than the journal's fsync. The
index is derived data, so it runs with ``synchronous=NORMAL``: a power cut may lose its last
commits, which the "closed cleanly" flag (written with a full sync) turns into a rebuild.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import logging
import secrets
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import compress, repeat
from pathlib import Path
from typing import Any, Final, TypeVar

import orjson

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.store.paths import StoreError

log = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 2
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
TEXTS_INSERT_TRIGGER: Final = """
CREATE TRIGGER texts_ai AFTER INSERT ON texts BEGIN
    INSERT INTO search (rowid, text) VALUES (new.rowid, new.text);
END;
"""
# Both created apart from SCHEMA too: reindex builds them after the bulk load.
TEXTS_INDEX: Final = "CREATE INDEX texts_by_conversation ON texts (conversation_id, kind)"
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
-- Searchable text (titles and messages). The FTS5 table uses it as external content, so a
-- conversation's rows are found by an ordinary index when it is renamed or deleted.
CREATE TABLE texts (
    rowid INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL
);
"""
    + TEXTS_INDEX
    + """;
CREATE VIRTUAL TABLE search USING fts5 (text, content='texts', content_rowid='rowid');
CREATE TRIGGER texts_ad AFTER DELETE ON texts BEGIN
    INSERT INTO search (search, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
    + TEXTS_INSERT_TRIGGER
)
TABLES: Final = ("conversations", "sessions", "turns", "texts")
TITLE: Final = "title"
MESSAGE: Final = "message"
MESSAGE_TYPES: Final = frozenset({r.USER_MESSAGE, r.AGENT_MESSAGE})

Row = tuple[Any, ...]
T = TypeVar("T")


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
    texts: list[str] = field(default_factory=list)
    updated_at: str = ""

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
        if not _STR.issuperset(map(type, texts)):
            return False
        self.updated_at = max(self.updated_at, max(stamps))
        self.message_count += len(messages)
        self.texts += filter(None, texts)
        return True


# dict.get as a plain function: applied with map() over records, it raises TypeError on a
# non-dict, which sends the batch to the checked path.
_GET: Final[Callable[[Any, str], Any]] = dict.get
_ITEM_ONLY: Final = frozenset({r.ITEM})
_STR: Final = frozenset({str})


def conversation_row(meta: m.ConversationMeta, message_count: int, updated_at: str) -> Row:
    forked = orjson.dumps(meta.forked_from, option=orjson.OPT_SORT_KEYS).decode()
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


def needs_rebuild(path: Path) -> str | None:
    """Why the index at `path` cannot be used as it is, or None if it can."""
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


def dump(conn: sqlite3.Connection) -> dict[str, list[Row]]:
    """Every row of every table, sorted, without SQLite's own rowids: what 'equal indexes' means."""
    return {
        table: sorted(
            conn.execute(
                "SELECT conversation_id, kind, text FROM texts"
                if table == "texts"
                else f"SELECT * FROM {table}"
            ).fetchall(),
            key=repr,
        )
        for table in TABLES
    }


# --- the live index ----------------------------------------------------------------------------

# How long the first write of a batch waits for others to share its commit. Nothing waits for an
# index write but reads, which cut the wait short, so waiting costs no one time; sharing a commit
# saves, per write, a transaction, a new FTS5 segment and its WAL frames (which the journal's next
# syncfs would flush too): with 8 conversations appending at once, a third of the index's CPU.
COALESCE_S: Final = 0.01

# A write op runs inside the writer thread's open transaction: plain sqlite3 calls, no await, so
# a batch of any size costs one hop to the writer thread and one commit.
_Op = Callable[[sqlite3.Connection], None]

ADD_ITEMS: Final = (
    "UPDATE conversations SET message_count = message_count + ?, "
    "updated_at = max(updated_at, ?) WHERE id = ?"
)


@dataclass
class _Job:
    op: _Op
    future: asyncio.Future[None]


class Index:
    """The live index: one writer task feeding one writer thread and connection; one reader
    thread and connection.

    Both connections are plain sqlite3, each used only from its own single-thread executor.
    (aiosqlite costs a thread round trip per statement, which made the index, not the fsync,
    the limit of concurrent appends.)
    """

    def __init__(
        self,
        writer: sqlite3.Connection,
        reader: sqlite3.Connection,
        write_pool: ThreadPoolExecutor,
        read_pool: ThreadPoolExecutor,
    ) -> None:
        self._writer = writer
        self._reader = reader
        self._write_pool = write_pool
        self._read_pool = read_pool
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
        loop = asyncio.get_running_loop()
        write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-writer")
        read_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-reader")
        try:
            writer = await loop.run_in_executor(write_pool, _open_writer, path)
            try:
                reader = await loop.run_in_executor(read_pool, _connect, path)
            except BaseException:
                await loop.run_in_executor(write_pool, writer.close)
                raise
        except BaseException:
            write_pool.shutdown(wait=False)
            read_pool.shutdown(wait=False)
            raise
        return cls(writer, reader, write_pool, read_pool)

    async def close(self, clean: bool = True) -> None:
        """Stop the writer; `clean=False` leaves the index marked for a rebuild at next open.

        A write that failed (its caller did not wait for it) also leaves it marked, even one
        that was still queued when this was called."""
        self._closing = True
        self._hurry.set()
        await self._jobs.put(None)
        await self._task
        clean = clean and not self._write_failed
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._write_pool, _close_writer, self._writer, clean)
            await loop.run_in_executor(self._read_pool, self._reader.close)
        finally:
            self._write_pool.shutdown(wait=False)
            self._read_pool.shutdown(wait=False)

    def _enqueue(self, op: _Op, *, awaited: bool = False) -> asyncio.Future[None]:
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

        While one batch commits, the next accumulates: under load, the index costs one thread hop
        and one commit per batch, not per append. The first write of a batch also waits up to
        `COALESCE_S` for others, unless something is waiting for it (`_hurry`)."""
        loop = asyncio.get_running_loop()
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
            jobs = [job for job in batch if job is not None]
            if jobs:
                ops = [job.op for job in jobs]
                try:
                    errors = await loop.run_in_executor(self._write_pool, self._run_batch, ops)
                except Exception as exc:  # the executor itself failed: fail every caller
                    errors = [exc] * len(jobs)
                for job, error in zip(jobs, errors, strict=True):
                    self._write_failed = self._write_failed or error is not None
                    _settle(job.future, error)
            if None in batch:
                return

    def _run_batch(self, ops: list[_Op]) -> list[BaseException | None]:
        """(In the writer thread.) One transaction for all; if it fails, one each, so a bad op
        fails only its own caller."""
        try:
            self._transaction(ops)
        except Exception:
            results: list[BaseException | None] = []
            for op in ops:
                try:
                    self._transaction([op])
                except Exception as exc:
                    log.exception("index update failed")
                    results.append(exc)
                else:
                    results.append(None)
            return results
        return [None] * len(ops)

    def _transaction(self, ops: list[_Op]) -> None:
        db = self._writer
        db.execute("BEGIN")
        try:
            for op in ops:
                op(db)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        # Writes are queued without waiting (see `put_conversation`): a read first lets every
        # earlier one commit, so a caller always reads what it wrote.
        await self.settle_writes()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._read_pool, fn, self._reader)

    # --- writes --------------------------------------------------------------------------------

    # Writes return at once with a future: the journal append they follow is already durable, so
    # nothing waits for the index but reads (`_read`), and the next journal batch overlaps with
    # this commit. A crash before the commit leaves the index marked unclean: rebuilt at start.

    def put_conversation(
        self, meta: m.ConversationMeta, *, turns: set[str] | None = None, title: bool = True
    ) -> asyncio.Future[None]:
        """Upsert a conversation's metadata rows (its counts from items are kept)."""
        row = conversation_row(meta, 0, meta.updated_at)
        sessions = session_rows(meta)
        turn_list = turn_rows(meta, turns)
        cid = meta.conversation_id

        def op(db: sqlite3.Connection) -> None:
            db.execute(UPSERT_CONVERSATION, row)
            db.executemany(UPSERT_SESSION, sessions)
            if turn_list:
                db.executemany(UPSERT_TURN, turn_list)
            if title:
                db.execute("DELETE FROM texts WHERE conversation_id = ? AND kind = ?", (cid, TITLE))
                db.execute(INSERT_TEXT, (cid, TITLE, row[1]))

        return self._enqueue(op)

    def add_items(self, cid: str, stats: ItemStats) -> asyncio.Future[None]:
        counts = (stats.message_count, stats.updated_at, cid)
        texts = [(cid, MESSAGE, t) for t in stats.texts]

        def op(db: sqlite3.Connection) -> None:
            db.execute(ADD_ITEMS, counts)
            if texts:
                db.executemany(INSERT_TEXT, texts)

        return self._enqueue(op)

    def delete_conversation(self, cid: str) -> asyncio.Future[None]:
        def op(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM conversations WHERE id = ?", (cid,))
            for table in ("sessions", "turns", "texts"):
                db.execute(f"DELETE FROM {table} WHERE conversation_id = ?", (cid,))

        return self._enqueue(op, awaited=True)

    # --- reads ---------------------------------------------------------------------------------

    async def list_summaries(
        self, *, archived: bool, search: str | None, limit: int, cursor: str | None
    ) -> tuple[list[tuple[str, str]], str | None]:
        """(conversation id, ConversationSummary as JSON text) pairs, newest first, and the
        cursor of the next page (None on the last)."""
        where = ["archived = ?"]
        params: list[Any] = [int(archived)]
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
                "ON t.rowid = search.rowid WHERE search MATCH ?)"
            )
            params.append(query)
        sql = (
            f"SELECT id, summary FROM conversations WHERE {' AND '.join(where)} "
            "ORDER BY updated_at DESC, id DESC LIMIT ?"
        )
        limit = max(0, limit)
        params.append(limit + 1)

        def run(db: sqlite3.Connection) -> tuple[list[tuple[str, str]], str | None]:
            rows: list[tuple[str, str]] = db.execute(sql, params).fetchall()
            more = len(rows) > limit
            del rows[limit:]
            if not (more and rows):
                return rows, None
            last = orjson.loads(rows[-1][1])
            return rows, encode_cursor(last["updatedAt"], last["conversationId"])

        return await self._read(run)

    async def get_summary(self, cid: str) -> dict[str, Any] | None:
        def run(db: sqlite3.Connection) -> dict[str, Any] | None:
            row = db.execute("SELECT summary FROM conversations WHERE id = ?", (cid,)).fetchone()
            return None if row is None else parse_summaries([row[0]])[0]

        return await self._read(run)

    async def fork_summaries(self) -> list[dict[str, Any]]:
        """The summary of every fork and rewind (the conversation tree's branches)."""

        def run(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = db.execute("SELECT summary FROM conversations WHERE forked_from IS NOT NULL")
            return parse_summaries([row[0] for row in rows])

        return await self._read(run)

    async def search_messages(self, cids: list[str], search: str, limit: int) -> list[str]:
        """The message texts of these conversations that match `search` (every word, as a
        prefix), best match first: what `search_history` looks up (tools/history.py)."""
        query = fts_query(search)
        if not query or not cids:
            return []
        marks = ",".join("?" * len(cids))
        sql = (
            "SELECT DISTINCT t.text FROM search JOIN texts t ON t.rowid = search.rowid "
            f"WHERE search MATCH ? AND t.kind = ? AND t.conversation_id IN ({marks}) "
            "ORDER BY search.rank LIMIT ?"
        )
        params = [query, MESSAGE, *cids, max(0, limit)]

        def run(db: sqlite3.Connection) -> list[str]:
            return [row[0] for row in db.execute(sql, params).fetchall()]

        return await self._read(run)

    async def dump(self) -> dict[str, list[Row]]:
        return await self._read(dump)


def _connect(path: Path) -> sqlite3.Connection:
    # Each connection is used by one thread at a time (its executor's); the check is off only
    # because close() may come from another single-thread executor instance.
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False)


def _open_writer(path: Path) -> sqlite3.Connection:
    db = _connect(path)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        # Until close() says otherwise, this index may lag the journals: if this process
        # dies, the next open rebuilds it. Written with a full sync so it cannot be lost.
        db.execute("PRAGMA synchronous = FULL")
        db.execute("INSERT OR REPLACE INTO state VALUES ('clean', '0')")
        db.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        db.close()
        raise
    return db


def _close_writer(db: sqlite3.Connection, clean: bool = True) -> None:
    try:
        if clean:
            db.execute("PRAGMA synchronous = FULL")
            db.execute("INSERT OR REPLACE INTO state VALUES ('clean', '1')")
    except sqlite3.Error:
        pass  # not marked clean: the next open rebuilds the index from the journals
    finally:
        db.close()


def parse_summaries(texts: list[str]) -> list[dict[str, Any]]:
    """JSON summaries as dicts, parsed in one call (one array) rather than one by one."""
    parsed: list[dict[str, Any]] = orjson.loads("[" + ",".join(texts) + "]")
    return parsed


# Cursors are signed with a key of this process: docs/protocol.md promises that a cursor the
# server did not give out is refused, and only a MAC tells a forged, well-formed one apart.
_CURSOR_KEY: Final = secrets.token_bytes(32)
_CURSOR_MAC_BYTES: Final = 16


def _cursor_mac(payload: bytes) -> bytes:
    return hmac.digest(_CURSOR_KEY, payload, "sha256")[:_CURSOR_MAC_BYTES]


def encode_cursor(updated_at: str, cid: str) -> str:
    payload = orjson.dumps([updated_at, cid])
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
    updated_at, cid = orjson.loads(payload)
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
