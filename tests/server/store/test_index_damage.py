"""A damaged index met while the store runs is rebuilt from the directories, and the read that
met it answers from the rebuilt one (the index is disposable, the journals are the truth)."""

from __future__ import annotations

import logging

import pytest

from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store
from tests.server.store.helpers import created, message

PAGE = 4096


async def test_a_read_that_meets_damage_rebuilds_and_answers(
    data_dir: DataDir, caplog: pytest.LogCaptureFixture
) -> None:
    store = await Store.open(data_dir)
    ids = set()
    for n in range(300):
        payload = created(f"conversation {n}")
        ids.add(payload["conversationId"])
        await store.create_conversation(payload)
        await store.append_items(
            payload["conversationId"], payload["rootSessionId"], [message(f"words {n} " * 80)]
        )
    await store.close()

    store = await Store.open(data_dir)  # opens cleanly: the damage comes after
    try:
        with open(data_dir.metadata_db, "r+b") as f:  # noqa: ASYNC230
            f.seek(50 * PAGE)
            f.write(bytes([0xA5]) * (20 * PAGE))
        with caplog.at_level(logging.WARNING):
            rows, cursor = await store.list_summaries(limit=1000)
        assert cursor is None
        assert {cid for cid, _ in rows} == ids
        assert "the index is damaged" in caplog.text
        found, _ = await store.list_conversations(search="words", limit=1000)
        assert len(found) == len(ids)
    finally:
        await store.close()
