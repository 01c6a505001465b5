"""A deletion is never left half done by a clean stop (docs/design.md, "Serving before the
runtime is built"): its caller cancelled (as a stop cancels requests) does not cut it between
its steps, and closing the store waits for it. The next open, which lists `conversations/` for
half-done deletions only after a crash, then finds it complete."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openvaala_server.store.paths import DataDir
from openvaala_server.store.store import Store

from .helpers import created, message


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
async def test_a_delete_cancelled_by_a_stop_is_completed_before_the_store_closes(
    tmp_path: Path, turns: int
) -> None:
    """`turns`: how far the deletion gets (loop turns) before its caller is cancelled."""
    data_dir = DataDir(tmp_path / "home")
    store = await Store.open(data_dir)
    kept = created("kept")
    gone = created("gone")
    for c in (kept, gone):
        await store.create_conversation(c)
        await store.append_items(c["conversationId"], c["rootSessionId"], [message("hi")])
    deleting = asyncio.create_task(store.delete_conversation(gone["conversationId"]))
    for _ in range(turns + 1):
        await asyncio.sleep(0)  # lets the deletion run to its next await: no timing involved
    deleting.cancel()
    await store.close()
    assert deleting.cancelled() or deleting.exception() is None

    store = await Store.open(data_dir)
    try:
        listed, _ = await store.list_conversations()
        assert [row["conversationId"] for row in listed] == [kept["conversationId"]]
        assert not store.exists(gone["conversationId"])
        names = sorted(p.name for p in data_dir.conversations_dir.iterdir())
        assert names == [kept["conversationId"]]  # no `.trash-` left behind
    finally:
        await store.close()
