"""reindex: rebuilds from the directories, skips with reasons, repairs, finishes deletions."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from openvaala_server.domain.ids import new_id
from openvaala_server.store import index as ix
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex
from openvaala_server.store.store import Store

from .helpers import created, message


async def test_skips_with_reasons_and_repairs(data_dir: DataDir, tmp_path: Path) -> None:
    store = await Store.open(data_dir)
    good, torn, newer = created("good"), created("torn"), created("newer")
    for c in (good, torn, newer):
        await store.create_conversation(c)
    await store.append_items(torn["conversationId"], torn["rootSessionId"], [message("kept")])
    await store.close()
    newer_meta = data_dir.metadata_file(newer["conversationId"])
    newer_meta.write_bytes(
        newer_meta.read_bytes().replace(b'"formatVersion":1', b'"formatVersion":7')
    )
    convs = data_dir.conversations_dir
    with open(data_dir.session_file(torn["conversationId"], torn["rootSessionId"]), "ab") as f:  # noqa: ASYNC230
        f.write(b'{"seq": 2, "ts": "2030')
    no_meta = new_id()
    (convs / no_meta).mkdir()
    (convs / "not-an-id").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = new_id()
    os.symlink(outside, convs / linked)
    unreadable = new_id()
    (convs / unreadable).mkdir()
    (convs / unreadable / "metadata.jsonl").write_bytes(b'{"seq":1,"ts":"x","type":"item"}\n')

    report = await reindex(data_dir)
    assert sorted(report.indexed) == sorted([good["conversationId"], torn["conversationId"]])
    reasons = {s.name: s.reason for s in report.skipped}
    assert reasons[no_meta] == "no metadata.jsonl"
    assert reasons["not-an-id"] == "invalid id"
    assert reasons[linked] == "symlinked directory"
    assert reasons[newer["conversationId"]] == "newer format"
    assert reasons[unreadable].startswith("unreadable")
    assert [p.name for p in report.torn_repaired] == [f"{torn['rootSessionId']}.jsonl.torn-1"]
    assert "no metadata.jsonl" in report.describe()

    conn = sqlite3.connect(data_dir.metadata_db)
    rows = conn.execute("SELECT id, message_count FROM conversations ORDER BY title").fetchall()
    conn.close()
    assert rows == [(good["conversationId"], 0), (torn["conversationId"], 1)]
    again = await reindex(data_dir)
    assert again.torn_repaired == []  # the repair is done once


async def test_moved_conversation_appears_after_reindex(tmp_path: Path) -> None:
    """Back up / move: stop, copy the directory, reindex, open."""
    source, target = DataDir(tmp_path / "a"), DataDir(tmp_path / "b")
    store = await Store.open(source)
    c = created("travelling")
    await store.create_conversation(c)
    await store.append_items(c["conversationId"], c["rootSessionId"], [message("suitcase")])
    await store.close()
    target.ensure()
    os.rename(
        source.conversation_dir(c["conversationId"]), target.conversation_dir(c["conversationId"])
    )
    await reindex(target)
    store = await Store.open(target)
    found, _ = await store.list_conversations(search="suitcase")
    assert [s["title"] for s in found] == ["travelling"]
    await store.close()


async def test_rebuild_is_atomic_over_a_stale_wal(data_dir: DataDir) -> None:
    store = await Store.open(data_dir)
    await store.create_conversation(created())
    await store.close()
    wal = Path(str(data_dir.metadata_db) + "-wal")
    wal.write_bytes(b"stale wal from another life")  # noqa: ASYNC240
    await reindex(data_dir)
    assert not wal.exists()  # noqa: ASYNC240
    conn = sqlite3.connect(data_dir.metadata_db)
    assert ix.dump(conn)["conversations"]
    conn.close()
