"""Concurrent appends are grouped (journal group commit, one index transaction per batch), yet
each caller gets what it would alone: durable records, an index equal to a rebuild."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from openvaala_server.domain.ids import new_id
from openvaala_server.errors import StoreError
from openvaala_server.store import folded, journal
from openvaala_server.store import index as ix
from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.support.events import until

from .helpers import created, message, rebuilt_dump


def count_batches(store: Store) -> list[int]:
    """From now on, the size of each batch the index writer commits, in order."""
    batches: list[int] = []
    run_batch = store._index._run_batch

    async def counting(ops: list[ix.WriteOp]) -> list[BaseException | None]:
        batches.append(len(ops))
        return await run_batch(ops)

    store._index._run_batch = counting  # type: ignore[method-assign]
    return batches


async def test_many_concurrent_appends_are_durable_and_indexed(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    targets = []
    for n in range(12):
        c = created(f"conversation {n}")
        await store.create_conversation(c)
        targets.append((c["conversationId"], c["rootSessionId"]))
    await store._index.settle_writes()  # count only the writes below
    batches = count_batches(store)

    async def writer(cid: str, sid: str) -> list[str]:
        texts = []
        for i in range(15):
            text = f"word{i} in {cid}"
            await store.append_items(cid, sid, [message(text)])
            texts.append(text)
            if i % 5 == 0:
                tid = new_id()
                await store.append_metadata(
                    cid, [{"type": "turn_started", "turnId": tid, "sessionId": sid}]
                )
                await store.append_metadata(
                    cid, [{"type": "turn_ended", "turnId": tid, "status": "completed"}]
                )
        return texts

    written = await asyncio.gather(*(writer(cid, sid) for cid, sid in targets))
    await store._index.settle_writes()  # index updates commit behind the appends
    # Grouped: far fewer index transactions than updates.
    assert sum(batches) == 12 * (15 + 6) and len(batches) < sum(batches)
    for (cid, sid), texts in zip(targets, written, strict=True):
        records = journal.read_journal(data_dir.session_file(cid, sid)).records
        assert [rec["item"]["text"] for rec in records] == texts
        assert [rec["seq"] for rec in records] == list(range(1, 16))
        summary = await store.get_summary(cid)
        assert summary is not None
        assert summary["messageCount"] == 15 and summary["turnCount"] == 3
    assert await store.dump_index() == await rebuilt_dump(data_dir, tmp_path)
    page, _ = await store.list_conversations(search="word14", limit=50)
    assert len(page) == 12


async def test_a_failing_index_update_fails_only_its_caller(store: Store) -> None:
    targets = []
    for n in range(4):
        c = created(f"conversation {n}")
        await store.create_conversation(c)
        targets.append((c["conversationId"], c["rootSessionId"]))

    bad = [ix.Statement("INSERT INTO no_such_table VALUES (1)", [()], frozenset({"x"}))]
    results = await asyncio.gather(
        store._index._enqueue(bad),
        *(store.append_items(cid, sid, [message("fine")]) for cid, sid in targets),
        return_exceptions=True,
    )
    assert isinstance(results[0], sqlite3.OperationalError)
    assert results[1:] == [None] * 4
    for cid, _ in targets:
        summary = await store.get_summary(cid)
        assert summary is not None and summary["messageCount"] == 1


async def test_listing_pages_cover_everything_once(store: Store) -> None:
    cids = []
    for n in range(23):
        c = created(f"conversation {n}")
        await store.create_conversation(c)
        cids.append(c["conversationId"])
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = await store.list_conversations(limit=5, cursor=cursor)
        seen += [s["conversationId"] for s in page]
        if cursor is None:
            break
    assert seen == cids[::-1]
    everything, cursor = await store.list_conversations(limit=23)
    assert cursor is None and [s["conversationId"] for s in everything] == seen
    none, cursor = await store.list_conversations(limit=0)
    assert none == [] and cursor is None


async def test_an_append_does_not_wait_for_the_index_but_reads_see_it(store: Store) -> None:
    c = created("write-behind")
    cid, sid = c["conversationId"], c["rootSessionId"]
    await store.create_conversation(c)
    gate = asyncio.Event()
    run_batch = store._index._run_batch

    async def held(ops: list[ix.WriteOp]) -> list[BaseException | None]:
        # The index writer waits here until the test lets it go.
        await asyncio.wait_for(gate.wait(), 10)
        return await run_batch(ops)

    store._index._run_batch = held  # type: ignore[method-assign]
    settling = asyncio.Event()
    settle_writes = store._index.settle_writes

    async def noted() -> None:
        settling.set()  # the read has reached the index
        await settle_writes()

    store._index.settle_writes = noted  # type: ignore[method-assign]
    # The journal append is durable and the call returns while the index is still held...
    await asyncio.wait_for(store.append_items(cid, sid, [message("first")]), 5)
    read = asyncio.ensure_future(store.get_summary(cid))
    await asyncio.wait_for(settling.wait(), 10)
    assert not read.done()  # ...but a read waits for every earlier index write
    gate.set()
    summary = await asyncio.wait_for(read, 5)
    assert summary is not None and summary["messageCount"] == 1


async def test_index_writes_wait_to_share_a_commit_but_never_keep_a_reader_waiting(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An hour: if anything that waits for the index sat out the coalescing wait, it would hang.
    monkeypatch.setattr(ix, "COALESCE_S", 3600.0)
    store = await Store.open(data_dir)
    batches = count_batches(store)
    try:
        convs = [created(f"coalesced {n}") for n in range(3)]
        for c in convs:
            await store.create_conversation(c)
        for n, c in enumerate(convs):  # one write after another, none waited for
            await store.append_items(c["conversationId"], c["rootSessionId"], [message(f"m{n}")])
        # All six are queued; the writer has taken the first and waits for company (or, were it
        # not waiting, has committed a batch already).
        await until(lambda: store._index._jobs.qsize() == 5 or batches != [])
        assert batches == []  # still waiting for more writes to join
        # A read hurries them: one commit for all six, and the read sees every one.
        found, _ = await asyncio.wait_for(store.list_conversations(search="coalesced"), 10)
        assert len(found) == 3 and all(f["messageCount"] == 1 for f in found)
        assert batches == [6]
        # A delete is waited for by its caller: it does not wait for company either.
        await asyncio.wait_for(store.delete_conversation(convs[0]["conversationId"]), 10)
        rename = {"type": "conversation_renamed", "title": "x", "titleSource": "user"}
        await asyncio.wait_for(store.append_metadata(convs[1]["conversationId"], [rename]), 10)
    finally:
        await asyncio.wait_for(store.close(), 10)  # close commits what is queued, at once
    assert ix.needs_rebuild(data_dir.metadata_db) is None
    reopened = await Store.open(data_dir)
    try:
        found, _ = await reopened.list_conversations()
        assert sorted(f["title"] for f in found) == ["coalesced 2", "x"]
    finally:
        await reopened.close()


async def test_an_index_write_failing_while_the_store_closes_leaves_it_to_be_rebuilt(
    data_dir: DataDir,
) -> None:
    store = await Store.open(data_dir)
    c = created("closing")
    await store.create_conversation(c)

    bad = [ix.Statement("INSERT INTO no_such_table VALUES (1)", [()], frozenset({"x"}))]
    queued = store._index._enqueue(bad)  # still queued when close() starts
    store._update_index(queued)
    await store.close()
    assert ix.needs_rebuild(data_dir.metadata_db) == "the last server did not close it cleanly"


async def test_close_lets_a_write_under_way_reach_the_index(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await Store.open(data_dir)
    c = created("closing while writing")
    cid, sid = c["conversationId"], c["rootSessionId"]
    await store.create_conversation(c)
    store._metas.clear()  # the next metadata append re-reads its file before the index update
    real_load = folded.load_with_seq
    reading, release = threading.Event(), threading.Event()

    def slow_load(path: Path) -> object:
        # A slow disk: the re-read goes on until the test has seen close() start waiting.
        reading.set()
        release.wait(10)
        return real_load(path)

    monkeypatch.setattr(folded, "load_with_seq", slow_load)
    journal_closed = asyncio.Event()
    close_writer = store._writer.close

    async def noted_close() -> None:
        await close_writer()
        journal_closed.set()  # close() goes on to wait for writes under way, with no await

    store._writer.close = noted_close  # type: ignore[method-assign]
    turn = {"type": "turn_started", "turnId": new_id(), "sessionId": sid}
    append = asyncio.ensure_future(store.append_metadata(cid, [turn]))
    assert await asyncio.to_thread(reading.wait, 10)  # the append's re-read is under way
    closing = asyncio.ensure_future(store.close())
    await asyncio.wait_for(journal_closed.wait(), 10)
    release.set()
    await asyncio.wait_for(closing, 10)
    assert [rec["type"] for rec in await append] == ["turn_started"]
    # Closed cleanly and complete: the next start trusts the index, and it has the turn.
    assert ix.needs_rebuild(data_dir.metadata_db) is None
    reopened = await Store.open(data_dir)
    try:
        summary = await reopened.get_summary(cid)
        assert summary is not None and summary["turnCount"] == 1
    finally:
        await reopened.close()


async def test_an_index_write_after_close_fails_at_once(data_dir: DataDir) -> None:
    store = await Store.open(data_dir)
    await store.close()

    write = store._index._enqueue([ix.Statement("SELECT 1", [()], frozenset())])
    assert write.done() and isinstance(write.exception(), sqlite3.ProgrammingError)


async def test_an_sqlite_too_old_for_the_index_is_named(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 26, 0))
    with pytest.raises(StoreError, match=r"needs SQLite 3\.31\.0 or newer.*SQLite 3\.26\.0"):
        await Store.open(data_dir)
