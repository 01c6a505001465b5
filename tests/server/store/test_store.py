"""The Store API: durable first, then the index; listing, search, paging, delete, rebuilds."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import orjson
import pytest

from openvaala_server.domain.ids import new_id
from openvaala_server.store import journal
from openvaala_server.store.paths import DataDir, FormatTooNew, InvalidId, NotFound
from openvaala_server.store.store import Store

from .helpers import created, message, rebuilt_dump


async def test_create_append_and_summary(store: Store, data_dir: DataDir, tmp_path: Path) -> None:
    c = created("Fix the parser")
    cid, sid = c["conversationId"], c["rootSessionId"]
    meta = await store.create_conversation(c)
    assert meta.title == "Fix the parser" and store.exists(cid)
    await store.append_items(cid, sid, [message("hello"), message("hi!", "agent_message")])
    tid = new_id()
    await store.append_metadata(cid, [{"type": "turn_started", "turnId": tid, "sessionId": sid}])
    summary = await store.get_summary(cid)
    assert summary is not None
    assert summary["messageCount"] == 2 and summary["turnCount"] == 1
    assert summary["status"] == "running" and summary["archived"] is False
    [last] = journal.read_journal(data_dir.session_file(cid, sid)).records[-1:]
    assert summary["updatedAt"] >= last["ts"]
    assert await store.dump_index() == await rebuilt_dump(data_dir, tmp_path)


async def test_list_is_newest_first_with_an_opaque_cursor(store: Store) -> None:
    cids = []
    for n in range(7):
        c = created(f"conversation {n}")
        await store.create_conversation(c)
        cids.append(c["conversationId"])
    # Touching the oldest makes it the newest.
    await store.append_items(cids[0], new_id(), [message("bump")])
    expected = [cids[0], *reversed(cids[1:])]
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = await store.list_conversations(limit=3, cursor=cursor)
        seen += [s["conversationId"] for s in page]
        if cursor is None:
            break
    assert seen == expected


async def test_summaries_keep_every_character_and_type(store: Store, tmp_path: Path) -> None:
    # Summaries are built by SQLite as JSON text and sent on as they are: a title with a NUL,
    # quotes, a backslash, a newline and non-ASCII, and every field's JSON type, must survive.
    title = 'a\x00b "quoted" back\\slash\nnew line – ünïcödé 🙂'
    origin = {"conversationId": new_id(), "upToItemId": new_id()}
    c = created(title, forkedFrom=origin, cwd="/work/dir with spaces")
    cid, sid = c["conversationId"], c["rootSessionId"]
    await store.create_conversation(c)
    await store.append_items(cid, sid, [message("one"), message("two", "agent_message")])
    tid = new_id()
    await store.append_metadata(
        cid,
        [
            {"type": "turn_started", "turnId": tid, "sessionId": sid},
            {"type": "turn_ended", "turnId": tid, "status": "completed"},
            {"type": "conversation_archived"},
        ],
    )
    [listed], _ = await store.list_conversations(archived=True)
    assert listed == await store.get_summary(cid)
    assert listed == {
        "conversationId": cid,
        "title": title,
        "cwd": "/work/dir with spaces",
        "agent": "coder",
        "model": "gpt",
        "createdAt": listed["createdAt"],
        "updatedAt": listed["updatedAt"],
        "archived": True,
        "status": "idle",  # a completed last turn leaves the conversation idle
        "messageCount": 2,
        "turnCount": 1,
        "forkedFrom": origin,
    }
    assert isinstance(listed["createdAt"], str) and listed["updatedAt"] >= listed["createdAt"]
    # What the daemon sends: the same summary, as JSON text.
    [(listed_id, text)], _ = await store.list_summaries(archived=True)
    assert listed_id == cid and orjson.loads(text) == listed


async def test_archive_search_and_rename(store: Store) -> None:
    a, b = created("Parser work"), created("Holiday plans")
    await store.create_conversation(a)
    await store.create_conversation(b)
    await store.append_items(a["conversationId"], a["rootSessionId"], [message("tokenizer bug")])
    found, _ = await store.list_conversations(search="tokeniz")
    assert [s["conversationId"] for s in found] == [a["conversationId"]]
    found, _ = await store.list_conversations(search='holiday "AND')  # FTS syntax is inert
    assert found == []
    await store.append_metadata(b["conversationId"], [{"type": "conversation_archived"}])
    active, _ = await store.list_conversations()
    archived, _ = await store.list_conversations(archived=True)
    assert [s["conversationId"] for s in active] == [a["conversationId"]]
    assert [s["conversationId"] for s in archived] == [b["conversationId"]]
    await store.append_metadata(
        a["conversationId"], [{"type": "conversation_renamed", "title": "Lexer work"}]
    )
    assert (await store.list_conversations(search="parser"))[0] == []
    assert len((await store.list_conversations(search="lexer"))[0]) == 1


async def test_read_items_pages_backwards(store: Store) -> None:
    c = created()
    cid, sid = c["conversationId"], c["rootSessionId"]
    await store.create_conversation(c)
    items = [message(f"m{n}") for n in range(10)]
    for n in range(0, 10, 3):
        await store.append_items(cid, sid, items[n : n + 3])
    assert await store.read_all_items(cid, sid) == items
    page, more = await store.read_items(cid, sid, limit=4)
    assert page == items[6:] and more
    page, more = await store.read_items(cid, sid, before_item=items[6]["itemId"], limit=4)
    assert page == items[2:6] and more
    page, more = await store.read_items(cid, sid, before_item=items[2]["itemId"], limit=4)
    assert page == items[:2] and not more
    with pytest.raises(NotFound):
        await store.read_items(cid, sid, before_item=new_id(), limit=4)
    assert await store.read_items(cid, new_id(), limit=4) == ([], False)


async def test_ids_are_checked_before_touching_paths(store: Store) -> None:
    with pytest.raises(InvalidId):
        await store.load_meta("../../etc")
    with pytest.raises(InvalidId):
        await store.create_conversation(created(conversationId="../x"))
    assert not store.exists("../x")
    with pytest.raises(NotFound):
        await store.append_items(new_id(), new_id(), [message("x")])
    assert await store.load_meta(new_id()) is None


async def test_symlinked_conversation_is_not_followed(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    c = created()
    await store.create_conversation(c)
    elsewhere = tmp_path / "elsewhere"
    os.rename(data_dir.conversation_dir(c["conversationId"]), elsewhere)
    os.symlink(elsewhere, data_dir.conversation_dir(c["conversationId"]))
    assert not store.exists(c["conversationId"])
    assert await store.load_meta(c["conversationId"]) is None


async def test_newer_format_is_refused_clearly(store: Store, data_dir: DataDir) -> None:
    with pytest.raises(FormatTooNew):
        await store.create_conversation(created(formatVersion=99))
    c = created()
    await store.create_conversation(c)
    path = data_dir.metadata_file(c["conversationId"])
    record = orjson.loads(path.read_bytes())
    path.write_bytes(orjson.dumps({**record, "formatVersion": 99}) + b"\n")
    with pytest.raises(FormatTooNew):
        await store.load_meta(c["conversationId"])


async def test_delete_is_immediate_and_complete(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    keep, gone = created("keep"), created("gone")
    await store.create_conversation(keep)
    await store.create_conversation(gone)
    await store.append_items(gone["conversationId"], gone["rootSessionId"], [message("bye")])
    await store.delete_conversation(gone["conversationId"])
    assert not store.exists(gone["conversationId"])
    assert await store.get_summary(gone["conversationId"]) is None
    assert os.listdir(data_dir.conversations_dir) == [keep["conversationId"]]
    assert (await store.list_conversations(search="bye"))[0] == []
    assert await store.dump_index() == await rebuilt_dump(data_dir, tmp_path)
    with pytest.raises(NotFound):
        await store.delete_conversation(gone["conversationId"])


@pytest.mark.parametrize(
    "damage",
    ["garbage", "schema", "unclean"],
)
async def test_damaged_index_is_rebuilt_at_open(
    data_dir: DataDir, tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = await Store.open(data_dir)
    c = created("survivor")
    await store.create_conversation(c)
    await store.append_items(c["conversationId"], c["rootSessionId"], [message("needle")])
    await store.close()
    db = data_dir.metadata_db
    if damage == "garbage":
        for suffix in ("-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)  # noqa: ASYNC240
        db.write_bytes(b"this is not a database" * 100)
    elif damage == "schema":
        import sqlite3

        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 999")
        conn.close()
    else:
        # A process that died after a journal fsync but before the index update.
        import sqlite3

        conn = sqlite3.connect(db)
        conn.execute("UPDATE state SET value = '0'")
        conn.execute("UPDATE conversations SET message_count = 0")
        conn.commit()
        conn.close()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        for _ in range(2):  # and the second open is not another rebuild loop
            store = await Store.open(data_dir)
            summary = await store.get_summary(c["conversationId"])
            assert summary is not None and summary["messageCount"] == 1
            assert len((await store.list_conversations(search="needle"))[0]) == 1
            await store.close()
    assert sum("rebuilding" in rec.message for rec in caplog.records) == 1


async def test_unknown_metadata_record_is_kept(
    store: Store, data_dir: DataDir, tmp_path: Path
) -> None:
    c = created()
    cid = c["conversationId"]
    await store.create_conversation(c)
    await store.append_metadata(cid, [{"type": "teleported", "where": "mars"}])
    await store.append_metadata(cid, [{"type": "conversation_renamed", "title": "after"}])
    meta = await store.load_meta(cid)
    assert meta is not None and meta.title == "after" and meta.unknown_records == 1
    lines = data_dir.metadata_file(cid).read_bytes().splitlines()
    assert orjson.loads(lines[1])["where"] == "mars"
    assert await store.dump_index() == await rebuilt_dump(data_dir, tmp_path)
