"""The store: conversations on disk (journals) plus their index, behind one async API.

Storage contract (docs/storage.md, "Layout" and "Durability order"):

- Durability order: every change is appended to a journal and fsynced (`JournalWriter`) *before*
  the index is updated; the caller broadcasts only after the method returns. So the index and the
  clients never know of a record the disk might lose.
- A conversation is a directory; creating it fsyncs ``conversations/``.
- Delete is crash-safe: the directory is renamed to ``.trash-<id>`` and ``conversations/`` fsynced
  (from then on the conversation is gone for every reader), then the index rows go, then the files.
  `reindex` and `Store.open` finish any deletion found half done.
- The index is disposable: missing, corrupt, of another schema version or not closed cleanly, it
  is rebuilt from the directories at open (logged), never a crash loop.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import sqlite3
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Concatenate, Final, ParamSpec, TypeVar

from openvaala_server.domain import meta as m
from openvaala_server.domain import records as r
from openvaala_server.domain.checkpoints import RECORD_TYPES as CHECKPOINT_RECORDS
from openvaala_server.domain.ids import is_valid_id
from openvaala_server.errors import StoreError
from openvaala_server.protocol import codec
from openvaala_server.protocol.json_types import JsonMapping
from openvaala_server.store import closed_mark, folded, journal, tail
from openvaala_server.store import index as ix
from openvaala_server.store.checkpoints import JOURNAL_NAME
from openvaala_server.store.journal import JournalWriteError, JournalWriter
from openvaala_server.store.paths import (
    IMPORT_STAGING_PREFIX,
    TRASH_PREFIX,
    CorruptConversation,
    DataDir,
    FormatTooNew,
    InvalidId,
    NotFound,
    check_id,
    is_real_dir,
    is_real_file,
)
from openvaala_server.store.reindex import ReindexReport, reindex
from openvaala_server.store.tail import item_of as _item

__all__ = [
    "CorruptConversation",
    "FormatTooNew",
    "InvalidId",
    "JournalWriteError",
    "NotFound",
    "Store",
    "StoreError",
]

log = logging.getLogger(__name__)
_META_CACHE_SIZE: Final = 512
_PRESENT_SIZE: Final = 4096
_CLOSE_WAIT_S: Final = 10.0
_MARKS_SIZE: Final = 1024
P = ParamSpec("P")
T = TypeVar("T")


def _tracked(
    method: Callable[Concatenate[Store, P], Awaitable[T]],
) -> Callable[Concatenate[Store, P], Coroutine[object, object, T]]:
    """Count a write while it runs, so `Store.close` can wait for it to reach the index."""

    @functools.wraps(method)
    async def tracked(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> T:
        self._write_began()
        try:
            return await method(self, *args, **kwargs)
        finally:
            self._write_ended()

    return tracked


class Store:
    def __init__(self, data_dir: DataDir, writer: JournalWriter, index: ix.Index) -> None:
        self.data_dir = data_dir
        self._writer = writer
        self._index = index
        # Folded metadata of recently written conversations, with the seq it reflects, so a
        # metadata append updates the index without re-reading the file.
        self._metas: OrderedDict[str, tuple[m.ConversationMeta, int]] = OrderedDict()
        self._index_stale = False  # an index update failed: rebuild at the next start
        # The file the index opened: a clean close marks only that one (store/closed_mark.py).
        self._index_file: closed_mark.FileId | None = None
        # Writes under way (journal, then index): close() lets them queue their index update.
        self._writes = 0
        self._no_writes = asyncio.Event()
        self._no_writes.set()
        self._rebuilding = asyncio.Lock()  # one rebuild of a damaged index at a time
        self._present: set[str] = set()  # conversations found on disk (see `_existing`)
        # Where the first item of each recently read page starts in its session file: the next
        # page back ends there, so it is read without searching (see `read_items`).
        self._marks: OrderedDict[tuple[Path, str], int] = OrderedDict()

    @classmethod
    async def open(cls, data_dir: DataDir) -> Store:
        """Raises `StoreError` naming the problem when the data directory cannot be used (not
        writable, metadata.db not a file); a damaged index is rebuilt instead."""
        await asyncio.to_thread(ix.check_sqlite)
        await asyncio.to_thread(data_dir.ensure)
        try:
            index, clean = await _open_index(data_dir)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the index {data_dir.metadata_db}: {exc}") from None
        except OSError as exc:
            raise StoreError(
                f"cannot rebuild the index {data_dir.metadata_db}: {exc.strerror or exc}"
            ) from None
        opened = await asyncio.to_thread(closed_mark.file_id, data_dir.metadata_db)
        writer = JournalWriter()
        await writer.start()
        store = cls(data_dir, writer, index)
        store._index_file = opened
        # A clean stop leaves no deletion half done (`delete_conversation`): `conversations/`,
        # which holds every conversation, is listed for them only after a crash (docs/design.md,
        # "Serving before the runtime is built").
        if not clean:
            await store._finish_deletions()
        await asyncio.to_thread(_remove_stale_imports, data_dir)
        return store

    def _write_began(self) -> None:
        self._writes += 1
        self._no_writes.clear()

    def _write_ended(self, _: object = None) -> None:
        self._writes -= 1
        if not self._writes:
            self._no_writes.set()

    def halt_writes(self, reason: str) -> None:
        """Refuse every later write with `reason` (the data directory is no longer ours)."""
        self._writer.halted = reason

    def _check_not_halted(self) -> None:
        if self._writer.halted is not None:
            raise JournalWriteError(self._writer.halted)

    async def close(self) -> None:
        await self._writer.close()
        # A write whose journal part is done may still be on its way to the index (it may read
        # the metadata file first): let it queue its update, which the index then commits.
        try:
            await asyncio.wait_for(self._no_writes.wait(), _CLOSE_WAIT_S)
        except TimeoutError:
            log.error("a write did not finish before close: the index will be rebuilt")
            self._index_stale = True
        if await self._index.close(clean=not self._index_stale):
            # Once every connection is closed: the file is then as the next start finds it.
            await asyncio.to_thread(closed_mark.write, self.data_dir.metadata_db, self._index_file)

    def _update_index(self, update: asyncio.Future[None]) -> None:
        """The journal is the truth: once an append is durable it has succeeded, and its index
        update commits behind it. An index that cannot follow (a full disk) is only marked
        stale, and rebuilt at the next start."""
        update.add_done_callback(self._index_updated)

    def _index_updated(self, update: asyncio.Future[None]) -> None:
        if update.cancelled() or (exc := update.exception()) is None:
            return
        if isinstance(exc, sqlite3.Error):
            log.error("index update failed (%s): it will be rebuilt at the next start", exc)
        else:
            log.error("index update failed: it will be rebuilt at the next start", exc_info=exc)
        self._index_stale = True

    async def reindex(self) -> ReindexReport:
        """Rebuild the index while open: the writer lets go of its files, the index is swapped."""
        await self._writer.forget()
        await self._index.close()
        self._metas.clear()
        self._present.clear()
        try:
            return await reindex(self.data_dir)
        finally:
            self._index = await ix.Index.open(self.data_dir.metadata_db)
            self._index_file = await asyncio.to_thread(
                closed_mark.file_id, self.data_dir.metadata_db
            )

    # --- conversations -----------------------------------------------------------------------

    def exists(self, cid: str) -> bool:
        if not is_valid_id(cid):
            return False
        directory = self.data_dir.conversation_dir(cid)
        return is_real_dir(directory) and is_real_file(self.data_dir.metadata_file(cid))

    def _existing(self, cid: str) -> Path:
        path = self.data_dir.metadata_file(check_id(cid))
        # Every append checks that its conversation exists: two lstats, a visible share of an
        # append's time on the event loop. A conversation seen once is taken to exist until this
        # store deletes it (`_delete_mark`) or reindexes; one removed behind the server's back
        # fails at the journal's own open instead.
        if cid in self._present:
            return path
        if not self.exists(cid):
            raise NotFound(f"no conversation {cid}")
        if len(self._present) >= _PRESENT_SIZE:
            self._present.clear()
        self._present.add(cid)
        return path

    @_tracked
    async def create_conversation(self, created: JsonMapping) -> m.ConversationMeta:
        """Create the directory and its metadata.jsonl from a conversation_created payload."""
        cid = check_id(created.get("conversationId"))
        check_id(created.get("rootSessionId"))
        self._check_not_halted()
        directory = self.data_dir.conversation_dir(cid)
        payload = {**created, "type": r.CONVERSATION_CREATED}
        payload.setdefault("formatVersion", r.FORMAT_VERSION)
        if payload["formatVersion"] != r.FORMAT_VERSION:
            raise FormatTooNew(f"this OpenVaala writes format {r.FORMAT_VERSION} only")

        metadata = self.data_dir.metadata_file(cid)

        def make_dir() -> None:
            try:
                directory.mkdir(mode=0o700)
            except FileExistsError:
                # Ids are never reused: only an earlier attempt at this very creation, which
                # failed before its first record was durable, may have left the directory.
                if not is_real_dir(directory) or _has_records(metadata):
                    raise
            journal.fsync_dir(directory.parent)

        try:
            await asyncio.to_thread(make_dir)
            stamped = await self._writer.append(metadata, [payload])
        except FileExistsError:
            raise
        except Exception:
            # A full or read-only disk, no file descriptor left: no conversation was created,
            # so none may be left behind to block a retry or show up in every reindex.
            await self._writer.forget(directory)
            await asyncio.to_thread(_remove_new_dir, directory)
            raise
        meta, _ = ix.fold_conversation(stamped)
        self._remember(cid, meta, stamped[-1]["seq"])
        self._update_index(self._index.put_conversation(meta))
        return m.created_from(stamped[0])

    @_tracked
    async def append_metadata(self, cid: str, payloads: Sequence[JsonMapping]) -> list[r.Record]:
        """Append to metadata.jsonl (durable), then update the index; return the stamped records."""
        path = self._existing(cid)
        stamped = await self._writer.append(path, payloads)
        if not stamped:
            return stamped
        meta, full = await self._apply(cid, path, stamped)
        turns = None if full else {str(rec["turnId"]) for rec in stamped if "turnId" in rec}
        title = full or any(rec["type"] == r.CONVERSATION_RENAMED for rec in stamped)
        self._update_index(self._index.put_conversation(meta, turns=turns, title=title))
        return stamped

    async def _apply(
        self, cid: str, path: Path, stamped: list[r.Record]
    ) -> tuple[m.ConversationMeta, bool]:
        """The conversation's metadata with `stamped` applied, and whether it was re-read whole."""
        cached = self._metas.get(cid)
        first, last = stamped[0]["seq"], stamped[-1]["seq"]
        if cached is not None and cached[1] == first - 1:
            meta = cached[0]
            for record in stamped:
                ix.apply_record(meta, record)
            self._remember(cid, meta, last)
            return meta, False
        # Not cached, or another append's records came in between: fold the file (it holds
        # ours, since they are durable) rather than guess the order — from its folded snapshot
        # when that still matches, as an open does (docs/storage.md, "The folded metadata").
        meta, seq = await asyncio.to_thread(folded.load_with_seq, path)
        self._remember(cid, meta, seq)
        # Not cached (the first append after a cold open): every other append indexed its own
        # turns already; only an order we did not see is indexed whole again.
        return meta, cached is not None

    def _remember(self, cid: str, meta: m.ConversationMeta, seq: int) -> None:
        self._metas[cid] = (meta, seq)
        self._metas.move_to_end(cid)
        while len(self._metas) > _META_CACHE_SIZE:
            self._metas.popitem(last=False)

    async def load_meta(self, cid: str) -> m.ConversationMeta | None:
        """The conversation as folded from its metadata.jsonl; None if there is none.

        Raises `FormatTooNew` (written by a newer OpenVaala) or `CorruptConversation`.
        """
        check_id(cid)
        if not self.exists(cid):
            return None
        try:
            # From the folded snapshot when it matches: a long history opens without replaying
            # every turn record (docs/storage.md, "The folded metadata").
            meta = await asyncio.to_thread(folded.load, self.data_dir.metadata_file(cid))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CorruptConversation(f"cannot read conversation {cid}: {exc}") from exc
        return meta

    async def delete_conversation(self, cid: str) -> None:
        """Mark (rename to trash, fsync), unindex, remove: any crash in between is finished by
        the next open or reindex."""
        check_id(cid)
        self._check_not_halted()
        if not self.exists(cid):  # on disk now, not as last seen (`_existing`)
            self._present.discard(cid)
            raise NotFound(f"no conversation {cid}")
        # Counted as a write from here and shielded: a caller cancelled by a stop does not cut
        # it between its steps, and `close` waits for it, so a clean stop leaves none half done.
        self._write_began()
        deleting = asyncio.ensure_future(self._delete(cid))
        deleting.add_done_callback(self._write_ended)
        await asyncio.shield(deleting)

    async def _delete(self, cid: str) -> None:
        await self._delete_mark(cid)
        await self._delete_unindex(cid)
        await self._delete_remove(cid)

    async def _delete_mark(self, cid: str) -> None:
        directory = self.data_dir.conversation_dir(cid)
        self._present.discard(cid)
        await self._writer.forget(directory)
        self._metas.pop(cid, None)

        def mark() -> None:
            trash = self.data_dir.trash_dir(cid)
            if trash.exists():  # an older, half-finished deletion of the same id
                shutil.rmtree(trash)
            os.rename(directory, trash)
            journal.fsync_dir(directory.parent)

        await asyncio.to_thread(mark)

    async def _delete_unindex(self, cid: str) -> None:
        # Shielded: a cancelled caller must not cancel the queued write's future, which reads
        # wait on (`Index.settle_writes`) while the delete itself still runs.
        await asyncio.shield(self._index.delete_conversation(cid))

    async def _delete_remove(self, cid: str) -> None:
        await asyncio.to_thread(shutil.rmtree, self.data_dir.trash_dir(cid), True)

    async def _finish_deletions(self) -> None:
        for cid in await asyncio.to_thread(_trashed, self.data_dir.conversations_dir):
            log.warning("finishing the deletion of conversation %s", cid)
            await self._delete_unindex(cid)
            await self._delete_remove(cid)

    # --- items -------------------------------------------------------------------------------

    @_tracked
    async def append_items(self, cid: str, sid: str, items: list[r.Item]) -> None:
        """Append completed items to a session's journal (durable), then index them."""
        self._existing(cid)
        path = self.data_dir.session_file(cid, sid)
        stamped = await self._writer.append(path, [{"type": r.ITEM, "item": it} for it in items])
        stats = ix.ItemStats()
        stats.add(stamped)
        self._update_index(self._index.add_items(cid, stats))

    async def read_all_items(self, cid: str, sid: str) -> list[r.Item]:
        path = self._session_path(cid, sid)
        try:
            items = await asyncio.to_thread(_read_items, path)
        except FileNotFoundError:
            return []
        # Said in the log: the one read that costs as much as the history is long (an open's
        # background load, a released history needed again; docs/design.md "Performance at scale").
        log.info("conversation %s: session %s read whole (%d items)", cid, sid, len(items))
        return items

    async def read_items(
        self, cid: str, sid: str, *, before_item: str | None = None, limit: int | None = None
    ) -> tuple[list[r.Item], bool]:
        """Items in order: the last `limit` before `before_item` (an itemId), and whether more
        exist before them. Reads the file backwards from where `before_item` is, so a page costs
        about the same wherever it is in a long history (see `_page`)."""
        if limit is None and before_item is None:
            return await self.read_all_items(cid, sid), False
        path = self._session_path(cid, sid)
        hint = None if before_item is None else self._marks.get((path, before_item))
        page = await asyncio.to_thread(_page, path, before_item, limit, hint)
        if page.more and page.items:
            first = page.items[0].get("itemId")
            if isinstance(first, str):
                self._marks[path, first] = page.start
                while len(self._marks) > _MARKS_SIZE:
                    self._marks.popitem(last=False)
        return page.items, page.more

    async def read_context(
        self, cid: str, sid: str, pinned: Collection[str], at_least: int
    ) -> tail.Tail:
        """The session's items from where its model context begins (or its last `at_least`,
        if earlier) to the end, read from the end of its file (store/tail.py)."""
        path = self._session_path(cid, sid)
        try:
            found = await asyncio.to_thread(tail.read_context, path, pinned, at_least)
        except FileNotFoundError:
            return tail.Tail([], 0, 0)
        if not found.older and len(found.items) > at_least:  # its context is all of it
            log.info(
                "conversation %s: session %s read whole (%d items)", cid, sid, len(found.items)
            )
        if found.older and found.items:
            self._marks[path, found.items[0]["itemId"]] = found.start
            while len(self._marks) > _MARKS_SIZE:
                self._marks.popitem(last=False)
        return found

    async def read_last_pages(
        self, cid: str, sids: Sequence[str], limit: int
    ) -> dict[str, tuple[list[r.Item], bool]]:
        """`read_items(cid, sid, limit=limit)` of every session in one trip to a worker thread:
        an open of a conversation with hundreds of subagent sessions would otherwise wait for
        the event loop and a thread once per session."""
        paths = {sid: self._session_path(cid, sid) for sid in sids}

        def read() -> dict[str, tuple[list[r.Item], bool]]:
            pages = {sid: _page(path, None, limit, None) for sid, path in paths.items()}
            return {sid: (page.items, page.more) for sid, page in pages.items()}

        return await asyncio.to_thread(read)

    def _session_path(self, cid: str, sid: str) -> Path:
        self._existing(cid)
        return self.data_dir.session_file(cid, sid)

    # --- checkpoints (docs/storage.md, "Checkpoints") ---------------------------------------

    def checkpoints_journal(self, cid: str) -> Path:
        return self._existing(cid).parent / JOURNAL_NAME

    async def append_checkpoints(self, cid: str, payloads: Sequence[JsonMapping]) -> None:
        """Append `files_changed` / `files_restored` records (durable) to checkpoints.jsonl."""
        await self._writer.append(self.checkpoints_journal(cid), payloads)

    async def read_checkpoints(self, cid: str) -> list[r.Record]:
        path = self.checkpoints_journal(cid)
        try:
            read = await asyncio.to_thread(journal.read_journal, path, CHECKPOINT_RECORDS)
        except FileNotFoundError:
            return []
        return read.records

    async def index_new(
        self, cid: str, read: Callable[[], tuple[m.ConversationMeta, ix.ItemStats] | None]
    ) -> None:
        """Index a conversation directory just moved into place (an import). `read` folds and
        counts its journals (None: it is gone); the index writer calls it, in a thread, behind
        the caller, and every read of the index waits for it (`Index.write_later`)."""
        check_id(cid)

        def op() -> ix.WriteOp:
            found = read()
            if found is None:
                return []
            meta, stats = found
            return ix.put_conversation_op(meta) + ix.add_items_op(meta.conversation_id, stats)

        self._update_index(self._index.write_later(op))

    # --- the index ---------------------------------------------------------------------------

    async def list_conversations(
        self,
        *,
        archived: bool = False,
        search: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[ix.Summary], str | None]:
        """ConversationSummary dicts, most recently updated first; `archived` picks the archived
        ones instead of the active ones. The cursor is opaque: pass back what was returned."""
        rows, next_cursor = await self.list_summaries(
            archived=archived, search=search, limit=limit, cursor=cursor
        )
        return ix.parse_summaries([text for _cid, text in rows]), next_cursor

    async def list_summaries(
        self,
        *,
        archived: bool = False,
        search: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[tuple[str, str]], str | None]:
        """As `list_conversations`, each summary as (conversation id, JSON text): what the
        daemon sends on as it is (see `index.SUMMARY_JSON`)."""
        return await self._read_index(
            lambda index: index.list_summaries(
                archived=archived, search=search, limit=limit, cursor=cursor
            )
        )

    async def get_summary(self, cid: str) -> ix.Summary | None:
        check_id(cid)
        return await self._read_index(lambda index: index.get_summary(cid))

    async def running_conversations(self) -> list[str]:
        """Conversations whose metadata says a turn is still running (cut by a crash or kill)."""
        return await self._read_index(lambda index: index.running_conversations())

    async def fork_summaries(self) -> list[ix.Summary]:
        return await self._read_index(lambda index: index.fork_summaries())

    async def search_messages(self, cids: list[str], search: str, limit: int) -> list[str]:
        for cid in cids:
            check_id(cid)
        return await self._read_index(lambda index: index.search_messages(cids, search, limit))

    async def search_snippets(self, cids: list[str], search: str) -> dict[str, str]:
        for cid in cids:
            check_id(cid)
        return await self._read_index(lambda index: index.search_snippets(cids, search))

    async def dump_index(self) -> dict[str, list[ix.Row]]:
        """Every row of the live index (for tests and `reindex --check`)."""
        return await self._read_index(lambda index: index.dump())

    async def _read_index(self, read: Callable[[ix.Index], Awaitable[T]]) -> T:
        """A read of the index; one that finds it damaged rebuilds it from the directories
        (the index is disposable) and reads again, rather than fail every later request."""
        index = self._index
        try:
            return await read(index)
        except sqlite3.DatabaseError as exc:
            if not ix.is_corruption(exc):
                raise
            async with self._rebuilding:
                if self._index is index:  # not rebuilt meanwhile by another reader
                    log.error("the index is damaged (%s): rebuilding it", exc)
                    report = await self.reindex()
                    log.warning("reindex: %d conversations indexed", len(report.indexed))
        return await read(self._index)


def _has_records(metadata: Path) -> bool:
    try:
        return os.lstat(metadata).st_size > 0
    except FileNotFoundError:
        return False


def _remove_new_dir(directory: Path) -> None:
    try:
        shutil.rmtree(directory)
        journal.fsync_dir(directory.parent)
    except FileNotFoundError:
        pass
    except OSError as exc:  # the retry reuses it (see `create_conversation`)
        log.warning("could not remove %s after a failed creation: %s", directory, exc)


async def _rebuild(data_dir: DataDir, reason: str) -> None:
    log.warning("rebuilding %s: %s", data_dir.metadata_db, reason)
    report = await reindex(data_dir)
    log.warning(
        "reindex: %d conversations indexed, %d skipped", len(report.indexed), len(report.skipped)
    )


def _why_rebuild(db: Path) -> tuple[str | None, bool]:
    """Why the index must be rebuilt (None: it need not), and whether the last stop was clean."""
    # Every page is checked unless the file is as the last clean close left it; the mark goes
    # before anything writes to the file (docs/storage.md, "The index's check at start").
    untouched = closed_mark.unchanged(db)
    closed_mark.clear(db)
    return ix.needs_rebuild(db, check_pages=not untouched), untouched


async def _open_index(data_dir: DataDir) -> tuple[ix.Index, bool]:
    """The index, rebuilt first if it is missing, damaged, stale or of another schema; and
    whether the data directory is as a clean stop left it."""
    if data_dir.metadata_db.is_dir():
        raise StoreError(f"{data_dir.metadata_db} is a directory: move it away, it is rebuilt")
    reason, clean = await asyncio.to_thread(_why_rebuild, data_dir.metadata_db)
    if reason is None:
        try:
            return await ix.Index.open(data_dir.metadata_db), clean
        except sqlite3.DatabaseError as exc:
            if not ix.is_corruption(exc):
                raise
            reason = f"damaged ({exc})"
    await _rebuild(data_dir, reason)  # a rebuild finishes half-done deletions itself
    return await ix.Index.open(data_dir.metadata_db), True


def _trashed(conversations: Path) -> list[str]:
    """The conversations whose deletion a crash cut (`.trash-<id>`), picked out in the worker
    thread: the directory holds every conversation, and the loop serves meanwhile (docs/design.md,
    "Serving before the runtime is built")."""
    names = os.listdir(conversations)
    cids = [name.removeprefix(TRASH_PREFIX) for name in names if name.startswith(TRASH_PREFIX)]
    return [cid for cid in cids if is_valid_id(cid)]


def _remove_stale_imports(data_dir: DataDir) -> None:
    """Remove the staging directories of imports cut by a crash: the store is opened only by
    the server holding the data directory's lock, so no import is under way."""
    for entry in os.scandir(data_dir.root):
        name = entry.name
        staged = name.startswith(IMPORT_STAGING_PREFIX) and entry.is_dir(follow_symlinks=False)
        if staged and is_valid_id(name.removeprefix(IMPORT_STAGING_PREFIX)):
            log.warning("removing %s, left by an import that did not finish", name)
            shutil.rmtree(entry.path, ignore_errors=True)


def _read_items(path: Path) -> list[r.Item]:
    """Every item of a session file, picked out in the worker thread too (tens of thousands of
    records: on the event loop that would stall every client)."""
    read = journal.read_journal(path)
    return [it for rec in read.records if rec["type"] == r.ITEM and (it := _item(rec)) is not None]


@dataclass(frozen=True)
class _Page:
    items: list[r.Item]  # in file order
    more: bool  # an item comes before them
    start: int  # where the line of `items[0]` starts in the file (0 when there is none)


def _page(path: Path, before_item: str | None, limit: int | None, hint: int | None) -> _Page:
    """The last `limit` items before the item `before_item` (the end without one): the answer a
    read of the whole file gives, reading only the lines of the page and, to find `before_item`
    when `hint` (where it was seen) is not right, a byte search back to it."""
    try:
        with open(path, "rb") as f:
            end = journal.good_end(f)
            if before_item is not None:
                found = _find_item(f, end, before_item, hint)
                if found is None:
                    raise NotFound(f"no item {before_item}")
                end = found
            items: list[r.Item] = []
            start = 0
            for offset, line in journal.reverse_lines(f, end):
                record = journal.parse_line(line)
                if isinstance(record, str) or record["type"] != r.ITEM:
                    continue  # what `_read_items` skips too
                item = _item(record)
                if item is None:
                    continue
                if limit is not None and len(items) == limit:
                    return _Page(items[::-1], True, start)
                items.append(item)
                start = offset
            return _Page(items[::-1], False, start)
    except FileNotFoundError:
        if before_item is not None:
            raise NotFound(f"no item {before_item}") from None
        return _Page([], False, 0)


def _find_item(f: BinaryIO, end: int, item_id: str, hint: int | None) -> int | None:
    """Where the line of the item `item_id` starts, or None. Item ids are unique in a session
    file (each item gets a new one), so the last line that carries it is the line.

    The byte search looks for the item's own key as the writer spells it (orjson, no spaces);
    every line it finds is parsed and checked, so a match elsewhere (a nested object, another
    record type) is passed over. A file written otherwise is not found here: the caller then
    reads the whole history, which finds it (or says it is not there)."""
    if hint is not None:
        line = journal.line_at(f, hint, end)
        if line is not None and _carries(line, item_id):
            return hint
    needle = b'"itemId":' + codec.dumps(item_id)
    for offset, line in journal.lines_containing(f, end, needle):
        if _carries(line, item_id):
            return offset
    return None


def _carries(line: bytes, item_id: str) -> bool:
    record = journal.parse_line(line)
    return (
        not isinstance(record, str)
        and record["type"] == r.ITEM
        and (item := _item(record)) is not None
        and item["itemId"] == item_id
    )
