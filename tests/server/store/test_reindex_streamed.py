"""reindex hands a long conversation's texts to the index as it reads them (docs/design.md,
"Reindex memory"): every text searchable as before, and none left behind by a conversation that
turns out unreadable after some of its texts went ahead."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from openvaala_server.store import journal
from openvaala_server.store.paths import DataDir
from openvaala_server.store.reindex import reindex
from openvaala_server.store.store import Store

from .helpers import created, message

FILLER = "filler words for a long history " * 18  # ~580 bytes: 3,000 of them are ~1.8 MB


async def _long(store: Store, title: str, first: str, last: str, cid: str | None = None) -> str:
    c = created(title, **({"conversationId": cid} if cid else {}))
    await store.create_conversation(c)
    texts = [first, *[f"{FILLER} {n}" for n in range(3_000)], last]
    for start in range(0, len(texts), 500):
        batch = [message(t) for t in texts[start : start + 500]]
        await store.append_items(c["conversationId"], c["rootSessionId"], batch)
    return str(c["conversationId"])


async def _found(data_dir: DataDir, word: str) -> list[str]:
    store = await Store.open(data_dir)
    try:
        found, _ = await store.list_conversations(search=word)
        return [s["title"] for s in found]
    finally:
        await store.close()


def _fts_ok(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute("INSERT INTO search (search) VALUES ('integrity-check')")
    finally:
        conn.close()


async def test_a_long_conversation_is_searchable_from_its_first_to_its_last_text(
    data_dir: DataDir,
) -> None:
    store = await Store.open(data_dir)
    await _long(store, "long", "aardvarkfirst", "zebralast")
    await store.close()

    await reindex(data_dir)

    assert await _found(data_dir, "aardvarkfirst") == ["long"]
    assert await _found(data_dir, "zebralast") == ["long"]
    _fts_ok(data_dir.metadata_db)


async def test_texts_of_a_conversation_unreadable_halfway_are_taken_back(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await Store.open(data_dir)
    # Conversations are read in id order: "kept" after "broken", so its texts take the rowids
    # the broken one's texts had.
    broken = await _long(store, "broken", "aardvarkbroken", "zebrabroken", "0" * 32)
    kept = created("kept", conversationId="f" * 32)
    await store.create_conversation(kept)
    await store.append_items(kept["conversationId"], kept["rootSessionId"], [message("yakkept")])
    await store.close()

    real = journal._parts

    def failing(
        path: Path, part_bytes: int, known: frozenset[str]
    ) -> Iterator[journal.JournalRead]:
        # A disk error after the first part: its texts have gone to the index by then.
        parts = real(path, part_bytes, known)
        yield next(parts)
        if broken in str(path):
            raise OSError(errno.EIO, "Input/output error")
        yield from parts

    monkeypatch.setattr(journal, "_parts", failing)
    report = await reindex(data_dir)

    reasons = {s.name: s.reason for s in report.skipped}
    assert reasons[broken].startswith("unreadable")
    assert await _found(data_dir, "aardvarkbroken") == []
    assert await _found(data_dir, "filler") == []
    assert await _found(data_dir, "yakkept") == ["kept"]
    _fts_ok(data_dir.metadata_db)
    conn = sqlite3.connect(data_dir.metadata_db)
    try:
        left = conn.execute(
            "SELECT count(*) FROM texts WHERE conversation_id = ?", (broken,)
        ).fetchone()
    finally:
        conn.close()
    assert left == (0,)
